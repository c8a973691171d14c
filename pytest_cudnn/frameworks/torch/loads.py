"""The CUDA libraries PyTorch loads and the copy its own search gives each (predicted from its ELF objects and its
Python preloads, never by loading): libtorch_global_deps.so first, torch's preloads of the nvidia wheels (every
import from 2.14, else only where its RPATH fails), then libtorch_cuda.so's DT_NEEDED through its DT_RPATH."""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Sequence

from ...compat.loading import TORCH_PRELOADS_ALWAYS, torch_preloads
from ...environment import FrameworkBuild, LoadedLibrary
from ...files import FileRefused, read_regular
from ...probe.loads import CUDA_LIBRARY, Search, by_name, cuda_major, framework_object, wheel_copies

__all__ = ["torch_loads"]


def torch_loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    cuda_object = framework_object(build, "libtorch_cuda.so")
    if cuda_object is None:
        return ()
    loaded: dict[str, LoadedLibrary] = {}
    # libtorch_global_deps.so is loaded first, through its own DT_RPATH (it brings libcudart).
    global_deps = framework_object(build, "libtorch_global_deps.so")
    for name in global_deps.needed if global_deps else ():
        if CUDA_LIBRARY.fullmatch(name):
            loaded[name] = by_name(name, global_deps, "DT_NEEDED", True, search)
    always = _preloads_always(build.location)
    if always and any(load.path for name, load in loaded.items() if name.startswith("libcudart")):
        for folder, pattern in torch_preloads(build.version):
            path = _torch_preload(search.site_path, folder, pattern, cuda_major(build))
            name = os.path.basename(path) if path else ""
            if path and name not in loaded:
                found_by = f"torch's preload of {pattern} (first sys.path entry with nvidia/{folder}/lib or cu*/lib)"
                loaded[name] = LoadedLibrary(name, None, "preload", False, path, found_by, (os.path.dirname(path),))
    for name in cuda_object.needed:
        if not CUDA_LIBRARY.fullmatch(name):
            continue
        if name in loaded:  # already loaded by that soname: the loader hands over that copy
            loaded[name] = dataclasses.replace(loaded[name], required=True)
            continue
        load = by_name(name, cuda_object, "DT_NEEDED", True, search)
        if load.path is None and not always:
            wheels = wheel_copies(search, name)
            if wheels:
                found_by = "torch's preload from the first nvidia/*/lib folder on sys.path that has it"
                load = LoadedLibrary(name, None, "preload", True, wheels[0], found_by, load.searched, tuple(wheels[1:]))
        loaded[name] = load
    return tuple(sorted(loaded.values(), key=lambda load: not load.required))


def _preloads_always(location: str | None) -> bool:
    """Whether torch/__init__.py preloads the wheels on every import (torch 2.14), not only when its RPATH fails."""
    if location is None:
        return False
    try:
        text = read_regular(os.path.join(location, "__init__.py"), 4 << 20, whole=False)
    except (OSError, FileRefused):
        return False
    return TORCH_PRELOADS_ALWAYS.encode() in text


def _torch_preload(site_path: Sequence[str], folder: str, pattern: str, major: int | None) -> str | None:
    """The file torch's _preload_cuda_lib loads: the first sys.path entry with a match, its first match."""
    for entry in site_path:
        places = [os.path.join(entry, "nvidia", folder, "lib")]
        if major is not None:
            places.append(os.path.join(entry, "nvidia", f"cu{major}", "lib"))
        places.append(os.path.join(entry, folder, "lib"))
        matches = [match for place in places for match in sorted(glob.glob(os.path.join(glob.escape(place), pattern)))]
        if matches:
            return matches[0]
    return None
