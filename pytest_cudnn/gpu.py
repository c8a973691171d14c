"""What the ``gpu`` and ``cudnn_handle`` fixtures give a test.

These are the only places pytest-cudnn touches a GPU library inside the test process, and only when a test
asks: NVML to read free memory live (pytest_cudnn.live), cuDNN (the copy the probe vouched for, by absolute path)
to create a handle.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .devices import CudaDevice
from .environment import MigDevice

if TYPE_CHECKING:
    from .live import Holder, Reading

__all__ = ["CudnnError", "CudnnHandle", "GpuDevice", "create_cudnn_handle"]


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

    @classmethod
    def from_probe(cls, device: CudaDevice, cuda_index: int, replayed: bool = False) -> GpuDevice:
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
        value recorded there; None when NVML cannot read it now."""
        reading = self.read()
        return self.probed_memory_free if reading is None else reading.free

    def holders(self) -> tuple[Holder, ...]:
        """The compute processes on this device now, largest first (nothing from a replayed snapshot)."""
        reading = self.read(holders=True)
        return reading.holders if reading is not None else ()

    def read(self, holders: bool = False) -> Reading | None:
        """This device now, through NVML (see :mod:`pytest_cudnn.live`); None where nothing can be read live (a
        replayed snapshot, a device without a UUID)."""
        if self.replayed or not self.uuid:
            return None
        from .live import read

        return read(self.uuid, self.parent_uuid, self.mig.index if self.mig else None, holders=holders)


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

    def destroy(self) -> None:
        if self.destroyed:
            return
        destroy = self._cudnn.cudnnDestroy
        destroy.argtypes = [ctypes.c_void_p]
        destroy.restype = ctypes.c_int
        status = destroy(self.value)
        self.destroyed = True
        if status != 0:
            raise CudnnError(f"cudnnDestroy returned {status} for the handle from {self.library}", status)


def create_cudnn_handle(library: str, version: str | None, runtime: str | None, cuda_index: int) -> CudnnHandle:
    """Create a handle through ``library`` (an absolute path) on CUDA device ``cuda_index``."""
    if not os.path.isabs(library) or not os.path.exists(library):
        raise CudnnError(f"cuDNN {library} is not on this machine (a replayed environment?)")
    if runtime and os.path.isabs(runtime) and os.path.exists(runtime):
        cudart = ctypes.CDLL(runtime)
        set_device = getattr(cudart, "cudaSetDevice", None)
        if set_device is not None:
            set_device.argtypes = [ctypes.c_int]
            set_device.restype = ctypes.c_int
            status = set_device(cuda_index)
            if status != 0:
                raise CudnnError(f"cudaSetDevice({cuda_index}) returned {status} in {runtime}", status)
    cudnn = ctypes.CDLL(library)
    create = cudnn.cudnnCreate
    create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    create.restype = ctypes.c_int
    handle = ctypes.c_void_p()
    status = create(ctypes.byref(handle))
    if status != 0:
        describe = cudnn.cudnnGetErrorString
        describe.argtypes = [ctypes.c_int]
        describe.restype = ctypes.c_char_p
        text = (describe(status) or b"").decode("utf-8", "replace")
        reason = ""
        last = getattr(cudnn, "cudnnGetLastErrorString", None)
        if last is not None:
            last.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            last.restype = None
            buffer = ctypes.create_string_buffer(1024)
            last(buffer, 1024)
            if buffer.value:
                reason = f" ({buffer.value.decode('utf-8', 'replace')})"
        raise CudnnError(f"cudnnCreate returned {status} {text}{reason} through {library}", status)
    return CudnnHandle(handle, library, version, cuda_index, cudnn)
