"""Run a process to its end or to a deadline, without polling.

subprocess's own deadlines (``communicate(timeout=...)``, ``run(timeout=...)``) end in ``Popen._wait``, which
polls ``time.sleep`` looked up through the time module on every turn. A test that patches ``time.sleep`` while
pytest runs in-process (pytest-rerunfailures' own suite) then sees those calls. Here the pipes are read with
``selectors`` until EOF or the deadline, the process is killed at the deadline and reaped with one blocking
``waitpid``; the clock is bound at import, so a later patch of ``time.monotonic`` changes nothing.

The wait wakes every :data:`WAKE` seconds. A signal the kernel hands to another thread of the process (signal(7):
any thread that does not block it) only sets a flag there, since "Python signal handlers are always executed in
the main Python thread" (Python docs, signal), and so does one that arrives between the last look and the
``select``: a wait that never woke slept through Ctrl-C until the deadline. Between turns the handler runs.

Caller side only: the probe's child interpreter never imports this module (see isolation.py).
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from time import monotonic

__all__ = ["WAKE", "Finished", "communicate", "run"]

# A pipe the selector reports writable takes this much without blocking (POSIX PIPE_BUF; Linux has 4096).
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)
_CHUNK = 65536
# Seconds between looks for a signal another thread received: what Ctrl-C may take at most to end a wait.
WAKE = 0.2


@dataclass(frozen=True)
class Finished:
    """How a process ended, and everything it wrote."""

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool  # it was still running at the deadline and was killed
    input_error: OSError | None = None  # its input could not be written: it died (or closed stdin) first


def run(
    command: Sequence[str], timeout: float, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> Finished:
    """Run ``command`` with no input; raises OSError when it cannot start."""
    process = subprocess.Popen(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=None if env is None else dict(env),
        cwd=cwd,
    )
    return communicate(process, b"", timeout)


def communicate(
    process: subprocess.Popen[bytes], data: bytes, timeout: float, meanwhile: Callable[[], object] | None = None
) -> Finished:
    """Write ``data`` to the process, read its output until EOF, kill it at ``timeout`` seconds, reap it.
    ``meanwhile`` is called once the process has all of ``data``, while it works: the caller's own work (imports
    the answers will need) then overlaps the process's instead of following it; whatever it raises is dropped.

    Interrupted (KeyboardInterrupt, SystemExit, anything), it kills and reaps the process before the exception
    goes on: a caller that stops waiting leaves no process behind.
    """
    deadline = monotonic() + timeout
    talk: _Talk | None = None
    try:
        with selectors.DefaultSelector() as selector:
            talk = _Talk(process, data, selector, meanwhile)
            timed_out = talk.run(deadline)
            if timed_out:
                _kill(process)
            returncode = process.wait()  # one blocking waitpid: no polling
            talk.drain()
    except BaseException:
        _kill(process)
        process.wait()
        raise
    finally:
        if talk is not None and talk.exit_fd is not None:
            os.close(talk.exit_fd)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    return Finished(returncode, *talk.outputs(), timed_out, talk.input_error)


class _Talk:
    """One process's pipes and exit, watched by one selector: its input written, its output read to EOF."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        data: bytes,
        selector: selectors.BaseSelector,
        meanwhile: Callable[[], object] | None,
    ) -> None:
        self.process = process
        self.selector = selector
        self.meanwhile = meanwhile
        self.stdout_fd = process.stdout.fileno() if process.stdout is not None else -1
        self.stderr_fd = process.stderr.fileno() if process.stderr is not None else -1
        self.output = {fd: bytearray() for fd in (self.stdout_fd, self.stderr_fd) if fd >= 0}
        self.reading = set(self.output)
        self.pending = memoryview(data)
        self.input_error: OSError | None = None
        for fd in self.reading:
            selector.register(fd, selectors.EVENT_READ)
        self.stdin_fd = -1
        self.writing = process.stdin is not None and bool(self.pending)
        if process.stdin is not None:
            if self.writing:
                self.stdin_fd = process.stdin.fileno()
                selector.register(self.stdin_fd, selectors.EVENT_WRITE)
            else:
                process.stdin.close()
        self.exit_fd = _exit_fd(process)
        if self.exit_fd is not None:
            try:
                selector.register(self.exit_fd, selectors.EVENT_READ)
            except BaseException:  # not yet the caller's to close
                os.close(self.exit_fd)
                raise
        self.exited = self.exit_fd is None  # without a pidfd the exit is awaited after the output ends

    def run(self, deadline: float) -> bool:
        """Until the output ends and the process exits, or the deadline: whether the deadline came first. With no
        input to write, ``meanwhile`` runs first (here, not in the constructor: whatever it raises, Ctrl-C
        included, then finds the caller holding this object, which closes its descriptor)."""
        if not self.writing:
            self._meanwhile()
        while self.reading or self.writing or not self.exited:
            remaining = deadline - monotonic()
            if remaining <= 0:
                return True
            for key, _ in self.selector.select(min(remaining, WAKE)):  # a pending Ctrl-C is run between turns
                if key.fd == self.exit_fd:
                    self.exited = True
                    self.selector.unregister(key.fd)
                elif key.fd == self.stdin_fd:
                    self._write()
                else:
                    _read(key.fd, self.output, self.reading, self.selector)
            if self.exit_fd is not None and self.exited and self.reading:
                # It has exited, yet its pipes are open: a process it started holds them. Take what is there and
                # stop, rather than wait on a writer that is not the process.
                return False
        return False

    def _write(self) -> None:
        try:
            self.pending = self.pending[os.write(self.stdin_fd, self.pending[:_PIPE_BUF]) :]
        except OSError as error:  # BrokenPipeError: it ended, or closed its input, first
            self.input_error, self.pending = error, self.pending[:0]
        if not self.pending:
            self.writing = False
            self.selector.unregister(self.stdin_fd)
            self.process.stdin.close()  # type: ignore[union-attr]
            self._meanwhile()

    def _meanwhile(self) -> None:
        _call(self.meanwhile)
        self.meanwhile = None

    def drain(self) -> None:
        """What is left in the pipes once the process is reaped; bounded, in case another writer still holds them."""
        for _ in range(256):
            ready = [key.fd for key, _ in self.selector.select(0) if key.fd in self.reading]
            if not ready:
                break
            for fd in ready:
                _read(fd, self.output, self.reading, self.selector)

    def outputs(self) -> tuple[bytes, bytes]:
        return bytes(self.output.get(self.stdout_fd, b"")), bytes(self.output.get(self.stderr_fd, b""))


def _call(meanwhile: Callable[[], object] | None) -> None:
    """Run ``meanwhile``; what it raises is the caller's to meet again when it does the same work itself (an import
    that fails here fails again, and is said, where it is used)."""
    if meanwhile is not None:
        with contextlib.suppress(Exception):
            meanwhile()


def _read(fd: int, output: dict[int, bytearray], reading: set[int], selector: selectors.BaseSelector) -> None:
    chunk = os.read(fd, _CHUNK)
    if chunk:
        output[fd] += chunk
    else:
        selector.unregister(fd)
        reading.discard(fd)


def _exit_fd(process: subprocess.Popen[bytes]) -> int | None:
    """A descriptor that becomes readable when the process exits (pidfd_open(2), Linux 5.3), so the deadline
    also bounds a process that closed its output but goes on running; None where there is none."""
    try:
        return os.pidfd_open(process.pid)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):  # not Linux, an old kernel, or a seccomp filter refusing it
        return None


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.returncode is None:
        with contextlib.suppress(OSError):  # already gone
            process.kill()
