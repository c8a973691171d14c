"""The curated public API (``pytest_cudnn.__all__``): every name resolves to what it says, and importing the package
imports none of them (the plugin imports it on every run)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import pytest_cudnn


@pytest.mark.parametrize("name", [name for name in pytest_cudnn.__all__ if name != "__version__"])
def test_every_public_name_resolves_to_its_module(name: str) -> None:
    value = getattr(pytest_cudnn, name)
    module = importlib.import_module(f"pytest_cudnn.{pytest_cudnn._WHERE[name]}")
    assert value is getattr(module, name)
    assert name in dir(pytest_cudnn)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Probe'"):
        _ = pytest_cudnn.Probe


def test_the_package_imports_nothing_until_a_name_is_used() -> None:
    tree = ast.parse((Path(pytest_cudnn.__file__)).read_text(encoding="utf-8"))
    top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert [ast.unparse(node) for node in top_level] == ["from __future__ import annotations"]
