"""Edges of the one judgement that two reviews of issue 20's work found: each a case where two views disagreed, or a
fix or a model said what is not so. Pure: built with tests/envbuilder.py, judged in process."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.diagnosis.process import process_findings
from pytest_cudnn.environment import BuildFact, Cudnn, Environment, FrameworkBuild, LoadedLibrary, State, Via
from pytest_cudnn.fleet.reading import read_runner
from pytest_cudnn.frameworks.cupy.pathfinder import places, uses_pathfinder
from pytest_cudnn.markers import copy_for, judge, parse_marker
from pytest_cudnn.report import doctor_json, doctor_text, header_lines

from .envbuilder import SITE, EnvBuilder, gpu, rpath_load
from .test_diagnosis_process import CUSOLVER, TF_CUDART, TF_FRAMEWORK, tensorflow


def _marker(env: Environment, name: str, *args: str, **kwargs: str) -> tuple[bool, str]:
    outcome = judge(parse_marker(name, args, kwargs), judge_environment(env))
    return outcome.ok, outcome.cause


def test_a_framework_whose_loads_were_not_read_is_judged_by_the_copies_a_plain_dlopen_gives() -> None:
    # Windows hosts, older snapshots: torch without loads. It can run, so its cuDNN requirement holds on the copy
    # there is (the marker once said "no cuDNN PyTorch can find" while requires_torch passed).
    b = EnvBuilder.healthy()
    b.with_torch(version="2.5.1+cu124", cuda="12.4", cudnn="9.1.0")
    env = b.build()
    judged = judge_environment(env).framework("torch")
    assert judged is not None
    assert (judged.ok, judged.copies_read) == (True, False)
    assert _marker(env, "requires_torch") == (True, "")
    assert _marker(env, "requires_cudnn", ">=9", framework="torch") == (True, "")


def test_tensorflow_without_its_search_read_is_stopped_by_what_stops_its_own_runtime() -> None:
    b = EnvBuilder.healthy().with_driver(version="470.256.02", cuda_version_raw=11040)
    env = b.build()
    diagnosis = judge_environment(env)
    tf = diagnosis.framework("tensorflow")
    assert tf is not None
    assert (diagnosis.verdict.ok, tf.ok, tf.cause) == (False, False, "driver-too-old-for-cuda")
    assert _marker(env, "requires_tensorflow") == (False, "driver-too-old-for-cuda")


def test_tensorflow_is_not_blamed_for_another_frameworks_cudnn() -> None:
    b = EnvBuilder.healthy().with_driver(version="580.65.06", cuda_version_raw=13000)
    runtime, cudnn = f"{SITE}/nvidia/cu13/lib/libcudart.so.13", f"{SITE}/nvidia/cudnn13/lib/libcudnn.so.9"
    b.runtime(runtime, 13020, (Via.PIP_WHEEL,), rank=None)
    b.cudnn(cudnn, "9.26.0", 13020, (Via.PIP_WHEEL,), rank=None, create_status=1001)
    b.with_torch(cudnn="9.26.0", loads=(rpath_load(runtime), rpath_load(cudnn)))
    env = b.build()
    diagnosis = judge_environment(env)
    tf, torch = diagnosis.framework("tensorflow"), diagnosis.framework("torch")
    assert tf is not None
    assert torch is not None
    assert (tf.ok, torch.ok, torch.cause) == (True, False, "cudnn-create-failed")
    assert _marker(env, "requires_tensorflow") == (True, "")


def test_a_gpu_framework_whose_search_was_not_read_is_stopped_by_no_cuda_runtime_anywhere() -> None:
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    location = f"{SITE}/onnxruntime"
    cuda = BuildFact("13.0", f"{location}/capi/build_and_package_info.py", "cuda_version = '13.0'")
    b.frameworks.append(FrameworkBuild("onnxruntime", State.FOUND, None, "onnxruntime-gpu", "1.31.1", location, True,
                                       cuda, None, (), (), ()))  # fmt: skip
    env = b.build()
    judged = judge_environment(env).framework("onnxruntime")
    assert judged is not None
    assert (judged.ok, judged.cause) == (False, "no-cuda-runtime")
    assert _marker(env, "requires_onnxruntime") == (False, "no-cuda-runtime")


def test_a_cudnn_that_cannot_make_a_handle_is_refused_by_marker_and_fixture_whatever_the_capability() -> None:
    b = EnvBuilder.healthy()
    b.with_gpus(dataclasses.replace(gpu(), compute_capability=None))  # NVML could not tell
    b.change(1, create_status=1001)
    env = b.build()
    diagnosis = judge_environment(env)
    requirement = parse_marker("requires_cudnn", (">=9",), {})
    copy = copy_for(requirement, diagnosis)[0][1]
    assert isinstance(copy, Cudnn)
    assert copy.create_status == 1001  # what the cudnn_handle fixture refuses on
    assert (judge(requirement, diagnosis).ok, judge(requirement, diagnosis).cause) == (False, "cudnn-create-failed")


def _cupy(version: str = "14.2.0", major: str = "12") -> FrameworkBuild:
    location = f"{SITE}/cupy"
    return FrameworkBuild("cupy", State.FOUND, None, f"cupy-cuda{major}x", version, location, True,
                          BuildFact(major, location, f"cupy-cuda{major}x"), None, (), ())  # fmt: skip


def test_cupys_static_runtime_is_judged_by_the_cuda_it_was_built_for() -> None:
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.frameworks.append(_cupy())
    env = b.build()
    assert _marker(env, "requires_cupy") == (True, "")
    assert _marker(env, "requires_cuda", ">=12", framework="cupy") == (True, "")
    assert _marker(env, "requires_cuda", ">=13", framework="cupy") == (False, "cuda-version")
    # Unnamed, a CuPy-only venv is judged by CuPy's runtime, not a libcudart it never loads.
    assert _marker(env, "requires_cuda", ">=12") == (True, "")


def test_only_cupy_14_and_later_is_modelled_through_cuda_pathfinder() -> None:
    assert uses_pathfinder(_cupy("14.0.0"))
    assert not uses_pathfinder(_cupy("13.6.0", "11"))
    assert not uses_pathfinder(_cupy("not a version"))


def test_a_relative_cuda_home_is_never_searched() -> None:
    where = places({"CUDA_HOME": "cuda", "CONDA_PREFIX": "env"})
    assert (where.conda_prefix, where.cuda_path) == (None, None)
    assert places({"CUDA_HOME": "/opt/cuda"}).cuda_path == "/opt/cuda"


def test_a_framework_that_loads_on_first_use_is_never_the_import_order_that_works() -> None:
    # CuPy loads cuSOLVER when cupy.linalg first needs it, not at import: importing it first hands TensorFlow nothing.
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.runtime(TF_CUDART, 12050, (Via.PIP_WHEEL,), rank=None, driver_raw=13000)
    searched = (f"{SITE}/nvidia/cudnn/lib",)
    cusolver = LoadedLibrary("libcusolver.so.11", TF_FRAMEWORK, "dlopen", True, None, None, searched, (CUSOLVER,))
    b.frameworks.append(tensorflow((rpath_load(TF_CUDART, TF_FRAMEWORK, "dlopen"), cusolver)))
    loads = (LoadedLibrary("libcusolver.so.11", None, "dlopen", True, CUSOLVER, "cuda-pathfinder's search"),)
    b.frameworks.append(_with_loads(_cupy(), loads))
    assert [f.code for f in process_findings(b.build())] == []


def _with_loads(build: FrameworkBuild, loads: tuple[LoadedLibrary, ...]) -> FrameworkBuild:
    return dataclasses.replace(build, loads=loads)


def test_preload_dlls_is_offered_only_by_releases_that_have_it() -> None:
    provider = f"{SITE}/onnxruntime/capi/libonnxruntime_providers_cuda.so"
    shadowed = (f"{SITE}/nvidia/cublas/lib/libcublasLt.so.12",)
    missing = LoadedLibrary("libcublasLt.so.12", provider, "DT_NEEDED", True, None, None, ("/usr/lib",), shadowed)
    fixes = {}
    for version in ("1.19.2", "1.21.0"):
        b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
        cuda = BuildFact("12.2", f"{SITE}/onnxruntime/capi/build_and_package_info.py", "cuda_version = '12.2'")
        b.frameworks.append(FrameworkBuild("onnxruntime", State.FOUND, None, "onnxruntime-gpu", version,
                                           f"{SITE}/onnxruntime", True, cuda, None, (), (), (missing,)))  # fmt: skip
        found = next(f for f in judge_environment(b.build()).findings if f.code == "framework-library-missing")
        fixes[version] = found.fix
    assert "preload_dlls" not in fixes["1.19.2"]
    assert "preload_dlls" in fixes["1.21.0"]


def test_tensorflow_held_only_in_its_own_model_gets_a_verdict_in_the_text_and_the_header() -> None:
    diagnosis = judge_environment(EnvBuilder.healthy().build())  # TensorFlow in env.tensorflow, not env.frameworks
    assert "verdict: can run GPU work here" in doctor_text(diagnosis)
    header = header_lines(diagnosis, runtime=diagnosis.runtime, cudnn=diagnosis.cudnn)
    assert any(
        line.startswith("pytest-cudnn: ✓ TensorFlow 2.18.0") and "can run GPU work here" in line for line in header
    )


@pytest.mark.parametrize(
    ("version", "said"),
    [
        (True, "schema_version: expected a whole number from 1, got True"),
        (0, "schema_version: expected a whole number from 1, got 0"),
        ("3", "schema_version: expected a whole number from 1, got '3'"),
        (3, "schema_version: 3, newer than this pytest-cudnn reads (1 to 2): upgrade pytest-cudnn"),
    ],
)
def test_a_report_of_an_unknown_schema_version_is_refused_clearly(tmp_path: Path, version: object, said: str) -> None:
    report = {**doctor_json(judge_environment(EnvBuilder.healthy().build())), "require_gpu": False, "xdist": {}}
    report.update(tests=[], schema_version=version)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    assert said in str(read_runner("r", str(path)))


def test_the_fleet_shows_why_a_runner_refused_a_framework(tmp_path: Path) -> None:
    b = EnvBuilder.healthy().with_driver(version="470.256.02", cuda_version_raw=11040)
    report = {**doctor_json(judge_environment(b.build())), "require_gpu": False, "xdist": {}, "tests": []}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    runner = read_runner("r", str(path))
    stack = getattr(runner, "stack", None)
    assert stack is not None
    assert [(f.name, f.cause) for f in stack.frameworks] == [("tensorflow", "driver-too-old-for-cuda")]
