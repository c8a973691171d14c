"""The examples in the modules' docstrings are run, so they stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "pytest_cudnn._base.versions",
    "pytest_cudnn.devices",
    "pytest_cudnn.markers",
    "pytest_cudnn.compat.tensorflow",
    "pytest_cudnn._base.text",
    "pytest_cudnn.phrases",
    "pytest_cudnn.frameworks.torch.reading",
    "pytest_cudnn.diagnosis.kernels",
    "pytest_cudnn.diagnosis.remedies",
    "pytest_cudnn.compat.cudnn",
    "pytest_cudnn.compat.cuda",
    "pytest_cudnn.fleet.reading",
    "pytest_cudnn.explain",
    "pytest_cudnn._base.style",
    "pytest_cudnn.diagnosis.model",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
