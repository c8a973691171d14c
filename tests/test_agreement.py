"""A property of agreement: every view of an environment gives one answer about each framework.

Environments are generated with one to four frameworks (torch, JAX, CuPy, TensorFlow; GPU or CPU builds; torch's
cuDNN sometimes a build for another CUDA major than its runtime, each other framework with its own pair), a
driver of one of three CUDA majors or none, GPUs of three generations, and copies that may be broken. For every
framework X, three views that once worked the answer out each their own way must agree:

- ``pytest-cudnn doctor --env SNAPSHOT --framework X``: its exit status (the CLI, from the snapshot file);
- ``@requires_X``: the marker's outcome (judged on the environment loaded again, as a run replays it);
- ``doctor --json``: X's ``ok``;

``requires_cudnn(framework=X)`` and ``requires_cuda(framework=X)`` judge the copies the doctor's JSON lists among
X's loads, and hold only where X can run; the fleet's view of the report shows the report's own verdicts.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pytest_cudnn import cli
from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.environment import BuildFact, Environment, FrameworkBuild, State, Via
from pytest_cudnn.fleet.reading import read_runner
from pytest_cudnn.markers import copy_for, judge, parse_marker
from pytest_cudnn.report import doctor_json

from .envbuilder import SITE, WHEEL_CUDNN, WHEEL_RUNTIME, EnvBuilder, gpu, rpath_load

DRIVERS = [("580.65.06", 13000), ("550.54.15", 12040), ("470.256.02", 11040), None]
CAPABILITIES = ["6.0", "7.5", "8.0", "9.0"]
TORCH_LIB = f"{SITE}/torch/lib/libtorch_cuda.so"
JAX_PLUGIN = f"{SITE}/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
GPU_BUILD = st.sampled_from([True, True, True, False])  # a GPU build, mostly


@st.composite
def environments(draw: st.DrawFn) -> Environment:
    b = EnvBuilder()
    driver = draw(st.sampled_from(DRIVERS))
    if driver is None:
        b.without_driver()
    else:
        b.with_driver(version=driver[0], cuda_version_raw=driver[1])
        count = draw(st.integers(0, 2))
        b.with_gpus(*(gpu(i, cc=draw(st.sampled_from(CAPABILITIES))) for i in range(count)))
    names = draw(st.sets(st.sampled_from(["torch", "jax", "cupy", "tensorflow"]), min_size=1, max_size=4))
    if "torch" in names:
        _torch(draw, b)
    if "jax" in names:
        _jax(draw, b)
    if "tensorflow" in names:
        gpu_build = draw(GPU_BUILD)
        b.with_tensorflow("2.18.0", "12.5.1", "9", is_cuda_build=gpu_build, library_dirs=(WHEEL_RUNTIME, WHEEL_CUDNN))
        b.runtime(f"{WHEEL_RUNTIME}/libcudart.so.12", 12050, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
        b.cudnn(f"{WHEEL_CUDNN}/libcudnn.so.9", "9.3.0", 12050, (Via.PIP_WHEEL,), rank=None, tf_rank=0,
                create_status=draw(st.sampled_from([0, 0, 1001])))  # fmt: skip
    if "cupy" in names:
        gpu_build = draw(GPU_BUILD)
        location = f"{SITE}/cupy"
        cuda = BuildFact("13", location, "cupy-cuda13x") if gpu_build else None
        b.frameworks.append(
            FrameworkBuild("cupy", State.FOUND, None, "cupy-cuda13x", "14.2.0", location, gpu_build, cuda, None, (), ())
        )
    return b.build()


def _torch(draw: st.DrawFn, b: EnvBuilder) -> None:
    cuda13 = draw(st.booleans())
    runtime = f"{SITE}/nvidia/{'cu13' if cuda13 else 'cuda_runtime'}/lib/libcudart.so.{13 if cuda13 else 12}"
    cudnn = f"{SITE}/nvidia/cudnn{13 if cuda13 else 12}/lib/libcudnn.so.9"
    raw = 13020 if cuda13 else 12040
    # Mixed runtimes per framework: the cuDNN torch loads may be a build for the other CUDA major (another wheel
    # wrote over its own), while JAX and TensorFlow keep theirs.
    built_for = draw(st.sampled_from([raw, raw, 12090 if cuda13 else 13020]))
    b.runtime(runtime, raw, (Via.PIP_WHEEL,), rank=None)
    b.cudnn(cudnn, "9.26.0" if cuda13 else "9.1.0", built_for, (Via.PIP_WHEEL,), rank=None,
            create_status=draw(st.sampled_from([0, 0, 1001])),
            siblings_missing=draw(st.sampled_from([(), (), ("libcudnn_graph.so.9",)])))  # fmt: skip
    if draw(GPU_BUILD):
        b.with_torch(cudnn="9.26.0" if cuda13 else "9.1.0", loads=(rpath_load(runtime), rpath_load(cudnn)))
    else:
        b.with_torch(version="2.15.0+cpu", cuda=None)


def _jax(draw: st.DrawFn, b: EnvBuilder) -> None:
    if not draw(GPU_BUILD):
        b.with_jax(major=None)
        return
    runtime = f"{SITE}/jax-wheels/nvidia/cuda_runtime/lib/libcudart.so.12"
    cudnn = f"{SITE}/jax-wheels/nvidia/cudnn/lib/libcudnn.so.9"
    b.runtime(runtime, 12090, (Via.PIP_WHEEL,), rank=None)
    b.cudnn(cudnn, "9.8.0", 12080, (Via.PIP_WHEEL,), rank=None, create_status=draw(st.sampled_from([0, 0, 1001])))
    b.with_jax(cudnn="9.8.0", loads=(rpath_load(runtime, JAX_PLUGIN, "preload"), rpath_load(cudnn, JAX_PLUGIN)))


def _doctor(snapshot: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["doctor", "--env", str(snapshot), *args])
    return code, out.getvalue()


MARKER = {
    "torch": "requires_torch",
    "jax": "requires_jax",
    "tensorflow": "requires_tensorflow",
    "cupy": "requires_cupy",
}


def _loaded(report: dict[str, Any], name: str, soname_start: str) -> set[str]:
    builds = [b for b in report["environment"]["frameworks"] if b["name"] == name]
    return {
        load["path"]
        for build in builds
        for load in build["loads"]
        if load["path"] and load["required"] and load["name"].startswith(soname_start)
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(environments())
def test_every_view_gives_each_framework_one_answer(env: Environment) -> None:
    with tempfile.TemporaryDirectory() as folder:
        snapshot = Path(folder, "host.json")
        snapshot.write_text(env.dumps())
        replayed = Environment.from_json(json.loads(snapshot.read_text()), str(snapshot))
        diagnosis = judge_environment(replayed)
        _, text = _doctor(snapshot, "--json")
        report = json.loads(text)
        assert report == json.loads(json.dumps(doctor_json(diagnosis)))  # the CLI writes what the diagnosis holds
        listed = {f["name"]: f for f in report["frameworks"]}
        assert set(listed) == {b.name for b in env.frameworks} | ({"tensorflow"} if env.tensorflow.location else set())
        for name, said in listed.items():
            code, _ = _doctor(snapshot, "--framework", name)
            marker = judge(parse_marker(MARKER[name], (), {}), diagnosis)
            assert (code == 0) is said["ok"] is marker.ok, (name, code, said, marker)
            event(f"{name}: {'can run' if said['ok'] else said.get('cause', 'refused')}")
            assert marker.ok or marker.cause == said.get("cause") or said["summary"].startswith("not readable")
            for requirement, soname in (("requires_cudnn", "libcudnn"), ("requires_cuda", "libcudart")):
                asked = parse_marker(requirement, (">=0",), {"framework": name})
                judged = copy_for(asked, diagnosis)
                copy = judged[0][1] if judged else None
                listed_copies = _loaded(report, name, soname)
                if listed_copies:  # the doctor names what X loads: the requirement judges exactly that
                    assert copy is not None, (name, requirement, listed_copies)
                    assert copy.path in listed_copies, (name, requirement, copy, listed_copies)
                assert said["ok"] or not judge(asked, diagnosis).ok, (name, requirement, said)

        report_file = Path(folder, "runner.json")
        report_file.write_text(json.dumps({**report, "require_gpu": False, "xdist": {}, "tests": []}))
        runner = read_runner("runner", str(report_file))
        stack = getattr(runner, "stack", None)
        assert stack is not None, runner
        assert getattr(runner, "ok", None) is report["verdict"]["ok"]
        shown = {(f.name, f.ok, f.summary) for f in stack.frameworks}
        assert shown == {(f["name"], f["ok"], f["summary"]) for f in report["frameworks"]}
