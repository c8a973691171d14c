"""The fatbin reader against libraries CUDA 13.0's nvcc builds in the test session, and hand-made containers."""

from __future__ import annotations

import doctest
import importlib
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn.binaries import fatbin
from pytest_cudnn.binaries.elf import find_section
from pytest_cudnn.binaries.fatbin import FATBIN_MAGIC, GpuCode, read_fatbin, read_gpu_code
from pytest_cudnn.environment import State

from .simhost import Compiler
from .test_binaries_elf import gcc

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# The toolkit these machines and CI carry (docs/build-facts.md); NVCC names another.
NVCC = os.environ.get("NVCC", "/usr/local/cuda-13.0/bin/nvcc")
KERNEL = """\
__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }
extern "C" void launch(float *x) { scale<<<1, 32>>>(x, 2.0f); }
"""

# name -> (-gencode pairs, SASS, PTX expected)
FATBINS = {
    "mixed": (
        ("compute_75,code=sm_75", "compute_90a,code=sm_90a", "compute_90,code=compute_90"),
        ("sm_75", "sm_90a"),
        ("compute_90",),
    ),
    "ptx-only": (("compute_80,code=compute_80",), (), ("compute_80",)),
    # CUDA 12.9's family-specific targets, and an architecture-specific PTX.
    "families": (
        ("compute_100f,code=sm_100f", "compute_100a,code=compute_100a", "compute_120,code=sm_120"),
        ("sm_100f", "sm_120"),
        ("compute_100a",),
    ),
}


def nvcc_library(compiler: Compiler, name: str) -> Path:
    if not os.access(NVCC, os.X_OK):
        pytest.fail(
            f"nvcc is not at {NVCC}: the fatbin tests need real fatbins from CUDA 13's nvcc "
            "(install the CUDA 13.0 toolkit, or set NVCC to another nvcc)",
            pytrace=False,
        )
    gencode = [flag for pair in FATBINS[name][0] for flag in ("-gencode", f"arch={pair}")]
    return compiler.compile(f"{name}.so", [NVCC, "-shared", "-Xcompiler", "-fPIC", *gencode], KERNEL, ".cu")


def find_cuobjdump() -> str | None:
    """cuobjdump on PATH, beside NVCC, or from the PyPI wheel nvidia-cuda-cuobjdump (nvidia/cu13/bin/cuobjdump, no
    console script; tox -e cuobjdump installs it)."""
    found = shutil.which("cuobjdump") or shutil.which("cuobjdump", path=os.path.dirname(NVCC))
    if found is not None:
        return found
    try:
        nvidia = importlib.import_module("nvidia")  # the namespace package of NVIDIA's wheels
    except ImportError:
        return None
    folders = [os.path.join(root, "cu13", "bin") for root in getattr(nvidia, "__path__", [])]
    return next((found for folder in folders if (found := shutil.which("cuobjdump", path=folder))), None)


def cuobjdump_architectures(path: Path) -> tuple[set[str], set[str]] | None:
    """SASS and PTX architectures as cuobjdump's own dump of the fatbin headers gives them ("Fatbin elf code:" ...
    "arch = sm_100f"), where installed. Not --list-elf: its file names drop the family suffix (cuobjdump 13.5 lists
    an sm_100f cubin as "x.1.sm_100.cubin" while its header dump says "arch = sm_100f")."""
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        return None
    out = subprocess.run([cuobjdump, "-elf", "-ptx", str(path)], capture_output=True, text=True, check=True).stdout
    found: dict[str, set[str]] = {"elf": set(), "ptx": set()}
    for kind, arch in re.findall(r"^Fatbin (elf|ptx) code:\n=+\narch = sm_(\d+[af]?)$", out, re.MULTILINE):
        found[kind].add(arch)
    return {f"sm_{n}" for n in found["elf"]}, {f"compute_{n}" for n in found["ptx"]}


@pytest.mark.parametrize("name", sorted(FATBINS))
def test_the_architectures_are_those_nvcc_was_asked_for(compiler: Compiler, name: str) -> None:
    path = nvcc_library(compiler, name)
    code = read_gpu_code(str(path))
    _, sass, ptx = FATBINS[name]
    assert (code.state, code.reason, code.sass, code.ptx, code.skipped) == (State.FOUND, None, sass, ptx, 0)
    assert code.containers >= 1
    listed = cuobjdump_architectures(path)
    if listed is not None:  # a comparison, not the test: the table above is the reference
        assert listed == (set(sass), set(ptx))


@pytest.mark.cuobjdump
@pytest.mark.parametrize("name", sorted(FATBINS))
def test_cuobjdump_lists_what_the_reader_reads(compiler: Compiler, name: str) -> None:
    """Opt-in (--cuobjdump, tox -e cuobjdump): NVIDIA's own cuobjdump, from the PyPI wheel nvidia-cuda-cuobjdump,
    lists the same SASS and PTX architectures as the header reader, on fatbins nvcc builds in the session."""
    if find_cuobjdump() is None:
        pytest.fail("cuobjdump is not installed: pip install nvidia-cuda-cuobjdump (tox -e cuobjdump)", pytrace=False)
    path = nvcc_library(compiler, name)
    code = read_gpu_code(str(path))
    assert cuobjdump_architectures(path) == (set(code.sass), set(code.ptx))
    assert code.sass or code.ptx  # a comparison of two empty lists would prove nothing


def test_the_section_can_be_given_by_place(compiler: Compiler) -> None:
    path = nvcc_library(compiler, "mixed")
    section = find_section(str(path), ".nv_fatbin").section
    assert section is not None
    assert read_fatbin(str(path), section.offset, section.size) == read_gpu_code(str(path))


def test_a_library_without_gpu_code_is_absent(compiler: Compiler, tmp_path: Path) -> None:
    plain = gcc(compiler, "plain.so", "-nostdlib")
    assert read_gpu_code(str(plain)) == GpuCode(
        State.ABSENT, f"{plain} has no section .nv_fatbin", str(plain), (), (), 0, 0
    )
    missing = str(tmp_path / "missing.so")
    assert read_gpu_code(missing).state == State.ABSENT
    assert read_fatbin(missing, 0, 16).state == State.ABSENT


def test_only_entry_headers_are_read(compiler: Compiler, monkeypatch: pytest.MonkeyPatch) -> None:
    path = nvcc_library(compiler, "mixed")
    section = find_section(str(path), ".nv_fatbin").section
    assert section is not None
    asked: list[int] = []
    real_pread = os.pread

    def counting_pread(fd: int, count: int, offset: int) -> bytes:
        asked.append(count)
        return real_pread(fd, count, offset)

    monkeypatch.setattr(os, "pread", counting_pread)
    assert read_fatbin(str(path), section.offset, section.size).state == State.FOUND
    assert sum(asked) < section.size // 4


# Hand-made fatbins: the layouts the real ones have, with what real ones have not shown here.


def container(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def entry(kind: int, sm: int, flags: int = 0x11, payload: bytes = b"\0" * 8, header_size: int = 64) -> bytes:
    header = bytearray(max(header_size, 48))
    struct.pack_into("<HHIQ", header, 0, kind, 0x101, header_size, len(payload))
    struct.pack_into("<I", header, 28, sm)
    struct.pack_into("<Q", header, 40, flags)
    return bytes(header) + payload


def read_bytes(tmp_path: Path, section: bytes, lead: bytes = b"ELF headers would be here") -> GpuCode:
    path = tmp_path / "section.bin"
    path.write_bytes(lead + section + b"trailing data after the section")
    return read_fatbin(str(path), len(lead), len(section))


@pytest.mark.parametrize(
    ("section", "sass", "ptx", "reason"),
    [
        pytest.param(b"", (), (), None, id="empty section"),
        pytest.param(container(), (), (), None, id="empty container"),
        pytest.param(
            container(entry(2, 80), entry(2, 80), entry(1, 80)) + b"\0" * 24 + container(entry(2, 90, 0x100011)),
            ("sm_80", "sm_90a"),
            ("compute_80",),
            None,
            id="zero padding between containers, duplicates merged",
        ),
        pytest.param(
            container(entry(9, 80), entry(2, 86)), ("sm_86",), (), None, id="unknown kinds skipped and counted"
        ),
        pytest.param(
            container(entry(2, 120), entry(2, 75)), ("sm_75", "sm_120"), (), None, id="ordered by number, not name"
        ),
        pytest.param(
            container(entry(2, 75)) + b"garbage!" * 3,
            ("sm_75",),
            (),
            "has no fatbin container at offset 0x71 (magic 0x62726167)",
            id="garbage after a container keeps what was read",
        ),
        pytest.param(
            container(entry(2, 75)) + b"\x01\x02",
            ("sm_75",),
            (),
            "has 2 stray bytes at offset 0x71 after its last fatbin container",
            id="stray bytes",
        ),
        pytest.param(
            container(entry(2, 75), entry(2, 0xFFFFFFFF)),
            ("sm_75",),
            (),
            "has a fatbin entry at offset 0x71 for SM 4294967295, which no GPU has",
            id="impossible SM",
        ),
        pytest.param(
            container(entry(2, 75, header_size=16)),
            (),
            (),
            "has a fatbin entry at offset 0x29 that runs past its container",
            id="entry header too small",
        ),
        pytest.param(
            container(entry(2, 75))[:-4],
            (),
            (),
            "has a fatbin container at offset 0x19 that runs past its section",
            id="container cut short",
        ),
        pytest.param(
            b"\0" * (2**16 + 64) + container(),
            (),
            (),
            "has more than 65536 zero bytes before offset 0x10059 in its fatbin",
            id="endless padding",
        ),
    ],
)
def test_hand_made_fatbins(
    tmp_path: Path, section: bytes, sass: tuple[str, ...], ptx: tuple[str, ...], reason: str | None
) -> None:
    code = read_bytes(tmp_path, section)
    assert (code.sass, code.ptx) == (sass, ptx)
    if reason is None:
        assert (code.state, code.reason) == (State.FOUND, None)
    else:
        assert (code.state, code.reason) == (State.ERROR, f"{tmp_path / 'section.bin'} {reason}")


def test_the_skipped_count_and_container_count(tmp_path: Path) -> None:
    code = read_bytes(tmp_path, container(entry(9, 80), entry(3, 80)) + container(entry(2, 80)))
    assert (code.containers, code.skipped) == (2, 2)


@pytest.mark.parametrize(("offset", "size"), [(-1, 16), (0, -1), (0, 10**6), (10**12, 0), (2**70, 2**70)])
def test_a_section_outside_the_file_is_an_error(tmp_path: Path, offset: int, size: int) -> None:
    path = tmp_path / "small.bin"
    path.write_bytes(container(entry(2, 75)))
    code = read_fatbin(str(path), offset, size)
    assert (code.state, code.reason) == (State.ERROR, f"{path} has no {size} bytes of fatbin at offset {offset:#x}")


def test_the_docstring_examples() -> None:
    result = doctest.testmod(fatbin, optionflags=doctest.ELLIPSIS)
    assert (result.attempted > 0, result.failed) == (True, 0)


@FUZZ
@given(data=st.binary(max_size=1024), prefix=st.sampled_from([b"", container(entry(2, 75))]))
def test_arbitrary_bytes_never_raise(tmp_path: Path, data: bytes, prefix: bytes) -> None:
    code = read_bytes(tmp_path, prefix + data)
    assert code.state in (State.FOUND, State.ERROR)
    assert (code.reason is None) == (code.state == State.FOUND)
    assert set(code.sass) <= {f"sm_{n}{s}" for n in range(10, 1000) for s in ("", "a", "f")}


@FUZZ
@given(
    edits=st.lists(st.tuples(st.integers(0, 2**16), st.binary(min_size=1, max_size=8)), min_size=1, max_size=6),
    cut=st.integers(0, 2**16),
)
def test_damaged_real_fatbins_never_raise(
    compiler: Compiler, tmp_path: Path, edits: list[tuple[int, bytes]], cut: int
) -> None:
    path = nvcc_library(compiler, "mixed")
    section = find_section(str(path), ".nv_fatbin").section
    assert section is not None
    data = bytearray(path.read_bytes()[section.offset : section.offset + section.size])
    for position, replacement in edits:
        data[position % len(data) : position % len(data) + len(replacement)] = replacement
    code = read_bytes(tmp_path, bytes(data[: max(cut, len(data) // 2)]))
    assert code.state in (State.FOUND, State.ERROR)
    assert (code.reason is None) == (code.state == State.FOUND)
