"""Which machine each pytest-xdist worker runs on, the devices each gets there, and how the hosts are shown.

Pure module: the ``--tx`` specs come in parsed (execnet's ``XSpec``, see :func:`pytest_cudnn._run.session.xdist_specs`).
A ``popen`` worker runs on the controller's machine, the host ``local``. ``ssh=HOST`` and ``socket=ADDR`` name
another machine, keyed by that value and the ``python=``, ``ssh_config=`` and ``env:`` settings given with it (they
change what a worker there runs and loads); the controller probes it once before its workers start
(:mod:`pytest_cudnn._run.remote`). A worker started through another gateway (``via=``) or by a kind the controller
cannot open on its own (``vagrant_ssh=``) probes for itself. ``id=``, ``chdir=``, ``nice=`` and ``execmodel=`` say
nothing about the machine. Worker ids are xdist's: a spec's ``id=``, else ``gw0``, ``gw1``, ... counting only the
specs without one, in ``--tx`` order (execnet's ``Group.allocate_id``).

A host's key is what the header, ``--gpu-report`` and the fleet show of it, so it never holds the value of an
``env:`` variable off the allowlist (xdist documents ``env:`` as the way to give remote workers variables, tokens
among them): ``env:MY_TOKEN=…``. Two hosts whose specs differ only by such a value are two hosts, numbered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from .._base.text import PYTEST_LINE, line
from ..devices import CudaDevice, assign_devices, devices_per_worker, exclusive_process, linked_first
from ..environment import shown_spec

if TYPE_CHECKING:
    from ..diagnosis import Diagnosis, Verdict
    from ..document import HostEntry
    from ..environment import Environment

__all__ = [
    "LOCAL",
    "Host",
    "Plan",
    "Spec",
    "collection_lines",
    "group_hosts",
    "host_entry",
    "host_line",
    "plan_devices",
    "shown_spec",
    "stack_summary",
    "worker_ids",
    "workers_line",
]

LOCAL = "local"


class Spec(Protocol):
    """What this module reads of an ``execnet.XSpec``."""

    @property
    def popen(self) -> object: ...
    @property
    def ssh(self) -> object: ...
    @property
    def socket(self) -> object: ...
    @property
    def vagrant_ssh(self) -> object: ...
    @property
    def via(self) -> object: ...
    @property
    def installvia(self) -> object: ...
    @property
    def python(self) -> object: ...
    @property
    def ssh_config(self) -> object: ...
    @property
    def id(self) -> object: ...
    @property
    def env(self) -> Mapping[Any, Any]: ...


@dataclass(frozen=True)
class Host:
    """One machine of the run and its workers. ``gateway``: the execnet spec the controller probes it through
    (None for ``local``, probed in-process, and for a host whose workers probe for themselves, ``unprobed`` saying
    why); ``variables``: the ``env:`` settings its workers start with, given to that probe too."""

    key: str
    workers: tuple[str, ...]
    gateway: str | None = None
    variables: Mapping[str, str] = field(default_factory=dict, repr=False)  # values never shown
    unprobed: str | None = None

    @property
    def local(self) -> bool:
        return self.key == LOCAL


@dataclass(frozen=True)
class Plan:
    """A host's devices per worker (a worker without any is left out), and the note when fewer devices are
    visible than each worker asked for."""

    devices: Mapping[str, tuple[CudaDevice, ...]]
    note: str | None = None
    refused: tuple[str, ...] = ()  # workers given no GPU: every one is EXCLUSIVE_PROCESS and held by another worker


def worker_ids(specs: Sequence[Spec]) -> list[str]:
    """The xdist worker ids of ``specs``, as execnet allocates them.

    >>> from execnet import XSpec
    >>> worker_ids([XSpec("popen"), XSpec("popen//id=mine"), XSpec("socket=h:1")])
    ['gw0', 'mine', 'gw1']
    """
    ids: list[str] = []
    counter = 0
    for spec in specs:
        if spec.id:
            ids.append(str(spec.id))
        else:
            ids.append(f"gw{counter}")
            counter += 1
    return ids


def group_hosts(specs: Sequence[Spec]) -> list[Host]:
    """The hosts of ``specs`` with their workers: ``local`` first (when it has workers), then the others in the
    order they are first named."""
    found: dict[str, tuple[Host, list[str]]] = {}
    for spec, worker in zip(specs, worker_ids(specs), strict=True):
        identity, host = _host_of(spec)
        found.setdefault(identity, (host, []))[1].append(worker)
    shown: dict[str, int] = {}
    for host, _ in found.values():
        shown[host.key] = shown.get(host.key, 0) + 1
    numbers: dict[str, int] = {}
    hosts = []
    for host, workers in found.values():
        key = host.key
        if shown[key] > 1:  # the same key shown for specs that differ only by hidden values
            numbers[key] = numbers.get(key, 0) + 1
            key = f"{key} #{numbers[key]}"
        hosts.append(replace(host, key=key, workers=tuple(workers)))
    return sorted(hosts, key=lambda host: not host.local)


def _host_of(spec: Spec) -> tuple[str, Host]:
    """The host one spec's worker runs on (its workers left empty), and what tells it from others: its key with
    the hidden values."""
    variables = {str(name): value for name, value in spec.env.items() if isinstance(value, str)}
    settings = [f"{name}={_text(spec, name)}" for name in ("python", "ssh_config") if _text(spec, name)]
    settings += [f"env:{name}={value}" for name, value in sorted(variables.items())]
    kind = next((name for name in ("ssh", "socket", "vagrant_ssh") if getattr(spec, name)), None)
    through = _text(spec, "via") or _text(spec, "installvia")
    if kind:
        identity = "//".join([f"{kind}={_text(spec, kind)}", *settings, *([f"via={through}"] if through else [])])
    elif spec.popen:
        identity = "//".join(["popen", *settings, f"via={through}"]) if through else LOCAL
    else:
        identity = str(spec)  # no kind execnet knows of: as written
    key = shown_spec(identity)
    if through:
        reason = f"started through the gateway {through!r}: the controller probes only the hosts it reaches directly"
        return identity, Host(key, (), None, variables, reason)
    if identity == LOCAL:
        return identity, Host(LOCAL, ())
    if kind == "ssh":
        chosen = [f"{name}={_text(spec, name)}" for name in ("ssh_config", "python") if _text(spec, name)]
        return identity, Host(key, (), "//".join([f"ssh={_text(spec, kind)}", *chosen]), variables)
    if kind == "socket":  # a socket server runs its own interpreter: execnet refuses python= there
        return identity, Host(key, (), f"socket={_text(spec, kind)}", variables)
    return identity, Host(key, (), None, variables, "the controller probes only ssh= and socket= hosts")


def _text(spec: Spec, name: str | None) -> str:
    """A spec setting as written; a bare key (``ssh``) reads as True in execnet and is shown as empty."""
    value = getattr(spec, name) if name else None
    return "" if value is None or value is True else str(value)


def plan_devices(
    visible: Sequence[CudaDevice],
    workers: Sequence[str],
    per_worker: int,
    linked: frozenset[tuple[int, int]] = frozenset(),
) -> Plan:
    """``workers`` sharing one host's ``visible`` devices, ``per_worker`` each (see
    :func:`~pytest_cudnn.devices.assign_devices`), GPUs that reach each other kept together (``linked``)."""
    visible = linked_first(visible, devices_per_worker(visible, per_worker), linked)
    note = None
    if devices_per_worker(visible, per_worker) < per_worker:
        note = (
            f"{per_worker} GPUs per worker asked for, and these are MIG devices: each worker gets one, "
            "as a CUDA process sees only one"
        )
    elif 0 < len(visible) < per_worker:
        note = f"{per_worker} GPUs per worker asked for, {len(visible)} visible: each worker gets all {len(visible)}"
    shares = assign_devices(visible, len(workers), per_worker)
    # Workers left without a GPU because each one visible is EXCLUSIVE_PROCESS and another worker holds it: they
    # are given none (CUDA_VISIBLE_DEVICES empty), never one that would refuse them.
    refused = tuple(worker for worker, share in zip(workers, shares, strict=True) if not share) if visible else ()
    if refused:
        held = ", ".join(device.label for device in visible if exclusive_process(device))
        note = f"{', '.join(refused)}: no GPU, {held} in compute mode EXCLUSIVE_PROCESS and held by another worker"
    return Plan({worker: share for worker, share in zip(workers, shares, strict=True) if share}, note, refused)


def _assigned(workers: Sequence[str], plan: Plan | None) -> str:
    devices = plan.devices if plan is not None else {}
    return ", ".join(
        f"{worker} -> " + "+".join(device.label for device in devices[worker])
        for worker in workers
        if worker in devices
    )


def workers_line(workers: Sequence[str], plan: Plan | None) -> str:
    """The header's line for a run whose workers all run here."""
    note = f" ({plan.note})" if plan is not None and plan.note else ""
    return line(f"pytest-cudnn: xdist workers: {_assigned(workers, plan) or 'no GPU assignment'}{note}", PYTEST_LINE)


def stack_summary(env: Environment, verdict: Verdict) -> str:
    """'driver 550.54.15, 2 GPUs, the GPU stack holds together'."""
    count = len(env.driver.gpus)
    driver = f"driver {env.driver.version}" if env.driver.version else "no NVIDIA driver"
    return f"{driver}, {count} GPU{'' if count == 1 else 's'}, {verdict.summary}"


def host_line(host: Host, stack: str | None, plan: Plan | None, reason: str | None) -> str:
    """The header's line for one host of a run with workers elsewhere than here. ``stack`` (its
    :func:`stack_summary`) is None when its workers probe for themselves, and ``reason`` says why."""
    workers = ", ".join(host.workers)
    if stack is None:
        who = "probes for itself" if len(host.workers) == 1 else "probe for themselves"
        text = f"pytest-cudnn: xdist host {host.key}: {workers} {who} ({reason or 'not probed by the controller'})"
    else:
        note = f" ({plan.note})" if plan is not None and plan.note else ""
        assigned = _assigned(host.workers, plan) or f"{workers}: no GPU assignment"
        text = f"pytest-cudnn: xdist host {host.key}: {stack}; {assigned}{note}"
    return line(text, PYTEST_LINE)


def host_entry(host: Host, judged: Diagnosis | None, plan: Plan | None, reason: str | None) -> HostEntry:
    """One host of ``--gpu-report``'s ``hosts``: ``environment``, ``findings``, ``verdict`` and ``frameworks`` are
    the controller's diagnosis of it, null (and ``findings`` and ``frameworks`` empty) when its workers probe for
    themselves."""
    from ..document import DeviceEntry, HostEntry
    from ..report import framework_entries

    devices = plan.devices if plan is not None else {}
    return HostEntry(
        host=host.key,
        workers=tuple(host.workers),
        probed_by="controller" if judged is not None else "workers",
        reason=reason,
        summary=stack_summary(judged.env, judged.verdict) if judged is not None else None,
        environment=judged.env if judged is not None else None,
        findings=judged.findings if judged is not None else (),
        verdict=judged.verdict if judged is not None else None,
        frameworks=framework_entries(judged) if judged is not None else (),
        devices={
            worker: tuple(DeviceEntry(device.label, device.uuid, device.index) for device in share)
            for worker, share in devices.items()
        },
        note=plan.note if plan is not None else None,
    )


def collection_lines(collected: Mapping[str, int], hosts: Sequence[Host]) -> list[str]:
    """The workers that collected no test while another collected some (the number each collected, by worker).
    xdist starts a worker on another machine in ``pyexecnetcache`` under the folder its server or login starts
    in, unless the spec names one with ``chdir=`` (xdist.workermanage.NodeManager): the suite's rootdir, its
    pytest.ini and ``testpaths`` do not apply there, and under ``--dist each`` xdist says nothing of it."""
    most = max(collected.items(), key=lambda item: item[1], default=None)
    if most is None or most[1] == 0:
        return []
    where = {worker: host for host in hosts for worker in host.workers}
    lines = []
    for worker, count in collected.items():
        if count:
            continue
        host = where.get(worker)
        remote = host is not None and not host.local
        text = f"pytest-cudnn: xdist worker {worker}{f' on {host.key}' if remote and host else ''} collected no test"
        text += f", {most[0]} collected {most[1]}"
        if remote:
            text += (
                ": xdist starts a worker on another machine in pyexecnetcache, where this suite's rootdir, pytest.ini "
                "and testpaths do not apply; name the suite's folder there with --tx SPEC//chdir=FOLDER"
            )
        lines.append(line(text, PYTEST_LINE))
    return lines
