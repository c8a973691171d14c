"""One pytest run's view of the GPU stack: its settings (read and checked by :mod:`pytest_cudnn.settings`), the
environment (probed once), xdist GPU assignment and the records behind the summary and the reports.
:mod:`pytest_cudnn.plugin` keeps only the hooks.
"""

from __future__ import annotations

import json
import os
import sys
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from .files import FileRefused, append_regular, write_atomically
from .settings import (
    check_writable,
    ini_bool,
    misread_option,
    number_setting,
    path_option,
    require_gpu_setting,
    whole_setting,
)

if TYPE_CHECKING:  # the run imports what it uses when it uses it: a --collect-only run pays for none of it
    from .devices import CudaDevice
    from .diagnosis import Diagnosis, Finding, Verdict
    from .environment import Environment
    from .gpu import CudnnHandle, GpuDevice
    from .hosts import Host, Plan, Spec
    from .markers import Outcome, Requirement
    from .remote import Answer

__all__ = ["REPORT_ATTRIBUTE", "GpuRun", "inspect_only", "leave", "run_of", "xdist_specs", "xdist_worker_ids"]

# The TestReport attribute a test's GPU facts travel under. Reports carry arbitrary extra attributes through
# pytest's own report serialisation (pytest_report_to_serializable, which pytest-xdist uses), so the facts reach
# the controller without touching item.user_properties, which junitxml writes into every <testcase>.
REPORT_ATTRIBUTE = "pytest_cudnn"
_FACTS = pytest.StashKey[dict[str, Any]]()
_HOSTS = 16  # xdist hosts in the header, one line each; --gpu-report lists them all
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
    live = sys.modules.get("pytest_cudnn.live")  # NVML opened for live reads: shut when the last session ends
    if live is not None and not _RUNNING:
        live.close()


def xdist_specs(config: pytest.Config) -> list[Spec]:
    """The specs of the workers pytest-xdist will start (``-n N`` and ``--tx 2*popen`` expanded by xdist's own
    parser), in the controller; nothing elsewhere, nor for ``--tx`` values xdist itself cannot parse."""
    if getattr(config.option, "dist", "no") == "no" or not getattr(config.option, "tx", None):
        return []
    if hasattr(config, "workerinput"):
        return []
    try:  # only an xdist controller gets here, and xdist has imported both already
        import execnet
        from xdist.workermanage import parse_tx_spec_config  # type: ignore[import-untyped]

        return [execnet.XSpec(text) for text in parse_tx_spec_config(config)]
    except (ImportError, ValueError, AttributeError, IndexError, TypeError, pytest.UsageError):
        return []


def xdist_worker_ids(config: pytest.Config) -> list[str]:
    """The workers pytest-xdist will start, in the controller; nothing elsewhere."""
    from .hosts import worker_ids

    specs = xdist_specs(config)
    return worker_ids(specs) if specs else []


class GpuRun:
    """Lives in ``config.stash``; created on first use (xdist asks for worker counts before pytest_configure)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        # What the probe reads from the process is taken now, before any test can patch it: a probe that runs
        # later, in a test's setup, must see the session's environment and interpreter, not the test's.
        self.environ = dict(os.environ)
        self.python = sys.executable
        self.require_gpu = require_gpu_setting(config, self.environ)
        self.timeout = number_setting(config, "cudnn_timeout", "--gpu-probe-timeout", "gpu_probe_timeout", 0.001, 3600)
        self.per_worker = whole_setting(config, "cudnn_per_worker", "--gpus-per-worker", "gpus_per_worker", 1, 1024)
        self.assign = ini_bool(config, "gpu_assign") and config.getoption("cudnn_assign") is not False
        self.report_path = path_option(config, "cudnn_report", "--gpu-report", "PATH")
        snapshot = path_option(config, "cudnn_env", "--gpu-env", "FILE")
        self.snapshot: str | None = config.getoption("cudnn_env") if snapshot else None
        self.replaying = snapshot is not None  # nothing is read live, nothing a snapshot names is loaded
        self.replayed: Environment | None = None
        # An xdist worker takes the controller's copy: it may not even see the file (a relative path, another
        # working folder).
        if snapshot is not None and "cudnn_environment" not in (self.worker or {}):
            from .environment import InvalidSnapshot, load_snapshot

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
        # (nodeid, xdist worker) -> the test's facts: under --dist each a test runs on every worker, and each run
        # is its own entry (its host, its outcome, its reason)
        self.tests: dict[tuple[str, str | None], dict[str, Any]] = {}
        self.skips: dict[str, list[str]] = {}
        self.assignment: dict[str, tuple[CudaDevice, ...]] = {}  # xdist worker id -> its devices (controller)
        self.shortfall: str | None = None  # more GPUs per worker asked for than are visible (this host's)
        self._hosts: list[Host] | None = None  # the xdist workers' hosts (controller)
        self._answers: dict[str, Answer] | None = None  # remote hosts' probes, by host key
        self._host_diagnoses: dict[str, Diagnosis] = {}
        self._plans: dict[str, Plan] | None = None  # each host's devices per worker, by host key
        self.problems: list[str] = []  # reports that could not be written, said in the terminal summary
        self._device: GpuDevice | None = None
        self._visible: tuple[CudaDevice, ...] | None = None  # the first device CUDA sees, once looked up
        self._outcomes: dict[int, tuple[Requirement, Outcome, str]] = {}
        # A fixture's refusal -> its facts; weak, so only the exceptions pytest still holds (a session-scoped
        # fixture's, raised again in each test that asks for it) stay.
        self._refusals: weakref.WeakKeyDictionary[BaseException, dict[str, Any]] = weakref.WeakKeyDictionary()
        # A marker's refusal raised here (under -p no:skipping), to be reported at the test's own line.
        self._raised_skips: weakref.WeakSet[BaseException] = weakref.WeakSet()
        self.facts_plugin: object | None = None  # registered on the first fact: unmarked suites never pay for it
        self._active = False
        self.worker_id: str | None = (self.worker or {}).get("workerid")

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
            from .diagnosis import diagnose

            self._env = self._load()
            self._findings = diagnose(self._env)
            if self.worker is not None and "cudnn_visible" in self.worker:
                from .diagnosis.variables import set_for_worker

                outer = self.worker.get("cudnn_environment", {}).get("variables", {}).get("CUDA_VISIBLE_DEVICES")
                self._findings = set_for_worker(self._findings, self.worker_id, outer)
            from .diagnosis import judge_environment

            self._diagnosis = judge_environment(self._env, tuple(self._findings))
        return self._env

    def _load(self) -> Environment:
        from .environment import Environment

        if self.replayed is not None:
            env = self.replayed
        elif self.worker is not None and "cudnn_environment" in self.worker:
            # Devices are not checked again: the controller judged and planned with this very environment (live
            # NVML answers are not refused), and a refusal here would end the worker.
            env = Environment.from_json(self.worker["cudnn_environment"], "the xdist controller", check_devices=False)
        else:
            from .probing import probe_host

            return probe_host(self.environ, self.python, self.timeout)
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
            from .diagnosis import visible_gpus

            self._visible = visible_gpus(self.env)[:1]
        return self._visible[0] if self._visible else None

    def judge(self, requirement: Requirement) -> tuple[Outcome, str]:
        """A requirement's outcome on this run's device, and its description. The environment is fixed for the
        run and parsed requirements are shared (see plugin._parse), so each is judged once, found by identity:
        hashing a SpecifierSet canonicalises every version in it, tens of microseconds a time."""
        cached = self._outcomes.get(id(requirement))
        if cached is None or cached[0] is not requirement:
            from .markers import judge

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
        from .devices import with_free
        from .markers import Outcome, judge
        from .phrases import holders

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

    def header(self, verbose: bool) -> list[str]:
        """The session header. A nested run shows it only when it needs the environment from the start."""
        hosts = self.xdist_hosts()
        needed = self.replaying or self.require_gpu or self.report_path is not None or hosts
        if self.nested and not needed:
            return []
        # Imported only now: a nested run that shows nothing must not pay for the diagnosis (about 100 ms, again in
        # every pytester run, as pytester drops the modules a run imported).
        from .report import header_lines

        diagnosis = self.diagnosis
        lines = header_lines(
            diagnosis,
            runtime=diagnosis.runtime,
            cudnn=diagnosis.cudnn,
            verbose=verbose,
            source=self.snapshot,
        )
        if hosts:
            lines += self.xdist_lines()
        return lines

    # xdist -------------------------------------------------------------------------------------------
    def xdist_hosts(self) -> list[Host]:
        """The hosts the xdist workers run on, ``local`` first (see :mod:`pytest_cudnn.hosts`); in the controller
        only. A replayed snapshot stands for every worker's host."""
        if self._hosts is None:
            specs = xdist_specs(self.config)
            self._hosts = []
            if specs:  # a run without xdist imports nothing of it
                from .hosts import LOCAL, Host, group_hosts, worker_ids

                replayed = [Host(LOCAL, tuple(worker_ids(specs)))] if self.replaying else None
                self._hosts = replayed or group_hosts(specs)
        return self._hosts

    def _answers_of(self) -> dict[str, Answer]:
        """The remote hosts' probes, all made at once the first time one is asked for."""
        if self._answers is None:
            remote = [host for host in self.xdist_hosts() if not host.local]
            if remote:
                from .remote import probe_hosts

                self._answers = probe_hosts(remote, self.timeout, waiting=self._say)
            else:
                self._answers = {}
        return self._answers

    def _say(self, line: str) -> None:
        """A line on the terminal now, before the header it delays (standard error without a terminal reporter)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(line)
        else:
            sys.stderr.write(line + "\n")

    def host_environment(self, host: Host) -> Environment | None:
        """What ``host``'s workers are given: this run's environment for ``local``, the controller's probe of a
        remote host, None where its workers probe for themselves."""
        if host.local:
            return self.env
        answer = self._answers_of().get(host.key)
        return answer.environment if answer is not None else None

    def host_reason(self, host: Host) -> str | None:
        """Why ``host``'s workers probe for themselves; None when they do not."""
        if host.local:
            return None
        answer = self._answers_of().get(host.key)
        return answer.reason if answer is not None else host.unprobed

    def host_diagnosis(self, host: Host) -> Diagnosis | None:
        """The judgement of a host's environment, made once per host (None when its workers probe for
        themselves)."""
        if host.local:
            return self.diagnosis
        env = self.host_environment(host)
        if env is None:
            return None
        if host.key not in self._host_diagnoses:
            from .diagnosis import judge_environment

            self._host_diagnoses[host.key] = judge_environment(env)
        return self._host_diagnoses[host.key]

    def host_of(self, worker_id: str) -> Host | None:
        return next((host for host in self.xdist_hosts() if worker_id in host.workers), None)

    def plan(self) -> dict[str, Plan]:
        """Each host's devices per worker, by host key, computed once: a host's workers share that host's devices
        (those this run may use there, a partitioned GPU's MIG devices one by one), never another host's."""
        if self._plans is None:
            from .diagnosis import assignable_devices
            from .hosts import LOCAL, plan_devices

            plans = {}
            for host in self.xdist_hosts() if self.assign else []:
                env = self.host_environment(host)
                if env is not None:
                    plans[host.key] = plan_devices(assignable_devices(env), host.workers, self.per_worker)
            self._plans = plans
            self.assignment = {worker: devices for plan in plans.values() for worker, devices in plan.devices.items()}
            local = plans.get(LOCAL)
            self.shortfall = local.note if local is not None else None
        return self._plans

    def xdist_lines(self) -> list[str]:
        """The header's xdist lines: the workers' devices, and with workers elsewhere than here one line per host."""
        from .hosts import host_line, stack_summary, workers_line
        from .text import REPORT_WHOLE, summarised

        hosts, plans = self.xdist_hosts(), self.plan()
        if len(hosts) == 1 and hosts[0].local:
            return [workers_line(hosts[0].workers, plans.get(hosts[0].key))]

        def lines_of(host: Host) -> list[str]:
            judged = self.host_diagnosis(host)
            stack = stack_summary(judged.env, judged.verdict) if judged is not None else None
            return [host_line(host, stack, plans.get(host.key), self.host_reason(host))]

        return summarised(hosts, _HOSTS, lines_of, "xdist hosts", REPORT_WHOLE, "pytest-cudnn: {}".format)

    def worker_input(self, worker_id: str) -> dict[str, Any]:
        """What one worker is handed in its workerinput: its own host's environment and devices (none where its
        workers probe for themselves)."""
        handed: dict[str, Any] = {"cudnn_tests": self.keeps_tests}
        host = self.host_of(worker_id)
        env = self.host_environment(host) if host is not None else None
        if env is None:
            return handed
        handed["cudnn_environment"] = env.to_json()
        visible = self.worker_variables(worker_id).get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            handed["cudnn_visible"] = visible
        return handed

    def worker_variables(self, worker_id: str) -> dict[str, str]:
        """The process environment one worker starts with: its own devices, from its own host's plan."""
        from .devices import cuda_visible_value

        self.plan()
        gpus = self.assignment.get(worker_id)
        if not gpus:
            return {}
        return {"CUDA_VISIBLE_DEVICES": cuda_visible_value(gpus), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}

    def auto_workers(self) -> int:
        from .devices import devices_per_worker
        from .diagnosis import assignable_devices

        devices = assignable_devices(self.env)
        return max(1, len(devices) // devices_per_worker(devices, self.per_worker))

    # Fixtures ----------------------------------------------------------------------------------------
    def open_handle(self, fixture: str, framework: str | None = None) -> CudnnHandle:
        """A cuDNN handle through the copy the probe vouched for (the one ``framework`` loads; unnamed, the one
        the installed frameworks load), or an environment skip (a failure under --require-gpu) saying why there
        is none."""
        from packaging.specifiers import SpecifierSet

        from .deadline import Hung
        from .diagnosis import selected_runtime
        from .environment import Cudnn
        from .gpu import CudnnError, create_cudnn_handle
        from .markers import Outcome, Requirement, copy_for, judge

        if self.replaying:
            # A snapshot names libraries of another machine, or files anyone could have written: loading one
            # would run its code in this process. Replay never loads what a snapshot names.
            self.refuse_in_fixture(
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
        device = self.device()
        if not outcome.ok or not isinstance(cudnn, Cudnn) or device is None:
            self.refuse_in_fixture(outcome)
        if cudnn.create_status not in (None, 0):
            last = f" ({cudnn.last_error})" if cudnn.last_error else ""
            message = (
                f"cudnnCreate returned {cudnn.create_status} {cudnn.create_error}{last} "
                f"when probed through {cudnn.path}"
            )
            self.refuse_in_fixture(Outcome(False, message, "cudnn-create-failed"))
        # The device is chosen through a runtime of the CUDA major this cuDNN was built for, never another one.
        major = (cudnn.cudart_version or "").partition(".")[0]
        runtime = selected_runtime(env, SpecifierSet(f"=={major}.*")) if major.isdigit() else None
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
        self.refuse_in_fixture(failure)

    # Records -----------------------------------------------------------------------------------------
    def note(self, item: pytest.Item, **facts: Any) -> None:
        """Remember a fact of ``item``'s; it travels on the item's reports (see REPORT_ATTRIBUTE)."""
        if self.worker_id:
            facts["worker"] = self.worker_id
        item.stash.setdefault(_FACTS, {}).update(facts)
        if not self._active:
            self.activate()

    def activate(self) -> None:
        if not self._active and self.facts_plugin is not None:
            self._active = True
            self.config.pluginmanager.register(self.facts_plugin, "cudnn-facts")

    def refuse(self, item: pytest.Item, outcome: Outcome) -> None:
        """A requirement marker's environment skip, or a failure under --require-gpu."""
        self.note(item, reason=outcome.message, cause=outcome.cause)
        if self.require_gpu:
            pytest.fail(f"{outcome.message} [--require-gpu]", pytrace=False)
        if self.config.pluginmanager.has_plugin("skipping"):
            # A skip mark, evaluated by pytest's own skipping plugin right after this hook, reports the test's own
            # location rather than this file's.
            item.add_marker(pytest.mark.skip(reason=outcome.message))
            return
        # -p no:skipping: nothing evaluates skip marks, and the test would run on a stack that cannot run it. A
        # skip raised here is what pytest.skip() in the test is, which needs no plugin; its report is moved to
        # the test's line (relocate_skip).
        error = pytest.skip.Exception(outcome.message)
        self._raised_skips.add(error)
        raise error

    def relocate_skip(self, item: pytest.Item, error: BaseException | None, report: pytest.TestReport) -> None:
        """A marker's skip raised by :meth:`refuse` is reported at the test's line, as a skip mark's is, not at
        this file's."""
        # The type first: the test's own exception may not be hashable (a dataclass exception), and a WeakSet
        # lookup hashes it.
        if not isinstance(error, pytest.skip.Exception) or not isinstance(report.longrepr, tuple):
            return
        if error not in self._raised_skips:
            return
        path, line, _ = item.reportinfo()
        report.longrepr = (os.fspath(path), (line or 0) + 1, report.longrepr[2])

    def refuse_in_fixture(self, outcome: Outcome) -> NoReturn:
        """A fixture's environment skip, or a failure under --require-gpu. The facts go with the exception: a
        session-scoped fixture has no test of its own (its request.node is the Session), and pytest raises the
        same exception again in every test that asks for it."""
        error: BaseException
        if self.require_gpu:
            error = pytest.fail.Exception(f"{outcome.message} [--require-gpu]", pytrace=False)
        else:
            error = pytest.skip.Exception(outcome.message)
        self._refusals[error] = {"reason": outcome.message, "cause": outcome.cause}
        self.activate()
        raise error

    def facts_of(self, item: pytest.Item, error: BaseException | None) -> dict[str, Any] | None:
        facts = item.stash.get(_FACTS, None)
        # Only pytest's outcome exceptions can be refusals (and be looked up weakly: builtin ones cannot).
        if error is not None and self._refusals and isinstance(error, (pytest.skip.Exception, pytest.fail.Exception)):
            refused = self._refusals.get(error)
            if refused is not None:
                facts = {**(facts or {}), **refused}
                if self.worker_id:
                    facts["worker"] = self.worker_id
        return facts or None

    def record(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        """Gather what the (possibly remote) test recorded; runs where reports arrive: the controller. Other
        plugins send CollectReports through pytest_runtest_logreport too (pytest's own tests do)."""
        facts = getattr(report, REPORT_ATTRIBUTE, None)
        if not isinstance(report, pytest.TestReport) or not isinstance(facts, dict) or not facts:
            return
        worker = facts.get("worker")
        entry = self.tests.setdefault((report.nodeid, worker if isinstance(worker, str) else None), {})
        for key in ("requirements", "gpu", "worker"):
            if key in facts:
                entry[key] = facts[key]
        if "reason" in facts and "reason" not in entry:
            entry["reason"] = facts["reason"]
            entry["cause"] = facts.get("cause", "other")
            self.skips.setdefault(entry["cause"], []).append(facts["reason"])
        if report.when == "call" or report.outcome != "passed" or "outcome" not in entry:
            entry["outcome"] = report.outcome

    def skip_groups(self) -> list[tuple[str, int, str]]:
        groups = [(cause, len(messages), messages[0]) for cause, messages in self.skips.items()]
        return sorted(groups, key=lambda group: -group[1])

    def suite_properties(self) -> list[tuple[str, str]]:
        """The JUnit XML testsuite properties. A nested run that never needed the environment has none."""
        if self.nested and not self.probed:
            return []
        from .diagnosis import visible_gpus

        env = self.env
        runtime, cudnn = self.diagnosis.runtime, self.diagnosis.cudnn
        properties = {
            "gpu.driver": env.driver.version,
            "gpu.count": str(len(visible_gpus(env))),
            "gpu.cuda_runtime": runtime.version if runtime else None,
            "gpu.cudnn": cudnn.version if cudnn else None,
            "gpu.tensorflow": env.tensorflow.version,
            "gpu.verdict": self.verdict.summary,
        }
        return [(name, value) for name, value in properties.items() if value is not None]

    # The end of the run ------------------------------------------------------------------------------
    def finish(self, session: pytest.Session) -> None:
        """--require-gpu's verdict and the reports; in the process where reports arrive. A report that cannot be
        written is said in the terminal summary (self.problems) and leaves the exit status alone."""
        if self.require_gpu and not (self.verdict.ok and not self.broken_hosts()):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.report_path is not None:
            try:
                write_atomically(self.report_path, json.dumps(self.document(), indent=2), make_folders=True)
            except (OSError, FileRefused) as error:
                self.problems.append(
                    f"could not write --gpu-report {self.report_path}: {_reason(error, self.report_path)}"
                )
        if self.step_summary and not self.nested:
            from .report import markdown_summary

            text = markdown_summary(self.diagnosis, self.skip_groups())
            try:
                # Exactly one blank line on each side: Markdown would otherwise join the block to what other
                # steps wrote around it.
                append_regular(self.step_summary, f"\n{text.strip()}\n\n")
            except (OSError, FileRefused) as error:
                reason = _reason(error, Path(self.step_summary))
                self.problems.append(f"could not append to GITHUB_STEP_SUMMARY {self.step_summary}: {reason}")

    def document(self) -> dict[str, Any]:
        from .report import doctor_json

        hosts = self.xdist_hosts()
        if hosts:
            self.plan()
        document: dict[str, Any] = {
            **doctor_json(self.diagnosis),  # the doctor's document, and the run's keys after it
            "require_gpu": self.require_gpu,
            "xdist": {worker: [device.index for device in devices] for worker, devices in self.assignment.items()},
            "xdist_devices": {
                worker: [{"label": device.label, "uuid": device.uuid} for device in devices]
                for worker, devices in self.assignment.items()
            },
            "xdist_note": self.shortfall,
        }
        where: dict[str, str] = {}
        if any(not host.local for host in hosts):
            document["hosts"] = [self.host_entry(host) for host in hosts]
            where = {worker: host.key for host in hosts for worker in host.workers}
        document["tests"] = [
            {"nodeid": nodeid, **facts, **({"host": where[worker]} if worker in where else {})}
            for (nodeid, worker), facts in self.tests.items()
        ]
        return document

    def broken_hosts(self) -> list[tuple[str, str]]:
        """The other machines the controller probed for xdist workers whose stack cannot run GPU work, with the
        verdict of each (hosts whose workers probe for themselves are judged there, test by test)."""
        broken = []
        for host in self.xdist_hosts():
            judged = None if host.local else self.host_diagnosis(host)
            if judged is not None and not judged.verdict.ok:
                broken.append((host.key, judged.verdict.summary))
        return broken

    def host_entry(self, host: Host) -> dict[str, Any]:
        """One host of the report's ``hosts`` (see :func:`pytest_cudnn.hosts.host_entry`)."""
        from .hosts import host_entry

        judged = self.host_diagnosis(host)
        return host_entry(host, judged, self.plan().get(host.key), self.host_reason(host))


def _reason(error: OSError | FileRefused, path: Path) -> str:
    """The system's reason, and the folder it is about when that is not the file itself ('File exists' alone
    does not say that a file stands where a folder must be created); what stands at the path when it is refused."""
    if isinstance(error, FileRefused):
        return str(error)
    reason = error.strerror or str(error)
    if error.filename and Path(error.filename) in path.parents:
        reason += f": {error.filename}"
    return reason


RUN = pytest.StashKey[GpuRun]()


def run_of(config: pytest.Config) -> GpuRun:
    if RUN not in config.stash:
        config.stash[RUN] = GpuRun(config)
    return config.stash[RUN]
