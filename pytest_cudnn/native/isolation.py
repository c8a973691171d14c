"""Run the native probes where a crash or a hang cannot hurt the caller.

The caller (pytest, the doctor) starts one child interpreter (``python -I -S``, cwd ``/``, a sanitised
LD_LIBRARY_PATH) and sends it its jobs on stdin, each under an id, and the child answers each job under its id
(the jobs and answers are :mod:`.protocol`'s). The child forks one grandchild per job, so jobs run side
by side and each starts clean: two copies of a library with one soname never meet in one process (the first
loaded would win every later lookup of that soname). A grandchild that aborts, segfaults or outlives its
timeout is killed and reported as an error that names its library and the signal or the time it took,
with the tail of what it printed. On systems without fork the child runs the jobs one after another; the
caller's own timeout still bounds the whole run.

No probe process outlives its caller, whatever ends the caller: on Linux the child and each grandchild ask the
kernel to SIGKILL them when their parent dies (prctl PR_SET_PDEATHSIG), which covers SIGKILL and SIGTERM of the
caller, and the caller's :class:`Child` kills its process when an exception (KeyboardInterrupt) stops it.
"""

from __future__ import annotations

import io
import marshal
import os
import select
import sys
from time import monotonic

from .protocol import CRASHED, HUNG, NO_ANSWER, describe

# The child imports this module at start-up, so it imports only what the child needs: not typing (mypy reads
# this name as typing.TYPE_CHECKING), not contextlib, not signal (only a crash report needs signal names).
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    # The transport is the same for every kind of job: a job is any mapping (protocol.Job), an answer the dict the
    # child marshalled, whatever it holds (protocol's answers; the caller decodes them, probe/answers.py).
    Job = Mapping[str, Any]
    Result = dict[str, Any]

__all__ = ["Child", "ProbeFailure", "child_environment", "run_jobs", "start_child"]

# The child runs without site (-S) for speed, so editable installs' import hooks are absent: argv hands it the
# folder this package lives in, and the caller's process id for its parent-death check. It imports this module
# and arms the parent-death signal at once, while the caller is still discovering libraries, then waits for its
# jobs on stdin.
_BOOT = (
    "import sys;"
    "sys.path[:0]=sys.argv[1:2];"
    "from pytest_cudnn.native.isolation import child_main;"
    "child_main(int(sys.argv[2]))"
)
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_TAIL = 400


class ProbeFailure(RuntimeError):
    """The child process itself could not run (not a library failure, which is a per-job result)."""


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The child's variables: the caller's, less the relative LD_LIBRARY_PATH entries the loader would search
    from the current folder (the child never gets them)."""
    env = dict(environ)
    if os.name != "nt" and "LD_LIBRARY_PATH" in env:
        env["LD_LIBRARY_PATH"] = ":".join(entry for entry in env["LD_LIBRARY_PATH"].split(":") if entry.startswith("/"))
    return env


class Child:
    """The probe's child interpreter, started before its jobs are known so that its start-up overlaps the
    caller's work (importing the probe, discovery); :meth:`run` sends the jobs and collects one result per job,
    under the job's id.
    ``env`` is the caller's environment: the child gets :func:`child_environment` of it."""

    def __init__(self, env: Mapping[str, str], python: str | None = None) -> None:
        import subprocess

        # The parent-death signal fires when the *thread* that started the child ends (prctl(2)): the caller
        # starts, runs and closes a Child in one thread (probe_environment).
        self.command = [python or sys.executable, "-I", "-S", "-c", _BOOT, _PACKAGE_ROOT, str(os.getpid())]
        cwd = os.environ.get("TEMP", "C:\\") if os.name == "nt" else "/"
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=child_environment(env),
                cwd=cwd,
            )
        except OSError as error:
            raise ProbeFailure(f"cannot start {self.command[0]}: {error}") from error

    def run(
        self,
        jobs: Mapping[int, Job],
        job_timeout: float,
        total_timeout: float,
        meanwhile: Callable[[], object] | None = None,
    ) -> dict[int, Result]:
        """Each job's result; ``meanwhile`` runs once the child has its jobs (:func:`.bounded.communicate`)."""
        from .bounded import communicate

        # This package's folder, then the caller's absolute path entries (never "" or ".").
        search_path = [_PACKAGE_ROOT] + [p for p in sys.path if p and os.path.isabs(p) and p != _PACKAGE_ROOT]
        request = marshal.dumps((search_path, {id_: dict(job) for id_, job in jobs.items()}, float(job_timeout)))
        # Not communicate(timeout=...): its wait polls time.sleep through the time module (see bounded.py).
        finished = communicate(self.process, request, total_timeout, meanwhile)
        output, errors = finished.stdout, finished.stderr
        if finished.timed_out:
            stopped = f"the probe process took longer than {total_timeout:g} s and was stopped"
            return _collect(jobs, output, stopped, timed_out=True)
        if finished.input_error is not None:  # the child died before reading its jobs
            return _collect(jobs, output, f"the probe process failed: {finished.input_error}: {_tail(errors)}")
        problem = None
        if finished.returncode != 0:
            problem = f"the probe process exited with status {finished.returncode}: {_tail(errors)}"
        return _collect(jobs, output, problem)

    def close(self) -> None:
        """Kill the child if it still runs, reap it, close its pipes; safe to call more than once."""
        if self.process.returncode is None:
            try:  # noqa: SIM105 - contextlib is not imported in the child, which imports this module
                self.process.kill()
            except OSError:
                pass
            self.process.wait()  # a blocking waitpid, no polling
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def start_child(environ: Mapping[str, str], python: str | None = None) -> Child | ProbeFailure:
    """The probe's child, started now; or why it could not start, for the probe to report per job."""
    try:
        return Child(environ, python)
    except ProbeFailure as failure:
        return failure


def _collect(jobs: Mapping[int, Job], output: bytes, problem: str | None, timed_out: bool = False) -> dict[int, Result]:
    """One result per job, by its id: its answer, or an error saying why there is none. Jobs still unanswered when
    the whole child was stopped at its deadline were running then: they hung. An answer under an id that no job has
    is dropped."""
    results: dict[int, Result] = {}
    stream = io.BytesIO(output)
    while True:
        try:
            message = marshal.load(stream)
        except (EOFError, ValueError, TypeError):
            break  # the end, or a message cut short by a dying child
        if isinstance(message, tuple) and len(message) == 2 and isinstance(message[0], int):
            results[message[0]] = message[1] if isinstance(message[1], dict) else {}
    missing = problem or "the probe process ended without an answer"
    failure = HUNG if timed_out else NO_ANSWER
    return {
        id_: results.get(id_, {"error": f"{describe(job)}: {missing}", "failure": failure}) for id_, job in jobs.items()
    }


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text[-_TAIL:] if text else "(no output)"


def child_main(parent: int) -> None:
    """Entry point of the child interpreter: one marshalled (id, result) per job."""
    die_with_parent(parent)
    # marshal, not json: it is built in, so the child imports nothing to read its jobs (json costs it ~17 ms).
    path, jobs, timeout = marshal.load(sys.stdin.buffer)
    sys.path[:] = path
    from . import calls  # noqa: F401  (ctypes and the probe functions, imported once, before the forks share them)

    out = sys.stdout.buffer
    for id_, result in run_jobs(jobs, timeout):
        marshal.dump((id_, _plain(result)), out)
        out.flush()


def die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies, then make sure the parent is still ``parent``:
    it may have died between starting this process and the request (prctl(2), PR_SET_PDEATHSIG). Linux only;
    elsewhere the caller's own kill on interruption is what there is."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # the probe functions import it anyway

    try:
        ctypes.CDLL(None).prctl(1, ctypes.c_ulong(9), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return
    if os.getppid() != parent:
        os._exit(1)


class _Running:
    """A grandchild running one job, and what it has written so far."""

    def __init__(self, job: Job) -> None:
        self.job = job
        result_read, result_write = os.pipe()
        output_read, output_write = os.pipe()
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - runs in the grandchild, measured through its answers
            try:
                die_with_parent(parent)  # a fork does not inherit the parent-death signal
                os.close(result_read)
                os.close(output_read)
                os.dup2(output_write, 1)
                os.dup2(output_write, 2)
                data = memoryview(marshal.dumps(_plain(_run_here(job))))
                while data:
                    data = data[os.write(result_write, data) :]
            finally:
                os._exit(0)
        os.close(result_write)
        os.close(output_write)
        self.started = monotonic()
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
            try:  # noqa: SIM105 - contextlib is not imported in the child
                os.kill(self.pid, 9)  # SIGKILL
            except ProcessLookupError:
                pass
        for fd in self.open:
            os.close(fd)
        self.open.clear()
        _, status = os.waitpid(self.pid, 0)
        result = bytes(self.buffers[self.result_fd])
        output = next(bytes(b) for fd, b in self.buffers.items() if fd != self.result_fd)
        return _answer(self.job, status, result, output, timed_out)


_MAX_OUTPUT = 1 << 20


def run_jobs(jobs: Mapping[int, Job], timeout: float) -> list[tuple[int, Result]]:
    """Run every job in its own forked process, side by side; each answer under its job's id, in id order."""
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        return [(id_, _run_here(job)) for id_, job in sorted(jobs.items())]
    running = {id_: _Running(job) for id_, job in jobs.items()}
    answers: list[tuple[int, Result]] = []
    while running:
        owners = {fd: entry for entry in running.values() for fd in entry.open}
        deadline = min(entry.started for entry in running.values()) + timeout
        ready, _, _ = select.select(list(owners), [], [], max(0.0, deadline - monotonic()))
        for fd in ready:
            owners[fd].read(fd)
        now = monotonic()
        for id_, entry in list(running.items()):
            if not entry.open:
                answers.append((id_, entry.finish(None)))
            elif now - entry.started >= timeout:
                answers.append((id_, entry.finish(timeout)))
            else:
                continue
            del running[id_]
    answers.sort(key=lambda pair: pair[0])
    return answers


def _plain(value: Any) -> Any:
    """Only what marshal carries safely across processes: dicts, lists, str, int, float, bool, None."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def _run_here(job: Job) -> Result:
    from .calls import JOBS

    try:
        run = JOBS.get(str(job.get("kind")))  # typed per kind (protocol.Runners); here any job of any kind
        if not callable(run):
            raise KeyError(job.get("kind"))
        return dict(run(job))
    except Exception as error:  # a library call that raised in Python: report it, whatever it was
        return {"error": f"{describe(job)}: {error.__class__.__name__}: {error}"}


def _answer(job: Job, status: int, result: bytes, output: bytes, timed_out: float | None) -> Result:
    answer = _ending(job, status, result, output, timed_out)
    if output and job.get("path"):
        # What the library printed may name a dependency it could not load (cuDNN 8 prints dlerror before it
        # aborts): read all of it, not only the tail that is kept.
        from .calls import missing_libraries, own_names

        said = missing_libraries(output.decode("utf-8", "replace"), own_names(job["path"]))
        known = answer.get("missing")
        known = known if isinstance(known, list) else []
        merged = known + [name for name in said if name not in known]
        if merged:
            answer["missing"] = merged
    return answer


def _ending(job: Job, status: int, result: bytes, output: bytes, timed_out: float | None) -> Result:
    if timed_out is not None:
        return {
            "error": f"{describe(job)}: did not answer within {timed_out:g} s and was killed",
            "failure": HUNG,
            "output": _tail(output),
        }
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            import signal

            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return {
            "error": f"{describe(job)}: the process was killed by {name}",
            "failure": CRASHED,
            "output": _tail(output),
        }
    try:
        answer = marshal.loads(result)
    except (EOFError, ValueError, TypeError):
        # An exit with no answer: the library called exit(), or the answer could not be written. Nothing tells
        # which, so it is no answer rather than a crash.
        code = os.WEXITSTATUS(status)
        if len(result) >= _MAX_OUTPUT:  # an answer cut at the limit, such as NVML's for some 3,000 GPUs or more
            return {
                "error": f"{describe(job)}: its answer is longer than the {_MAX_OUTPUT:,} bytes read",
                "failure": NO_ANSWER,
                "output": _tail(output),
            }
        return {
            "error": f"{describe(job)}: exited with status {code} without an answer",
            "failure": NO_ANSWER,
            "output": _tail(output),
        }
    if not isinstance(answer, dict):
        return {"error": f"{describe(job)}: answered {answer!r}", "failure": NO_ANSWER}
    if output.strip():
        answer.setdefault("output", _tail(output))
    return answer
