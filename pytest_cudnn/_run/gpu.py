"""What the ``gpu`` and ``cudnn_handle`` fixtures give a test.

These are the only places pytest-cudnn touches a GPU library inside the test process, and only when a test
asks: NVML to read free memory live (pytest_cudnn._run.live), cuDNN (the copy the probe vouched for, by absolute path)
to create a handle. Every call into them is bounded by :mod:`pytest_cudnn._base.deadline`.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._base import deadline
from .._base.text import printable
from ..devices import CudaDevice
from ..environment import MigDevice

if TYPE_CHECKING:
    from ..devices import Holder
    from .live import Reading

__all__ = ["CudnnError", "CudnnHandle", "GpuDevice", "LiveReadError", "create_cudnn_handle"]


class LiveReadError(RuntimeError):
    """A device's state could not be read now: the message names the device and what NVML said."""


@dataclass(frozen=True)
class GpuDevice:
    """The GPU a test runs on. ``index`` is NVML's (nvidia-smi's); ``cuda_index`` is CUDA's inside this process."""

    index: int
    cuda_index: int
    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    compute_capability: str | None
    memory_total: int | None
    probed_memory_free: int | None = field(repr=False)
    replayed: bool = field(default=False, repr=False)  # from a snapshot: nothing can be read live
    mig: MigDevice | None = None  # the MIG device this is, on a partitioned GPU (name, uuid, memory are its own)
    parent_uuid: str | None = None  # the GPU a MIG device belongs to
    nvml: str | None = field(default=None, repr=False)  # the NVML the probe read (absolute path): read live through it
    timeout: float = field(default=10.0, repr=False)  # the run's --gpu-probe-timeout: the bound on each live read

    @classmethod
    def from_probe(
        cls,
        device: CudaDevice,
        cuda_index: int,
        replayed: bool = False,
        *,
        nvml: str | None,
        timeout: float,
    ) -> GpuDevice:
        return cls(
            device.index,
            cuda_index,
            device.name,
            device.uuid,
            device.pci_bus_id,
            device.compute_capability,
            device.memory_total,
            device.memory_free,
            replayed,
            device.mig,
            device.gpu.uuid if device.mig is not None else None,
            nvml,
            timeout,
        )

    @property
    def label(self) -> str:
        """'GPU 1', or 'GPU 0 MIG 3' for a MIG device (NVML's numbering, as ``nvidia-smi -L``)."""
        return f"GPU {self.index}" + (f" MIG {self.mig.index}" if self.mig is not None else "")

    @property
    def compute_capability_tuple(self) -> tuple[int, int] | None:
        if not self.compute_capability:
            return None
        major, _, minor = self.compute_capability.partition(".")
        return int(major), int(minor or 0)

    @property
    def memory_free(self) -> int | None:
        """Free memory now, read through NVML (no CUDA context); a MIG device's own. From a replayed snapshot, the
        value recorded there (None when it records none). Raises :class:`LiveReadError` when NVML cannot read it
        now: a figure from the start of the session would be a guess about a device that may be gone."""
        reading = self.read()
        if reading is None:
            return self.probed_memory_free
        return self._answer(reading, "free memory").free

    def holders(self) -> tuple[Holder, ...]:
        """The compute processes on this device now, largest first (nothing from a replayed snapshot). Raises
        :class:`LiveReadError` when NVML cannot list them now."""
        reading = self.read(holders=True)
        return self._answer(reading, "compute processes").holders if reading is not None else ()

    def _answer(self, reading: Reading, what: str) -> Reading:
        if reading.error is not None:
            name = f" {self.name}" if self.name else ""
            said = f"{self.label}{name} ({self.uuid}): its {what} cannot be read now: {reading.error}"
            raise LiveReadError(printable(said))
        return reading

    def read(self, holders: bool = False) -> Reading | None:
        """This device now, through NVML (see :mod:`pytest_cudnn._run.live`); None where nothing can be read live (a
        replayed snapshot, a device without a UUID)."""
        if self.replayed or not self.uuid:
            return None
        from .live import read

        mig = self.mig.index if self.mig else None
        return read(self.uuid, self.parent_uuid, mig, holders=holders, library=self.nvml, timeout=self.timeout)


class CudnnError(RuntimeError):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class CudnnHandle:
    """A live ``cudnnHandle_t``: pass ``handle.value`` (a ``ctypes.c_void_p``) to cuDNN calls."""

    value: ctypes.c_void_p
    library: str  # the cuDNN it was created through
    version: str | None
    cuda_index: int
    _cudnn: ctypes.CDLL = field(repr=False)
    destroyed: bool = field(default=False, repr=False)
    timeout: float = field(default=10.0, repr=False)  # the bound on cudnnDestroy (--gpu-probe-timeout)

    def destroy(self) -> None:
        """cudnnDestroy, bounded; not attempted once a call into this cuDNN hung (it would wait on that call)."""
        guard = deadline.library(self.library)
        if self.destroyed or guard.hung is not None:
            return
        self.destroyed = True
        status = guard.call(self.timeout, "cudnnDestroy", _destroy, self._cudnn, self.value)
        if status != 0:
            raise CudnnError(f"cudnnDestroy returned {status} for the handle from {self.library}", status)


def create_cudnn_handle(
    library: str,
    version: str | None,
    runtime: str | None,
    cuda_index: int,
    *,
    driver: str | None,
    timeout: float,
) -> CudnnHandle:
    """Create a handle through ``library`` (an absolute path) on CUDA device ``cuda_index``, choosing the device
    through the CUDA runtime ``runtime``. ``driver``: the libcuda the probe read, loaded first by its absolute path.
    Each call is bounded by ``timeout`` seconds: past it, :class:`pytest_cudnn._base.deadline.Hung`."""
    if not os.path.isabs(library) or not os.path.exists(library):
        raise CudnnError(f"cuDNN {library} is not on this machine (a replayed environment?)")
    # The runtime dlopen()s libcuda.so.1 by soname, and the loader searches the LD_LIBRARY_PATH this process
    # started with, relative entries included (ld.so(8)); loaded first by absolute path, the copy the probe vouched
    # for is the one that soname finds (the loader matches an already loaded object by its DT_SONAME).
    if driver and os.path.isabs(driver) and os.path.exists(driver):
        ctypes.CDLL(driver)
    usable = runtime and os.path.isabs(runtime) and os.path.exists(runtime)
    # Loaded here, not on the worker: dlopen cannot be bounded (see pytest_cudnn._base.deadline).
    cudart = ctypes.CDLL(runtime) if usable and runtime else None
    cudnn = ctypes.CDLL(library)
    handle = deadline.library(library).call(
        timeout, "cudnnCreate", _create, cudnn, library, cudart, runtime, cuda_index
    )
    return CudnnHandle(handle, library, version, cuda_index, cudnn, timeout=timeout)


def _create(
    cudnn: ctypes.CDLL, library: str, cudart: ctypes.CDLL | None, runtime: str | None, cuda_index: int
) -> ctypes.c_void_p:
    """cudaSetDevice, then cudnnCreate, on one thread: the current device is the calling host thread's (CUDA
    Runtime API, cudaSetDevice) and cudnnCreate ties the handle to it (cuDNN API, cudnnCreate). The handle then
    serves any thread: a device's primary context is shared by all the threads of the process (CUDA C++
    Programming Guide, "Initialization"), and cuDNN may be called from several threads so long as they do not use
    one handle at the same time (cuDNN docs, "Thread Safety")."""
    set_device = getattr(cudart, "cudaSetDevice", None) if cudart is not None else None
    if set_device is not None:
        set_device.argtypes = [ctypes.c_int]
        set_device.restype = ctypes.c_int
        deadline.calling(f"cudaSetDevice({cuda_index})", runtime)
        status = set_device(cuda_index)
        if status != 0:
            raise CudnnError(f"cudaSetDevice({cuda_index}) returned {status} in {runtime}", status)
    create = cudnn.cudnnCreate
    create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    create.restype = ctypes.c_int
    handle = ctypes.c_void_p()
    deadline.calling("cudnnCreate", library)
    status = create(ctypes.byref(handle))
    if status == 0:
        return handle
    describe = cudnn.cudnnGetErrorString
    describe.argtypes = [ctypes.c_int]
    describe.restype = ctypes.c_char_p
    deadline.calling("cudnnGetErrorString")
    text = (describe(status) or b"").decode("utf-8", "replace")
    reason = ""
    last = getattr(cudnn, "cudnnGetLastErrorString", None)
    if last is not None:
        last.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        last.restype = None
        buffer = ctypes.create_string_buffer(1024)
        deadline.calling("cudnnGetLastErrorString")
        last(buffer, 1024)
        if buffer.value:
            reason = f" ({buffer.value.decode('utf-8', 'replace')})"
    raise CudnnError(f"cudnnCreate returned {status} {text}{reason} through {library}", status)


def _destroy(cudnn: ctypes.CDLL, value: ctypes.c_void_p) -> int:
    destroy = cudnn.cudnnDestroy
    destroy.argtypes = [ctypes.c_void_p]
    destroy.restype = ctypes.c_int
    status: int = destroy(value)
    return status
