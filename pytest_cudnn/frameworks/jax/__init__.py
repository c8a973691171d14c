"""JAX: its build read in :mod:`.reading` (its CUDA plugin's build versions asked of the probe's child), what it
loads in :mod:`.loads` (its plugin's preloads), its cuDNN rules in :mod:`pytest_cudnn.compat.jax` (XLA's, which
binds, and ``_check_cuda_versions``). Its plugin carries few kernels (XLA compiles most at run time): not judged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..._base.versions import decimal
from ..base import ChildQuestion, CudnnProblem, Framework, GpuFloor, Reading, SkipCheck

if TYPE_CHECKING:
    from packaging.version import Version

    from ...environment import Cudnn, FrameworkBuild, LoadedLibrary
    from ...probe.loads import Search

__all__ = ["FRAMEWORK", "cudnn_number"]


def _read(reading: Reading) -> FrameworkBuild:
    from .reading import probe_jax

    return probe_jax(reading.site_path, reading.distributions)


def _loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    from .loads import jax_loads

    return jax_loads(build, search)


def _questions(build: FrameworkBuild, site_path: Sequence[str]) -> tuple[ChildQuestion, ...]:
    """Its CUDA plugin's compiled ``_versions`` module, asked in the probe's child for the CUDA and cuDNN it was
    built with (they are in no text file)."""
    from .reading import versions_job, with_versions

    job = versions_job(build)
    if job is None:
        return ()
    return (
        ChildQuestion(lambda batch: batch.jax_versions(job), lambda built, answer: with_versions(built, job, answer)),
    )


def cudnn_number(text: str) -> int | None:
    """'9.8.0' -> 90800: cuDNN's own integer encoding (major * 10000 + minor * 100 + patch from 9, * 1000 before)."""
    parts = text.split(".")
    numbers = [decimal(p, 3) for p in parts[:3]]
    if len(parts) < 2 or None in numbers:
        return None
    major, minor, patch = (*(n or 0 for n in numbers), 0)[:3]
    return major * 10000 + minor * 100 + patch if major >= 9 else major * 1000 + minor * 100 + patch


def _cudnn_problem(
    build: FrameworkBuild, cudnn: Cudnn, lowest: Version | None, gpus: int, skipped: bool
) -> CudnnProblem | None:
    from ...compat import jax as jax_facts

    if build.cudnn is None or not cudnn.version_raw:
        return None
    built = cudnn_number(build.cudnn.value)
    if built is None:
        return None
    if not jax_facts.xla_accepts_cudnn(built, cudnn.version_raw):
        problem = (
            f"its plugin was built with cuDNN {build.cudnn.value}, and XLA refuses a cuDNN of another major or an "
            "older minor (DNN library initialization failed)"
        )
        return CudnnProblem(problem, "jax-xla-cudnn-rule")
    # _check_cuda_versions' own cuDNN minimum (build // 100) passes whenever XLA's rule does: not checked again.
    # JAX_SKIP_CUDA_CONSTRAINTS_CHECK skips _check_cuda_versions whole; XLA's own rule above still binds.
    bad = () if skipped else jax_facts.known_bad(cudnn.version_raw, built, None, gpus or 1)
    if bad:
        return CudnnProblem("a combination JAX refuses: " + "; ".join(bad), "jax-check-cuda-versions")
    return None


def _gpu_floor(build: FrameworkBuild) -> GpuFloor | None:
    """JAX's documented floor for its plugin's CUDA major: 5.2 on CUDA 12, 7.5 on CUDA 13 ("jax-gpu-floors")."""
    from ...compat.jax import GPU_FLOORS

    major = decimal((build.cuda.value if build.cuda else "").split(".")[0], 3)
    floor = GPU_FLOORS.get(major or 0)
    if major is None or floor is None:
        return None
    older = [m for m in GPU_FLOORS if m < major]
    if not older:
        return GpuFloor(floor, "jax-gpu-floors", major)
    fix = f"install JAX for CUDA {older[-1]}, which supports it: pip install -U 'jax[cuda{older[-1]}]'"
    return GpuFloor(floor, "jax-gpu-floors", major, fix, GPU_FLOORS[older[-1]])


FRAMEWORK = Framework(
    name="jax",
    display="JAX",
    distributions="jax|jaxlib|jax-cuda.*-(?:plugin|pjrt)",
    marker_help="requires_jax(spec=None, *, gpu=True): skip unless JAX is installed within spec and, with gpu=True, "
    "its CUDA plugin can run GPU work here.",
    install_hint="pip install 'jax[cuda12]' (or jax[cuda13]): JAX's GPU support is a separate CUDA plugin",
    read=_read,
    loads=_loads,
    gpu_floor=_gpu_floor,
    cudnn_problem=_cudnn_problem,
    # jax_plugins/cuda/__init__.py initialize(): 'elif os.getenv("JAX_SKIP_CUDA_CONSTRAINTS_CHECK"):' (non-empty)
    skip_check=SkipCheck("JAX_SKIP_CUDA_CONSTRAINTS_CHECK", bool, "jax-skip-check"),
    questions=_questions,
)
