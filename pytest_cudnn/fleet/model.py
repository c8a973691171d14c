"""What a fleet view holds: each runner's stack, verdict, findings and environment refusals as its report says
them, the reports that could not be read, and the differences between runners. Pure module: values only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "FactDifference",
    "FindingDifference",
    "Fleet",
    "FleetFinding",
    "FrameworkVerdict",
    "GpuModel",
    "GpuTest",
    "Problem",
    "Refusal",
    "RefusalDifference",
    "RefusalGroup",
    "Runner",
    "Stack",
]

SCHEMA = "pytest-cudnn/fleet"  # the JSON view's schema; its version changes only when a key changes meaning
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class GpuModel:
    """GPUs of one model and size on a runner: '2x NVIDIA A100-SXM4-80GB (80.0 GiB)'."""

    name: str | None
    count: int
    memory_total: int | None  # bytes, each


@dataclass(frozen=True)
class FrameworkVerdict:
    """One entry of a report's ``frameworks``: whether that framework can run GPU work on the runner."""

    name: str  # the import name: "torch", "jax", "tensorflow", "cupy", "onnxruntime"
    version: str | None
    ok: bool
    summary: str
    cause: str | None = None  # what the runner decided stops it (a finding's code); None when it can run


@dataclass(frozen=True)
class Stack:
    """The facts of a runner's GPU stack that decide what its tests can do."""

    python: str
    driver: str | None  # as NVML prints it; None when no driver answered
    driver_state: str  # "found", "absent" or "error"
    driver_reason: str | None  # why there is none, NVML's words
    cuda_driver: str | None  # the CUDA version the driver supports (cuDriverGetVersion, else NVML's)
    gpus: tuple[GpuModel, ...]
    visible_gpus: int  # the devices CUDA sees under the runner's CUDA_VISIBLE_DEVICES
    cuda_runtime: str | None  # the version of the copy the tests get
    cuda_runtime_path: str | None
    cudnn: str | None
    cudnn_path: str | None
    frameworks: tuple[FrameworkVerdict, ...]


@dataclass(frozen=True)
class FleetFinding:
    code: str
    severity: str  # "error", "warning", "info"
    summary: str
    gpus: tuple[int, ...] = ()  # the NVML indices of the GPUs it is about, as the report says


@dataclass(frozen=True)
class GpuTest:
    """One test of a report's ``tests``; ``reason`` is set when the environment refused it (a skip, or a failure
    under --require-gpu)."""

    nodeid: str
    outcome: str | None
    reason: str | None
    cause: str | None  # the requirement or finding that refused it, when the report records it


@dataclass(frozen=True)
class RefusalGroup:
    """The tests one cause refused on a runner."""

    cause: str  # the report's cause, else the requirement the reason names ('requires cuDNN >=9')
    outcomes: Mapping[str, int]  # "skipped" -> 3, "failed" -> 1 (failed: under --require-gpu)
    reason: str  # the first test's reason, and how many other reasons the group holds (text.group_reason)
    tests: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.tests)


@dataclass(frozen=True)
class Runner:
    """One runner, read from its report."""

    name: str
    path: str
    ok: bool
    verdict: str
    require_gpu: bool | None
    stack: Stack
    findings: tuple[FleetFinding, ...]
    tests: tuple[GpuTest, ...]
    refusals: tuple[RefusalGroup, ...]  # most tests first
    outcomes: Mapping[str, int]  # of every test the report records: "passed" -> 4
    hosts: tuple[str, ...] = ()  # remote xdist hosts, one line each, when the report names them
    xdist_workers: int = 0
    xdist_note: str | None = None


@dataclass(frozen=True)
class Problem:
    """A report that could not be read, and why: the runner is named, never dropped."""

    runner: str
    path: str
    reason: str


@dataclass(frozen=True)
class FactDifference:
    """One fact of the stack with more than one value across the runners (None: the runner has none)."""

    key: str  # stable: "driver", "cudnn", "framework:torch", ...
    label: str  # as people read it: "driver", "cuDNN", "PyTorch"
    values: Mapping[str, str | None]  # runner name -> value, in runner order


@dataclass(frozen=True)
class FindingDifference:
    """A finding some runners have and others do not."""

    code: str
    severity: str  # the most severe it has on any runner
    summary: str  # as the first runner that has it says it
    on: tuple[str, ...]
    not_on: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    """Why one runner's environment refused a test."""

    runner: str
    outcome: str | None
    cause: str
    reason: str


@dataclass(frozen=True)
class RefusalDifference:
    """A test the environment refused on some runners while others ran it."""

    nodeid: str
    ran_on: Mapping[str, str | None]  # runner -> its outcome there
    refused_on: tuple[Refusal, ...]


@dataclass(frozen=True)
class Fleet:
    runners: tuple[Runner, ...]
    problems: tuple[Problem, ...]
    facts: tuple[FactDifference, ...] = ()
    findings: tuple[FindingDifference, ...] = ()
    tests: tuple[RefusalDifference, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Every report read, every runner's stack able to run GPU work."""
        return not self.problems and all(runner.ok for runner in self.runners)
