"""The installed Python distributions that matter to the GPU stack, read from their ``*.dist-info`` metadata.

A wheel's version is the one pins are written against, and it is not what the library reports: the
``nvidia-cudnn-cu12`` 9.3.0.75 wheel ships a cuDNN that says 9.3.0, and TensorFlow's ``[and-cuda]`` extra pins
``nvidia-cudnn-cu12==9.3.0.75`` (field notes). Only the header of each METADATA file is read (core metadata:
the fields before the first blank line; the description follows it), and only for distribution folders whose
name already matches, so the cost is one folder listing per site folder.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._base.versions import canonical_name
from ..environment import Distribution, Pin
from ..files import FileRefused, read_regular
from .discovery import FileSystem, RealFileSystem
from .facts import maybe, maybe_decoded, remembered

__all__ = ["installed_distributions", "metadata_header", "package_folders", "package_site"]

_HEADER_BYTES = 65536  # a METADATA header is a few hundred bytes; its long description follows the blank line


def metadata_fields(path: str) -> dict[str, list[str]]:
    """Every field of the header of a METADATA (or PKG-INFO) file, by lower-case name, values as written and in
    order (Requires-Dist repeats); empty when it cannot be read. Reading stops at the first blank line: the long
    description follows it."""
    try:
        text = read_regular(path, _HEADER_BYTES, whole=False).decode("utf-8", "replace")
    except (OSError, FileRefused):
        return {}
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        if line[:1].isspace():
            continue  # a folded continuation line
        field, _, value = line.partition(":")
        fields.setdefault(field.strip().lower(), []).append(value.strip())
    return fields


def metadata_header(path: str) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the header of a METADATA (or PKG-INFO) file, as written; (None, None) when
    it cannot be read."""
    fields = metadata_fields(path)
    name = next((value for value in fields.get("name", []) if value), None)
    version = next((value for value in fields.get("version", []) if value), None)
    return name, version


def metadata_of(site: str, name: str) -> str | None:
    """The METADATA path of distribution ``name`` (PEP 503 names compare equal) installed in ``site``."""
    try:
        entries = sorted(os.listdir(site))
    except OSError:
        return None
    wanted = canonical_name(name)
    for entry in entries:
        stem, _, suffix = entry.rpartition(".")
        if suffix == "dist-info" and canonical_name(stem.rpartition("-")[0] or stem) == wanted:
            return os.path.join(site, entry, "METADATA")
    return None


_PINNED = re.compile(r"(nvidia-|cuda-toolkit)", re.I)


def nvidia_pins(requires: Sequence[str], site: str, installed: Sequence[Distribution]) -> tuple[Pin, ...]:
    """The Requires-Dist lines on NVIDIA wheels (``nvidia-*``, ``cuda-toolkit``), each with the version of that
    distribution installed in ``site``, the framework's own folder (None when it is not there)."""
    here = {canonical_name(d.name): d.version for d in installed if d.location.rstrip("/") == site.rstrip("/")}
    pins = []
    for line in requires:
        parsed = requirement_of(line)
        if parsed is not None and _PINNED.match(parsed[0]):
            pins.append(Pin(line, parsed[0], parsed[1], here.get(canonical_name(parsed[0]))))
    return tuple(pins)


def requirement_of(line: str) -> tuple[str, str] | None:
    """The name and version specifier of a Requires-Dist line, as pip reads it; None for a line that is none.
    A pure function of the text: kept between runs under the line (:mod:`.facts`), so that a warm probe
    does not import packaging's requirement parser (31 ms, measured 2026-11-29)."""
    import packaging  # its version is part of the key: another packaging may read a line otherwise

    key = f"{packaging.__version__}\0{line}"
    return remembered("requirement", key, [], lambda: _parsed(line), maybe(list), maybe_decoded(_decoded_requirement))


def _parsed(line: str) -> tuple[str, str] | None:
    from packaging.requirements import Requirement  # only where a framework pins wheels

    try:
        requirement = Requirement(line)
    except ValueError:  # InvalidRequirement, or a number beyond int()'s digit limit
        return None
    return requirement.name, str(requirement.specifier)


def _decoded_requirement(parsed: Any) -> tuple[str, str]:
    name, specifier = parsed
    if not isinstance(name, str) or not isinstance(specifier, str):
        raise TypeError("not a requirement")
    return name, specifier


def installed_distributions(
    site_dirs: Iterable[str], fs: FileSystem | None = None, *, wanted: Callable[[str], bool]
) -> tuple[Distribution, ...]:
    """The distributions installed in ``site_dirs`` (absolute folders, in import order) whose names are ``wanted``
    (the registry's :func:`pytest_cudnn.frameworks.relevant`), each with the folder that holds its dist-info. A
    distribution installed in two folders is listed twice: both are there, the first one is imported."""
    fs = fs or RealFileSystem()
    found: list[Distribution] = []
    seen: set[str] = set()
    for site in site_dirs:
        folder = os.path.abspath(site)
        if folder in seen:
            continue
        seen.add(folder)
        for entry in sorted(fs.listdir(folder) or ()):
            # <name>-<version>.dist-info (the wheel spec escapes - as _ in both; old tools left it in the name,
            # never in the version): the part before the last - names it, enough to skip the rest unopened.
            if not entry.endswith(".dist-info") or not wanted(entry[: -len(".dist-info")].rpartition("-")[0]):
                continue
            name, version = metadata_header(os.path.join(folder, entry, "METADATA"))
            if name and version and wanted(name):
                found.append(Distribution(name=name, version=version, location=folder))
    return tuple(found)


def package_folders(name: str, search_path: Sequence[str]) -> list[str]:
    """The folders of package ``name`` on ``search_path`` (normally sys.path), in import order (a namespace package
    has several); found as the import system would, without importing anything."""
    try:
        spec = importlib.machinery.PathFinder.find_spec(name, [p for p in search_path if p])
    except (ImportError, OSError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [os.path.abspath(folder) for folder in spec.submodule_search_locations]


def package_site(name: str, search_path: Sequence[str]) -> tuple[str, str] | None:
    """Where package ``name`` is imported from (its first folder) and the site folder holding it; None where it is
    not on ``search_path``."""
    folders = package_folders(name, search_path)
    return (folders[0], os.path.dirname(folders[0])) if folders else None
