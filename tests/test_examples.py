"""The example snapshots the README's main job replays stay readable and keep their verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_cudnn.cli import main
from pytest_cudnn.environment import load_snapshot

SNAPSHOTS = Path(__file__).parent.parent / "examples" / "snapshots"


@pytest.mark.parametrize(
    ("name", "exit_code"),
    [
        ("healthy-tf2.18-a100", 0),
        ("ci-runner-lost-its-gpu", 1),
        ("incomplete-cudnn8", 1),
        ("tf2.3-meets-cudnn8", 1),
        ("gpu-less-ci-machine", 1),
    ],
)
def test_example_snapshot_replays_with_its_verdict(
    name: str, exit_code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = SNAPSHOTS / f"{name}.json"
    load_snapshot(path)
    assert main(["doctor", "--env", str(path)]) == exit_code
    assert f"replayed from {path}" in capsys.readouterr().out


# Snapshots taken with `pytest-cudnn snapshot` on a real machine, not built from simulated hosts.
RECORDED = {"gpu-less-ci-machine"}


def test_every_example_snapshot_decodes() -> None:
    paths = sorted(SNAPSHOTS.glob("*.json"))
    assert len(paths) >= 5
    for path in paths:
        simulated = load_snapshot(path).host.platform.endswith("(simulated example)")
        assert simulated is (path.stem not in RECORDED), path


@pytest.mark.parametrize("snapshot", sorted(SNAPSHOTS.glob("*.json")), ids=lambda p: p.stem)
def test_the_example_suite_runs_on_every_example_environment(pytester: pytest.Pytester, snapshot: Path) -> None:
    suite = Path(__file__).parent.parent / "examples" / "suite"
    pytester.copy_example(str(suite / "test_example.py"))
    result = pytester.runpytest("-p", "no:hypothesispytest", "-rs", f"--gpu-env={snapshot}")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == outcomes.get("errors", 0) == 0, result.stdout.str()
    assert outcomes["passed"] >= 1
    result.stdout.fnmatch_lines([f"pytest-cudnn: * [[]replayed from {snapshot}[]]"])
