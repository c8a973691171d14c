"""Nothing is loaded from the current folder, replaying a snapshot runs no code, and no environment variable
outside the allowlist ever reaches a snapshot or a report."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn.cli import main
from pytest_cudnn.diagnosis import diagnose, judge_environment, verdict
from pytest_cudnn.environment import ALLOWED_VARIABLES, Environment, load_snapshot
from pytest_cudnn.report import doctor_json, doctor_text, markdown_summary

from .simhost import SimGpu, SimHost

SNAPSHOTS = sorted((Path(__file__).parent.parent / "examples" / "snapshots").glob("*.json"))
SECRETS = {"AWS_SECRET_ACCESS_KEY": "hunter2-secret", "CUDA_TOKEN": "tok-secret", "HF_TOKEN": "hf-secret"}


def test_a_library_planted_in_the_working_folder_is_never_loaded_by_pytest(host: SimHost) -> None:
    host.add_driver([SimGpu()])
    suite = host.root / "suite"
    suite.mkdir()
    host.add_cudnn(suite, (8, 0, 0), cudart_version=11000)  # beside the tests, in pytest's working folder
    report = host.root / "report.json"
    tests = {"test_p.py": "def test_a():\n    pass\n"}
    completed = host.pytest(
        "--gpu-report", str(report), files=tests, extra_env={"LD_LIBRARY_PATH": f".::{host.driver_dir}"}
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    env = json.loads(report.read_text())["environment"]
    assert [c for c in env["cudnns"] if c["path"].startswith(str(suite))] == []
    assert any(f["code"] == "ld-library-path-relative" for f in json.loads(report.read_text())["findings"])


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.stem)
def test_replaying_a_snapshot_executes_nothing_and_loads_nothing(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("replaying a snapshot loaded a library or started a process")

    for owner, name in ((ctypes, "CDLL"), (subprocess, "Popen"), (os, "fork"), (os, "system")):
        monkeypatch.setattr(owner, name, forbidden)
    # Every string of the snapshot becomes code that would leave a mark if anything ran it.
    marker = tmp_path / "ran"
    payload = f"__import__('os').mkdir({str(marker)!r})"
    data = json.loads(path.read_text())
    data["tensorflow"]["build_info_path"] = payload
    data["host"]["platform"] = payload
    data["notes"] = [payload]
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(data))
    env = load_snapshot(hostile)
    findings = diagnose(env)
    result = verdict(findings)
    doctor_text(judge_environment(env, tuple(findings)), result, source=str(hostile))
    json.dumps(doctor_json(judge_environment(env, tuple(findings)), result))
    markdown_summary(judge_environment(env, tuple(findings)), [])
    assert not marker.exists()


def _secrets_in(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text or name in text]


def test_secrets_never_reach_a_snapshot_the_doctor_or_a_report(host: SimHost) -> None:
    host.add_driver([SimGpu()])
    host.variables.update(SECRETS)
    snapshot = host.root / "snap.json"
    assert host.run("snapshot", "-o", str(snapshot)).returncode == 0
    assert _secrets_in(snapshot.read_text()) == []
    assert set(json.loads(snapshot.read_text())["variables"]) <= set(ALLOWED_VARIABLES)
    doctor = host.run("doctor", "--json")
    assert _secrets_in(doctor.stdout + doctor.stderr) == []
    report, summary = host.root / "report.json", host.root / "summary.md"
    tests = {"test_s.py": "import pytest\n\n@pytest.mark.requires_gpu(count=2)\ndef test_a():\n    pass\n"}
    completed = host.pytest(
        "--gpu-report",
        str(report),
        "--junitxml",
        str(host.root / "junit.xml"),
        "-v",
        files=tests,
        extra_env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert completed.returncode == 0, completed.stdout
    for output in (report.read_text(), summary.read_text(), (host.root / "junit.xml").read_text(), completed.stdout):
        assert _secrets_in(output) == []


def _hostile_snapshot(tmp_path: Path, system: str = "Linux") -> Path:
    data = json.loads(SNAPSHOTS[0].read_text())
    data["host"]["system"] = system
    data["variables"] = {"CUDA_VISIBLE_DEVICES": "0", "PATH": "/secret-path-hunter2-secret", **SECRETS}
    data["paths"] = [{"variable": "HF_TOKEN", "value": SECRETS["HF_TOKEN"], "is_dir": False}]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    return path


def test_a_replayed_snapshot_keeps_only_allowlisted_variables_and_names_the_others(tmp_path: Path) -> None:
    env = load_snapshot(_hostile_snapshot(tmp_path))
    assert dict(env.variables) == {"CUDA_VISIBLE_DEVICES": "0"}
    assert env.paths == ()
    assert env.notes[-1] == (
        "the snapshot's variables 'AWS_SECRET_ACCESS_KEY', 'CUDA_TOKEN', 'HF_TOKEN', 'PATH' are not on pytest-cudnn's "
        "allowlist: ignored, and their values are not shown"
    )
    assert Environment.from_json(env.to_json()) == env  # ignored once, noted once


def test_path_is_kept_from_a_windows_snapshot(tmp_path: Path) -> None:
    env = load_snapshot(_hostile_snapshot(tmp_path, system="Windows"))
    assert dict(env.variables) == {"CUDA_VISIBLE_DEVICES": "0", "PATH": "/secret-path-hunter2-secret"}
    assert "'PATH'" not in env.notes[-1]


def test_secrets_in_a_replayed_snapshot_reach_neither_the_doctor_nor_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pytester: pytest.Pytester
) -> None:
    snapshot = _hostile_snapshot(tmp_path)
    for args in (["doctor", "-v", "--env", str(snapshot)], ["doctor", "--json", "--env", str(snapshot)]):
        main(args)
        out, err = capsys.readouterr()
        assert not [value for value in SECRETS.values() if value in out + err]
        assert "'AWS_SECRET_ACCESS_KEY'" in out  # named in the note, once
    main(["doctor", "--env", str(snapshot)])  # the default view shows no note, and no value either
    out, err = capsys.readouterr()
    assert "Verdict: " in out
    assert not [value for value in SECRETS.values() if value in out + err]
    pytester.makepyfile("def test_a():\n    pass\n")
    report = tmp_path / "report.json"
    result = pytester.runpytest("-p", "no:hypothesispytest", f"--gpu-env={snapshot}", f"--gpu-report={report}", "-v")
    assert not [value for value in SECRETS.values() if value in result.stdout.str() + report.read_text()]


def test_one_ignored_variable_is_named_in_the_singular(tmp_path: Path) -> None:
    data = json.loads(SNAPSHOTS[0].read_text())
    data["variables"] = {"HF_TOKEN": SECRETS["HF_TOKEN"]}
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(data))
    assert load_snapshot(path).notes[-1] == (
        "the snapshot's variable 'HF_TOKEN' is not on pytest-cudnn's allowlist: ignored, and its value is not shown"
    )
