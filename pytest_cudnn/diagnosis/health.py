"""The state of each GPU as a cause (issue 32): what makes GPU tests fail, or flaky, whatever the versions. The
errors: uncorrectable ECC errors since the driver loaded, a row remapping that failed, memory repairs waiting for a
reset or reboot, a compute mode that refuses every context. The warnings: a mode that allows one process at a
time, clocks held down under load, a PCIe link trained below its maximum, persistence mode off. Each reads
:attr:`Gpu.health`, which the probe reads through NVML (compat/sources.py "nvml-state"); a GPU without it (an older
snapshot) says nothing here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from ..environment import Environment, Gpu, GpuHealth, GpuPair
from .model import Finding, Severity, cite, make_finding
from .stack import gpu_text

__all__ = [
    "COMPUTE_MODES",
    "HEALTH_FAULTS",
    "P2P_STATUS",
    "TOPOLOGY",
    "health_rules",
    "peer_access",
    "throttled_by",
]

# The errors about a GPU's own state: a GPU with one gives wrong answers or refuses work (requires_gpu(healthy=True)
# and --gpu-health read these).
HEALTH_FAULTS = (
    "gpu-ecc-uncorrectable",
    "gpu-row-remap-failure",
    "gpu-memory-repair-pending",
    "gpu-compute-prohibited",
)

_SOURCE = "nvml-state"
# nvml.h nvmlComputeMode_t
COMPUTE_MODES = {0: "DEFAULT", 1: "EXCLUSIVE_THREAD", 2: "PROHIBITED", 3: "EXCLUSIVE_PROCESS"}
# nvml.h nvmlClocksEventReason*: what holds the clocks down, by bit. GpuIdle (0x1) and the settings a user chose
# (applications clocks 0x2, sync boost 0x10, display 0x100) are not a fault.
_IDLE = 0x1
_HELD_DOWN = {
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake",
}
# nvml.h nvmlGpuP2PStatus_t and nvmlGpuTopologyLevel_t
P2P_STATUS = {
    0: "OK",
    1: "chipset not supported",
    2: "GPU not supported",
    3: "topology not supported",
    4: "disabled by a registry key",
    5: "not supported",
    6: "unknown",
}
TOPOLOGY = {
    0: "the same board",
    10: "one PCIe switch",
    20: "several PCIe switches",
    30: "one host bridge",
    40: "one NUMA node",
    50: "across NUMA nodes",
}


def throttled_by(health: GpuHealth) -> tuple[str, ...]:
    """What holds a busy GPU's clocks down (none while it is idle: an idle GPU's reasons are not a fault), and its
    temperature at or past its slowdown threshold.

    >>> throttled_by(GpuHealth(0, True, True, 0, 0, None, False, False, 0x40, 91, 87, 5, 5, 16, 16, None))
    ('hardware thermal slowdown', 'at 91 C, its slowdown temperature is 87 C')
    >>> throttled_by(GpuHealth(0, True, True, 0, 0, None, False, False, 0x41, 40, 87, 5, 5, 16, 16, None))
    ()
    """
    reasons = health.clocks_event_reasons
    said: list[str] = []
    if reasons is not None and not reasons & _IDLE:
        said += [text for bit, text in _HELD_DOWN.items() if reasons & bit]
    hot, limit = health.temperature, health.slowdown_temperature
    if hot is not None and limit and hot >= limit:
        said.append(f"at {hot} C, its slowdown temperature is {limit} C")
    return tuple(said)


def _degraded_link(health: GpuHealth) -> str | None:
    """A PCIe link trained below its maximum: narrower always; slower only while busy (an idle GPU lowers its link
    generation to save power)."""
    width, widest = health.pcie_width, health.pcie_width_max
    generation, newest = health.pcie_generation, health.pcie_generation_max
    narrow = width is not None and widest is not None and width < widest
    busy = health.clocks_event_reasons is not None and not health.clocks_event_reasons & _IDLE
    slow = busy and generation is not None and newest is not None and generation < newest
    if not (narrow or slow):
        return None
    return f"PCIe Gen{generation} x{width}, of Gen{newest} x{widest}"


def peer_access(env: Environment, first: int, second: int) -> GpuPair | None:
    """The pair of GPUs ``first`` and ``second`` as the probe read it, when it did."""
    low, high = sorted((first, second))
    return next((pair for pair in env.driver.pairs if (pair.first, pair.second) == (low, high)), None)


def health_rules(env: Environment) -> Iterator[Finding]:
    """Each GPU's findings. A fault of a GPU's own state (:data:`HEALTH_FAULTS`) is an error where every GPU has
    one (no GPU here can be trusted with work); beside healthy GPUs it is a warning, as one old GPU among newer
    ones is for CUDA (runtime.py): the run goes on, and --gpu-health and requires_gpu(healthy=True) keep tests off
    it."""
    found = [finding for gpu in env.driver.gpus if gpu.health is not None for finding in _gpu_rules(gpu, gpu.health)]
    faulty = {index for finding in found if finding.code in HEALTH_FAULTS for index in finding.gpus}
    healthy = [gpu.index for gpu in env.driver.gpus if gpu.index not in faulty]
    shown = ", ".join(map(str, healthy[:8])) + (" ..." if len(healthy) > 8 else "")
    for finding in found:
        if finding.code in HEALTH_FAULTS and healthy:
            evidence = (*finding.evidence, f"GPUs without such a fault: {shown}")
            yield dataclasses.replace(finding, severity=Severity.WARNING, evidence=evidence)
        else:
            yield finding
    yield from _pair_rules(env)


def _state(gpu: Gpu, health: GpuHealth) -> str:
    """The GPU's modes as read; "not read" where NVML gave none (never a default it did not say)."""

    def switch(value: bool | None) -> str:
        return "not read" if value is None else "on" if value else "off"

    mode = health.compute_mode
    said = "not read" if mode is None else COMPUTE_MODES.get(mode, str(mode))
    return f"{gpu_text(gpu)}: compute mode {said}, ECC {switch(health.ecc)}, persistence {switch(health.persistence)}"


def _gpu_rules(gpu: Gpu, health: GpuHealth) -> Iterator[Finding]:
    state = _state(gpu, health)
    index = gpu.index
    query = f"nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i {index}"
    if health.ecc_uncorrected_volatile:
        yield make_finding(
            "gpu-ecc-uncorrectable",
            Severity.ERROR,
            "gpu",
            f"GPU {index} has had {health.ecc_uncorrected_volatile} uncorrectable ECC "
            f"error{'' if health.ecc_uncorrected_volatile == 1 else 's'} since the driver loaded: its results cannot "
            "be trusted",
            (
                state,
                f"volatile uncorrected ECC errors {health.ecc_uncorrected_volatile}, aggregate "
                f"{health.ecc_uncorrected_aggregate if health.ecc_uncorrected_aggregate is not None else 'unread'}",
                cite(_SOURCE),
            ),
            f"take GPU {index} out of the runner's pool; {query} shows the counts; reset it (nvidia-smi -r -i "
            f"{index}, nothing running on it) or reboot, and send it for repair if the errors come back",
            gpus=(index,),
        )
    if health.remap_failure:
        yield make_finding(
            "gpu-row-remap-failure",
            Severity.ERROR,
            "gpu",
            f"GPU {index}: a row remapping of its memory failed: the GPU needs repair",
            (state, "nvmlDeviceGetRemappedRows: failureOccurred", cite(_SOURCE)),
            f"take GPU {index} out of service and return it to the vendor (RMA); {query} confirms it",
            gpus=(index,),
        )
    if health.remap_pending or health.retired_pages_pending:
        remap = bool(health.remap_pending)
        yield make_finding(
            "gpu-memory-repair-pending",
            Severity.ERROR,
            "gpu",
            f"GPU {index} has memory repairs waiting: "
            + ("rows to remap at the next GPU reset" if remap else "pages to retire at the next reboot"),
            (state, cite(_SOURCE)),
            f"reset GPU {index} (nvidia-smi -r -i {index}, nothing running on it) to remap its rows"
            if remap
            else "reboot the machine so the driver retires the pages",
            gpus=(index,),
        )
    if health.compute_mode == 2:
        yield make_finding(
            "gpu-compute-prohibited",
            Severity.ERROR,
            "gpu",
            f"GPU {index} is in compute mode PROHIBITED: no process may create a CUDA context on it",
            (state, cite(_SOURCE)),
            f"sudo nvidia-smi -c DEFAULT -i {index}",
            gpus=(index,),
        )
    if health.compute_mode == 3:
        yield make_finding(
            "gpu-exclusive-process",
            Severity.WARNING,
            "gpu",
            f"GPU {index} is in compute mode EXCLUSIVE_PROCESS: one process at a time; a second one (another "
            "pytest-xdist worker) fails with 'all CUDA-capable devices are busy or unavailable'",
            (state, cite(_SOURCE)),
            f"sudo nvidia-smi -c DEFAULT -i {index}, or give each pytest-xdist worker a GPU of its own",
            gpus=(index,),
        )
    held = throttled_by(health)
    if held:
        yield make_finding(
            "gpu-throttled",
            Severity.WARNING,
            "gpu",
            f"GPU {index} runs with its clocks held down: {', '.join(held)}",
            (
                state,
                f"nvmlDeviceGetCurrentClocksEventReasons: {health.clocks_event_reasons:#x}"
                if health.clocks_event_reasons is not None
                else "",
                cite(_SOURCE),
            ),
            "timing tests on it are flaky: check its cooling and power (nvidia-smi -q -d PERFORMANCE,TEMPERATURE "
            f"-i {index})",
            gpus=(index,),
        )
    link = _degraded_link(health)
    if link is not None:
        yield make_finding(
            "gpu-pcie-degraded",
            Severity.WARNING,
            "gpu",
            f"GPU {index}'s PCIe link is trained at {link}: transfers to and from it are slower",
            (state, cite(_SOURCE)),
            "reseat the GPU or its riser, check the slot's wiring in the board's manual; "
            f"nvidia-smi -q -d PCIE -i {index} shows the link",
            gpus=(index,),
        )
    if health.persistence is False:
        yield make_finding(
            "gpu-persistence-off",
            Severity.WARNING,
            "gpu",
            f"GPU {index} has persistence mode off: each process that starts using it waits for the driver to "
            "initialise it",
            (state, cite(_SOURCE)),
            "run nvidia-persistenced (or sudo nvidia-smi -pm 1) on the runner",
            gpus=(index,),
        )


def _pair_rules(env: Environment) -> Iterator[Finding]:
    """Pairs of GPUs that cannot reach each other's memory: one note for all of them, bounded."""
    closed = [pair for pair in env.driver.pairs if pair.p2p_read not in (None, 0) or pair.p2p_write not in (None, 0)]
    if not closed:
        return
    shown = [
        f"GPU {pair.first} and GPU {pair.second}: P2P read {P2P_STATUS.get(pair.p2p_read or 0, pair.p2p_read)}, "
        f"write {P2P_STATUS.get(pair.p2p_write or 0, pair.p2p_write)} ("
        f"{TOPOLOGY.get(pair.topology, 'topology unknown') if pair.topology is not None else 'topology unknown'})"
        for pair in closed[:8]
    ]
    yield make_finding(
        "gpu-no-peer-access",
        Severity.INFO,
        "gpu",
        f"{len(closed)} pair{'s' if len(closed) > 1 else ''} of GPUs cannot access each other's memory: tests of "
        "peer-to-peer copies or NCCL over PCIe between them fail or fall back",
        (*shown, f"and {len(closed) - 8} more" if len(closed) > 8 else "", cite(_SOURCE)),
        "keep peer-to-peer tests off these pairs; nvidia-smi topo -p2p rw shows the matrix, and the BIOS's ACS and "
        "IOMMU settings are the usual cause on one host bridge",
        gpus=tuple(dict.fromkeys(index for pair in closed for index in (pair.first, pair.second))),
    )
