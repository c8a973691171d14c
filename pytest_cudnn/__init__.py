"""pytest-cudnn: the NVIDIA GPU stack as an asserted, diagnosed part of a test suite.

The public API, for code beyond the markers and fixtures (a conftest, a CI script): the fixtures' types
(:class:`GpuDevice`, :class:`CudnnHandle`), a snapshot and its loader (:class:`Environment`, :func:`load_snapshot`),
and the judgement of one (:func:`judge_environment` gives a :class:`Diagnosis`: :class:`Finding` s of a
:class:`Severity`, and a :class:`FrameworkJudgement` per framework). Everything else is internal and may change.
Each name is imported when first used: ``import pytest_cudnn`` (which the plugin and the probe's child do on every
run) imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the probe's child imports this package and must not pay for typing
if TYPE_CHECKING:
    from typing import Any

    from .diagnosis import Diagnosis, Finding, FrameworkJudgement, Severity, judge_environment
    from .environment import Environment, load_snapshot
    from .gpu import CudnnHandle, GpuDevice

__version__ = "0.1.0"

__all__ = [
    "CudnnHandle",
    "Diagnosis",
    "Environment",
    "Finding",
    "FrameworkJudgement",
    "GpuDevice",
    "Severity",
    "__version__",
    "judge_environment",
    "load_snapshot",
]

_WHERE = {
    "CudnnHandle": "gpu",
    "GpuDevice": "gpu",
    "Environment": "environment",
    "load_snapshot": "environment",
    "Diagnosis": "diagnosis",
    "Finding": "diagnosis",
    "FrameworkJudgement": "diagnosis",
    "Severity": "diagnosis",
    "judge_environment": "diagnosis",
}


def __getattr__(name: str) -> Any:
    """The public names, each imported from its module on first use (PEP 562)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_cudnn' has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
