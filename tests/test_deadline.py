"""The bound on calls into vendor libraries from the pytest process: a call's value or exception comes back, a
call past its bound is a stated error and its library is given up, a signal reaches the waiting thread."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from pytest_cudnn._base import deadline

from .interrupts import ctrl_c_on_another_thread


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of the test: workers blocked on it finish, so no test leaves a thread behind."""
    event = threading.Event()
    yield event
    event.set()


def test_a_call_gives_back_its_value_and_its_exception_and_leaves_no_thread() -> None:
    library = deadline.Library("/opt/lib/libanswer.so")
    assert library.call(60, "answer", lambda a, b: a + b, 40, 2) == 42
    with pytest.raises(ZeroDivisionError):
        library.call(60, "divide", lambda: 1 // 0)
    # Its own workers, by name: a thread another test abandoned on purpose may end meanwhile on this xdist worker.
    assert [t.name for t in threading.enumerate() if t.name in ("pytest-cudnn answer", "pytest-cudnn divide")] == []
    assert library.idle


def test_a_call_past_its_bound_is_named_and_the_library_is_not_called_again(release: threading.Event) -> None:
    library = deadline.Library("/usr/lib/libnvidia-ml.so.1")
    calls = []

    def stuck() -> None:
        calls.append("stuck")
        deadline.calling("nvmlDeviceGetMemoryInfo")
        release.wait()

    with pytest.raises(deadline.Hung) as hung:
        library.call(0.01, "nvmlDeviceGetHandleByUUID", stuck)
    assert str(hung.value) == (
        "nvmlDeviceGetMemoryInfo did not return within 0.01 s (--gpu-probe-timeout) in /usr/lib/libnvidia-ml.so.1; "
        "it is not called again in this process"
    )
    with pytest.raises(deadline.Hung, match=r"^nvmlDeviceGetMemoryInfo did not return"):
        library.call(60, "nvmlShutdown", calls.append, "shutdown")
    assert calls == ["stuck"]  # the second call answered without calling anything
    assert not library.idle


def test_a_call_names_the_library_it_is_in_when_that_is_another_one(release: threading.Event) -> None:
    def stuck() -> None:
        deadline.calling("cudaSetDevice(0)", "/opt/cuda/lib64/libcudart.so.12")
        release.wait()

    with pytest.raises(deadline.Hung, match=r"^cudaSetDevice\(0\) did not return .* in /opt/cuda/lib64/libcudart"):
        deadline.Library("/opt/cudnn/lib/libcudnn.so.9").call(0.01, "cudnnCreate", stuck)


def test_outside_a_bounded_call_naming_a_call_does_nothing() -> None:
    deadline.calling("nvmlInit")  # no error, no effect on the next call's name
    library = deadline.Library("/lib/x.so")
    assert library.call(60, "f", lambda: "done") == "done"


def test_one_library_per_path_for_the_whole_process() -> None:
    path = "/opt/test_deadline/libone.so"
    assert deadline.library(path) is deadline.library(path)
    assert deadline.library(path) is not deadline.library(path + ".2")


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_the_worker_blocks_asynchronous_signals_so_they_reach_the_waiting_thread() -> None:
    mask = deadline.Library("/lib/mask.so").call(60, "mask", signal.pthread_sigmask, signal.SIG_BLOCK, [])
    assert {signal.SIGINT, signal.SIGTERM, signal.SIGALRM} <= mask
    assert not {signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL} & mask  # faults stay faulthandler's
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the caller's mask is restored


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
def test_ctrl_c_interrupts_the_wait_and_the_library_is_then_not_shut_down(release: threading.Event) -> None:
    library = deadline.Library("/lib/interrupted.so")
    main = threading.get_ident()

    def interrupted() -> None:
        signal.pthread_kill(main, signal.SIGINT)
        release.wait()

    # Python's own Ctrl-C handler, also where this run was started with SIGINT ignored (`cmd &`, nohup), as its
    # xdist workers then are: ignored, the signal would leave the wait to run its hour.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            library.call(3600, "nvmlInit", interrupted)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert library.hung is None
    assert not library.idle  # its call still runs: a shutdown would wait on it
    release.set()


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
def test_ctrl_c_that_another_thread_receives_still_ends_the_wait(release: threading.Event) -> None:
    """The kernel may hand Ctrl-C to any thread that does not block it; Python runs the handler in the main thread
    only, so the waiting main thread must wake to run it. A wait that never woke saw it only once the call returned
    (here after 20 s; a hung NVML's call never does, and the bound was the run's hour)."""
    library = deadline.Library("/lib/elsewhere.so")
    returned = threading.Event()
    with ctrl_c_on_another_thread() as ctrl_c:

        def stuck() -> None:
            ctrl_c()
            release.wait(20)
            returned.set()

        with pytest.raises(KeyboardInterrupt):
            library.call(3600, "nvmlInit", stuck)
    assert not returned.is_set()  # ended by the Ctrl-C, not by the call's return
    assert library.hung is None


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_a_handler_that_raises_as_the_mask_is_set_leaves_the_mask_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython's pthread_sigmask runs the handlers of signals already received after it set the new mask, so a
    KeyboardInterrupt another thread received a moment before comes out of the call that blocks the signals. The
    caller's mask must still be put back: left blocked, Ctrl-C, SIGTERM and pytest-timeout's SIGALRM would never
    reach this thread again."""
    real = signal.pthread_sigmask

    def received_before(how: int, mask: object) -> set[int | signal.Signals]:
        previous = real(how, mask)  # type: ignore[arg-type]
        if how == signal.SIG_BLOCK and signal.SIGINT in mask:  # type: ignore[operator]
            raise KeyboardInterrupt  # what the handler of the Ctrl-C received meanwhile raises
        return previous

    before = real(signal.SIG_BLOCK, [])
    monkeypatch.setattr(signal, "pthread_sigmask", received_before)
    try:
        with pytest.raises(KeyboardInterrupt):
            deadline.Library("/lib/masked.so").call(60, "nvmlInit", lambda: None)
    finally:
        after = real(signal.SIG_SETMASK, before)  # the rest of this run keeps its signals whatever happened here
    assert after == before
