"""Forward compatibility and containers on simulated hosts (issue 21): stand-in libraries, the real probe in its
child processes, the doctor's exit and findings. Each case failed on the code before it (the doctor said "the
NVIDIA driver 535 is too old for CUDA 13.0" for a forward-compatibility setup that works, and named no container
cause)."""

from __future__ import annotations

from typing import Any

from .simhost import SimGpu, SimHost

H100 = SimGpu("NVIDIA H100 80GB HBM3", "GPU-10000000-0000-0000-0000-000000000000", "00000000:18:00.0", (9, 0))
A100 = SimGpu()
GEFORCE = SimGpu(
    "NVIDIA GeForce RTX 4090", "GPU-40900000-0000-0000-0000-000000000000", "00000000:01:00.0", (8, 9), mig_mode=-1
)


def codes(report: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in report["findings"]]


def ngc_container(host: SimHost, gpu: SimGpu, kernel: str, kernel_cuda: int, init_status: int = 0) -> None:
    """An NGC-style CUDA 13.0 image on a host with an older driver: the host's NVML and libcuda mounted, the
    cuda-compat-13-0 libcuda (driver 580.65.06) first on the loader path, the CUDA 13.0 runtime."""
    host.add_driver([gpu], version=kernel, cuda_version=kernel_cuda)
    host.add_compat("usr/local/cuda-13.0/compat", 13000, "580.65.06", init_status=init_status)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)


def test_forward_compatibility_on_an_h100_works_and_says_which_library(host: SimHost) -> None:
    ngc_container(host, H100, "535.104.05", 12020)
    code, report = host.doctor_json()
    # The issue: "the NVIDIA driver 535.104.05 is too old for CUDA 13.0", exit 1, though the runtime answers.
    assert "driver-too-old-for-cuda" not in codes(report), report["findings"]
    assert code == 0, report["findings"]
    env = report["environment"]
    compat = host.root / "usr/local/cuda-13.0/compat"
    assert env["cuda_driver"]["path"] == str(compat / "libcuda.so.1")
    assert env["cuda_driver"]["real_path"] == str(compat / "libcuda.so.580.65.06")
    assert (env["driver"]["version"], env["cuda_driver"]["version"]) == ("535.104.05", "13.0")
    assert "driver-too-old-for-cuda" not in codes(report)
    [info] = [f for f in report["findings"] if f["code"] == "forward-compat-in-use"]
    assert info["severity"] == "info"
    assert str(compat / "libcuda.so.1") in info["summary"]


def test_forward_compatibility_on_a_geforce_is_the_804_error(host: SimHost) -> None:
    ngc_container(host, GEFORCE, "535.104.05", 12020, init_status=804)
    code, report = host.doctor_json()
    assert code == 1
    [error] = [f for f in report["findings"] if f["code"] == "forward-compat-unsupported-gpu"]
    assert "GeForce RTX 4090" in error["summary"]
    assert any("returned 804" in line for line in error["evidence"])
    assert "driver-too-old-for-cuda" not in codes(report)


def test_forward_compatibility_on_an_end_of_life_branch_is_that_error(host: SimHost) -> None:
    ngc_container(host, A100, "550.54.15", 12040, init_status=803)
    code, report = host.doctor_json()
    assert code == 1
    [error] = [f for f in report["findings"] if f["code"] == "forward-compat-unsupported-branch"]
    assert "R550" in error["summary"]
    assert "driver-too-old-for-cuda" not in codes(report)


def test_forward_compatibility_on_r535_today_names_its_end_of_life(host: SimHost) -> None:
    # Issue 31 (compat audit D1): NVIDIA's table ended R535 in June 2026; the code before called it a supported
    # Long Term Support Branch and, with the runtime failing 803, named no cause. The probe's own clock judges it.
    ngc_container(host, A100, "535.104.05", 12020, init_status=803)
    code, report = host.doctor_json()
    assert code == 1
    [error] = [f for f in report["findings"] if f["code"] == "forward-compat-unsupported-branch"]
    assert "R535 ended in June 2026" in error["summary"]
    assert "R535" not in error["fix"]
    assert "R570" not in error["fix"]
    assert "R580" in error["fix"] or "R620" in error["fix"]  # long-lived branches supported when probed


def test_a_container_without_compute_names_the_capability(host: SimHost) -> None:
    # The toolkit mounted NVML (utility) and no libcuda: NVIDIA_DRIVER_CAPABILITIES lacks compute.
    host.add_driver([A100], libcuda=False)
    host.add_stack("usr/local/cuda-12.4/lib64", 12040)
    host.variables.update(NVIDIA_VISIBLE_DEVICES="all", NVIDIA_DRIVER_CAPABILITIES="utility")
    code, report = host.doctor_json()
    env = report["environment"]
    assert env["variables"]["NVIDIA_DRIVER_CAPABILITIES"] == "utility"
    assert env["variables"]["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert code == 1
    first = report["findings"][0]
    assert first["code"] == "container-capabilities-missing", report["findings"]
    assert "'compute'" in first["summary"]
    text = host.run("doctor", "-v")
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in text.stdout
