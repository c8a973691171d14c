"""Which copy of each CUDA library a framework loads, by the framework's own rules, predicted without loading it.

* torch: the CUDA names in the DT_NEEDED of ``torch/lib/libtorch_cuda.so``, searched from that object (its
  DT_RPATH comes before LD_LIBRARY_PATH); a name that search cannot find is preloaded by ``torch/__init__.py`` from
  the first ``nvidia/*/lib`` folder on sys.path that has it (source "torch-preload").
* JAX: each library of ``_load_nvidia_libraries`` from the first ``nvidia/<module>`` package on sys.path, by
  absolute path; what is not there, XLA dlopens by name from ``xla_cuda_plugin.so`` (its DT_RPATH first).
* TensorFlow: each library of ``TryDlopenCUDALibraries`` dlopened by name from ``libtensorflow_framework.so.2``
  (LD_LIBRARY_PATH first, then its DT_RUNPATH).
* CuPy: through NVIDIA's cuda-pathfinder, not here: :mod:`.pathfinder`.
* Any other framework: its registry entry's ``loads`` (:mod:`pytest_cudnn.frameworks`), built on :func:`by_name`.

The first copy of a name loaded into a process serves every later request for it: within a framework, a preloaded
copy also serves the DT_NEEDED of its objects. The search itself is :mod:`pytest_cudnn.loader`, glibc's rules.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .. import loader
from ..compat.loading import LOADS, TORCH_PRELOADS_ALWAYS, torch_preloads
from ..environment import FrameworkBuild, LinkedObject, LoadedLibrary
from ..files import FileRefused, read_regular
from ..versions import major_of

__all__ = [
    "CUDA_LIBRARY",
    "Search",
    "by_name",
    "cuda_major",
    "framework_object",
    "jax_loads",
    "own_folders",
    "tensorflow_loads",
    "torch_loads",
]

# The CUDA libraries a framework object can need (the DT_NEEDED of libtorch_cuda.so lists them among libc and
# libstdc++); matched on the soname.
CUDA_LIBRARY = re.compile(
    r"lib(cudart|cudnn|cublas|cublasLt|cufft|curand|cusolver|cusparse|cusparseLt|nccl|nvrtc|nvJitLink|cupti|cufile"
    r"|nvshmem_host|nvToolsExt)\.so(\.[0-9]+)*"
)


@dataclass(frozen=True)
class Search:
    """What the search needs of the host: the loader's inputs, sys.path, and which files exist."""

    process: loader.Process
    site_path: Sequence[str]
    exists: Callable[[str], bool] = os.path.isfile
    # The host's variables a framework's own search reads (CuPy's locator: CONDA_PREFIX, CUDA_PATH, CUDA_HOME).
    variables: Mapping[str, str] = field(default_factory=dict, compare=False)
    by_name: dict[str, str] = field(default_factory=dict, compare=False)  # the ldconfig cache's first file per name
    # Search orders by requester, for a placeholder name: TensorFlow 2.21's RUNPATH has 668 entries, and expanding
    # them again for each of the 8 names it dlopens took 50 ms.
    orders: dict[str | None, loader.SearchOrder] = field(default_factory=dict, compare=False)
    # The nvidia/* folders of each sys.path entry, listed once: every name looked for in the wheels reads them.
    wheel_folders: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def order(self, name: str, requester: LinkedObject | None) -> loader.SearchOrder:
        """The loader's search for ``name`` asked by ``requester``, each file tried once."""
        key = requester.path if requester else None
        if key not in self.orders:
            self.orders[key] = loader.search_order(_PLACEHOLDER, _elf(requester) if requester else None, self.process)
        template = self.orders[key]
        steps: dict[str, loader.Step] = {}
        for step in template.steps:
            if step.rule is loader.Rule.DEFAULT and (cached := self._cached(name)) is not None:
                steps.setdefault(cached.path, cached)
            path = step.path[: -len(_PLACEHOLDER)] + name
            steps.setdefault(path, dataclasses.replace(step, path=path))
        if (cached := self._cached(name)) is not None:
            steps.setdefault(cached.path, cached)  # no default folder: the cache comes last
        return loader.SearchOrder(name, tuple(steps.values()), template.dropped)

    def _cached(self, name: str) -> loader.Step | None:
        """The ldconfig cache's file for ``name``, which the placeholder's template cannot hold: the cache is
        looked up by name, between DT_RUNPATH and the default folders (the objects read here are not nodeflib)."""
        if not self.by_name:  # the cache's first file of each name, read once: a lookup per name is then O(1)
            for entry, found in self.process.ldconfig:
                self.by_name.setdefault(entry, found)
        path = self.by_name.get(name)
        if path is None:
            return None
        return loader.Step(
            path, posixpath.dirname(path), loader.Rule.LDCONFIG, loader.Rule.LDCONFIG.value, f"{name} => {path}"
        )


# A name no library has, whose search is the same as any plain soname's (no slash, never already loaded).
_PLACEHOLDER = "lib-pytest-cudnn-placeholder.so"


def cuda_major(build: FrameworkBuild) -> int | None:
    """The CUDA major the build was made for, from its build facts."""
    return major_of(build.cuda.value if build.cuda else None)


def own_folders(item: LinkedObject) -> tuple[str, ...]:
    """The folders of an object's DT_RPATH or DT_RUNPATH, $ORIGIN expanded, in order."""
    order = loader.search_order("lib.so", _elf(item), loader.Process())
    rules = (loader.Rule.RPATH, loader.Rule.RUNPATH)
    return tuple(dict.fromkeys(posixpath.normpath(step.folder) for step in order.steps if step.rule in rules))


def _elf(item: LinkedObject) -> loader.ElfObject:
    return loader.ElfObject(item.path, rpath=item.rpath, runpath=item.runpath)


def _searched(order: loader.SearchOrder) -> tuple[str, ...]:
    folders: list[str] = []
    for step in order.steps:
        folder = posixpath.normpath(step.folder) if step.folder else "."
        if step.rule is not loader.Rule.ALREADY_LOADED and folder not in folders:
            folders.append(folder)
    return tuple(folders)


def by_name(name: str, requester: LinkedObject | None, how: str, required: bool, search: Search) -> LoadedLibrary:
    """The loader's own search for ``name`` asked by ``requester`` (its DT_NEEDED, or its dlopen call). Found
    nowhere, ``shadowed`` lists the wheel copies on sys.path that its search never reaches."""
    order = search.order(name, requester)
    outcome = loader.resolve(order, search.exists)
    winner = outcome.winner
    if winner is None:
        unreached = tuple(_wheel_copies(search, name))
        holder = requester.path if requester else None
        return LoadedLibrary(name, holder, how, required, None, None, _searched(order), unreached)
    return LoadedLibrary(
        name=name,
        requester=requester.path if requester else None,
        how=how,
        required=required,
        path=posixpath.normpath(winner.path) if winner else None,
        found_by=winner.reason if winner else None,
        searched=_searched(order),
        shadowed=tuple(posixpath.normpath(step.path) for step in outcome.shadowed),
    )


def framework_object(build: FrameworkBuild, name: str) -> LinkedObject | None:
    """The framework's object file ``name`` (e.g. libtorch_cuda.so), when it was read."""
    return next((item for item in build.objects if os.path.basename(item.path) == name and not item.reason), None)


def _wheel_copies(search: Search, name: str) -> list[str]:
    """``<entry>/nvidia/<folder>/lib/<name>`` for every sys.path entry, in sys.path order (folders sorted)."""
    found = []
    for entry in search.site_path:
        nvidia = os.path.join(entry, "nvidia")
        if nvidia not in search.wheel_folders:
            try:
                search.wheel_folders[nvidia] = tuple(sorted(os.listdir(nvidia)))
            except (OSError, ValueError):
                search.wheel_folders[nvidia] = ()
        folders = search.wheel_folders[nvidia]
        found += [path for folder in folders if search.exists(path := os.path.join(nvidia, folder, "lib", name))]
    return found


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
            wheels = _wheel_copies(search, name)
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


def _first_module(site_path: Sequence[str], module: str) -> str | None:
    """nvidia.<module>.__path__[0]: the first sys.path entry with an nvidia/<module> folder."""
    for entry in site_path:
        folder = os.path.join(entry, "nvidia", module)
        if os.path.isdir(folder):
            return folder
    return None


def jax_loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    major = cuda_major(build)
    plugin = framework_object(build, "xla_cuda_plugin.so")
    loads: list[LoadedLibrary] = []
    # _load_nvidia_libraries goes through its whole list, CUDA 12 and 13 rows alike, whatever the plugin.
    for row in (row for row in LOADS if row.framework == "jax"):
        mine = row.cuda_major == major
        module = _first_module(search.site_path, row.module or "")
        path = os.path.join(module, "lib", row.soname) if module else None
        first = next((load for load in loads if load.name == row.soname and load.path), None)
        if first is not None and first.path == path and mine and row.required and not first.required:
            # One folder for both majors (nvidia/cudnn, nvidia/nccl): the other major's row came first, and this,
            # the plugin's own, says the copy is one it needs.
            loads[loads.index(first)] = dataclasses.replace(first, required=True)
            continue
        if first is not None:
            # The same soname from the other major's folder (libcusparse.so.12 of nvidia/cusparse and of
            # nvidia/cu13): a load by absolute path maps the second file too (another inode), but requests by
            # name keep getting the first.
            if path and path != first.path and search.exists(path):
                found_by = f"JAX's preload of nvidia.{row.module}: mapped too, unused (the copy loaded first serves)"
                loads.append(
                    LoadedLibrary(row.soname, None, "preload", False, path, found_by, (os.path.dirname(path),))
                )
            continue
        if not mine and not (path and search.exists(path)):
            continue
        required = row.required and mine
        if path and search.exists(path):
            later = [copy for copy in _wheel_copies(search, row.soname) if copy != path]
            loads.append(
                LoadedLibrary(
                    row.soname,
                    None,
                    "preload",
                    required,
                    path,
                    f"JAX's preload of nvidia.{row.module}",
                    (os.path.dirname(path),),
                    tuple(later),
                )
            )
        else:
            loads.append(by_name(row.soname, plugin, "dlopen", required, search))
    return tuple(sorted(loads, key=lambda load: not load.required))


def tensorflow_loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    major = cuda_major(build)
    framework = framework_object(build, "libtensorflow_framework.so.2")
    if framework is None or major is None:
        return ()
    names = [row.soname for row in LOADS if row.framework == "tensorflow" and row.cuda_major == major]
    cudnn_major = major_of(build.cudnn.value if build.cudnn else None)
    if cudnn_major is not None:
        names.append(f"libcudnn.so.{cudnn_major}")
    return tuple(by_name(name, framework, "dlopen", True, search) for name in names)
