"""One pytest run's view of the GPU stack: settings, the environment (probed once), xdist GPU assignment and the
records behind the summary and the reports. :mod:`pytest_cudnn.plugin` keeps only the hooks.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from .devices import assign_devices, cuda_visible_value
from .diagnosis import Finding, Verdict, diagnose, verdict, visible_gpus
from .environment import Environment, Gpu, InvalidSnapshot, load_snapshot
from .gpu import GpuDevice
from .markers import Outcome, Requirement, judge

__all__ = ["ENV_REQUIRE_GPU", "RECORD", "GpuRun", "run_of"]

ENV_REQUIRE_GPU = "PYTEST_CUDNN_REQUIRE_GPU"
RECORD = "pytest_cudnn"  # the user_properties key a test's GPU facts travel under (to the xdist controller)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _require_gpu(config: pytest.Config) -> bool:
    cli = config.getoption("cudnn_require_gpu")
    if cli is not None:
        return bool(cli)
    raw = os.environ.get(ENV_REQUIRE_GPU)
    if raw is not None:
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise pytest.UsageError(f"{ENV_REQUIRE_GPU}={raw!r}: expected 1/0, true/false, yes/no or on/off")
    return bool(config.getini("require_gpu"))


def _number(config: pytest.Config, option: str, flag: str, ini: str, low: float, high: float) -> float:
    cli = config.getoption(option)
    raw = cli if cli is not None else config.getini(ini)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = low - 1
    if not low <= value <= high:
        where = flag if cli is not None else f"the {ini} ini key"
        raise pytest.UsageError(f"{where}: {raw!r} is not a number between {low:g} and {high:g}")
    return value


class GpuRun:
    """Lives in ``config.stash``; created on first use (xdist asks for worker counts before pytest_configure)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.require_gpu = _require_gpu(config)
        self.timeout = _number(config, "cudnn_timeout", "--gpu-probe-timeout", "gpu_probe_timeout", 0.001, 3600)
        self.per_worker = int(_number(config, "cudnn_per_worker", "--gpus-per-worker", "gpus_per_worker", 1, 1024))
        self.assign = bool(config.getini("gpu_assign")) and config.getoption("cudnn_assign") is not False
        self.snapshot: str | None = config.getoption("cudnn_env")
        self.replayed: Environment | None = None
        if self.snapshot:
            try:
                self.replayed = load_snapshot(self.snapshot)
            except InvalidSnapshot as error:
                raise pytest.UsageError(f"--gpu-env: {error}") from None
        self._env: Environment | None = None
        self._findings: list[Finding] = []
        self.tests: dict[str, dict[str, Any]] = {}
        self.skips: dict[str, list[str]] = {}
        self.assignment: dict[str, tuple[Gpu, ...]] = {}  # xdist worker id -> its GPUs (controller side)
        self._device: tuple[GpuDevice, ...] | None = None
        self._outcomes: dict[int, tuple[Requirement, Outcome, str]] = {}

    # The environment ---------------------------------------------------------------------------------
    @property
    def worker(self) -> dict[str, Any] | None:
        workerinput = getattr(self.config, "workerinput", None)
        return workerinput if isinstance(workerinput, dict) else None

    @property
    def probed(self) -> bool:
        return self._env is not None

    @property
    def env(self) -> Environment:
        if self._env is None:
            self._env = self._load()
            self._findings = diagnose(self._env)
        return self._env

    def _load(self) -> Environment:
        if self.replayed is not None:
            env = self.replayed
        elif self.worker is not None and "cudnn_environment" in self.worker:
            env = Environment.from_json(self.worker["cudnn_environment"], "the xdist controller")
        else:
            from .probe import ProbeOptions, probe_environment

            return probe_environment(ProbeOptions(job_timeout=self.timeout))
        if self.worker is not None and "cudnn_visible" in self.worker:
            # This worker sees only its own GPUs: judge requirements against what it sees.
            variables = dict(env.variables, CUDA_VISIBLE_DEVICES=self.worker["cudnn_visible"])
            env = Environment.from_json({**env.to_json(), "variables": variables}, "the xdist controller")
        return env

    @property
    def findings(self) -> list[Finding]:
        _ = self.env
        return self._findings

    @property
    def verdict(self) -> Verdict:
        return verdict(self.findings)

    def device(self) -> GpuDevice | None:
        """The GPU this process's tests run on: the first CUDA sees (in a worker, the worker's own)."""
        if self._device is None:
            gpus = visible_gpus(self.env)
            self._device = (GpuDevice.from_probe(gpus[0], 0, replayed=self.replayed is not None),) if gpus else ()
        return self._device[0] if self._device else None

    def judge(self, requirement: Requirement) -> tuple[Outcome, str]:
        """A requirement's outcome on this run's device, and its description. The environment is fixed for the
        run and parsed requirements are shared (see plugin._parse), so each is judged once, found by identity:
        hashing a SpecifierSet canonicalises every version in it, tens of microseconds a time."""
        cached = self._outcomes.get(id(requirement))
        if cached is None or cached[0] is not requirement:
            device = self.device()
            gpu = next((g for g in visible_gpus(self.env) if device and g.index == device.index), None)
            cached = (requirement, judge(requirement, self.env, self.findings, gpu), requirement.describe())
            self._outcomes[id(requirement)] = cached
        return cached[1], cached[2]

    # xdist -------------------------------------------------------------------------------------------
    def plan(self, worker_ids: list[str]) -> dict[str, tuple[Gpu, ...]]:
        """The GPUs of each worker, computed once from the GPUs this run may use."""
        if not self.assignment and self.assign:
            shares = assign_devices(visible_gpus(self.env), len(worker_ids), self.per_worker)
            self.assignment = {worker: gpus for worker, gpus in zip(worker_ids, shares, strict=True) if gpus}
        return self.assignment

    def worker_variables(self, worker_id: str) -> dict[str, str]:
        gpus = self.assignment.get(worker_id)
        if not gpus:
            return {}
        return {"CUDA_VISIBLE_DEVICES": cuda_visible_value(gpus), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}

    def auto_workers(self) -> int:
        return max(1, len(visible_gpus(self.env)) // self.per_worker)

    # Records -----------------------------------------------------------------------------------------
    def refuse(self, item: pytest.Item, outcome: Outcome, *, in_fixture: bool = False) -> None:
        """An environment-caused skip, or a failure under --require-gpu."""
        item.user_properties.append((RECORD, {"reason": outcome.message, "cause": outcome.cause}))
        if self.require_gpu:
            pytest.fail(f"{outcome.message} [--require-gpu]", pytrace=False)
        if in_fixture:
            pytest.skip(outcome.message)
        # A skip mark, evaluated by pytest's own skipping plugin right after this hook, reports the test's own
        # location rather than this file's.
        item.add_marker(pytest.mark.skip(reason=outcome.message))

    def record(self, report: pytest.TestReport) -> None:
        """Gather what the (possibly remote) test recorded; runs where reports arrive: the controller."""
        facts: dict[str, Any] = {}
        for key, value in report.user_properties:
            if key == RECORD and isinstance(value, dict):
                facts.update(value)
        if not facts:
            return
        entry = self.tests.setdefault(report.nodeid, {})
        for key in ("requirements", "gpu", "worker"):
            if key in facts:
                entry[key] = facts[key]
        if "reason" in facts and "reason" not in entry:
            entry["reason"] = facts["reason"]
            self.skips.setdefault(facts.get("cause", "other"), []).append(facts["reason"])
        if report.when == "call" or report.outcome != "passed" or "outcome" not in entry:
            entry["outcome"] = report.outcome

    def skip_groups(self) -> list[tuple[str, int, str]]:
        groups = [(cause, len(messages), messages[0]) for cause, messages in self.skips.items()]
        return sorted(groups, key=lambda group: -group[1])


RUN = pytest.StashKey[GpuRun]()


def run_of(config: pytest.Config) -> GpuRun:
    if RUN not in config.stash:
        config.stash[RUN] = GpuRun(config)
    return config.stash[RUN]
