"""CuPy: its build read in :mod:`.reading`; its loads are what ``cuda.pathfinder``'s search (CuPy's locator) gives
it at run time (:mod:`.pathfinder`; in the probe, the locator's own answers replace them where it is installed). Its
CUDA runtime is static: no libcudart is loaded."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..base import ChildQuestion, Framework, Reading

if TYPE_CHECKING:
    from ...environment import FrameworkBuild, LoadedLibrary
    from ...probe.loads import Search

__all__ = ["FRAMEWORK"]


def _read(reading: Reading) -> FrameworkBuild:
    from .reading import probe_cupy

    return probe_cupy(reading.site_path, reading.distributions)


def _loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    from .pathfinder import cupy_loads, places

    return cupy_loads(build, search, places(search.variables))


def _questions(build: FrameworkBuild, site_path: Sequence[str]) -> tuple[ChildQuestion, ...]:
    """CuPy's locator's own search, run in the probe's child where ``cuda.pathfinder`` is installed (not on
    Windows, where the re-stated search stands)."""
    if sys.platform == "win32":
        return ()
    from .pathfinder import pathfinder_job, with_pathfinder

    job = pathfinder_job(build, site_path)
    if job is None:
        return ()
    return (ChildQuestion(lambda batch: batch.pathfinder(job), with_pathfinder),)


def _missing_fix(build: FrameworkBuild, loads: Sequence[LoadedLibrary]) -> str:
    """One fix for the libraries its locator cannot find: CuPy's own extra first ("cupy-install-ctk"), then the
    wheels for the sonames of its CUDA major (only when there is one for each library: a list that left one out
    would not mend it), then the loader's variable."""
    from ..._base.versions import major_of
    from ...compat.cupy import ctk_fix  # here: only a CuPy that cannot load a library pays for CuPy's table
    from ...compat.libraries import provider

    major = major_of(build.cuda.value if build.cuda else None)
    wheels: list[str] = []
    for load in loads:
        found = [p for name in load.name.split(" or ") if (p := provider(name, major)) and p.cuda_major == major]
        if not found or not found[0].requirement:
            wheels = []
            break
        wheels.append(found[0].requirement)
    wheel = f", or pip install {' '.join(dict.fromkeys(wheels))}" if wheels else ""
    where = f"the folder that holds {loads[0].name}" if len(loads) == 1 else "the folders that hold them"
    return (
        f"{ctk_fix(build.distribution)} (CuPy's extra that installs the CUDA libraries it loads from PyPI){wheel}, "
        f"or add {where} to LD_LIBRARY_PATH"
    )


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
    questions=_questions,
    preloader="cuda.pathfinder's load_nvidia_dynamic_lib (CuPy's locator)",
    missing_fix=_missing_fix,
)
