"""This year's toolkits on simulated hosts (issue 31, item 4): the CUDA 13.5 runtime pip installs today on an R580
driver, and a PyTorch whose only code for the GPU is PTX made by a CUDA newer than the driver. The runtime loads
under minor-version compatibility, so the first host is sound; the second fails at its first kernel with
cudaErrorUnsupportedPtxVersion, which the code before called "runs only through PTX JIT (slow first start)"."""

from __future__ import annotations

from typing import Any

import pytest

from .frameworkhosts import plant_nvidia_wheel, plant_torch
from .simhost import Compiler, SimGpu, SimHost

pytestmark = pytest.mark.e2e

H100 = SimGpu("NVIDIA H100 80GB HBM3", "GPU-10000000-0000-0000-0000-000000000000", "00000000:18:00.0", (9, 0))


def codes(report: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in report["findings"]]


def test_the_cuda_13_5_runtime_on_an_r580_driver_runs(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([H100], version="580.95.05", cuda_version=13000)
    plant_nvidia_wheel(host.site_packages, compiler, "cu13", cudart=13050)
    host.ld_library_path.append(str(host.site_packages / "nvidia" / "cu13" / "lib"))
    code, report = host.doctor_json()
    [runtime] = [r for r in report["environment"]["cuda_runtimes"] if r["version"] == "13.5"]
    assert runtime["device_count_status"] == 0
    assert code == 0, report["findings"]
    assert "driver-too-old-for-cuda" not in codes(report)


@pytest.mark.parametrize(
    ("driver", "cuda", "expected"),
    [
        (("580.95.05", 13000), "13.2", "framework-ptx-newer-than-driver"),  # 13.2's PTX, a 13.0 driver: refused
        (("595.45.04", 13020), "13.2", "framework-ptx-only"),  # the driver supports 13.2: JIT works, slowly
    ],
    ids=["driver-580", "driver-595"],
)
def test_pytorch_with_only_ptx_for_the_gpu_is_judged_by_the_cuda_that_made_it(
    host: SimHost, compiler: Compiler, driver: tuple[str, int], cuda: str, expected: str
) -> None:
    host.add_driver([H100], version=driver[0], cuda_version=driver[1])
    # libtorch_cuda.so with SASS for sm_80 and PTX for compute_80 (nvcc builds the fatbin): no sm_90 code.
    plant_torch(host.site_packages, compiler, cuda=cuda, sass=("sm_80", "compute_80"))
    plant_nvidia_wheel(host.site_packages, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020)
    plant_nvidia_wheel(host.site_packages, compiler, "cu13", cudart=13020)
    code, report = host.doctor_json()
    [torch] = [b for b in report["environment"]["frameworks"] if b["name"] == "torch"]
    [cuda_object] = [o for o in torch["objects"] if o["path"].endswith("/libtorch_cuda.so")]
    assert (cuda_object["sass"], cuda_object["ptx"]) == (["sm_80"], ["compute_80"])
    found = [f for f in report["findings"] if f["code"] in ("framework-ptx-newer-than-driver", "framework-ptx-only")]
    assert [f["code"] for f in found] == [expected], report["findings"]
    if expected == "framework-ptx-newer-than-driver":
        assert code == 1
        assert "made by CUDA 13.2, and the driver's JIT compiles PTX only up to CUDA 13.0" in found[0]["summary"]
        assert found[0]["fix"].startswith("install a driver that supports CUDA 13.2")
