"""Which GPUs CUDA will see: ``CUDA_VISIBLE_DEVICES`` read the way the CUDA runtime reads it.

Pure module. Entries are indices, GPU UUIDs (``GPU-...``, a unique prefix is enough) or MIG instances
(``MIG-...``); CUDA stops at the first entry that names no device, hiding it and everything after it; an empty
value hides every GPU (CUDA C++ Programming Guide, "CUDA Environment Variables"). Indices are mapped to NVML's
PCI-bus order, which is CUDA's order under ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` or when the GPUs are identical; the
diagnosis says when neither holds (``cuda-device-order``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .environment import Gpu

__all__ = ["VisibleDevices", "parse_visible_devices"]


@dataclass(frozen=True)
class VisibleDevices:
    gpus: tuple[Gpu, ...]  # in CUDA's numbering: gpus[0] is CUDA device 0
    mig: tuple[str, ...]  # MIG instances named; the probe does not enumerate them
    invalid: str | None  # the first entry that names no device (it and all after it are ignored)


def parse_visible_devices(value: str | None, gpus: Sequence[Gpu]) -> VisibleDevices:
    """The devices CUDA sees when CUDA_VISIBLE_DEVICES is ``value`` (None: unset, all of them)."""
    if value is None:
        return VisibleDevices(tuple(gpus), (), None)
    visible: list[Gpu] = []
    mig: list[str] = []
    for raw in value.split(",") if value.strip() else []:
        entry = raw.strip()
        device = _device(entry, gpus)
        if device is not None and device not in visible:
            visible.append(device)
        elif entry.startswith("MIG-") and len(entry) > 4:
            mig.append(entry)
        else:
            return VisibleDevices(tuple(visible), tuple(mig), entry)
    return VisibleDevices(tuple(visible), tuple(mig), None)


def _device(entry: str, gpus: Sequence[Gpu]) -> Gpu | None:
    if entry.isdigit():
        index = int(entry)
        return gpus[index] if index < len(gpus) else None
    if entry.startswith("GPU-") and len(entry) > 4:
        matches = [gpu for gpu in gpus if gpu.uuid and gpu.uuid.startswith(entry)]
        return matches[0] if len(matches) == 1 else None
    return None
