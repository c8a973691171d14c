"""What a device holds now: its free memory and the compute processes using it, read through NVML in the test
process when a test is set up (``requires_gpu(memory=...)``) or asks (``gpu.memory_free``).

NVML is the driver's management library: it creates no CUDA context (NVML API Reference, "Initialization and
Cleanup": nvmlInit does not initialise CUDA), so reading it leaves forked tests and CUDA_VISIBLE_DEVICES alone.
NVML is opened on the first read and shut down at the end of the session (:func:`close`); a run that reads
nothing never imports pynvml. A MIG device is read through its own NVML handle, found under its GPU by its MIG
device index, so its free memory and its processes are the instance's, not the whole GPU's (nvml.h,
nvmlDeviceGetMemoryInfo and nvmlDeviceGetComputeRunningProcesses: "Per-instance information can be queried by
using specific MIG device handles").

Which NVML: the one the probe read, by its absolute path (the probe records the file the loader mapped,
``Driver.path``). nvidia-ml-py loads ``libnvidia-ml.so.1`` by soname (``_LoadNvmlLibrary``), which in a process
started with a relative ``LD_LIBRARY_PATH`` entry searches the current folder, and the loader reads that variable
once, at start-up, so it cannot be cleaned here. nvidia-ml-py loads only while its module global ``nvmlLib`` is
None (under its ``libLoadLock``), so it is handed the vouched library, loaded by absolute path, before its first
``nvmlInit``; when something else in the process loaded another NVML into it first, nothing is read.

Every call is bounded by :mod:`pytest_cudnn._base.deadline` (the run's ``--gpu-probe-timeout``): NVML hangs exactly
when a GPU falls off the bus (nvidia-smi hangs there too). A read never raises: what failed, a timeout included,
is the reading's ``error``, naming the NVML call and the library.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Any

from .._base import deadline
from .._base.text import printable
from ..devices import Holder

__all__ = ["Holder", "Reading", "close", "read"]


@dataclass(frozen=True)
class Reading:
    free: int | None  # bytes free now; None when it could not be read
    holders: tuple[Holder, ...]  # largest first
    error: str | None  # what failed when a read failed: the NVML call, its answer, the library


class _Unreadable(Exception):
    """NVML cannot be read through the vouched library; the message says why."""


class _Nvml:
    """pynvml, initialised once for the process through the NVML at ``path``. Its methods run on the worker
    threads of :mod:`pytest_cudnn._base.deadline`, each saying which NVML call comes next."""

    def __init__(self, path: str, timeout: float) -> None:
        try:
            import pynvml
        except ImportError as error:
            raise _Unreadable(f"pynvml (nvidia-ml-py) cannot be imported: {type(error).__name__}: {error}") from None
        self.module: Any = pynvml
        self.path = path
        self.timeout = timeout
        self.library = deadline.library(path)
        _hand_over(pynvml, path)
        self.library.call(timeout, "nvmlInit", self.ask, "nvmlInit")

    def ask(self, name: str, *args: Any) -> Any:
        """pynvml's ``name``; its NVML error becomes one that names the call."""
        deadline.calling(name)
        try:
            return getattr(self.module, name)(*args)
        except self.module.NVMLError as error:
            raise _Unreadable(f"{name} answered {error.value} ({error}) in {self.path}") from None

    def read(self, uuid: str, parent: str | None, mig_index: int | None, holders: bool) -> Reading:
        handle = self.handle(uuid, parent, mig_index)
        free = int(self.ask("nvmlDeviceGetMemoryInfo", handle).free)
        return Reading(free, self.holders(handle) if holders else (), None)

    def handle(self, uuid: str, parent: str | None, mig_index: int | None) -> Any:
        if parent is not None and mig_index is not None:
            # Through the parent: works on every driver with MIG, whereas looking a MIG UUID up directly needs a
            # driver whose NVML accepts MIG UUIDs (nvml.h from CUDA 11.3).
            gpu = self.ask("nvmlDeviceGetHandleByUUID", parent)
            handle = self.ask("nvmlDeviceGetMigDeviceHandleByIndex", gpu, mig_index)
            if _text(self.ask("nvmlDeviceGetUUID", handle)) == uuid:
                return handle
        return self.ask("nvmlDeviceGetHandleByUUID", uuid)

    def holders(self, handle: Any) -> tuple[Holder, ...]:
        found = []
        for process in self.ask("nvmlDeviceGetComputeRunningProcesses", handle):
            try:
                name: str | None = printable(_text(self.ask("nvmlSystemGetProcessName", process.pid)))
            except _Unreadable:
                name = None
            used = process.usedGpuMemory
            found.append(Holder(int(process.pid), int(used) if isinstance(used, int) else None, name or None))
        return tuple(sorted(found, key=lambda holder: -(holder.used or 0)))

    def close(self) -> None:
        # Not while a call is stuck or still running (an interrupted wait): nvmlShutdown would wait on it.
        if not self.library.idle:
            return
        try:  # noqa: SIM105 - the session is ending; a failing shutdown changes nothing for anyone
            self.library.call(self.timeout, "nvmlShutdown", self.ask, "nvmlShutdown")
        except (deadline.Hung, _Unreadable):
            pass


def _hand_over(pynvml: Any, path: str) -> None:
    """Make nvidia-ml-py use the NVML at ``path``, or say why it cannot."""
    lock = getattr(pynvml, "libLoadLock", None)
    if lock is None or not hasattr(pynvml, "nvmlLib"):
        raise _Unreadable(
            f"this nvidia-ml-py ({getattr(pynvml, '__file__', '?')}) keeps its library where pytest-cudnn cannot "
            f"hand it {path}; it would load libnvidia-ml.so.1 by soname"
        )
    with lock:
        loaded = pynvml.nvmlLib
        if loaded is None:
            pynvml.nvmlLib = ctypes.CDLL(path)
            return
    from ..native.calls import loaded_path

    other = loaded_path(loaded)
    if other is None or os.path.realpath(other) != os.path.realpath(path):
        raise _Unreadable(
            f"nvidia-ml-py in this process already uses {other or 'another NVML'}, not the one the probe read ({path})"
        )


_OPEN: list[_Nvml] = []  # the process's NVML session, once opened


def read(
    uuid: str,
    parent: str | None = None,
    mig_index: int | None = None,
    holders: bool = False,
    *,
    library: str | None,
    timeout: float,
) -> Reading:
    """Free memory now on the device ``uuid`` (a MIG device: give its GPU's UUID and its MIG device index), and
    with ``holders`` the compute processes on it, through the NVML at ``library`` (the probe's), each call
    bounded by ``timeout`` seconds. Never raises, except KeyboardInterrupt: a failure is the reading's ``error``."""
    try:
        nvml = _open(library, timeout)
        return nvml.library.call(timeout, "nvmlDeviceGetHandleByUUID", nvml.read, uuid, parent, mig_index, holders)
    except (deadline.Hung, _Unreadable) as error:
        return Reading(None, (), printable(str(error)))
    except Exception as error:
        return Reading(None, (), printable(f"{type(error).__name__}: {error}"))


def _open(library: str | None, timeout: float) -> _Nvml:
    if not library or not os.path.isabs(library):
        # The probe records the file the loader mapped; without one it found no NVML to vouch for.
        raise _Unreadable(f"the probe found no NVML library to read ({library!r} is not an absolute path)")
    if _OPEN:
        if _OPEN[0].path != library:
            raise _Unreadable(f"NVML is open in this process from {_OPEN[0].path}, not {library}")
        return _OPEN[0]
    nvml = _Nvml(library, timeout)
    _OPEN.append(nvml)
    return nvml


def close() -> None:
    """Shut NVML down if this process opened it and no call into it hung; the end of a session."""
    while _OPEN:
        _OPEN.pop().close()


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
