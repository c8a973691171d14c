"""The GPU code a library carries: SASS and PTX architectures from the headers of its ``.nv_fatbin`` section.

A library runs its kernels on a GPU only if it carries SASS for that GPU's architecture, or PTX the driver can
compile for it. nvcc puts that code in the ELF section ``.nv_fatbin`` as fatbin containers one after another.
NVIDIA documents no layout; this reader relies on the fields docs/build-facts.md ("The fatbin format")
names, checked against fatbins that CUDA 13.0's nvcc built (tests/test_binaries_fatbin.py):

* container header, 16 bytes: u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries;
* entry header: u16 kind at +0 (1 PTX, 2 ELF holding SASS), u32 header size at +4, u64 payload size at +8,
  u32 SM number at +28 (75 for sm_75), u64 flags at +40: bit 0x100000 marks the architecture-specific ``a``
  variants (sm_90a), bit 0x200000 the family-specific ``f`` ones (sm_100f, CUDA 12.9 and later).

Fatbins are little-endian whatever the host. Only the headers are read, one positioned read each: torch's
libtorch_cuda.so holds 337 MB of fatbin in a few thousand entries. Payloads (compressed or not) are skipped.
"""

from __future__ import annotations

import errno
import struct
from dataclasses import dataclass

from ..environment import State
from ..files import FileRefused
from .elf import BinaryFile, Malformed, find_section

__all__ = ["FATBIN_MAGIC", "GpuCode", "architecture_name", "read_fatbin", "read_gpu_code"]

FATBIN_MAGIC = 0xBA55ED50
_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQ")  # kind, (unknown), header size, payload size
_ENTRY_SM_AT, _ENTRY_FLAGS_AT, _ENTRY_READ = 28, 40, 48
_KIND_PTX, _KIND_ELF = 1, 2
_ARCH_SPECIFIC, _FAMILY_SPECIFIC = 0x100000, 0x200000
# torch 2.15 has 476 containers and a few thousand entries; a hostile section of tiny entries stops here.
MAX_CONTAINERS = 2**16
MAX_ENTRIES = 2**18
# Zero bytes skipped between containers before giving up on finding the next one.
_MAX_PADDING = 2**16
# Real SM numbers run from 10 (sm_10) to three digits; anything else is not an entry header.
_SM_RANGE = range(10, 1000)


@dataclass(frozen=True)
class GpuCode:
    """The architectures a fatbin holds code for. With an error, what was read before it."""

    state: State
    reason: str | None  # why absent or what failed
    path: str
    sass: tuple[str, ...]  # e.g. ("sm_75", "sm_90a"), ordered by SM number
    ptx: tuple[str, ...]  # e.g. ("compute_90",)
    containers: int  # containers read
    skipped: int  # entries of kinds other than PTX and SASS, which say nothing of architectures


def architecture_name(kind: int, sm: int, flags: int) -> str | None:
    """The nvcc name of an entry's architecture, or None for kinds other than PTX (1) and SASS (2).

    >>> architecture_name(2, 90, 0x100011)
    'sm_90a'
    >>> architecture_name(1, 90, 0x8011)
    'compute_90'
    >>> architecture_name(2, 100, 0x1200011)
    'sm_100f'
    >>> architecture_name(7, 90, 0) is None
    True
    """
    prefix = {_KIND_PTX: "compute", _KIND_ELF: "sm"}.get(kind)
    if prefix is None:
        return None
    suffix = "a" if flags & _ARCH_SPECIFIC else "f" if flags & _FAMILY_SPECIFIC else ""
    return f"{prefix}_{sm}{suffix}"


def _order(name: str) -> tuple[int, str]:
    return int(name.partition("_")[2].rstrip("af")), name


def read_fatbin(path: str, offset: int, size: int) -> GpuCode:
    """The architectures in the fatbin section of ``path`` that spans ``size`` bytes from ``offset``.
    Never raises; an empty section is found with no architectures."""
    sass: set[str] = set()
    ptx: set[str] = set()
    counts = [0, 0]  # containers, skipped entries

    def result(state: State, reason: str | None) -> GpuCode:
        return GpuCode(state, reason, path, tuple(sorted(sass, key=_order)), tuple(sorted(ptx, key=_order)), *counts)

    try:
        with BinaryFile(path) as file:
            if offset < 0 or size < 0 or offset > file.size or size > file.size - offset:
                raise Malformed(f"has no {size} bytes of fatbin at offset {offset:#x}")
            _read_containers(file, offset, offset + size, sass, ptx, counts)
    except (OSError, ValueError) as error:
        if isinstance(error, OSError):
            missing = error.errno in (errno.ENOENT, errno.ENOTDIR)
            return result(State.ABSENT if missing else State.ERROR, f"{path}: {error.strerror or error}")
        return result(State.ERROR, f"{path} {error}" if isinstance(error, Malformed | FileRefused) else str(error))
    return result(State.FOUND, None)


def _read_containers(
    file: BinaryFile, position: int, end: int, sass: set[str], ptx: set[str], counts: list[int]
) -> None:
    entries = 0
    while position < end:
        position = _skip_padding(file, position, end)
        if position >= end:
            return
        if counts[0] >= MAX_CONTAINERS:
            raise Malformed(f"holds more than {MAX_CONTAINERS} fatbin containers")
        if end - position < _CONTAINER.size:
            raise Malformed(f"has {end - position} stray bytes at offset {position:#x} after its last fatbin container")
        magic, _, header_size, entries_size = _CONTAINER.unpack(file.read(position, _CONTAINER.size, "a fatbin header"))
        if magic != FATBIN_MAGIC:
            raise Malformed(f"has no fatbin container at offset {position:#x} (magic {magic:#010x})")
        first = position + header_size
        container_end = first + entries_size
        if header_size < _CONTAINER.size or container_end > end:
            raise Malformed(f"has a fatbin container at offset {position:#x} that runs past its section")
        counts[0] += 1
        entry = first
        while entry < container_end:
            entries += 1
            if entries > MAX_ENTRIES:
                raise Malformed(f"holds more than {MAX_ENTRIES} fatbin entries")
            entry = _read_entry(file, entry, container_end, sass, ptx, counts)
        position = container_end


def _skip_padding(file: BinaryFile, position: int, end: int) -> int:
    """The offset of the first non-zero byte from ``position``: containers may be padded apart with zeros."""
    skipped = 0
    while position < end:
        chunk = file.read(position, min(64, end - position), "fatbin padding")
        stripped = chunk.lstrip(b"\0")
        if stripped:
            return position + len(chunk) - len(stripped)
        position += len(chunk)
        skipped += len(chunk)
        if skipped > _MAX_PADDING:
            raise Malformed(f"has more than {_MAX_PADDING} zero bytes before offset {position:#x} in its fatbin")
    return position


def _read_entry(file: BinaryFile, at: int, end: int, sass: set[str], ptx: set[str], counts: list[int]) -> int:
    """Record the architecture of the entry at ``at``; the offset of the next one."""
    if end - at < _ENTRY_READ:
        raise Malformed(f"has a fatbin entry at offset {at:#x} cut short by its container's end")
    raw = file.read(at, _ENTRY_READ, "a fatbin entry header")
    kind, _, header_size, payload_size = _ENTRY.unpack_from(raw)
    following: int = at + header_size + payload_size
    if header_size < _ENTRY_READ or following > end:
        raise Malformed(f"has a fatbin entry at offset {at:#x} that runs past its container")
    (sm,) = struct.unpack_from("<I", raw, _ENTRY_SM_AT)
    (flags,) = struct.unpack_from("<Q", raw, _ENTRY_FLAGS_AT)
    name = architecture_name(kind, sm, flags)
    if name is None:
        counts[1] += 1
    elif sm not in _SM_RANGE:
        raise Malformed(f"has a fatbin entry at offset {at:#x} for SM {sm}, which no GPU has")
    else:
        (ptx if kind == _KIND_PTX else sass).add(name)
    return following


def read_gpu_code(path: str) -> GpuCode:
    """The architectures in the ``.nv_fatbin`` section of the ELF library ``path``; absent when it has none
    (a library without GPU code, or whose code nvcc placed elsewhere). Never raises."""
    found = find_section(path, ".nv_fatbin")
    if found.section is None:
        return GpuCode(found.state, found.reason, path, (), (), 0, 0)
    return read_fatbin(path, found.section.offset, found.section.size)
