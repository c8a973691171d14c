"""pytest-xdist workers on other machines (``--tx socket=``, ``--tx ssh=``): each host probed once by the controller,
each worker given its own host's environment and devices, never another's.

End to end, host B is a simulated host serving xdist through execnet's socket server (tests/remotehost.py), beside
a local ``popen`` worker on host A, where the controller runs: each with its own stand-in driver and NVML log.
"""

from __future__ import annotations

import doctest
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import execnet
import pytest

import pytest_cudnn._run.hosts
from pytest_cudnn._base.serde import to_json
from pytest_cudnn._run.hosts import (
    LOCAL,
    Host,
    Plan,
    collection_lines,
    group_hosts,
    host_entry,
    host_line,
    plan_devices,
    shown_spec,
    stack_summary,
    worker_ids,
    workers_line,
)
from pytest_cudnn._run.remote import Answer, deadline, probe_hosts, read_answer
from pytest_cudnn._run.session import xdist_worker_ids
from pytest_cudnn.devices import CudaDevice, devices_of
from pytest_cudnn.diagnosis import diagnose, judge_environment, verdict
from pytest_cudnn.environment import Environment
from pytest_cudnn.fleet import Runner, read_runner

from .envbuilder import EnvBuilder, gpu, mig, partitioned
from .interrupts import interruptible
from .remotehost import SocketServer, free_port, session_members, silent_listener
from .simhost import PYTEST, Compiler, SimGpu, SimHost

# Grouping ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "specs",
    [
        ["popen", "popen"],
        ["popen//id=mine", "socket=h:1", "popen//id=other", "ssh=box"],
        ["socket=h:1//id=gw1", "popen", "popen"],  # the counter does not skip an id= it will reach
        ["execmodel=main_thread_only//popen", "execmodel=main_thread_only//ssh=box//id=b"],
    ],
)
def test_worker_ids_are_those_execnet_allocates(specs: list[str]) -> None:
    parsed = [execnet.XSpec(spec) for spec in specs]
    group = execnet.Group()
    allocated = []
    for spec in [execnet.XSpec(spec) for spec in specs]:
        group.allocate_id(spec)
        allocated.append(spec.id)
    assert worker_ids(parsed) == allocated


def test_the_examples_in_the_hosts_module_hold() -> None:
    result = doctest.testmod(pytest_cudnn._run.hosts)
    assert (result.attempted > 0, result.failed) == (True, 0)


def _grouped(*specs: str) -> list[tuple[str, tuple[str, ...], str | None, bool]]:
    return [
        (host.key, host.workers, host.gateway, host.unprobed is not None)
        for host in group_hosts([execnet.XSpec(spec) for spec in specs])
    ]


@pytest.mark.parametrize(
    ("specs", "hosts"),
    [
        pytest.param(["popen", "popen"], [(LOCAL, ("gw0", "gw1"), None, False)], id="popen"),
        pytest.param(
            ["popen//python=/usr/bin/python3.12//chdir=/tmp//nice=5", "popen//env:X=1"],
            [(LOCAL, ("gw0", "gw1"), None, False)],
            id="popen with settings is still here",
        ),
        pytest.param(
            ["socket=10.0.0.1:4242", "socket=10.0.0.1:4242"],
            [("socket=10.0.0.1:4242", ("gw0", "gw1"), "socket=10.0.0.1:4242", False)],
            id="two sockets to one address",
        ),
        pytest.param(
            ["socket=h:1//chdir=/work", "socket=h:1//id=w9"],
            [("socket=h:1", ("gw0", "w9"), "socket=h:1", False)],
            id="chdir= and id= say nothing of the machine",
        ),
        pytest.param(
            ["socket=h:1", "popen", "ssh=box"],
            [
                (LOCAL, ("gw1",), None, False),
                ("socket=h:1", ("gw0",), "socket=h:1", False),
                ("ssh=box", ("gw2",), "ssh=box", False),
            ],
            id="local first, then in the order named",
        ),
        pytest.param(
            ["ssh=box//python=python3.12", "ssh=box"],
            [
                ("ssh=box//python=python3.12", ("gw0",), "ssh=box//python=python3.12", False),
                ("ssh=box", ("gw1",), "ssh=box", False),
            ],
            id="python= is another interpreter",
        ),
        pytest.param(
            ["ssh=box//ssh_config=cfg//python=py"],
            [("ssh=box//python=py//ssh_config=cfg", ("gw0",), "ssh=box//ssh_config=cfg//python=py", False)],
            id="ssh_config= reaches the host",
        ),
        pytest.param(
            ["socket=h:1//python=py"],
            [("socket=h:1//python=py", ("gw0",), "socket=h:1", False)],
            id="a socket server runs its own interpreter",
        ),
        pytest.param(
            ["ssh=box//env:LD_LIBRARY_PATH=/opt/cuda", "ssh=box"],
            [
                ("ssh=box//env:LD_LIBRARY_PATH=/opt/cuda", ("gw0",), "ssh=box", False),
                ("ssh=box", ("gw1",), "ssh=box", False),
            ],
            id="env: changes what loads",
        ),
        pytest.param(
            ["popen//via=proxy", "ssh=box//via=proxy", "popen//via=proxy"],
            [("popen//via=proxy", ("gw0", "gw2"), None, True), ("ssh=box//via=proxy", ("gw1",), None, True)],
            id="via= workers probe for themselves",
        ),
        pytest.param(["vagrant_ssh=vm"], [("vagrant_ssh=vm", ("gw0",), None, True)], id="vagrant_ssh= is not probed"),
        pytest.param(
            ["execmodel=main_thread_only//socket=h:1"],
            [("socket=h:1", ("gw0",), "socket=h:1", False)],
            id="xdist's execmodel= prefix",
        ),
    ],
)
def test_specs_are_grouped_by_the_machine_their_workers_run_on(
    specs: list[str], hosts: list[tuple[str, tuple[str, ...], str | None, bool]]
) -> None:
    assert _grouped(*specs) == hosts


def test_env_settings_of_a_remote_host_go_to_its_probe() -> None:
    [host] = group_hosts([execnet.XSpec("socket=h:1//env:LD_LIBRARY_PATH=/opt/cuda//env:FLAG")])
    assert host.variables == {"LD_LIBRARY_PATH": "/opt/cuda"}  # a bare env:FLAG has no value to give


SECRET = "s3cr3t-value-7f2a"


@pytest.mark.parametrize(
    ("specs", "keys"),
    [
        pytest.param(
            [f"socket=h:1//env:MY_TOKEN={SECRET}//env:LD_LIBRARY_PATH=/opt/cuda"],
            ["socket=h:1//env:LD_LIBRARY_PATH=/opt/cuda//env:MY_TOKEN=\u2026"],
            id="only allowlisted values are shown",
        ),
        pytest.param(
            [f"socket=h:1//env:MY_TOKEN={SECRET}", "socket=h:1//env:MY_TOKEN=other", "socket=h:1"],
            ["socket=h:1//env:MY_TOKEN=\u2026 #1", "socket=h:1//env:MY_TOKEN=\u2026 #2", "socket=h:1"],
            id="hosts that differ by a hidden value are told apart by number",
        ),
        pytest.param(
            [f"ssh=box//env:MY_TOKEN={SECRET}//via=proxy"],
            ["ssh=box//env:MY_TOKEN=\u2026//via=proxy"],
            id="via=",
        ),
        pytest.param(
            [f"env:MY_TOKEN={SECRET}//installvia=proxy"],
            ["env:MY_TOKEN=\u2026//installvia=proxy"],
            id="a spec of no kind named as written",
        ),
    ],
)
def test_env_values_off_the_allowlist_are_never_in_a_hosts_key(specs: list[str], keys: list[str]) -> None:
    """xdist documents ``env:`` as the way to give remote workers variables, tokens among them: a host's key is
    shown in the header and written to --gpu-report, so it names them without the values."""
    hosts = group_hosts([execnet.XSpec(spec) for spec in specs])
    assert [host.key for host in hosts] == keys
    assert SECRET not in repr(hosts)
    assert hosts[0].variables["MY_TOKEN"] == SECRET  # its probe still gets it
    assert [shown_spec(host.key) for host in hosts] == keys  # hiding a key again (the fleet does) keeps it


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (f"socket=h:1//env:MY_TOKEN={SECRET}", "socket=h:1//env:MY_TOKEN=\u2026"),
        (
            f"ssh=b//env:CUDA_VISIBLE_DEVICES=1//env:T={SECRET}//via=p",
            "ssh=b//env:CUDA_VISIBLE_DEVICES=1//env:T=\u2026//via=p",
        ),
        ("socket=h:1//env:FLAG", "socket=h:1//env:FLAG"),
        ("local", "local"),
    ],
    ids=["a token", "an allowlisted value kept", "a bare name", "local"],
)
def test_a_report_of_an_older_version_has_its_hosts_values_hidden_by_the_fleet(
    tmp_path: Path, written: str, shown: str
) -> None:
    """Reports written before hosts' keys left values out still name them: the fleet hides them all the same."""
    document: dict[str, Any] = {
        "environment": TWO_GPUS.to_json(),
        "findings": [],
        "verdict": {"ok": True, "summary": "the GPU stack holds together"},
        "frameworks": [],
        "tests": [],
        "hosts": [{"host": written, "workers": ["gw1"], "summary": "fine"}, written],
    }
    (tmp_path / "r.json").write_text(json.dumps(document))
    runner = read_runner("r", str(tmp_path / "r.json"))
    assert isinstance(runner, Runner)
    assert runner.hosts == (f"{shown} (gw1): fine", shown)


def _config(tx: list[str], dist: str = "load") -> pytest.Config:
    options = SimpleNamespace(tx=tx, dist=dist)
    return cast(pytest.Config, SimpleNamespace(option=options, getvalue=lambda name: getattr(options, name)))


@pytest.mark.parametrize(
    ("tx", "dist", "expected"),
    [
        (["2*popen"], "load", ["gw0", "gw1"]),  # one option string, two workers
        (["2*popen", "socket=h:1//id=b", "3*ssh=box"], "each", ["gw0", "gw1", "b", "gw2", "gw3", "gw4"]),
        (["popen"], "no", []),
        ([], "load", []),
        (["0*popen"], "load", []),  # xdist's own usage error, not ours
        ([""], "load", []),  # execnet cannot parse it: xdist will say so
    ],
)
def test_xdist_worker_ids_expand_n_times_a_spec(tx: list[str], dist: str, expected: list[str]) -> None:
    assert xdist_worker_ids(_config(tx, dist)) == expected


# Devices per host ---------------------------------------------------------------------------------


def _devices(*gpus: Any) -> list[CudaDevice]:
    return [device for each in gpus for device in devices_of(each)]


@pytest.mark.parametrize(
    ("visible", "workers", "per_worker", "expected", "note"),
    [
        (_devices(gpu(0), gpu(1)), ["gw1", "gw2"], 1, {"gw1": ["GPU 0"], "gw2": ["GPU 1"]}, None),
        (_devices(gpu(0), gpu(1)), ["a", "b", "c"], 1, {"a": ["GPU 0"], "b": ["GPU 1"], "c": ["GPU 0"]}, None),
        (
            _devices(gpu(0)),
            ["gw0"],
            2,
            {"gw0": ["GPU 0"]},
            "2 GPUs per worker asked for, 1 visible: each worker gets all 1",
        ),
        (
            _devices(partitioned(0, mig(0), mig(1))),
            ["gw0", "gw1"],
            2,
            {"gw0": ["GPU 0 MIG 0"], "gw1": ["GPU 0 MIG 1"]},
            "2 GPUs per worker asked for, and these are MIG devices: each worker gets one, as a CUDA process sees "
            "only one",
        ),
        ([], ["gw0"], 1, {}, None),
    ],
)
def test_a_hosts_workers_share_that_hosts_devices(
    visible: list[CudaDevice], workers: list[str], per_worker: int, expected: dict[str, list[str]], note: str | None
) -> None:
    plan = plan_devices(visible, workers, per_worker)
    assert {worker: [device.label for device in devices] for worker, devices in plan.devices.items()} == expected
    assert plan.note == note


# Header and report ---------------------------------------------------------------------------------

TWO_GPUS = EnvBuilder.healthy().with_gpus(gpu(0), gpu(1)).build()
NO_DRIVER = EnvBuilder.healthy().without_driver().build()


def test_a_run_with_local_workers_only_keeps_its_one_line() -> None:
    plan = plan_devices(_devices(gpu(0), gpu(1)), ["gw0", "gw1"], 1)
    assert workers_line(["gw0", "gw1"], plan) == "pytest-cudnn: xdist workers: gw0 -> GPU 0, gw1 -> GPU 1"
    assert workers_line(["gw0"], None) == "pytest-cudnn: xdist workers: no GPU assignment"


@pytest.mark.parametrize(
    ("env", "summary"),
    [
        (TWO_GPUS, "driver 550.54.15, 2 GPUs, the GPU stack holds together"),
        (EnvBuilder.healthy().build(), "driver 550.54.15, 1 GPU, the GPU stack holds together"),
        (NO_DRIVER, "no NVIDIA driver, 0 GPUs, cannot run GPU work: "),
    ],
)
def test_a_hosts_stack_in_one_phrase(env: Environment, summary: str) -> None:
    assert stack_summary(env, verdict(diagnose(env))).startswith(summary)


@pytest.mark.parametrize(
    ("host", "stack", "plan", "reason", "line"),
    [
        (
            Host("socket=127.0.0.1:4242", ("gw1", "gw2"), "socket=127.0.0.1:4242"),
            "driver 550.54.15, 2 GPUs, the GPU stack holds together",
            plan_devices(_devices(gpu(0), gpu(1)), ["gw1", "gw2"], 1),
            None,
            "pytest-cudnn: xdist host socket=127.0.0.1:4242: driver 550.54.15, 2 GPUs, the GPU stack holds together; "
            "gw1 -> GPU 0, gw2 -> GPU 1",
        ),
        (
            Host(LOCAL, ("gw0",)),
            "driver 535.104.05, 1 GPU, the GPU stack holds together",
            plan_devices(_devices(gpu(0)), ["gw0"], 2),
            None,
            "pytest-cudnn: xdist host local: driver 535.104.05, 1 GPU, the GPU stack holds together; gw0 -> GPU 0 "
            "(2 GPUs per worker asked for, 1 visible: each worker gets all 1)",
        ),
        (
            Host("ssh=box", ("gw1", "gw2"), "ssh=box"),
            "no NVIDIA driver, 0 GPUs, cannot run GPU work: no NVIDIA driver",
            Plan({}),
            None,
            "pytest-cudnn: xdist host ssh=box: no NVIDIA driver, 0 GPUs, cannot run GPU work: no NVIDIA driver; "
            "gw1, gw2: no GPU assignment",
        ),
        (
            Host("socket=127.0.0.1:9", ("gw1",), "socket=127.0.0.1:9"),
            None,
            None,
            "could not connect: Connection refused",
            "pytest-cudnn: xdist host socket=127.0.0.1:9: gw1 probes for itself "
            "(could not connect: Connection refused)",
        ),
        (
            Host("popen//via=p", ("gw1", "gw2"), None, {}, "started through the gateway 'p'"),
            None,
            None,
            "started through the gateway 'p'",
            "pytest-cudnn: xdist host popen//via=p: gw1, gw2 probe for themselves (started through the gateway 'p')",
        ),
        (
            Host("ssh=\x1b[31mbox", ("gw0",), "ssh=\x1b[31mbox"),
            None,
            None,
            "could not connect: host not found (\x1b[31mbox)",
            "pytest-cudnn: xdist host ssh=\\x1b[31mbox: gw0 probes for itself (could not connect: host not found "
            "(\\x1b[31mbox))",
        ),
    ],
)
def test_the_header_shows_one_line_per_host(
    host: Host, stack: str | None, plan: Plan | None, reason: str | None, line: str
) -> None:
    assert host_line(host, stack, plan, reason) == line


def test_a_remote_hosts_report_entry_holds_its_own_probe() -> None:
    host = Host("socket=127.0.0.1:4242", ("gw1", "gw2"), "socket=127.0.0.1:4242")
    plan = plan_devices(_devices(gpu(0), gpu(1)), list(host.workers), 1)
    entry = json.loads(json.dumps(to_json(host_entry(host, judge_environment(TWO_GPUS), plan, None))))
    assert Environment.from_json(entry.pop("environment"), "the entry") == TWO_GPUS
    assert entry == {
        "host": "socket=127.0.0.1:4242",
        "workers": ["gw1", "gw2"],
        "probed_by": "controller",
        "reason": None,
        "summary": "driver 550.54.15, 2 GPUs, the GPU stack holds together",
        "findings": [],
        "verdict": {"ok": True, "summary": "the GPU stack holds together"},
        "frameworks": [{"name": "tensorflow", "version": "2.18.0", "ok": True, "summary": "can run GPU work here"}],
        "devices": {
            "gw1": [{"index": 0, "label": "GPU 0", "uuid": gpu(0).uuid}],
            "gw2": [{"index": 1, "label": "GPU 1", "uuid": gpu(1).uuid}],
        },
        "note": None,
    }


def test_a_host_its_workers_probe_has_no_environment_in_the_report() -> None:
    host = Host("socket=127.0.0.1:9", ("gw1",), "socket=127.0.0.1:9")
    entry = host_entry(host, None, None, "could not connect: Connection refused")
    assert (entry.probed_by, entry.reason, entry.environment, entry.verdict, entry.devices) == (
        "workers",
        "could not connect: Connection refused",
        None,
        None,
        {},
    )


# The remote probe's answer -----------------------------------------------------------------------

PYTHON = "/usr/bin/python3"


PROGRAM = f"{PYTHON} -m pytest_cudnn snapshot"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("junk", "a malformed answer: 'junk'"),
        (("done", PYTHON, 0), "a malformed answer: ('done', '/usr/bin/python3', 0)"),
        (("timeout", PYTHON, None, b"", b""), f"{PROGRAM} gave no answer in time"),
        (
            ("error", PYTHON, None, b"", b"[Errno 2] No such file or directory: '/usr/bin/python3'"),
            f"could not run {PROGRAM}: [Errno 2] No such file or directory: '{PYTHON}'",
        ),
        (
            ("done", PYTHON, 1, b"", f"{PYTHON}: No module named pytest_cudnn\n".encode()),
            f"{PROGRAM} exited with 1: {PYTHON}: No module named pytest_cudnn",
        ),
        (
            ("done", PYTHON, 2, b"", b"usage: pytest-cudnn\npytest-cudnn: error: unrecognized arguments: --timeout\n"),
            f"{PROGRAM} exited with 2: pytest-cudnn: error: unrecognized arguments: --timeout",
        ),
        (("done", PYTHON, 0, b"{not json", b""), f"{PROGRAM} exited with 0: {{not json"),
        (("done", PYTHON, 0, b"[" * 100_000, b""), f"{PROGRAM} exited with 0: "),
        (("done", PYTHON, 0, b'{"n": ' + b"9" * 200 + b"}", b""), f"{PROGRAM} exited with 0: "),
        (("done", PYTHON, 0, b"\xff\xfe{}", b""), f"{PROGRAM} exited with 0: "),
        (
            ("done", PYTHON, 0, b'{"findings": []}', b""),
            "the xdist host ssh=box: not a pytest-cudnn environment (schema is None)",
        ),
        (
            ("done", PYTHON, 0, b'{"schema": "other"}', b""),
            "the xdist host ssh=box: not a pytest-cudnn environment (schema is 'other')",
        ),
        (("done", 7, 1, b"", b"\x1b]0;title\x07 boom"), "7 -m pytest_cudnn snapshot exited with 1: \\x1b]0;title"),
        (("done", PYTHON, 1, None, None), f"could not run {PROGRAM}: "),
        (("too-large", PYTHON, None, b"", b""), f"{PROGRAM} wrote more than 16 MiB, the most a snapshot can be"),
        (
            ("done", PYTHON, 0, b" " * (16 * 2**20 + 1), b""),
            f"{PROGRAM} wrote more than 16 MiB, the most a snapshot can be",
        ),
    ],
)
def test_an_answer_that_is_not_an_environment_is_a_reason(answer: object, reason: str) -> None:
    read = read_answer(answer, "ssh=box")
    assert read.environment is None
    assert read.reason is not None
    assert read.reason.startswith(reason)
    assert read.reason.isprintable()


def test_the_snapshot_is_the_answer() -> None:
    read = read_answer(("done", PYTHON, 0, TWO_GPUS.dumps().encode(), b""), "ssh=box")
    assert read == Answer(TWO_GPUS)


def test_an_answer_is_held_to_the_allowlist_as_a_snapshot_is() -> None:
    """A host's answer is written to --gpu-report whole (its ``hosts``): what it holds off the allowlist is
    dropped there as from a snapshot."""
    data = TWO_GPUS.to_json()
    data["variables"] = {**data["variables"], "MY_TOKEN": SECRET}
    read = read_answer(("done", PYTHON, 0, json.dumps(data).encode(), b""), "ssh=box")
    assert read.environment is not None
    assert SECRET not in json.dumps(read.environment.to_json())
    assert "MY_TOKEN" not in read.environment.variables


def test_the_wait_for_a_host_follows_the_probe_timeout() -> None:
    """Three times the per-library probe timeout for the probe there, and 15 s to connect and start Python."""
    assert (deadline(10), deadline(1), deadline(0.1), deadline(100)) == (45, 18, 15.3, 315)


# Probing a host that cannot answer ---------------------------------------------------------------


def test_hosts_the_controller_cannot_reach_directly_answer_why() -> None:
    host = Host("popen//via=p", ("gw1",), None, {}, "started through the gateway 'p'")
    assert probe_hosts([host], 1) == {"popen//via=p": Answer(None, "started through the gateway 'p'")}


def test_a_refused_connection_is_a_reason() -> None:
    address = f"127.0.0.1:{free_port()}"
    host = Host(f"socket={address}", ("gw0",), f"socket={address}")
    assert probe_hosts([host], 1) == {host.key: Answer(None, "could not connect: Connection refused")}


@pytest.mark.slow  # waits out its 1 s bound
def test_a_host_that_never_answers_is_given_up_in_time_and_said_before() -> None:
    notes: list[str] = []
    with silent_listener() as address:
        host = Host(f"socket={address}", ("gw0",), f"socket={address}")
        answers = probe_hosts([host], 1, total=1, waiting=notes.append, quiet=0)
    assert answers[host.key].environment is None
    assert (answers[host.key].reason or "").startswith("no answer within 1 s")
    assert notes == [f"pytest-cudnn: no answer yet from xdist host socket={address}; waiting at most 1 s in all"]


@pytest.mark.slow  # waits out its 1 s bound
def test_the_note_names_every_host_still_waited_for() -> None:
    notes: list[str] = []
    with silent_listener() as first, silent_listener() as second:
        hosts = [
            Host(f"socket={address}", (f"gw{i}",), f"socket={address}") for i, address in enumerate([first, second])
        ]
        probe_hosts(hosts, 1, total=1, waiting=notes.append, quiet=0)
    assert notes == [
        f"pytest-cudnn: no answer yet from xdist hosts socket={first}, socket={second}; waiting at most 1 s in all"
    ]


def test_hosts_that_answer_at_once_are_waited_for_in_silence() -> None:
    notes: list[str] = []
    address = f"127.0.0.1:{free_port()}"
    host = Host(f"socket={address}", ("gw0",), f"socket={address}")
    probe_hosts([host], 1, waiting=notes.append, quiet=60)
    assert notes == []


def test_a_host_that_accepts_and_never_answers_is_given_up_as_the_probe_timeout_says(host_a: SimHost) -> None:
    """With --gpu-probe-timeout=0.1 the controller waits 3 x 0.1 s + 15 s, and says so once the wait is long;
    xdist's own connection to that host then hangs (xdist's behaviour), so pytest is ended here."""
    with silent_listener() as address:
        command = [*PYTEST, "-W", "error", "-p", "xdist"]
        command += ["--dist", "each", "--tx", "popen", "--tx", f"socket={address}", "--gpu-probe-timeout=0.1"]
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=host_a.environ({"PYTHONUNBUFFERED": "1"}),
            cwd=host_a.root / "work",
            start_new_session=True,
        )
        watchdog = threading.Timer(300, os.killpg, (process.pid, signal.SIGKILL))  # only if the line never comes
        watchdog.start()
        seen = []
        try:
            assert process.stdout is not None
            for line in process.stdout:
                seen.append(line.rstrip("\n"))
                if line.startswith("pytest-cudnn: xdist host socket="):
                    break
        finally:
            watchdog.cancel()
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    note = (
        f"pytest-cudnn: no answer yet from xdist host socket={address}; waiting at most 15.3 s in all (3 x the "
        "probe timeout of 0.1 s, and 15 s to connect and start Python there)"
    )
    line = (
        f"pytest-cudnn: xdist host socket={address}: gw1 probes for itself (no answer within 15.3 s; its workers may "
        "hang the same way)"
    )
    assert line in seen, "\n".join(seen)
    assert note in seen[: seen.index(line)], "\n".join(seen)


# A host whose python -m pytest_cudnn is an impostor: it writes its process id, then (FAKE_FLOOD) more than a
# snapshot can be before the snapshot itself (as the doctor's document when asked by the doctor's name), then
# (FAKE_SLEEP) never ends.
IMPOSTOR = """
import os, sys, time

with open(os.environ["FAKE_PID"], "w") as out:
    out.write(str(os.getpid()))
if os.environ.get("FAKE_FLOOD"):
    flood = os.environ["FAKE_FLOOD"] + (".doctor" if sys.argv[1] == "doctor" else "")
    with open(flood, "rb") as answer:
        sys.stdout.buffer.write(b" " * (17 * 2**20) + answer.read())
    sys.stdout.flush()
if os.environ.get("FAKE_SLEEP"):
    time.sleep(3600)
"""


@pytest.fixture
def impostor(host_b: SimHost) -> dict[str, str]:
    """The env: settings that put the impostor first on the probe's Python path on host B."""
    package = host_b.folder("impostor/pytest_cudnn")
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(IMPOSTOR)
    snapshot = host_b.root / "flood.json"
    snapshot.write_text(TWO_GPUS.dumps())
    Path(f"{snapshot}.doctor").write_text(json.dumps({"environment": TWO_GPUS.to_json()}))
    return {"PYTHONPATH": str(package.parent), "FAKE_PID": str(host_b.root / "fake.pid"), "FAKE_FLOOD": str(snapshot)}


def _impostors(server: SocketServer) -> list[int]:
    return [pid for pid in session_members(server.process.pid) if pid != server.process.pid]


@pytest.mark.parametrize("sleeps", [False, True], ids=["then exits", "then never ends"])
def test_an_answer_larger_than_a_snapshot_is_refused_as_it_is_read(
    impostor: dict[str, str], server_b: SocketServer, sleeps: bool
) -> None:
    """Read on the host up to the snapshot limit, and the probe there ended as soon as it writes more: the
    controller never holds more than a snapshot can be."""
    address = f"socket={server_b.address}"
    variables = {**impostor, **({"FAKE_SLEEP": "1"} if sleeps else {})}
    answer = probe_hosts([Host(address, ("gw0",), address, variables)], 1)[address]
    assert answer.environment is None
    assert (
        answer.reason == f"{sys.executable} -m pytest_cudnn snapshot wrote more than 16 MiB, the most a snapshot can be"
    )
    assert _impostors(server_b) == []


_CONTROLLER = """
import sys
from pytest_cudnn._run.hosts import Host
from pytest_cudnn._run.remote import probe_hosts

address, variables = sys.argv[1], dict(pair.split("=", 1) for pair in sys.argv[2:])
print(probe_hosts([Host(address, ("gw0",), address, variables)], 100))
"""


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_the_probe_on_the_host_ends_when_the_controller_goes_away(
    impostor: dict[str, str], host_b: SimHost, signum: int
) -> None:
    """The impostor never ends, and the host's bound is 3 x 100 s + 15 s: it is ended when the controller's
    connection is lost. The server runs as a script's ``server &`` runs it, SIGINT ignored, so execnet's own last
    resort (interrupting the whole server 5 s after the connection is lost while code still runs there, then
    os._exit 10 s later: gateway_base.WorkerGateway._terminate_execution) ends nothing early; the server serves
    the next connection."""
    server = SocketServer.start(host_b, host_b.root / "work", background=True)
    try:
        address = f"socket={server.address}"
        variables = {name: value for name, value in impostor.items() if name != "FAKE_FLOOD"}
        variables["FAKE_SLEEP"] = "1"
        pid_file = Path(variables["FAKE_PID"])
        arguments = [f"{name}={value}" for name, value in variables.items()]
        controller = subprocess.Popen(
            interruptible([sys.executable, "-c", _CONTROLLER, address, *arguments]), stderr=subprocess.DEVNULL
        )
        try:
            _wait_for(lambda: pid_file.exists() and pid_file.read_text().isdigit() and bool(_impostors(server)))
            assert _impostors(server) == [int(pid_file.read_text())]
        finally:
            controller.send_signal(signum)
            try:
                controller.wait(timeout=60)
            finally:
                if controller.poll() is None:  # never left behind, whatever the signal did
                    controller.kill()
                    controller.wait()
        _wait_for(lambda: not _impostors(server))  # a minute: far less than the host's own bound of 312 s
        assert _impostors(server) == []
        answer = probe_hosts([Host(address, ("gw0",), address)], 10)[address]
        assert answer.environment is not None, answer.reason
        assert answer.environment.driver.version == "550.54.15"
    finally:
        assert server.stop() == []


def _wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    """Until ``condition`` holds, at most ``seconds``: a bound on a wait, not a measure of speed."""
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)


# End to end: a socket server in simulated host B beside a local worker on host A -----------------

SUITE = """
    import json, os
    import pytest

    @pytest.mark.requires_driver(">=550")
    def test_needs_driver_550():
        pass

    def test_sees_its_gpus():
        record = {
            "worker": os.environ["PYTEST_XDIST_WORKER"],
            "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "order": os.environ.get("CUDA_DEVICE_ORDER"),
        }
        with open(os.environ["RESULTS"], "a") as out:  # each host's own file: each worker runs with its host's
            out.write(json.dumps(record) + "\\n")
"""

GPU_A = SimGpu(uuid="GPU-aaaaaaaa-0000-0000-0000-000000000000")
GPUS_B = [
    SimGpu(uuid=f"GPU-bbbbbbbb-0000-0000-0000-00000000000{i}", pci_bus_id=f"00000000:0{i}:00.0") for i in range(2)
]


def _machine(host: SimHost, gpus: Sequence[SimGpu], driver: str, cuda: int) -> SimHost:
    """A host with a driver, a CUDA runtime, the suite in work/suite and its own NVML log and results file."""
    host.add_driver(gpus, version=driver, cuda_version=cuda)
    host.add_stack("opt/cuda/lib64", cuda)
    host.variables.update(SIMHOST_NVML_LOG=str(host.root / "nvml.log"), RESULTS=str(host.root / "results.jsonl"))
    work = host.folder("work")
    (work / "pytest.ini").write_text("[pytest]\ntestpaths = suite\n")  # not the copy of pytest xdist puts beside it
    host.folder("work/suite")
    (work / "suite" / "test_remote.py").write_text(textwrap.dedent(SUITE))
    return host


@pytest.fixture
def host_a(host: SimHost) -> SimHost:
    """The controller's host: driver 535, one GPU."""
    return _machine(host, [GPU_A], "535.104.05", 12020)


@pytest.fixture
def host_b(tmp_path: Path, compiler: Compiler) -> SimHost:
    """The remote host: driver 550, two GPUs."""
    return _machine(SimHost(tmp_path / "b", compiler), GPUS_B, "550.54.15", 12040)


@pytest.fixture
def server_b(host_b: SimHost) -> Iterator[SocketServer]:
    server = SocketServer.start(host_b, host_b.root / "work")
    yield server
    assert server.stop() == [], "the socket server left processes behind"
    assert session_members(server.process.pid) == []


def _pytest(host: SimHost, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest on ``host`` in its work folder, warnings as errors, with no test path: a path would have to lie under
    xdist's rsync roots once a worker is remote (xdist.workermanage.make_reltoroot)."""
    return subprocess.run(
        [*PYTEST, "-rs", "-W", "error", "-p", "xdist", *args],
        capture_output=True,
        text=True,
        env=host.environ(),
        cwd=host.root / "work",
        timeout=300,
        check=False,
    )


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _documented_report_keys() -> str:
    """The JSON report's section of the documentation site's page on reports (its table of keys)."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "reports.md").read_text(encoding="utf-8")
    return page.split("## The JSON report", 1)[1].split("\n## ", 1)[0]


def _probes(host: SimHost) -> int:
    log = host.root / "nvml.log"
    return log.read_text().count("init") if log.exists() else 0


def test_each_worker_is_given_its_own_hosts_environment_and_gpus(
    host_a: SimHost, host_b: SimHost, server_b: SocketServer
) -> None:
    report = host_a.root / "gpu-report.json"
    remote = f"socket={server_b.address}//chdir={host_b.root / 'work'}"
    done = _pytest(host_a, "--dist", "each", "--tx", "popen", "--tx", remote, f"--gpu-report={report}")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "3 passed, 1 skipped" in done.stdout
    # Judged on each host by that host's driver: skipped on A, where the reason names A's, passed on B.
    assert "requires NVIDIA driver >=550; found driver 535.104.05" in done.stdout
    data = json.loads(report.read_text())
    judged = {(t["worker"], t["host"], t["outcome"]) for t in data["tests"]}
    assert judged == {("gw0", LOCAL, "skipped"), ("gw1", f"socket={server_b.address}", "passed")}
    # Each worker's CUDA_VISIBLE_DEVICES holds its own host's GPU.
    assert _lines(host_a.root / "results.jsonl") == [{"worker": "gw0", "visible": GPU_A.uuid, "order": "PCI_BUS_ID"}]
    assert _lines(host_b.root / "results.jsonl") == [
        {"worker": "gw1", "visible": GPUS_B[0].uuid, "order": "PCI_BUS_ID"}
    ]
    # The header: one line per host, local first.
    key = f"socket={server_b.address}"
    local_line = next(line for line in done.stdout.splitlines() if line.startswith("pytest-cudnn: xdist host local:"))
    remote_line = next(line for line in done.stdout.splitlines() if line.startswith(f"pytest-cudnn: xdist host {key}:"))
    assert local_line.startswith("pytest-cudnn: xdist host local: driver 535.104.05, 1 GPU, ")
    assert local_line.endswith("; gw0 -> GPU 0")
    assert remote_line.startswith(f"pytest-cudnn: xdist host {key}: driver 550.54.15, 2 GPUs, ")
    assert remote_line.endswith("; gw1 -> GPU 0")
    assert done.stdout.index(local_line) < done.stdout.index(remote_line)
    assert "pytest-cudnn: xdist workers:" not in done.stdout
    # The report: both hosts, each with its own probe; the existing keys as they were.
    hosts = {entry["host"]: entry for entry in data["hosts"]}
    assert [entry["host"] for entry in data["hosts"]] == [LOCAL, key]
    assert hosts[LOCAL]["environment"]["driver"]["version"] == "535.104.05"
    assert hosts[key]["environment"]["driver"]["version"] == "550.54.15"
    assert (hosts[key]["probed_by"], hosts[key]["reason"], hosts[key]["workers"]) == ("controller", None, ["gw1"])
    assert hosts[key]["devices"] == {"gw1": [{"index": 0, "label": "GPU 0", "uuid": GPUS_B[0].uuid}]}
    assert data["environment"]["driver"]["version"] == "535.104.05"
    assert data["xdist"] == {"gw0": [0], "gw1": [0]}
    # The documentation's table of the report's keys names every one of them.
    keys = {*data, *(key for test in data["tests"] for key in test), *(key for host in data["hosts"] for key in host)}
    assert [key for key in sorted(keys) if f"`{key}`" not in _documented_report_keys()] == []
    # One probe per host: B's by the controller through the socket server, A's by the controller itself; no
    # worker probed again.
    assert (_probes(host_a), _probes(host_b)) == (1, 1)


def test_an_env_value_given_to_a_remote_host_is_written_nowhere(
    host_a: SimHost, host_b: SimHost, server_b: SocketServer
) -> None:
    """Not in the header (-v, findings included), the report, the JUnit XML, nor the fleet's text, Markdown and
    JSON: the host is named with the variable's name only."""
    report, xml = host_a.root / "gpu-report.json", host_a.root / "junit.xml"
    remote = f"socket={server_b.address}//chdir={host_b.root / 'work'}//env:MY_TOKEN={SECRET}"
    args = ("--dist", "each", "--tx", "popen", "--tx", remote, f"--gpu-report={report}", f"--junitxml={xml}", "-v")
    done = _pytest(host_a, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed, 1 skipped" in done.stdout
    key = f"socket={server_b.address}//env:MY_TOKEN=\u2026"
    assert f"pytest-cudnn: xdist host {key}: driver 550.54.15, 2 GPUs, " in done.stdout
    data = json.loads(report.read_text())
    assert [entry["host"] for entry in data["hosts"]] == [LOCAL, key]
    assert {test["host"] for test in data["tests"]} == {LOCAL, key}
    # With -v, xdist itself prints each remote worker's whole spec as it copies pytest there: "SPEC:FOLDER <= pytest/
    # __init__.py" (xdist.workermanage.HostRSync._report_send_file). Those lines are xdist's, not the plugin's.
    ours = "\n".join(line for line in done.stdout.splitlines() if " <= " not in line)
    shown = [ours, done.stderr, report.read_text(), xml.read_text()]
    for form in ((), ("--markdown",), ("--json",)):
        fleet = subprocess.run(
            [sys.executable, "-m", "pytest_cudnn", "fleet", *form, str(report)],
            capture_output=True,
            text=True,
            env=host_a.environ(),
            timeout=120,
            check=False,
        )
        assert "MY" in fleet.stdout, fleet.stdout + fleet.stderr  # the host is there, named
        shown += [fleet.stdout, fleet.stderr]
    assert [SECRET in text for text in shown] == [False] * len(shown)


def test_a_remote_worker_that_collected_nothing_is_named_with_what_it_needs(
    host_a: SimHost, host_b: SimHost, server_b: SocketServer
) -> None:
    """Without //chdir=, xdist starts the remote worker in pyexecnetcache under the server's folder, where the
    suite's pytest.ini does not apply: it collects nothing, and xdist does not complain under --dist each."""
    done = _pytest(host_a, "--dist", "each", "--tx", "popen", "--tx", f"socket={server_b.address}")
    # xdist takes the run's count of tests from whichever worker finished collecting last
    # (dsession.DSession.worker_collectionfinish): exit status 5, "no tests collected", when that is gw1.
    assert done.returncode in (0, 5), done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout  # gw0's only
    assert (
        f"pytest-cudnn: xdist worker gw1 on socket={server_b.address} collected no test, gw0 collected 2: xdist "
        "starts a worker on another machine in pyexecnetcache, where this suite's rootdir, pytest.ini and "
        "testpaths do not apply; name the suite's folder there with --tx SPEC//chdir=FOLDER"
    ) in done.stdout


@pytest.mark.parametrize(
    ("collected", "lines"),
    [
        ({"gw0": 2, "gw1": 2}, []),
        ({"gw0": 0, "gw1": 0}, []),  # nothing to collect anywhere (-k, an empty suite)
        ({"gw0": 3}, []),
        (
            {"gw0": 0, "gw1": 3, "gw2": 0},
            [
                "pytest-cudnn: xdist worker gw0 collected no test, gw1 collected 3",
                "pytest-cudnn: xdist worker gw2 on ssh=box collected no test, gw1 collected 3: xdist starts a worker "
                "on another machine in pyexecnetcache, where this suite's rootdir, pytest.ini and testpaths do not "
                "apply; name the suite's folder there with --tx SPEC//chdir=FOLDER",
            ],
        ),
    ],
)
def test_workers_that_collected_nothing_beside_others_are_named(collected: dict[str, int], lines: list[str]) -> None:
    hosts = [Host(LOCAL, ("gw0", "gw1")), Host("ssh=box", ("gw2",), "ssh=box")]
    assert collection_lines(collected, hosts) == lines


def test_several_gpus_per_worker_are_counted_per_host(host_a: SimHost, host_b: SimHost, server_b: SocketServer) -> None:
    remote = f"socket={server_b.address}//chdir={host_b.root / 'work'}"
    done = _pytest(host_a, "--dist", "each", "--tx", "popen", "--tx", remote, "--gpus-per-worker", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "; gw0 -> GPU 0 (2 GPUs per worker asked for, 1 visible: each worker gets all 1)" in done.stdout
    assert "; gw1 -> GPU 0+GPU 1\n" in done.stdout
    assert _lines(host_b.root / "results.jsonl")[0]["visible"] == f"{GPUS_B[0].uuid},{GPUS_B[1].uuid}"


def test_workers_started_through_a_proxy_probe_for_themselves(
    host_a: SimHost, host_b: SimHost, server_b: SocketServer
) -> None:
    """``--px`` opens a gateway to B; the worker ``popen//via=`` it starts runs on B, which the controller does not
    probe: the worker probes B itself, and is judged by B's driver."""
    done = _pytest(
        host_a,
        "--dist",
        "each",
        "--px",
        f"id=proxy//socket={server_b.address}",
        "--tx",
        "popen",
        "--tx",
        f"popen//via=proxy//chdir={host_b.root / 'work'}",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed, 1 skipped" in done.stdout
    assert (
        "pytest-cudnn: xdist host popen//via=proxy: gw1 probes for itself (started through the gateway 'proxy': "
        "the controller probes only the hosts it reaches directly)"
    ) in done.stdout
    assert _lines(host_b.root / "results.jsonl") == [{"worker": "gw1", "visible": None, "order": None}]
    assert (_probes(host_a), _probes(host_b)) == (1, 1)  # B's by its worker


def test_a_socket_nobody_listens_on_is_named_in_the_header(host_a: SimHost) -> None:
    """xdist itself cannot start that host's worker (its own ConnectionRefusedError, as without pytest-cudnn);
    what pytest-cudnn adds is the header line that says why, before that."""
    address = f"127.0.0.1:{free_port()}"
    args = ("--dist", "each", "--tx", "popen", "--tx", f"socket={address}")
    done = _pytest(host_a, *args)
    assert (
        f"pytest-cudnn: xdist host socket={address}: gw1 probes for itself (could not connect: Connection refused)"
        in (done.stdout)
    )
    assert "pytest-cudnn: xdist host local: driver 535.104.05, 1 GPU, " in done.stdout
    without = _pytest(host_a, "-p", "no:cudnn", *args)
    assert done.returncode == without.returncode != 0
    assert "ConnectionRefusedError: [Errno 111] Connection refused" in done.stdout
    assert "ConnectionRefusedError: [Errno 111] Connection refused" in without.stdout
    assert "pytest_cudnn" not in done.stdout.partition("INTERNALERROR")[2]


def test_a_host_whose_pytest_cudnn_cannot_be_imported_answers_why(host_b: SimHost) -> None:
    """The doctor runs in a subprocess with the spec's env: settings; here they put a package first on its path
    that fails to import as a missing one does."""
    hidden = host_b.folder("hidden/pytest_cudnn")
    (hidden / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'pytest_cudnn'\")\n")
    server = SocketServer.start(host_b, host_b.root / "work")
    try:
        address = f"socket={server.address}"
        host = Host(address, ("gw0",), address, {"PYTHONPATH": str(hidden.parent)})
        answer = probe_hosts([host], 10)[host.key]
    finally:
        assert server.stop() == []
    assert answer.environment is None
    assert f"{sys.executable} -m pytest_cudnn snapshot exited with 1: " in (answer.reason or "")
    assert "No module named 'pytest_cudnn'" in (answer.reason or "")
    assert _probes(host_b) == 0


def test_require_gpu_fails_a_run_whose_remote_host_cannot_run_gpu_work(
    host_a: SimHost, tmp_path: Path, compiler: Compiler
) -> None:
    # Host C's CUDA runtime is 13.0 and its driver a CUDA 12.2 one: a broken stack, though no test is marked.
    host_c = SimHost(tmp_path / "c", compiler)
    host_c.add_driver(GPUS_B, version="535.104.05", cuda_version=12020)
    host_c.add_stack("opt/cuda/lib64", 13000)
    for host in (host_a, host_c):
        (host.folder("work/suite") / "test_remote.py").write_text("def test_plain():\n    pass\n")
        (host.root / "work" / "pytest.ini").write_text("[pytest]\ntestpaths = suite\n")
    server = SocketServer.start(host_c, host_c.root / "work")
    try:
        remote = f"socket={server.address}"
        done = _pytest(host_a, "--tx", "popen", "--tx", remote, "--dist", "each", "--require-gpu")
        plain = _pytest(host_a, "--tx", "popen", "--tx", remote, "--dist", "each")
    finally:
        assert server.stop() == []
    assert " passed in " in done.stdout, done.stdout + done.stderr
    assert "failed" not in done.stdout
    assert done.returncode == 1
    assert f"pytest-cudnn: --require-gpu: xdist host {remote}: cannot run GPU work" in done.stdout
    assert plain.returncode == 0, plain.stdout + plain.stderr  # without --require-gpu it only says so
