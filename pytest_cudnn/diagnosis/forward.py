"""CUDA forward compatibility: the user-mode driver that answers (libcuda.so.1, often a cuda-compat package's) told
apart from the kernel driver (NVML's version, /proc/driver/nvidia/version).

When libcuda is newer than the kernel driver, the driver floor of a CUDA runtime is not the kernel driver's to
meet: NVIDIA's forward-compatibility rules decide (compat/forward.py), and above all the runtime's own answer. A
cudaGetDeviceCount that succeeds means it works; 804 means the GPU does not support it; a kernel driver branch past
its end of life on the day the host was probed (``probed_at``: a replayed snapshot is judged as of when it was taken)
is not supported.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from packaging.version import Version

from ..compat import cuda as cuda_facts
from ..compat import forward as facts
from ..environment import CudaRuntime, Environment, State
from .model import Finding, Severity, cite, make_finding, parse_version
from .stack import gpu_text, runtime_evidence

__all__ = ["ForwardCompat", "explains", "forward_compat", "forward_rules", "user_mode_covers"]


@dataclass(frozen=True)
class ForwardCompat:
    """A libcuda newer than the kernel driver: the two sides, as read."""

    libcuda: str  # the path the loader gave
    real_path: str  # where its links end ("" when unknown)
    libcuda_cuda: str  # cuDriverGetVersion, "13.0"
    libcuda_driver: str | None  # the driver version its file name carries (libcuda.so.580.65.06), when it does
    compat_folder: str | None  # the compat folder it lies in, when it does
    kernel: str  # the kernel driver's version: /proc's, else NVML's
    kernel_cuda: str | None  # the newest CUDA the kernel driver supports by itself (NVML)
    kernel_source: str  # where the kernel's version was read


_FILE_VERSION = re.compile(r"libcuda\.so\.(\d{1,4}(?:\.\d{1,4}){1,3})$", re.ASCII)


def _file_driver(path: str) -> str | None:
    match = _FILE_VERSION.search(os.path.basename(path))
    return match.group(1) if match else None


def _major(version: str | None) -> int | None:
    match = re.match(r"(\d{1,4})(?!\d)", version or "")
    return int(match.group(1)) if match else None


def forward_compat(env: Environment) -> ForwardCompat | None:
    """The forward-compatibility setup this host runs, if any: libcuda answers for a newer CUDA than the kernel
    driver supports, or its file is a newer driver's than the kernel's."""
    libcuda, driver = env.cuda_driver, env.driver
    if libcuda.state is not State.FOUND or not libcuda.version or not libcuda.path:
        return None
    module = env.kernel.module_version if env.kernel is not None else None
    kernel = module or (driver.version if driver.state is State.FOUND else None)
    if kernel is None:
        return None
    file_driver = _file_driver(libcuda.real_path) if libcuda.real_path else None
    newer_cuda = (
        driver.state is State.FOUND
        and driver.cuda_version_raw is not None
        and libcuda.version_raw is not None
        and libcuda.version_raw > driver.cuda_version_raw
    )
    file_major, kernel_major = _major(file_driver), _major(kernel)
    newer_file = file_major is not None and kernel_major is not None and file_major > kernel_major
    if not (newer_cuda or newer_file):
        return None
    if driver.nvml_error == _DRIVER_LIBRARY_MISMATCH and not facts.compat_folder(libcuda.real_path or libcuda.path):
        return None  # a driver upgraded without a reboot (driver-module-mismatch says so), not a compat package
    return ForwardCompat(
        libcuda=libcuda.path,
        real_path=libcuda.real_path,
        libcuda_cuda=libcuda.version,
        libcuda_driver=file_driver,
        compat_folder=facts.compat_folder(libcuda.real_path) or facts.compat_folder(libcuda.path),
        kernel=kernel,
        # NVML's CUDA version may be read from the libcuda that loads (nvmlSystemGetCudaDriverVersion): it is the
        # kernel driver's own only where it is older than libcuda's.
        kernel_cuda=driver.cuda_version if newer_cuda else None,
        kernel_source="/proc/driver/nvidia/version" if module else "NVML",
    )


def user_mode_covers(env: Environment, cuda: str) -> bool:
    """Whether forward compatibility is set up and its libcuda supports CUDA ``cuda`` (from CUDA 11, any minor of
    its major): then the kernel driver's own floor for ``cuda`` does not apply, the forward rules judge."""
    setup = forward_compat(env)
    if setup is None:
        return False
    have, need = parse_version(setup.libcuda_cuda), parse_version(cuda)
    if have is None or need is None:
        return False
    return have.release[0] >= need.release[0] if need.release[0] >= 11 else have >= need


def _answered(env: Environment) -> list[CudaRuntime]:
    return [r for r in env.cuda_runtimes if r.state is State.FOUND and r.device_count_status is not None]


def _not_supported_on_device(env: Environment, runtime: CudaRuntime | None = None) -> bool:
    runtimes = [runtime] if runtime is not None else _answered(env)
    return any(r.device_count_status == facts.COMPAT_NOT_SUPPORTED_ON_DEVICE for r in runtimes) or (
        runtime is None and env.cuda_driver.init_status == facts.COMPAT_NOT_SUPPORTED_ON_DEVICE
    )


def explains(env: Environment, runtime: CudaRuntime) -> bool:
    """Whether a forward-compatibility finding says why ``runtime`` cannot run (so no other finding repeats it)."""
    if runtime.device_count_status in (None, 0) or forward_compat(env) is None:
        return False
    return _not_supported_on_device(env, runtime) or _unsupported_branch(env) is not None


def _probed_on(env: Environment) -> datetime.date | None:
    """The day (UTC) the host was probed, the day its kernel driver branch is judged on: the judgement reads no
    clock, so a replayed snapshot is judged as of when it was taken. None where ``probed_at`` cannot be read (a
    hand-made or damaged value): then the newest edition's table as it stands decides (``facts.supported_on``)."""
    try:
        when = datetime.datetime.fromisoformat(str(env.probed_at).replace("Z", "+00:00"))
        # A time without a zone is taken as UTC, which the probe writes.
        return (when.astimezone(datetime.timezone.utc) if when.tzinfo is not None else when).date()
    except (TypeError, ValueError, OverflowError):
        return None


def _unsupported_branch(env: Environment) -> facts.Branch | None:
    setup = forward_compat(env)
    branch = facts.branch_of(setup.kernel) if setup is not None else None
    return branch if branch is not None and not facts.supported_on(branch, _probed_on(env)) else None


def _branch_evidence(env: Environment, branch: facts.Branch) -> list[str]:
    """What NVIDIA's table says of the host's branch, and the day it was judged on."""
    ended = facts.end_of_life_text(branch)
    listed = (
        f"NVIDIA's table: R{branch.number}, {branch.designation}, end of life {ended}"
        if ended
        else f"NVIDIA's table: 'All other previous driver branches not listed ... are end of life' (R{branch.number})"
    )
    day = _probed_on(env)
    judged = (
        f"judged as of {day.isoformat()}, the day the host was probed (UTC)"
        if day is not None
        else f"the probe time {env.probed_at!r} could not be read: judged by the newest edition's table alone ("
        + ", ".join(f"R{number}" for number in sorted(facts.NEWEST_EDITION))
        + ")"
    )
    return [f"{listed}; {cite(branch.source)}", judged]


def _either(names: list[str]) -> str:
    """'R580, R595 or R620'."""
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


def _setup_evidence(setup: ForwardCompat) -> list[str]:
    origin = (
        f"from the forward-compatibility folder {setup.compat_folder}"
        if setup.compat_folder
        else "not from a compat folder"
    )
    built = f", the user-mode driver of {setup.libcuda_driver}" if setup.libcuda_driver else ""
    real = f" -> {setup.real_path}" if setup.real_path and setup.real_path != setup.libcuda else ""
    kernel_cuda = f" (CUDA {setup.kernel_cuda} by itself)" if setup.kernel_cuda else ""
    return [
        f"libcuda.so.1 answering: {setup.libcuda}{real} (CUDA {setup.libcuda_cuda}{built}), {origin}",
        f"kernel driver {setup.kernel}{kernel_cuda}, read from {setup.kernel_source}",
    ]


# NVML_ERROR_LIB_RM_VERSION_MISMATCH (nvml.h): the kernel module and the user-space driver differ.
_DRIVER_LIBRARY_MISMATCH = 18


def _native_driver(cuda: str, system: str, kernel: str) -> str:
    """The host driver that runs ``cuda`` without a compat package; "" where the kernel driver already does (a
    compat package of the same major: minor-version compatibility runs it) or no floor is known."""
    floor = cuda_facts.minimum_driver(cuda, system)
    known = parse_version(kernel)
    if not floor or (known is not None and known >= Version(floor[0])):
        return ""
    return f"upgrade the host's driver to {floor[0]} or newer, which runs CUDA {cuda} by itself"


def forward_rules(env: Environment) -> Iterator[Finding]:
    setup = forward_compat(env)
    if setup is None:
        return
    evidence = _setup_evidence(setup)
    answered = _answered(env)
    remove = (
        f"remove {setup.compat_folder} from the loader path (LD_LIBRARY_PATH, /etc/ld.so.conf.d) so that the "
        "kernel driver's own libcuda answers, and use a build for the CUDA it supports"
        if setup.compat_folder
        else f"take {setup.libcuda} off the loader path so that the kernel driver's own libcuda answers"
    )
    upgrade = _native_driver(setup.libcuda_cuda, env.host.system, setup.kernel)
    if _not_supported_on_device(env):
        said = [
            f"{runtime_evidence(r)}: cudaGetDeviceCount returned 804"
            + (f" ({r.device_count_error})" if r.device_count_error else "")
            for r in answered
            if r.device_count_status == facts.COMPAT_NOT_SUPPORTED_ON_DEVICE
        ]
        if env.cuda_driver.init_status == facts.COMPAT_NOT_SUPPORTED_ON_DEVICE:
            said.append("libcuda's cuInit returned 804 (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)")
        consumer = [g for g in env.driver.gpus if facts.forward_compatible_gpu(g.name) is False]
        named = consumer or env.driver.gpus
        gpus = ", ".join(gpu_text(g) for g in named) or "the GPU"
        yield make_finding(
            "forward-compat-unsupported-gpu",
            Severity.ERROR,
            "driver",
            f"CUDA forward compatibility is not supported on {gpus}: libcuda {setup.libcuda_cuda} over kernel "
            f"driver {setup.kernel} answers 804 (cudaErrorCompatNotSupportedOnDevice)",
            (
                *evidence,
                *said,
                f"{facts.GPU_RULE.rule}; {cite(facts.GPU_RULE.source)}",
                cite(facts.ERRORS_SOURCE),
            ),
            "; or ".join(part for part in (upgrade, remove) if part),
            gpus=[g.index for g in named],
        )
        return
    if any(r.device_count_status == 0 for r in answered):
        working = [r for r in answered if r.device_count_status == 0]
        yield make_finding(
            "forward-compat-in-use",
            Severity.INFO,
            "driver",
            f"CUDA forward compatibility works: libcuda {setup.libcuda_cuda} at {setup.libcuda} runs CUDA "
            f"{', '.join(sorted({r.version or '?' for r in working}))} over kernel driver {setup.kernel}",
            (*evidence, *(f"{runtime_evidence(r)}: cudaGetDeviceCount succeeded" for r in working)),
            "nothing to do; keep the compat libcuda and the kernel driver as they are (a driver upgrade to the "
            "compat package's branch or newer makes it unneeded)",
        )
        return
    branch = _unsupported_branch(env)
    if branch is not None:
        failed = [r for r in answered if r.device_count_status]
        ended = facts.end_of_life_text(branch)
        # Only branches supported on the day the host was probed are named: never one that has ended by then.
        supported = [f"R{b.number}" for b in facts.supported_branches(_probed_on(env))]
        move = (
            f"move the host to a supported branch ({_either(supported)}) for the compat package"
            if supported
            else "move the host to a branch NVIDIA supports for the compat package"
        )
        yield make_finding(
            "forward-compat-unsupported-branch",
            Severity.ERROR,
            "driver",
            f"CUDA forward compatibility is not supported on kernel driver branch R{branch.number} "
            f"({setup.kernel}): "
            + (
                f"R{branch.number} ended in {ended} (NVIDIA's {branch.designation})"
                if ended
                else f"NVIDIA lists R{branch.number} as {branch.designation}"
            ),
            (
                *evidence,
                *(
                    f"{runtime_evidence(r)}: cudaGetDeviceCount returned {r.device_count_status}"
                    + (f" ({r.device_count_error})" if r.device_count_error else "")
                    for r in failed
                ),
                *_branch_evidence(env, branch),
            ),
            "; or ".join(
                part
                for part in (
                    upgrade or "upgrade the host's driver to a supported branch",
                    move,
                    remove,
                )
                if part
            ),
        )
        return
    if not answered and env.cuda_driver.init_status is None:  # cuInit answered 0: the driver says it works
        consumer = [g for g in env.driver.gpus if facts.forward_compatible_gpu(g.name) is False]
        if consumer:
            yield make_finding(
                "forward-compat-unsupported-gpu",
                Severity.ERROR,
                "driver",
                f"CUDA forward compatibility is not supported on {', '.join(gpu_text(g) for g in consumer)}: "
                f"libcuda {setup.libcuda_cuda} over kernel driver {setup.kernel} cannot run there",
                (*evidence, f"{facts.GPU_RULE.rule}; {cite(facts.GPU_RULE.source)}"),
                "; or ".join(part for part in (upgrade, remove) if part),
                gpus=[g.index for g in consumer],
            )
