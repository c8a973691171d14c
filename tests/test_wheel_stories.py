"""Issue 21, items 3 and 4, on simulated hosts: a framework that cannot even be imported, and nvidia wheels that
overwrite each other's files in one site-packages (tests/frameworkhosts.py plants the wheels with their RECORDs).

Each story runs the doctor in a child process, as tests/test_framework_stories.py does.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from .frameworkhosts import plant_cuda12_wheels, plant_nvidia_wheel, plant_tensorflow, plant_torch
from .simhost import Compiler, SimHost
from .test_framework_stories import (
    A100,
    DRIVER_580,
    cache_or_default_folders_have,
    codes,
    doctor,
    finding,
    verdict_line,
    without_ldconfig_cache,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")


# 1. A framework that cannot be imported ----------------------------------------------------------------------------


def test_tensorflow_without_its_framework_object_cannot_be_imported(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    package = plant_tensorflow(host.site_packages, compiler)  # 2.21.0
    plant_cuda12_wheels(host.site_packages, compiler, cudart=12050, cudnn=(9, 3, 0))
    plant_nvidia_wheel(host.site_packages, compiler, "cusolver", others=("libcusolver.so.11",))
    framework = package / "libtensorflow_framework.so.2"
    framework.unlink()  # a half-removed install: `import tensorflow` fails

    code, report, text = doctor(host)
    assert code == 1, text
    broken = finding(report, "framework-import-object-missing")
    assert broken["severity"] == "error"
    assert broken["summary"] == "TensorFlow 2.21.0 cannot be imported: its libtensorflow_framework.so.2 is missing"
    assert f"{framework}: missing: no such file" in broken["evidence"]
    assert broken["fix"] == "reinstall tensorflow: pip install --force-reinstall --no-deps tensorflow==2.21.0"
    assert "holds together" not in report["verdict"]["summary"]
    assert verdict_line(text, "TensorFlow") == f"cannot run: {broken['summary']}"


def test_torch_whose_cuda_object_needs_a_library_found_nowhere_cannot_be_imported(
    host: SimHost, compiler: Compiler
) -> None:
    # The case is libcudart.so.13; this machine's own cache lists a CUDA 13 runtime, so NCCL stands in.
    name = "libnccl.so.2"
    if cache_or_default_folders_have(name):
        pytest.skip(f"this machine's loader finds {name} by itself")
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    plant_torch(host.site_packages, compiler, needed=("libcudart.so.13", "libcudnn.so.9", name))
    plant_nvidia_wheel(host.site_packages, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020)
    plant_nvidia_wheel(host.site_packages, compiler, "cu13", cudart=13020)  # no nvidia/nccl: a removed wheel

    code, report, text = doctor(host)
    assert code == 1, text
    broken = finding(report, "framework-import-library-missing")
    assert broken["summary"] == (
        f"PyTorch 2.15.0+cu132 cannot be imported: its libtorch_cuda.so needs {name}, which the loader cannot find"
    )
    assert "framework-library-missing" not in codes(report)  # one finding for one cause
    assert broken["fix"].endswith(
        "or reinstall torch: pip install --force-reinstall torch==2.15.0+cu132 (it brings back the wheels it pins)"
    ), broken["fix"]
    assert verdict_line(text, "PyTorch") == f"cannot run: {broken['summary']}"
