"""Libraries that cuDNN and CUDA load at run time, and the pip wheel that ships each one.

Pure data and lookups; rows cite :mod:`pytest_cudnn.compat.sources`. Only what was read or measured is here: the
wheels' file lists, the ELF dependencies of the cuDNN wheels, and what PyTorch and CuPy maintainers wrote about
cuDNN's loading. Windows DLL names other than ``zlibwapi.dll`` are not covered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import Version

from .._base.versions import specifier_set

__all__ = [
    "CUDNN_LOADS",
    "PROVIDERS",
    "CudnnLoad",
    "Provider",
    "WheelLibrary",
    "cudnn_loads",
    "provider",
]


@dataclass(frozen=True)
class WheelLibrary:
    """A library file a pip wheel ships, by the soname pattern it answers."""

    pattern: str  # full-match regular expression over the soname; groups fill ``version``
    cuda_major: int | None  # the CUDA major the file belongs to (None: not tied to CUDA)
    package: str | None  # the pip distribution; None where no wheel ships it
    file: str | None  # the file in the wheel ("libnvrtc.so.11.2"); None where no wheel ships it
    folder: str | None  # its folder under site-packages
    version: str  # the requirement's specifier ("==12.{1}.*" is filled from the pattern's groups), or ""
    note: str  # what else a fix must say
    source: str


# Files the wheels ship under their own names: (soname, CUDA major, package, folder, source). The NVRTC wheels ship
# only versioned names: the CUDA 11.8 wheel's library is libnvrtc.so.11.2 (NVRTC's versioning changed at 11.3).
_SHIPPED = (
    ("libnvrtc.so.11.2", 11, "nvidia-cuda-nvrtc-cu11", "nvidia/cuda_nvrtc/lib", "nvrtc-wheels"),
    ("libnvrtc.so.12", 12, "nvidia-cuda-nvrtc-cu12", "nvidia/cuda_nvrtc/lib", "nvrtc-wheels"),
    ("libnvrtc.so.13", 13, "nvidia-cuda-nvrtc", "nvidia/cu13/lib", "nvrtc-wheels"),
    ("libcublas.so.11", 11, "nvidia-cublas-cu11", "nvidia/cublas/lib", "cublas-wheels"),
    ("libcublasLt.so.11", 11, "nvidia-cublas-cu11", "nvidia/cublas/lib", "cublas-wheels"),
    ("libcublas.so.12", 12, "nvidia-cublas-cu12", "nvidia/cublas/lib", "cublas-wheels"),
    ("libcublasLt.so.12", 12, "nvidia-cublas-cu12", "nvidia/cublas/lib", "cublas-wheels"),
    ("libcublas.so.13", 13, "nvidia-cublas", "nvidia/cu13/lib", "cublas-wheels"),
    ("libcublasLt.so.13", 13, "nvidia-cublas", "nvidia/cu13/lib", "cublas-wheels"),
    ("libcudart.so.11.0", 11, "nvidia-cuda-runtime-cu11", "nvidia/cuda_runtime/lib", "cudart-wheels"),
    ("libcudart.so.12", 12, "nvidia-cuda-runtime-cu12", "nvidia/cuda_runtime/lib", "cudart-wheels"),
    ("libcudart.so.13", 13, "nvidia-cuda-runtime", "nvidia/cu13/lib", "cudart-wheels"),
    # The CUDA 12 math libraries TensorFlow and JAX load by name: the sonames as JAX preloads them from these
    # folders ("jax-preload"), the distributions as tensorflow[and-cuda] pins them ("tf-and-cuda").
    ("libcusolver.so.11", 12, "nvidia-cusolver-cu12", "nvidia/cusolver/lib", "tf-and-cuda"),
    ("libcufft.so.11", 12, "nvidia-cufft-cu12", "nvidia/cufft/lib", "tf-and-cuda"),
    ("libcusparse.so.12", 12, "nvidia-cusparse-cu12", "nvidia/cusparse/lib", "tf-and-cuda"),
)
_NVRTC = {11: ("nvidia-cuda-nvrtc-cu11", "nvidia/cuda_nvrtc/lib", "libnvrtc.so.11.2"),
          12: ("nvidia-cuda-nvrtc-cu12", "nvidia/cuda_nvrtc/lib", "libnvrtc.so.12"),
          13: ("nvidia-cuda-nvrtc", "nvidia/cu13/lib", "libnvrtc.so.13")}  # fmt: skip

# Sonames are matched against every row; a lookup answers only when exactly one row fits.
PROVIDERS: tuple[WheelLibrary, ...] = (
    *(WheelLibrary(re.escape(name), major, package, name, folder, "", "", source)
      for name, major, package, folder, source in _SHIPPED),
    # NVRTC loads libnvrtc-builtins.so.<major>.<minor> of its own release: the wheel of that minor ships it.
    *(WheelLibrary(rf"libnvrtc-builtins\.so\.{major}\.(\d+)", major, package, f"libnvrtc-builtins.so.{major}.{{0}}",
                   folder, f"=={major}.{{0}}.*", "the builtins of the same CUDA release as libnvrtc", "nvrtc-builtins")
      for major, (package, folder, _) in _NVRTC.items()),
    # The unversioned name that cuDNN 8.7+ dlopens: no wheel ships it, only the versioned file of the major.
    *(WheelLibrary(r"libnvrtc\.so", major, package, file, folder, "",
                   f"no wheel ships the unversioned libnvrtc.so; {package} has {file} only", "cudnn-87-nvrtc")
      for major, (package, folder, file) in _NVRTC.items()),
    # zlib: cuDNN 8.3 and later need it; no pip wheel ships it ("cudnn-zlib").
    WheelLibrary(r"libz\.so\.1", None, None, None, None, "",
                 "no pip wheel ships zlib: it comes with the operating system's zlib package", "cudnn-zlib"),
    WheelLibrary(r"zlibwapi\.dll", None, None, None, None, "",
                 "no pip wheel ships zlibwapi.dll: install zlib as NVIDIA's cuDNN installation guide says ('Installing "
                 "Zlib' for Windows) and put its folder where the process finds DLLs (from Python 3.8 PATH is not "
                 "searched: System32, the folder of python.exe, or os.add_dll_directory)", "cudnn-zlib"),
)  # fmt: skip


@dataclass(frozen=True)
class Provider:
    """Who provides ``soname`` for CUDA major ``cuda_major``: a pip wheel, or nothing pip can install."""

    soname: str  # what was asked for
    cuda_major: int | None
    package: str | None  # None: no pip wheel ships it (see ``note``)
    file: str | None  # the file the wheel ships; differs from ``soname`` where the wheel has another name
    folder: str | None
    requirement: str | None  # "nvidia-cuda-nvrtc-cu12==12.5.*", or the bare package name
    note: str
    source: str

    @property
    def exact(self) -> bool:
        """Whether the wheel ships the very name asked for (False: libnvrtc.so asked, libnvrtc.so.11.2 shipped)."""
        return self.file == self.soname


def provider(soname: str, cuda_major: int | None = None) -> Provider | None:
    """The pip wheel that provides library ``soname`` for CUDA ``cuda_major``; None where nothing is tabled or the
    answer depends on a major not given.

    A versioned name carries its own major ("libcublas.so.12"); a ``cuda_major`` that disagrees finds nothing. The
    unversioned "libnvrtc.so" needs ``cuda_major`` to say which wheel.

    >>> p = provider("libnvrtc.so", 11)
    >>> p.requirement, p.file, p.exact
    ('nvidia-cuda-nvrtc-cu11', 'libnvrtc.so.11.2', False)
    >>> provider("libnvrtc-builtins.so.12.5").requirement
    'nvidia-cuda-nvrtc-cu12==12.5.*'
    """
    name = soname.strip()
    found = [
        (row, match)
        for row in PROVIDERS
        if (match := re.fullmatch(row.pattern, name))
        and (cuda_major is None or row.cuda_major is None or row.cuda_major == cuda_major)
    ]
    if len(found) != 1:
        return None
    row, match = found[0]
    groups = match.groups()
    file = row.file.format(*groups) if row.file else None
    requirement = f"{row.package}{row.version.format(*groups)}" if row.package else None
    return Provider(name, row.cuda_major, row.package, file, row.folder, requirement, row.note, row.source)


@dataclass(frozen=True)
class CudnnLoad:
    """A library cuDNN needs at run time beyond its own sub-libraries."""

    cudnn: str  # specifier over the cuDNN version
    system: str  # "Linux" or "Windows"
    soname: str  # "{cuda}" stands for the CUDA major of the cuDNN build
    how: str  # "DT_NEEDED" (the loader fails without it), "dlopen" (cuDNN opens it when it needs it), "run time"
    consequence: str
    source: str


CUDNN_LOADS: tuple[CudnnLoad, ...] = (
    CudnnLoad(
        ">=8.7,<9",
        "Linux",
        "libnvrtc.so",
        "dlopen",
        "a missing libnvrtc.so makes libcudnn.so.8 abort the process on its first call ('Could not load library "
        "libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file')",
        "cudnn-87-nvrtc",
    ),
    CudnnLoad(
        ">=8,<9",
        "Linux",
        "libcublas.so.{cuda}",
        "DT_NEEDED",
        "cuDNN 8 depends on cuBLAS: libcudnn_ops_infer.so.8 of 8.7.0.84 cannot be loaded without it",
        "cudnn-8-cublas",
    ),
    CudnnLoad(
        ">=8,<9",
        "Linux",
        "libcublasLt.so.{cuda}",
        "DT_NEEDED",
        "libcudnn_ops_infer.so.8 of 8.7.0.84 cannot be loaded without it",
        "cudnn-8-cublas",
    ),
    CudnnLoad(
        ">=9",
        "Linux",
        "libcublasLt.so.{cuda}",
        "dlopen",
        "cuDNN 9 depends on cuBLASLt (no longer on cuBLAS) for some operations",
        "cudnn-9-cublaslt",
    ),
    CudnnLoad(
        ">=9",
        "Linux",
        "libnvrtc.so.{cuda}",
        "dlopen",
        "cuDNN 9 compiles its runtime-compiled engines with NVRTC, dlopened by name ('libnvrtc.so', then "
        "'libnvrtc.so.<CUDA major>'); up to 9.10.2 its RUNPATH looks in $ORIGIN/../../nvrtc/lib, a folder no wheel "
        "creates (nvidia-cuda-nvrtc-cu12 installs nvidia/cuda_nvrtc/lib), from 9.11 in $ORIGIN/../../cuda_nvrtc/lib: "
        "without a loaded or findable NVRTC those engines fail to build",
        "cudnn-9-nvrtc",
    ),
    CudnnLoad(
        ">=8.3", "Linux", "libz.so.1", "DT_NEEDED", "cuDNN's sub-libraries cannot be loaded without it", "cudnn-zlib"
    ),
    CudnnLoad(
        ">=8.3,<9",
        "Windows",
        "zlibwapi.dll",
        "run time",
        "cuDNN prints 'Could not locate zlibwapi.dll. Please make sure it is in your library path!'",
        "cudnn-zlib",
    ),
)


def cudnn_loads(cudnn: str, system: str) -> tuple[CudnnLoad, ...]:
    """The libraries cuDNN ``cudnn`` ("8.7.0") needs on ``system`` besides its own sub-libraries."""
    try:
        version = Version(cudnn)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return ()
    return tuple(row for row in CUDNN_LOADS if row.system == system and version in specifier_set(row.cudnn))
