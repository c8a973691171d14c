"""How each framework loads its CUDA libraries: which names it asks for, and which it cannot do without.

Pure data; rows cite :mod:`pytest_cudnn.compat.sources`. What the files themselves say (DT_NEEDED, DT_RPATH,
DT_RUNPATH) is read from them by :mod:`pytest_cudnn.probe.loads`; this module holds what only the frameworks'
sources say: the libraries loaded by ``dlopen`` or by a Python-level preload.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

__all__ = [
    "LOADS",
    "TORCH_PRELOAD",
    "TORCH_PRELOADS",
    "TORCH_PRELOADS_ALWAYS",
    "TORCH_PRELOADS_DROPPED",
    "FrameworkLoad",
    "loads_of",
    "torch_preloads",
]


@dataclass(frozen=True)
class FrameworkLoad:
    """One library a framework loads for a CUDA major, and how."""

    framework: str  # "jax", "tensorflow"
    cuda_major: int
    soname: str
    how: str  # "preload" (by absolute path from an nvidia wheel, then by name) or "dlopen" (by name)
    module: str | None  # for a preload: the nvidia.<module> package whose lib folder it is loaded from
    required: bool  # the framework's GPU support fails without it
    source: str


# JAX: jax_plugins/cuda/__init__.py, _load_nvidia_libraries (source "jax-preload"): each library is loaded by
# absolute path from nvidia.<module>.__path__[0]/lib, failures ignored; XLA later dlopens by name what was not
# preloaded. Required: the components _check_cuda_versions checks, which raises "Unable to load <name>. Is it
# installed?" when one cannot be loaded (source "jax-check-cuda-versions"): CUDA, cuDNN, cuFFT, cuPTI, cuBLAS,
# cuSPARSE (cuBLASLt is cuBLAS's own DT_NEEDED). NVRTC, NCCL, cuSOLVER and NVSHMEM are loaded when used.
_JAX = {
    12: (
        ("cuda_runtime", "libcudart.so.12", True),
        ("cuda_nvrtc", "libnvrtc.so.12", False),
        ("cublas", "libcublas.so.12", True),
        ("cublas", "libcublasLt.so.12", True),
        ("nccl", "libnccl.so.2", False),
        ("cuda_cupti", "libcupti.so.12", True),
        ("cusparse", "libcusparse.so.12", True),
        ("cusolver", "libcusolver.so.11", False),
        ("cufft", "libcufft.so.11", True),
        ("nvshmem", "libnvshmem_host.so.3", False),
        ("cudnn", "libcudnn.so.9", True),
    ),
    13: (
        ("cu13", "libcudart.so.13", True),
        ("cu13", "libnvrtc.so.13", False),
        ("cu13", "libcublas.so.13", True),
        ("cu13", "libcublasLt.so.13", True),
        ("nccl", "libnccl.so.2", False),
        ("cu13", "libcupti.so.13", True),
        ("cu13", "libcusparse.so.12", True),
        ("cu13", "libcusolver.so.12", False),
        ("cu13", "libcufft.so.12", True),
        ("nvshmem", "libnvshmem_host.so.3", False),
        ("cudnn", "libcudnn.so.9", True),
    ),
}

# TensorFlow: tsl/platform/default/dlopen_checker.cc, TryDlopenCUDALibraries (source "tf-dlopen-list"): cudart,
# cuBLAS, cuBLASLt, cuFFT, cuSOLVER, cuSPARSE and cuDNN, each dlopened by name from libtensorflow_framework.so.2;
# any failure is "Cannot dlopen some GPU libraries ... Skipping registering GPU devices". The names per CUDA major:
# CUDA 12 as the JAX CUDA 12 preloads name them (source "jax-preload"); CUDA 11 as TensorFlow logs them (source
# "tf-dso-names": 'Could not load dynamic library libcufft.so.10', 'libcusolver.so.11', 'libcusparse.so.11').
# cuDNN's name comes from the build's cuDNN major (compat.tensorflow.library_names).
_TENSORFLOW = {
    11: ("libcudart.so.11.0", "libcublas.so.11", "libcublasLt.so.11", "libcufft.so.10", "libcusolver.so.11",
         "libcusparse.so.11"),
    12: ("libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11", "libcusolver.so.11",
         "libcusparse.so.12"),
}  # fmt: skip

LOADS: tuple[FrameworkLoad, ...] = (
    *(
        FrameworkLoad("jax", major, soname, "preload", module, required, "jax-preload")
        for major, rows in _JAX.items()
        for module, soname, required in rows
    ),
    *(
        FrameworkLoad("tensorflow", major, soname, "dlopen", None, True, "tf-dlopen-list")
        for major, names in _TENSORFLOW.items()
        for soname in names
    ),
    # The checker of the TensorFlow generation that shipped CUDA 11 builds (tensorflow/tsl, and before it
    # stream_executor) also requires cuRAND; CUDA 11's cuRAND is libcurand.so.10 (compat-audit D3). Whether the CUDA
    # 12 builds' checker still did is not pinned: not tabled for 12.
    FrameworkLoad("tensorflow", 11, "libcurand.so.10", "dlopen", None, True, "tf-dlopen-list-cuda11"),
)

# torch/__init__.py, _load_global_deps and _preload_cuda_deps (source "torch-preload"): when libtorch_global_deps.so
# cannot be loaded through torch's DT_RPATH, each CUDA library is loaded from the first
# <sys.path entry>/nvidia/<folder>/lib/<name> that exists ("Preloads cuda deps if they could not be found otherwise").
TORCH_PRELOAD = "torch-preload"

# The (folder, glob) list of _preload_cuda_deps in torch 2.14.1, in its order (source "torch-preload-2.14"). Each
# is looked for, per sys.path entry, in nvidia/<folder>/lib, then nvidia/cu<CUDA major>/lib, then <folder>/lib;
# the first sys.path entry with a match wins and its first match is loaded by absolute path.
TORCH_PRELOADS: tuple[tuple[str, str], ...] = (
    ("cublas", "libcublasLt.so.*[0-9]"),
    ("cublas", "libcublas.so.*[0-9]"),
    ("cudnn", "libcudnn.so.*[0-9]"),
    ("cuda_nvrtc", "libnvrtc.so.*[0-9]"),
    ("cuda_nvrtc", "libnvrtc-builtins.so.*[0-9]"),
    ("cuda_runtime", "libcudart.so.*[0-9]"),
    ("cuda_cupti", "libcupti.so.*[0-9]"),
    ("cufft", "libcufft.so.*[0-9]"),
    ("curand", "libcurand.so.*[0-9]"),
    ("nvjitlink", "libnvJitLink.so.*[0-9]"),
    ("cusparse", "libcusparse.so.*[0-9]"),
    ("cusparselt", "libcusparseLt.so.*[0-9]"),
    ("cusolver", "libcusolver.so.*[0-9]"),
    ("nccl", "libnccl.so.*[0-9]"),
    ("nvshmem", "libnvshmem_host.so.*[0-9]"),
    ("cufile", "libcufile.so.*[0-9]"),
    ("nvtx", "libnvToolsExt.so.*[0-9]"),
)
# Folders a later torch no longer preloads: (folder, the first release without it, source). torch 2.15.0 dropped
# cuRAND from _preload_cuda_deps and from its cuda-toolkit extras (compat-audit F4).
TORCH_PRELOADS_DROPPED: tuple[tuple[str, str, str], ...] = (("curand", "2.15.0", "torch-preload-2.15"),)


def torch_preloads(version: str | None) -> tuple[tuple[str, str], ...]:
    """The (folder, glob) list _preload_cuda_deps of torch ``version`` walks; None or an unreadable version: the
    newest tabled list.

    >>> [folder for folder, _ in torch_preloads("2.14.1")].count("curand")
    1
    >>> [folder for folder, _ in torch_preloads("2.15.0+cu132")].count("curand")
    0
    """
    try:
        release = Version(Version(version).base_version) if version else None
    except ValueError:  # InvalidVersion
        release = None
    dropped = {folder for folder, since, _ in TORCH_PRELOADS_DROPPED if release is None or release >= Version(since)}
    return tuple(row for row in TORCH_PRELOADS if row[0] not in dropped)


# The text in torch/__init__.py that says it preloads on every import, not only when the RPATH fails: torch 2.14.1
# calls it once libtorch_global_deps.so (and through it libcudart) is loaded (source "torch-preload-2.14").
TORCH_PRELOADS_ALWAYS = "_preload_cuda_deps(required=False)"


def loads_of(framework: str, cuda_major: int) -> tuple[FrameworkLoad, ...]:
    """The libraries ``framework`` loads by name for CUDA ``cuda_major``; () where none are tabled.

    >>> [row.soname for row in loads_of("tensorflow", 12)][:2]
    ['libcudart.so.12', 'libcublas.so.12']
    >>> loads_of("tensorflow", 13)
    ()
    >>> [row.soname for row in loads_of("tensorflow", 11)][-1]
    'libcurand.so.10'
    """
    return tuple(row for row in LOADS if row.framework == framework and row.cuda_major == cuda_major)
