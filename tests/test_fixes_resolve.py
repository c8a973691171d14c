"""Fixes that resolve (issue 21, item 5): every finding whose fix is a pip requirement is applied to its simulated
host as pip would apply it (the distribution and the library copies it provides replaced by the newest release in a
simulated index that meets the requirement), the host is diagnosed again, and the finding is gone with no new
error. Where the frameworks installed leave no release, the fix says who stands in the way and carries no
requirement."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from pytest_cudnn._base.versions import canonical_name
from pytest_cudnn.compat.tensorflow import and_cuda_pins
from pytest_cudnn.compat.torch import RELEASES as TORCH_RELEASES
from pytest_cudnn.compat.torch import release, runtime_wheel
from pytest_cudnn.diagnosis import Finding, Severity, diagnose
from pytest_cudnn.environment import Cudnn, LoadedLibrary, Pin, Via

from .envbuilder import SITE, WHEEL_CUDNN, WHEEL_RUNTIME, EnvBuilder, gpu, rpath_load

Host = Callable[[], EnvBuilder]

# A simulated package index: what `pip install` can choose from. The versions a compatibility source names are the
# real wheels' (nvidia-cudnn-cu12 9.3.0.75, 9.10.2.21, 9.11.0.98: "tf-and-cuda", "cudnn-911-floor"); the
# others stand in for the releases between and after them.
INDEX: dict[str, tuple[str, ...]] = {
    "nvidia-cudnn-cu12": (
        "8.9.0.131",
        "8.9.4.25",
        "8.9.7.29",
        "9.1.0.70",
        "9.3.0.75",
        "9.8.0.87",
        "9.10.2.21",
        "9.11.0.98",
        "9.28.0.50",
    ),
    "nvidia-cuda-runtime-cu12": ("12.2.140", "12.3.101", "12.5.82", "12.9.79"),
    "nvidia-cudnn-cu13": ("9.19.0.56", "9.24.0.43", "9.28.0.50"),
    "nvidia-cuda-runtime": ("13.0.96",),
}

V100 = gpu(name="Tesla V100-SXM2-16GB", cc="7.0", total=16 * 2**30, free=15 * 2**30)


def _tensorflow(version: str, cudnn_wheel: str, runtime_wheel: str = "12.5.82") -> EnvBuilder:
    """TensorFlow ``version`` with its nvidia wheels (cuDNN built for CUDA 12.9) as pip left them."""
    b = EnvBuilder().with_tensorflow(version, "12.5.1", "9", library_dirs=(WHEEL_RUNTIME, WHEEL_CUDNN))
    b.runtime(f"{WHEEL_RUNTIME}/libcudart.so.12", 12050, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
    b.cudnn(
        f"{WHEEL_CUDNN}/libcudnn.so.9", cudnn_wheel.rsplit(".", 1)[0], 12090, (Via.PIP_WHEEL,), rank=None, tf_rank=0
    )
    b.distribution("nvidia-cudnn-cu12", cudnn_wheel).distribution("nvidia-cuda-runtime-cu12", runtime_wheel)
    b.install("nvidia-cuda-runtime-cu12", runtime_wheel)
    return b


def v100_tensorflow_220() -> EnvBuilder:
    """A fresh tensorflow[and-cuda] 2.20 on a V100: it resolves to nvidia-cudnn-cu12 9.28, which dropped Volta."""
    return _tensorflow("2.20.0", "9.28.0.50").with_gpus(V100)


def v100_jax(pin: str, built_with: str) -> Host:
    """jax[cuda12] on a V100 with the cuDNN 9.28 wheel, its plugin pinning ``pin`` and built with ``built_with``."""

    def build() -> EnvBuilder:
        b = EnvBuilder().with_gpus(V100)
        b.cudnn(f"{WHEEL_CUDNN}/libcudnn.so.9", "9.28.0", 12090, (Via.PIP_WHEEL,), rank=None)
        b.runtime(f"{WHEEL_RUNTIME}/libcudart.so.12", 12090, (Via.PIP_WHEEL,), rank=None)
        b.distribution("nvidia-cudnn-cu12", "9.28.0.50").distribution("nvidia-cuda-runtime-cu12", "12.9.79")
        pins = (Pin(f"nvidia-cudnn-cu12{pin}", "nvidia-cudnn-cu12", pin, "9.28.0.50"),)
        plugin = f"{SITE}/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
        loads = (
            rpath_load(f"{WHEEL_CUDNN}/libcudnn.so.9", plugin),
            rpath_load(f"{WHEEL_RUNTIME}/libcudart.so.12", plugin),
        )
        return b.with_jax("0.7.2", 12, cudnn=built_with, pins=pins, loads=loads)

    return build


def torch_215_below_its_cudnn(torch_pin: str = "==9.24.0.43", jax_pin: str | None = None) -> Host:
    """PyTorch 2.15 (cu130), built with cuDNN 9.24 and pinning its wheel, gets nvidia-cudnn-cu13 9.19 (installed
    over it by another install): PyTorch refuses a cuDNN minor older than its build's. With ``jax_pin``, a JAX
    beside it pins the same wheel."""

    def build() -> EnvBuilder:
        b = EnvBuilder().with_driver(version="580.95.05", cuda_version_raw=13000)
        b.cuda_driver = dataclasses.replace(b.cuda_driver, version_raw=13000, version="13.0")
        cudart, cudnn = f"{SITE}/nvidia/cu13/lib/libcudart.so.13", f"{WHEEL_CUDNN}/libcudnn.so.9"
        b.runtime(cudart, 13000, (Via.PIP_WHEEL,), rank=None, driver_raw=13000)
        b.cudnn(cudnn, "9.19.0", 13000, (Via.PIP_WHEEL,), rank=None)
        b.distribution("nvidia-cudnn-cu13", "9.19.0.56")
        pins = (Pin(f"nvidia-cudnn-cu13{torch_pin}", "nvidia-cudnn-cu13", torch_pin, "9.19.0.56"),)
        b.with_torch("2.15.0+cu130", "13.0", cudnn="9.24.0", loads=(rpath_load(cudart), rpath_load(cudnn)), pins=pins)
        if jax_pin is not None:
            jax_pins = (Pin(f"nvidia-cudnn-cu13{jax_pin}", "nvidia-cudnn-cu13", jax_pin, "9.19.0.56"),)
            b.with_jax("0.7.2", 13, pins=jax_pins)
        return b

    return build


def torch_215_without_its_runtime() -> EnvBuilder:
    """PyTorch 2.15 (cu130) whose libtorch_global_deps.so finds no libcudart.so.13: the nvidia-cuda-runtime wheel,
    which puts it in nvidia/cu13/lib (a folder of its DT_RPATH), is not installed."""
    b = EnvBuilder().with_driver(version="580.95.05", cuda_version_raw=13000)
    b.cuda_driver = dataclasses.replace(b.cuda_driver, version_raw=13000, version="13.0")
    requester = f"{SITE}/torch/lib/libtorch_global_deps.so"
    searched = (WHEEL_CUDNN, f"{SITE}/nvidia/cu13/lib", f"{SITE}/torch/lib")
    missing = LoadedLibrary("libcudart.so.13", requester, "DT_NEEDED", True, None, None, searched)
    return b.with_torch("2.15.0+cu130", "13.0", loads=(missing,))


def _torch_wheels(b: EnvBuilder, version: str) -> EnvBuilder:
    """PyTorch ``version`` as compat/torch.py tables its PyPI wheel ("torch-pypi-wheels": its CUDA, GPU code, compiled
    cuDNN and pins), loading the cuDNN and CUDA runtime its pins install from their wheel folders."""
    row = release(version)
    assert row is not None
    assert row.compiled_cudnn is not None
    cudnn_release = row.cudnn.specifier.removeprefix("==")
    cu13 = row.cuda.startswith("13")
    cudart = f"{SITE}/nvidia/cu13/lib/libcudart.so.13" if cu13 else f"{WHEEL_RUNTIME}/libcudart.so.12"
    cudnn, cuda_raw = f"{WHEEL_CUDNN}/libcudnn.so.9", _cuda_raw(row.cuda)
    if not any(c.path == cudart for c in b.copies):
        b.runtime(cudart, cuda_raw, (Via.PIP_WHEEL,), rank=None, driver_raw=b.cuda_driver.version_raw)
    if not any(c.path == cudnn for c in b.copies):
        b.cudnn(cudnn, cudnn_release.rsplit(".", 1)[0], cuda_raw, (Via.PIP_WHEEL,), rank=None)
    b.install(row.cudnn.package, cudnn_release)
    # The wheels of both CUDA majors put libcudnn.so.9 in nvidia/cudnn/lib: the one installed last is the file there.
    for copy in b.copies:
        if copy.path == cudnn and isinstance(copy.value, Cudnn):
            copy.value = dataclasses.replace(copy.value, cudart_version_raw=cuda_raw, cudart_version=row.cuda)
    runtime = runtime_wheel(version)
    assert runtime is not None
    b.install(*runtime.removesuffix(".*").split("=="))
    pins = (Pin(row.cudnn.requirement, row.cudnn.package, row.cudnn.specifier, cudnn_release),)
    b.frameworks = [f for f in b.frameworks if f.name != "torch"]
    loads = (rpath_load(cudart), rpath_load(cudnn))
    return b.with_torch(f"{version}+{row.local}", row.cuda, row.architectures, row.compiled_cudnn, loads, pins)


def _cuda_raw(cuda: str) -> int:
    major, minor = cuda.split(".")[:2]
    return int(major) * 1000 + int(minor) * 10


def v100_torch_211() -> EnvBuilder:
    """PyTorch 2.11 (cu130) from PyPI on a V100 with driver 580: its GPU code starts at sm_75 ("torch-pypi-wheels")."""
    b = EnvBuilder().with_driver(version="580.95.05", cuda_version_raw=13000).with_gpus(V100)
    b.cuda_driver = dataclasses.replace(b.cuda_driver, version_raw=13000, version="13.0")
    return _torch_wheels(b, "2.11.0")


def tensorflow_218_below_its_cudnn() -> EnvBuilder:
    """TensorFlow 2.18 (compiled with cuDNN 9.3) gets nvidia-cudnn-cu12 9.1 from the wheel beside it."""
    return _tensorflow("2.18.0", "9.1.0.70")


def p100_tensorflow_215_on_cudnn_890() -> EnvBuilder:
    """TensorFlow 2.15 on a P100 with nvidia-cudnn-cu12 8.9.0, which computes wrong fused convolutions on Pascal."""
    b = EnvBuilder().with_gpus(gpu(name="Tesla P100-PCIE-16GB", cc="6.0", total=16 * 2**30, free=15 * 2**30))
    b.with_tensorflow("2.15.0", "12.2", "8", library_dirs=(WHEEL_RUNTIME, WHEEL_CUDNN))
    b.runtime(f"{WHEEL_RUNTIME}/libcudart.so.12", 12020, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
    b.cudnn(f"{WHEEL_CUDNN}/libcudnn.so.8", "8.9.0", 12010, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
    b.distribution("nvidia-cudnn-cu12", "8.9.0.131").distribution("nvidia-cuda-runtime-cu12", "12.2.140")
    return b


def tensorflow_cpu_218() -> EnvBuilder:
    """tensorflow-cpu 2.18 alone on an A100: nothing here uses the GPU."""
    b = EnvBuilder().with_tensorflow("2.18.0", None, None, is_cuda_build=False).distribution("tensorflow-cpu", "2.18.0")
    assert b.tensorflow is not None
    b.tensorflow = dataclasses.replace(b.tensorflow, distribution="tensorflow-cpu")
    return b


def tensorflow_219_off_its_pins() -> EnvBuilder:
    """TensorFlow 2.19 pins nvidia-cuda-runtime-cu12==12.5.82; 12.3.101 is installed beside it."""
    return _tensorflow("2.19.0", "9.3.0.75", runtime_wheel="12.3.101")


# Every host here has a finding whose fix is a pip requirement; the codes they cover are all the codes that carry one.
HOSTS: dict[str, Host] = {
    "V100, tensorflow[and-cuda] 2.20, cuDNN 9.28": v100_tensorflow_220,
    "V100, jax[cuda12], cuDNN 9.28": v100_jax(">=9.8,<10.0", "9.8.0"),
    "TensorFlow 2.19 beside a runtime wheel off its pins": tensorflow_219_off_its_pins,
    "tensorflow-cpu 2.18": tensorflow_cpu_218,
    "PyTorch 2.15 below its cuDNN": torch_215_below_its_cudnn(),
    "PyTorch 2.15 without its runtime wheel": torch_215_without_its_runtime,
    "TensorFlow 2.18 below its cuDNN": tensorflow_218_below_its_cudnn,
    "P100, TensorFlow 2.15, cuDNN 8.9.0": p100_tensorflow_215_on_cudnn_890,
    "V100, PyTorch 2.11 (cu130)": v100_torch_211,
}
CODES_WITH_A_REQUIREMENT = {
    "cudnn-gpu-unsupported",
    "tensorflow-wheel-pins",
    "tensorflow-cpu-only",
    "framework-cudnn-mismatch",
    "framework-import-library-missing",  # torch's libtorch_global_deps.so needs libcudart.so.13 at import
    "tensorflow-cudnn-too-old",
    "cudnn-known-bad",
    "framework-no-kernels-for-gpu",  # PyTorch 2.11 on a V100: torch<2.11
}


# The GPU builds of TensorFlow the kit installs: (CUDA, cuDNN) as their build info records them (healthy host).
TENSORFLOW_BUILDS = {"2.18.0": ("12.5.1", "9"), "2.19.0": ("12.5.1", "9"), "2.20.0": ("12.5.1", "9")}


def pip_install(builder: EnvBuilder, requirement: str) -> EnvBuilder:
    """``pip install requirement`` on the simulated host: the newest release in :data:`INDEX` it allows; for
    ``tensorflow[and-cuda]==X``, the GPU build of X in place of whatever TensorFlow was there (``tensorflow-cpu``
    uninstalled first, as the fix says), with the nvidia wheels its extra pins."""
    wanted = Requirement(requirement)
    name = canonical_name(wanted.name)
    if name == "tensorflow":
        (version,) = [spec.version for spec in wanted.specifier if spec.operator == "=="]
        cuda, cudnn = TENSORFLOW_BUILDS[version]
        builder.distributions = [d for d in builder.distributions if not d.name.startswith("tensorflow")]
        builder.distribution("tensorflow", version)
        builder.with_tensorflow(version, cuda, cudnn, library_dirs=(WHEEL_RUNTIME, WHEEL_CUDNN))
        pins = and_cuda_pins(version)
        assert pins is not None
        assert "and-cuda" in wanted.extras
        if not any(c.path.startswith(WHEEL_RUNTIME) for c in builder.copies):
            builder.runtime(f"{WHEEL_RUNTIME}/libcudart.so.12", 12050, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
        if not any(c.path.startswith(WHEEL_CUDNN) for c in builder.copies):
            builder.cudnn(f"{WHEEL_CUDNN}/libcudnn.so.9", "9.3.0", 12050, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
        for package, spec in ((pins.cudnn_package, pins.cudnn), (pins.runtime_package, pins.runtime)):
            pip_install(builder, f"{package}{spec}")
        return builder
    if name == "torch":  # the newest tabled release it allows, with its wheels, in place of the torch there
        allowed = [row.version for row in TORCH_RELEASES if wanted.specifier.contains(row.version)]
        assert allowed, f"no tabled torch release meets {requirement}"
        return _torch_wheels(builder, max(allowed, key=Version))
    allowed = [v for v in INDEX[name] if wanted.specifier.contains(v, prereleases=True)]
    assert allowed, f"no release in the index meets {requirement}"
    return builder.install(name, max(allowed, key=Version))


def _errors(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.code, f.summary) for f in findings if f.severity is Severity.ERROR}


FOUND = [
    (name, host, finding) for name, host in HOSTS.items() for finding in diagnose(host().build()) if finding.requirement
]
CASES = [pytest.param(host, finding, id=f"{name}: {finding.code}") for name, host, finding in FOUND]


def test_the_table_covers_every_code_that_carries_a_requirement() -> None:
    assert {finding.code for _, _, finding in FOUND} == CODES_WITH_A_REQUIREMENT
    # Every requirement the diagnosis table's hosts give is of a code the round trip covers.
    from .test_diagnosis import CASES as DIAGNOSIS_CASES

    carried = {f.code for _, _, case in DIAGNOSIS_CASES for f in diagnose(case()) if f.requirement}
    assert carried <= CODES_WITH_A_REQUIREMENT, carried - CODES_WITH_A_REQUIREMENT


@pytest.mark.parametrize(("host", "finding"), CASES)
def test_applying_the_pip_fix_resolves_the_finding_and_adds_no_error(host: Host, finding: Finding) -> None:
    before = diagnose(host().build())
    assert finding.requirement is not None
    assert f"pip install {finding.requirement}" in finding.fix.replace('"', "").replace("'", "")
    after = diagnose(pip_install(host(), finding.requirement).build())
    assert finding.code not in {f.code for f in after}, [f.summary for f in after]
    assert _errors(after) <= _errors(before), _errors(after) - _errors(before)


def test_a_cudnn_too_new_for_a_v100_gets_the_requirement_on_its_wheel() -> None:
    # The fix once read "use a cuDNN release that still supports this GPU (see the support matrix)".
    (finding,) = [f for f in diagnose(v100_tensorflow_220().build()) if f.code == "cudnn-gpu-unsupported"]
    assert finding.requirement == "nvidia-cudnn-cu12<9.11"
    assert finding.fix.startswith('pip install "nvidia-cudnn-cu12<9.11" (cuDNN 9.11 and later need compute ')
    assert "it meets what TensorFlow 2.20.0 needs of it" in finding.fix
    assert "support matrix" not in finding.fix
    # 9.10.2.21, where <9.11 lands, looks for NVRTC where no wheel puts it (compat audit D5): the step is said.
    assert "cuDNN before 9.11 looks for NVRTC in nvidia/nvrtc/lib, which no wheel creates: add " in finding.fix
    assert "/nvidia/cuda_nvrtc/lib to LD_LIBRARY_PATH, unless a framework loads libnvrtc itself first" in finding.fix


def test_where_no_release_meets_the_frameworks_pins_the_fix_says_so_and_names_them() -> None:
    # JAX whose plugin pins cuDNN >=9.12 (and was built with 9.12): nothing below 9.11 can serve it.
    host = v100_jax(">=9.12.0.46,<10.0", "9.12.0")
    (finding,) = [f for f in diagnose(host().build()) if f.code == "cudnn-gpu-unsupported"]
    assert finding.requirement is None
    assert finding.fix.startswith("no nvidia-cudnn-cu12 release below 9.11 (cuDNN 9.11 and later need compute")
    assert "JAX 0.7.2 pins >=9.12.0.46,<10.0" in finding.fix
    assert "JAX 0.7.2 was built with cuDNN 9.12.0 (it needs >=9.12,<10)" in finding.fix


def test_a_build_rule_alone_can_stand_in_the_way() -> None:
    # No pin forbids <9.11, but a JAX built with cuDNN 9.12 refuses any older minor.
    host = v100_jax(">=9.8,<10.0", "9.12.0")
    (finding,) = [f for f in diagnose(host().build()) if f.code == "cudnn-gpu-unsupported"]
    assert finding.requirement is None
    assert "JAX 0.7.2 pins" not in finding.fix
    assert "JAX 0.7.2 was built with cuDNN 9.12.0" in finding.fix


def test_the_requirement_is_in_the_json_report() -> None:
    from pytest_cudnn.diagnosis import judge_environment
    from pytest_cudnn.report import doctor_json

    document = doctor_json(judge_environment(v100_tensorflow_220().build()))
    (entry,) = [f for f in document["findings"] if f["code"] == "cudnn-gpu-unsupported"]
    assert entry["requirement"] == "nvidia-cudnn-cu12<9.11"
    assert {"code", "severity", "summary", "evidence", "fix", "subjects"} <= set(entry)  # added, nothing renamed


def test_a_host_without_the_wheel_gets_words_not_a_requirement() -> None:
    b = v100_tensorflow_220()
    b.distributions = []
    (finding,) = [f for f in diagnose(b.build()) if f.code == "cudnn-gpu-unsupported"]
    assert finding.requirement is None
    assert finding.fix.startswith("install a cuDNN older than 9.11 where the loader finds it first")


def test_the_kit_replaces_the_distribution_and_the_copies_it_provides() -> None:
    env = pip_install(v100_tensorflow_220(), "nvidia-cudnn-cu12<9.11").build()
    assert [(d.name, d.version) for d in env.distributions if d.name == "nvidia-cudnn-cu12"] == [
        ("nvidia-cudnn-cu12", "9.10.2.21")
    ]
    assert [c.version for c in env.cudnns] == ["9.10.2"]
    assert dataclasses.replace(env.cudnns[0], version="9.28.0") == v100_tensorflow_220().build().cudnns[0]


def test_a_cpu_only_tensorflow_is_the_headline_and_its_fix_replaces_it_with_the_gpu_build() -> None:
    # The verdict once headlined "no CUDA runtime found anywhere" (the system toolkit) for a tensorflow-cpu venv,
    # and the fix installed tensorflow[and-cuda] beside tensorflow-cpu, which share one package folder.
    findings = diagnose(tensorflow_cpu_218().build())
    assert [f.code for f in findings][:2] == ["tensorflow-cpu-only", "no-cuda-runtime"]
    cpu_only, no_runtime = findings[:2]
    assert cpu_only.fix.startswith("pip uninstall -y tensorflow-cpu && pip install 'tensorflow[and-cuda]==2.18.0'")
    assert cpu_only.requirement == "tensorflow[and-cuda]==2.18.0"
    assert no_runtime.fix.startswith("install the GPU build of TensorFlow")


def test_a_framework_below_its_cudnn_gets_its_own_pin_back() -> None:
    # The fix once read "install the cuDNN PyTorch was built for (see its pins)".
    findings = diagnose(torch_215_below_its_cudnn()().build())
    (finding,) = [f for f in findings if f.code == "framework-cudnn-mismatch"]
    assert finding.requirement == "nvidia-cudnn-cu13==9.24.0.43"
    assert finding.fix == 'pip install "nvidia-cudnn-cu13==9.24.0.43" (what PyTorch 2.15.0+cu130 pins)'


def test_a_pin_another_framework_forbids_is_no_fix() -> None:
    findings = diagnose(torch_215_below_its_cudnn(jax_pin="<9.20")().build())
    (finding,) = [f for f in findings if f.code == "framework-cudnn-mismatch"]
    assert finding.requirement is None
    assert finding.fix.startswith("PyTorch 2.15.0+cu130 pins nvidia-cudnn-cu13==9.24.0.43, and no release of it ")
    assert "JAX 0.7.2 pins <9.20" in finding.fix


def test_a_known_bad_cudnn_gets_a_release_past_it_that_the_frameworks_pins_allow() -> None:
    # "upgrade cuDNN to 8.9.2 or later" as pip would do it picks the newest cuDNN 9 and breaks TensorFlow 2.15,
    # which pins nvidia-cudnn-cu12==8.9.4.25: the requirement carries that pin.
    findings = diagnose(p100_tensorflow_215_on_cudnn_890().build())
    (finding,) = [f for f in findings if f.code == "cudnn-known-bad"]
    assert finding.requirement == "nvidia-cudnn-cu12==8.9.4.25"
    assert finding.fix == 'pip install "nvidia-cudnn-cu12==8.9.4.25" (upgrade cuDNN to 8.9.2 or later)'


def test_pytorch_without_kernels_for_a_v100_gets_the_last_release_with_them() -> None:
    # The fix once read "use a PyTorch build whose architectures include this GPU's" (compat audit F2).
    (finding,) = [f for f in diagnose(v100_torch_211().build()) if f.code == "framework-no-kernels-for-gpu"]
    assert finding.requirement == "torch<2.11"
    assert finding.fix == (
        'pip install "torch<2.11" (the last PyPI build with sm_70 is 2.10.0 (cu128); 2.11.0 (cu130) is built for '
        "sm_75 to sm_120; or, to stay on 2.11 to 2.14, PyTorch's cu126 builds keep sm_70: "
        'pip install "torch<2.15" --index-url https://download.pytorch.org/whl/cu126)'
    )  # the variant on PyTorch's own index that keeps Volta ("torch-cu126-variant")
    assert any("torch 2.0.0 to 2.15.0 on PyPI" in line for line in finding.evidence)  # "torch-pypi-wheels"
    # Its own cuDNN, which it refuses below 7.5, is the one it pins: reinstalling that is no fix.
    (cudnn,) = [f for f in diagnose(v100_torch_211().build()) if f.code == "framework-cudnn-mismatch"]
    assert cudnn.requirement is None
    assert "reinstalling it changes nothing" in cudnn.fix


# PyTorch 2.15 from PyPI on each GPU: (GPU, compute capability, the requirement, how its fix starts); None: no finding.
OLD_GPUS: list[tuple[str, str, str | None, str | None]] = [
    ("Tesla V100-SXM2-16GB", "7.0", "torch<2.11", 'pip install "torch<2.11" (the last PyPI build with sm_70 is 2.10.0'),
    ("Tesla P100-PCIE-16GB", "6.0", "torch<2.8", 'pip install "torch<2.8" (the last PyPI build with sm_60 is 2.7.1'),
    ("NVIDIA GeForce GTX 1080", "6.1", "torch<2.8", 'pip install "torch<2.8" (the last PyPI build with sm_60 is'),
    ("Tesla T4", "7.5", None, None),
    ("Tesla K80", "3.7", "torch<2.1", 'pip install "torch<2.1" (the last PyPI build with sm_37 is 2.0.1 (cu117)'),
    ("Tesla K40m", "3.5", None, "use a PyTorch build whose architectures include this GPU's"),
]


@pytest.mark.parametrize(("name", "cc", "requirement", "fix"), OLD_GPUS, ids=[row[0] for row in OLD_GPUS])
def test_the_requirement_for_pytorch_on_an_older_gpu(name: str, cc: str, requirement: str | None, fix: str) -> None:
    b = EnvBuilder().with_driver(version="580.95.05", cuda_version_raw=13000).with_gpus(gpu(name=name, cc=cc))
    found = [f for f in diagnose(b.with_torch().build()) if f.code == "framework-no-kernels-for-gpu"]
    if fix is None:
        assert found == []
        return
    (finding,) = found
    assert finding.requirement == requirement
    assert finding.fix.startswith(fix), finding.fix


def test_a_pytorch_already_below_the_bound_gets_words() -> None:
    # A 2.5.1 built without sm_70 (not PyPI's build): it already meets torch<2.11.
    b = EnvBuilder().with_driver(version="580.95.05", cuda_version_raw=13000).with_gpus(V100)
    (finding,) = [
        f
        for f in diagnose(b.with_torch("2.5.1+cu124", "12.4", ("sm_80", "sm_90")).build())
        if f.code == "framework-no-kernels-for-gpu"
    ]
    assert finding.requirement is None  # pip would find torch<2.11 met and change nothing
    assert finding.fix == "use a PyTorch build whose architectures include this GPU's"


def test_a_pin_no_one_can_read_is_no_demand_and_no_crash() -> None:
    # A replayed snapshot may carry any text as a pin's specifier.
    b = v100_jax(">=9.8,<10.0", "9.8.0")()
    b.frameworks[0] = dataclasses.replace(b.frameworks[0], pins=(Pin("x", "nvidia-cudnn-cu12", "=>nine", None),))
    (finding,) = [f for f in diagnose(b.build()) if f.code == "cudnn-gpu-unsupported"]
    assert finding.requirement == "nvidia-cudnn-cu12<9.11"
