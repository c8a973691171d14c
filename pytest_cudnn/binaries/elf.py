"""An ELF shared object's dynamic section and section table, read from its headers without loading it.

The loader's view of a library (ld.so(8)) comes from its dynamic section: DT_SONAME names it, DT_NEEDED lists
the libraries it needs in the order they are searched, DT_RPATH and DT_RUNPATH are its own search folders as
written (``$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN`` on torch's libtorch_cuda.so). The section table places
data such as the ``.nv_fatbin`` GPU code. Layouts follow the System V gABI ("Object Files" and "Program
Loading and Dynamic Linking") and elf(5); ELF32 and ELF64, either byte order.

Only headers are read, each with one positioned read (os.pread) of at most :data:`MAX_READ` bytes: mapping a
500 MB library to read 2 KB of headers pulled 280 MB into memory. Every offset and count a file gives is
checked against the file's size before it is used, so a truncated or hostile file ends in an error result,
never an exception, a huge allocation or a long loop.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType

from ..environment import State
from ..files import FileRefused, open_regular

__all__ = [
    "MAX_READ",
    "BinaryFile",
    "DynamicRead",
    "DynamicSection",
    "Malformed",
    "Section",
    "SectionRead",
    "find_section",
    "read_dynamic",
]

#: The most one positioned read asks for; no header or table of a real library comes near it.
MAX_READ = 2**20
#: The longest name or search path accepted. PATH_MAX is 4096, but an RPATH lists several folders.
MAX_STRING = 2**16
# Real libraries have tens of each; the limits only stop a hostile count from running for minutes.
MAX_PROGRAM_HEADERS = 2**16
MAX_SECTIONS = 2**20
MAX_DYNAMIC_ENTRIES = 2**16

_ABSENT = (errno.ENOENT, errno.ENOTDIR)

# gABI constants.
_PT_LOAD, _PT_DYNAMIC = 1, 2
_SHT_STRTAB, _SHT_DYNAMIC, _SHT_NOBITS = 3, 6, 8
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_STRSZ, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29
_PN_XNUM, _SHN_XINDEX = 0xFFFF, 0xFFFF


class Malformed(ValueError):
    """A file that is not what its headers claim; the message says what and where."""


class BinaryFile:
    """A regular file opened without blocking (as :func:`pytest_cudnn.files.read_regular` opens), read only by
    positioned reads that lie inside the size it had when opened. Raises OSError when it cannot be opened,
    FileRefused when it is no regular file."""

    def __init__(self, path: str) -> None:
        # Opened as files.py opens: a FIFO planted under a library's name must not block the open.
        self.fd, self.size = open_regular(path)

    def __enter__(self) -> BinaryFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        os.close(self.fd)

    def read(self, offset: int, count: int, what: str = "data") -> bytes:
        """Exactly ``count`` bytes at ``offset``; Malformed when they are not all inside the file."""
        if offset < 0 or count < 0 or offset > self.size or count > self.size - offset:
            raise Malformed(f"{what} ({count} bytes at offset {offset:#x}) lies beyond the end of the file")
        if count > MAX_READ:
            raise Malformed(f"{what} ({count} bytes at offset {offset:#x}) is larger than any real one")
        chunks: list[bytes] = []
        done = 0
        while done < count:
            chunk = os.pread(self.fd, count - done, offset + done)
            if not chunk:  # shrunk since it was opened
                raise Malformed(f"the file ended at offset {offset + done:#x} while {what} was read")
            chunks.append(chunk)
            done += len(chunk)
        return b"".join(chunks)

    def read_string(self, offset: int, end: int, what: str) -> bytes:
        """The NUL-terminated string at ``offset``, which must end before ``end`` and within MAX_STRING."""
        limit = min(end, self.size, offset + MAX_STRING + 1)
        if offset < 0 or offset >= limit:
            raise Malformed(f"{what} at offset {offset:#x} lies outside its string table")
        parts: list[bytes] = []
        position, step = offset, 256
        while position < limit:
            chunk = self.read(position, min(step, limit - position), what)
            nul = chunk.find(b"\0")
            if nul >= 0:
                parts.append(chunk[:nul])
                return b"".join(parts)
            parts.append(chunk)
            position += len(chunk)
            step = min(step * 4, MAX_READ)
        raise Malformed(f"{what} at offset {offset:#x} has no end within its string table")


@dataclass(frozen=True)
class DynamicSection:
    """What the loader reads from a library's dynamic section, strings as written (os.fsdecode of the bytes)."""

    soname: str | None
    needed: tuple[str, ...]  # in the order written, which is the order the loader searches them
    rpath: str | None  # e.g. "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"; ignored by the loader beside a RUNPATH
    runpath: str | None


@dataclass(frozen=True)
class DynamicRead:
    """The dynamic section of ``path``: found, absent (no such file, or a file without one) or an error."""

    state: State
    reason: str | None  # why absent or what failed
    path: str
    format: str | None  # e.g. "ELF64 little-endian", once the identification was read
    dynamic: DynamicSection | None


@dataclass(frozen=True)
class Section:
    """Where a section's bytes lie in the file."""

    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class SectionRead:
    """A section of ``path`` by name: found, absent (no such file, or no such section with bytes) or an error."""

    state: State
    reason: str | None
    path: str
    format: str | None
    section: Section | None


@dataclass(frozen=True)
class _Layout:
    bits: int
    name: str
    header: struct.Struct  # e_type .. e_shstrndx, after the 16 bytes of e_ident
    program: struct.Struct
    section: struct.Struct
    dynamic: struct.Struct


def _layout(bits: int, order: str) -> _Layout:
    word = "Q" if bits == 64 else "I"
    # Program headers differ in field order as well as width: ELF64 moves p_flags up beside p_type.
    program = "IIQQQQQQ" if bits == 64 else "IIIIIIII"
    return _Layout(
        bits=bits,
        name=f"ELF{bits} {'little' if order == '<' else 'big'}-endian",
        header=struct.Struct(f"{order}HHI{word}{word}{word}IHHHHHH"),
        program=struct.Struct(order + program),
        section=struct.Struct(f"{order}II{word}{word}{word}{word}II{word}{word}"),
        dynamic=struct.Struct(f"{order}{'q' if bits == 64 else 'i'}{word}"),
    )


_LAYOUTS = {(bits, data): _layout(bits, order) for bits in (32, 64) for data, order in ((1, "<"), (2, ">"))}


@dataclass(frozen=True)
class _Program:
    type: int
    offset: int
    vaddr: int
    filesz: int


@dataclass(frozen=True)
class _SectionHeader:
    index: int
    name: int
    type: int
    addr: int
    offset: int
    size: int
    link: int


class _Elf:
    """The identification and header of an ELF file, and its tables read on demand."""

    def __init__(self, file: BinaryFile) -> None:
        self.file = file
        ident = file.read(0, min(16, file.size), "the ELF identification")
        if len(ident) < 16 or ident[:4] != b"\x7fELF":
            raise Malformed(f"is not an ELF file (it starts with {ident[:8]!r})")
        layout = _LAYOUTS.get((32 if ident[4] == 1 else 64 if ident[4] == 2 else 0, ident[5]))
        if layout is None:
            raise Malformed(f"is an ELF file of unknown class {ident[4]} or byte order {ident[5]}")
        self.layout = layout
        fields = layout.header.unpack(file.read(16, layout.header.size, "the ELF header"))
        (_, _, _, _, self.phoff, self.shoff, _, _, self.phentsize, phnum, self.shentsize, shnum, shstrndx) = fields
        # Extended numbering (gABI, "Sections", "Extended Section Header Numbering"): counts too large for the
        # 16-bit fields live in section 0's sh_size, sh_link and sh_info. Section 0 is read only when needed:
        # a library whose section headers are damaged still has a readable dynamic section.
        self.damage: Malformed | None = None  # why the section table cannot be read, found on the way
        first: tuple[int, ...] | None = None
        if self.shoff and self.shentsize >= layout.section.size and (shnum == 0 or _PN_XNUM in (phnum, shstrndx)):
            try:
                first = self._first_fields()
            except Malformed as error:
                self.damage = error
        self.shnum = first[5] if first and shnum == 0 else shnum
        self.shstrndx = first[6] if first and shstrndx == _SHN_XINDEX else shstrndx
        self.phnum = first[7] if first and phnum == _PN_XNUM else phnum

    def _first_fields(self) -> tuple[int, ...]:
        raw = self.file.read(self.shoff, self.layout.section.size, "section header 0")
        return tuple(self.layout.section.unpack(raw))

    def table(self, offset: int, entsize: int, count: int, what: str, chunk: int = MAX_READ) -> Iterator[bytes]:
        """The raw entries of a table, read a block at a time."""
        if count > (self.file.size - offset) // max(entsize, 1) or offset > self.file.size:
            raise Malformed(f"the {what} ({count} of {entsize} bytes at offset {offset:#x}) run past the file's end")
        per = max(1, chunk // entsize)
        for start in range(0, count, per):
            block = self.file.read(offset + start * entsize, min(per, count - start) * entsize, f"the {what}")
            for at in range(0, len(block), entsize):
                yield block[at : at + entsize]

    def programs(self) -> list[_Program]:
        if not self.phoff or not self.phnum:
            return []
        if self.phentsize < self.layout.program.size:
            raise Malformed(f"program headers of {self.phentsize} bytes are too small for {self.layout.name}")
        if self.phnum > MAX_PROGRAM_HEADERS:
            raise Malformed(f"claims {self.phnum} program headers")
        size = self.layout.program.size
        result = []
        for raw in self.table(self.phoff, self.phentsize, self.phnum, "program headers"):
            fields = self.layout.program.unpack(raw[:size])
            if self.layout.bits == 32:
                p_type, p_offset, p_vaddr, _, p_filesz = fields[:5]
            else:
                p_type, _, p_offset, p_vaddr, _, p_filesz = fields[:6]
            result.append(_Program(p_type, p_offset, p_vaddr, p_filesz))
        return result

    def _section_headers(self, count: int) -> Iterator[_SectionHeader]:
        size = self.layout.section.size
        for index, raw in enumerate(self.table(self.shoff, self.shentsize, count, "section headers")):
            name, kind, _, addr, offset, length, link = self.layout.section.unpack(raw[:size])[:7]
            yield _SectionHeader(index, name, kind, addr, offset, length, link)

    def sections(self) -> Iterator[_SectionHeader]:
        if self.damage is not None:
            raise self.damage
        if not self.shoff or not self.shnum:
            return iter(())
        if self.shentsize < self.layout.section.size:
            raise Malformed(f"section headers of {self.shentsize} bytes are too small for {self.layout.name}")
        if self.shnum > MAX_SECTIONS:
            raise Malformed(f"claims {self.shnum} sections")
        return self._section_headers(self.shnum)

    def section(self, index: int) -> _SectionHeader:
        if not self.shoff or not 0 <= index < self.shnum or self.shentsize < self.layout.section.size:
            raise Malformed(f"names section {index}, which is not in its section table")
        raw = self.file.read(self.shoff + index * self.shentsize, self.layout.section.size, f"section header {index}")
        name, kind, _, addr, offset, length, link = self.layout.section.unpack(raw)[:7]
        return _SectionHeader(index, name, kind, addr, offset, length, link)


def _open_error(path: str, error: OSError | ValueError) -> tuple[State, str]:
    if isinstance(error, OSError):
        state = State.ABSENT if error.errno in _ABSENT else State.ERROR
        return state, f"{path}: {error.strerror or error}"
    return State.ERROR, f"{path} {error}" if isinstance(error, (FileRefused, Malformed)) else f"{path!r}: {error}"


def read_dynamic(path: str) -> DynamicRead:
    """The soname, needed libraries and search paths of the ELF file ``path``. Never raises."""
    layout: str | None = None
    try:
        with BinaryFile(path) as file:
            elf = _Elf(file)
            layout = elf.layout.name
            dynamic = _read_dynamic(elf)
    except (OSError, ValueError) as error:
        state, reason = _open_error(path, error)
        return DynamicRead(state, reason, path, layout, None)
    if dynamic is None:
        return DynamicRead(State.ABSENT, f"{path} has no dynamic section (linked statically?)", path, layout, None)
    return DynamicRead(State.FOUND, None, path, layout, dynamic)


def _read_dynamic(elf: _Elf) -> DynamicSection | None:
    programs = elf.programs()
    # The loader finds the dynamic section through PT_DYNAMIC; section headers may be stripped, or lie.
    place = next(((p.offset, p.filesz) for p in programs if p.type == _PT_DYNAMIC), None)
    dynamic_header: _SectionHeader | None = None
    if place is None:
        dynamic_header = next((s for s in elf.sections() if s.type == _SHT_DYNAMIC), None)
        if dynamic_header is None:
            return None
        place = (dynamic_header.offset, dynamic_header.size)
    offset, size = place
    if offset > elf.file.size:
        raise Malformed(f"its dynamic section at offset {offset:#x} lies beyond the end of the file")
    entsize = elf.layout.dynamic.size
    count = min(size, elf.file.size - offset) // entsize
    values: dict[int, int] = {}  # a repeated tag: the last one counts, as in glibc's elf/get-dynamic-info.h
    needed: list[int] = []
    ended = False
    for number, raw in enumerate(elf.table(offset, entsize, count, "dynamic entries", chunk=4096)):
        if number >= MAX_DYNAMIC_ENTRIES:
            raise Malformed(f"its dynamic section has more than {MAX_DYNAMIC_ENTRIES} entries")
        tag, value = elf.layout.dynamic.unpack(raw)
        if tag == _DT_NULL:
            ended = True
            break
        if tag == _DT_NEEDED:
            needed.append(value)
        else:
            values[tag] = value
    if not ended and count * entsize < size:
        raise Malformed(f"its dynamic section at offset {offset:#x} runs past the end of the file")
    wanted = [tag for tag in (_DT_SONAME, _DT_RPATH, _DT_RUNPATH) if tag in values]
    if not needed and not wanted:
        return DynamicSection(None, (), None, None)
    if _DT_STRTAB not in values:
        raise Malformed("its dynamic section names strings but has no DT_STRTAB")
    start, end = _string_table(elf, programs, values[_DT_STRTAB], dynamic_header)
    if _DT_STRSZ in values:
        end = min(end, start + values[_DT_STRSZ])

    def string(value: int, what: str) -> str:
        return os.fsdecode(elf.file.read_string(start + value, end, what))

    names = {tag: string(values[tag], _TAG_NAMES[tag]) for tag in wanted}
    return DynamicSection(
        soname=names.get(_DT_SONAME),
        needed=tuple(string(value, "a DT_NEEDED name") for value in needed),
        rpath=names.get(_DT_RPATH),
        runpath=names.get(_DT_RUNPATH),
    )


_TAG_NAMES = {_DT_SONAME: "DT_SONAME", _DT_RPATH: "DT_RPATH", _DT_RUNPATH: "DT_RUNPATH"}


def _string_table(
    elf: _Elf, programs: list[_Program], address: int, dynamic_header: _SectionHeader | None
) -> tuple[int, int]:
    """The file offsets where the string table at virtual ``address`` starts and the data holding it ends."""
    for program in programs:
        if program.type == _PT_LOAD and program.vaddr <= address < program.vaddr + program.filesz:
            start = program.offset + (address - program.vaddr)
            return start, min(program.offset + program.filesz, elf.file.size)
    # No segment maps it (program headers stripped or lying): the dynamic section's linked string table,
    # .dynstr by name or by its address.
    if dynamic_header is None:
        dynamic_header = next((s for s in elf.sections() if s.type == _SHT_DYNAMIC), None)
    candidates = [elf.section(dynamic_header.link)] if dynamic_header is not None and dynamic_header.link else []
    candidates += [s for s in elf.sections() if s.type == _SHT_STRTAB and s.addr == address]
    for header in candidates:
        if header.type == _SHT_STRTAB:
            return header.offset, min(header.offset + header.size, elf.file.size)
    raise Malformed(f"no segment or section holds its string table (DT_STRTAB {address:#x})")


def find_section(path: str, name: str) -> SectionRead:
    """Where the bytes of the section called ``name`` (the first, when several are) lie in ``path``. Absent
    when the file has no such section or it takes no room in the file (SHT_NOBITS). Never raises."""
    layout: str | None = None
    wanted = name.encode(errors="surrogateescape") + b"\0"
    try:
        with BinaryFile(path) as file:
            elf = _Elf(file)
            layout = elf.layout.name
            if elf.damage is not None:
                raise elf.damage
            if not elf.shoff or not elf.shnum:
                return SectionRead(State.ABSENT, f"{path} has no section headers", path, layout, None)
            names = elf.section(elf.shstrndx)
            if not elf.shstrndx or names.type != _SHT_STRTAB:
                raise Malformed(f"has no section name table (e_shstrndx {elf.shstrndx})")
            names_end = min(names.offset + names.size, file.size)
            for header in elf.sections():
                at = names.offset + header.name
                if not 0 <= at < names_end:
                    raise Malformed(f"section {header.index} has its name outside the section name table")
                if file.read(at, min(len(wanted), names_end - at), "a section name") != wanted:
                    continue
                if header.type == _SHT_NOBITS:
                    reason = f"{path}: section {name} takes no room in the file (SHT_NOBITS)"
                    return SectionRead(State.ABSENT, reason, path, layout, None)
                if header.offset > file.size or header.size > file.size - header.offset:
                    raise Malformed(f"section {name} ({header.size} bytes at {header.offset:#x}) runs past its end")
                return SectionRead(State.FOUND, None, path, layout, Section(name, header.offset, header.size))
    except (OSError, ValueError) as error:
        state, reason = _open_error(path, error)
        return SectionRead(state, reason, path, layout, None)
    return SectionRead(State.ABSENT, f"{path} has no section {name}", path, layout, None)
