"""The lent H100's record (tests/data/real-gpu/, README.md there) read back: the snapshot it took replays to the
doctor's own words on that machine, and the judgement agrees with what the machine's own run said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.environment import load_snapshot
from pytest_cudnn.report import doctor_text

RECORD = Path(__file__).resolve().parent / "data" / "real-gpu"


@pytest.mark.parametrize("machine", ["h100", "h200", "h100b", "h100c"])
def test_each_snapshot_replays_to_the_doctors_words_on_the_machine(machine: str) -> None:
    snapshot = RECORD / f"{machine}-snapshot.json"
    replayed = doctor_text(judge_environment(load_snapshot(str(snapshot))), source=str(snapshot))
    said = (RECORD / f"{machine}-doctor.txt").read_text(encoding="utf-8")
    # The first line says where the facts came from (probed there, replayed here); every other line is the same.
    assert replayed.splitlines()[1:] == said.splitlines()[1:]


def test_the_h100_judgement_is_the_one_the_machine_gave() -> None:
    diagnosis = judge_environment(load_snapshot(str(RECORD / "h100-snapshot.json")))
    there = json.loads((RECORD / "h100-doctor.json").read_text(encoding="utf-8"))
    assert (diagnosis.verdict.ok, diagnosis.verdict.summary) == (there["verdict"]["ok"], there["verdict"]["summary"])
    assert {(j.name, j.ok, j.summary) for j in diagnosis.frameworks} == {
        (f["name"], f["ok"], f["summary"]) for f in there["frameworks"]
    }
    # Two cuDNN copies on that machine: the one torch loads is the wheel's, and a cuDNN requirement names it.
    torch = diagnosis.framework("torch")
    assert torch is not None
    assert torch.cudnn is not None
    assert torch.cudnn.version == "9.19.0"
    assert torch.cudnn.path.endswith("site-packages/nvidia/cudnn/lib/libcudnn.so.9")


def test_the_tier_records_the_text_its_record_replays_to() -> None:
    # The records hold the doctor's full text (what doctor_text gives above); since the default view became the
    # short one (issue 23) that is `doctor -v`, and the tier must write that, or the next record fails the replay.
    tier = (Path(__file__).resolve().parent.parent / ".ci" / "real-gpu").read_text(encoding="utf-8")
    assert '-m pytest_cudnn doctor -v > "$out/doctor.txt"' in tier


def test_the_default_view_replays_to_the_one_the_machine_printed() -> None:
    # The second H100 session ran the final code of issue 23: its short view, printed there, is what the snapshot
    # taken there replays to here (both probes of the same machine, a minute apart); JAX loads the wheel's cuDNN.
    from pytest_cudnn.report import doctor_summary

    snapshot = RECORD / "h100c-snapshot.json"
    replayed = doctor_summary(judge_environment(load_snapshot(str(snapshot))), source=str(snapshot))
    said = (RECORD / "h100c-doctor-default.txt").read_text(encoding="utf-8")
    assert replayed.splitlines()[1:] == said.splitlines()[1:]
    assert "loaded by PyTorch, JAX)" in said


def test_cupy_14_on_the_h100_is_given_no_cudnn() -> None:
    # Real-wheels report: the H100's default view said its system cuDNN 9.14.0 was "loaded by CuPy", while -v
    # listed no CuPy load. CuPy 14 uses no cuDNN (its upgrade guide); the plain dlopen's copy was standing in.
    from pytest_cudnn.overview import doctor_summary

    diagnosis = judge_environment(load_snapshot(RECORD / "h100-snapshot.json"))
    cupy = diagnosis.framework("cupy")
    assert cupy is not None
    assert cupy.cudnn is None
    assert "loaded by CuPy" not in doctor_summary(diagnosis)
