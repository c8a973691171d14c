"""The probe child's protocol (pytest_cudnn/native/protocol.py): one spelling of each kind of job and of failure,
answers matched to their jobs by id, each decoded by its kind in one place (pytest_cudnn/probe/answers.py)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn.environment import Failure
from pytest_cudnn.native import protocol
from pytest_cudnn.native.calls import JOBS
from pytest_cudnn.probe.answers import Batch

ROOT = Path(__file__).resolve().parent.parent


def test_the_failure_kinds_are_the_protocols() -> None:
    assert [failure.value for failure in Failure] == list(protocol.FAILURES)
    assert len(set(protocol.FAILURES)) == len(protocol.FAILURES)


def test_every_kind_of_job_has_its_function_and_its_batch_method() -> None:
    # mypy holds JOBS to protocol.Runners and each Batch method to its job and answer types; this holds the
    # names the child dispatches on to the kinds the protocol lists.
    assert sorted(JOBS) == sorted(protocol.KINDS)
    for kind in protocol.KINDS:
        method = getattr(Batch, kind)
        assert inspect.isfunction(method), kind


ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "nvml": (),
    "cuda": ("libcuda.so.1",),
    "cudart": ("/opt/lib/libcudart.so.12",),
    "cudnn": ("/opt/lib/libcudnn.so.9",),
    "resolve": ("libcudnn.so.9",),
    "jax_versions": ({"kind": "jax_versions", "path": "/site/jax_cuda12_plugin/_versions.so", "module": "m"},),
    "pathfinder": ({"kind": "pathfinder", "names": ["nvrtc"], "site_dirs": ["/site"]},),
    "library": ("/opt/lib/libnccl.so.2", "ncclGetVersion"),
}


@pytest.mark.parametrize("kind", protocol.KINDS)
def test_each_batch_method_asks_a_job_of_its_own_kind(kind: str) -> None:
    batch = Batch()
    batch.nvml()  # another job first: ids are not positions in any one kind's list
    asked = getattr(batch, kind)(*ARGUMENTS[kind])
    assert batch.jobs[asked.id]["kind"] == kind


def test_answers_are_matched_by_id_not_by_place() -> None:
    batch = Batch()
    first, second = batch.cudart("/a/libcudart.so.12"), batch.cudart("/b/libcudart.so.13")
    # The child answers as its jobs finish, in any order: each answer goes to its own job.
    answers = batch.answered({second.id: {"version_raw": 13000}, first.id: {"version_raw": 12020}})
    assert (answers[first]["version_raw"], answers[second]["version_raw"]) == (12020, 13000)


def test_a_job_without_an_answer_says_so_and_names_its_library() -> None:
    batch = Batch()
    answered, unanswered = batch.cudnn("/a/libcudnn.so.9"), batch.cudnn("/b/libcudnn.so.8")
    answers = batch.answered({answered.id: {"version_raw": 90300}, 99: {"version_raw": 1}})
    assert answers[answered]["version_raw"] == 90300
    assert answers[unanswered]["failure"] == "no-answer"
    assert str(answers[unanswered]["error"]).startswith("/b/libcudnn.so.8: ")


def test_a_child_that_could_not_start_leaves_every_job_unanswered() -> None:
    batch = Batch()
    driver, runtime = batch.nvml(), batch.cudart("/a/libcudart.so.12")
    answers = batch.unanswered("cannot start /opt/python")
    assert answers[driver]["error"] == "nvml: cannot start /opt/python"
    assert answers[runtime]["error"] == "/a/libcudart.so.12: cannot start /opt/python"
    assert {answers[driver]["failure"], answers[runtime]["failure"]} == {"no-answer"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({"version_raw": 12020}, {"version_raw": 12020}, id="an int"),
        pytest.param({"version_raw": "12020"}, {"version_raw": None}, id="a string is not an int"),
        pytest.param({"version_raw": True}, {"version_raw": None}, id="a bool is not an int"),
        pytest.param({"loaded": 3}, {"loaded": None}, id="an int is not a path"),
        pytest.param({"error": "x", "failure": "crashed"}, {"error": "x", "failure": "crashed"}, id="a failure kind"),
        pytest.param({"error": "x", "failure": "exploded"}, {"error": "x", "failure": None}, id="no such failure"),
        pytest.param({"missing": ["libz.so.1", 3]}, {"missing": ["libz.so.1"]}, id="names only"),
        pytest.param({}, {"version_raw": None, "error": None, "missing": []}, id="nothing said"),
    ],
)
def test_a_decoder_keeps_only_values_of_their_type(raw: dict[str, Any], expected: dict[str, Any]) -> None:
    batch = Batch()
    asked = batch.cudart("/a/libcudart.so.12")
    answer = batch.answered({asked.id: raw})[asked]
    values: dict[str, Any] = {**answer}
    assert {key: values[key] for key in expected} == expected


def test_the_nvml_decoder_reads_every_gpu_and_mig_device() -> None:
    batch = Batch()
    asked = batch.nvml()
    raw = {
        "state": "found",
        "gpus": [
            {"index": 0, "name": "A100", "memory_total": 10, "memory_free": 4, "mig_mode": True,
             "mig": [{"index": 1, "uuid": "MIG-1", "gpu_slices": 1}, "not a device"]},
            "not a GPU",
            {"name": "T4", "mig_mode": "yes"},  # no index: its place in NVML's list
        ],
    }  # fmt: skip
    answer = batch.answered({asked.id: raw})[asked]
    gpus = answer.get("gpus") or []
    assert [(gpu.get("index"), gpu.get("name"), gpu.get("mig_mode")) for gpu in gpus] == [
        (0, "A100", True),
        (2, "T4", None),
    ]
    mig = gpus[0].get("mig") or []
    assert [(device.get("index"), device.get("uuid"), device.get("gpu_slices")) for device in mig] == [(1, "MIG-1", 1)]


def test_the_pathfinder_decoder_reads_each_library() -> None:
    batch = Batch()
    asked = batch.pathfinder({"kind": "pathfinder", "names": ["nvrtc", "cublas"], "site_dirs": []})
    raw = {
        "version": "1.3.0",
        "libraries": {"nvrtc": {"abs_path": "/site/libnvrtc.so.12", "found_via": "site-packages"}, "cublas": "?"},
    }
    answer = batch.answered({asked.id: raw})[asked]
    libraries = answer.get("libraries") or {}
    assert libraries["nvrtc"].get("abs_path") == "/site/libnvrtc.so.12"
    assert libraries["cublas"] == {
        "abs_path": None,
        "found_via": None,
        "was_already_loaded_from_elsewhere": None,
        "error": None,
    }
    assert batch.answered({asked.id: {"libraries": ["not", "a", "dict"]}})[asked].get("libraries") is None


# What the child imports. It starts as `python -I -S` (native/isolation.py) and imports isolation, then calls,
# before its jobs fork: each module it imports is paid once per probe. The protocol's types are for mypy only.
_CHILD = (
    "import sys; sys.path[:0] = sys.argv[1:2];"
    "from pytest_cudnn.native.isolation import child_main; from pytest_cudnn.native import calls;"
    "print(' '.join(sorted(sys.modules)))"
)
_NOT_IN_THE_CHILD = {"typing", "collections", "re", "json"}  # each costs the child milliseconds


@pytest.mark.e2e  # a child Python
def test_the_child_imports_no_typing_and_no_collections() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _CHILD, str(ROOT)], capture_output=True, text=True, check=True, timeout=60
    )
    modules = set(done.stdout.split())
    assert {"pytest_cudnn.native.protocol", "pytest_cudnn.native.calls", "ctypes"} <= modules
    assert sorted(modules & _NOT_IN_THE_CHILD) == []
