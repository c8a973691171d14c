"""One pytest run's view of the GPU stack: its settings (read and checked by :mod:`pytest_cudnn._run.settings`), the
environment (probed once) and its one judgement, the test's device and the fixtures' cuDNN handle. The rest is split
by subject in :mod:`pytest_cudnn._run`: each test's facts (``records``), the xdist controller (``xdist``) and what
the run says and writes (:mod:`~pytest_cudnn._run.outputs`). :mod:`pytest_cudnn.plugin` keeps only the hooks.
"""

from __future__ import annotations

import os
import sys
import weakref
from typing import TYPE_CHECKING, Any

import pytest

from .._run.records import REPORT_ATTRIBUTE, Records
from .._run.xdist import XdistController, xdist_specs, xdist_worker_ids
from .settings import (
    cache_setting,
    check_writable,
    gpu_health_setting,
    ini_bool,
    misread_option,
    number_setting,
    path_option,
    require_gpu_setting,
    whole_setting,
)

if TYPE_CHECKING:  # the run imports what it uses when it uses it: a --collect-only run pays for none of it
    from pathlib import Path

    from ..devices import CudaDevice
    from ..diagnosis import Diagnosis, Finding, Verdict
    from ..environment import Environment
    from ..markers import Outcome, Requirement
    from ..probe.facts import FileFacts
    from .gpu import CudnnHandle, GpuDevice

__all__ = ["REPORT_ATTRIBUTE", "GpuRun", "inspect_only", "leave", "run_of", "xdist_specs", "xdist_worker_ids"]

# Options whose presence means nothing runs: no environment is needed, nothing is reported.
_INSPECT_ONLY = ("help", "collectonly", "showfixtures", "show_fixtures_per_test", "setupplan", "cacheshow")

# The pytest sessions configured in this process and not yet unconfigured. A session started while another one
# runs (pytester's runpytest and inline_run start one inside a test) is nested: it probes only when something asks
# for the environment and leaves the GitHub step summary to the outermost one. Nesting is a property of the
# process, so this cannot live in a config's stash. Entries leave in pytest_unconfigure (a hook wrapper, so even a
# failing unconfigure of another plugin cannot skip it); the set holds its configs weakly, so a config that is
# dropped without being unconfigured cannot mark later runs as nested.
_RUNNING: weakref.WeakSet[pytest.Config] = weakref.WeakSet()


def inspect_only(config: pytest.Config) -> bool:
    """``--help``, ``--collect-only``, ``--fixtures``, ``--fixtures-per-test``, ``--setup-plan``, ``--cache-show``:
    modes that run no test, so nothing is probed or reported."""
    return any(getattr(config.option, name, False) for name in _INSPECT_ONLY)


def leave(config: pytest.Config) -> None:
    _RUNNING.discard(config)
    live = sys.modules.get("pytest_cudnn._run.live")  # NVML opened for live reads: shut when the last session ends
    if live is not None and not _RUNNING:
        live.close()


class GpuRun:
    """Lives in ``config.stash``; created on first use (xdist asks for worker counts before pytest_configure)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        # What the probe reads from the process is taken now, before any test can patch it: a probe that runs
        # later, in a test's setup, must see the session's environment and interpreter, not the test's.
        self.environ = dict(os.environ)
        self.python = sys.executable
        self.require_gpu = require_gpu_setting(config, self.environ)
        self.gpu_health = gpu_health_setting(config, self.environ)
        self.cache = cache_setting(config, self.environ)
        self.facts: FileFacts | None = None  # what the probe read from the cache, once it ran
        self.timeout = number_setting(config, "cudnn_timeout", "--gpu-probe-timeout", "gpu_probe_timeout", 0.001, 3600)
        self.per_worker = whole_setting(config, "cudnn_per_worker", "--gpus-per-worker", "gpus_per_worker", 1, 1024)
        self.assign = ini_bool(config, "gpu_assign") and config.getoption("cudnn_assign") is not False
        self.report_path = path_option(config, "cudnn_report", "--gpu-report", "PATH")
        self.assert_gpu_used = bool(config.getoption("cudnn_assert_used", None) or ini_bool(config, "assert_gpu_used"))
        snapshot = path_option(config, "cudnn_env", "--gpu-env", "FILE")
        self.snapshot: str | None = config.getoption("cudnn_env") if snapshot else None
        self.replaying = snapshot is not None  # nothing is read live, nothing a snapshot names is loaded
        self.replayed: Environment | None = None
        # An xdist worker takes the controller's copy: it may not even see the file (a relative path, another
        # working folder).
        if snapshot is not None and "cudnn_environment" not in (self.worker or {}):
            from ..environment import InvalidSnapshot, load_snapshot

            try:
                self.replayed = load_snapshot(str(snapshot))
            except InvalidSnapshot as error:
                raise pytest.UsageError(f"--gpu-env: {error}") from None
        self.step_summary = self.environ.get("GITHUB_STEP_SUMMARY") or None
        # Each test's requirements and GPU go only into --gpu-report's "tests": without one (here, or in the
        # controller of this xdist worker), only refusals are noted (the skip groups need them), and a suite whose
        # markers are all satisfied pays no per-report bookkeeping.
        self.keeps_tests = (
            self.report_path is not None if self.worker is None else bool(self.worker.get("cudnn_tests", True))
        )
        self.nested = False
        self._env: Environment | None = None
        self._findings: list[Finding] = []
        self._diagnosis: Diagnosis | None = None
        self.problems: list[str] = []  # reports that could not be written, said in the terminal summary
        self._device: GpuDevice | None = None
        self._visible: tuple[CudaDevice, ...] | None = None  # the first device CUDA sees, once looked up
        self._outcomes: dict[int, tuple[Requirement, Outcome, str]] = {}
        self.worker_id: str | None = (self.worker or {}).get("workerid")
        self.records = Records(config, self.require_gpu, self.worker_id)  # each test's facts, the refusals
        self.xdist = XdistController(self)  # the controller's hosts, plans and workers

    def start(self) -> None:
        """Checks that need the whole configuration; pytest_configure, outside xdist workers."""
        self.nested = any(other is not self.config for other in _RUNNING)
        _RUNNING.add(self.config)
        if hasattr(self.config, "workerinput") or self.config.option.help:
            return
        misread = misread_option(self.config, self.environ)
        if misread:
            raise pytest.UsageError(misread)
        if self.report_path is not None and not inspect_only(self.config):
            if self.snapshot is not None and _same_file(self.report_path, self.snapshot):
                # The report would replace the snapshot it is made from (field test, leftovers).
                raise pytest.UsageError(
                    f"--gpu-report {self.report_path}: is the snapshot --gpu-env replays; name another file"
                )
            check_writable(self.report_path, "--gpu-report")

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
            from ..diagnosis import diagnose

            self._env = self._load()
            self._findings = diagnose(self._env)
            if self.worker is not None and "cudnn_visible" in self.worker:
                from ..diagnosis.variables import set_for_worker

                outer = self.worker.get("cudnn_environment", {}).get("variables", {}).get("CUDA_VISIBLE_DEVICES")
                self._findings = set_for_worker(self._findings, self.worker_id, outer)
            from ..diagnosis import judge_environment

            self._diagnosis = judge_environment(self._env, tuple(self._findings))
        return self._env

    def _load(self) -> Environment:
        from ..environment import Environment

        if self.replayed is not None:
            env = self.replayed
        elif self.worker is not None and "cudnn_environment" in self.worker:
            # Devices are not checked again: the controller judged and planned with this very environment (live
            # NVML answers are not refused), and a refusal here would end the worker.
            env = Environment.from_json(self.worker["cudnn_environment"], "the xdist controller", check_devices=False)
        else:
            from ..probe.facts import FileFacts
            from ..probing import probe_host

            self.facts = FileFacts.load(self.environ, self.cache)
            return probe_host(self.environ, self.python, self.timeout, facts=self.facts, meanwhile=_judging_modules)
        if self.worker is not None and "cudnn_visible" in self.worker:
            # This worker sees only its own GPUs: judge requirements against what it sees.
            variables = dict(env.variables, CUDA_VISIBLE_DEVICES=self.worker["cudnn_visible"])
            env = Environment.from_json(
                {**env.to_json(), "variables": variables}, "the xdist controller", check_devices=False
            )
        return env

    @property
    def findings(self) -> list[Finding]:
        _ = self.env
        return self._findings

    @property
    def diagnosis(self) -> Diagnosis:
        """The judgement of this run's environment, made once: the header, the markers, the fixtures and every
        report read it."""
        _ = self.env
        assert self._diagnosis is not None  # made with the environment
        return self._diagnosis

    @property
    def verdict(self) -> Verdict:
        return self.diagnosis.verdict

    def device(self) -> GpuDevice | None:
        """The GPU this process's tests run on: the first CUDA sees (in a worker, the worker's own)."""
        probed = self._cuda_device()
        if probed is None:
            return None
        if self._device is None:  # imports here, not above: this runs for every marked test
            from .gpu import GpuDevice

            nvml = self.env.driver.path  # read live through the NVML the probe read, by its path, never by soname
            self._device = GpuDevice.from_probe(probed, 0, replayed=self.replaying, nvml=nvml, timeout=self.timeout)
        return self._device

    def _cuda_device(self) -> CudaDevice | None:
        """That device as the probe saw it: what requirements are judged against."""
        if self._visible is None:
            from ..diagnosis import visible_gpus

            self._visible = visible_gpus(self.env)[:1]
        return self._visible[0] if self._visible else None

    def judge(self, requirement: Requirement) -> tuple[Outcome, str]:
        """A requirement's outcome on this run's device, and its description. The environment is fixed for the
        run and parsed requirements are shared (see plugin._parse), so each is judged once, found by identity:
        hashing a SpecifierSet canonicalises every version in it, tens of microseconds a time."""
        cached = self._outcomes.get(id(requirement))
        if cached is None or cached[0] is not requirement:
            from ..markers import judge

            device = self._cuda_device()
            cached = (requirement, judge(requirement, self.diagnosis, device), requirement.describe())
            self._outcomes[id(requirement)] = cached
        if requirement.memory is not None and not self.replaying:
            return self._judge_memory(requirement, cached[1]), cached[2]
        return cached[1], cached[2]

    def _judge_memory(self, requirement: Requirement, probed: Outcome) -> Outcome:
        """A memory requirement judged against the device's free memory now, read through NVML when the test is
        set up: other workers and processes may have taken what the session-start probe saw free. Short, it says
        who holds the memory. Unreadable now (NVML failed, hung, or cannot be loaded), the requirement cannot be
        confirmed: a refusal of its own cause, gpu-memory-unread, with what NVML said; the figure probed at session
        start is no evidence about a device that may have fallen off the bus since."""
        from ..devices import with_free
        from ..markers import Outcome, judge
        from ..phrases import holders

        device, probed_device = self.device(), self._cuda_device()
        reading = device.read() if device is not None else None
        if reading is None or probed_device is None:
            return probed
        if reading.free is None:
            if not probed.ok and probed.cause != "gpu-memory":
                return probed  # refused already, for something NVML has no say in
            unknown = judge(requirement, self.diagnosis, with_free(probed_device, None))
            return Outcome(False, f"{unknown.message} at test setup: {reading.error}", "gpu-memory-unread")
        outcome = judge(requirement, self.diagnosis, with_free(probed_device, reading.free))
        if outcome.ok or outcome.cause != "gpu-memory":
            return outcome
        listed = device.read(holders=True) if device is not None else None  # asked only when short
        if listed is not None and listed.error is not None:
            held = f"; its compute processes cannot be listed: {listed.error}"
        elif listed is not None and listed.holders:
            held = f"; held now by {holders(listed.holders)}"
        else:
            held = "; NVML lists no compute process"
        return Outcome(False, f"{outcome.message} at test setup{held}", outcome.cause)

    # xdist -------------------------------------------------------------------------------------------

    # Fixtures ----------------------------------------------------------------------------------------
    def open_handle(self, fixture: str, framework: str | None = None) -> CudnnHandle:
        """A cuDNN handle through the copy the probe vouched for (the one ``framework`` loads; unnamed, the one
        the installed frameworks load), or an environment skip (a failure under --require-gpu) saying why there
        is none."""
        from packaging.specifiers import SpecifierSet

        from .._base.deadline import Hung
        from .._base.versions import major_of
        from ..diagnosis import selected_runtime
        from ..environment import Cudnn
        from ..markers import Outcome, Requirement, copy_for, judge
        from .gpu import CudnnError, create_cudnn_handle

        if self.replaying:
            # A snapshot names libraries of another machine, or files anyone could have written: loading one
            # would run its code in this process. Replay never loads what a snapshot names.
            self.records.refuse_in_fixture(
                Outcome(
                    False,
                    f"{fixture} needs a live cuDNN, and this run replays the snapshot {self.snapshot} "
                    "(--gpu-env): pytest-cudnn never loads a library named in a snapshot",
                    "replayed-environment",
                )
            )
        diagnosis, env = self.diagnosis, self.env
        # The copy requires_cudnn(framework=...) judges, and its outcome: the fixture and the marker agree.
        requirement = Requirement("requires_cudnn", framework=framework)
        outcome = judge(requirement, diagnosis)
        judged = copy_for(requirement, diagnosis)
        cudnn = judged[0][1] if judged else None
        owner = judged[0][0] if judged else None
        device = self.device()
        if not outcome.ok or not isinstance(cudnn, Cudnn) or device is None:
            self.records.refuse_in_fixture(outcome)
        if cudnn.create_status not in (None, 0):
            last = f" ({cudnn.last_error})" if cudnn.last_error else ""
            message = (
                f"cudnnCreate returned {cudnn.create_status} {cudnn.create_error}{last} "
                f"when probed through {cudnn.path}"
            )
            self.records.refuse_in_fixture(Outcome(False, message, "cudnn-create-failed"))
        # The device is chosen through a runtime of the CUDA major this cuDNN was built for, never another one.
        major = (cudnn.cudart_version or "").partition(".")[0]
        runtime = owner.runtime if owner is not None and owner.runtime is not None else None
        if runtime is None or (runtime.version or "").partition(".")[0] != major:  # its framework's, else the loader's
            runtime = selected_runtime(env, SpecifierSet(f"=={major}.*")) if major_of(major) is not None else None
        runtime_path = runtime.path if runtime and (runtime.version or "").partition(".")[0] == major else None
        try:
            return create_cudnn_handle(
                cudnn.path,
                cudnn.version,
                runtime_path,
                device.cuda_index,
                driver=env.cuda_driver.path,
                timeout=self.timeout,
            )
        except Hung as error:
            failure = Outcome(False, f"cannot create a cuDNN handle: {error}", "cudnn-create-hung")
        except (CudnnError, OSError) as error:
            # A status means cuDNN answered; without one the library could not even be loaded (or is not here).
            cause = "cudnn-create-failed" if getattr(error, "status", None) is not None else "cudnn-not-loadable"
            failure = Outcome(False, f"cannot create a cuDNN handle: {error}", cause)
        self.records.refuse_in_fixture(failure)

    # Records -----------------------------------------------------------------------------------------

    # The end of the run ------------------------------------------------------------------------------


RUN = pytest.StashKey[GpuRun]()


def _same_file(path: Path, other: str) -> bool:
    """Whether ``path`` and ``other`` name one file (the same path, or a link to it)."""
    try:
        return os.path.samefile(path, other)
    except OSError:  # one of them does not exist (yet): then the same only as the same absolute path
        return os.path.abspath(path) == os.path.abspath(other)


def _judging_modules() -> None:
    """What the diagnosis and the header import, imported while the probe's child answers instead of after."""
    from .. import diagnosis, report  # noqa: F401


def run_of(config: pytest.Config) -> GpuRun:
    if RUN not in config.stash:
        config.stash[RUN] = GpuRun(config)
    return config.stash[RUN]
