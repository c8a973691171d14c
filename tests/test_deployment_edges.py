"""Edges of issue 21's deployments that a review found: each a case where the doctor said what is not so, or a fix
that could not resolve its finding. Pure: EnvBuilder environments judged in process."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.environment import READS, SCHEMA_VERSION, Driver, Environment, KernelDriver, Pin, State
from pytest_cudnn.frameworks.torch import FRAMEWORK
from pytest_cudnn.frameworks.torch.reading import probe_torch

from .envbuilder import EnvBuilder, gpu
from .test_fixes_resolve import torch_215_without_its_runtime


def _codes(env: Environment) -> list[str]:
    return [f.code for f in judge_environment(env).findings]


def test_an_old_branch_the_table_does_not_name_is_end_of_life_for_forward_compatibility() -> None:
    b = EnvBuilder().with_forward_compat(kernel="470.256.02", kernel_cuda=11040)
    b.runtime("/usr/local/cuda-13.0/lib64/libcudart.so.13", 13000, driver_raw=13000, status=803)
    assert "forward-compat-unsupported-branch" in _codes(b.build())


def test_a_driver_upgraded_without_a_reboot_is_not_forward_compatibility() -> None:
    b = EnvBuilder()
    b.driver = Driver(State.ERROR, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "Driver/library version mismatch",
                      18, None, None, None, None, ())  # fmt: skip
    b.cuda_driver = dataclasses.replace(
        b.cuda_driver, real_path="/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15", version_raw=12080, version="12.8"
    )
    b.kernel = KernelDriver("550.54.15", None, ("nvidia0", "nvidiactl"))
    b.runtime("/usr/local/cuda-12.4/lib64/libcudart.so.12", 12040, driver_raw=12080, status=803)
    codes = _codes(b.build())
    assert "driver-module-mismatch" in codes
    assert [c for c in codes if c.startswith("forward-compat")] == []


def test_a_compat_package_of_the_kernels_own_major_is_not_fixed_by_an_older_driver() -> None:
    b = EnvBuilder().with_forward_compat(kernel="550.54.15", kernel_cuda=12040, compat=12080, compat_driver="570.86.15")
    b.runtime("/usr/local/cuda-12.8/lib64/libcudart.so.12", 12080, driver_raw=12080, status=803)
    fixes = [f.fix for f in judge_environment(b.build()).findings if f.code.startswith("forward-compat")]
    assert fixes
    assert not any("525.60.13" in fix for fix in fixes)  # the host already runs 550


def test_a_geforce_whose_compat_libcuda_answers_is_not_refused_by_its_name_alone() -> None:
    b = EnvBuilder().with_forward_compat().with_gpus(gpu(name="NVIDIA GeForce RTX 4090", cc="8.9"))
    assert b.cuda_driver.init_status == 0  # cuInit answered: the driver says it works
    assert "forward-compat-unsupported-gpu" not in _codes(b.build())


def test_gpus_hidden_by_nvidia_visible_devices_none_are_named() -> None:
    b = EnvBuilder.healthy().with_gpus()  # "none" still mounts NVML and libcuda, and NVML lists no GPU
    b.cuda_driver = dataclasses.replace(b.cuda_driver, init_status=100, device_count=None)
    b.variables["NVIDIA_VISIBLE_DEVICES"] = "none"
    assert "container-gpus-hidden" in _codes(b.build())


def test_a_frameworks_cause_in_a_container_is_the_containers() -> None:
    b = EnvBuilder.healthy().without_driver()
    b.variables["NVIDIA_VISIBLE_DEVICES"] = "all"
    b.variables["NVIDIA_DRIVER_CAPABILITIES"] = "utility"
    diagnosis = judge_environment(b.build())
    tf = diagnosis.framework("tensorflow")
    assert tf is not None
    assert tf.cause == "container-capabilities-missing"
    assert diagnosis.verdict.summary.startswith("cannot run GPU work: NVIDIA_DRIVER_CAPABILITIES='utility'")


def test_a_cuda_13_cudnn_wheel_is_never_asked_for_a_release_it_never_had() -> None:
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.with_gpus(gpu(name="Tesla V100-SXM2-16GB", cc="7.0"))
    wheel = "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9"
    b.cudnn(wheel, "9.26.0", 13000, rank=0)
    b.distribution("nvidia-cudnn-cu13", "9.26.0.51")
    (found,) = [f for f in judge_environment(b.build()).findings if f.code == "cudnn-gpu-unsupported"]
    # nvidia-cudnn-cu13's first release is 9.12.0.46: "<9.11" leaves nothing for pip to install.
    assert found.requirement is None
    assert found.fix.startswith("nvidia-cudnn-cu13 has no release below 9.11 (its first is 9.12.0.46;")


def test_torchs_runtime_requirement_follows_its_cuda_toolkit_pin() -> None:
    b = torch_215_without_its_runtime()
    pins = (
        Pin("cuda-toolkit[cudart]==13.2.2", "cuda-toolkit", "==13.2.2", "13.2.2"),
        Pin("nvidia-cudnn-cu13==9.26.0.51", "nvidia-cudnn-cu13", "==9.26.0.51", "9.26.0.51"),
    )
    b.frameworks[0] = dataclasses.replace(b.frameworks[0], version="2.15.0", pins=pins)
    b.distribution("cuda-toolkit", "13.2.2")
    requirements = {f.requirement for f in judge_environment(b.build()).findings if f.requirement}
    assert requirements == {"nvidia-cuda-runtime==13.2.86.*"}
    fixes = [f.fix for f in judge_environment(b.build()).findings if f.requirement]
    assert all('pip install "nvidia-cuda-runtime==13.2.86.*"' in fix for fix in fixes)


def test_a_torch_without_a_record_naming_its_objects_is_not_called_broken(tmp_path: Path) -> None:
    # Windows names them torch_cuda.dll; a copy planted by hand has no RECORD: neither is a broken install.
    package = tmp_path / "torch"
    (package / "lib").mkdir(parents=True)
    (package / "version.py").write_text("__version__ = '2.5.1+cu124'\ncuda = '12.4'\n")
    (package / "lib" / "torch_cuda.dll").write_bytes(b"MZ")
    assert probe_torch([str(tmp_path)], (), FRAMEWORK.import_objects).objects == ()


def test_snapshots_are_written_at_version_4_and_versions_1_to_3_still_load() -> None:
    assert (SCHEMA_VERSION, READS) == (4, (1, 2, 3, 4))
    data = EnvBuilder.healthy().build().to_json()
    del data["libraries"]  # written from version 3 on: an older file has none
    del data["platform"]  # written from version 4 on
    for version in (1, 2, 3):
        loaded = Environment.from_json({**data, "schema_version": version})
        assert (loaded.libraries, loaded.platform) == ((), None)
