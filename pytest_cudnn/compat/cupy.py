"""How CuPy 14 finds its CUDA libraries: through NVIDIA's ``cuda-pathfinder``, whose search this re-states.

Pure data; rows cite :mod:`pytest_cudnn.compat.sources`.

* CuPy links the CUDA runtime statically ("cupy-static-cudart"): a CuPy-only environment needs no libcudart file.
* It loads cuBLAS, cuSOLVER, cuSPARSE, cuRAND, cuFFT (and NCCL) through ``cuda.pathfinder.load_nvidia_dynamic_lib``
  when their submodule is first used, and NVRTC on its first kernel compilation ("cupy-pathfinder-loads").
* ``load_nvidia_dynamic_lib(name)`` searches, per library: already loaded in the process; the NVIDIA wheels
  (``site.getsitepackages()``, then the user site); ``$CONDA_PREFIX``; the OS loader (``dlopen`` of each soname);
  ``$CUDA_PATH`` or ``$CUDA_HOME``. It loads a descriptor's dependencies first ("pathfinder-search").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CTK_EXTRA",
    "CUPY_LIBRARIES",
    "NO_CUDNN",
    "PATHFINDER_ANCHORS",
    "STATIC_CUDA_RUNTIME",
    "PathfinderLibrary",
    "ctk_fix",
]

# Frameworks whose CUDA runtime is linked into their own objects: no libcudart file is theirs to judge.
STATIC_CUDA_RUNTIME = (("cupy", "cupy-static-cudart"),)

# Frameworks that use no cuDNN from a major release on: (import name, first major, source). No cuDNN copy is theirs,
# whatever a plain dlopen would find.
NO_CUDNN = (("cupy", 14, "cupy-no-cudnn"),)

# CuPy's extra that installs the CUDA libraries it loads from PyPI: ``pip install "cupy-cuda13x[ctk]"``.
CTK_EXTRA = ("ctk", "cupy-install-ctk")

# The folders, under a toolkit root ($CONDA_PREFIX, $CUDA_PATH), that pathfinder looks in on Linux (its descriptors'
# default anchor_rel_dirs_linux; NVVM and CUPTI, which CuPy does not load here, have their own).
PATHFINDER_ANCHORS = (("lib64", "lib"), "pathfinder-descriptors")


@dataclass(frozen=True)
class PathfinderLibrary:
    """One library CuPy loads through ``load_nvidia_dynamic_lib``, as pathfinder's descriptor describes it."""

    name: str  # pathfinder's name: "nvrtc", "cublas"
    sonames: tuple[str, ...]  # tried in this order, in each folder
    wheel_folders: tuple[str, ...]  # under each site-packages folder, in this order
    dependencies: tuple[str, ...]  # loaded first; a dependency that fails fails the library
    required: bool  # CuPy cannot run GPU work without it (False: only the module that needs it fails)
    source: str


# cuda-pathfinder 1.9.0, cuda/pathfinder/_dynamic_libs/descriptor_catalog.py ("pathfinder-descriptors"); which CuPy
# needs from the start ("cupy-pathfinder-loads"): NVRTC compiles every elementwise and reduction kernel, and CuPy 14.2
# had mapped cuBLAS and NVRTC after ``cupy.ones(4).sum()`` on an H100 (tests/data/real-gpu/h100-facts.json).
CUPY_LIBRARIES = (
    PathfinderLibrary(
        "nvrtc",
        ("libnvrtc.so.13", "libnvrtc.so.12"),
        ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"),
        (),
        True,
        "pathfinder-descriptors",
    ),
    PathfinderLibrary(
        "cublasLt",
        ("libcublasLt.so.13", "libcublasLt.so.12"),
        ("nvidia/cu13/lib", "nvidia/cublas/lib"),
        (),
        True,
        "pathfinder-descriptors",
    ),
    PathfinderLibrary(
        "cublas",
        ("libcublas.so.13", "libcublas.so.12"),
        ("nvidia/cu13/lib", "nvidia/cublas/lib"),
        ("cublasLt",),
        True,
        "pathfinder-descriptors",
    ),
    PathfinderLibrary(
        "curand",
        ("libcurand.so.11", "libcurand.so.10"),
        ("nvidia/cu13/lib", "nvidia/curand/lib"),
        (),
        False,
        "pathfinder-descriptors",
    ),
    PathfinderLibrary(
        "cufft",
        ("libcufft.so.12", "libcufft.so.11"),
        ("nvidia/cu13/lib", "nvidia/cufft/lib"),
        (),
        False,
        "pathfinder-descriptors",
    ),
    PathfinderLibrary(
        "nvJitLink",
        ("libnvJitLink.so.13", "libnvJitLink.so.12"),
        ("nvidia/cu13/lib", "nvidia/nvjitlink/lib"),
        (),
        False,
        "pathfinder-descriptors",
    ),
    PathfinderLibrary(
        "cusparse",
        ("libcusparse.so.12",),
        ("nvidia/cu13/lib", "nvidia/cusparse/lib"),
        ("nvJitLink",),
        False,
        "pathfinder-descriptors",
    ),
    PathfinderLibrary(
        "cusolver",
        ("libcusolver.so.12", "libcusolver.so.11"),
        ("nvidia/cu13/lib", "nvidia/cusolver/lib"),
        ("nvJitLink", "cusparse", "cublasLt", "cublas"),
        False,
        "pathfinder-descriptors",
    ),
)


def ctk_fix(distribution: str | None) -> str:
    """``pip install "cupy-cuda12x[ctk]"``: CuPy's own way to bring every CUDA library it loads."""
    return f'pip install "{distribution or "cupy-cuda12x"}[{CTK_EXTRA[0]}]"'
