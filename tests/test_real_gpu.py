"""The real-GPU tier: the product checked against sources other than its own probe.

Every test here takes a ``machine`` (tests/gpumachine.py). Without options it is a stand-in host (the stand-in
driver, runtime, cuDNN and ``nvidia-smi``), so the tier runs on every CI run; with ``--real-gpu`` it is the live
machine, and the tests marked ``real_gpu`` (the frameworks' own reports: only real hardware can give them) run too.
On a GPU machine: ``bash .ci/real-gpu OUT`` (docs/real-gpu.md).

What the stand-in cannot check, and only the live run does: that NVIDIA's libraries answer as the stand-ins do
(``nvidia-smi`` is then NVIDIA's own NVML client, not ours), that a real cuDNN creates a handle, and that the
frameworks map the copies the doctor names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .gpumachine import Machine, live_machine, smi_differences, stand_in_machine
from .simhost import Compiler, SimHost


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "machine" in metafunc.fixturenames:
        kind = "live" if metafunc.config.getoption("--real-gpu") else "stand-in"
        metafunc.parametrize("machine", [kind], indirect=True)


@pytest.fixture
def machine(request: pytest.FixtureRequest, tmp_path: Path, compiler: Compiler) -> Iterator[Machine]:
    if request.param == "live":
        yield live_machine(tmp_path)
    else:
        yield stand_in_machine(SimHost(tmp_path / "host", compiler))


@pytest.fixture
def doctor(machine: Machine) -> dict[str, Any]:
    code, report = machine.doctor_json()
    assert code == 0, json.dumps(report["findings"], indent=2)
    return report


def test_nvml_facts_agree_with_nvidia_smi(machine: Machine, doctor: dict[str, Any]) -> None:
    rows = machine.smi_gpus()
    assert rows, "nvidia-smi lists no GPU"
    assert smi_differences(rows, doctor) == []


def test_the_host_is_healthy_and_every_framework_can_run(doctor: dict[str, Any]) -> None:
    assert doctor["verdict"]["ok"], doctor["verdict"]["summary"]
    # Every GPU build: a CPU-only one installed beside them (the lent machines' onnxruntime) is said so, not run.
    refused = [f["name"] for f in doctor["frameworks"] if not f["ok"] and f.get("cause") != "framework-cpu-only"]
    assert refused == []


def _satisfied(doctor: dict[str, Any]) -> str:
    """A test whose markers the machine's own facts satisfy exactly, and which reads its GPU live."""
    env = doctor["environment"]
    gpus = env["driver"]["gpus"]
    cudnn = next(c for c in env["cudnns"] if c["state"] == "found")["version"]
    major, minor = (int(part) for part in gpus[0]["compute_capability"].split("."))
    return f"""
        import os, subprocess
        import pytest

        @pytest.mark.requires_driver(">={env["driver"]["version"]}")
        @pytest.mark.requires_cudnn(">={cudnn}")
        @pytest.mark.requires_gpu(count={len(gpus)}, compute_capability=">={major}.{minor}")
        def test_satisfied(gpu):
            assert gpu.uuid == {gpus[0]["uuid"]!r}
            free = gpu.memory_free  # read live through NVML
            assert free is not None and 0 < free <= gpu.memory_total
        """


def _suite(doctor: dict[str, Any]) -> str:
    """The satisfied test beside markers just out of reach, a context check and a real handle."""
    gpus = doctor["environment"]["driver"]["gpus"]
    # Newer than every copy here: a machine may hold several (the lent H100 had the system's 9.14.0 and torch's
    # wheel 9.19.0), and a requirement without framework= is met by the copy a framework loads.
    found = [c["version"] for c in doctor["environment"]["cudnns"] if c["state"] == "found"]
    cudnn = max(found, key=lambda version: tuple(int(part) for part in version.split(".")))
    return (
        _satisfied(doctor)
        + f"""
        @pytest.mark.requires_gpu(count={len(gpus) + 1})
        def test_one_gpu_too_many():
            pass

        @pytest.mark.requires_cudnn(">{cudnn}")
        def test_a_newer_cudnn():
            pass

        @pytest.mark.requires_gpu
        def test_probing_made_no_context_here():
            listed = subprocess.run(
                ["nvidia-smi", "--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader,nounits"],
                capture_output=True, text=True, check=True,
            ).stdout
            assert str(os.getpid()) not in [line.split(",")[0].strip() for line in listed.splitlines()]

        def test_handle(cudnn_handle):
            assert cudnn_handle.value.value
        """
    )


def test_the_plugin_on_this_machine(machine: Machine, doctor: dict[str, Any]) -> None:
    result = machine.pytest("-p", "no:xdist", files={"test_tier.py": _suite(doctor)})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert "3 passed, 2 skipped" in summary, result.stdout[-4000:]
    gpus = len(doctor["environment"]["driver"]["gpus"])
    assert f"requires {gpus + 1} GPUs; found {gpus} visible GPU(s)" in result.stdout
    assert re.search(r"^pytest-cudnn: [✓!] the GPU stack holds together", result.stdout, re.M), result.stdout[-4000:]


def test_require_gpu_passes_when_everything_is_satisfied(machine: Machine, doctor: dict[str, Any]) -> None:
    result = machine.pytest("--require-gpu", "-p", "no:xdist", files={"test_tier.py": _satisfied(doctor)})
    assert result.returncode == 0, result.stdout[-4000:]
    assert "1 passed" in result.stdout


_TORCH_USES_GPU = """
import pytest


@pytest.mark.uses_gpu
def test_on_the_gpu(gpu):
    import torch

    assert float(torch.ones(4, device=f"cuda:{gpu.cuda_index}").sum()) == 4.0


@pytest.mark.uses_gpu
def test_forgot_the_gpu(gpu):
    import torch

    assert float(torch.ones(4).sum()) == 4.0  # runs on the CPU: the check must say so
"""


@pytest.mark.real_gpu
def test_uses_gpu_tells_a_torch_test_on_the_gpu_from_one_on_the_cpu(machine: Machine, doctor: dict[str, Any]) -> None:
    # Issue 22 on real hardware, each test in a pytest run of its own: a context the first one made would stay for
    # the process, and the second would then read "used earlier" (docs/gpu-used.md).
    if not any(b["name"] == "torch" for b in doctor["environment"]["frameworks"]):
        pytest.skip("torch is not installed on this machine")
    ran = {}
    for name in ("test_on_the_gpu", "test_forgot_the_gpu"):
        result = machine.pytest("-p", "no:xdist", "-k", name, files={"test_uses.py": _TORCH_USES_GPU})
        ran[name] = result
    assert ran["test_on_the_gpu"].returncode == 0, ran["test_on_the_gpu"].stdout[-3000:]
    forgot = ran["test_forgot_the_gpu"]
    assert forgot.returncode == 1, forgot.stdout[-3000:]
    assert "was not used" in forgot.stdout, forgot.stdout[-3000:]


def test_two_xdist_workers_share_the_gpus(machine: Machine, doctor: dict[str, Any]) -> None:
    records = machine.workdir / "workers"
    records.mkdir()
    suite = f"""
        import json, os
        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_where(gpu, n):
            record = {{"visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "uuid": gpu.uuid}}
            path = os.path.join({str(records)!r}, os.environ["PYTEST_XDIST_WORKER"])
            with open(path, "w") as handle:
                json.dump(record, handle)
        """
    result = machine.pytest("-p", "xdist", "-n", "2", files={"test_workers.py": suite})
    assert result.returncode == 0, result.stdout[-4000:]
    seen = {path.name: json.loads(path.read_text()) for path in records.iterdir()}
    assert set(seen) == {"gw0", "gw1"}
    uuids = [gpu["uuid"] for gpu in doctor["environment"]["driver"]["gpus"]]
    assert {record["uuid"] for record in seen.values()} <= set(uuids)
    if len(uuids) == 1:  # one GPU: both workers on it
        assert {record["visible"] for record in seen.values()} == {uuids[0]}  # by UUID: stable across orders
        assert "pytest-cudnn: xdist workers: gw0 -> GPU 0, gw1 -> GPU 0" in result.stdout


# Ctypes code for a child: make a context as every framework does (the driver's primary context of device 0),
# or probe as the plugin does; then say so and wait, so that nvidia-smi is asked while the process still lives.
_HOLD = """
import ctypes, sys
{work}
print("ready", flush=True)
sys.stdin.read()
"""
_CONTEXT = """
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
context = ctypes.c_void_p()
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0) == 0
"""
_PROBE = """
from pytest_cudnn.probing.host import probe_environment
env = probe_environment()
assert env.driver.gpus and env.cudnns, env
"""


def _listed_while_alive(machine: Machine, work: str) -> bool:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD.format(work=work)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=machine.environ,
        cwd=machine.workdir,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        return child.pid in machine.smi_compute_pids()
    finally:
        child.communicate("", timeout=60)


def test_probing_creates_no_cuda_context_in_the_calling_process(machine: Machine) -> None:
    # The witness first: a process that makes a context is listed (else an absence would prove nothing).
    assert _listed_while_alive(machine, _CONTEXT)
    assert not _listed_while_alive(machine, _PROBE)


# Only real hardware: each framework's own report of what it runs with ------------------------------------

_FRAMEWORK_REPORTS = {
    "torch": """
import torch
torch.zeros(1, device="cuda")  # CUDA initialised: the runtime and its libraries are mapped
report = {"cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(0)}
""",
    "jax": """
import jax, jax.numpy as jnp
(jnp.ones(4) + 1).block_until_ready()
report = {"platform": jax.devices()[0].platform, "gpu": jax.devices()[0].device_kind}
""",
    "cupy": """
import cupy
cupy.ones(4).sum()
name = cupy.cuda.runtime.getDeviceProperties(0)["name"]  # bytes (seen with CuPy 14.2 on an H100)
report = {"cuda": cupy.cuda.runtime.runtimeGetVersion(), "gpu": name.decode() if isinstance(name, bytes) else name}
""",
}
_MAPPED = """
import json, os
mapped = set()
for line in open("/proc/self/maps"):
    fields = line.split(None, 5)
    if len(fields) == 6 and fields[5].startswith("/"):
        mapped.add(os.path.realpath(fields[5].strip()))
report["mapped"] = sorted(p for p in mapped if os.path.basename(p).startswith(("libcud", "libcublas", "libnvrtc")))
print(json.dumps(report))
"""
# The libraries each framework maps whose copy the doctor must name, by file stem, and those it must have mapped:
# torch and JAX load the CUDA runtime and cuDNN; CuPy links its runtime in statically, has no cuDNN, and loads NVRTC
# and cuBLAS through cuda-pathfinder when first used: its first kernel maps NVRTC, and cuBLASLt with or without
# cuBLAS (an H100 mapped both after importing cupy.cuda.cublas, an H200 only cuBLASLt after `cupy.ones(4).sum()`:
# tests/data/real-gpu/).
_JUDGED = {
    "torch": ("libcudart", "libcudnn"),
    "jax": ("libcudart", "libcudnn"),
    "cupy": ("libnvrtc", "libcublas", "libcublasLt"),
}
_MUST_MAP = {"torch": {"libcudart"}, "jax": {"libcudart"}, "cupy": {"libnvrtc"}}


def _stem(path: str) -> str:
    """'libcublasLt' for .../libcublasLt.so.13 (and libnvrtc-builtins for its own file, which no one names)."""
    return os.path.basename(path).split(".so")[0]


@pytest.mark.real_gpu
@pytest.mark.parametrize("name", sorted(_FRAMEWORK_REPORTS))
def test_each_framework_maps_the_copies_the_doctor_names(machine: Machine, doctor: dict[str, Any], name: str) -> None:
    build = next((b for b in doctor["environment"]["frameworks"] if b["name"] == name), None)
    if build is None:
        pytest.skip(f"{name} is not installed on this machine")  # the tier's machine decides what it has
    done = machine.python(_FRAMEWORK_REPORTS[name] + _MAPPED)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    named = {os.path.realpath(load["path"]) for load in build["loads"] if load["path"]}
    loaded = [path for path in report["mapped"] if _stem(path) in _JUDGED[name]]
    assert {_stem(path) for path in loaded} >= _MUST_MAP[name], report
    assert [path for path in loaded if path not in named] == [], (report, sorted(named))
    if name == "torch":
        assert build["cuda"]["value"] == report["cuda"], (build["cuda"], report)


def test_smi_differences_names_each_fact_that_disagrees() -> None:
    doctor = {
        "environment": {
            "driver": {
                "version": "580.95.05",
                "gpus": [
                    {
                        "uuid": "GPU-1",
                        "name": "NVIDIA H100 80GB HBM3",
                        "pci_bus_id": "00000000:18:00.0",
                        "compute_capability": "9.0",
                        "memory_total": 81559 * 2**20 + 512,  # nvidia-smi rounds down to MiB
                    }
                ],
            }
        }
    }
    row = {
        "driver_version": "580.95.05",
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-1",
        "pci.bus_id": "00000000:18:00.0",
        "compute_cap": "9.0",
        "memory.total": "81559",
    }
    assert smi_differences([row], doctor) == []
    assert smi_differences([{**row, "pci.bus_id": "00000000:18:00.0".lower()}], doctor) == []
    assert smi_differences([{**row, "compute_cap": "8.0", "driver_version": "575.51.03"}], doctor) == [
        "GPU GPU-1 driver_version: nvidia-smi '575.51.03', doctor '580.95.05'",
        "GPU GPU-1 compute_cap: nvidia-smi '8.0', doctor '9.0'",
    ]
    assert smi_differences([{**row, "uuid": "GPU-2"}], doctor) == ["GPUs: nvidia-smi ['GPU-2'], doctor ['GPU-1']"]
