"""cuDNN facts: the oldest GPU each release line supports, and known-bad combinations.

Pure data and lookups; rows cite :mod:`pytest_cudnn.compat.sources`.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = ["GPU_FLOORS", "KNOWN_BAD", "GpuFloor", "KnownBad", "known_bad", "oldest_capability"]


@dataclass(frozen=True)
class GpuFloor:
    cudnn: str  # specifier over the cuDNN version
    cuda_major_below: int | None  # the row applies to builds for CUDA majors below this (None: all builds)
    oldest: str  # oldest supported compute capability
    source: str


# Ordered: the first matching row applies. The 8.x lines up to 8.5 shipped CUDA 10.2 builds for SM 3.0+ and
# CUDA 11 builds for SM 3.5+; 8.9 and 9.0-9.10 start at 5.0; the 9.17 matrix lists 7.5 and newer only (the
# change is dated 9.11 by jax-ml/jax#30663; the 9.11 notes themselves were not found, so 9.11 is the boundary).
GPU_FLOORS: tuple[GpuFloor, ...] = (
    GpuFloor("<8", None, "3.0", "cudnn-matrix-7"),
    GpuFloor(">=8,<8.9", 11, "3.0", "cudnn-matrix-8"),
    GpuFloor(">=8,<8.9", None, "3.5", "cudnn-matrix-8"),
    GpuFloor(">=8.9,<9", None, "5.0", "cudnn-matrix-89"),
    GpuFloor(">=9,<9.11", None, "5.0", "cudnn-matrix-9"),
    GpuFloor(">=9.11", None, "7.5", "cudnn-matrix-9"),
)


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def oldest_capability(cudnn: str, cuda_major: int | None) -> GpuFloor | None:
    """The oldest compute capability cuDNN ``cudnn`` ("8.2.1") supports, for a build made for ``cuda_major``."""
    version = _version(cudnn)
    if version is None:
        return None
    for row in GPU_FLOORS:
        if version not in SpecifierSet(row.cudnn):
            continue
        if row.cuda_major_below is not None and (cuda_major is None or cuda_major >= row.cuda_major_below):
            continue
        return row
    return None


@dataclass(frozen=True)
class KnownBad:
    code: str
    cudnn: str  # specifier over the cuDNN version
    capability_below: str | None  # applies to GPUs older than this compute capability
    capability_at_least: str | None  # and at least this one
    cuda: str | None  # applies only to builds for this CUDA runtime (major.minor)
    summary: str
    remedy: str
    source: str


KNOWN_BAD: tuple[KnownBad, ...] = (
    KnownBad(
        "cudnn-pre-ampere-convolutions",
        ">=9.11",
        "8.0",
        None,
        None,
        "cuDNN 9.11 and later break convolutions on GPUs older than Ampere",
        "use cuDNN 9.10.x on this GPU (pip install 'nvidia-cudnn-cu12<9.11')",
        "jax-30663",
    ),
    KnownBad(
        "cudnn-pascal-fused-conv",
        ">=8.9.0,<8.9.2",
        "7.0",
        "6.0",
        None,
        "cuDNN 8.9.0 and 8.9.1 compute wrong results for fused convolution+bias+ReLU on Pascal GPUs",
        "upgrade cuDNN to 8.9.2 or later",
        "cudnn-892-notes",
    ),
    KnownBad(
        "cudnn-maxwell-fused-conv",
        ">=8.9.0,<8.9.3",
        "6.0",
        "5.0",
        None,
        "cuDNN 8.9.0 to 8.9.2 compute wrong results for a fused convolution engine on Maxwell GPUs",
        "upgrade cuDNN to 8.9.3 or later",
        "cudnn-892-notes",
    ),
    KnownBad(
        "cudnn-765-cuda102-nondeterminism",
        "==7.6.5",
        None,
        None,
        "10.2",
        "cuDNN 7.6.5 built for CUDA 10.2 gives nondeterministic RNN and multi-head attention results",
        "set CUBLAS_WORKSPACE_CONFIG=:16:8 (or :4096:2) where determinism matters",
        "cudnn-765-notes",
    ),
)


def known_bad(cudnn: str, capability: str | None, cudart: str | None) -> list[KnownBad]:
    """Known-bad rows that apply to cuDNN ``cudnn`` built for CUDA ``cudart`` on a GPU of ``capability``."""
    version = _version(cudnn)
    if version is None:
        return []
    hits = []
    for row in KNOWN_BAD:
        if version not in SpecifierSet(row.cudnn):
            continue
        if row.cuda is not None and cudart != row.cuda:
            continue
        if row.capability_below is not None or row.capability_at_least is not None:
            cc = _version(capability) if capability else None
            if cc is None:
                continue
            if row.capability_below is not None and not cc < Version(row.capability_below):
                continue
            if row.capability_at_least is not None and not cc >= Version(row.capability_at_least):
                continue
        hits.append(row)
    return hits
