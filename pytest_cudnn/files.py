"""Read a file that somebody else controls without letting it block or flood the reader; write one without
replacing, or writing into, anything but a regular file.

Snapshots are given by users; build_info.py, METADATA and cuDNN headers sit in folders anyone may have
written. A name can be a FIFO (an open waits for a writer forever), a device (/dev/zero never ends) or a
file swapped between a look and the open. So the file is opened without blocking, judged by fstat of what
was opened, never by a look before, and read up to a limit. What pytest-cudnn writes (--gpu-report, snapshot -o,
the GitHub step summary) goes through write_atomically or append_regular, which refuse any name that is not a
regular file, a symbolic link included.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from ._base.text import clip, printable

__all__ = [
    "DocumentRefused",
    "FileRefused",
    "append_regular",
    "open_regular",
    "parse_json_document",
    "read_json_document",
    "read_regular",
    "regular_or_missing",
    "size_text",
    "write_atomically",
]

_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class FileRefused(ValueError):
    """A file that is not a regular file, or larger than the reader accepts; the message says which."""

    def __init__(self, problem: str, too_large: bool = False, read_past: bool = False, mode: int | None = None) -> None:
        super().__init__(problem)
        self.mode = mode  # what stands at the path (st_mode), when it is no regular file
        self.too_large = too_large  # more than the limit: by its size, or (read_past) by what reading found
        self.read_past = read_past  # its size said less (0 for /proc files), reading went past the limit


def open_regular(path: str) -> tuple[int, int]:
    """A file descriptor of the regular file ``path`` and its size, opened without blocking. Raises OSError with
    the operating system's words when it cannot be opened, FileRefused when it is no regular file (the descriptor
    is then closed). The caller closes the descriptor."""
    fd = os.open(path, _FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refusal(path, info.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


def read_regular(path: str, limit: int, *, whole: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them. Raises OSError with the operating
    system's words when it cannot be opened or read, FileRefused when it is no regular file, or, with ``whole``,
    when it holds more (without ``whole``, its first ``limit`` bytes are enough)."""
    fd, size = open_regular(path)
    try:
        if whole and size > limit:
            raise FileRefused(f"is {size} bytes", too_large=True)
        chunks: list[bytes] = []
        left = limit + 1 if whole else limit
        while left > 0:  # st_size can be 0 for a file that holds more (/proc), or grow after fstat
            chunk = os.read(fd, min(left, 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if whole and left <= 0:
        raise FileRefused(f"holds more than {size_text(limit)}", too_large=True, read_past=True)
    return b"".join(chunks)


class DocumentRefused(ValueError):
    """Why a file is no JSON document: unreadable, too large, not UTF-8, empty, not JSON; the message says which."""


_MAX_DIGITS = 100  # memory sizes take 20; Python refuses to parse more than 4300 (sys.get_int_max_str_digits)


def read_json_document(path: str, limit: int, kind: str, utf16_hint: str = "") -> Any:
    """The JSON value in the regular file ``path`` of at most ``limit`` bytes (UTF-8, a BOM allowed). Raises
    DocumentRefused, its message naming ``kind`` ("snapshot", "report"); ``utf16_hint`` follows the UTF-16
    complaint (": write it with -o FILE")."""
    try:
        raw = read_regular(path, limit)
    except OSError as error:
        raise DocumentRefused(f"cannot be read: {error.strerror or error}") from None
    except FileRefused as refused:
        if refused.read_past:  # its size said less than it held
            raise DocumentRefused(f"{refused}, the most a {kind} can be") from None
        suffix = f"; a {kind} is at most {size_text(limit)}" if refused.too_large else ""
        raise DocumentRefused(f"{refused}{suffix}") from None
    return parse_json_document(raw, kind, utf16_hint)


def parse_json_document(raw: bytes, kind: str, utf16_hint: str = "") -> Any:
    """The JSON value in ``raw`` (UTF-8, a BOM allowed), with numbers of at most 100 digits: a file's bytes read
    within their limit, or a remote host's answer. Raises DocumentRefused as :func:`read_json_document` does."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentRefused(f"is not UTF-8 text (a UTF-16 byte-order mark{utf16_hint})")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DocumentRefused(f"is not UTF-8 text (byte {error.start})") from None
    if not text.strip():
        raise DocumentRefused("is empty")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > _MAX_DIGITS:
            raise DocumentRefused(f"has a number of {len(digits.lstrip('-'))} digits, more than any {kind} holds")
        return int(digits)

    try:
        return json.loads(text, parse_int=integer)
    except json.JSONDecodeError as error:
        # The message ends where its position starts ("Unterminated string starting at"): json's own layout, not
        # "... at at line 1".
        raise DocumentRefused(f"is not JSON: {error.msg}: line {error.lineno} column {error.colno}") from None
    except RecursionError:
        raise DocumentRefused(f"is nested too deeply to be a {kind}") from None


def size_text(count: int) -> str:
    """'16 MiB' for whole MiB, else the count of bytes."""
    return f"{count // 2**20} MiB" if count % 2**20 == 0 else f"{count} bytes"


def regular_or_missing(path: str | Path) -> bool:
    """Whether a regular file stands at ``path`` (False: nothing does, and the folder above it exists). Raises
    FileRefused, naming what stands there, when it is anything else (a symbolic link with where it points, a
    folder, a FIFO, a socket, a device), and OSError when the path cannot be looked at (a missing folder above it).

    Only ``path``'s own name is judged: a symbolic link higher up (/var/run -> /run) is followed, as everywhere."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        os.stat(Path(path).parent)  # a missing folder above is the system's own error, named
        return False
    if not stat.S_ISREG(info.st_mode):
        raise _refusal(path, info.st_mode)
    return True


def write_atomically(
    path: str | Path, text: str, *, mode: int = 0o666, make_folders: bool = False, replace: bool = True
) -> None:
    """Write beside ``path`` and rename over it: readers, and writers finishing at the same moment, see one whole
    file or another, never a mixture or half of one (rename(2) replaces atomically within a file system). The
    temporary file is removed whatever stops the write (a full disk, Ctrl-C). ``mode`` is filtered by the umask,
    as open() does; ``make_folders`` creates missing parent folders first.

    Only a regular file is replaced: anything else at ``path`` raises FileRefused (regular_or_missing) and is left
    as it was. A rename would put a file where a FIFO, a symbolic link or a device was (as root, --gpu-report
    /dev/stdout would take /dev/stdout from every later process); it never writes through any of them, so what
    was judged is a name, not something opened, and the judgement comes last, just before the rename. Something
    put at the name between the two is replaced as a name, which whoever put it there could do themselves.

    Without ``replace``, a file that exists at ``path`` is never replaced, even one put there while this one was
    written: FileExistsError. The whole file is linked into place (link(2) fails with EEXIST on an existing name),
    so of several writers racing for one new name exactly one succeeds."""
    target = Path(path)
    if make_folders:
        target.parent.mkdir(parents=True, exist_ok=True)
    # O_EXCL: a name nobody else made, never a symbolic link followed (open(2), O_CREAT and O_EXCL).
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        regular_or_missing(target)
        if replace:
            os.replace(temporary, target)
        else:
            _link_new(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _link_new(temporary: Path, target: Path) -> None:
    """``temporary`` put at the new name ``target``; FileExistsError where something is there already."""
    try:
        os.link(temporary, target)
    except OSError as error:
        if error.errno not in _NO_HARD_LINKS:
            raise
        # No hard links on this file system (link(2): EPERM "the file system does not support hard links"): the
        # name is claimed first, then replaced whole; a failure after the claim gives the name back.
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600))
        try:
            os.replace(temporary, target)
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        return
    temporary.unlink()


_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK}


# Appending opens the file itself, so what counts is fstat of what was opened; the look before only spares a
# device the open (opening some has effects: a tape rewinds, a modem line hangs up). O_NOFOLLOW: a symbolic link
# is not opened (ELOOP); O_NONBLOCK: a FIFO with no reader is not waited for (ENXIO), open(2).
_APPEND = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def append_regular(path: str | Path, text: str) -> None:
    """Add ``text`` (UTF-8) to the end of the regular file ``path``, creating it when it is missing. Raises
    FileRefused when ``path`` is no regular file (it is then left as it was, nothing written), OSError with the
    system's words when it cannot be opened or written."""
    regular_or_missing(path)
    fd = os.open(path, _APPEND, 0o666)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # put there since the look: opened, and left unwritten
            raise _refusal(path, info.st_mode)
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def _refusal(path: str | Path, mode: int) -> FileRefused:
    if stat.S_ISLNK(mode):
        try:
            kind = f"a symbolic link (to {clip(printable(os.readlink(path)), 300)})"
        except OSError:  # gone since
            kind = "a symbolic link"
    else:
        kind = next((name for test, name in _NOT_REGULAR if test(mode)), "a special file")
    return FileRefused(f"is {kind}, not a regular file", mode=mode)
