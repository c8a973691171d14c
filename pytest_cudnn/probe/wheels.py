"""The files frameworks load from nvidia-* wheel folders, against the RECORDs of the distributions that list them.

Wheels of different CUDA majors share folders: nvidia-cudnn-cu12 and nvidia-cudnn-cu13 both write
``nvidia/cudnn/lib/libcudnn.so.9``, and pip lets the one installed last win without a word (``pip check`` only
compares versions). Each distribution's RECORD (PEP 376, written by pip at install) holds the size and sha256 of
every file it wrote, so a file that another distribution overwrote is told apart on disk:

* every file a framework loads from ``<site>/nvidia/*/lib``: its size, and its sha256 when it is at most
  :data:`HASH_LIMIT` bytes (measured: 0.4 to 0.8 ms for the 741 KB libcudart.so.12 of nvidia-cuda-runtime-cu12
  12.9.79, about 1 to 2 GB/s warm; the cuDNN front library is 100 KB, its engine libraries hundreds of MB);
* every distribution whose RECORD lists such a file: each file of its RECORD against its size on disk (one stat a
  file, linear in its files), and the files a framework loads against its hashes too.

Reads are bounded: a RECORD of at most :data:`RECORD_LIMIT` bytes, only the RECORDs of nvidia-* distributions in the
site folders of the files loaded.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import os
import posixpath
from collections.abc import Iterable, Sequence
from typing import Any

from .._base.versions import canonical_name, decimal
from ..environment import Distribution, FrameworkBuild, RecordEntry, WheelCheck, WheelFile
from ..files import FileRefused, open_regular, read_regular
from .distributions import metadata_of
from .facts import maybe, maybe_decoded, optional_text, remembered

__all__ = [
    "HASH_LIMIT",
    "RECORD_LIMIT",
    "line_of",
    "read_record",
    "read_wheels",
    "record_lines",
    "record_notes",
    "sha256_of",
]

HASH_LIMIT = 64 << 20  # bytes: about 35 to 70 ms warm; bigger files are checked by size only
RECORD_LIMIT = 4 << 20  # bytes: nvidia-cudnn-cu13's RECORD is a few KB

_Line = tuple[str, int | None, str | None]  # path as RECORD writes it, size, sha256


def record_lines(text: str) -> list[_Line]:
    """The files of a RECORD: (path, size, sha256); a hash of another algorithm, or none, is None.

    >>> record_lines('a.so,,1\\n"b.so,,2\\nc.so,,4\\n')  # a damaged line costs only itself
    [('a.so', 1, None), ('b.so,,2', None, None), ('c.so', 4, None)]
    >>> record_lines("a.so,,\u00b2\\nb.so,,1\\n")  # '²'.isdigit(), but no size
    [('a.so', None, None), ('b.so', 1, None)]
    >>> record_lines("nvidia/cudnn/lib/libcudnn.so.9,sha256=abc,107904\\nx.dist-info/RECORD,,\\n")
    [('nvidia/cudnn/lib/libcudnn.so.9', 107904, 'abc'), ('x.dist-info/RECORD', None, None)]
    """
    lines: list[_Line] = []
    for text_line in text.splitlines():
        try:  # line by line: an unterminated quote must not swallow the lines after it
            row = next(csv.reader([text_line]), [])
        except csv.Error:  # a damaged line: the rest is still read
            continue
        if not row or not row[0] or row[0].startswith("/"):
            continue  # a path outside the site folder is no file of this wheel's to check
        algorithm, _, digest = (row[1] if len(row) > 1 else "").partition("=")
        size_text = row[2] if len(row) > 2 else ""
        size = decimal(size_text, 18)  # a size too long, or not in ASCII digits, is none
        lines.append((row[0], size, digest if algorithm == "sha256" and digest else None))
    return lines


def sha256_of(path: str, limit: int = HASH_LIMIT) -> str | None:
    """The sha256 of the regular file ``path`` as RECORD writes it (urlsafe base64, no padding); None when it is
    larger than ``limit`` or cannot be read."""
    try:
        fd, size = open_regular(path)
    except (OSError, FileRefused):
        return None
    digest = hashlib.sha256()
    try:
        if size > limit:
            return None
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
        if left <= 0:
            return None  # it grew past the limit while read
    except OSError:
        return None
    finally:
        os.close(fd)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return None


def _wheel_site(path: str) -> str | None:
    """``<site>`` of ``<site>/nvidia/<folder>/lib/<file>``; None for a file outside a wheel folder."""
    parts = path.split("/")
    if len(parts) < 5 or parts[-4] != "nvidia" or parts[-2] != "lib":
        return None
    return "/".join(parts[:-4]) or None


def read_record(metadata: str, *, whole: bool = True) -> tuple[str, list[_Line]] | None:
    """The RECORD beside a distribution's METADATA file: its path and its lines; None where it cannot be read (or,
    with ``whole``, holds more than :data:`RECORD_LIMIT`; without, its first RECORD_LIMIT bytes are enough)."""
    record = os.path.join(os.path.dirname(metadata), "RECORD")
    text = _record_text(record, whole)
    return (record, record_lines(text)) if text is not None else None


def _record_text(record: str, whole: bool = True) -> str | None:
    try:
        return read_regular(record, RECORD_LIMIT, whole=whole).decode("utf-8", "replace")
    except (OSError, FileRefused):
        return None


def line_of(text: str, relative: str) -> _Line | None:
    """The RECORD line of the file ``relative`` (as pip writes paths: relative to the site, ``/`` between parts),
    found without reading the others: a RECORD of thousands of lines is searched, not parsed.

    >>> line_of('a.so,sha256=x,1\\n"b,c.so",sha256=y,2\\n', "b,c.so"), line_of("a.so,,1\\n", "b.so")
    (('b,c.so', 2, 'y'), None)
    """
    for start in (relative + ",", f'"{relative}",'):
        at = ("\n" + text).find("\n" + start)
        if at >= 0:
            end = text.find("\n", at)
            found = record_lines(text[at : end if end >= 0 else len(text)])
            return found[0] if found else None
    return None


def _recorded_line(record: str, relative: str, texts: dict[str, str | None]) -> _Line | None:
    """:func:`line_of` in the file ``record``, kept between runs under the RECORD's identity (:mod:`.facts`).
    ``texts``: the RECORDs this run read, each read once however many loaded files it is searched for."""

    def read() -> _Line | None:
        if record not in texts:
            texts[record] = _record_text(record)
        text = texts[record]
        return line_of(text, relative) if text is not None else None

    key = f"{record}\0{relative}"
    return remembered("record-line", key, [record], read, maybe(list), maybe_decoded(_decoded_line))


def _decoded_line(line: Any) -> _Line:
    path, size, digest = line
    if not isinstance(path, str) or (size is not None and (not isinstance(size, int) or size < 0)):
        raise TypeError("not a RECORD line")
    return path, size, optional_text(digest)


def _sha256(path: str) -> str | None:
    """:func:`sha256_of`, kept between runs under the file's identity: hashing cuDNN's libraries is most of what a
    cold probe reads (0.155 s of 0.48 s with torch 2.14.1's wheels, measured 2026-11-29)."""
    return remembered("sha256", path, [path], lambda: sha256_of(path), maybe(str), maybe_decoded(optional_text))


def _records(site: str, distributions: Sequence[Distribution]) -> list[tuple[Distribution, str]]:
    """The RECORD path of every nvidia-* distribution installed in ``site``."""
    found = []
    for distribution in distributions:
        if distribution.location.rstrip("/") != site or not canonical_name(distribution.name).startswith("nvidia-"):
            continue
        metadata = metadata_of(site, distribution.name)
        if metadata is not None:
            found.append((distribution, os.path.join(os.path.dirname(metadata), "RECORD")))
    return found


def record_notes(frameworks: Iterable[FrameworkBuild], distributions: Sequence[Distribution]) -> tuple[str, ...]:
    """What :func:`read_wheels` could not read, said: a RECORD over :data:`RECORD_LIMIT` (its files are not checked
    against the disk). Looked at every run (a stat a RECORD), so that a warm probe says it too."""
    notes = []
    for site in dict.fromkeys(_loaded(frameworks).values()):
        for _, record in _records(site, distributions):
            size = _size(record)
            if size is not None and size > RECORD_LIMIT:
                notes.append(
                    f"{record} is {size:,} bytes, more than the {RECORD_LIMIT:,} read: the files it lists were not "
                    "checked against the disk"
                )
    return tuple(notes)


def read_wheels(
    frameworks: Iterable[FrameworkBuild], distributions: Sequence[Distribution]
) -> tuple[tuple[WheelFile, ...], tuple[WheelCheck, ...]]:
    """Each file the frameworks load from a wheel folder against the RECORD lines that list it (size first, the
    hash only where a size agrees), and each distribution whose line for such a file the disk contradicts against
    the disk, every file of its RECORD. A healthy host reads one line of each RECORD and parses none whole; nothing
    is read for a host whose frameworks load no wheel file."""
    loaded = _loaded(frameworks)
    texts: dict[str, str | None] = {}
    files: list[WheelFile] = []
    records: dict[str, list[tuple[Distribution, str]]] = {}
    contradicted: dict[str, Distribution] = {}  # RECORD path -> its distribution, whose loaded file is not its own
    for path, site in loaded.items():
        if site not in records:
            records[site] = _records(site, distributions)
        relative = posixpath.relpath(path, site)
        listing = [
            (distribution, record, line)
            for distribution, record in records[site]
            if (line := _recorded_line(record, relative, texts)) is not None
        ]
        if not listing:
            continue
        entries = tuple(RecordEntry(d.name, d.version, line[1], line[2]) for d, _, line in listing)
        size = _size(path)
        # Hashed only when a RECORD of that size could hold it: a size no RECORD has already says enough.
        sha256 = _sha256(path) if size is not None and any(e.size == size and e.sha256 for e in entries) else None
        file = WheelFile(path, size, sha256, entries)
        files.append(file)
        for (distribution, record, _), entry in zip(listing, entries, strict=True):
            if file.written_by(entry) is False:
                contradicted.setdefault(record, distribution)
    hashed = {file.path: file.sha256 for file in files if file.sha256}
    checks = []
    for record, distribution in contradicted.items():
        read = texts[record] if record in texts else _record_text(record)
        if read is None:
            continue
        site = distribution.location.rstrip("/")
        sized = [(name, size, sha256) for name, size, sha256 in record_lines(read) if size is not None]
        inside = [(name, size, sha256) for name, size, sha256 in sized if _inside(site, name)]
        differing = tuple(
            name
            for name, size, sha256 in inside
            if _size(path := os.path.join(site, name)) != size
            or (sha256 is not None and hashed.get(posixpath.normpath(path), sha256) != sha256)
        )
        checks.append(WheelCheck(distribution.name, distribution.version, record, len(inside), differing))
    return tuple(files), tuple(checks)


def _loaded(frameworks: Iterable[FrameworkBuild]) -> dict[str, str]:
    """Each file the frameworks load from a wheel folder, with the site folder that holds it."""
    paths = (load.path for build in frameworks for load in build.loads if load.path)
    return {path: site for path in paths if (site := _wheel_site(path))}


def _inside(site: str, name: str) -> bool:
    """Whether the RECORD path ``name`` stays in ``site`` once normalised (``nvidia/../../../etc/passwd`` does
    not: no file of this wheel's to look at)."""
    return posixpath.normpath(posixpath.join(site, name)).startswith(site.rstrip("/") + "/")
