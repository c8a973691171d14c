"""Whether a test's process used the GPU it was given: ``@pytest.mark.uses_gpu`` and ``--assert-gpu-used``.

What "used" means. A test *used its GPU* when, after its call phase, its process holds an active CUDA context on
the test's device (the ``gpu`` fixture's: CUDA ordinal ``GpuDevice.cuda_index`` in this process; under xdist the
worker's, under MIG the MIG device's, which is what that ordinal names there). A context lives as long as the
process, or until released, so the state is also read when the test's setup starts:

* ``used``: no context at setup, one after the call: this test (its fixtures included) made it;
* ``used earlier``: a context already existed at setup, made by an earlier test or by the process before it. The
  check passes, and says so: it cannot tell whether this test itself ran work on the GPU (a test that forgets
  ``.cuda()`` after one that did passes). Run such tests in their own process (``pytest-forked``, xdist with one
  test per worker) when that matters;
* ``not used``: no context on the device after the call; the test fails, naming the GPU and, where the run's
  judgement says why (a framework the test's process already imported that cannot use the GPU), why;
* ``unknown``: nothing can be read (a replayed snapshot, ``--gpu-env``; or the driver call failed): said so; the
  test fails under ``--require-gpu``, passes otherwise.

How it is read, without disturbing the test: nothing here creates a context, initialises the driver or loads a
library.

* libcuda.so.1 is looked up with ``RTLD_NOLOAD`` (dlopen(3): "Do not load the library ... dlopen() returns a NULL
  pointer if it is not resident"; ``compat/sources.py`` ``dlopen-rtld-noload``). Not loaded: the process cannot
  hold a context, and nothing else is asked.
* ``cuDevicePrimaryCtxGetState(ordinal, &flags, &active)`` (``cuda-primary-ctx-state``) says whether the device's
  primary context, the one the CUDA runtime and every framework built on it (torch, TensorFlow, JAX, CuPy) use, is
  active in this process. Before ``cuInit`` every driver call answers CUDA_ERROR_NOT_INITIALIZED
  (``cuda-init-not-initialized``): the driver was loaded but never initialised, so no context exists. The call is
  bounded by ``--gpu-probe-timeout`` (:mod:`pytest_cudnn._base.deadline`).
* When the primary context is inactive but libcuda is loaded, NVML's compute processes on the device
  (:mod:`pytest_cudnn._run.live`) are asked whether this process is among them: a context made with ``cuCtxCreate``
  (not the primary one) is found so. NVML lists host PIDs: in a container with its own PID namespace this
  process's ``os.getpid()`` is not the one listed, so NVML can confirm a use, never refute one.

The judgement of why (a framework's verdict) is the run's :class:`~pytest_cudnn.diagnosis.Diagnosis`; frameworks
are named only when the test's process already imported them (``sys.modules``), never imported here.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Any

from .._base import deadline
from .._base.text import printable

__all__ = ["NOT_USED", "UNKNOWN", "USED", "USED_EARLIER", "ContextState", "Use", "judge", "primary_context"]

# The verdicts, as --gpu-report's tests write them (gpu_used).
USED = "used"
USED_EARLIER = "used earlier"
NOT_USED = "not used"
UNKNOWN = "unknown"

_LIBCUDA = "libcuda.so.1"
_NOT_INITIALIZED = 3  # CUDA_ERROR_NOT_INITIALIZED (cuda-init-not-initialized)
SOURCES = ("dlopen-rtld-noload", "cuda-primary-ctx-state", "cuda-init-not-initialized")


@dataclass(frozen=True)
class ContextState:
    """The device's primary context in this process, as read at one moment."""

    loaded: bool  # libcuda.so.1 is in the process
    initialised: bool  # the driver was initialised (cuInit)
    active: bool | None  # the primary context is active; None when it could not be read
    error: str | None = None  # what failed, when the read did

    @property
    def holds(self) -> bool:
        return self.active is True


def primary_context(ordinal: int, timeout: float) -> ContextState:
    """Read, never change: libcuda is asked only when already loaded, and only for the primary context's state.
    Never raises, except KeyboardInterrupt."""
    get = _state_function()
    if get is None:
        return ContextState(loaded=False, initialised=False, active=False)
    try:
        status, active = deadline.library(_LIBCUDA).call(
            timeout, "cuDevicePrimaryCtxGetState", _get_state, get, ordinal
        )
    except deadline.Hung as error:
        return ContextState(True, True, None, printable(str(error)))
    except Exception as error:
        return ContextState(True, True, None, printable(f"{type(error).__name__}: {error}"))
    if status == _NOT_INITIALIZED:
        return ContextState(loaded=True, initialised=False, active=False)
    if status != 0:
        said = f"cuDevicePrimaryCtxGetState({ordinal}) returned {status} in {_LIBCUDA}"
        return ContextState(True, True, None, said)
    return ContextState(loaded=True, initialised=True, active=bool(active))


_FOUND: list[Any] = []  # cuDevicePrimaryCtxGetState, once libcuda is loaded: held, so it stays loaded


def _state_function() -> Any | None:
    """cuDevicePrimaryCtxGetState of the libcuda.so.1 already in the process; None while none is. Our RTLD_NOLOAD
    handle counts as a reference (dlopen(3)), so once found the library stays loaded and the function is kept."""
    if _FOUND:
        return _FOUND[0]
    try:
        handle = ctypes.CDLL(_LIBCUDA, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return None
    get = getattr(handle, "cuDevicePrimaryCtxGetState", None)
    if get is None:
        return _missing  # an older or foreign libcuda: said as the read's error
    get.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_int)]
    get.restype = ctypes.c_int
    _FOUND.append(get)
    return get


def _missing(ordinal: int, flags: object, active: object) -> int:
    raise OSError(f"{_LIBCUDA} has no cuDevicePrimaryCtxGetState")


def _get_state(get: Any, ordinal: int) -> tuple[int, int]:
    flags, active = ctypes.c_uint(), ctypes.c_int()
    status = int(get(ordinal, ctypes.byref(flags), ctypes.byref(active)))
    return status, active.value


@dataclass(frozen=True)
class Use:
    """One test's verdict and the evidence for it, as the reports write them."""

    verdict: str  # USED, USED_EARLIER, NOT_USED, UNKNOWN
    evidence: str

    def passes(self, require_gpu: bool) -> bool:
        return self.verdict in (USED, USED_EARLIER) or (self.verdict == UNKNOWN and not require_gpu)


def judge(
    device: str,
    before: ContextState | None,
    after: ContextState | None,
    listed: bool | None = None,
    nvml_error: str | None = None,
    frameworks: tuple[tuple[str, bool, str], ...] = (),
) -> Use:
    """The verdict on ``device`` (its label and name) from the states read at setup (``before``) and after the call
    (``after``; None for both: replayed, nothing read), whether NVML listed this process on the device
    (``listed``; None: not asked or unreadable, ``nvml_error`` says why) and the verdicts ``(name, ok, summary)``
    of the frameworks the process imported. Pure."""
    if after is None:
        return Use(UNKNOWN, f"{device}: the environment is replayed (--gpu-env): whether the test used it is unknown")
    if after.error is not None:
        return Use(UNKNOWN, f"{device}: its CUDA context could not be read: {after.error}")
    if after.holds:
        if before is not None and before.holds:
            evidence = "used earlier in this process: its primary context was active before the test started"
            return Use(USED_EARLIER, f"{device}: {evidence}; whether this test ran work on it is not known")
        if before is None or before.active is None:  # never claimed for the test without knowing the state before
            said = f"its state before the test could not be read ({before.error})" if before else "not read before"
            evidence = (
                f"its primary context is active after the test, but {said}: whether this test made it is not known"
            )
            return Use(USED_EARLIER, f"{device}: {evidence}")
        return Use(USED, f"{device}: the test's process made its primary CUDA context during the test")
    if listed:
        return Use(USED, f"{device}: NVML lists the test's process (pid {os.getpid()}) among its compute processes")
    if not after.loaded:
        why = f"{_LIBCUDA} was never loaded in the test's process"
    elif not after.initialised:
        why = f"{_LIBCUDA} is loaded but the CUDA driver was never initialised (cuInit) in the test's process"
    else:
        why = "the test's process holds no active primary CUDA context on it"
    if nvml_error:
        why += f" (NVML's compute processes could not be read: {nvml_error})"
    stopped = [f"{name}: {summary}" for name, ok, summary in frameworks if not ok]
    usable = [name for name, ok, _ in frameworks if ok]
    if stopped:
        why += "; " + "; ".join(stopped)
    elif usable:
        why += f"; {', '.join(usable)} can use it here: the test ran on the CPU"
    return Use(NOT_USED, f"{device} was not used: {why}")


def fell_back(verdicts: list[str]) -> tuple[int, int]:
    """How many checked tests did not use their GPU, and how many could not be told."""
    return verdicts.count(NOT_USED), verdicts.count(UNKNOWN)
