"""The doctor end to end on simulated hosts: stand-in libraries compiled with gcc, the real probing code in
child processes. Each test plants a stack and checks the doctor reports exactly what was planted.

The machines running these tests have a CUDA 13 runtime in the ldconfig cache and the test extra's
nvidia-cuda-runtime-cu12 wheel: assertions look only at what the test planted under ``host.root``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .envbuilder import tensorflow_json
from .simhost import SimGpu, SimHost

A100 = SimGpu()
T4 = SimGpu(
    "Tesla T4", "GPU-11111111-2222-3333-4444-555555555555", "00000000:3B:00.0", (7, 5), 16 * 1024**3, 15 * 1024**3
)


def planted(items: list[dict[str, Any]], host: SimHost) -> list[dict[str, Any]]:
    return [item for item in items if item["path"].startswith(str(host.root))]


def resolution(env: dict[str, Any], name: str, context: str = "process") -> dict[str, Any]:
    return next(r for r in env["resolutions"] if r["name"] == name and r["context"] == context)


def test_modern_healthy_stack_is_reported_exactly_and_passes(host: SimHost) -> None:
    host.add_driver([A100, T4], version="550.54.15", cuda_version=12040)
    wheel_cudnn = host.wheel_folder("cudnn")
    host.add_cudnn(wheel_cudnn, (9, 3, 0), cudart_version=12050)
    host.add_cudart(host.wheel_folder("cuda_runtime"), 12050)
    host.add_tensorflow("2.21.0", "tensorflow-2.21.0-linux.py")

    code, report = host.doctor_json()
    env = report["environment"]
    assert env["driver"]["state"] == "found"
    assert env["driver"]["version"] == "550.54.15"
    assert env["driver"]["cuda_version"] == "12.4"
    assert env["driver"]["path"] == str(host.driver_dir / "libnvidia-ml.so.1")
    assert [(g["index"], g["name"], g["compute_capability"], g["pci_bus_id"]) for g in env["driver"]["gpus"]] == [
        (0, "NVIDIA A100-SXM4-40GB", "8.0", "00000000:00:04.0"),
        (1, "Tesla T4", "7.5", "00000000:3B:00.0"),
    ]
    assert env["driver"]["gpus"][1]["memory_free"] == 15 * 1024**3
    assert env["cuda_driver"]["version"] == "12.4"
    assert env["cuda_driver"]["device_count"] == 2

    [cudnn] = planted(env["cudnns"], host)
    assert cudnn["path"] == str(wheel_cudnn / "libcudnn.so.9")
    assert (cudnn["version"], cudnn["version_raw"], cudnn["cudart_version"]) == ("9.3.0", 90300, "12.5")
    assert cudnn["create_status"] == 0
    assert cudnn["siblings_missing"] == []
    assert cudnn["via"] == ["pip nvidia wheel"]

    [runtime] = planted(env["cuda_runtimes"], host)
    # Driver 12.4 runs runtime 12.5: minor-version compatibility within CUDA 12.
    assert (runtime["version"], runtime["device_count_status"], runtime["device_count"]) == ("12.5", 0, 2)

    tf = tensorflow_json(env)
    assert (tf["version"], tf["cuda_version"], tf["cudnn_version"]) == ("2.21.0", "12.5.1", "9")
    assert (tf["cudart_name"], tf["cudnn_name"]) == ("libcudart.so.12", "libcudnn.so.9")
    as_tf_loads_it = resolution(env, "libcudnn.so.9", "tensorflow")
    assert as_tf_loads_it["predicted"] == str(wheel_cudnn / "libcudnn.so.9")
    assert code == 0, report["findings"]


def test_old_stack_tf23_cuda101_cudnn765_on_ld_library_path(host: SimHost) -> None:
    host.add_driver([T4], version="418.87.01", cuda_version=10010)
    lib64 = host.add_stack("usr/local/cuda-10.1/lib64", 10010, (7, 6, 5))
    host.add_tensorflow("2.3.1", "tensorflow-2.3.0-linux.py", distribution="tensorflow-gpu")

    code, report = host.doctor_json()
    env = report["environment"]
    [cudnn] = planted(env["cudnns"], host)
    assert (cudnn["version"], cudnn["version_raw"], cudnn["cudart_version"]) == ("7.6.5", 7605, "10.1")
    assert cudnn["path"] == str(lib64 / "libcudnn.so.7")
    assert cudnn["names"] == ["libcudnn.so.7", "libcudnn.so.7.6.5"]
    assert cudnn["via"] == ["LD_LIBRARY_PATH"]
    [runtime] = planted(env["cuda_runtimes"], host)
    assert (runtime["version"], runtime["path"], runtime["device_count"]) == (
        "10.1",
        str(lib64 / "libcudart.so.10.1"),
        1,
    )
    assert runtime["driver_version_raw"] == 10010
    for name in ("libcudart.so.10.1", "libcudnn.so.7"):
        found = resolution(env, name)
        assert found["loaded"] == found["predicted"] == str(lib64 / name)
    assert tensorflow_json(env)["distribution"] == "tensorflow-gpu"
    assert code == 0, report["findings"]


def test_cudnn8_with_cuda11_uses_the_eleven_zero_soname(host: SimHost) -> None:
    host.add_driver([A100], version="520.61.05", cuda_version=11080)
    host.add_stack("opt/cuda-11.8/lib64", 11080, (8, 9, 7))
    code, report = host.doctor_json()
    env = report["environment"]
    [cudnn] = planted(env["cudnns"], host)
    assert (cudnn["version"], cudnn["version_raw"], cudnn["create_status"]) == ("8.9.7", 8907, 0)
    [runtime] = planted(env["cuda_runtimes"], host)
    assert runtime["names"] == ["libcudart.so.11.0", "libcudart.so.11.8.0"]
    assert runtime["device_count"] == 1
    assert code == 0


def test_incomplete_cudnn_aborts_only_its_own_probe(host: SimHost) -> None:
    host.add_driver([A100])
    broken = host.folder("opt/broken/lib")
    host.add_cudnn(broken, (9, 1, 0), cudart_version=12030, siblings=False, header=True)
    host.add_cudart(broken, 12020)  # a runtime the driver can run, whatever this machine has system-wide
    host.ld_library_path.append(str(broken))
    completed = host.run("doctor", "--json")
    assert completed.returncode == 1
    import json

    report = json.loads(completed.stdout)
    env = report["environment"]
    [cudnn] = planted(env["cudnns"], host)
    assert cudnn["state"] == "error"
    assert "killed by SIGABRT" in cudnn["reason"]
    assert "Could not load library libcudnn_graph.so.9" in cudnn["reason"]
    assert cudnn["siblings_missing"][0] == "libcudnn_graph.so.9"
    assert cudnn["missing_dependencies"] == []  # its own sub-libraries are siblings_missing, not dependencies
    # The version still comes from a file that was read, and says which.
    assert cudnn["version"] == "9.1.0"
    assert cudnn["version_source"] == str(broken.parent / "include" / "cudnn_version.h")
    # The other probes were not taken down with it.
    assert env["driver"]["state"] == "found"
    assert [f["code"] for f in report["findings"] if f["severity"] == "error"] == ["cudnn-incomplete"]


def test_no_driver_means_driver_version_zero_not_an_old_driver(host: SimHost) -> None:
    host.add_cudart(host.wheel_folder("cuda_runtime"), 12040)
    code, report = host.doctor_json()
    env = report["environment"]
    assert env["driver"]["state"] == "absent"
    assert env["driver"]["nvml_error"] == 12
    assert env["cuda_driver"]["state"] == "absent"
    [runtime] = planted(env["cuda_runtimes"], host)
    assert (runtime["driver_version_raw"], runtime["device_count_status"], runtime["device_count"]) == (0, 35, None)
    assert code == 1
    assert report["findings"][0]["code"] == "no-driver"


def test_two_cudnn_copies_the_ld_library_path_one_wins_and_dlopen_confirms(host: SimHost) -> None:
    host.add_driver([A100])
    old = host.folder("opt/old-cudnn/lib")
    host.add_cudnn(old, (8, 1, 0), cudart_version=11020)
    new = host.folder("usr/local/cuda/lib64")
    host.add_cudnn(new, (8, 9, 7), cudart_version=11080)
    host.ld_library_path += [str(old), str(new)]
    _, report = host.doctor_json()
    env = report["environment"]
    found = resolution(env, "libcudnn.so.8")
    assert found["predicted"] == found["loaded"] == str(old / "libcudnn.so.8")
    ranked = [(c["path"], c["loader_rank"]) for c in found["candidates"] if c["path"].startswith(str(host.root))]
    assert ranked[0] == (str(old / "libcudnn.so.8"), ranked[0][1])
    assert ranked[1][0] == str(new / "libcudnn.so.8")
    assert ranked[0][1] < ranked[1][1]
    versions = {c["path"]: c["version"] for c in planted(env["cudnns"], host)}
    assert versions == {str(old / "libcudnn.so.8"): "8.1.0", str(new / "libcudnn.so.8"): "8.9.7"}


def test_nvml_version_mismatch_is_recorded_as_what_it_is(host: SimHost) -> None:
    host.add_driver([A100], nvml_init_error=18)
    code, report = host.doctor_json()
    driver = report["environment"]["driver"]
    assert (driver["state"], driver["nvml_error"]) == ("error", 18)
    assert driver["reason"] == "Driver/library version mismatch"  # nvmlErrorString(18), driver 580
    assert driver["path"] == str(host.driver_dir / "libnvidia-ml.so.1")
    assert report["findings"][0]["code"] == "driver-module-mismatch"
    assert code == 1


def test_a_gpu_failing_half_way_through_the_list_costs_only_its_own_facts(host: SimHost) -> None:
    host.add_driver([A100, T4, T4], nvml_fail_from_index=1)
    _, report = host.doctor_json()
    gpus = report["environment"]["driver"]["gpus"]
    assert gpus[0]["name"] == "NVIDIA A100-SXM4-40GB"
    assert gpus[0]["error"] is None
    assert [g["index"] for g in gpus] == [0, 1, 2]
    assert all("GPU is lost" in g["error"] for g in gpus[1:])


def test_a_hanging_runtime_is_killed_after_the_timeout(host: SimHost) -> None:
    hung = host.folder("opt/hung")
    host.add_cudart(hung, 12020, behaviour="hang")
    host.ld_library_path.append(str(hung))
    completed = host.run("doctor", "--json", "--timeout", "1")
    import json

    env = json.loads(completed.stdout)["environment"]
    [runtime] = planted(env["cuda_runtimes"], host)
    assert (runtime["state"], runtime["failure"]) == ("error", "hung")
    assert runtime["reason"].startswith(f"{hung / 'libcudart.so.12'}: did not answer within 1 s")


def test_a_segfaulting_runtime_is_recorded_by_signal(host: SimHost) -> None:
    crash = host.folder("opt/crash")
    host.add_cudart(crash, 12020, behaviour="segfault")
    host.ld_library_path.append(str(crash))
    _, report = host.doctor_json()
    [runtime] = planted(report["environment"]["cuda_runtimes"], host)
    assert runtime["failure"] == "crashed"
    assert "killed by SIGSEGV" in runtime["reason"]


def test_tensorflow_is_never_imported_and_its_wheels_rank_after_ld_library_path(host: SimHost) -> None:
    host.add_driver([A100])
    wheel = host.wheel_folder("cudnn")
    host.add_cudnn(wheel, (9, 3, 0), cudart_version=12050)
    shadow = host.folder("usr/local/cuda-12.1/lib64")
    host.add_cudnn(shadow, (9, 0, 0), cudart_version=12030)
    host.ld_library_path.append(str(shadow))
    host.add_tensorflow("2.18.0", "tensorflow-2.21.0-linux.py")  # its __init__ raises if imported
    completed = host.run("doctor", "-v")
    assert "imported tensorflow" not in completed.stdout + completed.stderr
    assert f"libcudnn.so.9 (as tensorflow loads it) -> {shadow / 'libcudnn.so.9'}" in completed.stdout
    assert f"shadowed: {wheel / 'libcudnn.so.9'}" in completed.stdout


def test_a_library_planted_in_the_working_folder_is_never_loaded(host: SimHost) -> None:
    # A relative LD_LIBRARY_PATH entry would make the loader search the current folder.
    host.add_cudnn(host.root, (8, 0, 0), cudart_version=11000)
    _code, report = host.doctor_json(extra_env={"LD_LIBRARY_PATH": ".:lib"})
    env = report["environment"]
    assert planted(env["cudnns"], host) == []
    assert any("'.' is relative" in note for note in env["notes"])
    resolved = [r for r in env["resolutions"] if r["name"] == "libcudnn.so.8"]
    assert all(r["loaded"] is None for r in resolved)


def test_doctor_text_names_versions_paths_and_mechanisms(host: SimHost, tmp_path: Path) -> None:
    host.add_driver([T4], version="535.104.05")
    lib64 = host.folder("usr/local/cuda-11.8/lib64")
    host.add_cudnn(lib64, (8, 9, 6), cudart_version=11080)
    host.variables["CUDNN_PATH"] = str(lib64.parent)
    completed = host.run("doctor", "-v")
    text = completed.stdout
    assert "Driver          535.104.05, supports CUDA up to 12.2" in text
    assert "GPU 0 Tesla T4 (compute capability 7.5, Turing), 15.0 GiB free of 16.0 GiB, 00000000:3B:00.0" in text
    assert f"8.9.6   {lib64 / 'libcudnn.so.8'}  (via CUDNN_PATH)" in text
    assert "built for CUDA 11.8" in text
    assert f"  CUDNN_PATH           {lib64.parent}" in text
    assert "libcudnn.so.8: the loader finds no copy" in text


@pytest.mark.parametrize(
    ("tf_version", "build_info", "cuda", "cudnn", "cudart_name", "cudnn_name"),
    [
        # 1.15 recorded CUDA '10' only: the runtime soname cannot be read from it, and the probe says so.
        ("1.15.0", "tensorflow-1.15.0-linux.py", 10000, (7, 6, 5), None, "libcudnn.so.7"),
        ("2.3.1", "tensorflow-2.3.0-linux.py", 10010, (7, 6, 5), "libcudart.so.10.1", "libcudnn.so.7"),
        ("2.4.0", "tensorflow-2.4.0-linux.py", 11000, (8, 0, 4), "libcudart.so.11.0", "libcudnn.so.8"),
        ("2.14.0", "tensorflow-2.14.0-linux.py", 11080, (8, 7, 0), "libcudart.so.11.0", "libcudnn.so.8"),
        ("2.15.0", "tensorflow-2.15.0-linux.py", 12020, (8, 9, 4), "libcudart.so.12", "libcudnn.so.8"),
        ("2.21.0", "tensorflow-2.21.0-linux.py", 12050, (9, 3, 0), "libcudart.so.12", "libcudnn.so.9"),
    ],
)
def test_tensorflow_generations_resolve_to_the_planted_libraries(
    host: SimHost,
    tf_version: str,
    build_info: str,
    cuda: int,
    cudnn: tuple[int, int, int],
    cudart_name: str | None,
    cudnn_name: str,
) -> None:
    host.add_driver([T4], cuda_version=max(cuda, 12020))
    lib = host.add_stack(f"usr/local/cuda-{cuda // 1000}.{(cuda % 1000) // 10}/lib64", cuda, cudnn)
    host.add_tensorflow(tf_version, build_info)
    code, report = host.doctor_json()
    env = report["environment"]
    tf = tensorflow_json(env)
    assert (tf["version"], tf["cudart_name"], tf["cudnn_name"]) == (tf_version, cudart_name, cudnn_name)
    if cudart_name is None:
        assert tf["reason"] == "its build_info records only CUDA '10', not which runtime soname it loads"
    else:
        assert resolution(env, cudart_name)["loaded"] == str(lib / cudart_name)
    assert resolution(env, cudnn_name)["loaded"] == str(lib / cudnn_name)
    [found] = planted(env["cudnns"], host)
    assert found["version"] == ".".join(map(str, cudnn))
    [runtime] = planted(env["cuda_runtimes"], host)
    assert runtime["version_raw"] == cuda
    assert code == 0, report["findings"]


def test_a_tensorflow_version_that_is_not_pep_440_is_said_and_replays(host: SimHost) -> None:
    # A custom build's METADATA; replay and xdist workers accept PEP 440 versions only.
    host.add_driver()
    host.add_tensorflow("2.15.0-custom", "tensorflow-2.6.0-linux.py")
    _, report = host.doctor_json()  # decodes the environment with every value rule
    tensorflow = tensorflow_json(report["environment"])
    assert tensorflow["version"] is None
    assert "its metadata gives version '2.15.0-custom', which is not a PEP 440 version" in tensorflow["reason"]
    tests = {"test_t.py": "def test_t():\n    pass\n"}
    completed = host.pytest("-n", "2", files=tests)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "INTERNALERROR" not in completed.stdout + completed.stderr


def test_a_build_info_that_is_a_fifo_does_not_block_the_probe(host: SimHost) -> None:
    package = host.add_tensorflow("2.6.0", "tensorflow-2.6.0-linux.py")
    build_info = package / "python" / "platform" / "build_info.py"
    build_info.unlink()
    os.mkfifo(build_info)
    _, report = host.doctor_json()
    tensorflow = tensorflow_json(report["environment"])
    assert tensorflow["state"] == "error"
    assert tensorflow["reason"] == f"{build_info}: is a named pipe (FIFO), not a regular file"
