"""One question, one answer: the doctor, the markers, the cuDNN handle fixture and the report read one judgement
(pytest_cudnn.diagnosis.result.Diagnosis). Issue 20's field cases, each on a simulated host where two views once
disagreed: the doctor's verdict (text, JSON, ``--framework`` exit), what a marker does, and the report's ``ok``.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from typing import Any

import pytest

from .frameworkhosts import TF_2_21_RUNPATH, plant_cuda12_wheels, plant_nvidia_wheel, plant_tensorflow, plant_torch
from .simhost import Compiler, SimGpu, SimHost
from .test_framework_stories import (
    A100,
    DRIVER_550,
    DRIVER_580,
    TF_FULL_RUNPATH,
    cache_or_default_folders_have,
    torch_cu132,
    without_ldconfig_cache,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")

P100 = SimGpu("Tesla P100-PCIE-16GB", "GPU-p100", "00000000:00:04.0", (6, 0), 16 * 1024**3, 15 * 1024**3)


def outcomes(host: SimHost, tests: str, *args: str) -> tuple[dict[str, str], dict[str, Any], str]:
    """Each test's outcome in a pytest run on ``host`` (passed, skipped, failed), the run's --gpu-report, and its
    output."""
    report = host.root / "report.json"
    ran = host.pytest("-v", f"--gpu-report={report}", *args, files={"test_judged.py": tests})
    said = dict(re.findall(r"test_judged\.py::(\w+) (PASSED|SKIPPED|FAILED|ERROR)", ran.stdout))
    return said, json.loads(report.read_text()), ran.stdout + ran.stderr


def doctor_says(host: SimHost, framework: str) -> tuple[int, bool]:
    """``doctor --framework X``'s exit status, and X's ``ok`` in ``doctor --json``."""
    code, report = host.doctor_json("--framework", framework)
    ok = next(f["ok"] for f in report["frameworks"] if f["name"] == framework)
    return code, ok


def report_ok(report: dict[str, Any], framework: str) -> bool:
    return bool(next(f["ok"] for f in report["frameworks"] if f["name"] == framework))


# Case 1: TensorFlow 2.21 [and-cuda] cannot load libcusolver.so.11 (outside its RUNPATH). The doctor said it cannot
# use the GPU; @requires_tensorflow ran the test anyway (its rule never looked at findings about a framework).
def test_requires_tensorflow_skips_where_the_doctor_says_tensorflow_cannot_run(
    host: SimHost, compiler: Compiler
) -> None:
    if cache_or_default_folders_have("libcusolver.so.11"):
        pytest.skip("this machine's loader finds libcusolver.so.11 by itself")
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_tensorflow(host.site_packages, compiler, runpath_components=TF_2_21_RUNPATH)
    plant_cuda12_wheels(host.site_packages, compiler, cudart=12050, cudnn=(9, 3, 0))

    assert doctor_says(host, "tensorflow") == (1, False)
    said, report, output = outcomes(
        host,
        """
        import pytest

        @pytest.mark.requires_tensorflow
        def test_tf():
            pass

        @pytest.mark.requires_tensorflow(gpu=False)
        def test_tf_installed():
            pass
        """,
    )
    assert said == {"test_tf": "SKIPPED", "test_tf_installed": "PASSED"}, output
    assert "cannot load libcusolver.so.11" in output
    assert report_ok(report, "tensorflow") is False
    refused = next(t for t in report["tests"] if t["nodeid"].endswith("test_tf"))
    assert refused["cause"] == "framework-library-missing", refused


# Case 2: torch cu132 on a driver too old for CUDA 13. requires_torch skipped; requires_cudnn(">=9", framework="torch")
# and plain requires_cudnn(">=9") passed and the test failed; the cudnn_handle fixture skipped for another reason.
def test_a_cudnn_requirement_fails_where_the_framework_that_loads_the_copy_cannot_run(
    host: SimHost, compiler: Compiler
) -> None:
    host.add_driver([A100], version=DRIVER_550[0], cuda_version=DRIVER_550[1])
    without_ldconfig_cache(host)
    torch_cu132(host.site_packages, compiler)

    assert doctor_says(host, "torch") == (1, False)
    said, report, output = outcomes(
        host,
        """
        import pytest

        @pytest.mark.requires_torch
        def test_torch():
            pass

        @pytest.mark.requires_cudnn(">=9", framework="torch")
        def test_torch_cudnn():
            pass

        @pytest.mark.requires_cudnn(">=9")
        def test_any_cudnn():
            pass

        def test_handle(cudnn_handle):
            pass
        """,
    )
    assert said == dict.fromkeys(("test_torch", "test_torch_cudnn", "test_any_cudnn", "test_handle"), "SKIPPED"), output
    causes = {t["nodeid"].rpartition("::")[2]: t["cause"] for t in report["tests"]}
    # torch's verdict names the driver; its cuDNN copy's own finding says what that does to the copy (cudnnCreate
    # fails), and the cuDNN marker and the handle fixture both say that.
    assert causes == {
        "test_torch": "framework-driver-too-old",
        "test_torch_cudnn": "cudnn-create-failed",
        "test_any_cudnn": "cudnn-create-failed",
        "test_handle": "cudnn-create-failed",
    }, causes
    assert report_ok(report, "torch") is False


# Case 3: TensorFlow 2.18 beside torch 2.15 cu132 on a Pascal GPU. The doctor said TensorFlow can run (its CUDA 12.5
# stack runs on a P100); @requires_tensorflow skipped, citing torch's CUDA 13.2 runtime (which has no Pascal code).
def test_requires_tensorflow_is_not_refused_for_another_frameworks_runtime(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([P100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    plant_tensorflow(
        host.site_packages,
        compiler,
        version="2.18.0",
        build_info="tensorflow-2.18.0-linux.py",
        runpath_components=TF_FULL_RUNPATH,
    )
    plant_cuda12_wheels(host.site_packages, compiler, cudart=12050, cudnn=(9, 3, 0))
    # torch 2.15 cu132 and its CUDA 13.2 runtime; the one nvidia/cudnn folder holds TensorFlow's cuDNN 9.3.
    plant_torch(host.site_packages, compiler)
    plant_nvidia_wheel(host.site_packages, compiler, "cu13", cudart=13020)

    code, ok = doctor_says(host, "tensorflow")
    said, report, output = outcomes(
        host,
        """
        import pytest

        @pytest.mark.requires_tensorflow
        def test_tf():
            pass

        @pytest.mark.requires_torch
        def test_torch():
            pass
        """,
    )
    # Whatever the verdicts are, every view gives the same one.
    assert (code == 0) is ok is report_ok(report, "tensorflow") is (said["test_tf"] == "PASSED"), (code, ok, output)
    assert report_ok(report, "torch") is (said["test_torch"] == "PASSED"), output
    assert ok, output  # TensorFlow's own stack runs on a P100
    assert not report_ok(report, "torch"), output  # torch's CUDA 13.2 has no Pascal code
