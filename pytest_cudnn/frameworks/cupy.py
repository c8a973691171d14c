"""CuPy: read by :mod:`pytest_cudnn.probe.cupy`; its loads are what ``cuda.pathfinder``'s search (CuPy's locator)
gives it at run time (:mod:`pytest_cudnn.probe.pathfinder`; in the probe, the locator's own answers replace them
where it is installed). Its CUDA runtime is static: no libcudart is loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Framework, Reading

if TYPE_CHECKING:
    from ..environment import FrameworkBuild, LoadedLibrary
    from ..probe.loads import Search

__all__ = ["FRAMEWORK"]


def _read(reading: Reading) -> FrameworkBuild:
    from ..probe.cupy import probe_cupy

    return probe_cupy(reading.site_path, reading.distributions)


def _loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    from ..probe.pathfinder import cupy_loads, places

    return cupy_loads(build, search, places(search.variables))


FRAMEWORK = Framework(
    name="cupy",
    display="CuPy",
    distributions="cupy-cuda.*",
    marker_help="requires_cupy(spec=None, *, gpu=True): skip unless CuPy is installed within spec and, with "
    "gpu=True, its CUDA build can run on this driver and GPU.",
    install_hint="pip install cupy-cuda12x (or cupy-cuda13x), the wheel for the CUDA major of this host's driver",
    read=_read,
    loads=_loads,
    loads_at_import=False,
)
