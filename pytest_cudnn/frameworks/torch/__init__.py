"""PyTorch: its build read in :mod:`.reading` (``torch/version.py``, ``macros.h``, its CUDA objects), what it loads
in :mod:`.loads` (libtorch_global_deps.so, its wheel preloads, libtorch_cuda.so's DT_NEEDED), its cuDNN rule in
:mod:`pytest_cudnn.compat.torch` (``torch/backends/cudnn/__init__.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..base import BuildLine, CudnnProblem, Framework, KeptBuild, Reading, SkipCheck

if TYPE_CHECKING:
    from packaging.version import Version

    from ...environment import Cudnn, FrameworkBuild, LoadedLibrary
    from ...probe.loads import Search

__all__ = ["FRAMEWORK"]


def _read(reading: Reading) -> FrameworkBuild:
    from .reading import probe_torch

    return probe_torch(reading.site_path, reading.distributions, FRAMEWORK.import_objects)


def _loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    from .loads import torch_loads

    return torch_loads(build, search)


def _cudnn_problem(
    build: FrameworkBuild, cudnn: Cudnn, lowest: Version | None, gpus: int, skipped: bool
) -> CudnnProblem | None:
    from ...compat import torch as torch_facts

    if build.cudnn is None or not cudnn.version:
        return None
    capability = (lowest.release[0], lowest.release[1]) if lowest and len(lowest.release) > 1 else None
    if torch_facts.accepts_cudnn(
        build.cudnn.value, cudnn.version, capability, torch_version=build.version, skip_check=skipped
    ):
        return None
    problem = f"PyTorch {build.version} refuses it: compiled with cuDNN {build.cudnn.value}"
    if capability is not None and torch_facts.accepts_cudnn(build.cudnn.value, cudnn.version):
        problem += f"; cuDNN 9.11 and newer refuse devices below compute capability 7.5 (lowest {lowest})"
    return CudnnProblem(problem, "torch-cudnn-rule")


def _pypi_lines() -> tuple[BuildLine, ...]:
    """Its PyPI builds, newest first, one line per run of releases with the same CUDA and GPU targets (source
    "torch-pypi-wheels", through :data:`pytest_cudnn.compat.torch.RELEASES`)."""
    from ...compat.torch import RELEASES

    lines: list[BuildLine] = []
    for row in RELEASES:  # oldest first
        if lines and (lines[-1].cuda, lines[-1].targets) == (row.cuda, row.architectures):
            lines[-1] = lines[-1]._replace(last=row.version)
        else:
            lines.append(BuildLine(row.version, row.version, row.cuda, row.architectures))
    return tuple(reversed(lines))


def _kept_for_gpu(capability: str, runs: Callable[[Sequence[str], str], str | None]) -> KeptBuild | None:
    """The newest PyPI release whose GPU code runs on a GPU of ``capability``, as ``torch<X.Y`` (source
    "torch-pypi-wheels", through :func:`pytest_cudnn.compat.torch.last_for_gpu`)."""
    from ...compat.torch import INDEX_VARIANTS, last_for_gpu

    found = last_for_gpu(capability, runs)
    if found is None:
        return None
    last, dropped = found.last, found.dropped
    why = (
        f"the last PyPI build with {found.target} is {last.version} ({last.local}); {dropped.version} "
        f"({dropped.local}) is built for {dropped.architectures[0]} to {dropped.architectures[-1]}"
    )
    for variant in INDEX_VARIANTS:  # a newer release that keeps the GPU on PyTorch's own index
        newer = tuple(map(int, variant.first.split("."))) > tuple(map(int, last.version.split(".")[:2]))
        if newer and runs(variant.architectures, capability):
            upper = f"{variant.last.split('.')[0]}.{int(variant.last.split('.')[1]) + 1}"
            why += (
                f"; or, to stay on {variant.first} to {variant.last}, PyTorch's {variant.local} builds keep "
                f'{found.target}: pip install "torch<{upper}" --index-url {variant.index}'
            )
    return KeptBuild("torch", found.specifier, why, last.source)


FRAMEWORK = Framework(
    name="torch",
    display="PyTorch",
    distributions="torch",
    marker_help="requires_torch(spec=None, *, gpu=True): skip unless PyTorch is installed within spec and, with "
    "gpu=True, it can run GPU work here (the copies it loads, judged by its own rules).",
    install_hint="pip install torch (the Linux wheels on PyPI are CUDA builds), or a CUDA variant from PyTorch's index",
    read=_read,
    loads=_loads,
    cudnn_problem=_cudnn_problem,
    # torch/backends/cudnn/__init__.py: 'if os.environ.get("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK", "0") == "1"'
    skip_check=SkipCheck("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK", lambda value: value == "1", "torch-cudnn-rule"),
    kernels_in_fatbin=True,
    # torch/__init__.py loads lib/libtorch_global_deps.so with ctypes (_load_global_deps) and re-raises an error
    # that names no CUDA library; torch._C links libtorch_cuda.so (through libtorch.so) on every CUDA build.
    import_objects=("lib/libtorch_global_deps.so", "lib/libtorch_cuda.so"),
    pypi=("torch", _pypi_lines),
    kept_for_gpu=_kept_for_gpu,
)
