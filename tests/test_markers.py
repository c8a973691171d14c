"""Requirement markers, table-tested without pytest runs: what is refused, how a requirement is said back, and
what a failed requirement gives as its cause and its why."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_cudnn.diagnosis import diagnose, judge_environment, visible_gpus
from pytest_cudnn.environment import Environment, Failure, GpuPair, State, Via
from pytest_cudnn.markers import InvalidMarker, Outcome, judge, parse_marker

from .envbuilder import SITE, EnvBuilder, gpu, rpath_load


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "error"),
    [
        ("requires_cudnn", ("",), {}, "spec '' is empty"),
        ("requires_cudnn", (" ",), {}, "spec ' ' is empty"),
        ("requires_cudnn", (",",), {}, "spec ',' is empty"),
        ("requires_cuda", (" , ",), {}, "is empty"),
        ("requires_driver", ("",), {}, "is empty"),
        ("requires_tensorflow", ("",), {}, "is empty"),
        ("requires_gpu", (), {"compute_capability": ""}, "compute_capability '' is empty"),
        ("requires_gpu", (), {"name": ""}, "name must be a non-empty glob"),
        ("requires_gpu", (), {"name": "   "}, "name must be a non-empty glob"),
        ("requires_gpu", (), {"memory": "9" * 400 + "TiB"}, "is larger than any GPU's memory"),
        ("requires_gpu", (), {"memory": 2**70}, "is larger than any GPU's memory"),
        ("requires_gpu", (), {"memory": "1e3GiB"}, "is not a size such as"),
        ("requires_gpu", (), {"memory": "-1GiB"}, "is not a size such as"),
        ("requires_cudnn", (">=" + "9" * 5000,), {}, "holds a number too long for a version"),
        ("requires_cudnn", (">=9",), {"framework": "pytorch"}, "framework must be one of 'torch', 'jax'"),
        ("requires_driver", (">=535",), {"framework": "torch"}, "unknown argument 'framework'"),
        ("requires_torch", (), {"gpu": "yes"}, "gpu must be True or False"),
        ("requires_jax", ("0.4", "0.5"), {}, "takes at most one specifier"),
        ("requires_gpu", (), {"healthy": "yes"}, "healthy must be True or False"),
        ("requires_gpu", (), {"peer_access": True}, "give count=2 or more"),
        ("requires_gpu", (2,), {"interconnect": "pcie"}, "interconnect must be 'nvlink'"),
        ("requires_gpu", (), {"peer": True}, "unknown argument 'peer'"),
    ],
)
def test_a_marker_that_would_skip_forever_or_crash_is_refused(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], error: str
) -> None:
    with pytest.raises(InvalidMarker, match=None) as caught:
        parse_marker(name, args, kwargs)
    assert error in str(caught.value)


@pytest.mark.parametrize(
    ("memory", "said"),
    [("100GB", "100GB free"), ("1.5 GiB", "1.5 GiB free"), (2**30, "1.0 GiB free"), ("512MiB", "512MiB free")],
)
def test_a_size_is_said_back_as_the_marker_wrote_it(memory: object, said: str) -> None:
    assert parse_marker("requires_gpu", (), {"memory": memory}).describe() == f"requires 1 GPU, {said}"


def tf23_with_cudnn(cudnn: str, **changes: object) -> Environment:
    """TensorFlow 2.3 (which loads libcudnn.so.7, absent: an error finding) and a cuDNN of another major."""
    b = EnvBuilder().with_driver(version="450.80.02", cuda_version_raw=11000).with_gpus(gpu(name="Tesla T4", cc="7.5"))
    b.with_tensorflow("2.3.1", "10.1", "7", capabilities=("sm_75",))
    b.runtime("/usr/local/cuda-10.1/lib64/libcudart.so.10.1", 10010, driver_raw=11000)
    b.cudnn("/opt/cudnn/lib/libcudnn.so.8", cudnn, 10010)
    return b.change(1, **changes).build()


def _judge(env: Environment, name: str, *args: Any, **kwargs: Any) -> Outcome:
    return judge(parse_marker(name, args, kwargs), judge_environment(env))


def test_a_version_skip_is_caused_by_the_version_and_blames_no_unrelated_finding() -> None:
    outcome = _judge(tf23_with_cudnn("8.0.5"), "requires_cudnn", ">=8.9")
    assert outcome.cause == "cudnn-version"
    assert outcome.message == (
        "requires cuDNN >=8.9; found cuDNN 8.0.5 at /opt/cudnn/lib/libcudnn.so.8 (via LD_LIBRARY_PATH)"
    )
    assert "7.6" not in outcome.message  # TensorFlow's need is not this requirement's


def test_a_version_skip_stays_a_version_skip_when_the_copy_is_also_broken() -> None:
    outcome = _judge(tf23_with_cudnn("8.9.4", create_status=1001), "requires_cudnn", ">=9")
    assert outcome.cause == "cudnn-version"


def test_a_matching_copy_that_cannot_run_fails_with_its_finding() -> None:
    env = tf23_with_cudnn("8.9.7", state=State.ERROR, failure=Failure.UNLOADABLE, reason="invalid ELF header")
    outcome = _judge(env, "requires_cudnn", ">=8.9")
    assert not outcome.ok
    assert outcome.cause == "cudnn-not-loadable"
    assert "; cuDNN at /opt/cudnn/lib/libcudnn.so.8 cannot be loaded; fix: reinstall cuDNN" in outcome.message


def two_runtimes(driver: str = "550.54.15") -> Environment:
    """No framework: a CUDA 12.4 and a CUDA 13.0 runtime on the loader path, on driver ``driver``."""
    b = EnvBuilder().with_driver(version=driver, cuda_version_raw=12040)
    b.runtime("/opt/cuda-12.4/lib64/libcudart.so.12", 12040)
    b.runtime("/opt/cuda-13.0/lib64/libcudart.so.13", 13000, status=0 if driver >= "580" else 35)
    return b.build()


def test_a_cuda_requirement_passes_only_on_a_copy_that_can_run() -> None:
    env = two_runtimes()  # driver 550 runs CUDA 12 but is too old for CUDA 13
    assert _judge(env, "requires_cuda", ">=12").ok  # the 12.4 copy runs
    too_new = _judge(env, "requires_cuda", ">=13")
    assert not too_new.ok
    assert too_new.cause == "driver-too-old-for-cuda"
    assert "found CUDA runtime 13.0 at /opt/cuda-13.0/lib64/libcudart.so.13 (via LD_LIBRARY_PATH)" in too_new.message
    assert "fix: install a driver >= " in too_new.message
    assert _judge(two_runtimes("580.65.06"), "requires_cuda", ">=13").ok


def test_a_runtime_that_finds_no_driver_fails_its_requirement_although_nvml_answers() -> None:
    b = EnvBuilder().with_gpus(gpu())
    b.runtime("/opt/cuda/lib64/libcudart.so.12", 12040, driver_raw=0, status=35)
    outcome = _judge(b.build(), "requires_cuda", ">=12")
    assert outcome.cause == "cuda-runtime-cannot-run"
    assert "finds no usable driver (cudaDriverGetVersion says 0), although NVML reports driver" in outcome.message


def test_mig_instances_skip_with_the_doctors_own_words() -> None:
    b = EnvBuilder.healthy()
    b.variables["CUDA_VISIBLE_DEVICES"] = "MIG-11111111-2222-3333-4444-555555555555"
    env = b.build()
    outcome = _judge(env, "requires_gpu")
    assert outcome.cause == "cuda-visible-devices-mig"
    [finding] = [f for f in diagnose(env) if f.code == "cuda-visible-devices-mig"]
    assert finding.summary in outcome.message


def test_messages_from_a_hostile_environment_are_printable() -> None:
    b = EnvBuilder().with_gpus(gpu(name="A100\x1b]0;pwned\x07\r\n"))
    outcome = _judge(b.build(), "requires_gpu", compute_capability=">=9.0")
    assert outcome.message.isprintable()
    assert "A100\\x1b]0;pwned\\x07\\r\\n" in outcome.message


def test_a_long_gpu_list_is_summarised_in_a_skip_reason() -> None:
    env = EnvBuilder().with_gpus(*(gpu(i) for i in range(100))).build()
    outcome = _judge(env, "requires_gpu", 200)
    assert outcome.cause == "gpu-count"
    assert "and 92 more" in outcome.message
    assert len(outcome.message) < 500


def test_a_copy_too_broken_to_tell_its_version_fails_for_what_broke_it() -> None:
    env = tf23_with_cudnn(
        "8.9.7", version=None, state=State.ERROR, failure=Failure.CRASHED, siblings_missing=("libcudnn_ops_infer.so.8",)
    )
    outcome = _judge(env, "requires_cudnn", ">=8")
    assert outcome.cause == "cudnn-incomplete"
    assert "is missing its sub-libraries" in outcome.message


TORCH_CUDART = f"{SITE}/nvidia/cu13/lib/libcudart.so.13"
TORCH_CUDNN = f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9"
JAX_CUDNN = f"{SITE}/jax-wheels/nvidia/cudnn/lib/libcudnn.so.9"
SYSTEM_CUDNN = "/usr/local/cuda-13.0/lib/libcudnn.so.9"


def torch_venv(driver: str = "580.65.06", *, jax: bool = False) -> Environment:
    """A healthy torch 2.15 venv (cuDNN 9.26.0 and CUDA 13.2 from its wheels, through its RPATH), a system
    CUDA 13.0 toolkit with cuDNN 9.1.0 on LD_LIBRARY_PATH, and with ``jax`` a JAX whose preload finds cuDNN 9.8."""
    b = EnvBuilder().with_driver(version=driver, cuda_version_raw=13000).with_gpus(gpu(cc="8.0"))
    b.runtime("/usr/local/cuda-13.0/lib/libcudart.so.13", 13000, driver_raw=13000)
    b.cudnn(SYSTEM_CUDNN, "9.1.0", 13000)
    b.runtime(TORCH_CUDART, 13020, (Via.PIP_WHEEL,), rank=None, driver_raw=13000)
    b.cudnn(TORCH_CUDNN, "9.26.0", 13000, (Via.PIP_WHEEL,), rank=None)
    b.with_torch(cudnn="9.26.0", loads=(rpath_load(TORCH_CUDART), rpath_load(TORCH_CUDNN)))
    if jax:
        b.cudnn(JAX_CUDNN, "9.8.0", 12080, (Via.PIP_WHEEL,), rank=None)
        plugin = f"{SITE}/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
        b.with_jax(cudnn="9.8.0", loads=(rpath_load(JAX_CUDNN, plugin, "dlopen"),))
    return b.build()


def test_cudnn_and_cuda_requirements_judge_the_copies_the_framework_loads() -> None:
    # Issue 10: with torch's own 9.26.0, requires_cudnn('>=9.20') skipped with "found no cuDNN the loader can find".
    env = torch_venv()
    assert _judge(env, "requires_cudnn", ">=9.20").ok
    assert _judge(env, "requires_cuda", ">=13.2").ok
    assert _judge(env, "requires_cudnn", ">=9.20", framework="torch").ok
    missed = _judge(env, "requires_cudnn", ">=9.30", framework="torch")
    assert not missed.ok
    assert missed.cause == "cudnn-version"
    assert f"found cuDNN 9.26.0 at {TORCH_CUDNN} (via pip nvidia wheel, loaded by PyTorch 2.15.0+cu132)" in (
        missed.message
    )


def test_a_named_framework_is_judged_by_its_own_copy() -> None:
    env = torch_venv(jax=True)
    assert _judge(env, "requires_cudnn", "<9.10", framework="jax").ok
    refused = _judge(env, "requires_cudnn", ">=9.20", framework="jax")
    assert not refused.ok
    assert JAX_CUDNN in refused.message
    assert "loaded by JAX 0.10.2" in refused.message
    # Unnamed, every installed framework's copy must meet it (the test may use either): JAX's 9.8 and torch's 9.26.
    assert _judge(env, "requires_cudnn", ">=9.8,<10").ok
    for spec, refuser in (("<9.10", "PyTorch 2.15.0+cu132"), (">=9.20", "JAX 0.10.2")):
        unnamed = _judge(env, "requires_cudnn", spec)
        assert (unnamed.ok, unnamed.cause) == (False, "cudnn-version"), unnamed
        assert f"loaded by {refuser}" in unnamed.message
        assert "without framework=, every installed framework's cuDNN must meet it: name one" in unnamed.message
    absent = _judge(torch_venv(), "requires_cudnn", ">=9", framework="jax")
    assert (absent.ok, absent.cause) == (False, "jax-missing")


def test_requires_torch_says_whether_torch_can_run_gpu_work_here() -> None:
    assert _judge(torch_venv(), "requires_torch", ">=2.15").ok
    too_old = _judge(torch_venv("550.54.15"), "requires_torch")
    assert (too_old.ok, too_old.cause) == (False, "framework-driver-too-old")
    assert "it loads CUDA runtime 13.2 from" in too_old.message
    assert _judge(torch_venv("550.54.15"), "requires_torch", gpu=False).ok
    assert _judge(torch_venv(), "requires_torch", "<2.15").cause == "torch-version"
    cpu = EnvBuilder().with_driver().with_torch(version="2.15.0+cpu", cuda=None).build()
    assert _judge(cpu, "requires_torch").cause == "framework-cpu-only"
    assert _judge(torch_venv(), "requires_jax").cause == "jax-missing"
    assert _judge(torch_venv(jax=True), "requires_jax", gpu=True).ok


# Each GPU's state and how GPUs reach each other (issue 32) -----------------------------------------------------


def _two_gpus(*pairs: GpuPair, **second: Any) -> Environment:
    b = EnvBuilder.healthy().with_gpus(gpu(0), gpu(1, **second))
    b.driver = dataclasses.replace(b.driver, pairs=pairs)
    return b.build()


def test_requires_gpu_healthy_judges_the_tests_own_gpu() -> None:
    env = _two_gpus(ecc_uncorrected_volatile=3)
    diagnosis = judge_environment(env)
    [first, second] = visible_gpus(env)
    requirement = parse_marker("requires_gpu", (), {"healthy": True})
    assert judge(requirement, diagnosis, first).ok  # the worker given GPU 0 runs it
    skipped = judge(requirement, diagnosis, second)
    assert (skipped.ok, skipped.cause) == (False, "gpu-ecc-uncorrectable")
    assert skipped.message.startswith("requires 1 GPU, healthy; found GPU 1")
    assert "3 uncorrectable ECC errors since the driver loaded" in skipped.message
    assert judge(parse_marker("requires_gpu", (), {}), diagnosis, second).ok  # not asked: not judged


@pytest.mark.parametrize(
    ("pair", "kwargs", "cause"),
    [
        (GpuPair(0, 1, 10, 0, 0, 5), {"peer_access": True}, None),
        (GpuPair(0, 1, 30, 1, 1, 5), {"peer_access": True}, "gpu-peer-access"),
        (GpuPair(0, 1, 0, 0, 0, 0), {"interconnect": "nvlink"}, None),
        (GpuPair(0, 1, 10, 0, 0, 5), {"interconnect": "nvlink"}, "gpu-interconnect"),
        (None, {"peer_access": True}, "gpu-peer-access"),  # not read (an older snapshot): not assumed
    ],
    ids=["p2p", "no-p2p", "nvlink", "pcie-only", "unread"],
)
def test_requires_gpu_peer_access_and_nvlink(pair: GpuPair | None, kwargs: dict[str, Any], cause: str | None) -> None:
    env = _two_gpus(*(() if pair is None else (pair,)))
    outcome = _judge(env, "requires_gpu", 2, **kwargs)
    assert (outcome.ok, outcome.cause) == (cause is None, cause or "")
    if cause == "gpu-peer-access" and pair is not None:
        assert "P2P read chipset not supported, write chipset not supported" in outcome.message
