"""The example snapshots the README's main job replays stay readable and keep their verdicts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn.cli import main
from pytest_cudnn.diagnosis import Severity, judge_environment
from pytest_cudnn.environment import Environment, load_snapshot

SNAPSHOTS = Path(__file__).parent.parent / "examples" / "snapshots"


@pytest.mark.parametrize(
    ("name", "exit_code"),
    [
        ("healthy-tf2.18-a100", 0),
        ("ci-runner-lost-its-gpu", 1),
        ("incomplete-cudnn8", 1),
        ("tf2.3-meets-cudnn8", 1),
        ("gpu-less-ci-machine", 1),
        ("torch2.15-driver-too-old", 1),
        ("jax0.10-cuda12-healthy", 0),
        ("mixed-torch-jax-tf", 1),
        # Forward compatibility that works: driver 535 under a cuda-compat 13.0 libcuda (issue 21: it exited 1).
        ("cuda-compat-13.0-on-driver-535", 0),
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
    assert len(paths) >= 8
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


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


@pytest.mark.parametrize(
    "snapshot", sorted(p for p in SNAPSHOTS.glob("*.json") if p.stem not in RECORDED), ids=lambda p: p.stem
)
def test_a_simulated_example_names_nothing_of_the_machine_that_made_it(snapshot: Path) -> None:
    """make_snapshots.py drops what the probe found of its own machine (a system CUDA toolkit in the ldconfig
    cache, the virtualenv it ran from) and rewrites the host's folder to "/"."""
    paths = [text for text in _strings(json.loads(snapshot.read_text())) if text.startswith("/")]
    assert paths
    leaked = [p for p in paths if p.startswith(("/tmp/", "/work/", "/home/", "/usr/local/cuda-13.0"))]
    foreign_site = [p for p in paths if "site-packages" in p and not p.startswith("/usr/local/lib/python3.11/")]
    assert leaked == foreign_site == []


def _story(name: str) -> tuple[Environment, dict[str, str], list[tuple[str, str]]]:
    """The environment, each framework's verdict, and the (code, severity) of every finding."""
    env = load_snapshot(SNAPSHOTS / f"{name}.json")
    diagnosis = judge_environment(env)
    verdicts = {judged.name: judged.summary for judged in diagnosis.frameworks}
    return env, verdicts, [(f.code, f.severity.value) for f in diagnosis.findings]


def test_torch_215_cannot_run_on_driver_550() -> None:
    env, verdicts, codes = _story("torch2.15-driver-too-old")
    assert env.driver.version == "550.54.15"
    assert codes == [("framework-driver-too-old", Severity.ERROR.value)]
    assert verdicts["torch"].startswith("cannot run: PyTorch 2.15.0+cu132 cannot run here")
    assert "CUDA runtime 13.2" in verdicts["torch"]
    assert "580.65.06" in verdicts["torch"]
    (torch,) = env.frameworks
    assert {load.name: load.found_by for load in torch.loads} == {
        "libcudart.so.13": "DT_RPATH of /usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
        "libcudnn.so.9": "DT_RPATH of /usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
    }


def test_jax_010_on_cuda12_wheels_can_run() -> None:
    env, verdicts, codes = _story("jax0.10-cuda12-healthy")
    assert not [code for code, severity in codes if severity == Severity.ERROR.value]
    assert verdicts == {"jax": "can run GPU work here"}
    (jax,) = env.frameworks
    required = [load for load in jax.loads if load.required]
    assert required
    assert all(load.how == "preload" and "/nvidia/" in (load.path or "") for load in required)


def test_on_the_mixed_host_tensorflow_gets_the_older_cudnn_on_ld_library_path() -> None:
    env, verdicts, codes = _story("mixed-torch-jax-tf")
    assert ("tensorflow-cudnn-too-old", Severity.ERROR.value) in codes
    assert "needs cuDNN 9.3 or a newer 9.x; the loader gives it 9.1.0" in verdicts["tensorflow"]
    cudnn = {build.name: next(load for load in build.loads if load.name == "libcudnn.so.9") for build in env.frameworks}
    wheel = "/usr/local/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9"
    assert (cudnn["torch"].path, cudnn["jax"].path, cudnn["tensorflow"].path) == (
        wheel,
        wheel,
        "/opt/cudnn-9.1/lib/libcudnn.so.9",
    )
    assert cudnn["tensorflow"].found_by == "LD_LIBRARY_PATH"
    assert wheel in cudnn["tensorflow"].shadowed
    # framework-copies-differ is honest: both copies are in the snapshot, with different versions.
    versions = {copy.path: copy.version for copy in env.cudnns}
    assert (versions[wheel], versions["/opt/cudnn-9.1/lib/libcudnn.so.9"]) == ("9.10.2", "9.1.0")
    assert codes.count(("framework-copies-differ", Severity.WARNING.value)) == 2


def test_on_the_mixed_host_torch_and_jax_can_run() -> None:
    """TensorFlow's findings name copies torch and JAX load too (the CUDA runtime wheel); they stop TensorFlow only."""
    _, verdicts, _ = _story("mixed-torch-jax-tf")
    assert (verdicts["torch"], verdicts["jax"]) == ("can run GPU work here", "can run GPU work here")
