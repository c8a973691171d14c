"""The ELF reader against libraries gcc links in the test session, compared with readelf where it is installed."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn.binaries.elf import DynamicSection, find_section, read_dynamic
from pytest_cudnn.environment import State

from .simhost import Compiler

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SOURCE = "int answer(void) { return 42; }\n"


def gcc(compiler: Compiler, name: str, *flags: str, source: str = SOURCE) -> Path:
    return compiler.compile(name, ["gcc", "-shared", "-fPIC", "-O0", *flags], source, ".c")


# name -> (gcc flags, what the reader must report)
VARIANTS: dict[str, tuple[tuple[str, ...], DynamicSection]] = {
    "needs-two": (
        ("-Wl,-soname,libneeds.so.1",),
        DynamicSection("libneeds.so.1", ("libfirst.so.3", "libsecond.so.1"), None, None),
    ),
    "rpath": (
        ("-Wl,-soname,librpath.so", "-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/../lib"),
        DynamicSection("librpath.so", (), "$ORIGIN/../lib", None),
    ),
    "runpath": (
        ("-Wl,-soname,librunpath.so", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"),
        DynamicSection("librunpath.so", (), None, "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"),
    ),
    "neither": (("-Wl,-soname,libplain.so.2",), DynamicSection("libplain.so.2", (), None, None)),
    "no-soname": ((), DynamicSection(None, (), None, None)),
}


def variant(compiler: Compiler, name: str) -> Path:
    flags, expected = VARIANTS[name]
    needed = compiler.link_against(expected.needed) if expected.needed else []
    # -nostdlib keeps libc out of DT_NEEDED, so each variant needs exactly what the table says.
    return gcc(compiler, f"{name}.so", "-nostdlib", *flags, *needed)


def elf32(compiler: Compiler) -> Path:
    # Without -nostdlib, -m32 needs the i386 C library (gcc-multilib); the compiler and linker alone do.
    flags = ("-m32", "-nostdlib", "-Wl,-soname,libthirtytwo.so", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/32")
    return gcc(compiler, "thirtytwo.so", *flags)


ELF32_EXPECTED = DynamicSection("libthirtytwo.so", (), None, "$ORIGIN/32")


def readelf_dynamic(path: Path) -> DynamicSection | None:
    """What binutils' readelf says, or None where it is not installed."""
    readelf = shutil.which("readelf")
    if readelf is None:
        return None
    out = subprocess.run([readelf, "-dW", str(path)], capture_output=True, text=True, check=True).stdout

    def last(tag: str) -> str | None:
        found = re.findall(rf"\({tag}\)\s+Library \w+: \[(.*)\]", out)
        return found[-1] if found else None

    needed = tuple(re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out))
    return DynamicSection(last("SONAME"), needed, last("RPATH"), last("RUNPATH"))


def to_big_endian(data: bytes) -> bytes:
    """A little-endian ELF file with its headers, program and section tables and dynamic entries rewritten
    big-endian: what a big-endian linker would have laid out for those tables (strings have no byte order)."""
    out = bytearray(data)
    bits = 64 if data[4] == 2 else 32
    word = "Q" if bits == 64 else "I"
    header = f"HHI{word}{word}{word}IHHHHHH"
    program = "IIQQQQQQ" if bits == 64 else "IIIIIIII"
    section = f"II{word}{word}{word}{word}II{word}{word}"
    dynamic = "qQ" if bits == 64 else "iI"

    def swap(fmt: str, offset: int) -> tuple[int, ...]:
        values = struct.unpack_from("<" + fmt, data, offset)
        struct.pack_into(">" + fmt, out, offset, *values)
        return values

    out[5] = 2
    fields = swap(header, 16)
    phoff, shoff, phentsize, phnum, shentsize, shnum = fields[4], fields[5], *fields[8:12]
    for index in range(phnum):
        p = swap(program, phoff + index * phentsize)
        p_type, p_offset, p_filesz = (p[0], p[2], p[5]) if bits == 64 else (p[0], p[1], p[4])
        if p_type == 2:
            for at in range(p_offset, p_offset + p_filesz, struct.calcsize(dynamic)):
                swap(dynamic, at)
    for index in range(shnum):
        swap(section, shoff + index * shentsize)
    return bytes(out)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_dynamic_section_says_what_the_linker_wrote(compiler: Compiler, name: str) -> None:
    path = variant(compiler, name)
    read = read_dynamic(str(path))
    assert (read.state, read.reason, read.format) == (State.FOUND, None, "ELF64 little-endian")
    assert read.dynamic == VARIANTS[name][1]
    from_readelf = readelf_dynamic(path)
    if from_readelf is not None:  # a comparison, not the test: the table above is the reference
        assert read.dynamic == from_readelf


def test_an_elf32_library_is_read(compiler: Compiler) -> None:
    read = read_dynamic(str(elf32(compiler)))
    assert (read.state, read.format, read.dynamic) == (State.FOUND, "ELF32 little-endian", ELF32_EXPECTED)


@pytest.mark.parametrize("bits", [32, 64])
def test_a_big_endian_library_is_read(compiler: Compiler, tmp_path: Path, bits: int) -> None:
    source = elf32(compiler) if bits == 32 else variant(compiler, "runpath")
    expected = ELF32_EXPECTED if bits == 32 else VARIANTS["runpath"][1]
    swapped = tmp_path / "big.so"
    swapped.write_bytes(to_big_endian(source.read_bytes()))
    read = read_dynamic(str(swapped))
    assert (read.state, read.format, read.dynamic) == (State.FOUND, f"ELF{bits} big-endian", expected)
    assert find_section(str(swapped), ".dynstr").section == find_section(str(source), ".dynstr").section
    from_readelf = readelf_dynamic(swapped)
    if from_readelf is not None:
        assert from_readelf == expected


def test_strings_are_found_through_the_sections_when_no_segment_maps_them(compiler: Compiler, tmp_path: Path) -> None:
    """A file whose PT_LOAD entries are gone (here: turned into PT_NULL) still names its strings via .dynstr."""
    data = bytearray(variant(compiler, "needs-two").read_bytes())
    phoff, phentsize, phnum = struct.unpack_from("<Q", data, 32)[0], *struct.unpack_from("<HH", data, 54)
    for index in range(phnum):
        if struct.unpack_from("<I", data, phoff + index * phentsize)[0] == 1:
            struct.pack_into("<I", data, phoff + index * phentsize, 0)
    path = tmp_path / "unloaded.so"
    path.write_bytes(bytes(data))
    assert read_dynamic(str(path)).dynamic == VARIANTS["needs-two"][1]


def test_sections_are_placed_as_readelf_places_them(compiler: Compiler) -> None:
    path = variant(compiler, "needs-two")
    read = find_section(str(path), ".dynstr")
    assert read.state == State.FOUND
    assert read.section is not None
    assert read.section.name == ".dynstr"
    data = path.read_bytes()
    table = data[read.section.offset : read.section.offset + read.section.size]
    assert b"\0libfirst.so.3\0" in table
    readelf = shutil.which("readelf")
    if readelf is not None:
        out = subprocess.run([readelf, "-SW", str(path)], capture_output=True, text=True, check=True).stdout
        match = re.search(r"\.dynstr\s+STRTAB\s+\S+\s+(\S+)\s+(\S+)", out)
        assert match is not None
        assert (read.section.offset, read.section.size) == (int(match[1], 16), int(match[2], 16))


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (".nv_fatbin", "has no section .nv_fatbin"),
        (".bss", "section .bss takes no room in the file (SHT_NOBITS)"),
        (".dynst", "has no section .dynst"),  # a prefix of a real name is not that name
    ],
)
def test_a_missing_section_is_absent(compiler: Compiler, name: str, reason: str) -> None:
    source = SOURCE + "int zeroes[1024];\n"
    read = find_section(str(gcc(compiler, "bss.so", "-nostdlib", source=source)), name)
    assert (read.state, read.section) == (State.ABSENT, None)
    assert read.reason is not None
    assert read.reason.endswith(reason)


def test_an_object_file_has_no_dynamic_section(compiler: Compiler) -> None:
    obj = compiler.compile("plain.o", ["gcc", "-c", "-fPIC"], SOURCE, ".c")
    read = read_dynamic(str(obj))
    assert (read.state, read.format) == (State.ABSENT, "ELF64 little-endian")
    assert read.reason == f"{obj} has no dynamic section (linked statically?)"


def test_files_that_are_no_library_are_errors_and_never_block(tmp_path: Path) -> None:
    text = tmp_path / "libc.so"
    text.write_text("/* GNU ld script */\nGROUP ( libc.so.6 )\n")
    fifo = tmp_path / "fifo.so"
    os.mkfifo(fifo)
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    cases = {
        text: f"{text} is not an ELF file (it starts with b'/* GNU l')",
        fifo: f"{fifo} is a named pipe (FIFO), not a regular file",
        tmp_path: f"{tmp_path} is a folder, not a regular file",
        empty: f"{empty} is not an ELF file (it starts with b'')",
    }
    for path, reason in cases.items():
        assert (read_dynamic(str(path)).state, read_dynamic(str(path)).reason) == (State.ERROR, reason)
        assert (find_section(str(path), ".text").state, find_section(str(path), ".text").reason) == (
            State.ERROR,
            reason,
        )
    missing = read_dynamic(str(tmp_path / "nowhere.so"))
    assert (missing.state, missing.reason) == (State.ABSENT, f"{tmp_path / 'nowhere.so'}: No such file or directory")
    assert read_dynamic("bad\0name").state == State.ERROR


def test_only_headers_are_read(compiler: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library with 8 MiB of data: the reader's positioned reads add up to a few KiB, and it neither reads
    sequentially nor maps the file."""
    big = gcc(compiler, "big.so", "-nostdlib", "-Wl,-soname,libbig.so", source="char blob[1 << 23] = {1};\n")
    asked: list[int] = []
    real_pread = os.pread

    def counting_pread(fd: int, count: int, offset: int) -> bytes:
        asked.append(count)
        return real_pread(fd, count, offset)

    def refuse(*args: object) -> bytes:
        raise AssertionError("the reader read sequentially")

    monkeypatch.setattr(os, "pread", counting_pread)
    monkeypatch.setattr(os, "read", refuse)
    assert read_dynamic(str(big)).dynamic == DynamicSection("libbig.so", (), None, None)
    assert find_section(str(big), ".data").state == State.FOUND
    assert sum(asked) < 16 * 1024
    assert big.stat().st_size > 8 * 2**20


@FUZZ
@given(data=st.binary(max_size=512))
def test_arbitrary_bytes_never_raise(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "garbage.so"
    for content in (data, b"\x7fELF\x02\x01\x01" + data, b"\x7fELF\x01\x02\x01" + data):
        path.write_bytes(content)
        for read in (read_dynamic(str(path)), find_section(str(path), ".nv_fatbin")):
            assert read.state in (State.ERROR, State.ABSENT, State.FOUND)
            assert (read.reason is None) == (read.state == State.FOUND)


@FUZZ
@given(
    which=st.sampled_from(["needs-two", "runpath", "elf32"]),
    edits=st.lists(st.tuples(st.integers(0, 2**16), st.binary(min_size=1, max_size=8)), max_size=6),
    cut=st.none() | st.integers(0, 2**16),
)
def test_damaged_real_libraries_never_raise(
    compiler: Compiler, tmp_path: Path, which: str, edits: list[tuple[int, bytes]], cut: int | None
) -> None:
    """Real files with bytes overwritten, aimed mostly at the headers, and cut short."""
    data = bytearray((elf32(compiler) if which == "elf32" else variant(compiler, which)).read_bytes())
    for position, replacement in edits:
        at = position % 128 if position % 2 else position % len(data)
        data[at : at + len(replacement)] = replacement
    path = tmp_path / "damaged.so"
    path.write_bytes(bytes(data[:cut]))
    for read in (read_dynamic(str(path)), find_section(str(path), ".dynstr")):
        assert read.state in (State.ERROR, State.ABSENT, State.FOUND)
        assert (read.reason is None) == (read.state == State.FOUND)


def test_hostile_counts_are_refused_quickly(compiler: Compiler, tmp_path: Path) -> None:
    """Counts at their maxima with offsets that point inside the file: errors, not long loops."""
    data = bytearray(variant(compiler, "needs-two").read_bytes())
    struct.pack_into("<HH", data, 56, 0xFFFF, 0)  # e_phnum: extended, found in section 0
    struct.pack_into("<HHH", data, 58, 64, 0, 0xFFFF)  # e_shnum 0 and e_shstrndx extended: section 0 says
    shoff = struct.unpack_from("<Q", data, 40)[0]
    struct.pack_into("<QII", data, shoff + 32, 2**40, 2**31, 2**31)  # sh_size, sh_link, sh_info of section 0
    path = tmp_path / "hostile.so"
    path.write_bytes(bytes(data))
    dynamic, section = read_dynamic(str(path)), find_section(str(path), ".dynstr")
    assert (dynamic.state, dynamic.reason) == (State.ERROR, f"{path} claims 2147483648 program headers")
    assert (section.state, section.reason) == (
        State.ERROR,
        f"{path} section header 2147483648 (64 bytes at offset {shoff + 2**37:#x}) lies beyond the end of the file",
    )
