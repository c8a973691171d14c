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
copy also serves the DT_NEEDED of its objects. The search itself is :mod:`pytest_cudnn._base.loader`, glibc's rules.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .._base import loader
from .._base.versions import major_of
from ..environment import FrameworkBuild, LinkedObject, LoadedLibrary

__all__ = [
    "CUDA_LIBRARY",
    "Search",
    "by_name",
    "cuda_major",
    "framework_object",
    "own_folders",
    "wheel_copies",
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
        unreached = tuple(wheel_copies(search, name))
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


def wheel_copies(search: Search, name: str) -> list[str]:
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
