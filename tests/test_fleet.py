"""``pytest-cudnn fleet``: several runners' --gpu-report files read, checked, compared and shown as text, Markdown
and JSON; every unusable report named with its reason, never a traceback, never at the other runners' cost."""

from __future__ import annotations

import dataclasses
import doctest
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn import files
from pytest_cudnn.cli import main
from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.environment import Environment
from pytest_cudnn.fleet import (
    FleetUsageError,
    Problem,
    Runner,
    compare,
    fleet_json,
    fleet_markdown,
    fleet_text,
    name_runners,
    read_fleet,
    read_runner,
)
from pytest_cudnn.fleet import reading as reading_module
from pytest_cudnn.fleet.model import GpuTest
from pytest_cudnn.fleet.reading import refusal_groups
from pytest_cudnn.report import doctor_json

from .envbuilder import EnvBuilder, gpu
from .simhost import Compiler, SimGpu, SimHost
from .test_cli import _closed_pipe_run

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "examples" / "github-actions" / "gpu-matrix.yml"
GiB = 1024**3


def healthy() -> Environment:
    """Driver 550, one A100, TensorFlow 2.18 with the cuDNN 9.3 wheel: it can run GPU work."""
    return EnvBuilder.healthy().build()


def old_t4() -> Environment:
    """Driver 450 on a T4, TensorFlow 2.3 meeting cuDNN 8.0.5: it cannot (TensorFlow 2.3 loads cuDNN 7)."""
    b = EnvBuilder().with_driver(version="450.80.02", cuda_version_raw=11000)
    b.cuda_driver = dataclasses.replace(b.cuda_driver, version_raw=11000, version="11.0")
    b.with_gpus(gpu(name="Tesla T4", cc="7.5", total=15 * GiB, free=14 * GiB))
    b.with_tensorflow("2.3.1", "10.1", "7", capabilities=("sm_75",))
    b.runtime("/usr/local/cuda-10.1/lib64/libcudart.so.10.1", 10010, driver_raw=11000)
    b.cudnn("/usr/local/cuda-10.1/lib64/libcudnn.so.8", "8.0.5", 10010)
    return b.build()


def document(env: Environment, tests: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """A report as GpuRun.document() writes it: the doctor's document and the run's keys."""
    return {
        **doctor_json(judge_environment(env)),
        "require_gpu": False,
        "xdist": {},
        "xdist_note": None,
        "tests": tests or [],
        **extra,
    }


def ran(nodeid: str, outcome: str = "passed") -> dict[str, Any]:
    return {"nodeid": nodeid, "requirements": ["requires cuDNN >=9"], "gpu": 0, "outcome": outcome}


def refused(nodeid: str, reason: str, outcome: str = "skipped", **more: Any) -> dict[str, Any]:
    return {
        "nodeid": nodeid,
        "requirements": ["requires cuDNN >=9"],
        "gpu": 0,
        "reason": reason,
        "outcome": outcome,
        **more,
    }


CUDNN_REASON = "requires cuDNN >=9; found cuDNN 8.0.5 at /usr/local/cuda-10.1/lib64/libcudnn.so.8 (via LD_LIBRARY_PATH)"


def write(path: Path, data: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return str(path)


def runner(path: str, name: str = "r") -> Runner:
    read = read_runner(name, path)
    assert isinstance(read, Runner), read
    return read


def two_runners(tmp_path: Path) -> list[tuple[str, str]]:
    """a100 ran both tests; t4 skipped the cuDNN 9 one."""
    a100 = document(healthy(), [ran("t.py::test_cudnn9"), ran("t.py::test_plain")])
    t4 = document(old_t4(), [refused("t.py::test_cudnn9", CUDNN_REASON), ran("t.py::test_plain")])
    return [
        ("a100", write(tmp_path / "reports" / "a100" / "gpu-report.json", a100)),
        ("t4", write(tmp_path / "reports" / "t4" / "gpu-report.json", t4)),
    ]


# Runner names -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reports", "named", "expected"),
    [
        pytest.param(["a100.json", "t4.json"], [], [("a100", "a100.json"), ("t4", "t4.json")], id="file stems"),
        pytest.param(
            ["reports/a100/gpu-report.json", "reports/t4/gpu-report.json"],
            [],
            [("a100", "reports/a100/gpu-report.json"), ("t4", "reports/t4/gpu-report.json")],
            id="folders when the stems repeat (download-artifact's layout)",
        ),
        pytest.param(
            ["x/a/r.json", "y/a/r.json"], [], [("x/a/r.json", "x/a/r.json"), ("y/a/r.json", "y/a/r.json")], id="paths"
        ),
        pytest.param(["a.json", "a.json"], [], [("a", "a.json")], id="a report given twice is one runner"),
        pytest.param(
            ["a.json", "./a.json", ".//a.json", "r/../a.json"],
            [],
            [("a.json", "a.json"), ("r/../a.json", "r/../a.json")],
            id="a report given twice in other spellings is one runner",
        ),
        pytest.param(
            ["reports/a100/gpu-report.json"],
            [("big", "./reports/a100/gpu-report.json")],
            [("big", "reports/a100/gpu-report.json")],
            id="--name renames a report given in another spelling",
        ),
        pytest.param(
            ["reports/a100/gpu-report.json", "reports/t4/gpu-report.json"],
            [("big", "reports/a100/gpu-report.json")],
            [("big", "reports/a100/gpu-report.json"), ("t4", "reports/t4/gpu-report.json")],
            id="--name renames a report given",
        ),
        pytest.param(
            ["a.json"], [("b", "b.json")], [("a", "a.json"), ("b", "b.json")], id="--name adds a report not given"
        ),
        pytest.param(
            ["a.json"],
            [("a", "b.json")],
            [("a.json", "a.json"), ("a", "b.json")],
            id="a default name taken by --name falls back to the path",
        ),
    ],
)
def test_runners_are_named_by_name_else_by_file_else_by_folder_else_by_path(
    reports: list[str], named: list[tuple[str, str]], expected: list[tuple[str, str]]
) -> None:
    assert name_runners(reports, named) == expected


@pytest.mark.parametrize(
    ("reports", "named", "message"),
    [
        ([], [("a", "x.json"), ("b", "x.json")], "x.json is named twice: 'a' and 'b'"),
        ([], [("a", "x.json"), ("a", "y.json")], "runner name 'a' stands for x.json and y.json"),
    ],
)
def test_a_name_for_two_reports_or_two_names_for_one_report_is_refused(
    reports: list[str], named: list[tuple[str, str]], message: str
) -> None:
    with pytest.raises(FleetUsageError, match=re.escape(message)):
        name_runners(reports, named)


# One report ---------------------------------------------------------------------------------------------------


def test_a_report_gives_the_runners_stack_verdict_findings_and_refusals(tmp_path: Path) -> None:
    read = runner(two_runners(tmp_path)[1][1], "t4")
    stack = read.stack
    assert (stack.driver, stack.cuda_driver, stack.cuda_runtime, stack.cudnn) == ("450.80.02", "11.0", "10.1", "8.0.5")
    assert [(m.name, m.count, m.memory_total) for m in stack.gpus] == [("Tesla T4", 1, 15 * GiB)]
    assert [(f.name, f.version, f.ok) for f in stack.frameworks] == [("tensorflow", "2.3.1", False)]
    assert read.ok is False
    assert read.verdict.startswith("cannot run GPU work: TensorFlow 2.3.1")
    assert "tensorflow-cudnn-not-found" in [f.code for f in read.findings]
    assert [(g.cause, dict(g.outcomes), g.tests) for g in read.refusals] == [
        ("requires cuDNN >=9", {"skipped": 1}, ("t.py::test_cudnn9",))
    ]
    assert dict(read.outcomes) == {"skipped": 1, "passed": 1}


def test_every_runner_lists_its_outcome_counts_in_one_fixed_order(tmp_path: Path) -> None:
    # Two runners whose tests ran in different orders: their counts read side by side, passed, failed, skipped.
    first = [refused("t.py::a", CUDNN_REASON), ran("t.py::b", "failed"), ran("t.py::c")]
    second = [ran("t.py::c"), refused("t.py::a", CUDNN_REASON), ran("t.py::b", "failed")]
    runners = [runner(write(tmp_path / f"{name}.json", document(healthy(), tests)), name) for name, tests in
               (("one", first), ("two", second))]  # fmt: skip
    assert [list(r.outcomes.items()) for r in runners] == [[("passed", 1), ("failed", 1), ("skipped", 1)]] * 2
    out = fleet_text(compare(runners))
    assert out.count("1 passed, 1 failed, 1 skipped") == 2, out


def test_a_runner_without_a_driver_says_so() -> None:
    env = EnvBuilder.healthy().without_driver().build()
    assert env.driver.state.value == "absent"


@pytest.mark.parametrize(
    ("tests", "expected"),
    [
        pytest.param(
            [
                GpuTest("a", "skipped", CUDNN_REASON, None),
                GpuTest("b", "failed", CUDNN_REASON, None),
                GpuTest("c", "skipped", "requires 2 GPUs; found 1 visible GPU(s)", None),
                GpuTest("d", "skipped", CUDNN_REASON, None),
                GpuTest("e", "passed", None, None),
            ],
            [("requires cuDNN >=9", {"skipped": 2, "failed": 1}, 3), ("requires 2 GPUs", {"skipped": 1}, 1)],
            id="by the requirement the reason names, the largest group first",
        ),
        pytest.param(
            [
                GpuTest("a", "skipped", CUDNN_REASON, "cudnn-version"),
                GpuTest("b", "skipped", "x; y", "cudnn-version"),
            ],
            [("cudnn-version", {"skipped": 2}, 2)],
            id="by the report's cause when it has one",
        ),
        pytest.param(
            [GpuTest("a", "skipped", "cannot create a cuDNN handle: status 4", None)],
            [("other", {"skipped": 1}, 1)],
            id="other when the reason names no requirement",
        ),
    ],
)
def test_environment_refusals_are_grouped_by_cause_with_counts(
    tests: list[GpuTest], expected: list[tuple[str, dict[str, int], int]]
) -> None:
    assert [(g.cause, dict(g.outcomes), g.count) for g in refusal_groups(tests)] == expected


@pytest.mark.parametrize(
    ("hosts", "shown"),
    [
        pytest.param(
            [
                {
                    "host": "ssh=gpu-b",
                    "workers": ["gw2", "gw3"],
                    "probed_by": "controller",
                    "summary": "driver 550.54.15, 2 GPUs, the GPU stack holds together",
                    "environment": None,
                    "findings": [],
                },
                {"host": "via=hop", "workers": ["gw4"], "reason": "started through another gateway", "summary": None},
            ],
            (
                "ssh=gpu-b (gw2, gw3): driver 550.54.15, 2 GPUs, the GPU stack holds together",
                "via=hop (gw4): started through another gateway",
            ),
            id="as the plugin writes them",
        ),
        pytest.param(["gpu-a", 5, [1, 2]], ("gpu-a", "5", "a list of 2"), id="a list of anything"),
        pytest.param({"gw0": {"ip": "10.0.0.2", "n": 2}}, ("gw0: ip=10.0.0.2, n=2",), id="an object of anything"),
        pytest.param(None, (), id="none"),
    ],
)
def test_remote_hosts_are_shown_one_line_each_whatever_their_shape(
    tmp_path: Path, hosts: Any, shown: tuple[str, ...]
) -> None:
    assert runner(write(tmp_path / "r.json", document(healthy(), hosts=hosts))).hosts == shown


def test_keys_a_newer_report_adds_are_accepted_and_its_remote_hosts_shown(tmp_path: Path) -> None:
    data = document(
        healthy(),
        [{**ran("t.py::test_a"), "duration": 1.5}],
        hosts={"gw0": {"address": "gpu-a", "python": "3.11.7"}, "gw1": "gpu-b"},
        xdist={"gw0": [0], "gw1": [1]},
        xdist_devices={"gw0": [{"label": "GPU 0", "uuid": "GPU-1"}]},
        later={"anything": [1, 2]},
    )
    data["findings"] = [{**finding, "url": "https://example.org"} for finding in data["findings"]]
    read = runner(write(tmp_path / "r.json", data))
    assert read.hosts == ("gw0: address=gpu-a, python=3.11.7", "gw1: gpu-b")
    assert read.xdist_workers == 2
    text = fleet_text(read_fleet([("r", str(tmp_path / "r.json"))]))
    assert "  Host            gw0: address=gpu-a, python=3.11.7\n" in text
    assert "  xdist           2 worker(s) with GPUs\n" in text


# Unusable reports ---------------------------------------------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change to a valid report: ``value`` at the dotted ``path`` (``tests.0.outcome``)."""

    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        del target[last]

    return change


MALFORMED: list[Any] = [
    pytest.param(_set("environment", []), "environment: not a JSON object", id="environment not an object"),
    pytest.param(
        _set("environment.driver.version", 5),
        "environment.driver.version: expected a string, got 5",
        id="a wrong type in the environment",
    ),
    pytest.param(
        _set("environment.driver.version", "5xx"),
        "environment.driver.version: expected a driver version such as '535.104.05', got '5xx'",
        id="a bad value in the environment",
    ),
    pytest.param(
        _set("environment.schema_version", 99),
        "environment: schema_version 99 is not supported (this pytest-cudnn reads 1 to 4)",
        id="a newer environment",
    ),
    pytest.param(_set("findings", {}), "findings: expected a list, got an object", id="findings not a list"),
    pytest.param(
        _set("findings.0.severity", "fatal"),
        "findings[0].severity: expected one of 'error', 'warning', 'info', got 'fatal'",
        id="an unknown severity",
    ),
    pytest.param(_drop("findings.0.summary"), "findings[0].summary: missing", id="a finding without its summary"),
    pytest.param(_set("findings.0.evidence", "x"), "findings[0].evidence: expected a list, got 'x'", id="evidence"),
    pytest.param(_set("verdict", None), "verdict: expected an object, got None", id="verdict null"),
    pytest.param(_set("verdict.ok", "yes"), "verdict.ok: expected true or false, got 'yes'", id="verdict.ok"),
    pytest.param(_set("frameworks", None), "frameworks: expected a list, got null", id="frameworks null"),
    pytest.param(_set("frameworks.0.ok", 1), "frameworks[0].ok: expected true or false, got 1", id="framework ok"),
    pytest.param(_set("tests", "all"), "tests: expected a list, got a string", id="tests not a list"),
    pytest.param(_set("tests.0", "t.py::x"), "tests[0]: expected an object, got 't.py::x'", id="a test not an object"),
    pytest.param(_set("tests.1.outcome", 5), "tests[1].outcome: expected a string, got 5", id="a test's outcome"),
    pytest.param(_drop("tests.1.nodeid"), "tests[1].nodeid: missing", id="a test without its nodeid"),
    pytest.param(
        _set("tests.1.requirements", [1]), "tests[1].requirements[0]: expected a string, got 1", id="requirements"
    ),
    pytest.param(_set("require_gpu", "no"), "require_gpu: expected true or false, got 'no'", id="require_gpu"),
    pytest.param(_set("xdist", []), "xdist: expected an object, got []", id="xdist"),
    pytest.param(_set("xdist_note", 3), "xdist_note: expected a string, got 3", id="xdist_note"),
    pytest.param(_set("hosts", 5), "hosts: expected a list or an object, got a number", id="hosts"),
    pytest.param(_drop("tests"), "tests: missing", id="no tests"),
    pytest.param(_drop("frameworks"), "frameworks: missing", id="no frameworks"),
]


@pytest.mark.parametrize(("change", "reason"), MALFORMED)
def test_a_malformed_report_is_named_with_the_path_to_the_bad_value(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], reason: str
) -> None:
    data = document(old_t4(), [refused("t.py::a", CUDNN_REASON), ran("t.py::b")])
    change(data)
    path = write(tmp_path / "bad.json", data)
    assert read_runner("bad", path) == Problem("bad", path, reason)


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as handle:
        handle.truncate(size)


CONTENTS: list[Any] = [
    pytest.param(b"", "is empty", id="empty"),
    pytest.param(b"  \n", "is empty", id="blank"),
    pytest.param(b"\x80{}", "is not UTF-8 text (byte 0)", id="not UTF-8"),
    pytest.param("{}".encode("utf-16"), "is not UTF-8 text (a UTF-16 byte-order mark)", id="UTF-16"),
    pytest.param(
        b"{'a': 1}", "is not JSON: Expecting property name enclosed in double quotes: line 1 column 2", id="JSON"
    ),
    pytest.param(b"<html>", "is not JSON: Expecting value: line 1 column 1", id="HTML"),
    # json's message ends in "starting at": the text once read "starting at at line 1".
    pytest.param(b'{"a', "is not JSON: Unterminated string starting at: line 1 column 2", id="cut in a string"),
    pytest.param(b"[1, 2]", "is not a pytest-cudnn report: the JSON is a list, not an object", id="a list"),
    pytest.param(b"null", "is not a pytest-cudnn report: the JSON is null, not an object", id="null"),
    pytest.param(b"1" * 200, "has a number of 200 digits, more than any report holds", id="a huge number"),
    pytest.param(b"[" * 100_000 + b"]" * 100_000, "is nested too deeply to be a report", id="deep"),
    pytest.param(
        b'{"results": []}',
        "is not a pytest-cudnn report: it has no 'environment' (pytest --gpu-report PATH writes one)",
        id="another tool's JSON",
    ),
    pytest.param(
        json.dumps(healthy().to_json()).encode(),
        "is a snapshot (pytest-cudnn snapshot), not a report: pytest --gpu-report PATH writes one",
        id="a snapshot",
    ),
    pytest.param(
        json.dumps(
            {k: v for k, v in document(healthy()).items() if k in ("environment", "findings", "verdict")}
        ).encode(),
        "is the doctor's JSON (pytest-cudnn doctor --json), not a report: it has no 'tests'",
        id="the doctor's JSON",
    ),
    pytest.param(
        b'{"schema": "pytest-cudnn/fleet", "schema_version": 1, "runners": []}',
        "is a fleet view (pytest-cudnn fleet --json), not a runner's report",
        id="a fleet view",
    ),
]


@pytest.mark.parametrize(("content", "reason"), CONTENTS)
def test_a_file_that_is_no_report_is_named_with_the_reason(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "gpu-report.json"
    path.write_bytes(content)
    assert read_runner("r", str(path)) == Problem("r", str(path), reason)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        pytest.param(lambda p: None, "cannot be read: No such file or directory", id="missing"),
        pytest.param(lambda p: p.mkdir(), "is a folder, not a regular file", id="a folder"),
        pytest.param(os.mkfifo, "is a named pipe (FIFO), not a regular file", id="a FIFO"),
        pytest.param(
            lambda p: _sparse(p, 65 * 2**20), f"is {65 * 2**20} bytes; a report is at most 64 MiB", id="too large"
        ),
    ],
)
def test_a_report_that_cannot_be_read_is_named_with_the_systems_reason(
    tmp_path: Path, make: Callable[[Path], None], reason: str
) -> None:
    path = tmp_path / "gpu-report.json"
    make(path)
    assert read_runner("r", str(path)) == Problem("r", str(path), reason)


def test_a_report_without_read_permission_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The system's refusal, as open(2) gives it to a user without read permission (root, which runs CI here,
    # may read any file, so chmod alone cannot make it happen).
    path = tmp_path / "gpu-report.json"
    path.write_text("{}")

    def refuse(name: str, limit: int) -> bytes:
        raise PermissionError(13, "Permission denied", name)

    monkeypatch.setattr(files, "read_regular", refuse)
    assert read_runner("r", str(path)) == Problem("r", str(path), "cannot be read: Permission denied")


def test_an_unusable_report_never_costs_the_other_runners(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = two_runners(tmp_path)
    (tmp_path / "bad.json").write_text('{"environment": {}')
    code = main(["fleet", *(path for _, path in reports), str(tmp_path / "bad.json"), str(tmp_path / "gone.json")])
    out, err = capsys.readouterr()
    assert code == 1
    assert err == ""
    assert "\na100  " in out
    assert "\nt4  " in out
    assert f"  bad  {tmp_path}/bad.json: is not JSON: Expecting ',' delimiter: line 1 column" in out
    assert f"  gone  {tmp_path}/gone.json: cannot be read: No such file or directory\n" in out
    assert out.endswith("Fleet: not ok: t4 cannot run GPU work; no usable report from bad, gone\n")


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, as the keys and indexes that lead there."""
    inside = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    return [prefix, *(path for key, item in inside for path in _paths(item, (*prefix, key)))]


VALID = document(old_t4(), [refused("t.py::a", CUDNN_REASON), ran("t.py::b")], hosts=["gw0 on gpu-a"])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(_paths(VALID)[1:]), value=JSON_VALUES)
def test_any_value_anywhere_gives_a_runner_or_a_named_problem_never_a_crash(where: tuple[Any, ...], value: Any) -> None:
    data = json.loads(json.dumps(VALID))
    target = data
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder) / "r.json", data)
        read = read_runner("r", path)
        if isinstance(read, Problem):
            assert read.reason
            return
        fleet = compare([read, runner(write(Path(folder) / "h.json", document(healthy())), "h")])
    for shown in (fleet_text(fleet), fleet_markdown(fleet)):
        assert all(char == "\n" or char.isprintable() for char in shown)
    json.dumps(fleet_json(fleet))


# Differences --------------------------------------------------------------------------------------------------


def test_the_differences_say_why_one_runner_skipped_what_another_ran(tmp_path: Path) -> None:
    fleet = read_fleet(two_runners(tmp_path))
    assert {fact.key: dict(fact.values) for fact in fleet.facts} == {
        "verdict": {"a100": "can run GPU work", "t4": "cannot run GPU work"},
        "driver": {"a100": "550.54.15", "t4": "450.80.02"},
        "cuda_driver": {"a100": "12.4", "t4": "11.0"},
        "gpus": {"a100": "1x NVIDIA A100-SXM4-80GB (80.0 GiB)", "t4": "1x Tesla T4 (15.0 GiB)"},
        "cuda_runtime": {"a100": "12.5", "t4": "10.1"},
        "cudnn": {"a100": "9.3.0", "t4": "8.0.5"},
        "framework:tensorflow": {"a100": "2.18.0 (can run)", "t4": "2.3.1 (cannot run)"},
    }
    assert [(f.code, f.on, f.not_on) for f in fleet.findings if f.severity == "error"] == [
        ("tensorflow-cudnn-not-found", ("t4",), ("a100",))
    ]
    [test] = fleet.tests
    assert test.nodeid == "t.py::test_cudnn9"
    assert dict(test.ran_on) == {"a100": "passed"}
    assert [(r.runner, r.outcome, r.cause, r.reason) for r in test.refused_on] == [
        ("t4", "skipped", "requires cuDNN >=9", CUDNN_REASON)
    ]


def test_runners_with_the_same_stack_have_no_differences(tmp_path: Path) -> None:
    same = document(healthy(), [ran("t.py::a")])
    fleet = read_fleet([("a", write(tmp_path / "a.json", same)), ("b", write(tmp_path / "b.json", same))])
    assert (fleet.facts, fleet.findings, fleet.tests) == ((), (), ())
    assert fleet.ok
    assert "Differences\n  none: every runner reports the same stack and tests\n" in fleet_text(fleet)
    assert "#### Differences\n\nnone: every runner reports the same stack and tests\n" in fleet_markdown(fleet)


@pytest.mark.parametrize(
    ("env", "key", "values"),
    [
        pytest.param(
            EnvBuilder.healthy().without_driver().build(), "driver", {"a": "550.54.15", "b": "absent"}, id="no driver"
        ),
        pytest.param(
            EnvBuilder.healthy().with_gpus(gpu(), gpu(1)).build(),
            "gpus",
            {"a": "1x NVIDIA A100-SXM4-80GB (80.0 GiB)", "b": "2x NVIDIA A100-SXM4-80GB (80.0 GiB)"},
            id="GPU count",
        ),
        pytest.param(
            dataclasses.replace(
                EnvBuilder.healthy().with_gpus(gpu(), gpu(1)), variables={"CUDA_VISIBLE_DEVICES": "1"}
            ).build(),
            "gpus",
            {"a": "1x NVIDIA A100-SXM4-80GB (80.0 GiB)", "b": "2x NVIDIA A100-SXM4-80GB (80.0 GiB), 1 visible to CUDA"},
            id="GPUs hidden by CUDA_VISIBLE_DEVICES",
        ),
        pytest.param(
            EnvBuilder.healthy().with_torch("2.10.0+cu128", "12.8").build(),
            "framework:torch",
            {"a": None, "b": "2.10.0+cu128 (can run)"},
            id="a framework on one runner only",
        ),
    ],
)
def test_each_fact_that_differs_is_one_difference(
    tmp_path: Path, env: Environment, key: str, values: dict[str, str | None]
) -> None:
    fleet = read_fleet(
        [("a", write(tmp_path / "a.json", document(healthy()))), ("b", write(tmp_path / "b.json", document(env)))]
    )
    assert {fact.key: dict(fact.values) for fact in fleet.facts}[key] == values


def test_a_test_refused_everywhere_or_run_everywhere_is_no_difference(tmp_path: Path) -> None:
    a = document(healthy(), [ran("t.py::everywhere"), refused("t.py::nowhere", CUDNN_REASON), ran("t.py::only-a")])
    b = document(healthy(), [ran("t.py::everywhere"), refused("t.py::nowhere", CUDNN_REASON)])
    fleet = read_fleet([("a", write(tmp_path / "a.json", a)), ("b", write(tmp_path / "b.json", b))])
    assert fleet.tests == ()


# Output -------------------------------------------------------------------------------------------------------


def test_the_text_shows_each_runner_then_the_differences_then_the_verdict(tmp_path: Path) -> None:
    text = fleet_text(read_fleet(two_runners(tmp_path)))
    assert text.startswith("pytest-cudnn fleet: 2 runners: a100, t4\n\na100  ")
    for line in (
        "  Driver          450.80.02 (CUDA 11.0)\n",
        "  GPUs            1x Tesla T4 (15.0 GiB)\n",
        "  cuDNN           8.0.5  /usr/local/cuda-10.1/lib64/libcudnn.so.8\n",
        "  GPU tests       1 passed, 1 skipped\n",
        "  Refused by the environment\n    1 skipped: " + CUDNN_REASON + "\n",
        "    ERROR [tensorflow-cudnn-not-found] on t4; not on a100\n",
        "  Tests refused on some runners, run on others\n    t.py::test_cudnn9\n        ran on a100 (passed)\n"
        f"        skipped on t4: {CUDNN_REASON}\n",
    ):
        assert line in text
    assert re.search(r"^Differences\n {17}a100 +t4\n  verdict +can run GPU work +cannot run GPU work$", text, re.M)
    assert re.search(r"^  cuDNN +9\.3\.0 +8\.0\.5$", text, re.M)
    assert re.search(r"^  TensorFlow +2\.18\.0 \(can run\) +2\.3\.1 \(cannot run\)$", text, re.M)
    assert text.endswith("\nFleet: not ok: t4 cannot run GPU work\n")


def test_the_markdown_is_a_step_summary_block_of_escaped_tables(tmp_path: Path) -> None:
    markdown = fleet_markdown(read_fleet(two_runners(tmp_path)))
    assert markdown.startswith("\n### pytest-cudnn fleet\n\n**not ok: t4 cannot run GPU work**\n\n")
    assert markdown.endswith("|\n\n")
    assert "| cuDNN | 9.3.0 | 8.0.5 |" in markdown
    assert "| t.py::test\\_cudnn9 | a100 (passed) | t4 | requires cuDNN &gt;=9; found cuDNN 8.0.5 at " in markdown
    assert "| 1 skipped | requires cuDNN &gt;=9 | requires cuDNN &gt;=9; found" in markdown
    assert_tables_hold_together(markdown)


def assert_tables_hold_together(markdown: str) -> None:
    """Every row of each table has as many cells as its header: nothing a report holds adds a "|"."""
    for table in re.findall(r"(?:^\|.*\n)+", markdown, re.M):
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(widths) == 1, table


def test_the_json_is_the_documented_schema(tmp_path: Path) -> None:
    data = fleet_json(read_fleet([*two_runners(tmp_path), ("gone", str(tmp_path / "gone.json"))]))
    assert list(data) == ["schema", "schema_version", "ok", "verdict", "runners", "differences", "problems"]
    assert (data["schema"], data["schema_version"], data["ok"]) == ("pytest-cudnn/fleet", 1, False)
    a100, t4 = data["runners"]
    assert (a100["name"], a100["ok"], a100["stack"]["cudnn"], a100["stack"]["cudnn_path"]) == (
        "a100",
        True,
        "9.3.0",
        "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
    )
    assert t4["refusals"] == [
        {
            "cause": "requires cuDNN >=9",
            "outcomes": {"skipped": 1},
            "reason": CUDNN_REASON,
            "tests": ["t.py::test_cudnn9"],
            "count": 1,
        }
    ]
    kinds = {difference["kind"] for difference in data["differences"]}
    assert kinds == {"fact", "finding", "test"}
    test = next(d for d in data["differences"] if d["kind"] == "test")
    assert test == {
        "kind": "test",
        "nodeid": "t.py::test_cudnn9",
        "ran_on": {"a100": "passed"},
        "refused_on": [{"runner": "t4", "outcome": "skipped", "cause": "requires cuDNN >=9", "reason": CUDNN_REASON}],
    }
    assert data["problems"] == [
        {"runner": "gone", "path": str(tmp_path / "gone.json"), "reason": "cannot be read: No such file or directory"}
    ]


HOSTILE = "A100\x1b[2J\x1b]0;owned\x07\r\u202eevil\u200b|<b>*"


def test_what_a_report_holds_is_never_printed_raw(tmp_path: Path) -> None:
    env = EnvBuilder.healthy().with_gpus(gpu(name=HOSTILE)).build()
    data = document(
        env,
        [ran(f"t.py::a{HOSTILE}"), refused(f"t.py::b{HOSTILE}", f"requires {HOSTILE}; found {HOSTILE}")],
        hosts=[HOSTILE],
    )
    data["findings"].append({"code": HOSTILE, "severity": "error", "summary": HOSTILE, "fix": HOSTILE})
    data["frameworks"] = [{"name": HOSTILE, "version": HOSTILE, "ok": False, "summary": HOSTILE}]
    folder = tmp_path / f"run{HOSTILE}"
    other = document(healthy(), [refused(f"t.py::a{HOSTILE}", f"requires {HOSTILE}; found"), ran(f"t.py::b{HOSTILE}")])
    fleet = read_fleet(
        [(f"x{HOSTILE}", write(folder / "gpu-report.json", data)), ("plain", write(tmp_path / "p.json", other))]
    )
    text, markdown = fleet_text(fleet), fleet_markdown(fleet)
    for shown in (text, markdown):
        assert all(char == "\n" or char.isprintable() for char in shown)
    assert "A100\\x1b[2J\\x1b]0;owned\\x07\\r\\u202eevil\\u200b|<b>*" in text
    assert "A100\\\\x1b\\[2J\\\\x1b\\]0;owned\\\\x07\\\\r\\\\u202eevil\\\\u200b\\|&lt;b&gt;\\*" in markdown
    assert "\x1b" not in json.dumps(fleet_json(fleet))
    assert_tables_hold_together(markdown)


def test_a_problems_reason_and_path_are_printable_too(tmp_path: Path) -> None:
    bad = tmp_path / "r\x1b[31m.json"
    bad.write_text("[]")
    fleet = read_fleet([("r\x1b", str(bad))])
    assert "r\\x1b[31m.json" in fleet_text(fleet)
    assert "\x1b" not in fleet_text(fleet) + fleet_markdown(fleet)


# The command --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "code"),
    [
        pytest.param(lambda tmp: [write(tmp / "a.json", document(healthy()))], 0, id="every runner ok"),
        pytest.param(
            lambda tmp: [write(tmp / "a.json", document(healthy())), write(tmp / "b.json", document(old_t4()))],
            1,
            id="a runner not ok",
        ),
        pytest.param(
            lambda tmp: [write(tmp / "a.json", document(healthy())), str(tmp / "missing.json")],
            1,
            id="a report missing",
        ),
    ],
)
@pytest.mark.parametrize("form", [[], ["--markdown"], ["--json"]])
def test_the_exit_code_is_0_only_when_every_report_is_read_and_every_runner_ok(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], list[str]],
    code: int,
    form: list[str],
) -> None:
    assert main(["fleet", *form, *make(tmp_path)]) == code
    out = capsys.readouterr().out
    if form == ["--json"]:
        assert json.loads(out)["ok"] is (code == 0)


def test_reports_may_follow_the_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (_, first), (_, second) = two_runners(tmp_path)
    assert main(["fleet", first, "--json", second, "--name", f"big={first}"]) == 1
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["runners"]] == ["big", "t4"]


def test_fleet_help_documents_the_exit_codes_and_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["fleet", "--help"])
    text = capsys.readouterr().out
    assert text.startswith("usage: pytest-cudnn fleet [--markdown | --json] [--name NAME=PATH]... REPORT...\n")
    for said in ("exit codes: 0 every report read", "2 a usage error", '"schema": "pytest-cudnn/fleet"', "--name"):
        assert said in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "pytest-cudnn fleet [--markdown | --json] [--name NAME=PATH]... REPORT..." in capsys.readouterr().out


def test_the_fleet_docstring_examples_hold() -> None:
    result = doctest.testmod(reading_module)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.e2e
@pytest.mark.parametrize("form", [[], ["--markdown"], ["--json"]])
def test_a_closed_standard_output_ends_the_fleet_quietly(tmp_path: Path, form: list[str]) -> None:
    reports = [path for _, path in two_runners(tmp_path)]
    completed = _closed_pipe_run(["fleet", *form, *reports])
    assert (completed.returncode, completed.stderr) == (141, "")


@pytest.mark.e2e
def test_fleet_imports_no_framework_no_pytest_and_never_probes(tmp_path: Path) -> None:
    (_, first), (_, second) = two_runners(tmp_path)
    code = (
        "import sys; from pytest_cudnn.cli import main; code = main(['fleet', '--json', *sys.argv[1:]]);"
        "watched = ('pytest', 'tensorflow', 'torch', 'jax', 'cupy', 'ctypes', 'pytest_cudnn.probe',"
        # native/protocol.py (the model's failure kinds) holds types only: importing it runs nothing
        " 'pytest_cudnn.native.isolation', 'pytest_cudnn.native.calls', 'pytest_cudnn.probing');"
        "print(code, sorted(m for m in watched if m in sys.modules), file=sys.stderr)"
    )
    completed = subprocess.run([sys.executable, "-c", code, first, second], capture_output=True, text=True, check=False)
    assert completed.stderr.strip() == "1 []"


# End to end: simulated runners --------------------------------------------------------------------------------

SUITE = """
import pytest

@pytest.mark.requires_cudnn(">=9")
def test_needs_cudnn_9():
    pass

@pytest.mark.requires_driver(">=535")
def test_needs_driver_535():
    pass

@pytest.mark.requires_gpu(compute_capability=">=8.0")
def test_needs_ampere(gpu):
    pass

def test_plain():
    pass
"""


def test_reports_of_simulated_runners_are_merged_with_why_each_skipped(tmp_path: Path, compiler: Compiler) -> None:
    """Three runners write real reports: an A100 with cuDNN 9 runs everything, an L4 on driver 535 with cuDNN 8.9
    skips the cuDNN 9 test, a T4 on driver 470 without cuDNN skips three. A fourth runner's report never came and a
    fifth is cut short: both are named, and the three others are shown."""
    reports = tmp_path / "reports"
    a100 = SimHost(tmp_path / "a100", compiler)
    a100.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
    a100.add_stack("opt/cuda/lib64", 12040, (9, 1, 0))
    l4 = SimHost(tmp_path / "l4", compiler)
    l4.add_driver([SimGpu("NVIDIA L4", compute_capability=(8, 9), memory_total=24 * GiB)], "535.104.05", 12020)
    l4.add_stack("opt/cuda/lib64", 12020, (8, 9, 7))
    t4 = SimHost(tmp_path / "t4", compiler)
    t4.add_driver([SimGpu("Tesla T4", compute_capability=(7, 5), memory_total=15 * GiB)], "470.82.01", 11040)
    t4.add_stack("opt/cuda/lib64", 11040)
    for name, host in (("a100", a100), ("l4", l4), ("t4", t4)):
        completed = host.pytest(f"--gpu-report={reports / name / 'gpu-report.json'}", files={"test_gpu.py": SUITE})
        assert completed.returncode == 0, completed.stdout + completed.stderr
    (reports / "cut").mkdir()
    (reports / "cut" / "gpu-report.json").write_text((reports / "a100" / "gpu-report.json").read_text()[:500])
    paths = [f"reports/{name}/gpu-report.json" for name in ("a100", "l4", "t4", "gone", "cut")]

    def fleet(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_cudnn", "fleet", *args, *paths],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
        )

    text = fleet()
    assert (text.returncode, text.stderr) == (1, "")
    assert text.stdout.startswith("pytest-cudnn fleet: 5 runners: a100, l4, t4, gone, cut\n")
    for line in (
        "  Driver          550.54.15 (CUDA 12.4)\n",
        "  GPUs            1x NVIDIA L4 (24.0 GiB)\n",
        "  cuDNN           none in use\n",
        "  gone  reports/gone/gpu-report.json: cannot be read: No such file or directory\n",
        "  cut  reports/cut/gpu-report.json: is not JSON: ",
    ):
        assert line in text.stdout
    assert re.search(r"^  driver +550\.54\.15 +535\.104\.05 +470\.82\.01$", text.stdout, re.M)
    assert re.search(r"^  cuDNN +9\.1\.0 +8\.9\.7 +none$", text.stdout, re.M)
    assert "    test_gpu.py::test_needs_cudnn_9\n        ran on a100 (passed)\n" in text.stdout
    assert "        skipped on l4: requires cuDNN >=9; found cuDNN 8.9.7 at " in text.stdout
    assert "        skipped on t4: requires NVIDIA driver >=535; found driver 470.82.01 " in text.stdout

    markdown = fleet("--markdown")
    assert markdown.returncode == 1
    assert "| gone | reports/gone/gpu-report.json | cannot be read: No such file or directory |" in markdown.stdout
    assert "| cuDNN | 9.1.0 | 8.9.7 | none |" in markdown.stdout

    data = json.loads(fleet("--json").stdout)
    assert [r["name"] for r in data["runners"]] == ["a100", "l4", "t4"]
    assert [p["runner"] for p in data["problems"]] == ["gone", "cut"]
    assert [r["ok"] for r in data["runners"]] == [True, True, True]
    refused = {
        d["nodeid"]: sorted(r["runner"] for r in d["refused_on"]) for d in data["differences"] if d["kind"] == "test"
    }
    assert refused == {
        "test_gpu.py::test_needs_cudnn_9": ["l4", "t4"],
        "test_gpu.py::test_needs_driver_535": ["t4"],
        "test_gpu.py::test_needs_ampere": ["t4"],
    }


# The example workflow -----------------------------------------------------------------------------------------


def _workflow() -> str:
    return WORKFLOW.read_text(encoding="utf-8")


def _run_lines(text: str, program: str) -> list[str]:
    """The shell lines of the workflow that run ``program``."""
    return [line.strip() for line in text.splitlines() if re.match(rf"\s*(run:\s*)?{re.escape(program)}\s", line)]


def test_the_example_workflow_runs_every_matrix_runner_and_names_each_report() -> None:
    text = _workflow()
    assert "\t" not in text
    runners = re.findall(r"^\s+- runner: (\S+)$", text, re.M)
    assert len(runners) >= 2
    assert "uses: actions/upload-artifact@v4" in text
    assert "uses: actions/download-artifact@v4" in text
    assert text.count("if: always()") >= 2  # the upload after failing tests, and the fleet after failing jobs
    uploaded = re.search(r"name: (gpu-report-)\$\{\{ matrix.runner \}\}", text)
    pattern = re.search(r"pattern: (\S+)", text)
    assert uploaded is not None
    assert pattern is not None
    assert all(fnmatch(f"{uploaded.group(1)}{runner}", pattern.group(1)) for runner in runners)
    [tests] = _run_lines(text, "python -m pytest")
    assert "--require-gpu" in tests.split()
    assert " --gpu-report=reports/${{ matrix.runner }}/gpu-report.json" in tests
    listed = re.search(r'reports="([^"]+)"', text)
    assert listed is not None
    assert listed.group(1).split() == [f"reports/{runner}/gpu-report.json" for runner in runners]


@pytest.mark.e2e
def test_the_example_workflows_commands_are_the_products(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its pytest options are the plugin's, and its fleet commands run as written on reports laid out as
    download-artifact lays them out."""
    text = _workflow()
    help_text = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    [tests] = _run_lines(text, "python -m pytest")
    for option in (word.split("=")[0] for word in tests.split() if word.startswith("--")):
        assert f"{option}" in help_text, option
    listed = re.search(r'reports="([^"]+)"', text)
    assert listed is not None
    for path in listed.group(1).split():
        write(tmp_path / path, document(healthy(), [ran("t.py::a")]))
    fleet_lines = _run_lines(text, "pytest-cudnn")
    assert fleet_lines
    for line in fleet_lines:
        words = shlex.split(line.split(">>")[0].split("||")[0])
        assert words[:2] == ["pytest-cudnn", "fleet"]
        args = [word for arg in words[2:] for word in (listed.group(1).split() if arg == "$reports" else [arg])]
        cwd = Path.cwd()
        os.chdir(tmp_path)
        try:
            assert main(["fleet", *args]) == 0, line
        finally:
            os.chdir(cwd)
        shown = capsys.readouterr().out
        for runner in re.findall(r"^\s+- runner: (\S+)$", text, re.M):
            assert runner in shown


def _job_steps(text: str) -> dict[str, list[str]]:
    """Each job's steps, in order, each as the text of its lines (the workflow's two-space YAML, read by indent:
    no YAML parser is a dependency)."""
    jobs: dict[str, list[str]] = {}
    lines = text.split("\n")
    start = lines.index("jobs:")
    job = ""
    for line in lines[start + 1 :]:
        if re.match(r"\S", line):
            break
        if named := re.match(r"  ([\w-]+):$", line):
            job = named.group(1)
            jobs[job] = []
        elif re.match(r"      - ", line):
            jobs[job].append(line.strip())
        elif jobs.get(job) and line.startswith("        "):
            jobs[job][-1] += "\n" + line.strip()
    return jobs


def test_every_job_of_the_example_workflow_installs_from_its_checkout() -> None:
    """pytest-cudnn is not on PyPI: a job that installs it by name installs whatever someone registered under it,
    and a job without actions/checkout has nothing to install from (field test N7)."""
    jobs = _job_steps(_workflow())
    assert set(jobs) == {"gpu-tests", "fleet"}
    for job, steps in jobs.items():
        installs = [i for i, step in enumerate(steps) if "pip install" in step]
        checkouts = [i for i, step in enumerate(steps) if step.startswith("- uses: actions/checkout@")]
        assert installs, job
        assert checkouts, job
        assert checkouts[0] < installs[0], job
        for i in installs:
            [command] = re.findall(r"pip install (.*)", steps[i])
            assert re.fullmatch(r"""(-e )?["']?\.[/]?(\[[\w,]+\])?["']?""", command), (job, command)


def test_runners_whose_gpus_are_unhealthy_stand_side_by_side(tmp_path: Path) -> None:
    # Issue 32: the fleet says which runner's GPUs fail tests for reasons no version explains.
    sick = EnvBuilder.healthy().with_gpus(gpu(0), gpu(1, ecc_uncorrected_volatile=2, remap_pending=True)).build()
    fleet = read_fleet(
        [
            ("runner-a", write(tmp_path / "a.json", document(healthy()))),
            ("runner-b", write(tmp_path / "b.json", document(sick))),
        ]
    )
    [difference] = [d for d in fleet.facts if d.key == "unhealthy"]
    assert dict(difference.values) == {
        "runner-a": "none",
        "runner-b": "GPU 1 (gpu-ecc-uncorrectable, gpu-memory-repair-pending)",
    }
    text = fleet_text(fleet)
    assert "  Unhealthy       GPU 1 (gpu-ecc-uncorrectable, gpu-memory-repair-pending)\n" in text
    assert text.count("  Unhealthy  ") == 1  # runner-a's GPUs are healthy: no line
    assert "  unhealthy GPUs  none " in text  # side by side in the differences
