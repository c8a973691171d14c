"""The failure stories users report most, reproduced: the doctor must name the versions, the paths, the
expectation and its owner, and the fix.

Linux stories run on simulated hosts (stand-in libraries, real probing in child processes). Windows stories
are Windows environments replayed from snapshots, since these machines run Linux: the Windows logic is pure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn.environment import PathCheck, State, Via

from .envbuilder import EnvBuilder, gpu
from .simhost import SimGpu, SimHost

GTX1080 = SimGpu("NVIDIA GeForce GTX 1080", "GPU-1080", "00000000:01:00.0", (6, 1), 8 * 1024**3, 7 * 1024**3)
V100 = SimGpu("Tesla V100-SXM2-16GB", "GPU-v100", "00000000:00:1E.0", (7, 0), 16 * 1024**3, 15 * 1024**3)


def codes(report: dict[str, Any], severity: str | None = None) -> list[str]:
    return [f["code"] for f in report["findings"] if severity is None or f["severity"] == severity]


def finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    return next(f for f in report["findings"] if f["code"] == code)


def replay(tmp_path: Path, builder: EnvBuilder, *args: str) -> subprocess.CompletedProcess[str]:
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(builder.build().dumps())
    return subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--env", str(snapshot), *args],
        capture_output=True,
        text=True,
        check=False,
    )


# 1. TensorFlow 2.3 on Windows 10, CUDA 10.1, cuDNN 7.6.5 ---------------------------------------------

TOOLKIT = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v10.1"


def windows_tf23() -> EnvBuilder:
    b = EnvBuilder(system="Windows", python="3.8.10")
    b.with_driver(version="385.54", cuda_version_raw=9000).with_gpus(
        gpu(name="NVIDIA GeForce GTX 660", cc="3.0", total=2 * 1024**3, free=100 * 1024**2)
    )
    b.with_tensorflow("2.3.0", "10.1", "7", capabilities=("sm_35", "sm_37", "sm_52", "sm_60", "sm_61", "compute_70"))
    b.runtime(TOOLKIT + r"\bin\cudart64_101.dll", 10010, (Via.PATH, Via.CUDA_PATH), driver_raw=9000, status=35)
    b.cudnn(r"C:\tools\cuda\bin\cudnn64_7.dll", "7.6.5", 10010, (Via.CUDNN_PATH,), rank=None)
    b.variables.update(
        CUDA_PATH=r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v10.0", CUDNN_PATH=r"C:\tools\cuda"
    )
    b.paths = [
        PathCheck("CUDA_PATH", r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v10.0", False),
        PathCheck("CUDNN_PATH", r"C:\tools\cuda", True),
    ]
    return b


@pytest.mark.e2e
def test_story_tf23_on_windows_names_every_misconfiguration(tmp_path: Path) -> None:
    completed = replay(tmp_path, windows_tf23(), "--json")
    assert completed.returncode == 1
    report = json.loads(completed.stdout)
    assert set(codes(report, "error")) == {
        "tensorflow-cudnn-not-found",
        "driver-too-old-for-cuda",
        "tensorflow-no-kernels-for-gpu",
    }
    assert {"path-variable-missing", "gpu-memory-low"} <= set(codes(report, "warning"))

    cudnn = finding(report, "tensorflow-cudnn-not-found")
    assert cudnn["summary"].startswith(
        "TensorFlow 2.3.0 (built for CUDA 10.1 and cuDNN 7; tested with cuDNN 7.6) loads cudnn64_7.dll"
    )
    assert (
        r"cudnn64_7.dll exists at C:\tools\cuda\bin\cudnn64_7.dll (via CUDNN_PATH), where the loader never looks"
        in (cudnn["evidence"])
    )
    assert cudnn["fix"] == (
        r"add C:\tools\cuda\bin to PATH, or call os.add_dll_directory('C:\\tools\\cuda\\bin') before TensorFlow is "
        "imported"
    )

    driver = finding(report, "driver-too-old-for-cuda")
    assert "driver 385.54 is below 418.96, the driver of the CUDA 10.1 GA toolkit" in driver["evidence"]
    assert driver["fix"] == "install a driver >= 418.96"

    kernels = finding(report, "tensorflow-no-kernels-for-gpu")
    assert kernels["summary"] == (
        "TensorFlow 2.3.0 has no kernels for GPU 0 NVIDIA GeForce GTX 660 (compute capability 3.0, Kepler)"
    )
    assert finding(report, "path-variable-missing")["summary"] == (
        r"CUDA_PATH points at C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v10.0, which is not a folder"
    )
    assert finding(report, "gpu-memory-low")["summary"] == "GPU 0 has 0.1 GiB free of 2.0 GiB"


@pytest.mark.e2e
def test_story_tf23_on_windows_fixed_is_healthy(tmp_path: Path) -> None:
    b = windows_tf23()
    b.with_driver(version="456.71", cuda_version_raw=11010).with_gpus(gpu(name="NVIDIA GeForce GTX 1080", cc="6.1"))
    b.copies = [c for c in b.copies if c.kind == "cudart"]
    b.change(0, driver_version_raw=11010, device_count_status=0, device_count=1, via=(Via.PATH,))
    b.cudnn(TOOLKIT + r"\bin\cudnn64_7.dll", "7.6.5", 10010, (Via.PATH,))
    b.variables = {"CUDA_PATH": TOOLKIT}
    b.paths = [PathCheck("CUDA_PATH", TOOLKIT, True)]
    completed = replay(tmp_path, b)
    assert completed.returncode == 0, completed.stdout
    assert "Verdict: the GPU stack holds together" in completed.stdout


# 2. "cuDNN failed to initialize": driver, toolkit and cuDNN that do not fit -----------------------------


def test_story_cudnn_failed_to_initialize_driver_older_than_the_toolkit(host: SimHost) -> None:
    host.add_driver([V100], version="440.33.01", cuda_version=10020)
    lib = host.add_stack("usr/local/cuda-11.0/lib64", 11000, (8, 0, 4))
    host.add_tensorflow("2.4.0", "tensorflow-2.4.0-linux.py")
    code, report = host.doctor_json()
    assert code == 1
    # The driver is the cause; cudnnCreate failing on it is the story's own symptom, said of the copy.
    assert codes(report, "error") == ["driver-too-old-for-cuda", "cudnn-create-failed"]
    too_old = finding(report, "driver-too-old-for-cuda")
    assert too_old["summary"] == "the NVIDIA driver 440.33.01 is too old for CUDA 11.0"
    assert report["verdict"]["summary"].startswith(f"cannot run GPU work: {too_old['summary']}")
    # CUDA 11.0 needs only its own GA toolkit's driver, below the CUDA 11 minor-version floor (450.80.02).
    assert "driver 440.33.01 is below 450.51.05, the driver of the CUDA 11.0 GA toolkit" in too_old["evidence"]
    assert f"CUDA runtime 11.0 at {lib / 'libcudart.so.11.0'} (via LD_LIBRARY_PATH)" in too_old["evidence"]
    assert (
        "cudaGetDeviceCount said 35: CUDA driver version is insufficient for CUDA runtime version"
        in (too_old["evidence"])
    )
    assert too_old["fix"] == "install a driver >= 450.51.05"


def test_story_cudnn_failed_to_initialize_library_not_found(host: SimHost) -> None:
    host.add_driver([V100], version="450.80.02", cuda_version=11000)
    lib = host.folder("usr/local/cuda-11.0/lib64")
    host.add_cudart(lib, 11000)
    host.ld_library_path.append(str(lib))
    host.add_tensorflow("2.4.0", "tensorflow-2.4.0-linux.py")
    code, report = host.doctor_json()
    assert code == 1
    missing = finding(report, "tensorflow-cudnn-not-found")
    assert missing["summary"].startswith(
        "TensorFlow 2.4.0 (built for CUDA 11.0 and cuDNN 8; tested with cuDNN 8.0) loads libcudnn.so.8"
    )
    assert missing["fix"] == "install cuDNN 8.0 for CUDA 11.0 and put its library folder on the loader path"


# 3. TensorFlow 1.15 meeting a cuDNN built for another CUDA ----------------------------------------------


def test_story_tf115_with_a_cudnn_built_for_cuda9(host: SimHost) -> None:
    host.add_driver([V100], version="418.87.01", cuda_version=10010)
    lib = host.add_stack("usr/local/cuda-10.0/lib64", 10000, (7, 6, 5), cudnn_cuda=9000)
    host.add_tensorflow("1.15.0", "tensorflow-1.15.0-linux.py")
    code, report = host.doctor_json()
    assert code == 1
    assert codes(report, "error") == ["cudnn-cuda-mismatch"]
    mismatch = finding(report, "cudnn-cuda-mismatch")
    assert mismatch["summary"] == "cuDNN 7.6.5 was built for CUDA 9.0, but the stack uses CUDA 10.0"
    assert f"cuDNN 7.6.5 at {lib / 'libcudnn.so.7'} (via LD_LIBRARY_PATH, built for CUDA 9.0)" in mismatch["evidence"]
    assert mismatch["fix"] == "install the cuDNN 7.6.5 build for CUDA 10.0"
    # 1.15 recorded CUDA '10' only: the tested configuration says which runtime it loads.
    unrecorded = finding(report, "tensorflow-build-unrecorded")
    assert unrecorded["summary"] == (
        "TensorFlow 1.15.0's build info records only CUDA '10'; the tested configuration gives CUDA 10.0"
    )


# 4. CUDNN_STATUS_INTERNAL_ERROR under TensorFlow 2.1 -----------------------------------------------------


def test_story_tf21_internal_error_old_cudnn_and_full_gpu(host: SimHost) -> None:
    full = SimGpu(GTX1080.name, GTX1080.uuid, GTX1080.pci_bus_id, (6, 1), 8 * 1024**3, 300 * 1024**2)
    host.add_driver([full], version="440.100", cuda_version=10020)
    host.add_stack("usr/local/cuda-10.1/lib64", 10010, (7, 4, 2))
    host.add_tensorflow("2.1.0", "tensorflow-2.1.0-linux.py")
    code, report = host.doctor_json()
    assert code == 1
    assert codes(report, "error") == ["tensorflow-cudnn-too-old"]
    too_old = finding(report, "tensorflow-cudnn-too-old")
    assert too_old["summary"] == (
        "TensorFlow 2.1.0 (built for CUDA 10.1 and cuDNN 7; tested with cuDNN 7.6) needs cuDNN 7.6 or a newer 7.x; "
        "the loader gives it 7.4.2"
    )
    assert (
        "TensorFlow will log 'Loaded runtime CuDNN library: 7.4.2 but source was compiled with: 7.6'"
        in (too_old["evidence"])
    )
    memory = finding(report, "gpu-memory-low")
    assert memory["summary"] == "GPU 0 has 0.3 GiB free of 8.0 GiB"
    assert "TF_FORCE_GPU_ALLOW_GROWTH=true" in memory["fix"]


# 5. DLL load errors with TensorFlow on Python 3.8 (Windows) ----------------------------------------------


@pytest.mark.e2e
def test_story_dll_load_failed_missing_dependency_and_path_rules(tmp_path: Path) -> None:
    b = EnvBuilder(system="Windows", python="3.8.10")
    b.with_driver(version="460.89", cuda_version_raw=11020).with_gpus(gpu(name="NVIDIA GeForce RTX 2070", cc="7.5"))
    b.with_tensorflow("2.4.0", "11.0", "8", capabilities=("sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"))
    toolkit = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.0\bin"
    b.runtime(toolkit + r"\cudart64_110.dll", 11000, (Via.PATH,), driver_raw=11020)
    b.cudnn(
        toolkit + r"\cudnn64_8.dll",
        "8.0.4",
        11000,
        (Via.PATH,),
        siblings_missing=("cudnn_cnn_infer64_8.dll",),
        state=State.ERROR,
        reason=r"C:\...\cudnn64_8.dll: the process was killed by an access violation",
    )
    completed = replay(tmp_path, b, "--json")
    assert completed.returncode == 1
    report = json.loads(completed.stdout)
    incomplete = finding(report, "cudnn-incomplete")
    assert incomplete["summary"] == (
        rf"cuDNN at {toolkit}\cudnn64_8.dll is missing its sub-libraries; any call into it aborts the process"
    )
    assert "missing beside it: cudnn_cnn_infer64_8.dll" in incomplete["evidence"]
    path_only = [f for f in report["findings"] if f["code"] == "windows-dll-path-only"]
    assert path_only[0]["fix"] == f"call os.add_dll_directory({toolkit!r}) before loading it from Python code"
    assert "Python 3.8.10" in path_only[0]["summary"]


# A healthy stack, new and old, gets exit 0 ---------------------------------------------------------------


def test_healthy_tf218_with_its_wheels_on_a_550_driver(host: SimHost) -> None:
    host.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
    host.add_cudnn(host.wheel_folder("cudnn"), (9, 3, 0), cudart_version=12050)
    host.add_cudart(host.wheel_folder("cuda_runtime"), 12050)
    host.add_tensorflow("2.18.0", "tensorflow-2.18.0-linux.py")
    completed = host.run("doctor", "-v")
    assert completed.returncode == 0, completed.stdout
    assert completed.stdout.rstrip().endswith("Verdict: the GPU stack holds together")


def test_healthy_tf23_with_cuda101_and_cudnn765(host: SimHost) -> None:
    host.add_driver([V100], version="418.87.01", cuda_version=10010)
    host.add_stack("usr/local/cuda-10.1/lib64", 10010, (7, 6, 5))
    host.add_tensorflow("2.3.1", "tensorflow-2.3.0-linux.py")
    code, report = host.doctor_json()
    assert code == 0, report["findings"]
    assert codes(report, "error") == []
