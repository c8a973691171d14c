"""The CUDA libraries JAX loads: its CUDA plugin's _load_nvidia_libraries preloads each from its nvidia wheel by
absolute path (compat/loading.py's rows), and XLA dlopens by name what was not preloaded."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from ...compat.loading import LOADS
from ...environment import FrameworkBuild, LoadedLibrary
from ...probe.loads import Search, by_name, cuda_major, framework_object, wheel_copies

__all__ = ["jax_loads"]


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
            later = [copy for copy in wheel_copies(search, row.soname) if copy != path]
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
