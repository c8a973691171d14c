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
    ],
)
def test_example_snapshot_replays_with_its_verdict(
    name: str, exit_code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = SNAPSHOTS / f"{name}.json"
    load_snapshot(path)
    assert main(["doctor", "--env", str(path)]) == exit_code
    assert f"replayed from {path}" in capsys.readouterr().out


def test_every_example_snapshot_decodes() -> None:
    paths = sorted(SNAPSHOTS.glob("*.json"))
    assert len(paths) >= 4
    for path in paths:
        assert load_snapshot(path).host.platform.endswith("(simulated example)")
