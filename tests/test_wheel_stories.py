"""Issue 21, items 3 and 4, on simulated hosts: a framework that cannot even be imported, and nvidia wheels that
overwrite each other's files in one site-packages (tests/frameworkhosts.py plants the wheels with their RECORDs).

Each story runs the doctor in a child process, as tests/test_framework_stories.py does.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from .frameworkhosts import (
    TF_2_21_RUNPATH,
    plant_cuda12_wheels,
    plant_jax,
    plant_nvidia_wheel,
    plant_tensorflow,
    plant_torch,
)
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


# 2. cu12 wheels over cu13 ones in one site-packages ---------------------------------------------------------------

CUDNN_CU13 = ("nvidia-cudnn-cu13", "9.26.0.51")
CUDNN_CU12 = ("nvidia-cudnn-cu12", "9.28.0.50")


def torch_then_tensorflow(host: SimHost, compiler: Compiler) -> None:
    """`pip install torch` (CUDA 13, cuDNN 9.26 wheel), then `pip install tensorflow[and-cuda]` (CUDA 12): the
    nvidia-cudnn-cu12 wheel writes nvidia/cudnn/lib over nvidia-cudnn-cu13's files."""
    site = host.site_packages
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    plant_torch(site, compiler, pins=(f"{CUDNN_CU13[0]}=={CUDNN_CU13[1]}",))
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020, distribution=CUDNN_CU13)
    plant_nvidia_wheel(site, compiler, "cu13", cudart=13020, distribution=("nvidia-cuda-runtime", "13.2.51"))
    plant_tensorflow(
        site,
        compiler,
        requires=(f'{CUDNN_CU12[0]}=={CUDNN_CU12[1]}; extra == "and-cuda"',),
        runpath_components=(*TF_2_21_RUNPATH, "cusolver"),  # TensorFlow otherwise whole: the wheels alone are said
    )
    plant_cuda12_wheels(site, compiler, cudart=12090, cudnn=None)
    plant_nvidia_wheel(site, compiler, "cusolver", others=("libcusolver.so.11",))
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 28, 0), cudnn_cudart=12090, distribution=CUDNN_CU12)


def test_cu12_wheels_over_cu13_ones_are_named_with_the_copy_torch_really_gets(
    host: SimHost, compiler: Compiler
) -> None:
    torch_then_tensorflow(host, compiler)
    cudnn = host.site_packages / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"

    code, report, text = doctor(host)
    assert code == 0, text  # a warning: each framework loads a copy its own rules accept
    over = finding(report, "wheel-files-overwritten")
    assert over["severity"] == "warning"
    assert over["summary"].startswith(f"{CUDNN_CU13[0]} {CUDNN_CU13[1]}'s files on disk are not its own: "), over
    assert over["summary"].endswith(f"differ from its RECORD, overwritten by {CUDNN_CU12[0]}"), over
    record = next(line for line in over["evidence"] if "RECORD: these differ on disk from it: " in line)
    assert "nvidia/cudnn/lib/libcudnn.so.9" in record, record
    loaded = next(line for line in over["evidence"] if line.startswith("PyTorch 2.15.0+cu132 "))
    assert loaded == (
        f"PyTorch 2.15.0+cu132 (pins {CUDNN_CU13[0]}) loads {cudnn}: {CUDNN_CU12[0]} {CUDNN_CU12[1]}'s "
        "(size and sha256 match its RECORD); it is cuDNN 9.28.0 built for CUDA 12.9"
    ), loaded
    # TensorFlow pins the cu12 build: both cannot have their own files in one venv.
    assert over["fix"].startswith(
        f"PyTorch and TensorFlow need different builds of the same files ({CUDNN_CU13[0]} "
    ), over
    assert "separate venvs" in over["fix"]
    assert f"pip install --force-reinstall --no-deps {CUDNN_CU13[0]}=={CUDNN_CU13[1]}" in over["fix"]
    # The pin line no longer says what the disk contradicts.
    pin = next(line.strip() for line in text.splitlines() if line.strip().startswith(f"pins {CUDNN_CU13[0]}"))
    assert pin != f"pins {CUDNN_CU13[0]}=={CUDNN_CU13[1]}  (installed {CUDNN_CU13[1]})", pin
    assert "differ from its RECORD" in pin, pin


def test_a_wheel_whose_files_are_its_own_raises_nothing(host: SimHost, compiler: Compiler) -> None:
    site = host.site_packages
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_torch(site, compiler, pins=(f"{CUDNN_CU13[0]}=={CUDNN_CU13[1]}",))
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020, distribution=CUDNN_CU13)
    plant_nvidia_wheel(site, compiler, "cu13", cudart=13020, distribution=("nvidia-cuda-runtime", "13.2.51"))
    code, report, text = doctor(host)
    assert code == 0, text
    assert "wheel-files-overwritten" not in codes(report)
    files = report["environment"]["wheel_files"]
    assert {file["path"] for file in files} == {
        str(site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"),
        str(site / "nvidia" / "cu13" / "lib" / "libcudart.so.13"),
    }
    assert all(file["sha256"] == file["listed_by"][0]["sha256"] for file in files), files
    # Each loaded file is its wheel's own: no RECORD is read whole (issue 28), and none is said to differ.
    assert report["environment"]["wheel_checks"] == []
    assert f"pins {CUDNN_CU13[0]}=={CUDNN_CU13[1]}  (installed {CUDNN_CU13[1]})" in text


# 3. Each framework judged by its own pair (issue 29, D1 of the real-wheels report) ------------------------------

MIXED_MARKERS = {
    "test_mixed.py": """
        import pytest

        @pytest.mark.requires_torch
        def test_torch():
            pass

        @pytest.mark.requires_cudnn(">=9", framework="torch")
        def test_torch_cudnn():
            pass
    """
}


def tensorflow_then_torch_and_jax(host: SimHost, compiler: Compiler) -> None:
    """`pip install tensorflow[and-cuda]` (CUDA 12.9, the cu12 cuDNN 9.28), then `pip install torch 'jax[cuda12]'`:
    torch's nvidia-cudnn-cu13 writes nvidia/cudnn/lib over the cu12 one, and brings its own CUDA 13.2 runtime."""
    site = host.site_packages
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    plant_tensorflow(
        site,
        compiler,
        requires=(f'{CUDNN_CU12[0]}=={CUDNN_CU12[1]}; extra == "and-cuda"',),
        runpath_components=(*TF_2_21_RUNPATH, "cusolver"),
    )
    plant_cuda12_wheels(site, compiler, cudart=12090, cudnn=None)
    plant_nvidia_wheel(site, compiler, "cusolver", others=("libcusolver.so.11",))
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 28, 0), cudnn_cudart=12090, distribution=CUDNN_CU12)
    plant_jax(site, compiler, major=12)
    plant_torch(site, compiler, pins=(f"{CUDNN_CU13[0]}=={CUDNN_CU13[1]}",))
    plant_nvidia_wheel(site, compiler, "cu13", cudart=13020, distribution=("nvidia-cuda-runtime", "13.2.51"))
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020, distribution=CUDNN_CU13)


def test_torch_beside_tensorflow_and_jax_is_judged_by_its_own_cuda_runtime(host: SimHost, compiler: Compiler) -> None:
    tensorflow_then_torch_and_jax(host, compiler)
    code, report, text = doctor(host)
    verdicts = {entry["name"]: entry for entry in report["frameworks"]}
    # torch loads its own pinned cuDNN with its own CUDA 13.2: nothing about that pair is wrong.
    assert verdicts["torch"]["ok"] is True, verdicts["torch"]
    assert verdict_line(text, "PyTorch").startswith("can run"), text
    # TensorFlow and JAX use that CUDA 13 cuDNN with their CUDA 12.9 runtime: one finding, about them alone.
    mismatch = finding(report, "cudnn-cuda-mismatch")
    assert mismatch["summary"] == (
        "cuDNN 9.26.0 was built for CUDA 13.2, but TensorFlow and JAX use it with CUDA 12.9"
    ), mismatch
    assert mismatch["frameworks"] == ["tensorflow", "jax"]
    assert mismatch["severity"] == "warning"  # cuDNN 9 brings its own CUDA runtime: one rule, as for layout 5 below
    assert code == 0, text
    ran = host.pytest(files=MIXED_MARKERS)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout, ran.stdout


def test_a_cu12_cudnn_over_torchs_cu13_one_follows_the_same_rule(host: SimHost, compiler: Compiler) -> None:
    torch_then_tensorflow(host, compiler)  # torch now loads the cu12 cuDNN 9.28 with its own CUDA 13.2
    code, report, text = doctor(host)
    mismatch = finding(report, "cudnn-cuda-mismatch")
    assert mismatch["summary"] == "cuDNN 9.28.0 was built for CUDA 12.9, but PyTorch uses it with CUDA 13.2"
    assert (mismatch["severity"], mismatch["frameworks"]) == ("warning", ["torch"])
    assert code == 0, text
