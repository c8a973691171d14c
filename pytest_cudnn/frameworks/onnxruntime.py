"""ONNX Runtime (``onnxruntime-gpu``), read from its files and never imported.

Where each fact lives (measured in the onnxruntime-gpu 1.31.1 wheel; source "ort-wheel-1.31.1"):
* ``onnxruntime/capi/build_and_package_info.py``: ``package_name``, ``__version__`` and, in a CUDA build,
  ``cuda_version = '13.0'``; a CPU build (``onnxruntime``) has no ``cuda_version`` and no CUDA provider. Read with
  :mod:`ast`, never executed.
* No file names the cuDNN it was built with. Its ``cudnn`` extra pins the cuDNN wheel (``nvidia-cudnn-cu13~=9.0``):
  the major is read there, else from the published table (:mod:`pytest_cudnn.compat.onnxruntime`).
* The CUDA execution provider, ``capi/libonnxruntime_providers_cuda.so``, is loaded by absolute path when a session
  asks for it. Its DT_NEEDED names the CUDA libraries (libcublasLt, libcublas, libcurand, libcudart) and it has no
  RPATH or RUNPATH, so they are searched as a plain program's are: LD_LIBRARY_PATH, the ldconfig cache, the default
  folders, never the nvidia wheels beside it. cuDNN (``libcudnn.so.<major>``) is dlopened by name from it later.
* So on a pip-only host the provider loads only once those libraries are already in the process:
  ``onnxruntime.preload_dlls()`` loads them by path from the nvidia wheels in its own site-packages folder, and a
  framework imported first that loaded the same sonames (torch) hands them over (source "ort-preload-dlls").
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .._base.versions import major_of
from .base import BuildLine, CudnnProblem, Framework, GpuFloor, Reading, Unloadable, display_of, maps_at_import

if TYPE_CHECKING:
    from packaging.version import Version

    from ..environment import BuildFact, Cudnn, Environment, FrameworkBuild, LinkedObject, LoadedLibrary
    from ..probe.loads import Search

__all__ = ["FRAMEWORK", "PRELOAD", "PROVIDER", "build_info"]

PROVIDER = "libonnxruntime_providers_cuda.so"
_DISTRIBUTIONS = ("onnxruntime-gpu", "onnxruntime")
_INFO = os.path.join("capi", "build_and_package_info.py")
# Compiled where used (re caches it): the registry is imported on every run.
_CUDNN_PIN = r"nvidia-cudnn-cu\d{1,3}\s*(?:~=|==|>=)\s*(\d{1,3})(?:\.|\s|;|$)"


def build_info(text: str) -> dict[str, str]:
    """The string constants a ``build_and_package_info.py`` assigns at its top level, read without running it.

    >>> build_info("package_name = 'onnxruntime-gpu'\\n__version__ = '1.31.1'\\ncuda_version = '13.0'\\n")
    {'package_name': 'onnxruntime-gpu', '__version__': '1.31.1', 'cuda_version': '13.0'}
    """
    import ast  # here: the registry is imported on every run, this only where onnxruntime is installed

    found: dict[str, str] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _read(reading: Reading) -> FrameworkBuild:
    from .._base.versions import is_pep440
    from ..environment import BuildFact, FrameworkBuild, State
    from ..files import FileRefused, read_regular
    from ..probe.distributions import metadata_fields, metadata_of, nvidia_pins, package_site

    found = package_site("onnxruntime", reading.site_path)
    if found is None:
        return FrameworkBuild.absent("onnxruntime")
    location, site = found
    metadata = next((path for name in _DISTRIBUTIONS if (path := metadata_of(site, name))), None)
    fields = metadata_fields(metadata) if metadata else {}
    distribution = next(iter(fields.get("name", [])), None)
    version = next(iter(fields.get("version", [])), None)
    problems: list[str] = []
    info_path = os.path.join(location, _INFO)
    info: dict[str, str] = {}
    try:
        info = build_info(read_regular(info_path, 1 << 16).decode("utf-8", "replace"))
    except FileNotFoundError:
        problems.append(f"{info_path} is missing")
    except (OSError, FileRefused, SyntaxError, ValueError, RecursionError, MemoryError) as error:
        problems.append(f"{info_path} cannot be read: {error}")
    # The CPU and GPU packages share the onnxruntime/ folder: with both installed, the files are the last one's.
    both = [name for name in _DISTRIBUTIONS if metadata_of(site, name)]
    if len(both) > 1:
        problems.append(
            f"both {' and '.join(both)} are installed in {site}; they share one onnxruntime folder, whose files are "
            f"{info.get('package_name') or 'unknown'}'s: uninstall both, then install onnxruntime-gpu alone"
        )
    if info.get("package_name") and info.get("__version__"):  # the files present say whose they are
        distribution, version = info["package_name"], info["__version__"]
    version = version or info.get("__version__")
    distribution = distribution or info.get("package_name")
    provider = os.path.join(location, "capi", PROVIDER)
    has_provider = os.path.isfile(provider)
    cuda_text = info.get("cuda_version", "")
    cuda = BuildFact(cuda_text, info_path, f"cuda_version = {cuda_text!r}") if cuda_text else None
    is_cuda = True if cuda is not None or has_provider else (False if info else None)
    if is_cuda is False:
        problems.append(f"{_INFO} has no cuda_version and capi/ has no {PROVIDER}")
    objects: tuple[LinkedObject, ...] = ()
    if has_provider:
        from ..probe.objects import read_object  # here, once found: a host without it never imports the ELF reader

        objects = (read_object(provider),)
    if is_cuda and cuda is None and not info and version:  # a PyPI wheel before 1.21 records none (compat audit D2)
        # The provider's own DT_NEEDED says which CUDA it was built for where the release alone cannot: the CUDA
        # 11.8 builds of 1.19 and 1.20 came from another feed than PyPI's CUDA 12 default.
        cuda = _needed_cuda(objects[0] if objects else None) or _pypi_cuda(version, metadata or location)
        cuda_text = cuda.value if cuda is not None and cuda.source == provider else ""
    requires = fields.get("requires-dist", [])
    where = provider if cuda is not None and cuda.source == provider else info_path
    cudnn = _cudnn(info, where, requires, metadata, version, cuda_text) if is_cuda else None
    if is_cuda and cudnn is None:
        problems.append("no file names the cuDNN it was built with, and no published row does")
    return FrameworkBuild(
        "onnxruntime",
        State.FOUND,
        "; ".join(problems) or None,
        distribution,
        version if version and is_pep440(version) else None,
        location,
        is_cuda,
        cuda,
        cudnn,
        nvidia_pins(requires, site, reading.distributions) if requires else (),
        objects,
    )


def _cudnn(
    info: dict[str, str],
    info_path: str,
    requires: list[str],
    metadata: str | None,
    version: str | None,
    cuda: str,
) -> BuildFact | None:
    """The cuDNN it was built with: its build info if it ever says, else the major its ``cudnn`` extra pins, else
    the published row for its release and CUDA major."""
    from ..compat import onnxruntime as ort_facts
    from ..environment import BuildFact

    if info.get("cudnn_version"):
        return BuildFact(info["cudnn_version"], info_path, f"cudnn_version = {info['cudnn_version']!r}")
    for line in requires:
        match = re.search(_CUDNN_PIN, line, re.I)
        if match and metadata and "cudnn" in line.partition(";")[2]:
            return BuildFact(match.group(1), metadata, f"its 'cudnn' extra pins {line.partition(';')[0].strip()}")
    cuda_major = major_of(cuda)
    if not info and not cuda and version:  # a PyPI wheel before 1.21: the release alone picks its row
        row = ort_facts.pypi_release(version)
        if row is None:
            return None
        how = f"the published table for {version}'s PyPI build: CUDA {row.cuda}, cuDNN {row.cudnn}.x ({row.source})"
        return BuildFact(str(row.cudnn), metadata or info_path, how)
    row = ort_facts.release(version, cuda_major) if version and cuda_major is not None else None
    if row is None:
        return None
    how = f"ONNX Runtime {row.first}-{row.last} for CUDA {row.cuda} is built with cuDNN {row.cudnn}.x ({row.source})"
    return BuildFact(str(row.cudnn), info_path, how)


def _needed_cuda(provider: LinkedObject | None) -> BuildFact | None:
    """The CUDA major the provider links its runtime for: libcudart.so.11.0 is CUDA 11 ("11.8": ONNX Runtime's
    CUDA 11 builds are 11.8 from 1.15), libcudart.so.12 CUDA 12; None where it names neither."""
    from ..environment import BuildFact

    if provider is None:
        return None
    for name in provider.needed:
        if name in _CUDART_CUDA:
            return BuildFact(_CUDART_CUDA[name], provider.path, f"its DT_NEEDED names {name}")
    return None


# The runtime soname of each CUDA major the pre-1.21 builds were made for (the CUDA 11 soname keeps its minor 0):
# the ONNX Runtime table's "11.8" and "12.x" ("ort-cuda-ep-requirements").
_CUDART_CUDA = {"libcudart.so.11.0": "11.8", "libcudart.so.12": "12"}


def _pypi_cuda(version: str, where: str) -> BuildFact | None:
    """The CUDA of ``version``'s PyPI build where its wheel records none (1.15 to 1.20, no build_and_package_info.py):
    the published table's, "11.8", or "12" for its "12.x" (any CUDA 12, by minor version compatibility)."""
    from ..compat import onnxruntime as ort_facts
    from ..environment import BuildFact

    row = ort_facts.pypi_release(version)
    if row is None:
        return None
    how = f"the published table for {version}'s PyPI build: CUDA {row.cuda} ({row.source})"
    return BuildFact(row.cuda.removesuffix(".x"), where, how)


def _loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    from ..probe.loads import CUDA_LIBRARY, by_name, framework_object

    provider = framework_object(build, PROVIDER)
    if provider is None:
        return ()
    cuda = [name for name in provider.needed if CUDA_LIBRARY.fullmatch(name)]
    loads = [by_name(name, provider, "DT_NEEDED", True, search) for name in cuda]
    major = major_of(build.cudnn.value if build.cudnn else None)
    if major is not None:
        loads.append(by_name(f"libcudnn.so.{major}", provider, "dlopen", True, search))
    return tuple(loads)


def _cudnn_problem(
    build: FrameworkBuild, cudnn: Cudnn, lowest: Version | None, gpus: int, skipped: bool
) -> CudnnProblem | None:
    from ..compat import onnxruntime as ort_facts

    major = major_of(build.cudnn.value if build.cudnn else None)
    if major is None or not cudnn.version or ort_facts.accepts_cudnn(major, cudnn.version):
        return None
    problem = f"ONNX Runtime built with cuDNN {major}.x cannot use cuDNN {cudnn.version}"
    return CudnnProblem(problem, "ort-cuda-ep-requirements")


def _has_preload(version: str | None) -> bool:
    """Whether this release has ``onnxruntime.preload_dlls()``: 1.21.0 and later (microsoft/onnxruntime#23674;
    ONNX Runtime's CUDA EP docs, 'Preload DLLs': 'Since version 1.21.0')."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version or "").release[:2] >= (1, 21)
    except InvalidVersion:
        return False


def _unloadable(env: Environment, build: FrameworkBuild, load: LoadedLibrary) -> Unloadable | None:
    """The libraries the provider's plain search cannot find, and which of its ways would put them in the process:
    one statement for all of them (one preload_dlls() call loads them all), so that the diagnosis makes one finding
    of one cause."""

    missing = [item for item in build.loads if item.required and item.path is None]
    site = os.path.dirname(build.location or "")
    wheels = os.path.join(site, "nvidia") + os.sep if site else None
    # Each missing library's copy in the nvidia wheels, which preload_dlls() loads by path.
    mine = [next((p for p in item.shadowed if wheels and p.startswith(wheels)), None) for item in missing]
    donors = [
        other
        for other in env.frameworks
        if other.name != build.name
        and other.is_cuda_build is not False
        and maps_at_import(other.name)
        # Whatever it maps at import, preloads included, is in the process once it is imported.
        and all(any(item.name == need.name and item.path for item in other.loads) for need in missing)
    ]
    preload = _has_preload(build.version) and all(mine)  # preload_dlls() arrived in 1.21.0 ("ort-preload-dlls")
    it = "they load" if len(missing) > 1 else "it loads"
    ways = [f"after {PRELOAD} (it loads them from the nvidia wheels)"] if preload else []
    them = "them" if len(missing) > 1 else "it"
    ways += [f"after {display_of(other.name)} loaded {them} (import {other.name} first)" for other in donors]
    shadowed = [path for item in missing for path in (item.shadowed[:1] or [])]
    folders = ":".join(dict.fromkeys(os.path.dirname(path) for path in shadowed))
    fixes = [f"call {PRELOAD} before the first CUDA session" if preload else ""]
    fixes += [f"import {other.name} before onnxruntime" for other in donors]
    fixes.append(f"add {folders} to LD_LIBRARY_PATH" if folders else f"install {load.name} where the loader finds it")
    said = (
        f" ({PROVIDER} has no RUNPATH; {it} only " + " or ".join(ways) + ")"
        if ways
        else f" ({PROVIDER} has no RUNPATH: LD_LIBRARY_PATH, the ldconfig cache and the default folders are searched)"
    )
    return Unloadable(said, ", or ".join(fix for fix in fixes if fix))


def _preloaded(build: FrameworkBuild) -> FrameworkBuild | None:
    """The build as ``onnxruntime.preload_dlls()`` leaves it: each library the provider's search cannot find, loaded
    from the copy in the nvidia wheels of its own site-packages folder (it loads by absolute path from there,
    "ort-preload-dlls"). None where it changes nothing: no such call (before 1.21), or no missing library with a
    copy there. A library the search already finds elsewhere stays as found: the wheels' copy of it is not read."""
    import dataclasses

    if not _has_preload(build.version) or not build.location:
        return None
    wheels = os.path.join(os.path.dirname(build.location), "nvidia") + os.sep
    found_by = f"{PRELOAD} (by path, from the nvidia wheels)"
    loads = []
    for load in build.loads:
        copy = next((path for path in load.shadowed if path.startswith(wheels)), None) if load.path is None else None
        loads.append(load if copy is None else dataclasses.replace(load, path=copy, found_by=found_by))
    return dataclasses.replace(build, loads=tuple(loads)) if tuple(loads) != build.loads else None


PRELOAD = "onnxruntime.preload_dlls()"


def _pypi_lines() -> tuple[BuildLine, ...]:
    """``onnxruntime-gpu``'s PyPI builds with the ``cuda`` and ``cudnn`` extras, newest first (source
    "ort-wheels-cuda-versions", through :data:`pytest_cudnn.compat.onnxruntime.PYPI_BUILDS`)."""
    from ..compat.onnxruntime import PYPI_BUILDS

    return tuple(BuildLine(row.first, row.last, row.cuda) for row in reversed(PYPI_BUILDS))


def _gpu_floor(build: FrameworkBuild) -> GpuFloor | None:
    """A build for CUDA 13 runs on compute capability 7.5 and newer: CUDA 13 removed Maxwell, Pascal and Volta
    ("cuda-13-arch-removal"). The fix is the last CUDA 12 build on PyPI ("ort-wheels-cuda-versions": 1.26.0, CUDA
    12.8), which serves the GPUs CUDA 12.8 targets."""
    from ..compat import cuda as cuda_facts
    from ..compat.onnxruntime import PYPI_BUILDS

    major = major_of(build.cuda.value if build.cuda else None)
    floor = cuda_facts.supported_capabilities(build.cuda.value) if build.cuda and major == 13 else None
    if major is None or floor is None:
        return None
    last_12 = next((row for row in reversed(PYPI_BUILDS) if major_of(row.cuda) == major - 1), None)
    first_13 = next((row for row in PYPI_BUILDS if major_of(row.cuda) == major), None)
    older = cuda_facts.supported_capabilities(last_12.cuda) if last_12 is not None else None
    if last_12 is None or first_13 is None or older is None:
        return GpuFloor(floor.oldest, floor.source, major)
    below = ".".join(first_13.first.split(".")[:2])
    fix = (
        f"install its last CUDA {major - 1} build, which supports it: "
        f'pip install "onnxruntime-gpu[cuda,cudnn]<{below}" ({last_12.last} is built for CUDA {last_12.cuda}, '
        f"{last_12.source})"
    )
    return GpuFloor(floor.oldest, floor.source, major, fix, older.oldest)


FRAMEWORK = Framework(
    name="onnxruntime",
    display="ONNX Runtime",
    distributions="onnxruntime(?:-gpu)?",
    marker_help="requires_onnxruntime(spec=None, *, gpu=True, preload_dlls=False): skip unless ONNX Runtime is "
    "installed within spec and, with gpu=True, its CUDA execution provider can run GPU work here (a CPU-only "
    "onnxruntime cannot); with preload_dlls=True, as it can once the test has called onnxruntime.preload_dlls().",
    install_hint="pip install 'onnxruntime-gpu[cuda,cudnn]' (the 'onnxruntime' package is CPU-only)",
    read=_read,
    loads=_loads,
    cudnn_problem=_cudnn_problem,
    unloadable=_unloadable,
    preload=(PRELOAD, _preloaded),
    pypi=("onnxruntime-gpu[cuda,cudnn]", _pypi_lines),
    gpu_floor=_gpu_floor,
)
