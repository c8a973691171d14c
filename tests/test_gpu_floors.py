"""A framework's documented GPU floor (issue 31, item 4; compat audit F6): JAX supports compute capability 5.2 and
newer on CUDA 12, 7.5 and newer on CUDA 13. Simulated hosts: JAX's CUDA 13 plugin on a P100 (6.0) and on a T4
(7.5); the doctor and requires_jax run in child processes."""

from __future__ import annotations

import shutil
import sys

import pytest

from .frameworkhosts import plant_cuda12_wheels, plant_jax, plant_nvidia_wheel
from .simhost import Compiler, SimGpu, SimHost
from .test_framework_stories import DRIVER_580, codes, finding

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")

P100 = SimGpu("Tesla P100-PCIE-16GB", "GPU-p100", "00000000:00:1E.0", (6, 0), 16 * 1024**3, 15 * 1024**3)
T4 = SimGpu("Tesla T4", "GPU-t4", "00000000:00:1F.0", (7, 5), 16 * 1024**3, 15 * 1024**3)
MARKED = """
    import pytest

    @pytest.mark.requires_jax
    def test_jax():
        pass
    """


def _jax_cuda13(host: SimHost, compiler: Compiler, gpu: SimGpu) -> None:
    host.add_driver([gpu], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_jax(host.site_packages, compiler, major=13, cuda_build=13000, cudnn_build=91200)
    # What the CUDA 13 plugin cannot do without (compat/loading.py's rows), in the one folder CUDA 13's wheels share.
    others = ("libcublas.so.13", "libcublasLt.so.13", "libcupti.so.13", "libcusparse.so.12", "libcufft.so.12")
    plant_nvidia_wheel(host.site_packages, compiler, "cu13", cudart=13000, others=others)
    plant_nvidia_wheel(host.site_packages, compiler, "cudnn", cudnn=(9, 12, 0), cudnn_cudart=13000)


@pytest.mark.parametrize(("gpu", "below"), [(P100, True), (T4, False)], ids=["P100", "T4"])
def test_jax_for_cuda_13_on_a_gpu_older_than_its_floor(
    host: SimHost, compiler: Compiler, gpu: SimGpu, below: bool
) -> None:
    _jax_cuda13(host, compiler, gpu)
    _, report = host.doctor_json()
    assert ("framework-gpu-below-floor" in codes(report)) is below, codes(report)
    result = host.pytest(files={"test_jax.py": MARKED})
    if below:
        found = finding(report, "framework-gpu-below-floor")
        assert found["severity"] == "error"
        assert found["summary"] == (
            "JAX 0.10.2 for CUDA 13 does not support GPU 0 Tesla P100-PCIE-16GB (compute capability 6.0, Pascal): it "
            "supports compute capability 7.5 and newer"
        )
        assert found["fix"] == "install JAX for CUDA 12, which supports it: pip install -U 'jax[cuda12]'"
        assert "On CUDA 13, JAX supports NVIDIA GPUs that have SM version 7.5 or newer" in found["evidence"][0]
        # The CUDA 13 runtime's own limit comes first (CUDA 13 dropped the GPUs before Turing); JAX's follows from it.
        assert found["because"] == "gpu-unsupported-by-cuda"
        assert codes(report).index("gpu-unsupported-by-cuda") < codes(report).index("framework-gpu-below-floor")
        jax = next(f for f in report["frameworks"] if f["name"] == "jax")
        assert jax["ok"] is False
        assert "1 skipped" in result.stdout, result.stdout
    else:
        assert "1 passed" in result.stdout, result.stdout + result.stderr


def test_jax_for_cuda_12_on_the_same_p100_is_supported(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([P100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_jax(host.site_packages, compiler)
    plant_cuda12_wheels(host.site_packages, compiler)
    _, report = host.doctor_json()
    assert "framework-gpu-below-floor" not in codes(report)
