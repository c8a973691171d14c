"""The ``pytest-cudnn`` command: exit codes, snapshots written and replayed, clear errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_cudnn.cli import main

from .simhost import SimGpu, SimHost

EXAMPLES = Path(__file__).parent.parent / "examples" / "snapshots"


def test_snapshot_then_replay_reproduces_the_diagnosis(host: SimHost) -> None:
    host.add_driver([SimGpu()])
    host.add_cudnn(host.wheel_folder("cudnn"), (9, 3, 0), cudart_version=12050)
    snap = host.root / "snap.json"
    written = host.run("snapshot", "-o", str(snap))
    assert written.returncode == 0, written.stderr
    assert f"wrote {snap}" in written.stderr

    live_code, live = host.doctor_json()
    # Replayed on a bare host: nothing planted is on its loader path, the snapshot alone speaks.
    replay = subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--json", "--env", str(snap)],
        capture_output=True,
        text=True,
        check=False,
        cwd=host.root,
    )
    replayed = json.loads(replay.stdout)
    assert replay.returncode == live_code
    assert replayed["environment"] == json.loads(snap.read_text())
    assert replayed["findings"] == live["findings"]
    text = subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--env", str(snap)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert f"replayed from {snap}, probed " in text


def test_snapshot_never_overwrites_without_force(host: SimHost) -> None:
    snap = host.root / "mine.json"
    snap.write_text("my notes")
    refused = host.run("snapshot", "-o", str(snap))
    assert refused.returncode == 2
    assert f"{snap} exists; use --force to overwrite it" in refused.stderr
    assert snap.read_text() == "my notes"
    forced = host.run("snapshot", "-o", str(snap), "--force")
    assert forced.returncode == 0
    assert json.loads(snap.read_text())["schema"] == "pytest-cudnn/environment"


def test_snapshot_to_stdout_is_one_json_document(host: SimHost) -> None:
    completed = host.run("snapshot")
    assert completed.returncode == 0
    assert json.loads(completed.stdout)["schema_version"] == 1


def test_snapshot_into_a_missing_folder_is_a_clear_error(host: SimHost) -> None:
    target = host.root / "no" / "such" / "snap.json"
    completed = host.run("snapshot", "-o", str(target))
    assert completed.returncode == 2
    assert f"cannot write {target}" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_an_unreadable_snapshot_exits_2_naming_the_file(host: SimHost) -> None:
    bad = host.root / "bad.json"
    bad.write_text('{"schema": "pytest-cudnn/environment", "schema_version": 1, "host": 3}')
    completed = host.run("doctor", "--env", str(bad))
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.startswith(f"pytest-cudnn: error: snapshot {bad}: ")
    assert "Traceback" not in completed.stderr


def test_usage_errors_exit_2(host: SimHost) -> None:
    for args in (("doctor", "--timeout", "soon"), ("doctor", "--timeout", "0"), ("frobnicate",), ("doctor", "--nope")):
        completed = host.run(*args)
        assert completed.returncode == 2, args
        assert "usage: pytest-cudnn" in completed.stderr
        assert "Traceback" not in completed.stderr


def test_bare_command_runs_the_doctor(host: SimHost) -> None:
    completed = host.run()
    assert completed.stdout.startswith("pytest-cudnn doctor: ")
    assert completed.returncode in (0, 1)


def test_console_script_and_version(host: SimHost) -> None:
    script = Path(sys.executable).parent / "pytest-cudnn"
    completed = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False)
    assert completed.returncode == 0
    assert completed.stdout.startswith("pytest-cudnn ")


def test_the_doctor_imports_no_framework_and_not_pytest() -> None:
    code = (
        "import sys; from pytest_cudnn import cli; from pytest_cudnn.probe import probe_environment;"
        "probe_environment();"
        "print(sorted(m for m in ('pytest', 'tensorflow', 'torch', 'jax', 'cupy') if m in sys.modules))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]"


def test_a_snapshot_value_that_would_crash_the_diagnosis_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((EXAMPLES / "healthy-tf2.18-a100.json").read_text())
    data["cudnns"][0]["version"] = "9.x"
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(data))
    assert main(["doctor", "--env", str(snap)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"pytest-cudnn: error: snapshot {snap}: cudnns[0].version: expected a version such as '9.1.0', got '9.x'\n"
    )
