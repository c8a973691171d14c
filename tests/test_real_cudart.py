"""The probes against the real CUDA runtime from PyPI (nvidia-cuda-runtime-cu12, in the test extra).

No GPU and no driver here: these pin down how the real library answers in that state, and that a stand-in
libcuda.so.1 on the loader path drives it into "driver too old", as on a host with an old driver.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .simhost import SimHost, libcuda_source
from .test_simulated_hosts import planted


def _wheel_runtime() -> Path:
    spec = importlib.util.find_spec("nvidia.cuda_runtime")
    assert spec is not None, "the test extra installs nvidia-cuda-runtime-cu12"
    assert spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "lib" / "libcudart.so.12"


@pytest.fixture
def runtime_path() -> Path:
    path = _wheel_runtime()
    assert path.exists(), path
    return path


def _real_runtime(env: dict, path: Path) -> dict:  # type: ignore[type-arg]
    return next(r for r in env["cuda_runtimes"] if r["path"] == str(path))


def test_real_runtime_without_a_driver_reports_driver_zero_and_status_35(host: SimHost, runtime_path: Path) -> None:
    _, report = host.doctor_json()
    runtime = _real_runtime(report["environment"], runtime_path)
    assert runtime["state"] == "found"
    assert runtime["version_raw"] >= 12000
    assert runtime["version"].startswith("12.")
    assert (runtime["driver_version_raw"], runtime["device_count_status"]) == (0, 35)
    assert runtime["device_count_error"] == "CUDA driver version is insufficient for CUDA runtime version"
    assert runtime["via"] == ["pip nvidia wheel"]


def test_real_runtime_with_an_old_driver_reports_that_driver(host: SimHost, runtime_path: Path) -> None:
    host.compiler.shared_library(
        libcuda_source(version=11080, devices=1), "libcuda.so.1", host.driver_dir / "libcuda.so.1"
    )
    host.ld_library_path.insert(0, str(host.driver_dir))
    _, report = host.doctor_json()
    env = report["environment"]
    runtime = _real_runtime(env, runtime_path)
    assert (runtime["driver_version_raw"], runtime["device_count_status"]) == (11080, 35)
    assert env["cuda_driver"]["path"] == str(host.driver_dir / "libcuda.so.1")
    assert env["cuda_driver"]["version"] == "11.8"


def test_real_runtime_on_the_loader_path_is_confirmed_by_dlopen(host: SimHost, runtime_path: Path) -> None:
    host.ld_library_path.append(str(runtime_path.parent))
    _, report = host.doctor_json()
    env = report["environment"]
    found = next(r for r in env["resolutions"] if r["name"] == "libcudart.so.12" and r["context"] == "process")
    assert found["loaded"] == found["predicted"] == str(runtime_path)
    assert planted(env["cuda_runtimes"], host) == []


def test_real_runtime_with_a_driver_that_sees_no_device_reports_100(host: SimHost, runtime_path: Path) -> None:
    host.compiler.shared_library(
        libcuda_source(version=12090, devices=0, init_status=100), "libcuda.so.1", host.driver_dir / "libcuda.so.1"
    )
    host.ld_library_path.insert(0, str(host.driver_dir))
    _, report = host.doctor_json()
    runtime = _real_runtime(report["environment"], runtime_path)
    assert (runtime["driver_version_raw"], runtime["device_count_status"], runtime["device_count"]) == (
        12090,
        100,
        None,
    )
    assert runtime["device_count_error"] == "no CUDA-capable device is detected"
