"""The CUDA libraries CuPy loads, found as its locator, NVIDIA's ``cuda-pathfinder``, finds them.

CuPy 14 links the CUDA runtime statically and loads NVRTC, cuBLAS and the rest on first use through
``cuda.pathfinder.load_nvidia_dynamic_lib`` (:mod:`pytest_cudnn.compat.cupy`). Two ways to know what it will get:

* where ``cuda.pathfinder`` is installed in the probed environment, the locator's own search, run in the probe's
  child process (job ``"pathfinder"`` in :mod:`pytest_cudnn.native.calls`; never imported in this process):
  :func:`pathfinder_job` and :func:`with_pathfinder`;
* before that, or where it is not installed, :func:`cupy_loads`, a re-statement of its documented search over the
  file system: the NVIDIA wheels in each site-packages folder (``site.getsitepackages()``, then the user site),
  ``$CONDA_PREFIX``, the loader's own search for each soname, ``$CUDA_PATH`` or ``$CUDA_HOME``; a library's
  dependencies first. Left out: "already loaded" (the process of one framework alone has loaded none; another
  framework imported first would hand CuPy its copy), the canary probe (only NVVM and CUPTI, which CuPy does not
  load here), and the RPATH of the Python executable in the dlopen step.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import site
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..._base import loader
from ...compat.cupy import CUPY_LIBRARIES, PATHFINDER_ANCHORS, PathfinderLibrary
from ...environment import FrameworkBuild, LoadedLibrary
from ...native.protocol import PATHFINDER
from ...probe.loads import Search

if TYPE_CHECKING:
    from ...native.protocol import PathfinderAnswer, PathfinderJob

__all__ = ["Places", "cupy_loads", "pathfinder_job", "pathfinder_site_dirs", "with_pathfinder"]

_BY_NAME = {library.name: library for library in CUPY_LIBRARIES}
# How each step is said, as pathfinder's found_via names it.
_RESTATED = "cuda-pathfinder's search, re-stated"


@dataclass(frozen=True)
class Places:
    """Where pathfinder looks besides the loader: its site-packages folders and the variables it reads."""

    site_dirs: tuple[str, ...]  # site.getsitepackages(), the user site inserted as pathfinder does
    conda_prefix: str | None = None
    cuda_path: str | None = None  # CUDA_PATH, else CUDA_HOME


def pathfinder_site_dirs() -> tuple[str, ...]:
    """The site-packages folders pathfinder searches in this process (its _utils/find_sub_dirs.py): the
    interpreter's own, and the user site after a venv's own folder (before the system's outside a venv)."""
    try:
        folders = list(site.getsitepackages())
        if site.ENABLE_USER_SITE:
            user = site.getusersitepackages()
            if user:
                folders.insert(1 if sys.prefix != sys.base_prefix else 0, user)
    except (AttributeError, OSError, ValueError):  # an embedded or stripped-down interpreter's site module
        return ()
    return tuple(folders)


def places(variables: Mapping[str, str]) -> Places:
    """Where the locator looks besides the wheels. A relative CONDA_PREFIX, CUDA_PATH or CUDA_HOME would be searched
    from whatever folder the process runs in: never searched here, as a relative LD_LIBRARY_PATH entry is not."""

    def absolute(value: str | None) -> str | None:
        return value if value and os.path.isabs(value) else None

    return Places(
        pathfinder_site_dirs(),
        absolute(variables.get("CONDA_PREFIX")),
        absolute(variables.get("CUDA_PATH") or variables.get("CUDA_HOME")),
    )


def uses_pathfinder(build: FrameworkBuild) -> bool:
    """Whether this CuPy finds its libraries through ``cuda.pathfinder``: CuPy 14 and later, the releases the loading
    rule was read from ("cupy-pathfinder-loads"). An older CuPy loads them its own way, not modelled: its loads are
    then not read, and it is judged by what a plain dlopen gives."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(build.version or "").release[0] >= 14
    except InvalidVersion:
        return False


def cupy_loads(build: FrameworkBuild, search: Search, where: Places) -> tuple[LoadedLibrary, ...]:
    """What ``load_nvidia_dynamic_lib`` gives CuPy for each library it loads, by pathfinder's documented order."""
    if build.is_cuda_build is False or not uses_pathfinder(build):
        return ()
    done: dict[str, LoadedLibrary] = {}
    for library in CUPY_LIBRARIES:
        _locate(library, search, where, done)
    return tuple(sorted(done.values(), key=lambda load: not load.required))


def _locate(library: PathfinderLibrary, search: Search, where: Places, done: dict[str, LoadedLibrary]) -> LoadedLibrary:
    if library.name in done:
        return done[library.name]
    searched: list[str] = []
    found = _in_folders(
        library, [posixpath.join(s, rel) for rel in library.wheel_folders for s in where.site_dirs], search.exists
    )
    searched += [posixpath.join(s, rel) for rel in library.wheel_folders for s in where.site_dirs]
    via = "site-packages"
    if found is None and where.conda_prefix:
        conda = [posixpath.join(where.conda_prefix, rel) for rel in PATHFINDER_ANCHORS[0]]
        found, via = _in_folders(library, conda, search.exists), "conda"
        searched += conda
    # Its dependencies are loaded next, whether or not the library was found; one that fails fails it.
    failed = [dep for dep in library.dependencies if _locate(_BY_NAME[dep], search, where, done).path is None]
    reason = f"{_RESTATED}: %s"
    if found is None:
        for soname in library.sonames:
            order = search.order(soname, None)
            searched += [step.folder for step in order.steps if step.folder and step.folder not in searched]
            winner = loader.resolve(order, search.exists).winner
            if winner is not None:
                found, via = winner.path, f"system-search ({winner.reason})"
                break
    if found is None and where.cuda_path:
        roots = [posixpath.join(where.cuda_path, rel) for rel in PATHFINDER_ANCHORS[0]]
        found, via = _in_folders(library, roots, search.exists), "CUDA_PATH"
        searched += roots
    if failed:
        found = None
        reason = f"{_RESTATED}: its dependency {', '.join(failed)} is found nowhere (%s)"
    name = posixpath.basename(found) if found else " or ".join(library.sonames)
    load = LoadedLibrary(
        name=name,
        requester=None,
        how="dlopen",
        required=library.required,
        path=posixpath.normpath(found) if found else None,
        found_by=reason % via if found else None,
        searched=tuple(dict.fromkeys(posixpath.normpath(folder) for folder in searched)),
    )
    done[library.name] = load
    return load


def _in_folders(library: PathfinderLibrary, folders: Sequence[str], exists: Callable[[str], bool]) -> str | None:
    """The first soname of ``library`` in the first of ``folders`` that holds one (pathfinder's _find_so_in_rel_dirs
    and _find_under_root: a folder at a time, the sonames in order within it)."""
    for folder in folders:
        for soname in library.sonames:
            path = posixpath.join(folder, soname)
            if exists(path):
                return path
    return None


# The locator's own search, in the probe's child ------------------------------------------------------------------


def pathfinder_job(build: FrameworkBuild, site_path: Sequence[str]) -> PathfinderJob | None:
    """The probe child's job that runs ``cuda.pathfinder``'s own search for CuPy's libraries, when the locator is
    installed on ``site_path`` (found as the import system would; not imported here)."""
    if build.is_cuda_build is False or not uses_pathfinder(build):
        return None
    if not any(os.path.isfile(os.path.join(entry, "cuda", "pathfinder", "__init__.py")) for entry in site_path):
        return None
    return {
        "kind": PATHFINDER,
        "names": [library.name for library in CUPY_LIBRARIES],
        # The child runs without site (-S): the folders pathfinder searches here, for it to search there.
        "site_dirs": list(pathfinder_site_dirs()),
    }


def with_pathfinder(build: FrameworkBuild, answer: PathfinderAnswer) -> FrameworkBuild:
    """``build`` with the copies ``cuda.pathfinder`` itself found (or, when it gave no answer, the re-stated
    search's, and why)."""
    libraries = answer.get("libraries")
    if libraries is None or answer.get("error"):
        said = answer.get("error") or "it gave no answer"
        note = f"cuda.pathfinder's own search could not be run ({said}); its search re-stated stands in"
        return dataclasses.replace(build, reason="; ".join(filter(None, (build.reason, note))))
    version = answer.get("version")
    if version is None:
        version = "(version unknown)"
    restated = {load.name: load for load in build.loads}
    loads: list[LoadedLibrary] = []
    errors: list[str] = []
    for library in CUPY_LIBRARIES:
        found = libraries.get(library.name) or {}
        path, via = found.get("abs_path"), found.get("found_via")
        if path is not None and os.path.isabs(path):
            how = f"cuda.pathfinder {version}: {via if via is not None else 'found'}, run in the probe's child"
            if found.get("was_already_loaded_from_elsewhere") is True:
                how += " (already loaded)"
            loads.append(
                LoadedLibrary(posixpath.basename(path), None, "dlopen", library.required, posixpath.normpath(path), how)
            )
            continue
        error = found.get("error")
        if error is None:
            error = "no answer"
        errors.append(f"{library.name}: {error}")
        # Its folders, as the re-stated search spells them: pathfinder's error lists only what it listed.
        name = " or ".join(library.sonames)
        loads.append(
            LoadedLibrary(name, None, "dlopen", library.required, None, None, restated.get(name, _EMPTY).searched)
        )
    reason = "; ".join(filter(None, (build.reason, *(f"cuda.pathfinder {version}: {e}" for e in errors[:3]))))
    ordered = tuple(sorted(loads, key=lambda load: not load.required))
    return dataclasses.replace(build, loads=ordered, reason=reason or None)


_EMPTY = LoadedLibrary("", None, "dlopen", False, None, None)
