"""Where pytest-cudnn may write: the one writer of ``pytest_cudnn.files`` that --gpu-report, ``snapshot -o`` and the
GitHub step summary share. Anything at the path that is not a regular file (a FIFO, a symbolic link, a folder, a
socket, a device) is refused with a reason, and left exactly as it was: no rename over it, no write through it."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn import files
from pytest_cudnn.files import FileRefused

from .test_snapshot_files import _in_thread

# /dev/full's numbers (Linux Documentation/admin-guide/devices.txt: char 1, minor 7).
_FULL = os.makedev(1, 7)


@contextlib.contextmanager
def _device(folder: Path) -> Iterator[Path]:
    """A character device that must be refused: a stand-in for /dev/full made in ``folder`` where we may (root),
    else /dev/null itself, but only where this process could not replace it even if the writer tried."""
    stand_in = folder / "full"
    try:
        os.mknod(stand_in, stat.S_IFCHR | 0o600, _FULL)
    except PermissionError:
        if os.access("/dev", os.W_OK):  # pragma: no cover - root without CAP_MKNOD
            pytest.skip("cannot make a device stand-in here, and /dev/null could be replaced")
        yield Path(os.devnull)
    else:
        yield stand_in


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "fifo")
    return folder / "fifo"


def _symlink(folder: Path, to: Path) -> Path:
    (folder / "link").symlink_to(to)
    return folder / "link"


def _inside(folder: Path) -> Path:
    (folder / "real.json").write_text("user's own\n")
    return _symlink(folder, folder / "real.json")


def _outside(folder: Path) -> Path:
    elsewhere = folder.parent / f"{folder.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "real.json").write_text("user's own\n")
    return _symlink(folder, elsewhere / "real.json")


def _folder(folder: Path) -> Path:
    (folder / "sub").mkdir()
    (folder / "sub" / "inside.txt").write_text("user's own\n")
    return folder / "sub"


@contextlib.contextmanager
def _socket(folder: Path) -> Iterator[Path]:
    here = Path.cwd()
    os.chdir(folder)  # a relative name: sun_path holds 108 bytes, fewer than a test's tmp_path can take
    try:
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind("sock")
            yield folder / "sock"
    finally:
        os.chdir(here)


@contextlib.contextmanager
def target(kind: str, folder: Path) -> Iterator[Path]:
    """A path of ``kind`` in ``folder``, alive for the with block (a socket bound, a FIFO's reader open)."""
    if kind == "device":
        with _device(folder) as path:
            yield path
    elif kind == "socket":
        with _socket(folder) as path:
            yield path
    elif kind == "FIFO with a reader":
        fifo = _fifo(folder)
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            yield fifo
            with contextlib.suppress(BlockingIOError):  # still open for writing elsewhere: nothing in it
                assert os.read(reader, 1) == b"", "written into the FIFO"
        finally:
            os.close(reader)
    else:
        makers: dict[str, Callable[[Path], Path]] = {
            "FIFO": _fifo,
            "symlink inside": _inside,
            "symlink outside": _outside,
            "dangling symlink": lambda f: _symlink(f, f / "missing.json"),
            "symlink to a folder": lambda f: _symlink(f, _folder(f)),
            "folder": _folder,
        }
        yield makers[kind](folder)


def state(path: Path) -> tuple[Any, ...]:
    """What must not change: the node's type and mode, its device numbers, and what it holds or points to."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        held: Any = (os.readlink(path), state(path.resolve()) if path.exists() else None)
    elif stat.S_ISDIR(info.st_mode):
        held = sorted((child.name, state(child)) for child in path.iterdir())
    elif stat.S_ISREG(info.st_mode):
        held = path.read_bytes()
    else:
        held = None
    return info.st_mode, info.st_rdev, info.st_ino, held


REFUSED = [
    pytest.param("FIFO", "is a named pipe (FIFO), not a regular file", id="FIFO"),
    pytest.param("FIFO with a reader", "is a named pipe (FIFO), not a regular file", id="FIFO-with-a-reader"),
    pytest.param("symlink inside", "is a symbolic link (to {folder}/real.json), not a regular file", id="link-in"),
    pytest.param(
        "symlink outside", "is a symbolic link (to {folder}-elsewhere/real.json), not a regular file", id="link-out"
    ),
    pytest.param(
        "dangling symlink", "is a symbolic link (to {folder}/missing.json), not a regular file", id="dangling"
    ),
    pytest.param("symlink to a folder", "is a symbolic link (to {folder}/sub), not a regular file", id="link-folder"),
    pytest.param("folder", "is a folder, not a regular file", id="folder"),
    pytest.param("socket", "is a socket, not a regular file", id="socket"),
    pytest.param("device", "is a character device, not a regular file", id="device"),
]


# The writer, the appender and the check made before either (at the start of a run, before a probe).
ACTS: dict[str, Callable[[Path], object]] = {
    "write": lambda path: files.write_atomically(path, '{"report": true}\n'),
    "append": lambda path: files.append_regular(path, "## GPU stack\n"),
    "check": files.regular_or_missing,
}


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize(("kind", "reason"), REFUSED)
def test_what_is_no_regular_file_is_refused_and_left_as_it_was(
    tmp_path: Path, kind: str, reason: str, act: str
) -> None:
    with target(kind, tmp_path) as path:
        before = state(path)
        # In a thread: the old open(path, "a") waited for ever for a FIFO's reader.
        outcome = _in_thread(lambda: ACTS[act](path))
        assert isinstance(outcome, FileRefused), outcome
        assert str(outcome) == reason.format(folder=tmp_path)
        assert state(path) == before
    assert not [name for name in os.listdir(path.parent) if name.endswith(".tmp")]


# Not the writer: should it ever regress to renaming over what it finds, it would take /dev/null from a root
# machine. The device stand-in above covers it.
@pytest.mark.parametrize("act", ["append", "check"])
def test_dev_null_is_refused_and_left_as_it_was(act: str) -> None:
    before = os.lstat(os.devnull)
    with pytest.raises(FileRefused, match=r"^is a character device, not a regular file$"):
        ACTS[act](Path(os.devnull))
    after = os.lstat(os.devnull)
    assert (after.st_mode, after.st_rdev, after.st_ino) == (before.st_mode, before.st_rdev, before.st_ino)
    assert stat.S_ISCHR(after.st_mode)


def test_a_missing_file_in_an_existing_folder_is_written_and_a_regular_file_replaced(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    assert files.regular_or_missing(path) is False
    files.write_atomically(path, "first\n", mode=0o600)
    assert path.read_text() == "first\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert files.regular_or_missing(path) is True
    files.write_atomically(path, "second\n")
    assert path.read_text() == "second\n"
    assert os.listdir(tmp_path) == ["report.json"]


def test_an_append_creates_a_missing_file_and_adds_to_a_regular_one(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    files.append_regular(path, "one\n")
    files.append_regular(path, "two ✓\n")
    assert path.read_text(encoding="utf-8") == "one\ntwo ✓\n"


def test_a_symlinked_folder_above_the_file_is_followed(tmp_path: Path) -> None:
    # Only the last name is judged: /var/run -> /run and a CI's symlinked workspace are ordinary.
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real")
    files.write_atomically(tmp_path / "via" / "report.json", "whole\n")
    files.append_regular(tmp_path / "via" / "summary.md", "line\n")
    assert sorted(os.listdir(tmp_path / "real")) == ["report.json", "summary.md"]


def test_a_symlink_target_is_shown_printable(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("evil\x1b[31m")
    with pytest.raises(FileRefused) as refused:
        files.regular_or_missing(tmp_path / "link")
    assert str(refused.value) == "is a symbolic link (to evil\\x1b[31m), not a regular file"


def test_a_missing_folder_above_is_the_systems_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    for folder in (tmp_path / "missing", tmp_path / "dangling"):
        with pytest.raises(FileNotFoundError) as missing:
            files.regular_or_missing(folder / "report.json")
        assert missing.value.filename == str(folder)
        with pytest.raises(FileNotFoundError):
            files.append_regular(folder / "summary.md", "x")
    assert sorted(os.listdir(tmp_path)) == ["dangling"]


def test_a_new_file_is_never_written_over_an_existing_one_with_or_without_hard_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_cudnn.files import write_atomically

    target = tmp_path / "snap.json"
    write_atomically(target, "first", replace=False)
    with pytest.raises(FileExistsError):
        write_atomically(target, "second", replace=False)
    assert target.read_text() == "first"

    def no_links(source: object, destination: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")  # a file system without hard links

    monkeypatch.setattr(os, "link", no_links)
    other = tmp_path / "other.json"
    write_atomically(other, "made", replace=False)
    with pytest.raises(FileExistsError):
        write_atomically(other, "again", replace=False)
    assert other.read_text() == "made"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["other.json", "snap.json"]
