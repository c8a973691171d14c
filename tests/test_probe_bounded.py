"""The bounded runner: output to EOF, a deadline that kills, a blocking reap, and no process left when the caller
is interrupted."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from pytest_cudnn.native import bounded

from .interrupts import ctrl_c_on_another_thread

pytestmark = pytest.mark.e2e  # each test runs the bounded runner on a real child process


def python(code: str, new_session: bool = False) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=new_session,
    )


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_input_is_written_and_both_outputs_read_to_the_end() -> None:
    data = os.urandom(1 << 20)  # more than a pipe holds: writing and reading must interleave
    code = "import sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(d); sys.stderr.write('done'); sys.exit(3)"
    finished = bounded.communicate(python(code), data, timeout=60)
    assert (finished.stdout == data, finished.stderr, finished.returncode) == (True, b"done", 3)
    assert (finished.timed_out, finished.input_error) == (False, None)


def test_a_process_past_its_deadline_is_killed_and_what_it_wrote_is_kept() -> None:
    process = python("import sys, time; print('started', flush=True); time.sleep(600)")
    started = time.monotonic()
    finished = bounded.communicate(process, b"", timeout=1)
    assert time.monotonic() - started < 30
    assert (finished.timed_out, finished.returncode, finished.stdout) == (True, -signal.SIGKILL, b"started\n")


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="without a pidfd only the output is bounded")
def test_a_process_that_closes_its_output_but_runs_on_is_still_bounded() -> None:
    process = python("import os, time; os.close(1); os.close(2); time.sleep(600)")
    finished = bounded.communicate(process, b"", timeout=1)
    assert (finished.timed_out, finished.returncode) == (True, -signal.SIGKILL)


def test_a_process_that_exits_without_reading_its_input_is_an_input_error_not_a_hang() -> None:
    finished = bounded.communicate(python("import sys; sys.exit(5)"), os.urandom(1 << 20), timeout=60)
    assert finished.returncode == 5
    assert not finished.timed_out


def test_an_exited_process_whose_pipes_another_process_holds_does_not_block() -> None:
    # The grandchild keeps stdout open for 600 s after its parent exits.
    code = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])"
    code += "; print('x')"
    process = python(code, new_session=True)
    started = time.monotonic()
    try:
        finished = bounded.communicate(process, b"", timeout=60)
        assert finished.stdout == b"x\n"
        assert finished.returncode == 0
        if hasattr(os, "pidfd_open"):
            assert time.monotonic() - started < 30
    finally:
        os.killpg(process.pid, signal.SIGKILL)


def test_an_interrupted_caller_kills_and_reaps_its_process(monkeypatch: pytest.MonkeyPatch) -> None:
    process = python("import time; time.sleep(600)")

    def interrupt(*args: object) -> list[object]:
        raise KeyboardInterrupt

    monkeypatch.setattr("selectors.DefaultSelector.select", interrupt)
    with pytest.raises(KeyboardInterrupt):
        bounded.communicate(process, b"", timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert gone(process.pid)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
def test_ctrl_c_that_another_thread_receives_still_ends_the_wait() -> None:
    """The kernel may hand Ctrl-C to any thread that does not block it, and Python runs the handler in the main
    thread only: the waiting thread must wake to run it, kill its process and reap it. A wait that never woke saw
    it only once the process ended by itself (here after 20 s; a hung probe's never does, and the bound was the
    run's hour)."""
    process = python("import time; time.sleep(20)")
    with ctrl_c_on_another_thread() as ctrl_c, pytest.raises(KeyboardInterrupt):
        bounded.communicate(process, b"", timeout=3600, meanwhile=ctrl_c)
    assert process.returncode == -signal.SIGKILL  # killed by the Ctrl-C's caller, not ended by itself


def pidfds() -> int:
    """The process descriptors (pidfd_open(2)) this process holds open."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile (the listing's own descriptor)
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[pidfd]"
    return count


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="Linux's /proc")
def test_an_interrupt_from_meanwhile_kills_the_process_and_closes_its_descriptors() -> None:
    """Ctrl-C while the caller's own work runs (the imports that overlap the child's answers): the process is
    killed and reaped, and the descriptor that watches its exit is closed, not left for the rest of the session."""
    before = pidfds()
    process = python("import time; time.sleep(600)")

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bounded.communicate(process, b"", timeout=60, meanwhile=interrupted)
    assert process.returncode == -signal.SIGKILL
    assert pidfds() == before


def test_run_reads_a_command_with_no_input() -> None:
    finished = bounded.run([sys.executable, "-c", "import sys; print(sys.stdin.read() == '')"], timeout=60)
    assert (finished.stdout, finished.returncode) == (b"True\n", 0)


def test_run_raises_when_the_command_cannot_start(tmp_path: object) -> None:
    with pytest.raises(OSError, match="No such file"):
        bounded.run([os.path.join(str(tmp_path), "missing")], timeout=1)
