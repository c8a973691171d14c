"""The hosts of 2026 on simulated machines (issue 31): WSL2, a driver from R590 on a Volta, a Jetson. The child
sees the host's own files (the kernel release, /usr/lib/wsl/lib, /dev/dxg, /proc/driver, /sys/bus/pci/devices,
/etc/nv_tegra_release) through a private mount namespace, so the product reads them where a real host has them;
the machine running the tests is never changed. Each case failed on the code before (the doctor said "no /dev/nvidia*
device nodes: no GPU device was given to this machine or container" on WSL2, "no-gpu" for a Volta a 595 driver
ignores, and "no NVIDIA driver" on a Jetson)."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest

from .simhost import SimGpu, SimHost

WSL2 = "5.15.153.1-microsoft-standard-WSL2\n"
WSL_LIB = "/usr/lib/wsl/lib"
ORIN = SimGpu("Orin (nvgpu)", "GPU-0a000000-0000-0000-0000-000000000000", "00000000:00:00.0", (8, 7), mig_mode=-1)
FALSE_ON_WSL = "no /dev/nvidia* device nodes: no GPU device was given to this machine or container"


def _namespaces() -> str | None:
    """Why a private mount namespace cannot be made here, or None when it can."""
    if shutil.which("unshare") is None:
        return "no unshare(1)"
    done = subprocess.run(["unshare", "--mount", "true"], capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else f"unshare --mount: {done.stderr.strip()}"


pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(_namespaces() is not None, reason=f"needs a private mount namespace: {_namespaces()}"),
]


def codes(report: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in report["findings"]]


def everything_said(report: dict[str, Any]) -> str:
    return "\n".join(text for f in report["findings"] for text in (f["summary"], f["fix"], *f["evidence"]))


def wsl2(host: SimHost, *, on_path: bool = True, dxg: bool = True) -> None:
    """A WSL2 distribution: the kernel release naming Microsoft, the Windows driver's libraries (stand-ins for
    driver 581.57, CUDA 13.0) in /usr/lib/wsl/lib, /dev/dxg, and the CUDA 13.0 runtime."""
    host.replace("/proc/sys/kernel/osrelease", WSL2)
    wsl_lib = host.overlay("/usr/lib") / "wsl" / "lib"
    host.add_driver([SimGpu()], version="581.57", cuda_version=13000, folder=wsl_lib)
    if on_path:
        host.ld_library_path.append(WSL_LIB)
    if dxg:
        (host.overlay("/dev") / "dxg").write_bytes(b"")
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)


def test_wsl2_that_works_is_said_as_wsl2_and_not_as_a_machine_without_devices(host: SimHost) -> None:
    wsl2(host)
    code, report = host.doctor_json()
    platform = report["environment"]["platform"]
    assert platform["kernel_release"] == WSL2.strip()
    assert platform["dxg"] is True
    assert "libcuda.so.1" in platform["wsl_libraries"]
    assert report["environment"]["cuda_driver"]["path"] == f"{WSL_LIB}/libcuda.so.1"
    assert code == 0, report["findings"]
    assert not [c for c in codes(report) if c.startswith("wsl-")]
    text = host.run("doctor").stdout
    # The driver's line: the Windows driver's version as NVML reports it, and where it comes from.
    assert f"581.57, supports CUDA up to 13.0 (the Windows driver, through WSL2: {WSL_LIB}/libnvidia-ml.so.1)" in text


def test_wsl2_whose_library_folder_is_off_the_loader_path_gets_the_ldconfig_entry(host: SimHost) -> None:
    wsl2(host, on_path=False)
    code, report = host.doctor_json()
    assert code == 1
    first = report["findings"][0]
    assert first["code"] == "wsl-libraries-not-on-loader-path", codes(report)
    assert first["fix"].startswith(f"echo {WSL_LIB} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig")
    (no_driver,) = [f for f in report["findings"] if f["code"] == "no-driver"]
    assert no_driver["because"] == "wsl-libraries-not-on-loader-path"
    # The old doctor's words, false on WSL2 and pointing the wrong way:
    assert FALSE_ON_WSL not in everything_said(report)
    assert "no NVIDIA kernel module is loaded" not in everything_said(report)


def test_a_linux_driver_inside_wsl2_is_named_with_the_copy_that_shadows(host: SimHost) -> None:
    wsl2(host, on_path=False)
    host.add_driver([SimGpu()], version="580.95.05", cuda_version=13000)  # a Linux driver's copies, first on the path
    code, report = host.doctor_json()
    assert code == 1
    first = report["findings"][0]
    assert first["code"] == "wsl-linux-driver-installed", codes(report)
    assert f"libcuda.so.1 from {host.driver_dir}/libcuda.so.1" in first["summary"]
    assert "remove the Linux driver's packages" in first["fix"]


def test_wsl2_without_dxg_says_windows_gives_no_gpu(host: SimHost) -> None:
    wsl2(host, dxg=False)
    code, report = host.doctor_json()
    assert report["environment"]["platform"]["dxg"] is False
    assert code == 1
    assert report["findings"][0]["code"] == "wsl-no-gpu"
    assert report["findings"][0]["summary"] == "WSL2 without /dev/dxg: Windows gives this Linux no GPU"


def pci_bus(host: SimHost, *devices: tuple[str, str, str, str]) -> None:
    """/sys/bus/pci/devices as the child sees it: (address, vendor, class, device) for each function, and a
    pci.ids that names NVIDIA's."""
    folder = host.replace("/sys/bus/pci/devices")
    for address, vendor, klass, device in devices:
        (folder / address).mkdir()
        for name, value in (("vendor", vendor), ("class", klass), ("device", device)):
            (folder / address / name).write_text(value + "\n")
    hwdata = host.overlay("/usr/share") / "hwdata"
    hwdata.mkdir()
    (hwdata / "pci.ids").write_text(
        "8086  Intel Corporation\n\t0d57  Host bridge\n"
        "10de  NVIDIA Corporation\n\t10f2  GP100 High Definition Audio\n\t1db4  GV100GL [Tesla V100 PCIe 16GB]\n"
        "\t\t10de 1214  Tesla V100 PCIe 16GB\n\t2330  GH100 [H100 SXM5 80GB]\n10df  Emulex Corporation\n"
    )


V100_FUNCTION = ("0000:01:00.0", "0x10de", "0x030200", "0x1db4")  # NVIDIA, 3D controller


def test_a_595_driver_that_ignores_a_volta_beside_an_h100_names_the_volta(host: SimHost) -> None:
    # NVML lists the H100 (00000000:18:00.0); the V100 on the bus is missing from its list: a warning, tests that
    # need one GPU still run on the H100.
    h100 = SimGpu("NVIDIA H100 80GB HBM3", "GPU-10000000-0000-0000-0000-000000000000", "00000000:18:00.0", (9, 0))
    host.add_driver([h100], version="595.71.05", cuda_version=13020)
    pci_bus(host, V100_FUNCTION, ("0000:18:00.0", "0x10de", "0x030200", "0x2330"))
    host.add_stack("usr/local/cuda-13.2/lib64", 13020)
    code, report = host.doctor_json()
    assert [gpu["bus_id"] for gpu in report["environment"]["platform"]["pci_gpus"]] == ["0000:01:00.0", "0000:18:00.0"]
    [dropped] = [f for f in report["findings"] if f["code"] == "driver-dropped-gpu"]
    assert dropped["severity"] == "warning"
    assert "the GPU at 0000:01:00.0 (10de:1db4: GV100GL [Tesla V100 PCIe 16GB])" in dropped["summary"]
    assert code == 0


def test_a_driver_before_r590_with_its_gpus_listed_never_reads_the_pci_bus(host: SimHost) -> None:
    host.add_driver([SimGpu()], version="580.95.05", cuda_version=13000)
    pci_bus(host, V100_FUNCTION)
    _, report = host.doctor_json()
    assert report["environment"]["platform"]["pci_gpus"] is None  # not read: nothing to ask of it


def test_a_595_driver_that_ignores_a_volta_names_the_gpu_and_the_580_branch(host: SimHost) -> None:
    # The module is loaded and NVML answers, but lists no GPU: the V100 on the PCI bus is one it ignores.
    host.add_driver([], version="595.71.05", cuda_version=13020)
    proc = host.replace("/proc/driver")
    (proc / "nvidia").mkdir()
    (proc / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  595.71.05  Release Build  (dvs-builder@U22)\n"
        "GCC version:  gcc version 12.3.0\n"
    )
    pci_bus(
        host,
        ("0000:00:00.0", "0x8086", "0x060000", "0x0d57"),  # the host bridge
        V100_FUNCTION,
        ("0000:01:00.1", "0x10de", "0x040300", "0x10f2"),  # an NVIDIA audio function: not a GPU
    )
    code, report = host.doctor_json()
    env = report["environment"]
    assert env["kernel"]["module_version"] == "595.71.05"
    assert env["platform"]["pci_gpus"] == [
        {
            "bus_id": "0000:01:00.0",
            "device_id": "1db4",
            "model": "GV100GL [Tesla V100 PCIe 16GB]",
            "model_source": "/usr/share/hwdata/pci.ids",
        }
    ]
    assert code == 1
    first = report["findings"][0]
    assert first["code"] == "driver-dropped-gpu", codes(report)
    assert "the GPU at 0000:01:00.0 (10de:1db4: GV100GL [Tesla V100 PCIe 16GB])" in first["summary"]
    assert "install the R580 driver branch" in first["fix"]
    assert "no-gpu" not in codes(report)


def test_a_jetson_is_judged_by_libcuda_not_called_driverless(host: SimHost) -> None:
    release = host.overlay("/etc") / "nv_tegra_release"
    release.write_text("# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, DATE: x\n")
    host.add_driver([ORIN], version="540.4.0", cuda_version=12060, nvml=False)
    host.add_stack("usr/local/cuda-12.6/lib64", 12060)
    code, report = host.doctor_json()
    assert report["environment"]["platform"]["tegra_release"] == "36.4.0"
    assert report["environment"]["driver"]["state"] == "absent"
    assert code == 0, report["findings"]  # the old doctor: 1, "no NVIDIA driver"
    assert "no-driver" not in codes(report)
    (tegra,) = [f for f in report["findings"] if f["code"] == "tegra-host"]
    assert tegra["summary"].startswith("a Jetson/Tegra host (L4T R36.4.0, from /etc/nv_tegra_release)")
    text = host.run("doctor").stdout
    assert "Jetson/Tegra, L4T R36.4.0: judged by libcuda (CUDA 12.6 at " in text


def test_the_machine_running_the_tests_is_not_changed(host: SimHost) -> None:
    wsl2(host)
    host.doctor_json()
    assert not os.path.exists(WSL_LIB)
    assert not os.path.exists("/dev/dxg")
