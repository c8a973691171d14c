"""The probe against the real cuDNN from PyPI (nvidia-cudnn-cu12, ~700 MB): opt-in, with --cudnn-wheel.

``tox -e cudnn-wheel`` installs the wheel (without its cuBLAS dependency, which the probe never loads) and runs
these. Measured with nvidia-cudnn-cu12 9.28.0.42 on a machine without a GPU.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from .simhost import SimHost

pytestmark = pytest.mark.cudnn_wheel


@pytest.fixture
def wheel_cudnn() -> Path:
    spec = importlib.util.find_spec("nvidia.cudnn")
    assert spec is not None, "--cudnn-wheel needs nvidia-cudnn-cu12 installed: tox -e cudnn-wheel does that"
    assert spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "lib" / "libcudnn.so.9"


def test_the_real_cudnn_is_read_through_its_properties_and_fails_to_create_without_a_gpu(
    host: SimHost, wheel_cudnn: Path
) -> None:
    _, report = host.doctor_json()
    [cudnn] = [c for c in report["environment"]["cudnns"] if c["path"] == str(wheel_cudnn)]
    assert cudnn["state"] == "found"
    assert cudnn["via"] == ["pip nvidia wheel"]
    assert cudnn["version_source"] == "cudnnGetProperty"
    major, minor, patch = (int(part) for part in cudnn["version"].split("."))
    assert (major, cudnn["version_raw"]) == (9, major * 10000 + minor * 100 + patch)  # the cuDNN 9 encoding
    assert cudnn["cudart_version"].startswith("12.")
    assert cudnn["siblings_missing"] == []
    # No GPU: NOT_INITIALIZED is 1001 in cuDNN 9, and the last-error string says why.
    assert (cudnn["create_status"], cudnn["create_error"]) == (1001, "CUDNN_STATUS_NOT_INITIALIZED")
    assert cudnn["last_error"] == "cudaGetDeviceCount(&count) != cudaSuccess"


def test_the_real_front_library_alone_aborts_only_its_probe(host: SimHost, wheel_cudnn: Path) -> None:
    lonely = host.folder("opt/lonely")
    shutil.copy(wheel_cudnn, lonely / "libcudnn.so.9")
    host.ld_library_path.append(str(lonely))
    _, report = host.doctor_json()
    [cudnn] = [c for c in report["environment"]["cudnns"] if c["path"] == str(lonely / "libcudnn.so.9")]
    assert cudnn["state"] == "error"
    assert "killed by SIGABRT" in cudnn["reason"]
    assert "Invalid handle. Cannot load symbol cudnnGetVersion" in cudnn["reason"]
    assert "libcudnn_graph.so.9" in cudnn["siblings_missing"]
    assert "cudnn-incomplete" in [f["code"] for f in report["findings"]]
