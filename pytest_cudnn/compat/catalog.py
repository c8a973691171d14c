"""The library catalog: each CUDA library kind pytest-cudnn finds, versions and judges, described once.

A row says what a kind's copies are called on Linux and Windows, which nvidia-* wheels ship it and where, how its
version is asked (the call the probe's child makes, by absolute path) and read from its file, and its marker. The
search (``probe/discovery.py``), the probe of a host, the diagnosis and the markers read these rows; adding a kind
is a row here, its child job where its call is new, and its rules. Pure data; every row cites
:mod:`pytest_cudnn.compat.sources`.

The plugin registers ``requires_<kind>`` on every run from these rows (``signatures.py``), so importing this module
imports nothing else of the package, and the rows are named tuples (a frozen dataclass costs about 0.5 ms to make).
"""

import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["CATALOG", "JUDGED", "MARKED", "LibraryKind", "build_string", "kind_of"]


# No ``from __future__ import annotations`` here: NamedTuple compiles each field's annotation given as a string
# (13 compile() calls, 1.7 ms of every run); given as types, it compiles none.
class LibraryKind(NamedTuple):
    key: str  # "nccl": the marker is requires_<key>, the environment's copies carry it
    display: str  # "NCCL"
    linux: str  # a full-match regular expression over its file names: sonames and versioned names
    windows: str | None  # the same over DLL names; None: no Windows build
    distributions: str  # the nvidia-* wheels that ship it (canonical names), a regular expression
    folders: tuple[str, ...]  # where those wheels put it under site-packages
    job: str  # the probe child's job that asks a copy (native/protocol.py): "cudart", "cudnn", "library"
    version_call: str  # the call that answers its version, in the copy itself
    decode: Callable[[int], str]  # that answer as a version: 23203 -> "2.32.3" (InvalidVersionValue: no version)
    # Over the bytes of its .rodata: its version and the CUDA it was built for, as its build writes them into the
    # file; "" where the file says neither.
    build_pattern: str
    source: str
    # Where its wheels for two CUDA majors are shown to write one file and what that breaks; "" where not known.
    shared_file: str = ""
    # How its version call answers: "code", ``status call(int *code)`` (decoded by ``decode``); "properties",
    # ``status call(libraryPropertyType, int *)`` asked MAJOR_VERSION, MINOR_VERSION and PATCH_LEVEL.
    shape: str = "code"
    cuda_call: str = ""  # ``size_t call(void)``: the CUDA runtime it was built with (cublasGetCudartVersion); ""
    # The kind that must be of its very release in one process (cuBLAS and cuBLASLt), and the source that says so.
    same_release: tuple[str, str] = ("", "")
    marker: bool = True  # requires_<key> is registered
    example: str = ""  # a version its marker's help gives as an example


def _cuda_version(value: int) -> str:
    from .._base.versions import cuda_version_from_int  # when a copy is decoded, not when the markers are registered

    return cuda_version_from_int(value)


def _cudnn_version(value: int) -> str:
    from .._base.versions import cudnn_version_from_int

    return ".".join(str(part) for part in cudnn_version_from_int(value))


def _nccl_version(value: int) -> str:
    from .._base.versions import nccl_version_from_int

    return nccl_version_from_int(value)


# "NCCL version 2.32.3+cuda12.9": the version, a suffix (NCCL_SUFFIX, such as "a0"), the CUDA major and minor.
_NCCL_BUILD = r"NCCL version (\d{1,4}\.\d{1,4}\.\d{1,4})[^+\x00]{0,32}\+cuda(\d{1,3})\.(\d{1,3})"

CATALOG: tuple[LibraryKind, ...] = (
    LibraryKind(
        "cudart", "CUDA runtime", r"libcudart\.so\.\d+(\.\d+)*", r"cudart64_\d+\.dll",
        r"nvidia-cuda-runtime(-cu\d+)?", ("nvidia/cuda_runtime/lib", "nvidia/cu13/lib"),
        "cudart", "cudaRuntimeGetVersion", _cuda_version, "", "cudart-wheels",
    ),
    LibraryKind(
        "cudnn", "cuDNN", r"libcudnn\.so\.\d+(\.\d+)*", r"cudnn64_\d+\.dll",
        r"nvidia-cudnn-cu\d+", ("nvidia/cudnn/lib",),
        "cudnn", "cudnnGetVersion", _cudnn_version, "", "cudnn-wheels",
    ),
    # NCCL: Linux only. nvidia-nccl-cu12 and -cu13 both write nvidia/nccl/lib/libnccl.so.2; its build writes
    # "NCCL version 2.32.3+cuda12.9" into the library ("nccl-version-string").
    LibraryKind(
        "nccl", "NCCL", r"libnccl\.so\.\d+(\.\d+)*", None,
        r"nvidia-nccl-cu\d+", ("nvidia/nccl/lib",),
        "library", "ncclGetVersion", _nccl_version, _NCCL_BUILD,
        "nccl-version-code", "nccl-wheels-one-folder", example="2.21",
    ),
    # cuBLAS and cuBLASLt: one wheel ships both (nvidia-cublas-cu12 in nvidia/cublas/lib, nvidia-cublas for CUDA 13
    # in nvidia/cu13/lib); libcublas needs the cuBLASLt of its own release (pytorch/pytorch#91067, #174320).
    LibraryKind(
        "cublas", "cuBLAS", r"libcublas\.so\.\d+(\.\d+)*", r"cublas64_\d+\.dll",
        r"nvidia-cublas(-cu\d+)?", ("nvidia/cublas/lib", "nvidia/cu13/lib"),
        "library", "cublasGetProperty", _cuda_version, "", "cublas-version-calls", "",
        "properties", "cublasGetCudartVersion", ("cublaslt", "cublas-lt-same-release"), example="12.4",
    ),
    LibraryKind(
        "cublaslt", "cuBLASLt", r"libcublasLt\.so\.\d+(\.\d+)*", r"cublasLt64_\d+\.dll",
        r"nvidia-cublas(-cu\d+)?", ("nvidia/cublas/lib", "nvidia/cu13/lib"),
        "library", "cublasLtGetProperty", _cuda_version, "", "cublas-version-calls", "",
        "properties", "cublasLtGetCudartVersion", ("cublas", "cublas-lt-same-release"), False,
    ),
)  # fmt: skip

# The kinds judged through the generic copy (environment.LibraryCopy); the CUDA runtime and cuDNN have copies of
# their own shapes, with what their own calls answer.
JUDGED: tuple[LibraryKind, ...] = tuple(kind for kind in CATALOG if kind.job == "library")
MARKED: tuple[LibraryKind, ...] = tuple(kind for kind in JUDGED if kind.marker)  # requires_nccl, requires_cublas


def kind_of(key: str) -> LibraryKind | None:
    """The catalog's row for ``key`` ("nccl"); None for a key it does not hold."""
    return next((kind for kind in CATALOG if kind.key == key), None)


def build_string(kind: LibraryKind, data: bytes) -> tuple[str, str] | None:
    """The version and the CUDA release ("2.32.3", "12.9") that ``kind``'s build wrote into ``data`` (its file's
    .rodata), or None where it wrote neither.

    >>> build_string(kind_of("nccl"), b"\\0NCCL version 2.32.3+cuda12.9\\0")
    ('2.32.3', '12.9')
    """
    if not kind.build_pattern:
        return None
    found = re.search(kind.build_pattern.encode(), data)
    if found is None:
        return None
    return found.group(1).decode(), f"{int(found.group(2))}.{int(found.group(3))}"
