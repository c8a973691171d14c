"""The wheel reader (:mod:`pytest_cudnn.probe.wheels`): RECORD lines, hashes as RECORD writes them, and a real
nvidia wheel of this venv read against its own RECORD."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import time
from pathlib import Path

import pytest

from pytest_cudnn.environment import Distribution, FrameworkBuild, LoadedLibrary, State
from pytest_cudnn.probe.wheels import read_wheels, record_lines, sha256_of


def test_record_lines_keep_sizes_and_sha256_only() -> None:
    text = 'a/b.so,sha256=xyz,12\nc/d.py,md5=abc,3\ne.dist-info/RECORD,,\n\n"f,g",sha256=q,99999999999999999999\n'
    assert record_lines(text) == [
        ("a/b.so", 12, "xyz"),
        ("c/d.py", 3, None),
        ("e.dist-info/RECORD", None, None),
        ("f,g", None, "q"),  # a size too long to be one is none
    ]


def test_damaged_and_absolute_record_lines_are_skipped_not_raised() -> None:
    text = 'a.so,sha256=x,1\n"unterminated,sha256=y,2\n/etc/passwd,sha256=z,3\nb.so,sha256=w,4\n'
    lines = record_lines(text)
    assert ("a.so", 1, "x") in lines
    assert all(not path.startswith("/") for path, _, _ in lines)


def test_a_file_over_the_limit_is_not_hashed(tmp_path: Path) -> None:
    path = tmp_path / "libx.so"
    path.write_bytes(b"x" * 100)
    assert sha256_of(str(path), limit=99) is None
    expected = base64.urlsafe_b64encode(hashlib.sha256(b"x" * 100).digest()).rstrip(b"=").decode()
    assert sha256_of(str(path), limit=100) == expected  # as RECORD writes it: urlsafe base64, no padding
    assert sha256_of(str(tmp_path)) is None  # no regular file


def _real_cudart() -> tuple[str, Distribution]:
    try:
        dist = importlib.metadata.distribution("nvidia-cuda-runtime-cu12")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("nvidia-cuda-runtime-cu12 is not installed in this venv")
    site = str(dist.locate_file(""))
    path = os.path.join(site, "nvidia", "cuda_runtime", "lib", "libcudart.so.12")
    if not os.path.isfile(path):
        pytest.skip(f"{path} is not there")
    return path, Distribution(dist.metadata["Name"], dist.version, site)


def test_a_real_wheel_file_matches_its_own_record_and_costs_milliseconds() -> None:
    path, dist = _real_cudart()
    load = LoadedLibrary("libcudart.so.12", None, "preload", True, path, "test", ())
    build = FrameworkBuild("jax", State.FOUND, None, "jax", "0.10.2", None, True, None, None, (), (), (load,))
    started = time.perf_counter()
    files, checks = read_wheels([build], [dist])
    spent = time.perf_counter() - started
    [file] = files
    [entry] = file.listed_by
    assert (entry.distribution, entry.size) == (dist.name, os.path.getsize(path))
    assert file.sha256 is not None
    assert file.sha256 == entry.sha256
    assert checks == ()  # its file is its own: its RECORD is not read whole (issue 28)
    assert spent < 1.0, spent  # measured 1.1 ms warm: one RECORD (104 files), one 741 KB hash, a stat a file


def test_a_file_another_wheel_overwrote_is_told_by_its_hash(tmp_path: Path) -> None:
    site = tmp_path / "site"
    lib = site / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"cu12 build")
    for name, version, content in (
        ("nvidia-cudnn-cu13", "9.26.0.51", b"cu13 build"),
        ("nvidia-cudnn-cu12", "9.28.0.50", b"cu12 build"),
    ):
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (lib / "content").write_bytes(content)
        digest = sha256_of(str(lib / "content"))
        (info / "RECORD").write_text(f"nvidia/cudnn/lib/libcudnn.so.9,sha256={digest},{len(content)}\n")
    (lib / "content").unlink()
    dists = [
        Distribution("nvidia-cudnn-cu13", "9.26.0.51", str(site)),
        Distribution("nvidia-cudnn-cu12", "9.28.0.50", str(site)),
    ]
    path = str(lib / "libcudnn.so.9")
    load = LoadedLibrary("libcudnn.so.9", None, "DT_NEEDED", True, path, "test", ())
    build = FrameworkBuild("torch", State.FOUND, None, "torch", "2.15.0", None, True, None, None, (), (), (load,))
    [file], checks = read_wheels([build], dists)
    assert [(e.distribution, e.sha256 == file.sha256) for e in file.listed_by] == [
        ("nvidia-cudnn-cu13", False),  # same size, another hash
        ("nvidia-cudnn-cu12", True),
    ]
    # Only the RECORD the loaded file contradicts is checked whole.
    assert {c.distribution: c.differing for c in checks} == {"nvidia-cudnn-cu13": ("nvidia/cudnn/lib/libcudnn.so.9",)}


def _one_wheel(tmp_path: Path, record: str) -> tuple[FrameworkBuild, list[Distribution], Path]:
    site = tmp_path / "site"
    lib = site / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"cu13 build")
    info = site / "nvidia_cudnn_cu13-9.26.0.51.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.26.0.51\n")
    (info / "RECORD").write_text(record)
    load = LoadedLibrary("libcudnn.so.9", None, "DT_NEEDED", True, str(lib / "libcudnn.so.9"), "test", ())
    build = FrameworkBuild("torch", State.FOUND, None, "torch", "2.15.0", None, True, None, None, (), (), (load,))
    return build, [Distribution("nvidia-cudnn-cu13", "9.26.0.51", str(site))], info / "RECORD"


def test_a_record_path_that_leaves_the_site_is_never_looked_at(tmp_path: Path) -> None:
    # Field test A7: nvidia/../../../etc/passwd was stat'ed outside the site and reported as the wheel's file.
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    record = "nvidia/cudnn/lib/libcudnn.so.9,,999\nnvidia/../../outside.txt,,1\n"  # the loaded file disagrees
    build, dists, _ = _one_wheel(tmp_path, record)
    _, [check] = read_wheels([build], dists)
    assert check.differing == ("nvidia/cudnn/lib/libcudnn.so.9",)
    assert check.files == 1  # the line that leaves the site is no file of this wheel's


def test_a_record_too_large_to_read_is_said_in_a_note(tmp_path: Path) -> None:
    from pytest_cudnn.probe.wheels import RECORD_LIMIT, record_notes

    build, dists, record = _one_wheel(tmp_path, "nvidia/cudnn/lib/libcudnn.so.9,,10\n" + "x,,1\n" * (RECORD_LIMIT // 5))
    files, checks = read_wheels([build], dists)
    assert (files, checks) == ((), ())  # nothing read from it
    [note] = record_notes([build], dists)
    assert note.startswith(f"{record} is ")
    assert note.endswith("the files it lists were not checked against the disk")
