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

__all__ = ["VisibleDevices", "assign_devices", "cuda_visible_value", "parse_visible_devices"]


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
        if device is not None:
            if device not in visible:  # a repeated device is one device
                visible.append(device)
        elif entry.startswith("MIG-") and len(entry) > 4:
            mig.append(entry)
        else:
            return VisibleDevices(tuple(visible), tuple(mig), entry)
    return VisibleDevices(tuple(visible), tuple(mig), None)


def _device(entry: str, gpus: Sequence[Gpu]) -> Gpu | None:
    if entry.isascii() and entry.isdigit():  # "¹".isdigit() is True, and int("¹") raises
        # int() refuses more than 4300 digits, and no machine has a billion GPUs.
        index = int(entry) if len(entry) < 10 else len(gpus)
        return gpus[index] if index < len(gpus) else None
    if entry.startswith("GPU-") and len(entry) > 4:
        matches = [gpu for gpu in gpus if gpu.uuid and gpu.uuid.startswith(entry)]
        return matches[0] if len(matches) == 1 else None
    return None


def assign_devices(visible: Sequence[Gpu], workers: int, per_worker: int = 1) -> list[tuple[Gpu, ...]]:
    """Each xdist worker's GPUs, round-robin over ``visible`` (which already honours an outer
    CUDA_VISIBLE_DEVICES): worker i gets ``per_worker`` devices starting at ``i * per_worker``. With more workers
    than GPUs, workers share; nothing outside ``visible`` is ever handed out.

    >>> [tuple(g.index for g in gpus) for gpus in assign_devices([_g(0), _g(1), _g(2)], 4)]
    [(0,), (1,), (2,), (0,)]
    """
    if not visible or workers < 1 or per_worker < 1:
        return [() for _ in range(max(workers, 0))]
    take = min(per_worker, len(visible))
    return [tuple(visible[(worker * take + k) % len(visible)] for k in range(take)) for worker in range(workers)]


def cuda_visible_value(gpus: Sequence[Gpu]) -> str:
    """The CUDA_VISIBLE_DEVICES value naming exactly ``gpus``: their UUIDs, so neither CUDA's device order nor an
    outer index list can shift them; NVML indices (with CUDA_DEVICE_ORDER=PCI_BUS_ID) when a UUID is unknown."""
    if all(gpu.uuid for gpu in gpus):
        return ",".join(gpu.uuid or "" for gpu in gpus)
    return ",".join(str(gpu.index) for gpu in gpus)


def _g(index: int) -> Gpu:  # doctest helper
    return Gpu(index, None, f"GPU-{index}", None, None, None, None, None)
