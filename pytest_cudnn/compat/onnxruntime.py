"""ONNX Runtime's published GPU builds: the CUDA and cuDNN majors of each release's CUDA package, and its cuDNN rule.

Pure data and lookups; nothing imports onnxruntime. Each row cites a key of :mod:`pytest_cudnn.compat.sources`.
The wheels since 1.21 record their CUDA version (``capi/build_and_package_info.py``, microsoft/onnxruntime#23674)
but no cuDNN version, and pin the cuDNN wheel in their ``cudnn`` extra, which the reader prefers. The PyPI wheels
before 1.21 (1.15 to 1.20) have neither: for them the release alone picks the row of its PyPI build, CUDA 11.8
before 1.19 and CUDA 12 from 1.19, as the page says (:func:`pypi_release`). The table answers only for the rows
published: a release and CUDA major with no row finds none.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from .._base.versions import major_of

__all__ = [
    "PYPI_BUILDS",
    "PYPI_DEFAULT",
    "RELEASES",
    "OrtBuild",
    "OrtRelease",
    "accepts_cudnn",
    "pypi_release",
    "release",
]


@dataclass(frozen=True)
class OrtRelease:
    """One row: the releases ``first``..``last`` (inclusive, by major.minor.micro) built for CUDA ``cuda`` ("12.x",
    "11.8", "13.0") and cuDNN major ``cudnn``."""

    first: str
    last: str
    cuda: str
    cudnn: int
    source: str

    @property
    def cuda_major(self) -> int:
        return int(self.cuda.split(".")[0])


RELEASES: tuple[OrtRelease, ...] = (
    OrtRelease("1.15.0", "1.17.99", "11.8", 8, "ort-cuda-ep-requirements"),
    OrtRelease("1.18.0", "1.20.99", "11.8", 8, "ort-cuda-ep-requirements"),
    OrtRelease("1.17.0", "1.17.99", "12.x", 8, "ort-cuda-ep-requirements"),
    OrtRelease("1.18.0", "1.18.0", "12.x", 8, "ort-cuda-ep-requirements"),
    OrtRelease("1.18.1", "1.18.99", "12.x", 9, "ort-cuda-ep-requirements"),
    OrtRelease("1.19.0", "1.19.99", "12.x", 9, "ort-cuda-ep-requirements"),
    OrtRelease("1.20.0", "1.20.99", "12.x", 9, "ort-cuda-ep-requirements"),
    OrtRelease("1.31.1", "1.31.1", "13.0", 9, "ort-wheel-1.31.1"),
)


# The CUDA major of the onnxruntime-gpu build on PyPI, by release, for the releases whose wheel records none (before
# 1.21): (first, last, CUDA major, source). "Starting with version 1.19, CUDA 12.x becomes the default version when
# distributing ONNX Runtime GPU packages in PyPI"; "1.18.x | 11.8 | 8.x | Available in PyPI".
PYPI_DEFAULT: tuple[tuple[str, str, int, str], ...] = (
    ("1.15.0", "1.18.99", 11, "ort-cuda-ep-requirements"),
    ("1.19.0", "1.20.99", 12, "ort-cuda-ep-requirements"),
)


@dataclass(frozen=True)
class OrtBuild:
    """The releases ``first`` to ``last`` of ``onnxruntime-gpu`` on PyPI, whose default build is for CUDA ``cuda``
    ("12.2", "13.0", its ``capi/build_and_package_info.py`` ``cuda_version``), each with the ``cuda`` and ``cudnn``
    extras that install the CUDA libraries and cuDNN it loads."""

    first: str
    last: str
    cuda: str
    source: str


# Oldest first; from 1.21, the first release with the extras (and preload_dlls()). Every release in each range was
# read, 1.21.0 to 1.31.1. Source: "ort-wheels-cuda-versions".
PYPI_BUILDS: tuple[OrtBuild, ...] = (
    OrtBuild("1.21.0", "1.23.2", "12.2", "ort-wheels-cuda-versions"),
    OrtBuild("1.24.1", "1.26.0", "12.8", "ort-wheels-cuda-versions"),
    OrtBuild("1.27.0", "1.31.1", "13.0", "ort-wheels-cuda-versions"),
)


def release(version: str, cuda_major: int) -> OrtRelease | None:
    """The row of ONNX Runtime ``version`` ("1.19.2", "1.31.1") built for CUDA ``cuda_major``, if one is published.

    >>> release("1.19.2", 12).cudnn
    9
    >>> release("1.18.0", 12).cudnn
    8
    >>> release("1.25.0", 12) is None
    True
    """
    try:
        parsed = Version(version)
    except (InvalidVersion, ValueError):
        return None
    key = parsed.release[:3]
    for row in RELEASES:
        if row.cuda_major == cuda_major and Version(row.first).release <= key <= Version(row.last).release:
            return row
    return None


def pypi_release(version: str) -> OrtRelease | None:
    """The row of the onnxruntime-gpu build PyPI carries for ``version``, by the release alone: for the releases
    whose wheel records no CUDA version (1.15 to 1.20). None for any other release.

    >>> [(row.cuda, row.cudnn) for row in map(pypi_release, ("1.17.1", "1.18.1", "1.19.2", "1.20.2")) if row]
    [('11.8', 8), ('11.8', 8), ('12.x', 9), ('12.x', 9)]
    >>> pypi_release("1.21.0") is None, pypi_release("1.14.1") is None
    (True, True)
    """
    try:
        key = Version(version).release[:3]
    except (InvalidVersion, ValueError):
        return None
    for first, last, cuda_major, _ in PYPI_DEFAULT:
        if Version(first).release <= key <= Version(last).release:
            return release(version, cuda_major)
    return None


def accepts_cudnn(built_major: int, loaded: str) -> bool:
    """Whether a build made with cuDNN ``built_major`` can use cuDNN ``loaded`` ("9.8.0"): the same major
    (source "ort-cuda-ep-requirements": 'built with cuDNN 8.x is not compatible with cuDNN 9.x, and vice versa').

    >>> accepts_cudnn(9, "9.1.0"), accepts_cudnn(9, "8.9.7"), accepts_cudnn(8, "9.0.0")
    (True, False, False)
    """
    return major_of(loaded) == built_major
