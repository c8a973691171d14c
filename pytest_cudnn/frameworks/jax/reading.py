"""JAX as its files describe it, never imported: the build the diagnosis judges and every view shows.

Where each fact lives (docs/build-facts.md, measured with jax[cuda12] 0.10.2):
* ``jax`` and ``jaxlib`` are CPU-only; GPU support is a PJRT plugin, ``jax_plugins/xla_cuda12/`` (distribution
  ``jax-cuda12-pjrt``, with ``xla_cuda_plugin.so``) plus ``jax_cuda12_plugin`` (distribution
  ``jax-cuda12-plugin``). The plugin's folder name says the CUDA major it was built for.
* The exact CUDA and cuDNN build versions are in no text file: only the compiled ``jax_cuda12_plugin._versions``
  answers them (``cuda_runtime_build_version()`` 12090, ``cudnn_build_version()`` 90800). They are read by loading
  that module in the probe's child (:func:`versions_job`, bounded like every vendor call) and joined to the build
  by :func:`with_versions`; until that answer comes, or where the plugin has no such module, they are unknown.
* ``xla_cuda_plugin.so``: DT_RPATH to the nvidia wheels, and the SASS and PTX of JAX's own kernels (most are
  compiled at run time by XLA, so this list is a floor), read from headers only.
* The plugins' METADATA pin the nvidia wheels as lower bounds (``nvidia-cudnn-cu12>=9.8,<10``).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...environment import BuildFact, Distribution, FrameworkBuild, Pin, State
from ...native.protocol import JAX_VERSIONS
from ...probe.distributions import metadata_fields, metadata_of, nvidia_pins, package_folders, package_site

if TYPE_CHECKING:
    from ...native.protocol import JaxVersionsAnswer, JaxVersionsJob

__all__ = ["probe_jax", "versions_job", "with_versions"]

_PLUGIN = re.compile(r"xla_cuda(\d{1,3})")


def _plugins(search_path: Sequence[str]) -> list[tuple[str, str]]:
    """(CUDA major, folder) of every CUDA PJRT plugin under the ``jax_plugins`` namespace, in import order."""
    found = []
    for namespace in package_folders("jax_plugins", search_path):
        try:
            entries = sorted(os.listdir(namespace))
        except OSError:
            continue
        for entry in entries:
            match = _PLUGIN.fullmatch(entry)
            if match and os.path.isdir(os.path.join(namespace, entry)):
                found.append((match.group(1), os.path.join(namespace, entry)))
    return found


def probe_jax(search_path: Sequence[str], installed: Sequence[Distribution] = ()) -> FrameworkBuild:
    """Locate ``jax`` and its CUDA plugin on ``search_path`` (normally sys.path) and read what their files say."""
    found = package_site("jax", search_path)
    if found is None:
        return FrameworkBuild.absent("jax")
    location, site = found
    metadata = metadata_of(site, "jax")
    fields = metadata_fields(metadata) if metadata else {}
    distribution = next(iter(fields.get("name", [])), None)
    version = next(iter(fields.get("version", [])), None)
    plugins = _plugins(search_path)
    if not plugins:
        return FrameworkBuild("jax", State.FOUND, None, distribution, version, location, False, None, None, ())
    major, plugin = plugins[0]
    plugin_site = os.path.dirname(os.path.dirname(plugin))
    pins: list[Pin] = []
    for name in (f"jax-cuda{major}-plugin", f"jax-cuda{major}-pjrt"):
        path = metadata_of(plugin_site, name)
        if path:
            pins += nvidia_pins(metadata_fields(path).get("requires-dist", []), plugin_site, installed)
    cuda = BuildFact(major, plugin, f"the plugin's folder name, xla_cuda{major}: built for CUDA {major}")
    reason = (
        f"its exact CUDA and cuDNN build versions are only in the compiled jax_cuda{major}_plugin._versions, "
        "which was not read here"
    )
    if len(plugins) > 1:
        reason += "; several CUDA plugins are installed: " + ", ".join(folder for _, folder in plugins)
    cuda_object = os.path.join(plugin, "xla_cuda_plugin.so")
    from ...probe.objects import read_object  # here, once found: a host without it never imports the ELF reader

    objects = (read_object(cuda_object),) if os.path.isfile(cuda_object) else ()
    return FrameworkBuild(
        "jax", State.FOUND, reason, distribution, version, location, True, cuda, None, tuple(pins), objects
    )


def versions_job(build: FrameworkBuild) -> JaxVersionsJob | None:
    """The probe child's job that reads ``jax_cudaNN_plugin._versions``, when the plugin has that module."""
    if build.cuda is None or not build.is_cuda_build:
        return None
    major = build.cuda.value.split(".")[0]
    plugin_site = os.path.dirname(os.path.dirname(build.cuda.source))
    package = f"jax_cuda{major}_plugin"
    found = sorted(glob.glob(os.path.join(glob.escape(os.path.join(plugin_site, package)), "_versions.*so")))
    if not found:
        return None
    return {"kind": JAX_VERSIONS, "path": found[0], "module": f"{package}._versions"}


def with_versions(build: FrameworkBuild, job: JaxVersionsJob, answer: JaxVersionsAnswer) -> FrameworkBuild:
    """``build`` with the CUDA and cuDNN versions the compiled module answered (or why it could not)."""
    cuda, cudnn = answer.get("cuda_runtime_build_version"), answer.get("cudnn_build_version")
    how = f"{job['module']}.%s() = %d, read in the probe's child process"
    if cuda is None or cudnn is None or answer.get("error"):
        said = answer.get("error") or "it gave no versions"
        return dataclasses.replace(build, reason=f"{job['module']} could not be read: {said}")
    cuda_fact = BuildFact(_decode(cuda, 1000, 10), job["path"], how % ("cuda_runtime_build_version", cuda))
    cudnn_fact = BuildFact(_decode_cudnn(cudnn), job["path"], how % ("cudnn_build_version", cudnn))
    return dataclasses.replace(build, cuda=cuda_fact, cudnn=cudnn_fact, reason=None)


def _decode(value: int, major: int, minor: int) -> str:
    """12090 -> '12.9' (CUDA's major * 1000 + minor * 10)."""
    return f"{value // major}.{value % major // minor}"


def _decode_cudnn(value: int) -> str:
    """90800 -> '9.8.0' (cuDNN 9: major * 10000 + minor * 100 + patch; 8: major * 1000 + minor * 100 + patch)."""
    if value >= 90000:
        return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"
    return f"{value // 1000}.{value % 1000 // 100}.{value % 100}"
