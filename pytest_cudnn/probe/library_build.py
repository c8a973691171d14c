"""What a library's file says of its build, read from its ELF ``.rodata`` without loading it: NCCL writes
"NCCL version 2.32.3+cuda12.9" there (compat/sources.py "nccl-version-string"), the CUDA release it was built for.

Bounded: only the ``.rodata`` section is read (462 KB in nvidia-nccl-cu12 2.32.3's 474 MB library), at most
:data:`MAX_RODATA` of it, and what it said is kept between runs under the file's identity (:mod:`.facts`).
"""

from __future__ import annotations

from ..binaries.elf import MAX_READ, BinaryFile, find_section
from ..compat.catalog import LibraryKind, build_string
from ..environment import BuildFact, State
from .facts import decoded_fact, encoded_fact, maybe, maybe_decoded, remembered

__all__ = ["MAX_RODATA", "library_build"]

MAX_RODATA = 8 * 2**20  # eighteen times the real one: a larger .rodata is read this far
_OVERLAP = 256  # a string that straddles two reads is still seen whole


def library_build(kind: LibraryKind, path: str) -> BuildFact | None:
    """The CUDA release ``kind``'s copy at ``path`` was built for, with what in the file says so; None where its
    file says nothing (no such string, no .rodata, not an ELF file, unreadable). Never raises."""
    if not kind.build_pattern:
        return None
    encode, decode = maybe(encoded_fact), maybe_decoded(decoded_fact)
    return remembered(f"build-{kind.key}", path, [path], lambda: _read(kind, path), encode, decode)


def _read(kind: LibraryKind, path: str) -> BuildFact | None:
    found = find_section(path, ".rodata")
    if found.state is not State.FOUND or found.section is None:
        return None
    start, size = found.section.offset, min(found.section.size, MAX_RODATA)
    try:
        with BinaryFile(path) as file:
            position = start
            while position < start + size:
                count = min(MAX_READ, start + size - position)
                said = build_string(kind, file.read(position, count, ".rodata"))
                if said is not None:
                    version, cuda = said
                    return BuildFact(cuda, path, f'.rodata: "{kind.display} version {version}+cuda{cuda}"')
                if position + count >= start + size:
                    break
                position += count - _OVERLAP
    except (OSError, ValueError):
        return None
    return None
