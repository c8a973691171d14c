"""The loader model against the real glibc loader, on framework installs laid out as the wheels lay them out.

Each case plants torch, TensorFlow and JAX (tests/frameworkhosts.py: real objects linked as the wheels link them,
with stand-in CUDA libraries in ``site-packages/nvidia/<component>/lib`` and elsewhere), starts a fresh Python
that loads them and lets them dlopen by name from inside, and compares the files it mapped (/proc/self/maps) with
what :mod:`pytest_cudnn._base.loader` predicts from the objects' dynamic sections as :func:`read_object` reads them.

The model is given no ldconfig cache and default folders that hold no CUDA library. The real loader does read
this machine's cache, which may list a CUDA toolkit's libcudart: every winner the model finds comes before the
cache in the search, and each "not found" case first checks that the cache does not have the name.
"""

from __future__ import annotations

import _ctypes
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_cudnn._base.loader import ElfObject, Outcome, Process, Rule, resolve, search_order
from pytest_cudnn.probe.discovery import parse_ldconfig
from pytest_cudnn.probe.objects import read_object

from .frameworkhosts import (
    Action,
    Dlopen,
    JaxInstall,
    Load,
    Ran,
    plant_jax,
    plant_libraries,
    plant_nvidia_wheel,
    plant_tensorflow_framework,
    plant_torch,
    run_child,
)
from .simhost import Compiler, SimHost

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")

PYTHON = sys.executable
# glibc's trusted folders on Debian and Ubuntu x86-64; none holds a CUDA library on these machines (checked below).
DEFAULT_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
CUDNN = "libcudnn.so.9"
VERSION = "ctypes.CDLL('libcudnn.so.9').cudnnGetVersion()"  # which copy answers a plain load by soname


def elf_object(path: Path | str) -> ElfObject:
    """The model's view of an object: the path it is loaded by, and its dynamic section as the product reads it."""
    linked = read_object(str(path))
    assert linked.reason is None, linked.reason
    return ElfObject(str(path), rpath=linked.rpath, runpath=linked.runpath)


def model(env: Mapping[str, str], already_loaded: Mapping[str, str] | None = None) -> Process:
    return Process(
        ld_library_path=env.get("LD_LIBRARY_PATH"),
        ldconfig=(),
        default_dirs=DEFAULT_DIRS,
        already_loaded=dict(already_loaded or {}),
        executable=elf_object(os.path.realpath(PYTHON)),
    )


def predict(name: str, requester: ElfObject, process: Process) -> Outcome:
    return resolve(search_order(name, requester, process), os.path.isfile)


def winner(outcome: Outcome) -> str | None:
    return os.path.realpath(outcome.winner.path) if outcome.winner else None


def shadowed(outcome: Outcome) -> list[str]:
    return [os.path.realpath(step.path) for step in outcome.shadowed]


def copies(ran: Ran, soname: str) -> list[str]:
    """The mapped files of ``soname`` (libcudnn.so.9 -> libcudnn.so.9.26.0, not libcudnn_graph.so.9)."""
    return [path for path in ran.mapped if os.path.basename(path).startswith(soname)]


def system_cache_has(name: str) -> bool:
    cache = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    tag = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine(), "")
    return any(entry == name for entry, _ in parse_ldconfig(cache, tag))


@dataclass
class Venv:
    """One site-packages with torch (CUDA 13), TensorFlow 2.21 (CUDA 12) and jax[cuda12], their nvidia wheels, and
    another CUDA stack (cuDNN 9.1.0, CUDA 12.4 and 13.0 runtimes) in a folder that LD_LIBRARY_PATH may name."""

    root: Path
    site: Path
    torch: Path  # torch/lib/libtorch_cuda.so
    tensorflow: Path  # tensorflow/libtensorflow_framework.so.2
    jax: JaxInstall
    other: Path  # the other stack's folder

    def env(self, ld_library_path: bool = True) -> dict[str, str]:
        env = {"PATH": "/usr/bin:/bin"}
        if ld_library_path:
            env["LD_LIBRARY_PATH"] = str(self.other)
        return env

    def wheel(self, component: str, soname: str) -> str:
        return os.path.realpath(self.site / "nvidia" / component / "lib" / soname)

    def run(self, actions: Sequence[Action], env: Mapping[str, str]) -> Ran:
        ran = run_child(PYTHON, self.site, actions, env)
        # Every CUDA library the child mapped is one planted here: none came from the system's toolkit.
        assert all(path.startswith(str(self.root.resolve()) + "/") for path in ran.mapped), ran
        return ran


@pytest.fixture
def venv(host: SimHost, compiler: Compiler) -> Venv:
    site = host.site_packages
    torch = plant_torch(site, compiler) / "lib" / "libtorch_cuda.so"
    host.add_tensorflow("2.21.0", "tensorflow-2.21.0-linux.py")
    tensorflow = plant_tensorflow_framework(site, compiler)
    jax = plant_jax(site, compiler)
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020)
    plant_nvidia_wheel(site, compiler, "cu13", cudart=13020)
    plant_nvidia_wheel(site, compiler, "cuda_runtime", cudart=12090)
    plant_nvidia_wheel(site, compiler, "cusolver", others=["libcusolver.so.11"])
    other = plant_libraries(host.root / "opt" / "cuda" / "lib", compiler, cudart=12040, cudnn=(9, 1, 0))
    plant_libraries(other, compiler, cudart=13000)
    return Venv(host.root, site, torch, tensorflow, jax, other)


@pytest.fixture(autouse=True, scope="module")
def _no_cuda_in_default_dirs() -> None:
    """The model's default folders hold no CUDA library here, so what it leaves unfound the loader cannot find."""
    for folder in DEFAULT_DIRS:
        for soname in ("libcudart.so.12", "libcudart.so.13", CUDNN, "libcusolver.so.11"):
            assert not os.path.exists(os.path.join(folder, soname)), f"{folder} has {soname}"


def test_the_planted_objects_are_linked_as_the_wheels_are(venv: Venv) -> None:
    torch = read_object(str(venv.torch))
    assert {"libcudart.so.13", CUDNN} <= set(torch.needed)
    assert (torch.rpath, torch.runpath) == (
        "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN",
        None,
    )
    assert (torch.sass, torch.ptx) == (("sm_75", "sm_80"), ())
    plugin = read_object(str(venv.jax.cuda_object))
    assert plugin.rpath is not None
    assert plugin.rpath.startswith("$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:")
    assert plugin.runpath is None
    assert not [name for name in plugin.needed if name.startswith(("libcu", "libnv"))]
    tensorflow = read_object(str(venv.tensorflow))
    assert (tensorflow.soname, tensorflow.rpath) == ("libtensorflow_framework.so.2", None)
    assert tensorflow.runpath == ":".join(
        f"$ORIGIN/../nvidia/{c}/lib" for c in ("cuda_runtime", "cudnn", "cublas", "cufft", "cusparse")
    )


def test_torch_rpath_keeps_its_wheels_against_ld_library_path(venv: Venv) -> None:
    env = venv.env()
    ran = venv.run([Load(venv.torch), VERSION], env)
    torch = elf_object(venv.torch)
    for name, component in (("libcudart.so.13", "cu13"), (CUDNN, "cudnn")):
        outcome = predict(name, torch, model(env))
        assert outcome.winner is not None
        assert (outcome.winner.rule, winner(outcome)) == (Rule.RPATH, venv.wheel(component, name))
        assert os.path.realpath(venv.other / name) in shadowed(outcome)  # LD_LIBRARY_PATH's copy loses
        assert copies(ran, name) == [winner(outcome)]
    assert ran.values == [92600]  # the wheel's cuDNN answers, not LD_LIBRARY_PATH's 9.1.0


def test_tensorflow_runpath_yields_to_ld_library_path(venv: Venv) -> None:
    tensorflow = elf_object(venv.tensorflow)
    actions: list[Action] = [Dlopen(venv.tensorflow, "libcudart.so.12"), Dlopen(venv.tensorflow, CUDNN), VERSION]
    for on_path, rule, answer in ((True, Rule.LD_LIBRARY_PATH, 90100), (False, Rule.RUNPATH, 92600)):
        env = venv.env(on_path)
        ran = venv.run(actions, env)
        assert ran.errors == {}
        for name, component in (("libcudart.so.12", "cuda_runtime"), (CUDNN, "cudnn")):
            outcome = predict(name, tensorflow, model(env))
            assert outcome.winner is not None
            expected = os.path.realpath(venv.other / name) if on_path else venv.wheel(component, name)
            assert (outcome.winner.rule, winner(outcome)) == (rule, expected)
            assert copies(ran, name) == [expected]
        assert ran.values == [answer]


def test_the_jax_plugin_dlopens_through_its_own_rpath(venv: Venv) -> None:
    env = venv.env()
    plugin = elf_object(venv.jax.cuda_object)
    ran = venv.run([Dlopen(venv.jax.cuda_object, CUDNN), Dlopen(venv.jax.cuda_object, "libcudart.so.12")], env)
    assert ran.errors == {}
    for name, component in ((CUDNN, "cudnn"), ("libcudart.so.12", "cuda_runtime")):
        outcome = predict(name, plugin, model(env))
        assert outcome.winner is not None
        assert (outcome.winner.rule, winner(outcome)) == (Rule.RPATH, venv.wheel(component, name))
        assert copies(ran, name) == [winner(outcome)]
    # The same name dlopened by Python itself (the caller is _ctypes, which has no DT_RPATH) is LD_LIBRARY_PATH's.
    by_python = venv.run([VERSION], env)
    outcome = predict(CUDNN, elf_object(_ctypes.__file__), model(env))
    assert outcome.winner is not None
    assert (outcome.winner.rule, winner(outcome)) == (Rule.LD_LIBRARY_PATH, os.path.realpath(venv.other / CUDNN))
    assert copies(by_python, CUDNN) == [winner(outcome)]
    assert by_python.values == [90100]


def test_a_library_preloaded_by_path_wins_over_every_search(venv: Venv, compiler: Compiler) -> None:
    # As JAX's _load_nvidia_libraries loads by absolute path before XLA dlopens by name: here a copy that no search
    # path leads to, so only the already-loaded rule can explain it.
    elsewhere = plant_libraries(venv.root / "elsewhere", compiler, cudnn=(9, 8, 0), cudnn_cudart=12080)
    preloaded = elsewhere / CUDNN
    env = venv.env()
    ran = venv.run([Load(preloaded), Dlopen(venv.jax.cuda_object, CUDNN), VERSION], env)
    assert ran.errors == {}
    outcome = predict(CUDNN, elf_object(venv.jax.cuda_object), model(env, {CUDNN: str(preloaded)}))
    assert outcome.winner is not None
    assert (outcome.winner.rule, winner(outcome)) == (Rule.ALREADY_LOADED, os.path.realpath(preloaded))
    assert shadowed(outcome) == [venv.wheel("cudnn", CUDNN), os.path.realpath(venv.other / CUDNN)]
    assert copies(ran, CUDNN) == [winner(outcome)]
    assert ran.values == [90800]


@pytest.mark.parametrize("first", ["torch", "jax"])
def test_the_first_framework_to_load_a_soname_serves_the_other(
    first: str, venv: Venv, host: SimHost, compiler: Compiler
) -> None:
    # jax[cuda12] in a second site folder (a user site beside the venv), with its own cuDNN wheel: 9.8.0.
    user_site = host.root / "user" / "site-packages"
    jax = plant_jax(user_site, compiler)
    plant_nvidia_wheel(user_site, compiler, "cudnn", cudnn=(9, 8, 0), cudnn_cudart=12080)
    plant_nvidia_wheel(user_site, compiler, "cuda_runtime", cudart=12090)
    env = venv.env(ld_library_path=False)
    torch, plugin = elf_object(venv.torch), elf_object(jax.cuda_object)
    torch_load, jax_load = Load(venv.torch), Dlopen(jax.cuda_object, CUDNN)
    loads: list[Action] = [torch_load, jax_load] if first == "torch" else [jax_load, torch_load]
    ran = venv.run([*loads, VERSION], env)
    assert ran.errors == {}

    first_object, second_object = (torch, plugin) if first == "torch" else (plugin, torch)
    first_outcome = predict(CUDNN, first_object, model(env))
    assert first_outcome.winner is not None
    assert first_outcome.winner.rule is Rule.RPATH
    second_outcome = predict(CUDNN, second_object, model(env, {CUDNN: first_outcome.winner.path}))
    assert second_outcome.winner is not None
    assert (second_outcome.winner.rule, winner(second_outcome)) == (Rule.ALREADY_LOADED, winner(first_outcome))
    own = predict(CUDNN, second_object, model(env))  # what the second would take alone: its own wheel
    assert winner(own) != winner(first_outcome)
    assert winner(own) in shadowed(second_outcome)

    torch_copy, jax_copy = venv.wheel("cudnn", CUDNN), os.path.realpath(user_site / "nvidia/cudnn/lib" / CUDNN)
    assert winner(first_outcome) == (torch_copy if first == "torch" else jax_copy)
    assert copies(ran, CUDNN) == [winner(first_outcome)]
    assert ran.values == [92600 if first == "torch" else 90800]


def test_a_library_off_the_runpath_is_not_found_though_installed(venv: Venv, host: SimHost, compiler: Compiler) -> None:
    name = "libcusolver.so.11"
    if system_cache_has(name):
        pytest.skip(f"this machine's ldconfig cache lists {name}: the loader would find it there")
    installed = venv.site / "nvidia" / "cusolver" / "lib" / name
    assert installed.is_file()
    env = venv.env(ld_library_path=False)
    ran = venv.run([Dlopen(venv.tensorflow, name)], env)
    assert f"{name}: cannot open shared object file" in ran.errors[name]
    assert copies(ran, name) == []
    order = search_order(name, elf_object(venv.tensorflow), model(env))
    assert resolve(order, os.path.isfile).winner is None
    assert str(installed.parent) not in {os.path.normpath(step.folder) for step in order.steps}

    # TensorFlow 2.15's RUNPATH lists nvidia/cusolver/lib: there it is found, in reality and in the model.
    site_2_15 = host.root / "tf215" / "site-packages"
    tensorflow_2_15 = plant_tensorflow_framework(
        site_2_15, compiler, runpath_components=("cuda_runtime", "cudnn", "cusolver"), version="2.15.0"
    )
    plant_nvidia_wheel(site_2_15, compiler, "cusolver", others=[name])
    found = run_child(PYTHON, site_2_15, [Dlopen(tensorflow_2_15, name)], env)
    outcome = predict(name, elf_object(tensorflow_2_15), model(env))
    assert outcome.winner is not None
    assert (outcome.winner.rule, winner(outcome)) == (
        Rule.RUNPATH,
        os.path.realpath(site_2_15 / "nvidia/cusolver/lib" / name),
    )
    assert (found.errors, copies(found, name)) == ({}, [winner(outcome)])


def test_the_jax_versions_module_answers_its_builds_and_maps_no_cuda_library(venv: Venv) -> None:
    assert venv.jax.versions is not None
    module = "__import__('jax_cuda12_plugin._versions', fromlist=['_'])"
    ran = venv.run(
        [
            f"{module}.cuda_runtime_build_version()",
            f"{module}.cudnn_build_version()",
            f"{module}.__file__",
            "sorted(m for m in sys.modules if m.startswith('jax'))",
        ],
        venv.env(),
    )
    assert ran.values == [12090, 90800, str(venv.jax.versions), ["jax_cuda12_plugin", "jax_cuda12_plugin._versions"]]
    assert ran.mapped == []
