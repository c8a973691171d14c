"""Every view is bounded, in lines and in characters per line, whatever a snapshot or a report holds.

A snapshot or a report from elsewhere is data: 200,000 notes gave the doctor 200,035 lines, a 10 MB verdict one
line of 10 MB in the fleet's text, 50,000 findings 150,034 lines, and 300 runners side by side lines of 9,165
characters (field test of 2026-11-24, S6 and N8). Long lists are summarised with a line that says how many more
there are and where all of them are (--json, --gpu-report), which stay complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn._base.text import LINE
from pytest_cudnn._run.hosts import Plan, workers_line
from pytest_cudnn.devices import CudaDevice
from pytest_cudnn.diagnosis import diagnose, judge_environment, verdict
from pytest_cudnn.environment import Environment
from pytest_cudnn.fleet.compare import read_fleet
from pytest_cudnn.fleet.render import fleet_json, fleet_markdown, fleet_text
from pytest_cudnn.markers import judge, parse_marker
from pytest_cudnn.report import doctor_json, doctor_summary, doctor_text, header_lines, markdown_summary
from tests.envbuilder import EnvBuilder, gpu, mig, partitioned
from tests.scaled import fleet_reports, grown

pytestmark = pytest.mark.slow  # hosts and fleets of up to 20,000 entries, each rendered every way

LONG = "V" * 100_000


def _long_values() -> Environment:
    """One GPU, one copy, one note, each with a 100,000-character value."""
    builder = EnvBuilder.healthy().with_torch()
    builder.with_gpus(gpu(name=LONG, error=LONG))
    builder.cudnn(f"/opt/{LONG}/libcudnn.so.9", "9.3.0", 12040, rank=1)
    builder.notes.append(LONG)
    return builder.build()


def _old_gpus() -> Environment:
    """2,000 Kepler GPUs: cuDNN 9 and CUDA 12.4 support none of them, a finding for each."""
    return EnvBuilder.healthy().with_gpus(*(gpu(index, name="Tesla K80", cc="3.7") for index in range(2000))).build()


HOSTS: dict[str, Callable[[], Environment]] = {
    "5,000 notes, unreadable folders and relative LD_LIBRARY_PATH entries": lambda: grown("notes", 5000),
    "3,000 GPUs": lambda: grown("gpus", 3000),
    "500 GPUs of 4 MIG devices": lambda: grown("mig", 2000),
    "one GPU of 1,000 MIG devices": lambda: (
        EnvBuilder.healthy().with_gpus(partitioned(0, *(mig(slot) for slot in range(1000)))).build()
    ),
    "300 copies of each library": lambda: grown("copies", 900),
    "torch loading 2,000 libraries": lambda: grown("loads", 2000),
    "100,000-character values": _long_values,
    "2,000 GPUs, a finding each": _old_gpus,
}


def assert_bounded(text: str, lines: int, width: int = LINE) -> None:
    said = text.splitlines()
    assert len(said) <= lines, f"{len(said):,} lines"
    longest = max(said, key=len)
    assert len(longest) <= width, f"a line of {len(longest):,} characters: {longest[:200]}"


@pytest.mark.parametrize("make", HOSTS.values(), ids=HOSTS.keys())
def test_the_doctors_views_are_bounded_and_its_json_complete(make: Callable[[], Environment]) -> None:
    env = make()
    findings = diagnose(env)
    judged = verdict(findings)
    assert_bounded(doctor_text(judge_environment(env, tuple(findings)), judged, source="s.json"), 700)
    assert_bounded(doctor_summary(judge_environment(env, tuple(findings)), judged, source="s.json"), 120)
    assert_bounded(
        "\n".join(header_lines(judge_environment(env, tuple(findings)), runtime=None, cudnn=None, verbose=True)),
        40,
        2000,
    )
    skips = [(f"cause-{index}", 1, LONG) for index in range(1000)]
    assert_bounded(markdown_summary(judge_environment(env, tuple(findings)), skips), 120, 2000)
    data = doctor_json(judge_environment(env, tuple(findings)), judged)
    assert Environment.from_json(json.loads(json.dumps(data["environment"]))) == env
    assert len(data["findings"]) == len(findings)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: grown("notes", 5000), "  and 4,984 more notes (--json lists them all)"),
        (lambda: grown("gpus", 3000), " " * 16 + "and 2,968 more GPUs (--json lists them all)"),
        (_old_gpus, "  and 5,950 more findings (--json lists them all)"),
    ],
)
def test_a_long_list_says_how_many_more_and_where_they_all_are(make: Callable[[], Environment], said: str) -> None:
    env = make()
    findings = diagnose(env)
    assert said in doctor_text(judge_environment(env, tuple(findings)), verdict(findings)).splitlines()


def test_a_refusals_message_is_bounded_whatever_the_gpu_is_called() -> None:
    """A skip's reason is a line of pytest's -rs summary."""
    env = _long_values()
    outcome = judge(parse_marker("requires_gpu", (), {"name": "H100*"}), judge_environment(env))
    assert (outcome.ok, outcome.cause) == (False, "gpu-name")
    assert outcome.message.startswith("requires 1 GPU, named 'H100*'; found GPU 0 VVV")
    assert len(outcome.message) <= 2000


def test_the_xdist_workers_line_is_bounded() -> None:
    """-n 10000 on a 10-GPU host: each worker is named with its GPU."""
    workers = [f"gw{index}" for index in range(10_000)]
    gpus = [CudaDevice(gpu(index)) for index in range(10)]
    said = workers_line(workers, Plan({worker: (gpus[n % 10],) for n, worker in enumerate(workers)}, None))
    assert said.startswith("pytest-cudnn: xdist workers: gw0 -> GPU 0, gw1 -> GPU 1, ")
    assert said.endswith(" characters)")
    assert len(said) <= 2000


# The fleet ------------------------------------------------------------------------------------------------------


def _edited(folder: Path, edit: Callable[[dict[str, Any]], None], runners: int = 2, **sizes: int) -> list[str]:
    folder.mkdir()
    reports = fleet_reports(folder, runners, **sizes)
    path = Path(reports[0][1])
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return [path for _, path in reports]


def _long_fields(data: dict[str, Any]) -> None:
    data["environment"]["host"]["python"] = LONG
    data["environment"]["cudnns"][0]["path"] = f"/opt/{LONG}/libcudnn.so.9"
    data["environment"]["driver"]["reason"] = LONG
    data["xdist_note"] = LONG
    data["xdist"] = {"gw0": [0]}
    data["tests"] = [{"nodeid": LONG, "outcome": "skipped", "reason": LONG, "cause": LONG}]
    data["frameworks"] = [{"name": LONG, "version": LONG, "ok": False, "summary": LONG}]


def _findings(data: dict[str, Any]) -> None:
    data["findings"] += [
        {"code": f"c{index}", "severity": "warning", "summary": "s", "evidence": [], "fix": "f", "subjects": []}
        for index in range(20_000)
    ]


def _causes(data: dict[str, Any]) -> None:
    data["tests"] = [
        {"nodeid": f"t.py::t{index}", "outcome": "skipped", "reason": "r", "cause": f"cause-{index % 5000}"}
        for index in range(10_000)
    ]


REPORTS: dict[str, Callable[[Path], list[str]]] = {
    "a 1,000,000-character verdict": lambda tmp: _edited(
        tmp, lambda data: data["verdict"].update(summary="V" * 1_000_000)
    ),
    "100,000-character fields": lambda tmp: _edited(tmp, _long_fields),
    "20,000 findings": lambda tmp: _edited(tmp, _findings),
    "10,000 tests in 5,000 causes": lambda tmp: _edited(tmp, _causes),
    "300 runners that differ": lambda tmp: _edited(tmp, lambda data: None, runners=300, findings=40, tests=40),
}


@pytest.mark.parametrize("make", REPORTS.values(), ids=REPORTS.keys())
def test_the_fleets_views_are_bounded_and_its_json_complete(tmp_path: Path, make: Callable[[Path], list[str]]) -> None:
    paths = make(tmp_path / "reports")
    fleet = read_fleet([(f"r{index}", path) for index, path in enumerate(paths)])
    assert_bounded(fleet_text(fleet), 2500)
    assert_bounded(fleet_markdown(fleet), 2500, 3000)
    data = fleet_json(fleet)
    assert len(data["runners"]) == len(paths)
    assert sum(len(runner["findings"]) for runner in data["runners"]) == sum(len(r.findings) for r in fleet.runners)


def test_the_fleets_text_says_how_many_more_findings_there_are(tmp_path: Path) -> None:
    fleet = read_fleet([(f"r{index}", path) for index, path in enumerate(_edited(tmp_path / "r", _findings))])
    shown = fleet.runners[0].findings[:16]
    text = fleet_text(fleet).splitlines()
    assert all(f"    WARNING [{f.code}] {f.summary}" in text for f in shown)
    more = len(fleet.runners[0].findings) - 16
    assert f"    and {more:,} more findings (--json lists them all)" in text


def test_runners_past_the_first_32_are_counted(tmp_path: Path) -> None:
    fleet = read_fleet(
        [(f"r{i}", path) for i, path in enumerate(_edited(tmp_path / "r", lambda data: None, runners=40))]
    )
    assert fleet_text(fleet).count("\n  Verdict ") == 32
    assert "\nand 8 more runners (--json lists them all)\n" in fleet_text(fleet)
    assert "\n\nand 8 more runners (--json lists them all)\n" in fleet_markdown(fleet)


def test_many_runners_facts_are_listed_by_value_not_side_by_side(tmp_path: Path) -> None:
    def newer_python(data: dict[str, Any]) -> None:
        data["environment"]["host"]["python"] = "3.12.0"

    paths = _edited(tmp_path / "r", newer_python, runners=30)
    text = fleet_text(read_fleet([(f"r{index}", path) for index, path in enumerate(paths)]))
    assert "  Python  3.11.7  29: r1, r2, r3, r4, r5, r6, r7, r8 and 21 more" in text.splitlines()
    assert "  Python  3.12.0  1: r0" in text.splitlines()


# pytest's own output ------------------------------------------------------------------------------------------


def test_the_header_the_skip_reasons_and_the_summary_are_bounded(pytester: pytest.Pytester) -> None:
    """A replayed snapshot whose GPU is named with 100,000 characters: the header, the -rs line and the summary of
    environment skips each say it in a bounded line."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_gpu(name="H100*")
        def test_h100():
            pass
        """
    )
    env = pytester.path / "env.json"
    env.write_text(_long_values().dumps())
    result = pytester.runpytest("-rs", "-v", "--gpu-env", str(env))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-cudnn: ! driver 550.54.15 (CUDA 12.4), GPUs: GPU 0 VVV*",  # ! its GPU was read in part
            "*   1 x gpu-name: requires 1 GPU, named 'H100[*]'; found GPU 0 VVV*",
            "SKIPPED [[]1[]] *: requires 1 GPU, named 'H100[*]'; found GPU 0 VVV*",
        ]
    )
    # The reason is at most 2,000 characters; pytest's -rs line adds "SKIPPED [1] " and the test's location.
    assert max(len(text) for text in result.outlines) <= 2000 + 100
