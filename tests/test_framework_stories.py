"""Issue 10's failure stories about torch, JAX and TensorFlow, reproduced on simulated hosts: what each framework
loads through its own search (torch's DT_RPATH, JAX's preloads, TensorFlow's DT_RUNPATH) must be what the doctor
judges, and each framework gets its own verdict.

Each story plants the frameworks as the wheels lay them out (tests/frameworkhosts.py: real ELF objects, stand-in
CUDA libraries) and runs the doctor in a child process, as tests/test_stories.py does for the stack alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .envbuilder import tensorflow_json
from .frameworkhosts import (
    TF_2_21_RUNPATH,
    plant_cuda12_wheels,
    plant_jax,
    plant_nvidia_wheel,
    plant_tensorflow,
    plant_torch,
)
from .simhost import Compiler, SimGpu, SimHost

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")

A100 = SimGpu()  # compute capability 8.0
V100 = SimGpu("Tesla V100-SXM2-16GB", "GPU-v100", "00000000:00:1E.0", (7, 0), 16 * 1024**3, 15 * 1024**3)
# (driver version, the CUDA it supports as NVML and libcuda answer it)
DRIVER_580 = ("580.65.06", 13000)  # CUDA 13's floor
DRIVER_550 = ("550.54.15", 12040)
DRIVER_470 = ("470.256.02", 11040)  # below CUDA 12's floor, 525.60.13
# TensorFlow's RUNPATH before 2.21 dropped nvidia/cusolver/lib (tests/test_loader_frameworks.py: 2.15 has it).
TF_FULL_RUNPATH = ("cuda_runtime", "cudnn", "cublas", "cufft", "cusolver", "cusparse")
HOLDS = "holds together"


# Reading the doctor -----------------------------------------------------------------------------------------------
def codes(report: dict[str, Any], severity: str | None = None) -> list[str]:
    return [f["code"] for f in report["findings"] if severity is None or f["severity"] == severity]


def finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in report["findings"] if f["code"] == code]
    assert found, f"no {code} among {codes(report)}"
    return found[0]


def framework_json(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(b for b in report["environment"]["frameworks"] if b["name"] == name)


def load_of(report: dict[str, Any], framework: str, soname: str) -> dict[str, Any]:
    return next(load for load in framework_json(report, framework)["loads"] if load["name"] == soname)


def verdict_line(text: str, label: str) -> str:
    """The ``verdict: ...`` line of the doctor's block for one framework ('PyTorch', 'JAX', 'TensorFlow'), without
    its prefix. The block is a line that starts with the label, and the lines indented below it."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if not line.startswith(label + " "):
            continue
        for below in lines[start + 1 :]:
            if not below.startswith(" " * 16):
                break
            if below.strip().startswith("verdict: "):
                return below.strip().removeprefix("verdict: ")
    raise AssertionError(f"the doctor gives {label} no verdict:\n{text}")


def doctor(host: SimHost) -> tuple[int, dict[str, Any], str]:
    """The doctor's exit status, its JSON report and its whole text, -v (two runs: the text alone has each
    framework's verdict, the JSON alone every field)."""
    code, report = host.doctor_json()
    text = host.run("doctor", "-v")
    assert text.returncode == code, text.stdout + text.stderr
    return code, report, text.stdout


def without_ldconfig_cache(host: SimHost) -> None:
    """The doctor reads the loader's cache through ``ldconfig -p`` found on PATH: an ``ldconfig`` first on PATH that
    lists nothing makes a host with no CUDA in its cache, as a pip-only machine is. (This machine's cache lists a
    CUDA 13.0 toolkit; the real loader in the probe's child still reads /etc/ld.so.cache, which no test can hide.)"""
    folder = host.folder("sbin")
    fake = folder / "ldconfig"
    fake.write_text("#!/bin/sh\necho '0 libs found in cache'\n")
    fake.chmod(0o755)
    host.variables["PATH"] = f"{folder}:{os.environ.get('PATH', '/usr/bin:/bin')}"


def cache_or_default_folders_have(name: str) -> bool:
    """Whether this machine's loader would find ``name`` by itself (its cache, or a trusted folder)."""
    ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if ldconfig is not None:
        listed = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, check=False).stdout
        if any(line.strip().startswith(name + " ") for line in listed.splitlines()):
            return True
    folders = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
    return any(os.path.exists(os.path.join(folder, name)) for folder in folders)


# Installs ---------------------------------------------------------------------------------------------------------
TORCH_CU124_RPATH = "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN"


def torch_cu132(site: Path, compiler: Compiler) -> Path:
    """torch 2.15.0+cu132 with its wheels: nvidia/cu13/lib (CUDA runtime 13.2), nvidia/cudnn/lib (cuDNN 9.26.0).
    Returns the runtime copy its DT_RPATH reaches."""
    plant_torch(site, compiler)
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020)
    return plant_nvidia_wheel(site, compiler, "cu13", cudart=13020) / "libcudart.so.13"


def torch_cu124(site: Path, compiler: Compiler) -> Path:
    """torch 2.5.1+cu124 with its CUDA 12.4 wheels (nvidia/cuda_runtime/lib, nvidia/cudnn/lib with cuDNN 9.1.0)."""
    plant_torch(
        site,
        compiler,
        version="2.5.1+cu124",
        cuda="12.4",
        cudnn="9.1.0",
        needed=("libcudart.so.12", "libcudnn.so.9"),
        rpath=TORCH_CU124_RPATH,
        pins=("nvidia-cuda-runtime-cu12==12.4.127", "nvidia-cudnn-cu12==9.1.0.70"),
    )
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 1, 0), cudnn_cudart=12040)
    return plant_nvidia_wheel(site, compiler, "cuda_runtime", cudart=12040) / "libcudart.so.12"


def jax_cuda12(site: Path, compiler: Compiler) -> Path:
    """jax[cuda12] 0.10.2 with its CUDA 12 wheels (runtime 12.9, cuDNN 9.8.0). Returns the runtime it preloads."""
    plant_jax(site, compiler)
    return plant_cuda12_wheels(site, compiler) / "cuda_runtime" / "lib" / "libcudart.so.12"


# 1. A pip-only install on a driver too old for the CUDA its wheels carry -------------------------------------------


@dataclass(frozen=True)
class TooOld:
    install: str
    label: str  # as the doctor names the framework in its block
    named: str  # as its findings name it
    driver: tuple[str, int]
    floor: str
    how: str  # how the doctor says the copy was found


TOO_OLD = [
    TooOld("torch-cu132", "PyTorch", "PyTorch 2.15.0+cu132", DRIVER_550, "580.65.06", "through DT_RPATH"),
    TooOld("torch-cu132", "PyTorch", "PyTorch 2.15.0+cu132", DRIVER_470, "580.65.06", "through DT_RPATH"),
    TooOld("jax-cuda12", "JAX", "JAX 0.10.2", DRIVER_470, "525.60.13", "JAX's preload"),
    TooOld("torch-cu124", "PyTorch", "PyTorch 2.5.1+cu124", DRIVER_470, "525.60.13", "through DT_RPATH"),
]
INSTALLS = {"torch-cu132": torch_cu132, "torch-cu124": torch_cu124, "jax-cuda12": jax_cuda12}


@pytest.mark.parametrize("case", TOO_OLD, ids=[f"{case.install}-{case.driver[0]}" for case in TOO_OLD])
def test_a_pip_only_install_on_a_driver_too_old_for_its_wheels_cannot_run(
    case: TooOld, host: SimHost, compiler: Compiler
) -> None:
    host.add_driver([A100], version=case.driver[0], cuda_version=case.driver[1])
    without_ldconfig_cache(host)
    runtime = INSTALLS[case.install](host.site_packages, compiler)
    code, report, text = doctor(host)
    assert code == 1, text
    too_old = finding(report, "framework-driver-too-old")
    summary = too_old["summary"]
    assert summary.startswith(f"{case.named} cannot run here: it loads CUDA runtime "), summary
    assert str(runtime) in summary, summary  # the copy its own search gives it, named by its path
    assert case.how in summary, summary
    assert f"needs driver {case.floor} or newer; the driver is {case.driver[0]}" in summary, summary
    assert HOLDS not in report["verdict"]["summary"]
    assert HOLDS not in text
    assert verdict_line(text, case.label) == f"cannot run: {summary}"


# 2. Torch's RPATH copy, not the one LD_LIBRARY_PATH names, is the one judged -----------------------------------------


def test_torch_is_judged_by_its_wheel_runtime_not_the_system_one_on_ld_library_path(
    host: SimHost, compiler: Compiler
) -> None:
    host.add_driver([A100], version=DRIVER_550[0], cuda_version=DRIVER_550[1])
    system = host.add_stack("usr/local/cuda-13.0/lib64", 13000) / "libcudart.so.13"
    wheel = torch_cu132(host.site_packages, compiler)
    code, report, text = doctor(host)
    assert code == 1, text
    assert load_of(report, "torch", "libcudart.so.13")["path"] == str(wheel)
    said = verdict_line(text, "PyTorch")
    assert said.startswith("cannot run: PyTorch 2.15.0+cu132 cannot run here: it loads CUDA runtime 13.2 from "), said
    assert str(wheel) in said
    assert str(system) not in said
    assert "CUDA runtime 13.0" not in said


# 3. A healthy torch venv runs, in the doctor and under the markers --------------------------------------------------

MARKER_TESTS = {
    "test_markers.py": """
        import pytest

        @pytest.mark.requires_cudnn(">=9.20")
        def test_cudnn():
            pass

        @pytest.mark.requires_cuda(">=13.2")
        def test_cuda():
            pass
    """
}


def test_a_healthy_torch_venv_can_run_and_its_markers_see_its_copies(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    wheel = torch_cu132(host.site_packages, compiler)
    code, report, text = doctor(host)
    assert code == 0, text
    assert load_of(report, "torch", "libcudart.so.13")["path"] == str(wheel)
    assert verdict_line(text, "PyTorch") == "can run GPU work here"

    ran = host.pytest(files=MARKER_TESTS)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (
        "PyTorch 2.15.0+cu132: CUDA 13.2 (wheel, DT_RPATH), cuDNN 9.26.0 (wheel, DT_RPATH), kernels sm_75-sm_80: "
        "can run GPU work here" in ran.stdout
    )
    assert "2 passed" in ran.stdout, ran.stdout


# 4. An incomplete cuDNN on LD_LIBRARY_PATH: torch's RPATH passes it by, TensorFlow's RUNPATH does not ---------------


def test_an_incomplete_cudnn_on_ld_library_path_stops_tensorflow_not_torch(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    folder = host.folder("opt/cudnn-9.1/lib")
    incomplete = host.add_cudnn(folder, (9, 1, 0), cudart_version=12040, siblings=False)
    host.ld_library_path.append(str(folder))
    torch_cu132(host.site_packages, compiler)

    code, report, text = doctor(host)
    assert load_of(report, "torch", "libcudnn.so.9")["path"] == str(host.wheel_folder("cudnn") / "libcudnn.so.9")
    assert verdict_line(text, "PyTorch") == "can run GPU work here"
    assert code == 0, text  # nothing loads the incomplete copy

    # TensorFlow beside it: its dlopen searches LD_LIBRARY_PATH before its RUNPATH, and gets the incomplete copy.
    plant_tensorflow(
        host.site_packages,
        compiler,
        version="2.18.0",
        build_info="tensorflow-2.18.0-linux.py",
        runpath_components=TF_FULL_RUNPATH,
    )
    plant_cuda12_wheels(host.site_packages, compiler, cudart=12050, cudnn=None)  # nvidia/cudnn is torch's 9.26.0
    code, report, text = doctor(host)
    cudnn = load_of(report, "tensorflow", "libcudnn.so.9")
    assert (cudnn["path"], cudnn["found_by"]) == (str(incomplete), "LD_LIBRARY_PATH"), cudnn
    assert verdict_line(text, "PyTorch") == "can run GPU work here"
    said = verdict_line(text, "TensorFlow")
    assert said.startswith("cannot run: "), said
    assert str(incomplete) in said, said
    assert code == 1, text


# 5. TensorFlow outside site-packages: the copies its RUNPATH reaches are probed -------------------------------------


def test_tensorflow_in_a_target_folder_has_the_copies_beside_it_probed(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    target = host.root / "opt" / "tf-target"  # pip install --target opt/tf-target 'tensorflow[and-cuda]'
    plant_tensorflow(
        target, compiler, version="2.18.0", build_info="tensorflow-2.18.0-linux.py", runpath_components=TF_FULL_RUNPATH
    )
    nvidia = plant_cuda12_wheels(target, compiler, cudart=12050, cudnn=(9, 3, 0))
    host.variables["PYTHONPATH"] = f"{target}:{host.site_packages}"
    runtime, cudnn = nvidia / "cuda_runtime/lib/libcudart.so.12", nvidia / "cudnn/lib/libcudnn.so.9"

    code, report = host.doctor_json()
    runtimes = {copy["path"]: copy for copy in report["environment"]["cuda_runtimes"]}
    cudnns = {copy["path"]: copy for copy in report["environment"]["cudnns"]}
    assert str(runtime) in runtimes, sorted(runtimes)
    assert runtimes[str(runtime)]["version"] == "12.5"
    assert str(cudnn) in cudnns, sorted(cudnns)
    assert cudnns[str(cudnn)]["version"] == "9.3.0"
    assert load_of(report, "tensorflow", "libcudart.so.12")["path"] == str(runtime)
    assert code == 0, report["findings"]

    host.add_driver([A100], version=DRIVER_470[0], cuda_version=DRIVER_470[1])
    code, report, text = doctor(host)
    assert code == 1, text
    assert HOLDS not in report["verdict"]["summary"]
    said = verdict_line(text, "TensorFlow")
    assert said.startswith("cannot run: "), said
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert any(str(runtime) in " ".join([f["summary"], *f["evidence"]]) for f in errors), errors


# 6. TensorFlow 2.21's RUNPATH has no nvidia/cusolver/lib ----------------------------------------------------------


CUSOLVER = "libcusolver.so.11"


def tensorflow_221_with_its_wheels(host: SimHost, compiler: Compiler) -> Path:
    """TensorFlow 2.21.0 (its RUNPATH without nvidia/cusolver/lib) and the CUDA 12 wheels, on driver 580; returns the
    cuSOLVER wheel's folder."""
    if cache_or_default_folders_have(CUSOLVER):
        pytest.skip(f"this machine's loader finds {CUSOLVER} by itself")
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_tensorflow(host.site_packages, compiler)
    return plant_cuda12_wheels(host.site_packages, compiler, cudart=12050, cudnn=(9, 3, 0)) / "cusolver" / "lib"


def test_tensorflow_221_cannot_load_the_cusolver_its_runpath_misses(host: SimHost, compiler: Compiler) -> None:
    name = CUSOLVER
    cusolver = tensorflow_221_with_its_wheels(host, compiler)
    assert (cusolver / name).is_file()
    assert "cusolver" not in TF_2_21_RUNPATH

    code, report, text = doctor(host)
    assert code == 1, text
    missing = finding(report, "framework-library-missing")
    assert missing["summary"] == f"TensorFlow 2.21.0 cannot use the GPU: it cannot load {name}"
    searched = next(item for item in missing["evidence"] if item.startswith("searched: "))
    assert str(cusolver) not in searched
    assert f"installed where its search never looks: {cusolver / name}" in missing["evidence"]
    assert missing["fix"].startswith(f"add {cusolver} to LD_LIBRARY_PATH (its search never looks there)")
    assert load_of(report, "tensorflow", name)["path"] is None
    assert str(cusolver) not in load_of(report, "tensorflow", name)["searched"]
    assert str(cusolver) not in tensorflow_json(report["environment"])["library_dirs"]
    assert f"searches first: {cusolver}" not in text
    assert verdict_line(text, "TensorFlow") == f"cannot run: {missing['summary']}"


def test_the_cusolver_fix_round_trips_through_tensorflows_own_search(host: SimHost, compiler: Compiler) -> None:
    """Real-wheels report D2: with nvidia-cusolver-cu12 uninstalled, the fix was "pip install nvidia-cusolver-cu12,
    or add the folder ... to LD_LIBRARY_PATH"; the wheel lands in nvidia/cusolver/lib, where TensorFlow 2.21's
    search never looks, so following it left TensorFlow unable to run. Each step of the fix is applied here as
    written, and the doctor reads TensorFlow's real RUNPATH again after each."""
    name = CUSOLVER
    cusolver = tensorflow_221_with_its_wheels(host, compiler)
    shutil.rmtree(cusolver.parent)  # pip uninstall nvidia-cusolver-cu12

    code, report, text = doctor(host)
    assert code == 1, text
    missing = finding(report, "framework-library-missing")
    assert missing["fix"] == (
        f"pip install nvidia-cusolver-cu12, then add {cusolver} to LD_LIBRARY_PATH (TensorFlow's search never looks "
        "there)"
    )
    # Step 1, pip install nvidia-cusolver-cu12: the wheel's folder, and TensorFlow still cannot load it.
    plant_nvidia_wheel(host.site_packages, compiler, "cusolver", others=(name,))
    code, report, text = doctor(host)
    assert code == 1, text
    assert finding(report, "framework-library-missing")["summary"].endswith(f"it cannot load {name}")
    # Step 2, the folder on LD_LIBRARY_PATH: TensorFlow's search finds it there, and it can run.
    host.ld_library_path.append(str(cusolver))
    code, report, text = doctor(host)
    assert "framework-library-missing" not in [f["code"] for f in report["findings"]], text
    assert load_of(report, "tensorflow", name)["path"] == str(cusolver / name)
    assert verdict_line(text, "TensorFlow") == "can run GPU work here"
    assert code == 0, text


# 7. A CPU-only build alone is not a GPU stack, whatever the system toolkit says -----------------------------------


def healthy_system_toolkit(host: SimHost) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    host.add_stack("usr/local/cuda-13.0/lib64", 13000, (9, 13, 0))


def test_cpu_only_torch_alone_cannot_run_gpu_work(host: SimHost, compiler: Compiler) -> None:
    healthy_system_toolkit(host)
    plant_torch(host.site_packages, compiler, version="2.15.0+cpu", cuda=None, cudnn=None, pins=())
    code, report, text = doctor(host)
    assert code == 1, text
    cpu = finding(report, "framework-cpu-only")
    assert cpu["severity"] == "error"
    assert cpu["summary"] == "PyTorch 2.15.0+cpu (torch) is a CPU-only build: it will not use the GPU"
    assert verdict_line(text, "PyTorch") == "it will not use the GPU"
    assert HOLDS not in report["verdict"]["summary"]


def test_tensorflow_cpu_alone_cannot_run_gpu_work(host: SimHost, compiler: Compiler) -> None:
    healthy_system_toolkit(host)
    plant_tensorflow(
        host.site_packages,
        compiler,
        build_info="tensorflow-cpu-2.21.0-linux.py",
        distribution="tensorflow-cpu",
        runpath_components=(),
    )
    code, report, text = doctor(host)
    assert code == 1, text
    assert {"framework-cpu-only", "tensorflow-cpu-only"} & set(codes(report, "error")), report["findings"]
    assert verdict_line(text, "TensorFlow") == "it will not use the GPU"
    assert HOLDS not in report["verdict"]["summary"]


# 8. torch and JAX in one environment, each with its own cuDNN -------------------------------------------------------


def test_torch_and_jax_loading_different_cudnn_copies_are_warned_of(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    torch_cu132(host.site_packages, compiler)
    # jax[cuda12] in a user site first on sys.path: JAX preloads the first nvidia/cudnn there is, its own 9.8.0;
    # torch's DT_RPATH keeps the 9.26.0 beside it.
    user_site = host.root / "user" / "site-packages"
    jax_cuda12(user_site, compiler)
    host.variables["PYTHONPATH"] = f"{user_site}:{host.site_packages}"
    torch_cudnn = host.wheel_folder("cudnn") / "libcudnn.so.9"
    jax_cudnn = user_site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"

    code, report = host.doctor_json()
    assert code == 0, report["findings"]  # a warning: each framework alone runs
    assert load_of(report, "torch", "libcudnn.so.9")["path"] == str(torch_cudnn)
    assert load_of(report, "jax", "libcudnn.so.9")["path"] == str(jax_cudnn)
    differ = finding(report, "framework-copies-differ")
    assert differ["severity"] == "warning"
    assert "libcudnn.so.9" in differ["summary"]
    evidence = "\n".join(differ["evidence"])
    assert f"{torch_cudnn} (version 9.26.0)" in evidence, evidence
    assert f"{jax_cudnn} (version 9.8.0)" in evidence, evidence


# 9. A GPU older than every kernel torch carries ----------------------------------------------------------------------


def test_torch_without_kernels_for_the_gpu_cannot_run(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([V100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    torch_cu132(host.site_packages, compiler)  # SASS for sm_75 and sm_80, no PTX
    code, report, text = doctor(host)
    assert code == 1, text
    kernels = finding(report, "framework-no-kernels-for-gpu")
    assert kernels["summary"] == (
        "PyTorch 2.15.0+cu132 has no kernels for GPU 0 Tesla V100-SXM2-16GB (compute capability 7.0, Volta): "
        "no SASS for it and no PTX"
    )
    assert verdict_line(text, "PyTorch").startswith("cannot run: "), text
