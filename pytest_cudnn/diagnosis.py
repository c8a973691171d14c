"""Findings: what is wrong with an environment, where, why, and what to do.

Pure module. Each rule is a small function from an :class:`Environment` to findings; codes are stable
kebab-case strings meant for grep and JSON.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .environment import CudaRuntime, Cudnn, Environment, State

__all__ = ["Finding", "Severity", "Verdict", "diagnose", "verdict"]


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True)
class Finding:
    code: str  # stable, kebab-case
    severity: Severity
    component: str  # "driver", "cuda-runtime", "cudnn", "tensorflow", "loader", "environment"
    summary: str  # one line
    evidence: tuple[str, ...]  # found versions, paths and how they were found; what was expected and by whom
    remedy: str


@dataclass(frozen=True)
class Verdict:
    ok: bool
    summary: str


Rule = Callable[[Environment], Iterator[Finding]]


def _no_driver(env: Environment) -> Iterator[Finding]:
    driver = env.driver
    if driver.state is State.FOUND:
        return
    if driver.nvml_error == 12 or (driver.state is State.ABSENT and driver.path is None):
        yield Finding(
            "no-driver",
            Severity.ERROR,
            "driver",
            "no NVIDIA driver: the NVML library (libnvidia-ml.so.1 / nvml.dll) is not on the loader path",
            (f"NVML said: {driver.reason}",) if driver.reason else (),
            "install the NVIDIA driver (on a container host, run with the NVIDIA container toolkit, e.g. --gpus all)",
        )
    elif driver.nvml_error == 18:
        yield Finding(
            "driver-module-mismatch",
            Severity.ERROR,
            "driver",
            "the NVIDIA kernel module and the user-space driver differ (driver upgraded without a reboot)",
            (f"NVML said: {driver.reason}", f"NVML library: {driver.path}"),
            "reboot, or unload and reload the nvidia kernel modules",
        )
    elif driver.nvml_error == 9:
        yield Finding(
            "driver-not-loaded",
            Severity.ERROR,
            "driver",
            "the NVIDIA driver is installed but its kernel module is not loaded",
            (f"NVML said: {driver.reason}", f"NVML library: {driver.path}"),
            "load the kernel module (modprobe nvidia) or reboot; check dmesg for why it failed",
        )
    else:
        yield Finding(
            "driver-error",
            Severity.ERROR,
            "driver",
            "NVML could not report on the driver",
            tuple(
                line for line in (f"NVML said: {driver.reason}", f"NVML library: {driver.path}") if "None" not in line
            ),
            "run nvidia-smi to see the same failure; check dmesg",
        )


def _no_gpu(env: Environment) -> Iterator[Finding]:
    if env.driver.state is State.FOUND and not env.driver.gpus:
        yield Finding(
            "no-gpu",
            Severity.ERROR,
            "driver",
            "the NVIDIA driver is running but reports no GPU",
            (f"driver {env.driver.version} via {env.driver.path}",),
            "check that the GPU is attached to this machine or container (nvidia-smi -L)",
        )


def _no_runtime(env: Environment) -> Iterator[Finding]:
    if not env.cuda_runtimes:
        yield Finding(
            "no-cuda-runtime",
            Severity.ERROR,
            "cuda-runtime",
            "no CUDA runtime (libcudart) found anywhere",
            (),
            "install the CUDA runtime, e.g. pip install nvidia-cuda-runtime-cu12, or the CUDA toolkit",
        )


def _runtime_evidence(runtime: CudaRuntime) -> str:
    return f"CUDA runtime {runtime.version or '?'} at {runtime.path} (via {', '.join(v.value for v in runtime.via)})"


def _runtime_failures(env: Environment) -> Iterator[Finding]:
    for runtime in env.cuda_runtimes:
        if runtime.state is State.ERROR:
            yield Finding(
                "cuda-runtime-probe-failed",
                Severity.WARNING,
                "cuda-runtime",
                f"probing the CUDA runtime at {runtime.path} failed",
                (runtime.reason or "",),
                "check the file: it may be truncated or built for another architecture",
            )


def _cudnn_evidence(cudnn: Cudnn) -> str:
    return f"cuDNN {cudnn.version or '?'} at {cudnn.path} (via {', '.join(v.value for v in cudnn.via)})"


def _cudnn_incomplete(env: Environment) -> Iterator[Finding]:
    for cudnn in env.cudnns:
        if cudnn.siblings_missing:
            yield Finding(
                "cudnn-incomplete",
                Severity.ERROR,
                "cudnn",
                f"cuDNN at {cudnn.path} is missing its sub-libraries; any call into it aborts the process",
                (_cudnn_evidence(cudnn), "missing beside it: " + ", ".join(cudnn.siblings_missing))
                + ((cudnn.reason,) if cudnn.reason else ()),
                "reinstall cuDNN completely (every libcudnn_* file of one release in one folder)",
            )
        elif cudnn.state is State.ERROR:
            yield Finding(
                "cudnn-probe-failed",
                Severity.ERROR,
                "cudnn",
                f"probing cuDNN at {cudnn.path} failed",
                (_cudnn_evidence(cudnn), cudnn.reason or ""),
                "reinstall cuDNN; the file may be damaged or built for another architecture",
            )


RULES: tuple[Rule, ...] = (_no_driver, _no_gpu, _no_runtime, _runtime_failures, _cudnn_incomplete)


def diagnose(env: Environment, rules: tuple[Rule, ...] = RULES) -> list[Finding]:
    """All findings, errors first, in a stable order."""
    findings = [finding for rule in rules for finding in rule(env)]
    return sorted(findings, key=lambda f: _ORDER[f.severity])


def verdict(findings: list[Finding]) -> Verdict:
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        first = errors[0].summary
        more = f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        return Verdict(False, f"cannot run GPU work: {first}{more}")
    return Verdict(True, "the GPU stack holds together")
