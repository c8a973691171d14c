"""The xdist controller's side of a run: the hosts its workers run on, the controller's probe of each remote host
and its judgement, each host's devices per worker, and what each worker is handed (its host's environment, its own
``CUDA_VISIBLE_DEVICES``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from .._base.versions import decimal

if TYPE_CHECKING:
    from ..devices import CudaDevice
    from ..diagnosis import Diagnosis
    from ..document import HostEntry
    from ..environment import Environment
    from .hosts import Host, Plan, Spec
    from .remote import Answer

__all__ = ["XdistController", "expand_tx", "xdist_specs", "xdist_worker_ids"]

_HOSTS = 16  # xdist hosts in the header, one line each; --gpu-report lists them all


def xdist_specs(config: pytest.Config) -> list[Spec]:
    """The specs of the workers pytest-xdist will start (``-n N`` and ``--tx 2*popen`` expanded by xdist's own
    parser), in the controller; nothing elsewhere, nor for ``--tx`` values xdist itself cannot parse."""
    if getattr(config.option, "dist", "no") == "no" or not getattr(config.option, "tx", None):
        return []
    if hasattr(config, "workerinput"):
        return []
    try:  # only an xdist controller gets here, and xdist has imported execnet already
        import execnet

        return [execnet.XSpec(text) for text in expand_tx(config.option.tx)]
    except (ImportError, ValueError, AttributeError, IndexError, TypeError):
        return []


def expand_tx(values: Sequence[str]) -> list[str]:
    """The worker specs that ``--tx`` values give, each ``N*spec`` repeated N times, as pytest-xdist's
    documentation writes them ("--tx 3*popen//python=python3.9", "-n N" being N times "popen"); this is xdist's own
    expansion, restated here so that no private function of xdist is imported.

    >>> expand_tx(["2*popen", "ssh=box//python=python3", "socket=10.0.0.5:8888"])
    ['popen', 'popen', 'ssh=box//python=python3', 'socket=10.0.0.5:8888']
    """
    specs: list[str] = []
    for value in values:
        count, star, spec = value.partition("*")
        times = decimal(count.strip(), 6) if star else None
        specs += [spec] * times if times is not None else [value]
    return specs


def xdist_worker_ids(config: pytest.Config) -> list[str]:
    """The workers pytest-xdist will start, in the controller; nothing elsewhere."""
    from .hosts import worker_ids

    specs = xdist_specs(config)
    return worker_ids(specs) if specs else []


class _Run(Protocol):
    """What the controller reads of the run: its settings and its own environment's judgement."""

    config: pytest.Config
    replaying: bool
    timeout: float
    assign: bool
    per_worker: int
    keeps_tests: bool

    @property
    def env(self) -> Environment: ...

    @property
    def diagnosis(self) -> Diagnosis: ...


class XdistController:
    """Created with the run; asks for nothing until a method is called (a run without xdist pays for none of it)."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.assignment: dict[str, tuple[CudaDevice, ...]] = {}  # xdist worker id -> its devices (controller)
        self.shortfall: str | None = None  # more GPUs per worker asked for than are visible (this host's)
        self._hosts: list[Host] | None = None  # the xdist workers' hosts (controller)
        self._answers: dict[str, Answer] | None = None  # remote hosts' probes, by host key
        self._host_diagnoses: dict[str, Diagnosis] = {}
        self._plans: dict[str, Plan] | None = None  # each host's devices per worker, by host key

    def xdist_hosts(self) -> list[Host]:
        """The hosts the xdist workers run on, ``local`` first (see :mod:`pytest_cudnn._run.hosts`); in the controller
        only. A replayed snapshot stands for every worker's host."""
        if self._hosts is None:
            specs = xdist_specs(self.run.config)
            self._hosts = []
            if specs:  # a run without xdist imports nothing of it
                from .hosts import LOCAL, Host, group_hosts, worker_ids

                replayed = [Host(LOCAL, tuple(worker_ids(specs)))] if self.run.replaying else None
                self._hosts = replayed or group_hosts(specs)
        return self._hosts

    def _answers_of(self) -> dict[str, Answer]:
        """The remote hosts' probes, all made at once the first time one is asked for."""
        if self._answers is None:
            remote = [host for host in self.xdist_hosts() if not host.local]
            if remote:
                from .remote import probe_hosts

                self._answers = probe_hosts(remote, self.run.timeout, waiting=self._say)
            else:
                self._answers = {}
        return self._answers

    def _say(self, line: str) -> None:
        """A line on the terminal now, before the header it delays (standard error without a terminal reporter)."""
        reporter = self.run.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(line)
        else:
            sys.stderr.write(line + "\n")

    def host_environment(self, host: Host) -> Environment | None:
        """What ``host``'s workers are given: this run's environment for ``local``, the controller's probe of a
        remote host, None where its workers probe for themselves."""
        if host.local:
            return self.run.env
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
            return self.run.diagnosis
        env = self.host_environment(host)
        if env is None:
            return None
        if host.key not in self._host_diagnoses:
            from ..diagnosis import judge_environment

            self._host_diagnoses[host.key] = judge_environment(env)
        return self._host_diagnoses[host.key]

    def host_of(self, worker_id: str) -> Host | None:
        return next((host for host in self.xdist_hosts() if worker_id in host.workers), None)

    def plan(self) -> dict[str, Plan]:
        """Each host's devices per worker, by host key, computed once: a host's workers share that host's devices
        (those this run may use there, a partitioned GPU's MIG devices one by one), never another host's."""
        if self._plans is None:
            from ..diagnosis import assignable_devices
            from .hosts import LOCAL, plan_devices

            plans = {}
            for host in self.xdist_hosts() if self.run.assign else []:
                env = self.host_environment(host)
                if env is not None:
                    linked = frozenset(
                        (pair.first, pair.second)
                        for pair in env.driver.pairs
                        if (pair.p2p_read, pair.p2p_write) == (0, 0)
                    )
                    plans[host.key] = plan_devices(assignable_devices(env), host.workers, self.run.per_worker, linked)
            self._plans = plans
            self.assignment = {worker: devices for plan in plans.values() for worker, devices in plan.devices.items()}
            local = plans.get(LOCAL)
            self.shortfall = local.note if local is not None else None
        return self._plans

    def xdist_lines(self) -> list[str]:
        """The header's xdist lines: the workers' devices, and with workers elsewhere than here one line per host."""
        from .._base.text import REPORT_WHOLE, summarised
        from .hosts import host_line, stack_summary, workers_line

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
        handed: dict[str, Any] = {"cudnn_tests": self.run.keeps_tests}
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
        from ..devices import cuda_visible_value

        plans = self.plan()
        if any(worker_id in plan.refused for plan in plans.values()):
            return {"CUDA_VISIBLE_DEVICES": ""}  # no device at all: each one would refuse this worker's process
        gpus = self.assignment.get(worker_id)
        if not gpus:
            return {}
        return {"CUDA_VISIBLE_DEVICES": cuda_visible_value(gpus), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}

    def auto_workers(self) -> int:
        from ..devices import devices_per_worker
        from ..diagnosis import assignable_devices

        devices = assignable_devices(self.run.env)
        return max(1, len(devices) // devices_per_worker(devices, self.run.per_worker))

    def broken_hosts(self) -> list[tuple[str, str]]:
        """The other machines the controller probed for xdist workers whose stack cannot run GPU work, with the
        verdict of each (hosts whose workers probe for themselves are judged there, test by test)."""
        broken = []
        for host in self.xdist_hosts():
            judged = None if host.local else self.host_diagnosis(host)
            if judged is not None and not judged.verdict.ok:
                broken.append((host.key, judged.verdict.summary))
        return broken

    def host_entry(self, host: Host) -> HostEntry:
        """One host of the report's ``hosts`` (see :func:`pytest_cudnn._run.hosts.host_entry`)."""
        from .hosts import host_entry

        judged = self.host_diagnosis(host)
        return host_entry(host, judged, self.plan().get(host.key), self.host_reason(host))
