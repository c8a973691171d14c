"""The machine the real-GPU tier (test_real_gpu.py) checks, and the witnesses it checks the product against.

A :class:`Machine` is either the live one (``--real-gpu``: a host with an NVIDIA GPU and driver, the product run
from this checkout) or a stand-in (a simulated host: the libnvidia-ml, libcuda, libcudart and libcudnn stand-ins of
simhost.py and a stand-in ``nvidia-smi``). The tier runs the same checks on both, so that it is exercised on every
CI run and ready the day a GPU machine runs it.

The witnesses are sources other than the probe: ``nvidia-smi`` (its own NVML client), and the frameworks' own
reports of themselves. On a stand-in they are the stand-ins' answers, so there the tier checks its own plumbing and
the product's reading of the stand-ins, not NVIDIA's libraries: what only real hardware can check is in the tests
marked ``real_gpu``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import pytest_cudnn

from .simhost import PYTEST, SimGpu, SimHost

# The folder holding the pytest_cudnn under test: children import it from here, installed or not (a bare GPU
# machine runs the tier from a copy of the working tree).
SOURCE_ROOT = str(Path(pytest_cudnn.__file__).resolve().parent.parent)

# nvidia-smi --query-gpu fields, and what each is in the doctor's JSON (environment.driver.gpus[]).
SMI_FIELDS = ("driver_version", "name", "uuid", "pci.bus_id", "compute_cap", "memory.total")

# The stand-in machine: one Hopper GPU behind a driver 580 (CUDA 13.0), a CUDA 13 runtime and cuDNN 9 on
# LD_LIBRARY_PATH: the shape of the lent machines (tool library, device/KINDS.md).
STAND_IN_GPU = SimGpu(
    name="NVIDIA H100 80GB HBM3",
    uuid="GPU-5f2c1a7e-0d4b-4c1e-9a53-2b7d9e0c4f18",
    pci_bus_id="00000000:18:00.0",
    compute_capability=(9, 0),
    memory_total=81559 * 2**20,
    memory_free=81080 * 2**20,
)
STAND_IN_DRIVER = "580.95.05"


def plugin_arguments() -> list[str]:
    """``-p pytest_cudnn.plugin`` where the plugin is not installed (a working tree copied to a GPU machine);
    nothing where its entry point loads it already (naming it twice would be an error)."""
    entry_points = importlib.metadata.entry_points(group="pytest11")
    installed = any(entry.value == "pytest_cudnn.plugin" for entry in entry_points)
    return [] if installed else ["-p", "pytest_cudnn.plugin"]


@dataclass
class Machine:
    kind: str  # "live" or "stand-in"
    environ: dict[str, str]
    workdir: Path

    def run(
        self, argv: Sequence[str], timeout: float = 300, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        if shutil.which(argv[0], path=self.environ.get("PATH")) is None and not os.path.isabs(argv[0]):
            pytest.fail(f"{argv[0]} is not on PATH: the {self.kind} machine has no NVIDIA driver tools", pytrace=False)
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            env=self.environ,
            cwd=cwd or self.workdir,
            timeout=timeout,
            check=False,
        )

    def python(self, code: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self.run([sys.executable, "-c", code], timeout=timeout)

    def doctor_json(self) -> tuple[int, dict[str, Any]]:
        done = self.run([sys.executable, "-m", "pytest_cudnn", "doctor", "--json"])
        assert done.stdout, done.stderr
        return done.returncode, json.loads(done.stdout)

    def pytest(self, *args: str, files: Mapping[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
        suite = self.workdir / "suite"
        suite.mkdir(exist_ok=True)
        for name, text in files.items():
            (suite / name).write_text(textwrap.dedent(text))
        argv = [*PYTEST, "-rs", *plugin_arguments(), *args, "."]
        return self.run(argv, timeout=timeout, cwd=suite)

    # Witnesses ---------------------------------------------------------------------------------------
    def smi_gpus(self) -> list[dict[str, str]]:
        """``nvidia-smi --query-gpu``: one row per GPU, by field name."""
        done = self.run(["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"])
        assert done.returncode == 0, done.stderr
        return [dict(zip(SMI_FIELDS, _csv(line), strict=True)) for line in done.stdout.splitlines() if line.strip()]

    def smi_compute_pids(self) -> set[int]:
        """The processes holding a CUDA context on any GPU, as nvidia-smi lists them."""
        done = self.run(["nvidia-smi", "--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader,nounits"])
        assert done.returncode == 0, done.stderr
        return {int(_csv(line)[0]) for line in done.stdout.splitlines() if line.strip()}


def _csv(line: str) -> list[str]:
    return [cell.strip() for cell in line.split(",")]


def live_machine(workdir: Path) -> Machine:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [SOURCE_ROOT, environ.get("PYTHONPATH")]))
    environ.pop("PYTEST_ADDOPTS", None)
    return Machine("live", environ, workdir)


def stand_in_machine(host: SimHost, gpus: Sequence[SimGpu] = (STAND_IN_GPU,), driver: str = STAND_IN_DRIVER) -> Machine:
    """``host`` with ``gpus`` behind ``driver`` (CUDA 13.0), a CUDA 13.0 runtime and cuDNN 9.14.0 built for it."""
    host.add_driver(gpus=gpus, version=driver, cuda_version=13000, nvidia_smi=True)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000, (9, 14, 0))
    log = host.root / "contexts.log"
    environ = host.environ({"SIMHOST_CONTEXT_LOG": str(log)})
    environ["PYTHONPATH"] = os.pathsep.join([environ["PYTHONPATH"], SOURCE_ROOT])
    workdir = host.root / "work"
    workdir.mkdir(exist_ok=True)
    return Machine("stand-in", environ, workdir)


# Comparisons (pure) --------------------------------------------------------------------------------


def smi_differences(rows: Sequence[Mapping[str, str]], doctor: Mapping[str, Any]) -> list[str]:
    """Every fact nvidia-smi and the doctor disagree on, said as ``GPU <uuid> <field>: smi ... doctor ...``."""
    driver = doctor["environment"]["driver"]
    gpus = {gpu["uuid"]: gpu for gpu in driver["gpus"]}
    problems = []
    if {row["uuid"] for row in rows} != set(gpus):
        problems.append(f"GPUs: nvidia-smi {sorted(r['uuid'] for r in rows)}, doctor {sorted(gpus)}")
    for row in rows:
        gpu = gpus.get(row["uuid"])
        if gpu is None:
            continue
        ours = {
            "driver_version": driver["version"],
            "name": gpu["name"],
            "pci.bus_id": gpu["pci_bus_id"],
            "compute_cap": gpu["compute_capability"],
            # nvidia-smi prints MiB, rounded down.
            "memory.total": str(gpu["memory_total"] // 2**20) if gpu["memory_total"] is not None else None,
        }
        for name, value in ours.items():
            if _normal(name, row[name]) != _normal(name, value):
                problems.append(f"GPU {row['uuid']} {name}: nvidia-smi {row[name]!r}, doctor {value!r}")
    return problems


def _normal(field: str, value: str | None) -> str | None:
    # NVML's bus id and nvidia-smi's print the same digits, in either case depending on the version.
    return value.upper() if field == "pci.bus_id" and value else value
