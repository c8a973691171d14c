"""Child processes that a test stops with SIGINT, as a terminal's Ctrl-C does.

An ignored signal stays ignored across fork and execve (signal(7)), and CPython installs its KeyboardInterrupt
handler only when SIGINT is not ignored at start-up (the signal module's documentation). So when pytest itself
starts with SIGINT ignored (``cmd &`` in a non-interactive shell, nohup-style launchers, some CI runners), every
child it starts ignores SIGINT too, and a test that sends one waits for an exit that never comes. Popen's
``restore_signals`` restores SIGPIPE, SIGXFZ and SIGXFSZ only, and ``preexec_fn`` is unsafe where threads run
(xdist's execnet runs one): the child is started through a short interpreter that gives SIGINT its default
disposition back and then execs the command, in the same process."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

_EXEC = "import os, signal, sys; signal.signal(signal.SIGINT, signal.{}); os.execvp(sys.argv[1], sys.argv[1:])"


def interruptible(command: Sequence[str]) -> list[str]:
    """``command``, run so that SIGINT reaches it whatever the test session's own disposition of SIGINT is."""
    return [sys.executable, "-c", _EXEC.format("SIG_DFL"), *command]


def sigint_ignored(command: Sequence[str]) -> list[str]:
    """``command``, started with SIGINT ignored, as a background job of a non-interactive shell is."""
    return [sys.executable, "-c", _EXEC.format("SIG_IGN"), *command]


@contextmanager
def ctrl_c_on_another_thread(after: float = 0.3) -> Iterator[Callable[[], None]]:
    """Python's own Ctrl-C handler installed, and a function that makes another thread of this process receive
    SIGINT ``after`` seconds later, by then most likely while the main thread sleeps in a wait: the kernel hands a
    process's signal to any thread that does not block it (signal(7)), such as a framework's thread pool. That
    thread blocks every other signal, so pytest-timeout's SIGALRM still reaches the main thread."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    go, done = threading.Event(), threading.Event()

    def receive() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, signal.valid_signals() - {signal.SIGINT})
        if go.wait(600) and not done.wait(after):
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    thread = threading.Thread(target=receive, name="bystander", daemon=True)
    thread.start()
    try:
        yield go.set
    finally:
        done.set()
        go.set()
        thread.join()
        signal.signal(signal.SIGINT, previous)
