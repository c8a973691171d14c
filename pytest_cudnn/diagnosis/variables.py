"""Rules about the environment variables and Windows search rules that change which copy is found."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from packaging.version import Version

from .. import phrases
from .._base.text import clip, listing
from ..devices import MIG_LISTED_FROM, VisibleDevices, driver_major
from ..environment import (
    INSTALL_VARIABLES,
    Environment,
    Via,
)
from .model import (
    LOADER_VIAS,
    Finding,
    Severity,
    cite,
    folder_of,
    make_finding,
    parse_version,
)
from .stack import (
    gpu_text,
    loader_visible,
    no_device_cause,
    visible_devices,
)

# Environment variables ----------------------------------------------------------------------------


def path_rules(env: Environment) -> Iterator[Finding]:
    for folder in env.unreadable:
        yield make_finding(
            "library-folder-unreadable",
            Severity.WARNING,
            "loader",
            f"{folder.path} could not be searched ({folder.reason}): copies there are unknown, not absent",
            (f"listing {folder.path}: {folder.reason}",),
            f"make {folder.path} readable by this user, or take it off the search path",
        )
    for check in env.paths:
        if not check.is_dir:
            yield make_finding(
                "path-variable-missing",
                Severity.WARNING,
                "environment",
                f"{check.variable} points at {check.value}, which is not a folder",
                (f"{check.variable}={check.value}",),
                f"fix or unset {check.variable}; build scripts and some frameworks read it",
            )
            continue
        via = INSTALL_VARIABLES.get(check.variable)
        unseen = [
            copy.path
            for copy in list(env.cuda_runtimes) + list(env.cudnns)
            if via in copy.via and not loader_visible(copy.via)
        ]
        if unseen:
            variable = "PATH" if env.host.system == "Windows" else "LD_LIBRARY_PATH"
            yield make_finding(
                "path-variable-unused",
                Severity.INFO,
                "environment",
                f"{check.variable} holds libraries the loader never looks at: "
                f"the loader does not read {check.variable}",
                tuple(f"found only through {check.variable}: {path}" for path in unseen),
                f"add the folder to {variable} if these are the copies you mean to use",
            )


def device_rules(env: Environment) -> Iterator[Finding]:
    gpus = env.driver.gpus
    value = env.variables.get("CUDA_VISIBLE_DEVICES")
    visible = visible_devices(env)
    cause = no_device_cause(env, visible)
    yield from mig_rules(env, visible, cause)
    if value is not None and gpus:
        evidence = (
            f"CUDA_VISIBLE_DEVICES={clip(value, 200)!r}",
            f"NVML sees {len(gpus)} GPU(s)",
            cite("cuda-env-vars"),
        )
        if cause == "cuda-visible-devices-mig":
            yield make_finding(
                "cuda-visible-devices-mig",
                Severity.WARNING,
                "environment",
                f"CUDA_VISIBLE_DEVICES names MIG devices ({clip(visible.unlisted_mig[0], 60)}"
                f"{', ...' if len(visible.unlisted_mig) > 1 else ''}), and NVML lists no MIG devices to judge "
                "them by: tests that need a GPU skip, as no GPU can be judged",
                (*evidence, cite("mig-enumeration")),
                (
                    "check that nvidia-smi -L lists that MIG device (NVML answered no MIG question about these GPUs)"
                    if (driver_major(env.driver.version) or 0) >= MIG_LISTED_FROM
                    else "update the driver (MIG devices are listed through NVML from R470)"
                )
                + ", or name whole GPUs (indices or GPU- UUIDs) in CUDA_VISIBLE_DEVICES",
            )
        elif cause == "cuda-visible-devices-hides-all":
            mig_uuids = " or MIG- UUIDs (nvidia-smi -L lists them)" if any(gpu.mig_mode for gpu in gpus) else ""
            yield make_finding(
                "cuda-visible-devices-hides-all",
                Severity.ERROR,
                "environment",
                "CUDA_VISIBLE_DEVICES leaves no GPU visible to CUDA",
                evidence,
                f"set CUDA_VISIBLE_DEVICES to indices below {len(gpus)}, to GPU- UUIDs{mig_uuids}, or unset it",
            )
        if visible.invalid is not None and cause != "cuda-visible-devices-hides-all":
            yield make_finding(
                "cuda-visible-devices-invalid",
                Severity.WARNING,
                "environment",
                f"CUDA_VISIBLE_DEVICES names {clip(visible.invalid, 60)!r}, which is no device here: it and every "
                "entry after it are ignored",
                evidence,
                "remove the entry; CUDA stops reading the list at the first invalid one",
            )

    order = env.variables.get("CUDA_DEVICE_ORDER", "FASTEST_FIRST")
    kinds = {(gpu.name, gpu.compute_capability, gpu.memory_total) for gpu in gpus}
    if len(gpus) > 1 and len(kinds) > 1 and order != "PCI_BUS_ID":
        yield make_finding(
            "cuda-device-order",
            Severity.INFO,
            "environment",
            "these GPUs differ, and CUDA numbers them fastest first while nvidia-smi and NVML use PCI bus order",
            [*(gpu_text(gpu) for gpu in gpus), cite("cuda-env-vars")],
            "set CUDA_DEVICE_ORDER=PCI_BUS_ID so CUDA device N is nvidia-smi's GPU N",
        )


def set_for_worker(findings: Sequence[Finding], worker: str | None, outer: str | None) -> list[Finding]:
    """An xdist worker's findings when pytest-cudnn set its CUDA_VISIBLE_DEVICES (``outer``: the value the run
    itself had, None when unset). A finding about that variable says who set it and why, and never tells the user
    to change a value they did not write: the value came from the devices the controller saw, so a worker that
    reads it otherwise is pytest-cudnn's disagreement with itself, not the user's setting."""
    who = f"xdist worker {worker}" if worker else "this xdist worker"
    before = f"{clip(outer, 200)!r}" if outer is not None else "unset"
    return [
        replace(
            finding,
            summary=f"{finding.summary} (pytest-cudnn set it for {who}, to give the worker its own device)",
            evidence=(
                *finding.evidence,
                f"pytest-cudnn set it for {who}; the run's own CUDA_VISIBLE_DEVICES: {before}",
            ),
            fix="run with --no-gpu-assign, which leaves each worker the run's own CUDA_VISIBLE_DEVICES, and report "
            "the output of pytest-cudnn doctor to pytest-cudnn: the value it chose does not name the devices it "
            "read",
        )
        if finding.code.startswith("cuda-visible-devices-")
        else finding
        for finding in findings
    ]


def mig_rules(env: Environment, visible: VisibleDevices, cause: str | None) -> Iterator[Finding]:
    """What MIG does to the devices CUDA sees: a MIG-enabled GPU without MIG devices runs nothing (an error when
    that is why CUDA sees no device, ``cause``), a mode change waits for a reset, and one MIG device visible hides
    every other device from the process."""
    for gpu in env.driver.gpus:
        if gpu.mig_mode and not gpu.mig:
            yield make_finding(
                "mig-no-devices",
                Severity.ERROR if cause == "mig-no-devices" else Severity.WARNING,
                "gpu",
                f"GPU {gpu.index} has MIG enabled but no MIG devices: CUDA can run nothing on it",
                (gpu_text(gpu), "nvmlDeviceGetMigDeviceHandleByIndex found no MIG device", cite("mig-enumeration")),
                f"create GPU and compute instances (nvidia-smi mig -i {gpu.index} -cgi <profile> -C), or disable "
                f"MIG (nvidia-smi -i {gpu.index} -mig 0, then reset the GPU)",
                gpus=(gpu.index,),
            )
        if gpu.mig_pending is not None and gpu.mig_pending != gpu.mig_mode:
            now, then = ("enabled", "disabled") if gpu.mig_mode else ("disabled", "enabled")
            yield make_finding(
                "mig-mode-pending",
                Severity.INFO,
                "gpu",
                f"GPU {gpu.index} has MIG {now} until its next reset, then {then}",
                (gpu_text(gpu), "nvmlDeviceGetMigMode: the current and the pending mode differ"),
                f"reset the GPU (nvidia-smi -i {gpu.index} -r) or reboot for the pending MIG mode to take effect",
                gpus=(gpu.index,),
            )
    unused = visible.unused
    if unused and visible.devices and any(device.mig is not None for device in visible.named):
        rule = (
            "one compute instance per GPU instance"
            if visible.per_gpu_instance
            else "a single MIG device, and then no GPU without MIG"
        )
        seen = listing([" ".join(filter(None, (d.label, d.name))) for d in visible.devices])
        yield make_finding(
            "mig-devices-unused",
            Severity.INFO,
            "environment",
            f"a CUDA process here sees {len(visible.devices)} of {len(visible.named)} devices ({seen}): with driver "
            f"{env.driver.version or '(version unknown)'} CUDA enumerates {rule}",
            (
                f"not enumerated: {listing([' '.join(filter(None, (d.label, d.uuid))) for d in unused])}",
                cite("mig-enumeration"),
            ),
            "give each process its own MIG device with CUDA_VISIBLE_DEVICES=MIG-<UUID> (pytest-cudnn does this for "
            "each xdist worker: pytest -n auto --gpu-workers)",
        )


def windows_rules(env: Environment) -> Iterator[Finding]:
    if env.host.system != "Windows":
        return
    python = parse_version(env.host.python)
    if python is None or python < Version("3.8"):
        return
    for copy in list(env.cuda_runtimes) + list(env.cudnns):
        loader = [v for v in copy.via if v in LOADER_VIAS]
        if loader and set(loader) == {Via.PATH}:
            folder = folder_of(copy.path)
            yield make_finding(
                "windows-dll-path-only",
                Severity.INFO,
                "loader",
                f"{copy.path} is reachable only through PATH, which Python {env.host.python} extension modules and "
                "ctypes no longer search",
                (f"found via {phrases.via(copy.via)}", cite("python-38-dll")),
                f"call os.add_dll_directory({folder!r}) before loading it from Python code",
            )
