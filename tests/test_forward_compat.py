"""CUDA forward compatibility and container causes (issue 21): the pure rules as tables, the judgement on built
environments, and the probe's reading of the kernel's files."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn.compat import forward as facts
from pytest_cudnn.compat.sources import SOURCES
from pytest_cudnn.diagnosis import Severity, diagnose, judge_environment
from pytest_cudnn.environment import Environment, KernelDriver
from pytest_cudnn.probe.kernel import parse_module_version, read_kernel_driver
from pytest_cudnn.report import doctor_text

from .envbuilder import EnvBuilder
from .test_diagnosis import container, forward


@pytest.mark.parametrize(
    ("name", "supported"),
    [
        ("NVIDIA H100 80GB HBM3", True),
        ("NVIDIA A100-SXM4-40GB", True),
        ("Tesla T4", True),
        ("NVIDIA L40S", True),
        ("Tesla V100-SXM2-16GB", True),
        ("NVIDIA GeForce RTX 4090", False),
        ("NVIDIA GeForce GTX 1080 Ti", False),
        ("NVIDIA TITAN RTX", False),
        ("NVIDIA RTX A6000", None),  # a Server Ready SKU or not: the runtime's answer decides
        ("", None),
        (None, None),
    ],
)
def test_which_gpus_nvidia_lets_run_forward_compatibility(name: str | None, supported: bool | None) -> None:
    assert facts.forward_compatible_gpu(name) is supported


_DAY = datetime.date


@pytest.mark.parametrize(
    ("driver", "on", "branch", "supported"),
    [
        # 615 edition, Table 2: R535 Long Term Support Branch, end of life June 2026 (supported through June 30).
        ("535.104.05", _DAY(2026, 5, 1), 535, True),
        ("535.104.05", _DAY(2026, 6, 30), 535, True),
        ("535.104.05", _DAY(2026, 7, 1), 535, False),
        ("535.104.05", _DAY(2026, 11, 29), 535, False),
        # The 580-era edition: R570 Production Branch, end of life February 2026; the 615 edition lists it no more.
        ("570.86.15", _DAY(2026, 2, 28), 570, True),
        ("570.86.15", _DAY(2026, 3, 1), 570, False),
        ("580.65.06", _DAY(2026, 11, 29), 580, True),
        ("580.65.06", _DAY(2028, 6, 30), 580, True),
        ("580.65.06", _DAY(2028, 7, 1), 580, False),
        ("595.45.04", _DAY(2026, 11, 29), 595, True),
        ("595.45.04", _DAY(2027, 4, 1), 595, False),
        # R610 New Feature Branch: August 2026 (615 edition); the 620 edition lists no New Feature Branch.
        ("610.30.02", _DAY(2026, 8, 31), 610, True),
        ("610.30.02", _DAY(2026, 9, 1), 610, False),
        ("620.10.01", _DAY(2026, 11, 29), 620, True),
        ("620.10.01", _DAY(2029, 9, 30), 620, True),
        ("620.10.01", _DAY(2029, 10, 1), 620, False),
        ("550.54.15", _DAY(2026, 11, 29), 550, False),
        ("525.60.13", _DAY(2026, 5, 1), 525, False),
        ("470.82.01", _DAY(2026, 11, 29), 470, False),  # below the newest listed branch: "all other ... end of life"
        ("615.20.01", _DAY(2026, 11, 29), 615, False),  # a New Feature Branch the 620 edition does not list
        # No day known: the newest edition's listing alone (R580, R595, R620).
        ("535.104.05", None, 535, False),
        ("580.65.06", None, 580, True),
        ("610.30.02", None, 610, False),
        ("620.10.01", None, 620, True),
        ("999.1", _DAY(2026, 11, 29), None, None),  # newer than any the table names: not judged
        ("nonsense", _DAY(2026, 11, 29), None, None),
        (None, _DAY(2026, 11, 29), None, None),
    ],
)
def test_kernel_driver_branches_as_nvidia_lists_them_on_a_day(
    driver: str | None, on: datetime.date | None, branch: int | None, supported: bool | None
) -> None:
    found = facts.branch_of(driver)
    assert (found.number if found else None, facts.supported_on(found, on) if found else None) == (branch, supported)
    if found is not None:
        assert found.source in SOURCES


@pytest.mark.parametrize(
    ("on", "names"),
    [
        (_DAY(2026, 11, 29), [580, 595, 620]),
        (_DAY(2026, 5, 1), [535, 580, 595, 620]),  # R570 ended in February, R535 not until June
        (_DAY(2026, 1, 15), [535, 570, 580, 595, 620]),
        (_DAY(2026, 7, 1), [580, 595, 620]),
        (_DAY(2027, 4, 1), [580, 620]),
        (_DAY(2028, 7, 1), [620]),
        (_DAY(2029, 10, 1), []),
        (None, [580, 595, 620]),  # no day: the newest edition's rows
    ],
)
def test_the_branches_to_move_to_are_the_long_lived_ones_supported_that_day(
    on: datetime.date | None, names: list[int]
) -> None:
    found = facts.supported_branches(on)
    assert [b.number for b in found] == names
    assert all(facts.supported_on(b, on) and b.designation != "New Feature Branch" for b in found)


@pytest.mark.parametrize(
    ("path", "folder"),
    [
        ("/usr/local/cuda-13.0/compat/libcuda.so.1", "/usr/local/cuda-13.0/compat"),
        ("/usr/local/cuda-12.8/compat/libcuda.so.570.124.06", "/usr/local/cuda-12.8/compat"),
        ("/opt/conda/pkgs/cuda-compat-impl-580.65.06/lib/libcuda.so.1", "/opt/conda/pkgs/cuda-compat-impl-580.65.06"),
        ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", None),
        ("/compat-tools/libcuda.so.1", None),
        (None, None),
    ],
)
def test_a_compat_libcuda_is_told_by_its_folder(path: str | None, folder: str | None) -> None:
    assert facts.compat_folder(path) == folder


def test_every_forward_and_container_fact_cites_a_source() -> None:
    assert facts.GPU_RULE.source in SOURCES
    assert facts.ERRORS_SOURCE in SOURCES
    assert "Data Center GPUs" in SOURCES["cuda-forward-compat"]
    assert "R550" in SOURCES["datacenter-driver-branches"]
    # Each edition replaces the table: every end of life the rows keep is quoted, with the edition's address.
    for edition in ("620", "615"):
        assert f"/drivers/{edition}/supported-drivers" in SOURCES["datacenter-driver-branches"]
    for branch in facts.BRANCHES.values():
        ended = facts.end_of_life_text(branch)
        assert ended is None or f"R{branch.number}" in SOURCES["datacenter-driver-branches"]
        assert ended is None or ended in SOURCES["datacenter-driver-branches"]
    assert "804" in SOURCES["cuda-compat-errors"]
    assert "compute: required for CUDA" in SOURCES["container-toolkit-variables"]


@pytest.mark.parametrize(
    ("text", "version"),
    [
        (
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
            "GCC version:  gcc version 12.2.0\n",
            "535.104.05",
        ),
        (
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@U16)\n",
            "580.65.06",
        ),
        ("NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.54.15\n", "550.54.15"),
        # Read on the lent H200 (2026-11-26), the open kernel modules of driver 580.159.04, as it writes it.
        (
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
            "GCC version:  gcc version 15.3.0 (GCC) \n",
            "580.159.04",
        ),
        ("GCC version: 12\n", None),
        ("", None),
    ],
)
def test_the_kernel_modules_version_is_read_as_proc_writes_it(text: str, version: str | None) -> None:
    assert parse_module_version(text) == version


def test_the_kernel_driver_is_read_from_files_never_opening_a_device(tmp_path: Path) -> None:
    proc = tmp_path / "version"
    proc.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 2023\n")
    dev = tmp_path / "dev"
    dev.mkdir()
    # The lent H200's /dev held nvidia0 nvidia-caps nvidiactl nvidia-uvm nvidia-uvm-tools.
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm", "null"):
        (dev / name).write_text("")  # a device opened would be read: these are plain files, and nothing reads them
    (dev / "nvidia0").chmod(0)
    assert read_kernel_driver(str(proc), str(dev)) == KernelDriver(
        "535.104.05", None, ("nvidia-uvm", "nvidia0", "nvidiactl")
    )
    gone = read_kernel_driver(str(tmp_path / "absent"), str(tmp_path / "no-dev"))
    assert gone.module_version is None
    assert gone.device_nodes is None
    assert gone.module_reason
    assert "does not exist" in gone.module_reason


def test_a_fifo_in_place_of_the_version_file_does_not_block(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "version"
    os.mkfifo(fifo)
    found = read_kernel_driver(str(fifo), str(tmp_path))
    assert found.module_version is None
    assert found.module_reason
    assert str(fifo) in found.module_reason


def _codes(env: Environment) -> list[str]:
    return [f.code for f in diagnose(env)]


def test_forward_compatibility_that_works_is_info_naming_the_compat_library() -> None:
    diagnosis = judge_environment(forward()())
    assert diagnosis.verdict.ok, diagnosis.findings
    [finding] = [f for f in diagnosis.findings if f.code == "forward-compat-in-use"]
    assert finding.severity is Severity.INFO
    assert "/usr/local/cuda-13.0/compat/libcuda.so.1" in finding.summary
    assert "535.104.05" in finding.summary
    assert any("libcuda.so.580.65.06" in e and "/usr/local/cuda-13.0/compat" in e for e in finding.evidence)
    assert not [f for f in diagnosis.findings if f.severity is Severity.ERROR]


def test_804_on_a_geforce_is_one_error_that_says_so_with_the_fix() -> None:
    findings = diagnose(forward("NVIDIA GeForce RTX 4090", status=804)())
    errors = [f for f in findings if f.severity is Severity.ERROR]
    assert [f.code for f in errors] == ["forward-compat-unsupported-gpu"]
    [error] = errors
    assert "GeForce RTX 4090" in error.summary
    assert "804" in error.summary
    assert "580.65.06" in error.fix
    assert "/usr/local/cuda-13.0/compat" in error.fix
    assert any("Data Center GPUs" in e for e in error.evidence)


def test_an_end_of_life_branch_under_a_compat_libcuda_is_the_error_not_the_driver_age() -> None:
    findings = diagnose(forward("NVIDIA A100-SXM4-80GB", "550.54.15", 12040, status=803)())
    errors = [f for f in findings if f.severity is Severity.ERROR]
    assert [f.code for f in errors] == ["forward-compat-unsupported-branch"]
    assert "R550" in errors[0].summary
    assert "end of life" in errors[0].summary
    assert any("803" in e for e in errors[0].evidence)


def _compat_host(
    kernel: str, probed_at: str, status: int = 803, kernel_cuda: int = 12020, compat_driver: str = "580.65.06"
) -> Environment:
    """A forward-compatibility host on kernel driver ``kernel`` probed at ``probed_at``, whose CUDA runtime
    answers ``status``: the compat package is CUDA 13.0 of driver 580 over an older kernel driver, CUDA 13.4 of
    driver 630 over a newer one."""
    compat = 13000 if compat_driver.startswith("580.") else 13040
    b = EnvBuilder().with_forward_compat(
        kernel=kernel, kernel_cuda=kernel_cuda, compat=compat, compat_driver=compat_driver
    )
    cuda = f"{compat // 1000}.{compat % 1000 // 10}"
    b.runtime(f"/usr/local/cuda-{cuda}/lib64/libcudart.so.13", compat, driver_raw=compat, status=status)
    return dataclasses.replace(b.build(), probed_at=probed_at)


def _utc_day(text: str) -> datetime.date | None:
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(datetime.timezone.utc).date()
    except ValueError:
        return None


_NOV_29 = "2026-11-29T10:00:00+00:00"
_TODAY = "R580, R595 or R620"
_NEWER = {"kernel_cuda": 13020, "compat_driver": "630.10.01"}


@pytest.mark.parametrize(
    ("kernel", "probed_at", "more", "ended", "fix"),
    [
        # R535 (615 edition: end of life June 2026) before and after its end.
        ("535.104.05", "2026-05-01T00:00:00+00:00", {}, None, None),
        ("535.104.05", "2026-06-30T23:59:59+00:00", {}, None, None),
        ("535.104.05", _NOV_29, {}, "R535 ended in June 2026", _TODAY),
        ("535.104.05", "2026-11-29T10:00:00Z", {}, "R535 ended in June 2026", _TODAY),
        # Judged in UTC: 00:30 on July 1 at +02:00 is still June 30 in UTC.
        ("535.104.05", "2026-07-01T00:30:00+02:00", {}, None, None),
        # R570: February 2026 (the 580-era edition).
        ("570.86.15", "2026-03-15T00:00:00+00:00", {}, "R570 ended in February 2026", "R535, R580, R595 or R620"),
        ("570.86.15", _NOV_29, {}, "R570 ended in February 2026", _TODAY),
        # R610, a New Feature Branch: August 2026 (615 edition).
        ("610.30.02", "2026-08-31T12:00:00+00:00", _NEWER, None, None),
        ("610.30.02", "2026-09-01T00:00:00+00:00", _NEWER, "R610 ended in August 2026", _TODAY),
        ("620.10.01", _NOV_29, _NEWER, None, None),
        # Ended with no month named: "all other previous driver branches not listed ... are end of life".
        (
            "550.54.15",
            "2026-05-01T00:00:00+00:00",
            {"kernel_cuda": 12040},
            "R550 as end of life",
            "R535, R580, R595 or R620",
        ),
        ("550.54.15", _NOV_29, {"kernel_cuda": 12040}, "R550 as end of life", _TODAY),
        # A time that cannot be read: judged by the newest edition's listing, which no longer names R535.
        ("535.104.05", "yesterday", {}, "R535 ended in June 2026", _TODAY),
        ("535.104.05", "", {}, "R535 ended in June 2026", _TODAY),
    ],
)
def test_a_branch_is_judged_as_of_when_the_host_was_probed(
    kernel: str, probed_at: str, more: dict[str, Any], ended: str | None, fix: str | None
) -> None:
    env = _compat_host(kernel, probed_at, **more)
    found = [f for f in diagnose(env) if f.code == "forward-compat-unsupported-branch"]
    if ended is None:
        assert found == []
        return
    [finding] = found
    assert finding.severity is Severity.ERROR
    assert f"R{kernel.split('.', maxsplit=1)[0]}" in finding.summary
    assert ended in finding.summary
    assert f"move the host to a supported branch ({fix})" in finding.fix
    # The fix never names a branch that has ended on that day.
    day = _utc_day(probed_at)
    for number in re.findall(r"\bR(\d+)\b", finding.fix):
        named = facts.branch_of(number)
        assert named is not None
        assert facts.supported_on(named, day), (number, probed_at)


def test_a_replayed_snapshot_is_judged_as_of_when_it_was_probed() -> None:
    for probed_at, expected in (("2026-05-01T00:00:00+00:00", []), (_NOV_29, ["forward-compat-unsupported-branch"])):
        env = Environment.from_json(json.loads(_compat_host("535.104.05", probed_at).dumps()))
        assert [c for c in _codes(env) if c == "forward-compat-unsupported-branch"] == expected


def test_forward_compatibility_that_works_on_r535_is_in_use_whenever_it_was_probed() -> None:
    for probed_at in ("2026-05-01T00:00:00+00:00", _NOV_29):
        codes = _codes(_compat_host("535.104.05", probed_at, status=0))
        assert "forward-compat-in-use" in codes
        assert "forward-compat-unsupported-branch" not in codes


def test_a_compat_libcuda_is_told_by_its_file_when_nvml_reports_its_cuda() -> None:
    # nvmlSystemGetCudaDriverVersion may answer for the libcuda that loads: the file names still differ.
    b = EnvBuilder().with_forward_compat()
    b.driver = dataclasses.replace(b.driver, cuda_version_raw=13000, cuda_version="13.0")
    b.runtime("/usr/local/cuda-13.0/lib64/libcudart.so.13", 13000, driver_raw=13000)
    [finding] = [f for f in diagnose(b.build()) if f.code == "forward-compat-in-use"]
    assert "kernel driver 535.104.05, read from /proc/driver/nvidia/version" in finding.evidence


def test_a_libcuda_of_the_kernels_own_driver_is_no_forward_compatibility() -> None:
    b = EnvBuilder().with_forward_compat(compat=12020, compat_driver="535.104.05")
    b.runtime("/usr/local/cuda-12.2/lib64/libcudart.so.12", 12020, driver_raw=12020)
    assert not [code for code in _codes(b.build()) if code.startswith("forward-compat")]


def test_a_compat_libcuda_too_old_for_the_runtime_is_still_too_old() -> None:
    b = EnvBuilder().with_forward_compat(compat=12080, compat_driver="570.124.06")
    b.runtime("/usr/local/cuda-13.0/lib64/libcudart.so.13", 13000, driver_raw=12080, status=35)
    assert "driver-too-old-for-cuda" in _codes(b.build())


def test_a_container_without_compute_names_the_variable_first() -> None:
    diagnosis = judge_environment(container({"NVIDIA_DRIVER_CAPABILITIES": "utility"})())
    assert diagnosis.findings[0].code == "container-capabilities-missing"
    assert "'compute'" in diagnosis.findings[0].summary
    assert "libcuda.so.1" in diagnosis.findings[0].summary
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in diagnosis.findings[0].fix
    assert not diagnosis.verdict.ok


def test_the_container_variables_are_shown_where_set_and_kept_in_snapshots() -> None:
    env = container({"NVIDIA_DRIVER_CAPABILITIES": "utility", "NVIDIA_VISIBLE_DEVICES": "all"})()
    replayed = Environment.from_json(json.loads(env.dumps()))
    assert replayed.variables["NVIDIA_DRIVER_CAPABILITIES"] == "utility"
    text = doctor_text(judge_environment(replayed))
    assert "  NVIDIA_DRIVER_CAPABILITIES utility" in text.splitlines()
    assert "NVIDIA_VISIBLE_DEVICES" not in doctor_text(judge_environment(EnvBuilder.healthy().build()))


def test_the_kernel_driver_and_libcuda_real_file_round_trip_and_old_snapshots_load() -> None:
    env = forward()()
    data = json.loads(env.dumps())
    assert Environment.from_json(data) == env
    del data["kernel"], data["cuda_driver"]["real_path"]
    old = Environment.from_json(data)
    assert old.kernel is None
    assert old.cuda_driver.real_path == ""
