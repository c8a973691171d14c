"""What the doctor, the header and the step summary show: one wording, printable, summarised where long."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pytest_cudnn.diagnosis import Severity, diagnose, judge_environment, selected_cudnn, selected_runtime, verdict
from pytest_cudnn.environment import BuildFact, Environment, Via
from pytest_cudnn.report import doctor_json, doctor_text, header_lines, markdown_summary

from .envbuilder import SITE, WHEEL_CUDNN, EnvBuilder, gpu, rpath_load

HOSTILE = "A100\x1b[2J\x1b]0;title\x07\r\u202e|<b>*x*</b>`"


def _header(env: Environment, verbose: bool = True) -> list[str]:
    findings = diagnose(env)
    return header_lines(
        judge_environment(env, tuple(findings)),
        runtime=selected_runtime(env),
        cudnn=selected_cudnn(env),
        verbose=verbose,
    )


def huge() -> Environment:
    """10,000 GPUs and a 100 KB CUDA_VISIBLE_DEVICES naming a device that does not exist."""
    b = EnvBuilder.healthy().with_gpus(*(gpu(i) for i in range(10_000)))
    b.variables["CUDA_VISIBLE_DEVICES"] = "0," + "9" * 100_000
    return b.build()


@pytest.mark.slow  # 10,000 GPUs
def test_the_header_summarises_long_lists_and_the_json_keeps_them() -> None:
    env = huge()
    lines = _header(env)
    assert "and 9,996 more" in lines[0]
    assert max(len(line) for line in lines) <= 2100
    findings = diagnose(env)
    document = json.loads(json.dumps(doctor_json(judge_environment(env, tuple(findings)), verdict(findings))))
    assert len(document["environment"]["driver"]["gpus"]) == 10_000
    assert len(document["environment"]["variables"]["CUDA_VISIBLE_DEVICES"]) == 100_002


@pytest.mark.slow  # 10,000 GPUs
def test_a_long_variable_is_clipped_wherever_it_is_echoed() -> None:
    env = huge()
    findings = diagnose(env)
    text = doctor_text(judge_environment(env, tuple(findings)), verdict(findings))
    assert max(len(line) for line in text.splitlines()) < 1000
    assert "(100,002 characters)" in text
    assert all(len(line) < 1000 for line in _header(env))


def test_text_from_a_library_or_a_snapshot_is_printable_everywhere() -> None:
    env = EnvBuilder.healthy().with_gpus(gpu(name=HOSTILE)).build()
    findings = diagnose(env)
    result = verdict(findings)
    for text in (
        doctor_text(judge_environment(env, tuple(findings)), result),
        *_header(env),
        markdown_summary(judge_environment(env, tuple(findings)), []),
    ):
        assert "\x1b" not in text
        assert "\r" not in text
        assert "\u202e" not in text
    assert "A100\\x1b[2J\\x1b]0;title\\x07\\r\\u202e" in doctor_text(judge_environment(env, tuple(findings)), result)


def test_the_step_summary_escapes_every_cell_and_stands_apart() -> None:
    env = EnvBuilder.healthy().with_gpus(gpu(name=HOSTILE)).build()
    findings = diagnose(env)
    summary = markdown_summary(judge_environment(env, tuple(findings)), [("gpu-name", 3, "found GPU 0 a|b")])
    assert summary.startswith("\n### pytest-cudnn\n")
    assert summary.endswith("\n\n")
    assert "<b>" not in summary
    assert "&lt;b&gt;" in summary
    assert "a\\|b" in summary
    for row in (line for line in summary.splitlines() if line.startswith("| GPU ")):
        assert row.count(" | ") == 2, row  # the name's "|" stays inside its cell


def test_one_wording_for_a_gpu() -> None:
    env = EnvBuilder.healthy().with_gpus(gpu(name="Tesla T4", cc="7.5", free=14 * 2**30)).build()
    findings = diagnose(env)
    said = "GPU 0 Tesla T4 (compute capability 7.5, Turing, 14.0 GiB free)"
    assert said in _header(env)[0]
    assert "GPU 0 Tesla T4 (compute capability 7.5, Turing), 14.0 GiB free of" in doctor_text(
        judge_environment(env, tuple(findings)), verdict(findings)
    )
    assert "sm 7.5" not in doctor_text(judge_environment(env, tuple(findings)), verdict(findings))


def test_linux_output_names_linux_libraries() -> None:
    env = EnvBuilder.healthy().without_driver().build()
    findings = diagnose(env)
    text = doctor_text(judge_environment(env, tuple(findings)), verdict(findings)) + "\n".join(_header(env))
    assert "libnvidia-ml.so.1" in text
    assert ".dll" not in text


def test_a_library_tensorflow_finds_through_its_runpath_is_not_said_missing() -> None:
    # The healthy TensorFlow 2.18 venv: its wheels are reached through TensorFlow's RUNPATH, not a plain dlopen.
    env = EnvBuilder.healthy().build()
    findings = diagnose(env)
    text = doctor_text(judge_environment(env, tuple(findings)), verdict(findings))
    assert "the loader finds no copy" not in text
    assert "libcudnn.so.9: a plain dlopen finds no copy; TensorFlow finds " in text
    assert verdict(findings).ok


def test_the_header_has_a_line_per_framework_with_its_build_and_its_verdict() -> None:
    too_old = EnvBuilder().with_driver(version="550.54.15", cuda_version_raw=12040).with_torch().build()
    assert _header(too_old, verbose=False)[2] == (
        "pytest-cudnn: ✗ PyTorch 2.15.0+cu132: CUDA 13.2, kernels sm_75-sm_120: cannot run: PyTorch 2.15.0+cu132 "
        "cannot run here: it is built for CUDA 13.2, which needs driver 580.65.06 or newer; the driver is 550.54.15"
    )
    fits = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000).with_torch().build()
    assert _header(fits, verbose=False)[2] == (
        "pytest-cudnn: ✓ PyTorch 2.15.0+cu132: CUDA 13.2, kernels sm_75-sm_120: can run GPU work here"
    )
    cpu = EnvBuilder().with_torch(version="2.15.0+cpu", cuda=None).build()
    assert _header(cpu, verbose=False)[2] == (
        "pytest-cudnn: ✗ PyTorch 2.15.0+cpu: CPU-only build: it will not use the GPU"
    )


def test_the_header_names_the_copies_a_framework_loads_and_how_they_were_found() -> None:
    cudart, cudnn = f"{SITE}/nvidia/cu13/lib/libcudart.so.13", f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9"
    b = EnvBuilder().with_driver(version="550.54.15", cuda_version_raw=12040)
    b.runtime(cudart, 13020, (Via.PIP_WHEEL,), rank=None, driver_raw=12040, status=35)
    b.cudnn(cudnn, "9.26.0", 13020, (Via.PIP_WHEEL,), rank=None)
    env = b.with_torch(cudnn="9.26.0", loads=(rpath_load(cudart), rpath_load(cudnn))).build()
    line = _header(env, verbose=False)[2]
    assert line == (
        "pytest-cudnn: ✗ PyTorch 2.15.0+cu132: CUDA 13.2 (wheel, DT_RPATH), cuDNN 9.26.0 (wheel, DT_RPATH), "
        "kernels sm_75-sm_120: "
        f"cannot run: PyTorch 2.15.0+cu132 cannot run here: it loads CUDA runtime 13.2 from {cudart} (wheel, through "
        "DT_RPATH of libtorch_cuda.so), which needs driver 580.65.06 or newer; the driver is 550.54.15"
    )
    findings = diagnose(env)
    # One error for one cause: the runtime's own driver rule leaves torch's copy to the framework rule.
    assert [f.code for f in findings if f.severity is Severity.ERROR] == ["framework-driver-too-old"]
    text = doctor_text(judge_environment(env, tuple(findings)), verdict(findings))
    assert f"loads libcudnn.so.9 from {cudnn}  (wheel, through DT_RPATH of libtorch_cuda.so)" in text
    assert "verdict: cannot run: PyTorch 2.15.0+cu132 cannot run here" in text


def test_a_library_torch_finds_through_its_rpath_is_not_said_missing() -> None:
    # torch's libtorch_cuda.so gets the cuDNN wheel through its DT_RPATH; a plain dlopen finds no copy. The doctor
    # once said "the loader finds no copy" of the very file torch loads.
    cudnn = f"{WHEEL_CUDNN}/libcudnn.so.9"
    env = (
        EnvBuilder()
        .with_torch(cudnn="9.10.2", loads=(rpath_load(cudnn),))
        .cudnn(cudnn, "9.10.2", 12090, (Via.PIP_WHEEL,), rank=None)
        .build()
    )
    findings = diagnose(env)
    text = doctor_text(judge_environment(env, tuple(findings)), verdict(findings))
    assert "libcudnn.so.9: the loader finds no copy" not in text
    assert f"libcudnn.so.9: a plain dlopen finds no copy; PyTorch finds {cudnn} (wheel, through DT_RPATH" in text


def test_torch_gpu_code_is_what_get_arch_list_says_not_every_target_in_its_fatbin() -> None:
    # torch 2.11.0+cu130 (measured): the fatbin holds sm_89 and arch-specific code a few kernels are built for;
    # torch.cuda.get_arch_list() says sm_75 ... sm_120. The header once said "kernels sm_75-sm_121a".
    fatbin = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103a", "sm_120",
              "sm_120a", "sm_121a")  # fmt: skip
    b = EnvBuilder().with_driver(version="580.95.05", cuda_version_raw=13000).with_torch("2.11.0+cu130", "13.0", fatbin)
    lib = f"{SITE}/torch/lib/libtorch_python.so"
    b.frameworks[0] = dataclasses.replace(
        b.frameworks[0], arch_list=BuildFact("sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", lib, "CUDA_ARCH_FLAGS")
    )
    judged = judge_environment(b.build())
    header = "\n".join(header_lines(judged, runtime=None, cudnn=None))
    assert "kernels sm_75-sm_120:" in header
    assert "sm_121a" not in header
    text = doctor_text(judged)
    assert f"built for sm_75, sm_80, sm_86, sm_90, sm_100, sm_120  (CUDA_ARCH_FLAGS, {lib})" in text
