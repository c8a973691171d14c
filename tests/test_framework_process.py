"""Frameworks that share one process (issue 20, item 3), on simulated hosts: the doctor says when a framework's
verdict depends on import order, and which order works; the real glibc loader, in a child that imports in each
order (loads what the framework loads, the way it loads it), says the same.

Installs as tests/frameworkhosts.py lays them out (real ELF objects, real DT_NEEDED/DT_RPATH/DT_RUNPATH, stand-in
CUDA libraries); the doctor runs in a child process, as in tests/test_framework_stories.py.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn.compat.loading import TORCH_PRELOADS_ALWAYS

from .frameworkhosts import (
    Dlopen,
    Load,
    libtorch_cuda,
    plant_cuda12_wheels,
    plant_nvidia_wheel,
    plant_tensorflow,
    plant_torch,
    run_child,
)
from .simhost import Compiler, SimGpu, SimHost
from .test_framework_stories import (
    DRIVER_580,
    cache_or_default_folders_have,
    codes,
    doctor,
    finding,
    jax_cuda12,
    load_of,
    torch_cu132,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")

PYTHON = sys.executable
CUSOLVER = "libcusolver.so.11"
CUDNN_VERSION = "ctypes.CDLL('libcudnn.so.9').cudnnGetVersion()"  # which copy answers a request by name


def order_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["code"].startswith("framework-") and "import-order" in f["code"]]


# TensorFlow 2.21 after torch 2.14: torch's preload hands TensorFlow the libcusolver.so.11 its RUNPATH misses ---------


def torch_2_14_cu130(site: Path, compiler: Compiler) -> Path:
    """torch 2.14.1+cu130 as its wheel loads: libtorch_global_deps.so (DT_NEEDED libcudart.so.13, DT_RPATH to
    nvidia/cu13/lib) first, then, since its __init__.py says ``_preload_cuda_deps(required=False)``, the first
    ``nvidia/<folder>/lib`` match of each of its globs on sys.path (source "torch-preload-2.14"). Returns
    libtorch_global_deps.so."""
    rpath = "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN"
    package = plant_torch(
        site,
        compiler,
        version="2.14.1+cu130",
        cuda="13.0",
        cudnn="9.13.0",
        rpath=rpath,
        pins=("nvidia-cudnn-cu13==9.13.0.50",),
    )
    with open(package / "__init__.py", "a") as init:
        init.write(f"# torch 2.14.1 then calls {TORCH_PRELOADS_ALWAYS}\n")
    global_deps = package / "lib" / "libtorch_global_deps.so"
    shutil.copyfile(libtorch_cuda(compiler, ["libcudart.so.13"], rpath, ()), global_deps)
    plant_nvidia_wheel(site, compiler, "cu13", cudart=13000)
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 13, 0), cudnn_cudart=13000)
    return global_deps


def test_tensorflow_221_loads_cusolver_only_after_torch_and_the_doctor_says_which_order_works(
    host: SimHost, compiler: Compiler
) -> None:
    if cache_or_default_folders_have(CUSOLVER):
        pytest.skip(f"this machine's loader finds {CUSOLVER} by itself")
    host.add_driver([SimGpu()], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    site = host.site_packages
    tensorflow = plant_tensorflow(site, compiler) / "libtensorflow_framework.so.2"  # 2.21.0: no cusolver in RUNPATH
    plant_cuda12_wheels(site, compiler, cudart=12050, cudnn=None)  # nvidia/cudnn is torch's cu13 wheel's
    global_deps = torch_2_14_cu130(site, compiler)
    cusolver = site / "nvidia" / "cusolver" / "lib" / CUSOLVER

    code, report, text = doctor(host)
    assert code == 1, text  # TensorFlow alone still cannot: that error stays
    assert load_of(report, "tensorflow", CUSOLVER)["path"] is None
    preload = load_of(report, "torch", CUSOLVER)
    assert (preload["path"], preload["how"], preload["required"]) == (str(cusolver), "preload", False)

    needs = finding(report, "framework-needs-import-order")
    assert needs["severity"] == "warning"
    assert needs["summary"] == (
        "TensorFlow 2.21.0 gets every library it needs only when PyTorch 2.14.1+cu130 is imported before it in the "
        f"same process: alone it cannot load {CUSOLVER}"
    )
    evidence = "\n".join(needs["evidence"])
    assert f"{CUSOLVER}: its own search finds no copy; after PyTorch 2.14.1+cu130 it gets {cusolver}" in evidence
    assert "order that works: import torch, then import tensorflow" in evidence
    assert needs["fix"].startswith(f"add {cusolver.parent} to LD_LIBRARY_PATH")
    assert "as a workaround: import torch before import tensorflow" in needs["fix"]
    assert "[framework-needs-import-order]" in text
    assert [f["code"] for f in order_findings(report)] == ["framework-needs-import-order"]  # torch: no order matters

    # The real loader agrees. torch first: libtorch_global_deps.so, then its preload of that file by absolute
    # path; TensorFlow's dlopen by name is then served. TensorFlow first: its own search fails.
    env = {"PATH": "/usr/bin:/bin"}
    torch_first = run_child(PYTHON, site, [Load(global_deps), Load(cusolver), Dlopen(tensorflow, CUSOLVER)], env)
    assert torch_first.errors == {}
    assert os.path.realpath(cusolver) in torch_first.mapped
    tf_first = run_child(PYTHON, site, [Dlopen(tensorflow, CUSOLVER)], env)
    assert f"{CUSOLVER}: cannot open shared object file" in tf_first.errors[CUSOLVER]


# torch 2.15 (cuDNN 9.26) after JAX (its preload of cuDNN 9.8.0 from a user site) --------------------------------------


def test_torch_after_jax_gets_its_older_cudnn_and_the_doctor_says_import_torch_first(
    host: SimHost, compiler: Compiler
) -> None:
    host.add_driver([SimGpu()], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    torch_cu132(host.site_packages, compiler)
    user_site = host.root / "user" / "site-packages"
    jax_cuda12(user_site, compiler)
    host.variables["PYTHONPATH"] = f"{user_site}:{host.site_packages}"
    torch_cudnn = host.wheel_folder("cudnn") / "libcudnn.so.9"
    jax_cudnn = user_site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"

    code, report, text = doctor(host)
    assert code == 0, report["findings"]  # each alone runs: warnings only
    conflict = finding(report, "framework-import-order-conflict")
    assert conflict["severity"] == "warning"
    assert conflict["summary"] == (
        "PyTorch 2.15.0+cu132 imported after JAX 0.10.2 gets its copy of libcudnn.so.9 (version 9.8.0): "
        "PyTorch 2.15.0+cu132 refuses it: compiled with cuDNN 9.26.0"
    )
    assert f"alone: {torch_cudnn} (version 9.26.0)" in conflict["evidence"]
    assert any(line.startswith(f"after JAX 0.10.2: {jax_cudnn} (version 9.8.0)") for line in conflict["evidence"])
    assert "order that works: import torch, then import jax (both get copies they accept)" in conflict["evidence"]
    assert conflict["fix"].startswith("import torch before import jax in every test process")
    assert "framework-needs-import-order" not in codes(report)
    assert "[framework-import-order-conflict]" in text

    # The real loader agrees: after JAX's preload by absolute path, libtorch_cuda.so's DT_NEEDED libcudnn.so.9 is
    # JAX's 9.8.0 and torch's own 9.26.0 is never mapped; torch first keeps its own.
    env = {"PATH": "/usr/bin:/bin"}
    libtorch = host.site_packages / "torch" / "lib" / "libtorch_cuda.so"
    jax_first = run_child(PYTHON, host.site_packages, [Load(jax_cudnn), Load(libtorch), CUDNN_VERSION], env)
    assert jax_first.values == [90800]
    assert os.path.realpath(torch_cudnn) not in jax_first.mapped
    torch_first = run_child(PYTHON, host.site_packages, [Load(libtorch), Load(jax_cudnn), CUDNN_VERSION], env)
    assert torch_first.values == [92600]  # JAX's copy is mapped too, and requests by name never reach it
