"""TensorFlow, read from its files without importing it.

``import tensorflow`` costs seconds and hundreds of MB, may initialise CUDA and grab every GPU's memory
(tensorflow/tensorflow#21836). Everything needed is on disk: the distribution's metadata gives the version,
``tensorflow/python/platform/build_info.py`` (generated at build time by
tensorflow/tools/build_info/gen_build_info.py) gives the CUDA and cuDNN versions it was built for, and the
``nvidia/*/lib`` wheel folders beside it are where its RUNPATH points.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._base.versions import InvalidVersionValue, is_pep440, tensorflow_version_field
from ...compat.tensorflow import library_names
from ...environment import BuildFact, Distribution, FrameworkBuild, State, TensorFlow
from ...files import FileRefused, read_regular
from ...probe.discovery import FileSystem, Layout, RealFileSystem, wheel_library_dirs
from ...probe.distributions import (
    metadata_fields,
    metadata_header,
    metadata_of,
    nvidia_pins,
    package_site,
)

__all__ = ["BuildInfo", "InvalidBuildInfo", "parse_build_info", "probe_tensorflow", "tensorflow_build"]

# TensorFlow's shared object that dlopens the CUDA libraries: its DT_RUNPATH is the one that counts
# (docs/build-facts.md). libtensorflow_cc.so.2 holds the kernels, but its 1.1 GB are not read: the build
# info's compute capabilities list exactly what its fatbins hold (measured on 2.21), and a cold read of its
# fatbin headers alone took 193 ms.
FRAMEWORK_OBJECTS = ("libtensorflow_framework.so.2",)

# Distributions that install the top-level ``tensorflow`` package. Other names starting with "tensorflow"
# (tensorflow-estimator, tensorflow-io-gcs-filesystem, ...) install other packages and are told apart by
# their top_level.txt / RECORD, so this is only a first filter.
_PROVIDER_PREFIXES = ("tensorflow", "tf_nightly", "intel_tensorflow")

# Older releases named the fields with a _number suffix (cuda_version_number = '10.1').
_KEY_ALIASES = {"cuda_version_number": "cuda_version", "cudnn_version_number": "cudnn_version"}


class InvalidBuildInfo(ValueError):
    """A build_info.py that is not in any format TensorFlow generated."""


@dataclass(frozen=True)
class BuildInfo:
    format: str  # "module constants", "build_info dict", "build_info OrderedDict"
    fields: Mapping[str, Any]  # literal values, keys normalised (cuda_version_number -> cuda_version)


def parse_build_info(source: str, filename: str = "build_info.py") -> BuildInfo:
    """Read the literal fields of a build_info.py; nothing in it is executed.

    Accepted shapes: module-level constant assignments (``cuda_version_number = '10.1'``), and a
    ``build_info`` mapping written as a dict display, ``dict(...)`` or ``collections.OrderedDict([...])``.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise InvalidBuildInfo(f"{filename}: not valid Python ({error.__class__.__name__})") from None
    constants: dict[str, Any] = {}
    mapping: dict[str, Any] | None = None
    shape = "module constants"
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name == "build_info":
            mapping, shape = _mapping_literal(node.value, filename)
            continue
        try:
            constants[name] = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            continue  # not a literal (e.g. a function call): not build information
    fields = mapping if mapping is not None else constants
    if not fields:
        raise InvalidBuildInfo(f"{filename}: no build fields found")
    normal = {_KEY_ALIASES.get(key, key): value for key, value in fields.items()}
    return BuildInfo(format=shape, fields=normal)


def _mapping_literal(node: ast.expr, filename: str) -> tuple[dict[str, Any], str]:
    try:
        if isinstance(node, ast.Dict):
            return _string_keys(ast.literal_eval(node), filename), "build_info dict"
        if isinstance(node, ast.Call):
            callee = ast.unparse(node.func)
            if callee in ("collections.OrderedDict", "OrderedDict") and len(node.args) <= 1 and not node.keywords:
                pairs = ast.literal_eval(node.args[0]) if node.args else []
                return _string_keys(dict(pairs), filename), "build_info OrderedDict"
            if callee == "dict" and not node.args:
                return (
                    _string_keys({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}, filename),
                    "build_info dict",
                )
    except InvalidBuildInfo:
        raise
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        pass
    raise InvalidBuildInfo(f"{filename}: build_info is not a literal mapping")


def _string_keys(value: Any, filename: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise InvalidBuildInfo(f"{filename}: build_info keys are not strings")
    return value


def probe_tensorflow(layout: Layout, search_path: Sequence[str], fs: FileSystem | None = None) -> TensorFlow:
    """Locate the ``tensorflow`` package on ``search_path`` (normally sys.path) and read its build facts. ``fs``
    lists its site folder and the wheel folders beside it (and records those it cannot list)."""
    fs = fs or RealFileSystem()
    found = package_site("tensorflow", search_path)
    if found is None:
        return TensorFlow.not_read("no 'tensorflow' package on the Python path")
    location, site = found
    distribution, version = _distribution(site, fs)
    if version is not None and not is_pep440(version):
        # Replay (and xdist workers) accept PEP 440 versions only: keep the text out of the version field.
        tf = _read_files(layout, fs, location, distribution, None)
        said = f"its metadata gives version {version!r}, which is not a PEP 440 version"
        return dataclasses.replace(tf, reason="; ".join(part for part in (said, tf.reason) if part))
    return _read_files(layout, fs, location, distribution, version)


def _read_files(
    layout: Layout, fs: FileSystem, location: str, distribution: str | None, version: str | None
) -> TensorFlow:
    """TensorFlow's build facts from its files, once its package folder and distribution are known."""
    site = os.path.dirname(location)
    library_dirs = tuple(wheel_library_dirs(layout, [site], fs))
    build_info_path = os.path.join(location, "python", "platform", "build_info.py")
    known = {
        "distribution": distribution,
        "version": version,
        "location": location,
        "library_dirs": library_dirs,
    }
    try:
        source = read_regular(build_info_path, 1 << 20).decode("utf-8")
    except OSError as error:
        return TensorFlow.not_read(f"{build_info_path}: cannot be read ({error.strerror})", State.ERROR, **known)
    except FileRefused as refused:
        return TensorFlow.not_read(f"{build_info_path}: {refused}", State.ERROR, **known)
    except UnicodeDecodeError:
        return TensorFlow.not_read(f"{build_info_path}: not UTF-8 text", State.ERROR, **known)
    try:
        info = parse_build_info(source, build_info_path)
    except InvalidBuildInfo as error:
        return TensorFlow.not_read(str(error), State.ERROR, build_info_path=build_info_path, **known)
    return _from_build_info(layout, info, build_info_path, known)


def _from_build_info(layout: Layout, info: BuildInfo, path: str, known: dict[str, Any]) -> TensorFlow:
    fields = info.fields
    cuda_raw = _text(fields.get("cuda_version"))
    cudnn_raw = _text(fields.get("cudnn_version"))
    problems = []
    cuda = cudnn = None
    try:
        cuda = tensorflow_version_field(cuda_raw) if cuda_raw else None
    except InvalidVersionValue as error:
        problems.append(str(error))
    try:
        cudnn = tensorflow_version_field(cudnn_raw) if cudnn_raw else None
    except InvalidVersionValue as error:
        problems.append(str(error))
    is_cuda = fields.get("is_cuda_build")
    is_cuda_build = is_cuda if isinstance(is_cuda, bool) else (True if cuda_raw else None)
    capabilities = fields.get("cuda_compute_capabilities") or ()
    if isinstance(capabilities, str):
        capabilities = tuple(part for part in capabilities.replace(",", " ").split() if part)
    cudart_name, cudnn_name = library_names(layout.system, cuda, cudnn)
    # Windows builds also record DLL names. cudnn_dll_name is right in every release, but 2.5-2.10 record
    # cudart_dll_name 'cudart64_112.dll' while loading cudart64_110.dll (the CUDA 11 runtime DLL is named
    # 110 for every 11.x; tensorflow/tensorflow#50589, #57103, #61438), so the derived cudart name wins.
    cudart_name = cudart_name or _text(fields.get("cudart_dll_name"))
    cudnn_name = _text(fields.get("cudnn_dll_name")) or cudnn_name
    reason = "; ".join(problems) or None
    if reason is None and is_cuda_build is not False and not cuda_raw:
        reason = "its build_info records no CUDA version"
    elif reason is None and is_cuda_build and cudart_name is None:
        reason = f"its build_info records only CUDA {cuda_raw!r}, not which runtime soname it loads"
    return TensorFlow(
        state=State.FOUND,
        reason=reason,
        build_info_path=path,
        build_info_format=info.format,
        is_cuda_build=is_cuda_build,
        cuda_version_raw=cuda_raw,
        cuda_version=cuda,
        cudnn_version_raw=cudnn_raw,
        cudnn_version=cudnn,
        compute_capabilities=tuple(str(c) for c in capabilities),
        cudart_name=cudart_name,
        cudnn_name=cudnn_name,
        **known,
    )


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _distribution(site: str, fs: FileSystem) -> tuple[str | None, str | None]:
    """The installed distribution that owns ``site/tensorflow``, from its .dist-info / .egg-info metadata."""
    entries = fs.listdir(site) or ()
    for entry in sorted(entries):
        stem, _, suffix = entry.rpartition(".")
        if suffix not in ("dist-info", "egg-info") or not stem.lower().startswith(_PROVIDER_PREFIXES):
            continue
        folder = os.path.join(site, entry)
        if not _provides_tensorflow(folder):
            continue
        for filename in ("METADATA", "PKG-INFO"):
            name, version = metadata_header(os.path.join(folder, filename))
            if name:
                return name, version
    return None, None


def _provides_tensorflow(folder: str) -> bool:
    try:
        return (
            "tensorflow"
            in read_regular(os.path.join(folder, "top_level.txt"), 65536, whole=False)
            .decode("utf-8", "replace")
            .split()
        )
    except (OSError, FileRefused):
        pass
    try:
        record = read_regular(os.path.join(folder, "RECORD"), 8 << 20, whole=False).decode("utf-8", "replace")
    except (OSError, FileRefused):
        return False
    return any(line.startswith("tensorflow/") for line in record.splitlines())


def tensorflow_build(tf: TensorFlow, installed: Sequence[Distribution] = ()) -> FrameworkBuild:
    """TensorFlow in the shape every framework shares: its build facts, pins and shared objects."""
    location = tf.location
    if tf.state is State.ABSENT or location is None:
        return FrameworkBuild("tensorflow", State.ABSENT, tf.reason, None, None, None, None, None, None, ())
    site = os.path.dirname(location)
    metadata = metadata_of(site, tf.distribution) if tf.distribution else None
    requires = metadata_fields(metadata).get("requires-dist", []) if metadata else []
    source = tf.build_info_path or location
    cuda = BuildFact(tf.cuda_version, source, f"cuda_version = {tf.cuda_version_raw!r}") if tf.cuda_version else None
    cudnn = (
        BuildFact(tf.cudnn_version, source, f"cudnn_version = {tf.cudnn_version_raw!r}") if tf.cudnn_version else None
    )
    from ...probe.objects import read_objects  # here, once found: a host without it never imports the ELF reader

    # Listed even when missing, where its RECORD says it was installed: without it `import tensorflow` fails.
    objects = read_objects(location, FRAMEWORK_OBJECTS, metadata) if tf.is_cuda_build else ()
    return FrameworkBuild(
        "tensorflow",
        tf.state,
        tf.reason,
        tf.distribution,
        tf.version,
        location,
        tf.is_cuda_build,
        cuda,
        cudnn,
        nvidia_pins(requires, site, installed),
        objects,
    )
