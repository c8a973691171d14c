"""What a device holds now: its free memory and the compute processes using it, read through NVML in the test
process when a test is set up (``requires_gpu(memory=...)``) or asks (``gpu.memory_free``).

NVML is the driver's management library: it creates no CUDA context (NVML API Reference, "Initialization and
Cleanup": nvmlInit does not initialise CUDA), so reading it leaves forked tests and CUDA_VISIBLE_DEVICES alone.
NVML is opened on the first read and shut down at the end of the session (:func:`close`); a run that reads
nothing never imports pynvml. A MIG device is read through its own NVML handle, found under its GPU by its MIG
device index, so its free memory and its processes are the instance's, not the whole GPU's (nvml.h,
nvmlDeviceGetMemoryInfo and nvmlDeviceGetComputeRunningProcesses: "Per-instance information can be queried by
using specific MIG device handles").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .text import printable

__all__ = ["Holder", "Reading", "close", "read"]


@dataclass(frozen=True)
class Holder:
    """A compute process on the device. ``pid`` is the host's: the driver ignores PID namespaces."""

    pid: int
    used: int | None  # bytes; None where NVML does not say (NVML_VALUE_NOT_AVAILABLE, e.g. Windows WDDM)
    name: str | None  # nvmlSystemGetProcessName, when NVML may tell


@dataclass(frozen=True)
class Reading:
    free: int | None  # bytes free now; None when it could not be read
    holders: tuple[Holder, ...]  # largest first
    error: str | None  # what NVML said when a read failed


class _Nvml:
    """pynvml, initialised once for the process."""

    def __init__(self) -> None:
        import pynvml

        self.module: Any = pynvml
        pynvml.nvmlInit()

    def handle(self, uuid: str, parent: str | None, mig_index: int | None) -> Any:
        nvml = self.module
        if parent is not None and mig_index is not None:
            # Through the parent: works on every driver with MIG, whereas looking a MIG UUID up directly needs a
            # driver whose NVML accepts MIG UUIDs (nvml.h from CUDA 11.3).
            gpu = nvml.nvmlDeviceGetHandleByUUID(parent)
            handle = nvml.nvmlDeviceGetMigDeviceHandleByIndex(gpu, mig_index)
            if _text(nvml.nvmlDeviceGetUUID(handle)) == uuid:
                return handle
        return nvml.nvmlDeviceGetHandleByUUID(uuid)

    def holders(self, handle: Any) -> tuple[Holder, ...]:
        nvml = self.module
        found = []
        for process in nvml.nvmlDeviceGetComputeRunningProcesses(handle):
            try:
                name: str | None = printable(_text(nvml.nvmlSystemGetProcessName(process.pid)))
            except nvml.NVMLError:
                name = None
            used = process.usedGpuMemory
            found.append(Holder(int(process.pid), int(used) if isinstance(used, int) else None, name or None))
        return tuple(sorted(found, key=lambda holder: -(holder.used or 0)))

    def close(self) -> None:
        try:  # noqa: SIM105 - the session is ending; a failing shutdown changes nothing for anyone
            self.module.nvmlShutdown()
        except self.module.NVMLError:
            pass


_OPEN: list[_Nvml] = []  # the process's NVML session, once opened


def read(uuid: str, parent: str | None = None, mig_index: int | None = None, holders: bool = False) -> Reading:
    """Free memory now on the device ``uuid`` (a MIG device: give its GPU's UUID and its MIG device index), and
    with ``holders`` the compute processes on it. Never raises: a failure is the reading's ``error``."""
    try:
        if not _OPEN:
            _OPEN.append(_Nvml())
        nvml = _OPEN[0]
        handle = nvml.handle(uuid, parent, mig_index)
        free = int(nvml.module.nvmlDeviceGetMemoryInfo(handle).free)
        found = nvml.holders(handle) if holders else ()
    except Exception as error:
        return Reading(None, (), printable(f"{type(error).__name__}: {error}"))
    return Reading(free, found, None)


def close() -> None:
    """Shut NVML down if this process opened it; the end of a session."""
    while _OPEN:
        _OPEN.pop().close()


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
