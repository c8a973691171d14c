"""Calls into a vendor library (NVML, the CUDA runtime, cuDNN) from the pytest process, each bounded in time and
interruptible: a call that does not return in time is a stated error naming the call and the library, never a
hang, and Ctrl-C still ends the run.

Why a worker thread. The session-start probe runs libraries in child processes it can kill (native/); the live
reads and the handle fixtures cannot: a cuDNN handle is of use only in the process that created it, and free
memory is read where the test runs. Inside the process, a foreign call cannot be interrupted: Python runs signal
handlers only in the main thread, between bytecodes, so "a long-running calculation implemented purely in C ...
may run uninterrupted for an arbitrary amount of time" (Python docs, signal, "Execution of Python signal
handlers"), and neither SIGALRM nor Ctrl-C can stop it. So each call runs on a daemon thread, and the caller waits
for it with a timeout:

* ctypes releases the GIL for the duration of a call through a ``CDLL`` function (ctypes docs: only ``PyDLL``
  keeps it), so the waiting thread keeps running while the call blocks;
* the wait is a lock acquisition, which a signal interrupts on POSIX (threading docs, ``Lock.acquire``: "Lock
  acquisition can now be interrupted by signals on POSIX"), so Ctrl-C raises KeyboardInterrupt in the waiting
  thread at once;
* the worker is started with the asynchronous signals blocked (a thread inherits its creator's signal mask,
  pthread_create(3)), and "a process-directed signal may be delivered to any one of the threads that does not
  currently have the signal blocked" (signal(7)): SIGINT, SIGTERM or pytest-timeout's SIGALRM reach the waiting
  thread, never a worker stuck in a call, where CPython's handler would only set a flag nobody looks at;
* the wait wakes every :data:`WAKE` seconds to look for a signal: the kernel may hand a process's signal to any
  thread that does not block it (signal(7)), such as a framework's thread pool or a test's own thread, and "Python
  signal handlers are always executed in the main Python thread ... even if the signal was received in another
  thread" (Python docs, signal): the thread that received it only sets a flag, and a waiting main thread sleeps on.
  The same holds for a signal that arrives between the waiting thread's last look and its going to sleep. A wait
  that never woke slept through Ctrl-C for the whole bound (an hour at ``--gpu-probe-timeout 3600``);
* a daemon thread does not keep the interpreter from exiting (threading docs), so a stuck one is abandoned.

After a timeout the library is given up for the rest of the process: the stuck thread may hold the library's own
locks, so a later call would most likely block as well. Every later call through it fails at once with the same
stated error, and its shutdown (``nvmlShutdown``, ``cudnnDestroy``) is not attempted; a call that is still running
when the session ends (its wait was interrupted) also keeps the shutdown from being called.

The bound is the run's ``--gpu-probe-timeout`` (ini ``gpu_probe_timeout``, default 10 s), the same time the probe
gives each library: one figure for "how long may a GPU library take to answer".

What a thread cannot bound: loading. CPython holds the GIL across ``dlopen`` (measured on 3.11: a library whose
constructor sleeps 2 s, loaded on another thread, stops the main thread for those 2 s), so libraries are loaded by
the caller, by absolute path; a constructor that hangs hangs the process, as it would in any program linking it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from time import monotonic as _clock  # bound at import: a test's later patch of time.monotonic changes nothing
from typing import Any, TypeVar

__all__ = ["WAKE", "Hung", "Library", "calling", "library"]

T = TypeVar("T")

# The asynchronous signals a process is sent or its terminal and timers raise, which Python code may handle
# (signal(7), "Standard signals"). Signals raised by a fault in the thread itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL)
# are left alone: blocked, the kernel kills the process at once instead of running faulthandler's handler. A fixed,
# short list: pthread_sigmask hands the previous mask back as a set of enum members, which costs about 2 us a
# signal, on every call.
_BLOCKED = (
    {
        getattr(signal, name)
        for name in (
            "SIGINT",
            "SIGTERM",
            "SIGHUP",
            "SIGQUIT",
            "SIGALRM",
            "SIGVTALRM",
            "SIGPROF",
            "SIGUSR1",
            "SIGUSR2",
            "SIGCHLD",
            "SIGWINCH",
            "SIGPIPE",
            "SIGIO",
            "SIGURG",
        )
        if hasattr(signal, name)
    }
    if hasattr(signal, "pthread_sigmask")
    else set()
)


# Seconds between the waiting thread's looks for a signal that another thread handled: what Ctrl-C may take at most to
# end a bounded call, and a wake-up five times a second while one runs, which costs nothing measurable.
WAKE = 0.2


class Hung(Exception):
    """A call into a library that did not return in time; the library is given up for the process."""

    def __init__(self, call: str, library: str, seconds: float) -> None:
        super().__init__(
            f"{call} did not return within {seconds:g} s (--gpu-probe-timeout) in {library}; "
            "it is not called again in this process"
        )
        self.call = call
        self.library = library
        self.seconds = seconds


class _Attempt:
    """One call on its worker thread: what it is calling now, and how it ended."""

    def __init__(self, call: str, library: str) -> None:
        self.call = call
        self.library = library
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


_CURRENT = threading.local()  # the attempt a worker thread runs


def calling(call: str, library: str | None = None) -> None:
    """Say, from inside a bounded call, which foreign call comes next (and in which library, when it is another
    one): a timeout then names it. Outside a bounded call it does nothing."""
    attempt: _Attempt | None = getattr(_CURRENT, "attempt", None)
    if attempt is not None:
        attempt.call = call
        if library is not None:
            attempt.library = library


class Library:
    """A vendor library as this process calls it: ``path`` is how errors name it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.hung: Hung | None = None
        self._running = 0
        self._lock = threading.Lock()

    @property
    def idle(self) -> bool:
        """No call is running through it and none ever hung: it may be shut down."""
        return self.hung is None and self._running == 0

    def call(self, timeout: float, call: str, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` on a worker thread, waited for ``timeout`` seconds. Its exception is raised here;
        past the timeout, :class:`Hung`, and again at once on every later call."""
        if self.hung is not None:
            raise Hung(self.hung.call, self.hung.library, self.hung.seconds)
        attempt = _Attempt(call, self.path)
        worker = threading.Thread(
            target=self._run, args=(attempt, function, args), name=f"pytest-cudnn {call}", daemon=True
        )
        with self._lock:
            self._running += 1
        started = False
        try:
            with _signals_blocked():
                worker.start()
                started = True
        except BaseException:
            if not started:  # no thread will count it down
                self._finished()
            raise
        end = _clock() + timeout
        while not attempt.done.wait(min(WAKE, max(0.0, end - _clock()))):  # a pending Ctrl-C is run between turns
            if _clock() >= end:
                self.hung = Hung(attempt.call, attempt.library, timeout)
                raise Hung(attempt.call, attempt.library, timeout)
        # Past its last line already: joined, so that no thread outlives the call (a thread-leak check run
        # after each test, such as pytest-threadleak's, would otherwise see one now and then).
        worker.join(timeout)
        if attempt.error is not None:
            raise attempt.error
        result: T = attempt.result
        return result

    def _run(self, attempt: _Attempt, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
        _CURRENT.attempt = attempt
        try:
            attempt.result = function(*args)
        except BaseException as error:  # handed to the caller, which raises it
            attempt.error = error
        finally:
            self._finished()
            attempt.done.set()

    def _finished(self) -> None:
        with self._lock:
            self._running -= 1


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """The calling thread's asynchronous signals blocked, so that a thread started here inherits the mask; on
    leaving, a signal that arrived meanwhile is delivered here (CPython runs its handler when the mask is
    restored).

    The mask is read first, changing nothing, and then changed inside the ``try``: CPython's pthread_sigmask runs
    the handlers of signals already received once it has set the new mask (signalmodule.c: "if signals was
    unblocked, signal handlers have been called"), so a KeyboardInterrupt that another thread received a moment
    before is raised by the very call that blocks, and the mask must still be put back; else this thread would
    block Ctrl-C, SIGTERM and pytest-timeout's SIGALRM for the rest of the process."""
    if not _BLOCKED:  # no pthread_sigmask (Windows): no mask to set
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


_LIBRARIES: dict[str, Library] = {}
_REGISTRY = threading.Lock()


def library(path: str) -> Library:
    """The process's one :class:`Library` for ``path``: a library given up stays given up for every caller."""
    with _REGISTRY:
        found = _LIBRARIES.get(path)
        if found is None:
            found = _LIBRARIES[path] = Library(path)
        return found
