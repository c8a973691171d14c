"""The registry's contract (issue 30): every entry of ``REGISTRY``, on a simulated install of its own, read by its
reader, its loads checked against the real glibc loader, its marker, the doctor's text and its JSON, which the
committed JSON Schema accepts. A framework added to the registry without a simulated install here fails the first
test: the contract is held for each entry, not for the ones someone remembered.

The installs are tests/frameworkhosts.py's (real ELF objects linked as the wheels link them, stand-in CUDA
libraries) on a host with a driver and one A100; the doctor and pytest run in child processes, as a user runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pytest_cudnn.frameworks import REGISTRY

from .frameworkhosts import (
    TF_2_21_RUNPATH,
    Load,
    plant_cuda12_wheels,
    plant_jax,
    plant_nvidia_wheel,
    plant_onnxruntime,
    plant_tensorflow,
    plant_torch,
    run_child,
)
from .simhost import Compiler, SimHost
from .test_framework_stories import A100, DRIVER_580
from .test_probe_cupy import plant_cupy

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc"),
    pytest.mark.e2e,
]

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "docs/reference/report.schema.json").read_text())


def _torch(host: SimHost, compiler: Compiler) -> str:
    plant_torch(host.site_packages, compiler, sass=())
    plant_nvidia_wheel(host.site_packages, compiler, "cu13", cudart=13020)
    plant_nvidia_wheel(host.site_packages, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020)
    return "2.15.0+cu132"


def _jax(host: SimHost, compiler: Compiler) -> str:
    plant_jax(host.site_packages, compiler)
    plant_cuda12_wheels(host.site_packages, compiler)
    return "0.10.2"


def _tensorflow(host: SimHost, compiler: Compiler) -> str:
    plant_tensorflow(host.site_packages, compiler, runpath_components=(*TF_2_21_RUNPATH, "cusolver"))
    plant_cuda12_wheels(host.site_packages, compiler, cudart=12050, cudnn=(9, 3, 0))
    return "2.21.0"


def _onnxruntime(host: SimHost, compiler: Compiler) -> str:
    plant_onnxruntime(host.site_packages, compiler)
    return "1.31.1"


def _cupy(host: SimHost, compiler: Compiler) -> str:
    plant_cupy(host.site_packages)
    return "14.2.0"


# Each entry's simulated install: plants it, returns the version planted.
PLANTS: dict[str, Callable[[SimHost, Compiler], str]] = {
    "torch": _torch,
    "jax": _jax,
    "tensorflow": _tensorflow,
    "onnxruntime": _onnxruntime,
    "cupy": _cupy,
}


def test_every_entry_of_the_registry_has_a_simulated_install() -> None:
    assert sorted(PLANTS) == sorted(entry.name for entry in REGISTRY)


@pytest.mark.parametrize("entry", REGISTRY, ids=[entry.name for entry in REGISTRY])
def test_each_entry_is_read_loaded_marked_and_reported_as_one_judgement(
    entry: Any, host: SimHost, compiler: Compiler
) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    version = PLANTS[entry.name](host, compiler)
    code, report = host.doctor_json()
    assert code in (0, 1), report
    assert Draft202012Validator(SCHEMA).is_valid(report)

    # Its reader: found, at the version planted, through its own distributions.
    [build] = [b for b in report["environment"]["frameworks"] if b["name"] == entry.name]
    assert (build["state"], build["version"]) == ("found", version), build["reason"]

    # Its loads, against glibc: each library an object of its asks for by DT_NEEDED and the search finds is the file
    # the real loader maps when that object is loaded; where the search finds one nowhere, the real load fails naming
    # one of those (a preload by absolute path is a file that is there).
    asked = [load for load in build["loads"] if load["how"] == "DT_NEEDED" and load["requester"]]
    for requester in sorted({load["requester"] for load in asked}):
        mine = [load for load in asked if load["requester"] == requester]
        missing = [load["name"] for load in mine if not load["path"]]
        if missing:
            with pytest.raises(RuntimeError) as refused:
                run_child(sys.executable, host.site_packages, [Load(Path(requester))], host.environ())
            assert any(f"{name}: cannot open shared object file" in str(refused.value) for name in missing)
            continue
        mapped = set(run_child(sys.executable, host.site_packages, [Load(Path(requester))], host.environ()).mapped)
        for load in mine:
            assert os.path.realpath(load["path"]) in mapped, (load, sorted(mapped))
    for load in build["loads"]:
        if load["how"] == "preload" and load["path"]:
            assert os.path.isfile(load["path"]), load

    # The JSON's verdict, the doctor's line and the marker say one thing.
    [verdict] = [f for f in report["frameworks"] if f["name"] == entry.name]
    summary = host.run("doctor").stdout
    line = next(text for text in summary.splitlines() if text[2:].startswith(entry.display))
    assert f"{version}: " in line
    assert (": can run GPU work here" in line) is verdict["ok"], line
    tests = f"""
        import pytest

        @pytest.mark.{entry.marker}
        def test_it():
            pass
        """
    result = host.pytest(files={"test_marker.py": tests})
    assert ("1 passed" in result.stdout) is verdict["ok"], result.stdout + result.stderr
    if entry.name in ("torch", "jax", "tensorflow"):  # whole installs with their wheels: they can run here
        assert verdict["ok"], verdict
