"""The frameworks pytest-cudnn knows, one module each behind one shape (:class:`~.base.Framework`).

:data:`REGISTRY` is the one list: the probe reads each entry's build and loads, the diagnosis applies its rules,
the markers, the CLI and the report take their names from it. Importing it imports no framework and none of the
probe: each entry's functions import what they use when called.
"""

from __future__ import annotations

import functools
import re

from .._base.versions import canonical_name
from . import cupy, jax, onnxruntime, tensorflow, torch
from .base import ENTRIES, CudnnProblem, Framework, Reading, Unloadable, entry_of, maps_at_import, own_rules

__all__ = [
    "NAMES",
    "REGISTRY",
    "CudnnProblem",
    "Framework",
    "Reading",
    "Unloadable",
    "framework",
    "maps_at_import",
    "own_rules",
    "relevant",
]

REGISTRY: tuple[Framework, ...] = (
    torch.FRAMEWORK,
    jax.FRAMEWORK,
    tensorflow.FRAMEWORK,
    cupy.FRAMEWORK,
    onnxruntime.FRAMEWORK,
)
NAMES: tuple[str, ...] = tuple(entry.name for entry in REGISTRY)
ENTRIES.update((entry.name, entry) for entry in REGISTRY)
framework = entry_of  # the registry's entry for an import name; None for a name it does not know


def relevant(name: str) -> bool:
    """Whether a distribution named ``name`` is part of the GPU stack: every nvidia-* wheel (cuDNN, the CUDA
    components, nvidia-ml-py), cuda-toolkit (the meta-distribution torch 2.11+ pins, ``cuda-toolkit[cudart,...]``),
    and each framework's distributions as its entry names them (the CUDA builds of JAX and CuPy too). Names are
    compared in their normalised form (PEP 503: runs of -, _ and . are one -, lower case).

    >>> [relevant(n) for n in ("nvidia_cudnn_cu12", "tensorflow-gpu", "cuda_toolkit", "tensorflow-estimator", "numpy")]
    [True, True, True, False, False]
    """
    return _relevant().fullmatch(canonical_name(name)) is not None


@functools.cache
def _relevant() -> re.Pattern[str]:  # compiled on first use: the plugin imports the registry on every run
    return re.compile("|".join(["nvidia-.+", "cuda-toolkit", *(entry.distributions for entry in REGISTRY)]))
