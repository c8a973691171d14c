"""The environment model's JSON round trip, and precise errors for snapshots that do not fit it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn.environment import (
    SCHEMA,
    Candidate,
    CudaDriver,
    CudaRuntime,
    Cudnn,
    Driver,
    Environment,
    Gpu,
    Host,
    InvalidSnapshot,
    Resolution,
    State,
    Via,
    load_snapshot,
)

from .envbuilder import EnvBuilder


def sample() -> Environment:
    candidate = Candidate("libcudnn.so.8", "/a/libcudnn.so.8", "/a/libcudnn.so.8.9.7", (Via.LD_LIBRARY_PATH,), 0)
    return Environment(
        schema=SCHEMA,
        schema_version=1,
        host=Host("Linux", "x86_64", "3.11.7", "Linux-6.1-x86_64"),
        probed_at="2026-11-21T10:00:00+00:00",
        probe_seconds=0.03,
        variables={"CUDA_VISIBLE_DEVICES": "0"},
        driver=Driver(
            State.FOUND,
            "/usr/lib/libnvidia-ml.so.1",
            None,
            None,
            "535.104.05",
            12020,
            "12.2",
            "12.535.104.05",
            (Gpu(0, "Tesla T4", "GPU-1", "00000000:3B:00.0", "7.5", 16 * 1024**3, 15 * 1024**3, None),),
        ),
        cuda_driver=CudaDriver(State.FOUND, "/usr/lib/libcuda.so.1", None, 12020, "12.2", 0, 1),
        cuda_runtimes=(
            CudaRuntime(
                State.FOUND,
                "/a/libcudart.so.11.0",
                ("libcudart.so.11.0",),
                (Via.LD_LIBRARY_PATH,),
                None,
                11080,
                "11.8",
                12020,
                0,
                None,
                1,
            ),
        ),
        cudnns=(
            Cudnn(
                State.FOUND,
                "/a/libcudnn.so.8",
                ("libcudnn.so.8",),
                (Via.LD_LIBRARY_PATH,),
                None,
                8907,
                "8.9.7",
                "cudnnGetProperty",
                11080,
                "11.8",
                (),
                0,
                "CUDNN_STATUS_SUCCESS",
                None,
            ),
        ),
        resolutions=(Resolution("libcudnn.so.8", "process", (candidate,), candidate.path, candidate.path, None),),
        notes=("a note",),
    )


def test_round_trip_through_json_text_is_exact() -> None:
    env = sample()
    assert Environment.from_json(json.loads(env.dumps())) == env


def test_version_strings_are_kept_as_the_driver_printed_them() -> None:
    # packaging would print Version("535.104.05") as 535.104.5; users must see nvidia-smi's spelling.
    assert json.loads(sample().dumps())["driver"]["version"] == "535.104.05"


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "snap.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _broken(mutate: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(sample().dumps())
    mutate(data)
    return data


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "is not JSON: Expecting property name enclosed in double quotes: line 1 column 2"),
        ("[]", "not a JSON object"),
        ({"schema": "something-else"}, "not a pytest-cudnn environment (schema is 'something-else')"),
        (
            {"schema": SCHEMA, "schema_version": 99},
            "schema_version 99 is not supported (this pytest-cudnn reads 1 to 4)",
        ),
        (
            _broken(lambda d: d["driver"]["gpus"][0].update(memory_total="lots")),
            "driver.gpus[0].memory_total: expected an integer, got 'lots'",
        ),
        (
            _broken(lambda d: d["driver"].update(state="fine")),
            "driver.state: expected one of 'found', 'absent', 'error', got 'fine'",
        ),
        (_broken(lambda d: d["cudnns"][0].pop("version")), "cudnns[0].version: missing"),
        (_broken(lambda d: d["cudnns"][0].update(via=["teleport"])), "cudnns[0].via[0]: expected one of"),
        (_broken(lambda d: d.update(extra=1)), "<top>: unknown field 'extra'"),
        (_broken(lambda d: d["host"].update(python=3.11)), "host.python: expected a string, got 3.11"),
        (
            _broken(lambda d: d["driver"]["gpus"][0].update(index=True)),
            "driver.gpus[0].index: expected an integer, got True",
        ),
        ("[" * 100000, "is nested too deeply to be a snapshot"),
    ],
)
def test_a_bad_snapshot_names_the_file_and_the_field(tmp_path: Path, content: Any, problem: str) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(InvalidSnapshot) as error:
        load_snapshot(path)
    assert str(error.value).startswith(f"{path}: ")
    assert problem in str(error.value)


def test_a_missing_snapshot_says_so(tmp_path: Path) -> None:
    with pytest.raises(InvalidSnapshot, match=r"missing\.json: cannot be read: No such file or directory"):
        load_snapshot(tmp_path / "missing.json")


def test_a_binary_snapshot_says_so(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InvalidSnapshot, match="is not UTF-8 text"):
        load_snapshot(path)


def test_integers_are_accepted_where_a_number_is_expected(tmp_path: Path) -> None:
    data = json.loads(sample().dumps())
    data["probe_seconds"] = 1
    assert load_snapshot(_write(tmp_path, data)).probe_seconds == 1.0


def _set(where: str, value: Any) -> dict[str, Any]:
    """The sample snapshot with the value at ``where`` ("driver.gpus[0].index") replaced; TensorFlow's build info
    (``frameworks[0].build_info``) in a healthy TensorFlow host's."""
    base = EnvBuilder.healthy().build() if where.startswith("frameworks[0].build_info") else sample()
    data: dict[str, Any] = json.loads(base.dumps())
    *parents, last = where.replace("[", ".").replace("]", "").split(".")
    target: Any = data
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    target[last] = value
    return data


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        ("cudnns[0].version", "9.x", "a version such as '9.1.0'"),
        ("cudnns[0].version", "9.1", "a version such as '9.1.0'"),
        ("cudnns[0].version", "", "a version such as '9.1.0'"),
        ("cudnns[0].version", "\u0669.1.0", "a version such as '9.1.0'"),  # an Arabic-Indic nine
        ("cudnns[0].cudart_version", "11.x", "a CUDA version such as '12.4'"),
        ("cuda_runtimes[0].version", "12", "a CUDA version such as '12.4'"),
        ("cuda_driver.version", "twelve", "a CUDA version such as '12.4'"),
        ("driver.cuda_version", "12.2 ", "a CUDA version such as '12.4'"),
        ("driver.version", "latest", "a driver version such as '535.104.05'"),
        ("driver.version", "535", "a driver version such as '535.104.05'"),
        ("driver.gpus[0].compute_capability", "sm_75", "a compute capability such as '8.0'"),
        ("driver.gpus[0].compute_capability", "-7.5", "a compute capability such as '8.0'"),
        ("driver.gpus[0].index", -1, "a non-negative integer below 2**32 (an NVML unsigned int)"),
        ("driver.gpus[0].memory_total", -1, "a non-negative integer"),
        ("driver.gpus[0].memory_free", -(2**40), "a non-negative integer"),
        ("driver.cuda_version_raw", -1, "a non-negative integer"),
        ("cuda_driver.version_raw", -12020, "a non-negative integer"),
        ("cuda_driver.device_count", -1, "a non-negative integer"),
        ("cuda_runtimes[0].version_raw", -1, "a non-negative integer"),
        ("cuda_runtimes[0].driver_version_raw", -1, "a non-negative integer"),
        ("cuda_runtimes[0].device_count", -2, "a non-negative integer"),
        ("cudnns[0].version_raw", -8907, "a non-negative integer"),
        ("cudnns[0].cudart_version_raw", -1, "a non-negative integer"),
        ("resolutions[0].candidates[0].loader_rank", -1, "a non-negative integer"),
        ("resolutions[0].context", "elsewhere", "'process' or 'tensorflow'"),
        ("frameworks[0].build_info.version", "two", "a PEP 440 version such as '2.18.0'"),
        ("frameworks[0].build_info.cuda_version", "12.x", "a version such as '12.5.1' or '9'"),
        ("frameworks[0].build_info.cudnn_version", "9.x", "a version such as '12.5.1' or '9'"),
        ("probe_seconds", -0.5, "a non-negative number of seconds"),
        ("probed_at", "yesterday", "an ISO 8601 time such as '2026-11-21T10:00:00+00:00'"),
    ],
)
def test_a_value_that_breaks_its_rule_is_refused_naming_the_field(
    tmp_path: Path, where: str, value: Any, expected: str
) -> None:
    path = _write(tmp_path, _set(where, value))
    with pytest.raises(InvalidSnapshot) as error:
        load_snapshot(path)
    assert str(error.value) == f"{path}: {where}: expected {expected}, got {value!r}"


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("cudnns[0].version", "10.0.0"),
        ("cudnns[0].version", None),
        ("driver.version", "552.44"),  # Windows drivers have two parts
        ("driver.version", "470.256.02"),
        ("driver.gpus[0].compute_capability", "12.0"),
        ("driver.gpus[0].memory_free", 0),
        ("frameworks[0].build_info.version", "2.19.0.dev20241101"),
        ("frameworks[0].build_info.version", "2.4.0+nv21.2"),
        ("frameworks[0].build_info.cuda_version", "10"),
        ("frameworks[0].build_info.cudnn_version", "8.9.7"),
        ("probed_at", "2026-11-21T10:00:00Z"),
        ("probe_seconds", 0),
    ],
)
def test_values_the_rules_accept(where: str, value: Any) -> None:
    env = Environment.from_json(_set(where, value))
    assert Environment.from_json(env.to_json()) == env


def test_a_version_2_snapshot_keeps_tensorflow_beside_the_frameworks_and_reads_into_its_entry() -> None:
    """Schema 3 has one model of every framework: TensorFlow's build info moved into its entry (``build_info``).
    A version 1 or 2 file kept it beside them: read into the new shape, its entry made where it had none."""
    env = EnvBuilder.healthy().build()
    tf = env.tensorflow
    data = env.to_json()
    assert "tensorflow" not in data
    assert data["frameworks"][0]["build_info"]["version"] == "2.18.0"
    old = {**data, "schema_version": 2, "tensorflow": data["frameworks"][0].pop("build_info")}
    assert Environment.from_json(old) == dataclasses.replace(env, schema_version=2)  # back into its entry
    del old["frameworks"][0]
    made = Environment.from_json(json.loads(json.dumps(old)))  # no entry: one made from the build info
    assert made.tensorflow == tf
    [build] = made.frameworks
    assert (build.name, build.version, build.cuda, build.cudnn) == ("tensorflow", "2.18.0", env.frameworks[0].cuda,
                                                                    env.frameworks[0].cudnn)  # fmt: skip
    absent = {**old, "tensorflow": {**old["tensorflow"], "state": "absent"}}
    assert Environment.from_json(absent).frameworks == ()
    assert Environment.from_json(absent).tensorflow.state is State.ABSENT
