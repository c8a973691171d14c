"""A framework's CUDA-using shared object, read from its headers (what it needs, where it searches, its GPU code).

The dynamic section (DT_NEEDED, DT_RPATH, DT_RUNPATH) and the GPU code of the ``.nv_fatbin`` section are read
with positioned reads of headers only (:mod:`pytest_cudnn.binaries`): a 500 MB libtorch_cuda.so is neither loaded
nor mapped.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable
from typing import Any

from ..binaries.elf import read_dynamic
from ..binaries.fatbin import read_gpu_code
from ..environment import OBJECT_MISSING, LinkedObject, State
from .facts import optional_text, remembered, texts

__all__ = ["read_object", "read_objects", "recorded_files"]


def read_objects(location: str, names: Iterable[str], metadata: str | None = None) -> tuple[LinkedObject, ...]:
    """Each of ``names`` (paths relative to the package folder ``location``) read; one that is not a file there is
    listed too, with the reason :data:`~pytest_cudnn.environment.OBJECT_MISSING` (its import cannot load it).
    A missing object counts only where the RECORD beside ``metadata`` (its distribution's METADATA file) says it was
    installed: a build that never had it is not broken, and without a RECORD nothing says it had. That RECORD
    (torch's lists about 15,000 files) is read only for an object that is missing."""
    found = []
    package = os.path.basename(location.rstrip(os.sep))
    installed: set[str] | None = None
    for name in names:
        path = os.path.join(location, name)
        if os.path.isfile(path):
            found.append(read_object(path))
            continue
        if installed is None:
            installed = recorded_files(metadata)
        if posixpath.join(package, name) in installed:
            found.append(LinkedObject(path, None, (), None, None, (), (), OBJECT_MISSING))
    return tuple(found)


def recorded_files(metadata: str | None) -> set[str]:
    """The files a distribution's RECORD lists, relative to its site folder (``metadata``: its METADATA file); none
    without a RECORD (a copy planted by hand, or one whose installer kept none)."""
    if metadata is None:
        return set()
    from .wheels import read_record

    read = read_record(metadata, whole=False)
    return {path for path, _, _ in read[1]} if read is not None else set()


def read_object(path: str) -> LinkedObject:
    """What the loader and the GPU will find in ``path``; what could not be read is said in ``reason``. Kept
    between runs under the file's identity (:mod:`.facts`): a 1 GB object's fatbin headers are read once."""
    return remembered("elf-object", path, [path], lambda: _read_object(path), _encoded_object, _object_decoder(path))


def _read_object(path: str) -> LinkedObject:
    dynamic = read_dynamic(path)
    code = read_gpu_code(path)
    problems = [read.reason for read in (dynamic, code) if read.state is State.ERROR and read.reason]
    section = dynamic.dynamic
    return LinkedObject(
        path=path,
        soname=section.soname if section else None,
        needed=section.needed if section else (),
        rpath=section.rpath if section else None,
        runpath=section.runpath if section else None,
        sass=code.sass,
        ptx=code.ptx,
        reason="; ".join(problems) or None,
    )


def _encoded_object(found: LinkedObject) -> list[Any]:
    return [
        found.soname,
        list(found.needed),
        found.rpath,
        found.runpath,
        list(found.sass),
        list(found.ptx),
        found.reason,
    ]


def _object_decoder(path: str) -> Callable[[Any], LinkedObject]:
    def decode(raw: Any) -> LinkedObject:
        soname, needed, rpath, runpath, sass, ptx, reason = raw
        return LinkedObject(
            path, optional_text(soname), texts(needed), optional_text(rpath), optional_text(runpath), texts(sass),
            texts(ptx), optional_text(reason),
        )  # fmt: skip

    return decode
