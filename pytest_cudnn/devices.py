"""Which devices CUDA will see: ``CUDA_VISIBLE_DEVICES`` read the way the CUDA runtime reads it, MIG included.

Pure module. Entries are indices, GPU UUIDs (``GPU-...``, a unique prefix is enough) or MIG devices (``MIG-<UUID>``
from driver R470, ``MIG-<GPU-UUID>/<GI>/<CI>`` before); CUDA stops at the first entry that names no device, hiding
it and everything after it; an empty value hides every GPU (CUDA C++ Programming Guide, "CUDA Environment
Variables"). Indices are mapped to NVML's PCI-bus order, which is CUDA's order under ``CUDA_DEVICE_ORDER=PCI_BUS_ID``
or when the GPUs are identical; the diagnosis says when neither holds (``cuda-device-order``).

A GPU with MIG enabled runs CUDA work only in its MIG devices (a compute instance and its GPU instance, one CUDA
device each), and which of them a process enumerates depends on the driver (NVIDIA MIG User Guide, "CUDA Device
Enumeration", cited as ``mig-enumeration`` in compat/sources.py): before R570 a process enumerates one MIG device,
the first visible, and then no GPU without MIG; from R570, one compute instance per GPU instance (at most 64),
beside the GPUs without MIG. A GPU named by index or GPU UUID while MIG is on stands for its first MIG device, as
pytest-cudnn reads it (NVIDIA does not document it; DataDog's agent and nvitop model it so). xdist workers each
get one MIG device of their own, by UUID, whatever the driver. A MIG entry that NVML cannot check (it lists MIG
devices from R470) leaves no device known, whatever else the value names: the doctor and the markers both read
this one result (diagnosis.stack.visible_devices), so they cannot disagree about it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .environment import Gpu, GpuHealth, MigDevice

__all__ = [
    "CudaDevice",
    "Holder",
    "VisibleDevices",
    "assign_devices",
    "cuda_visible_value",
    "devices_of",
    "devices_per_worker",
    "exclusive_process",
    "linked_first",
    "parse_visible_devices",
    "with_free",
]


@dataclass(frozen=True)
class Holder:
    """A compute process on a device, as NVML lists it (read live: :mod:`pytest_cudnn._run.live`). ``pid`` is the
    host's: the driver ignores PID namespaces."""

    pid: int
    used: int | None  # bytes; None where NVML does not say (NVML_VALUE_NOT_AVAILABLE, e.g. Windows WDDM)
    name: str | None  # nvmlSystemGetProcessName, when NVML may tell


@dataclass(frozen=True)
class CudaDevice:
    """One device CUDA enumerates: a whole GPU, or one MIG device of a partitioned GPU (``mig``). Its facts are
    the MIG device's own where it has them (name, UUID, memory) and its GPU's otherwise (PCI bus, capability)."""

    gpu: Gpu
    mig: MigDevice | None = None

    @property
    def index(self) -> int:
        """NVML's (nvidia-smi's) index of the GPU, the parent GPU for a MIG device."""
        return self.gpu.index

    @property
    def name(self) -> str | None:
        if self.mig is None:
            return self.gpu.name
        return self.mig.name or (f"{self.gpu.name} MIG" if self.gpu.name else None)

    @property
    def uuid(self) -> str | None:
        return self.gpu.uuid if self.mig is None else self.mig.uuid

    @property
    def pci_bus_id(self) -> str | None:
        return self.gpu.pci_bus_id

    @property
    def compute_capability(self) -> str | None:
        return self.gpu.compute_capability

    @property
    def memory_total(self) -> int | None:
        return self.gpu.memory_total if self.mig is None else self.mig.memory_total

    @property
    def memory_free(self) -> int | None:
        return self.gpu.memory_free if self.mig is None else self.mig.memory_free

    @property
    def label(self) -> str:
        """'GPU 1', or 'GPU 0 MIG 3' for MIG device 3 of GPU 0 (NVML's numbering, as ``nvidia-smi -L``)."""
        return f"GPU {self.gpu.index}" + (f" MIG {self.mig.index}" if self.mig is not None else "")


@dataclass(frozen=True)
class VisibleDevices:
    devices: tuple[CudaDevice, ...]  # what CUDA enumerates, in its numbering: devices[0] is CUDA device 0
    named: tuple[CudaDevice, ...]  # every device the value names (a MIG-enabled GPU: all its MIG devices)
    unlisted_mig: tuple[str, ...]  # MIG entries no GPU's listing can be checked against (NVML listed no MIG)
    invalid: str | None  # the first entry that names no device (it and all after it are ignored)
    per_gpu_instance: bool = False  # the driver's rule: one MIG device per GPU instance (R570 on), else one in all
    names_a_gpu: bool = False  # an entry names a GPU or MIG device NVML lists (unset: NVML lists a GPU)

    @property
    def unused(self) -> tuple[CudaDevice, ...]:
        """Devices named (or, unset, present) that CUDA does not enumerate because of its MIG rules."""
        enumerated = set(self.devices)  # a set: `in` over the tuple made this quadratic in the number of GPUs
        return tuple(device for device in self.named if device not in enumerated)


# NVIDIA MIG User Guide, "CUDA Device Enumeration": the driver from which a process enumerates one compute
# instance per GPU instance, and GPUs without MIG beside them; and the most MIG devices it enumerates then.
MIG_PER_GPU_INSTANCE_FROM = 570
MIG_MOST = 64
# The same guide (mig-enumeration in compat/sources.py): MIG devices have UUIDs of their own (MIG-<UUID>), which
# NVML lists, from driver R470.
MIG_LISTED_FROM = 470


def devices_of(gpu: Gpu) -> tuple[CudaDevice, ...]:
    """The CUDA devices one GPU offers: itself, or with MIG enabled its MIG devices (none when it has none)."""
    if gpu.mig_mode:
        return tuple(CudaDevice(gpu, mig) for mig in gpu.mig)
    return (CudaDevice(gpu),)


def driver_major(version: str | None) -> int | None:
    head = (version or "").partition(".")[0]
    return int(head) if head.isascii() and head.isdigit() and len(head) < 6 else None


def parse_visible_devices(value: str | None, gpus: Sequence[Gpu], driver: str | None = None) -> VisibleDevices:
    """The devices CUDA sees when CUDA_VISIBLE_DEVICES is ``value`` (None: unset, all of them), under driver
    ``driver`` (NVML's version string; it decides the MIG rule, and an unknown one gets the older, stricter rule)."""
    per_instance = (driver_major(driver) or 0) >= MIG_PER_GPU_INSTANCE_FROM
    if value is None:
        present = [device for gpu in gpus for device in devices_of(gpu)]
        return VisibleDevices(_cuda_rule(present, per_instance), tuple(present), (), None, per_instance, bool(gpus))
    # Dicts as ordered sets: a snapshot may list 100,000 GPUs, and `in` over a list made this quadratic (N4).
    named: dict[CudaDevice, None] = {}
    candidates: dict[CudaDevice, None] = {}  # what CUDA considers: a MIG-enabled GPU's first MIG device only
    unlisted: list[str] = []
    listed = any(gpu.mig_mode is not None for gpu in gpus)  # NVML answered MIG questions for some GPU
    invalid: str | None = None
    names_a_gpu = False
    lookup = _Lookup(gpus)
    for raw in value.split(",") if value.strip() else []:
        entry = raw.strip()
        found = _entry(entry, lookup)
        if found is None:
            if entry.startswith("MIG-") and len(entry) > 4 and not listed:
                unlisted.append(entry)
                continue
            invalid = entry
            break
        names_a_gpu = True
        whole_gpu = not entry.startswith("MIG-")
        for position, device in enumerate(found):
            named.setdefault(device)  # a repeated device is one device
            if position == 0 or not whole_gpu:
                candidates.setdefault(device)
    if unlisted:
        # A MIG device NVML does not list (a driver before R470 lists none) may exist or not, and either way no
        # device of the list is known to be CUDA device 0: if it exists, a driver before R570 enumerates it alone
        # and no whole GPU beside it; if it does not, CUDA stops there and hides all that follow. Nothing is
        # judged, and nothing handed to xdist workers, on a guess.
        return VisibleDevices((), (), tuple(unlisted), invalid, per_instance, names_a_gpu)
    return VisibleDevices(
        _cuda_rule(list(candidates), per_instance), tuple(named), tuple(unlisted), invalid, per_instance, names_a_gpu
    )


def _cuda_rule(candidates: Sequence[CudaDevice], per_instance: bool) -> tuple[CudaDevice, ...]:
    """The devices CUDA enumerates of ``candidates``: before R570 one MIG device and then no whole GPU; from R570
    the whole GPUs and one compute instance per GPU instance, at most 64 of them."""
    migs = [device for device in candidates if device.mig is not None]
    if not migs:
        return tuple(candidates)
    if not per_instance:
        return (migs[0],)
    kept: list[CudaDevice] = []
    instances: set[tuple[str | None, int, int | None]] = set()
    for device in candidates:
        if device.mig is not None:
            instance = (device.gpu.uuid, device.gpu.index, device.mig.gpu_instance_id)
            if instance in instances or len(instances) >= MIG_MOST:
                continue
            instances.add(instance)
        kept.append(device)
    return tuple(kept)


class _Lookup:
    """The GPUs and MIG devices of a host by UUID, sorted once, so that each entry is found by bisection rather
    than by a scan of every device: an entry per GPU made parsing quadratic in the number of GPUs."""

    def __init__(self, gpus: Sequence[Gpu]) -> None:
        self.gpus = gpus
        self.gpu_uuids = sorted((gpu.uuid, position) for position, gpu in enumerate(gpus) if gpu.uuid)
        self.mig_uuids = sorted(
            (mig.uuid, position, slot)
            for position, gpu in enumerate(gpus)
            for slot, mig in enumerate(gpu.mig)
            if mig.uuid
        )

    def gpu(self, prefix: str) -> Gpu | None:
        """The one GPU whose UUID begins with ``prefix``; None when none does, or several."""
        found = _unique(self.gpu_uuids, prefix)
        return self.gpus[found[1]] if found else None

    def mig(self, prefix: str) -> CudaDevice | None:
        """The one MIG device whose UUID begins with ``prefix``; None when none does, or several."""
        found = _unique(self.mig_uuids, prefix)
        if found is None:
            return None
        gpu = self.gpus[found[1]]
        return CudaDevice(gpu, gpu.mig[found[2]])

    def named(self, uuid: str) -> Iterator[Gpu]:
        """The GPUs whose UUID is ``uuid``, in NVML's order."""
        start = bisect.bisect_left(self.gpu_uuids, (uuid,))
        for found, position in self.gpu_uuids[start:]:
            if found != uuid:
                return
            yield self.gpus[position]


def _unique(keys: Sequence[tuple[Any, ...]], prefix: str) -> tuple[Any, ...] | None:
    """The one key of sorted ``keys`` whose first item begins with ``prefix``: keys that share a prefix are
    neighbours in sorted order, so the key at the prefix's place and the one after it tell."""
    start = bisect.bisect_left(keys, (prefix,))
    if start == len(keys) or not keys[start][0].startswith(prefix):
        return None
    if start + 1 < len(keys) and keys[start + 1][0].startswith(prefix):
        return None
    return keys[start]


def _entry(entry: str, lookup: _Lookup) -> tuple[CudaDevice, ...] | None:
    """The devices one entry names, or None when it names none."""
    gpus = lookup.gpus
    if entry.isascii() and entry.isdigit():  # "¹".isdigit() is True, and int("¹") raises
        # int() refuses more than 4300 digits, and no machine has a billion GPUs.
        index = int(entry) if len(entry) < 10 else len(gpus)
        return devices_of(gpus[index]) if index < len(gpus) else None
    if entry.startswith("GPU-") and len(entry) > 4:
        gpu = lookup.gpu(entry)
        return devices_of(gpu) if gpu is not None else None
    if entry.startswith("MIG-") and len(entry) > 4:
        return _mig_entry(entry, lookup)
    return None


def _mig_entry(entry: str, lookup: _Lookup) -> tuple[CudaDevice, ...] | None:
    parent, slash, ids = entry[4:].partition("/")
    if slash:  # MIG-<GPU-UUID>/<GI>/<CI>, the form of drivers before R470
        gi, _, ci = ids.partition("/")
        for gpu in lookup.named(parent):
            for mig in gpu.mig:
                if str(mig.gpu_instance_id) == gi and str(mig.compute_instance_id) == ci:
                    return (CudaDevice(gpu, mig),)
        return None
    device = lookup.mig(entry)
    return (device,) if device is not None else None


def linked_first(visible: Sequence[CudaDevice], take: int, linked: frozenset[tuple[int, int]]) -> list[CudaDevice]:
    """``visible`` reordered so that each run of ``take`` devices holds GPUs that reach each other (``linked``:
    pairs of NVML indices, lower first, whose P2P reads and writes are OK) where the pairs allow it: a worker given
    ``take`` GPUs then gets GPUs a peer-access test can use together. Unchanged where nothing is known, where a
    device is a MIG device, or where the devices do not divide into runs of ``take``.

    >>> [d.index for d in linked_first([_d(0), _d(1), _d(2), _d(3)], 2, frozenset({(0, 2), (1, 3)}))]
    [0, 2, 1, 3]
    """
    if take < 2 or not linked or len(visible) % take or any(device.mig is not None for device in visible):
        return list(visible)
    left = list(visible)
    ordered: list[CudaDevice] = []
    while left:
        group = [left.pop(0)]
        while len(group) < take:
            joins = [
                device
                for device in left
                if all(tuple(sorted((device.index, member.index))) in linked for member in group)
            ]
            chosen = joins[0] if joins else left[0]
            left.remove(chosen)
            group.append(chosen)
        ordered += group
    return ordered


def assign_devices(visible: Sequence[CudaDevice], workers: int, per_worker: int = 1) -> list[tuple[CudaDevice, ...]]:
    """Each xdist worker's devices, round-robin over ``visible`` (the devices this run may hand out, which already
    honours an outer CUDA_VISIBLE_DEVICES): worker i gets ``per_worker`` devices starting at ``i * per_worker``.
    With more workers than devices, workers share; nothing outside ``visible`` is ever handed out. A MIG device
    goes alone: a CUDA process enumerates only one.

    >>> [tuple(d.index for d in devices) for devices in assign_devices([_d(0), _d(1), _d(2)], 4)]
    [(0,), (1,), (2,), (0,)]
    >>> [tuple(d.index for d in devices) for devices in assign_devices([_d(0, exclusive=True), _d(1)], 4)]
    [(0,), (1,), (1,), (1,)]
    >>> assign_devices([_d(0, exclusive=True)], 2)[1]
    ()
    """
    if not visible or workers < 1 or per_worker < 1:
        return [() for _ in range(max(workers, 0))]
    take = min(devices_per_worker(visible, per_worker), len(visible))
    shares: list[tuple[CudaDevice, ...]] = []
    held: set[int] = set()  # the positions of EXCLUSIVE_PROCESS GPUs a worker was given
    for worker in range(workers):
        share: list[int] = []
        for k in range(take):
            wanted = worker * take + k
            # A GPU in EXCLUSIVE_PROCESS mode takes one process: a second worker gets the next GPU that can be
            # shared, or fewer GPUs (none at all when every GPU is exclusive and taken).
            found = next(
                (
                    position
                    for step in range(len(visible))
                    if (position := (wanted + step) % len(visible)) not in share
                    and not (exclusive_process(visible[position]) and position in held)
                ),
                None,
            )
            if found is not None:
                share.append(found)
                if exclusive_process(visible[found]):
                    held.add(found)
        shares.append(tuple(visible[position] for position in share))
    return shares


def exclusive_process(device: CudaDevice) -> bool:
    """Whether ``device`` is a whole GPU in compute mode EXCLUSIVE_PROCESS (nvml.h: one context at a time), as the
    probe read it."""
    health = device.gpu.health
    return device.mig is None and health is not None and health.compute_mode == 3


def devices_per_worker(devices: Sequence[CudaDevice], asked: int) -> int:
    """How many of ``devices`` one worker may be given when ``asked`` are: one where they are MIG devices, as a
    CUDA process may see only one (before R570, and pytest-cudnn keeps to that whatever the driver)."""
    return 1 if any(device.mig is not None for device in devices) else asked


def cuda_visible_value(devices: Sequence[CudaDevice]) -> str:
    """The CUDA_VISIBLE_DEVICES value naming exactly ``devices``: their UUIDs, so neither CUDA's device order nor
    an outer index list can shift them; NVML indices (with CUDA_DEVICE_ORDER=PCI_BUS_ID) when a UUID is unknown
    (never for a MIG device, which has no index of its own)."""
    if all(device.uuid for device in devices):
        return ",".join(device.uuid or "" for device in devices)
    return ",".join(str(device.index) for device in devices if device.mig is None)


def with_free(device: CudaDevice, free: int | None) -> CudaDevice:
    """``device`` with ``free`` bytes free (None: unknown): its MIG device's memory, or its GPU's."""
    if device.mig is not None:
        return CudaDevice(device.gpu, replace(device.mig, memory_free=free))
    return CudaDevice(replace(device.gpu, memory_free=free))


def _d(index: int, exclusive: bool = False) -> CudaDevice:  # doctest helper
    health = GpuHealth(3, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None)
    mode = health if exclusive else None
    return CudaDevice(Gpu(index, None, f"GPU-{index}", None, None, None, None, None, health=mode))
