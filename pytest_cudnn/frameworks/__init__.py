"""The frameworks pytest-cudnn knows, one module each behind one shape (:class:`~.base.Framework`).

:data:`REGISTRY` is the one list: the probe reads each entry's build and loads, the diagnosis applies its rules,
the markers, the CLI and the report take their names from it. Importing it imports no framework and none of the
probe: each entry's functions import what they use when called.
"""

from __future__ import annotations

from . import cupy, jax, onnxruntime, tensorflow, torch
from .base import CudnnProblem, Framework, Reading, Unloadable

__all__ = ["NAMES", "REGISTRY", "CudnnProblem", "Framework", "Reading", "Unloadable", "framework", "maps_at_import"]

REGISTRY: tuple[Framework, ...] = (
    torch.FRAMEWORK,
    jax.FRAMEWORK,
    tensorflow.FRAMEWORK,
    cupy.FRAMEWORK,
    onnxruntime.FRAMEWORK,
)
NAMES: tuple[str, ...] = tuple(entry.name for entry in REGISTRY)
_BY_NAME = {entry.name: entry for entry in REGISTRY}


def framework(name: str) -> Framework | None:
    """The registry's entry for import name ``name``; None for a name it does not know."""
    return _BY_NAME.get(name)


def maps_at_import(name: str) -> bool:
    """Whether importing framework ``name`` maps what it loads (its entry's ``loads_at_import``; CuPy loads on first
    use). A name the registry does not know is taken to."""
    entry = _BY_NAME.get(name)
    return entry is None or entry.loads_at_import
