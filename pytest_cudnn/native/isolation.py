"""Run the native probes where a crash or a hang cannot hurt the caller.

The caller (pytest, the doctor) starts one child interpreter (``python -I -S``, cwd ``/``, a sanitised
LD_LIBRARY_PATH) and sends it the job list on stdin. The child forks one grandchild per job, so jobs run side
by side and each starts clean: two copies of a library with one soname never meet in one process (the first
loaded would win every later lookup of that soname). A grandchild that aborts, segfaults or outlives its
timeout is killed and reported as an error that names its library and the signal or the time it took,
with the tail of what it printed. On systems without fork the child runs the jobs one after another; the
caller's own timeout still bounds the whole run.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from typing import TYPE_CHECKING

# The child imports this module at start-up: it keeps to what the child needs (the parent side imports
# subprocess and tempfile when it runs), which halves the child's start.
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    Job = dict[str, Any]
    Result = dict[str, Any]

__all__ = ["ProbeFailure", "run_in_child", "run_jobs"]

_BOOT = (
    "import sys,json;"
    "sys.path[:]=json.loads(sys.stdin.readline());"
    "from pytest_cudnn.native.isolation import child_main;"
    "child_main()"
)
_TAIL = 400


class ProbeFailure(RuntimeError):
    """The child process itself could not run (not a library failure, which is a per-job result)."""


def run_in_child(
    jobs: Sequence[Job],
    *,
    env: Mapping[str, str],
    job_timeout: float,
    total_timeout: float,
    python: str | None = None,
) -> list[Result]:
    """Run ``jobs`` in a child interpreter; one result per job, in order, never an exception for a job."""
    import subprocess
    import tempfile

    if not jobs:
        return []
    # The child runs without site (-S) for speed, so editable installs' import hooks are absent: hand it the
    # folder this package lives in explicitly, then the caller's absolute path entries (never "" or ".").
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    search_path = [package_root] + [p for p in sys.path if p and os.path.isabs(p) and p != package_root]
    request = json.dumps(search_path) + "\n" + json.dumps({"jobs": list(jobs), "timeout": job_timeout}) + "\n"
    command = [python or sys.executable, "-I", "-S", "-c", _BOOT]
    try:
        completed = subprocess.run(
            command,
            input=request.encode(),
            capture_output=True,
            env=dict(env),
            cwd=tempfile.gettempdir() if os.name == "nt" else "/",
            timeout=total_timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout or b""
        return _collect(jobs, output, f"the probe process took longer than {total_timeout:g} s and was stopped")
    except OSError as error:
        raise ProbeFailure(f"cannot start {command[0]}: {error}") from error
    problem = None
    if completed.returncode != 0:
        problem = f"the probe process exited with status {completed.returncode}: {_tail(completed.stderr)}"
    return _collect(jobs, completed.stdout, problem)


def _collect(jobs: Sequence[Job], output: bytes, problem: str | None) -> list[Result]:
    results: dict[int, Result] = {}
    for line in output.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and isinstance(message.get("index"), int):
            results[message["index"]] = message.get("result") or {}
    missing = problem or "the probe process ended without an answer"
    return [results.get(index, {"error": f"{_describe(job)}: {missing}"}) for index, job in enumerate(jobs)]


def _describe(job: Job) -> str:
    return str(job.get("path") or job.get("name") or job.get("kind"))


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text[-_TAIL:] if text else "(no output)"


def child_main() -> None:
    """Entry point of the child interpreter: read the jobs, answer one JSON line per job."""
    request = json.loads(sys.stdin.readline())
    jobs: list[Job] = request["jobs"]
    for index, result in run_jobs(jobs, float(request["timeout"])):
        sys.stdout.write(json.dumps({"index": index, "result": result}) + "\n")
        sys.stdout.flush()


class _Running:
    """A grandchild running one job, and what it has written so far."""

    def __init__(self, job: Job) -> None:
        self.job = job
        result_read, result_write = os.pipe()
        output_read, output_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - runs in the grandchild, measured through its answers
            try:
                os.close(result_read)
                os.close(output_read)
                os.dup2(output_write, 1)
                os.dup2(output_write, 2)
                data = memoryview(json.dumps(_run_here(job)).encode())
                while data:
                    data = data[os.write(result_write, data) :]
            finally:
                os._exit(0)
        os.close(result_write)
        os.close(output_write)
        self.started = time.monotonic()
        self.buffers: dict[int, bytearray] = {result_read: bytearray(), output_read: bytearray()}
        self.result_fd = result_read
        self.open: set[int] = {result_read, output_read}

    def read(self, fd: int) -> None:
        chunk = os.read(fd, 65536)
        if chunk:
            buffer = self.buffers[fd]
            buffer.extend(chunk[: max(0, _MAX_OUTPUT - len(buffer))])
        else:
            os.close(fd)
            self.open.discard(fd)

    def finish(self, timed_out: float | None) -> Result:
        if timed_out is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        for fd in self.open:
            os.close(fd)
        self.open.clear()
        _, status = os.waitpid(self.pid, 0)
        result = bytes(self.buffers[self.result_fd])
        output = next(bytes(b) for fd, b in self.buffers.items() if fd != self.result_fd)
        return _answer(self.job, status, result, output, timed_out)


_MAX_OUTPUT = 1 << 20


def run_jobs(jobs: Sequence[Job], timeout: float) -> list[tuple[int, Result]]:
    """Run every job in its own forked process, side by side; answers in job order."""
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        return [(index, _run_here(job)) for index, job in enumerate(jobs)]
    running = {index: _Running(job) for index, job in enumerate(jobs)}
    answers: list[tuple[int, Result]] = []
    while running:
        owners = {fd: entry for entry in running.values() for fd in entry.open}
        deadline = min(entry.started for entry in running.values()) + timeout
        ready, _, _ = select.select(list(owners), [], [], max(0.0, deadline - time.monotonic()))
        for fd in ready:
            owners[fd].read(fd)
        now = time.monotonic()
        for index, entry in list(running.items()):
            if not entry.open:
                answers.append((index, entry.finish(None)))
            elif now - entry.started >= timeout:
                answers.append((index, entry.finish(timeout)))
            else:
                continue
            del running[index]
    answers.sort(key=lambda pair: pair[0])
    return answers


def _run_here(job: Job) -> Result:
    from .calls import JOBS

    try:
        return JOBS[job["kind"]](job)
    except Exception as error:  # a library call that raised in Python: report it, whatever it was
        return {"error": f"{_describe(job)}: {error.__class__.__name__}: {error}"}


def _answer(job: Job, status: int, result: bytes, output: bytes, timed_out: float | None) -> Result:
    if timed_out is not None:
        return {
            "error": f"{_describe(job)}: did not answer within {timed_out:g} s and was killed",
            "output": _tail(output),
        }
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return {"error": f"{_describe(job)}: the process was killed by {name}", "output": _tail(output)}
    try:
        answer = json.loads(result)
    except ValueError:
        code = os.WEXITSTATUS(status)
        return {"error": f"{_describe(job)}: exited with status {code} without an answer", "output": _tail(output)}
    if not isinstance(answer, dict):
        return {"error": f"{_describe(job)}: answered {answer!r}"}
    if output.strip():
        answer.setdefault("output", _tail(output))
    return answer
