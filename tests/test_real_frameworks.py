"""The doctor against real CUDA builds of torch, JAX, TensorFlow and ONNX Runtime from PyPI: opt-in, with
--framework-wheels.

The doctor reads each framework from its files and never imports it. Here each framework is imported in a child
process of its own and says itself what it was built with and which CUDA libraries it mapped; the doctor's facts
must agree. ``tox -e frameworks`` installs the wheels (about 12 GB) and runs these. This module imports no
framework: the default run collects it and deselects it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import pytest_cudnn

from .envbuilder import tensorflow_json

# e2e: each test reads the doctor and the frameworks from child processes. The timeout: one test may set up both
# module fixtures, the doctor (bounded at 300 s) and TensorFlow's import (600 s), beyond the suite's 300 s.
pytestmark = [pytest.mark.framework_wheels, pytest.mark.e2e, pytest.mark.timeout(1200)]

# The folder holding the pytest_cudnn this run imported: the children run from it, so that `-m pytest_cudnn` is the
# code under test rather than another installed copy.
_SOURCE_ROOT = str(Path(pytest_cudnn.__file__).resolve().parent.parent)
# The CUDA libraries whose copies are compared with what a framework maps (stems before ".so"): libcusparse and
# libcufft too, whose CUDA 12 and CUDA 13 wheels share sonames (libcusparse.so.12) in different folders.
_COMPARED = ("libcudart", "libcudnn", "libcublas", "libcublasLt", "libcusparse", "libcufft")

_MAPS = """
def mapped():
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].startswith("/"):
                found.add(os.path.realpath(fields[5].strip()))
    return sorted(found)
"""


def _child(code: str, timeout: float = 300) -> Any:
    """Run ``code`` in a fresh interpreter of this environment; it prints one JSON document as its last line."""
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=_SOURCE_ROOT,
    )
    assert completed.returncode == 0, f"the child failed ({completed.returncode}):\n{completed.stderr[-4000:]}"
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _installed(name: str) -> None:
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed here (tox -e frameworks installs it)")


def _stem(file_name: str) -> str:
    """'libcudnn.so.9' and 'libcudnn.so.9.24.0' are both 'libcudnn'."""
    return file_name.split(".so", 1)[0]


def _version(text: str) -> tuple[int, ...]:
    """'12.9', '12.9.0' and '12.9.0.0' are one version; '12' is another."""
    parts = [int(part) for part in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _cuda(number: int) -> str:
    """CUDA's integer encoding, as cudaRuntimeGetVersion and JAX give it: 12090 is 12.9."""
    return f"{number // 1000}.{number % 1000 // 10}"


def _cudnn(number: int) -> str:
    """cuDNN's integer encoding: major * 10000 + minor * 100 + patch from 9 on, major * 1000 + ... before."""
    if number >= 90000:
        return f"{number // 10000}.{number % 10000 // 100}.{number % 100}"
    return f"{number // 1000}.{number % 1000 // 100}.{number % 100}"


@pytest.fixture(scope="module")
def doctor() -> dict[str, Any]:
    """The doctor's JSON for this environment: probed once, by the command a person runs."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=_SOURCE_ROOT,
    )
    # 1 is the verdict of a machine without a GPU; 2 or a crash is a fault of the doctor.
    assert completed.returncode in (0, 1), completed.stderr[-4000:]
    report: dict[str, Any] = json.loads(completed.stdout)
    return report


def _framework(report: dict[str, Any], name: str) -> dict[str, Any]:
    builds = [build for build in report["environment"]["frameworks"] if build["name"] == name]
    assert len(builds) == 1, f"the doctor lists {len(builds)} {name} entries: {[b['name'] for b in builds]}"
    build: dict[str, Any] = builds[0]
    assert build["state"] == "found", build["reason"]
    return build


def _fact(build: dict[str, Any], key: str) -> str:
    fact = build[key]
    assert fact is not None, f"the doctor does not say {build['name']}'s {key} build ({build['reason']})"
    value: str = fact["value"]
    return value


def _by_stem(paths: Iterable[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in paths:
        stem = _stem(os.path.basename(path))
        if stem in _COMPARED:
            found.setdefault(stem, set()).add(path)
    return found


# torch


def test_torch_build_is_what_torch_says(doctor: dict[str, Any]) -> None:
    _installed("torch")
    said = _child(
        "import json, torch\n"
        "print(json.dumps({'version': torch.__version__, 'cuda': torch.version.cuda,\n"
        "    'compiled_cudnn': list(torch._C._cudnn.getCompileVersion())}))"
    )
    build = _framework(doctor, "torch")
    assert build["version"] == said["version"]
    assert build["is_cuda_build"] is (said["cuda"] is not None)
    assert said["cuda"] is not None, "a CUDA build of torch is needed here (tox -e frameworks installs one)"
    assert _fact(build, "cuda") == said["cuda"]
    assert _version(_fact(build, "cudnn")) == _version(".".join(str(part) for part in said["compiled_cudnn"]))


def _compare_loads(build: dict[str, Any], mapped: Iterable[str], stems: Iterable[str]) -> None:
    """The files of the compared libraries a framework mapped, against the copies the doctor says it loads."""
    actual = _by_stem(mapped)
    for stem in stems:
        assert stem in actual, f"importing {build['name']} mapped no {stem}: {sorted(actual)}"
    predicted: dict[str, set[str]] = {}
    for load in build["loads"]:
        stem = _stem(load["name"])
        if stem in _COMPARED and load["path"] is not None:  # a copy found nowhere maps nothing
            predicted.setdefault(stem, set()).add(os.path.realpath(load["path"]))
    wrong = [
        f"{stem}: the doctor says {sorted(predicted.get(stem, ()))}, "
        f"{build['name']} mapped {sorted(actual.get(stem, ()))}"
        for stem in sorted(set(predicted) | set(actual))
        if predicted.get(stem) != actual.get(stem)
    ]
    assert not wrong, "\n".join(wrong)


def test_torch_loads_the_copies_the_doctor_predicts(doctor: dict[str, Any]) -> None:
    """Which CUDA library files ``import torch`` maps (its DT_NEEDED, and the nvidia/*/lib copies its
    ``_preload_cuda_deps`` loads), against the doctor's ``loads``."""
    _installed("torch")
    mapped = _child(f"import json, os\n{_MAPS}\nimport torch\nprint(json.dumps(mapped()))")
    _compare_loads(_framework(doctor, "torch"), mapped, ("libcudart", "libcudnn", "libcublas"))


def test_torch_cudnn_runtime_is_the_copy_the_doctor_probed(doctor: dict[str, Any]) -> None:
    """``torch.backends.cudnn.version()`` answers without a GPU, from the libcudnn torch loaded: the doctor probed
    that same file and must read the same version."""
    _installed("torch")
    said = _child(
        f"import json, os\n{_MAPS}\nimport torch\n"
        "version = torch.backends.cudnn.version()\n"
        "print(json.dumps({'version': version, 'mapped': mapped()}))"
    )
    assert said["version"] is not None, "torch found no cuDNN"
    [loaded] = _by_stem(said["mapped"])["libcudnn"]
    probed = [copy for copy in doctor["environment"]["cudnns"] if os.path.realpath(copy["path"]) == loaded]
    assert probed, f"the doctor did not probe {loaded}, the copy torch loaded"
    for copy in probed:
        assert copy["state"] == "found", copy["reason"]
        assert copy["version_raw"] == said["version"]
        assert _version(copy["version"]) == _version(_cudnn(said["version"]))


def test_torch_nccl_is_the_copy_the_doctor_versioned(doctor: dict[str, Any]) -> None:
    """The libnccl ``import torch`` maps, asked ncclGetVersion in torch's own process (the handle torch uses): the
    doctor must have found that file among torch's loads, asked it the same version, and read the CUDA its build
    names. ``torch.cuda.nccl.version()`` is what torch was compiled with (measured: (2, 30, 7), its pin, while the
    file nvidia-nccl-cu12 wrote over it answers 23203): where the two differ, the doctor says so."""
    _installed("torch")
    said = _child(
        f"import ctypes, json, os\n{_MAPS}\nimport torch\n"
        "[path] = [p for p in mapped() if os.path.basename(p).startswith('libnccl.so')]\n"
        "code = ctypes.c_int()\nassert ctypes.CDLL(path).ncclGetVersion(ctypes.byref(code)) == 0\n"
        "print(json.dumps({'path': path, 'code': code.value, 'built': list(torch.cuda.nccl.version())}))"
    )
    judged = next(f for f in doctor["frameworks"] if f["name"] == "torch")
    assert os.path.realpath(judged["libraries"]["nccl"]["path"]) == said["path"]
    [copy] = [c for c in doctor["environment"]["libraries"] if os.path.realpath(c["path"]) == said["path"]]
    assert copy["state"] == "found", copy["reason"]
    assert copy["version_raw"] == said["code"]
    with open(said["path"], "rb") as library:
        assert f"NCCL version {copy['version']}+cuda{copy['built_for']['value']}".encode() in library.read()
    built = ".".join(str(part) for part in said["built"])
    pinned = [f for f in doctor["findings"] if f["code"] == "library-pin-not-met" and "PyTorch" in f["summary"]]
    assert bool(pinned) is (built != copy["version"]), (built, copy["version"], pinned)


def test_torch_cublas_is_the_release_the_doctor_asked(doctor: dict[str, Any]) -> None:
    """The libcublas and libcublasLt ``import torch`` maps, asked cublasGetProperty and cublasLtGetProperty in
    torch's own process: the doctor names those files as torch's, of the same releases."""
    _installed("torch")
    said = _child(
        f"import ctypes, json, os\n{_MAPS}\nimport torch\n"
        "def release(path, prefix):\n"
        "    library, value, parts = ctypes.CDLL(path), ctypes.c_int(), []\n"
        "    for kind in (0, 1, 2):\n"
        "        assert getattr(library, prefix + 'GetProperty')(kind, ctypes.byref(value)) == 0\n"
        "        parts.append(value.value)\n"
        "    return '.'.join(map(str, parts))\n"
        "found = {}\n"
        "for path in mapped():\n"
        "    name = os.path.basename(path)\n"
        "    if name.startswith('libcublas.so.13') or name.startswith('libcublasLt.so.13'):\n"
        "        kind = 'cublaslt' if 'Lt' in name else 'cublas'\n"
        "        found[kind] = [path, release(path, 'cublasLt' if kind == 'cublaslt' else 'cublas')]\n"
        "print(json.dumps(found))"
    )
    judged = next(f for f in doctor["frameworks"] if f["name"] == "torch")
    for kind, (path, release) in said.items():
        assert os.path.realpath(judged["libraries"][kind]["path"]) == path
        assert judged["libraries"][kind]["version"] == release
    assert set(said) == {"cublas", "cublaslt"}


# JAX


def test_jax_build_is_what_its_cuda_plugin_says(doctor: dict[str, Any]) -> None:
    _installed("jax")
    said = _child(
        "import importlib, json, jax\n"
        "for major in (13, 12, 11):\n"
        "    try:\n"
        "        versions = importlib.import_module(f'jax_cuda{major}_plugin._versions')\n"
        "    except ImportError:\n"
        "        continue\n"
        "    print(json.dumps({'version': jax.__version__, 'major': major,\n"
        "        'cuda': versions.cuda_runtime_build_version(), 'cudnn': versions.cudnn_build_version()}))\n"
        "    break\n"
        "else:\n"
        "    print(json.dumps({'version': jax.__version__, 'major': None}))"
    )
    build = _framework(doctor, "jax")
    assert build["version"] == said["version"]
    assert said["major"] is not None, "no jax_cuda*_plugin: a CUDA build of JAX is needed here (jax[cuda12])"
    assert build["is_cuda_build"] is True
    assert _version(_fact(build, "cuda")) == _version(_cuda(said["cuda"]))
    assert _version(_fact(build, "cudnn")) == _version(_cudnn(said["cudnn"]))


def test_jax_loads_the_copies_the_doctor_predicts(doctor: dict[str, Any]) -> None:
    """JAX preloads its CUDA libraries when its backends start (``jax.devices()``), before it looks for a GPU: on a
    machine without one it falls back to the CPU with the libraries already mapped."""
    _installed("jax")
    mapped = _child(
        f"import json, os\n{_MAPS}\nimport jax\njax.devices()\nprint(json.dumps(mapped()))",
    )
    _compare_loads(_framework(doctor, "jax"), mapped, ("libcudart", "libcudnn", "libcublas"))


# TensorFlow


@pytest.fixture(scope="module")
def tensorflow_says() -> dict[str, Any]:
    _installed("tensorflow")
    said: dict[str, Any] = _child(
        "import json, tensorflow as tf\n"
        "info = dict(tf.sysconfig.get_build_info())\n"
        "print(json.dumps({'version': tf.__version__, 'info': info}, default=str))",
        timeout=600,
    )
    return said


def test_tensorflow_build_info_is_what_tensorflow_says(doctor: dict[str, Any], tensorflow_says: dict[str, Any]) -> None:
    info = tensorflow_says["info"]
    tf = tensorflow_json(doctor["environment"])
    assert tf["state"] == "found", tf["reason"]
    assert tf["version"] == tensorflow_says["version"]
    assert tf["is_cuda_build"] is bool(info.get("is_cuda_build"))
    assert info.get("is_cuda_build"), "a CUDA build of TensorFlow is needed here (tensorflow[and-cuda])"
    assert tf["cuda_version_raw"] == info["cuda_version"]
    assert tf["cudnn_version_raw"] == info["cudnn_version"]
    assert _version(tf["cuda_version"]) == _version(info["cuda_version"])
    assert _version(tf["cudnn_version"]) == _version(info["cudnn_version"])
    assert sorted(tf["compute_capabilities"]) == sorted(info["cuda_compute_capabilities"])


def test_tensorflow_framework_entry_is_what_tensorflow_says(
    doctor: dict[str, Any], tensorflow_says: dict[str, Any]
) -> None:
    info = tensorflow_says["info"]
    build = _framework(doctor, "tensorflow")
    assert build["version"] == tensorflow_says["version"]
    assert build["is_cuda_build"] is bool(info.get("is_cuda_build"))
    assert _version(_fact(build, "cuda")) == _version(info["cuda_version"])
    assert _version(_fact(build, "cudnn")) == _version(info["cudnn_version"])


# ONNX Runtime


_ORT_PROVIDER = "libonnxruntime_providers_cuda.so"


def test_onnxruntime_build_is_what_onnxruntime_says(doctor: dict[str, Any]) -> None:
    """The doctor reads capi/build_and_package_info.py with ast; onnxruntime, imported, says the same, and a CUDA
    build is one that lists the CUDA execution provider."""
    _installed("onnxruntime")
    said = _child(
        "import json, onnxruntime\n"
        "from onnxruntime.capi import build_and_package_info as info\n"
        "print(json.dumps({'version': onnxruntime.__version__, 'cuda': getattr(info, 'cuda_version', None),\n"
        "    'providers': onnxruntime.get_available_providers(),\n"
        "    'preload_dlls': hasattr(onnxruntime, 'preload_dlls')}))"
    )
    build = _framework(doctor, "onnxruntime")
    assert build["version"] == said["version"]
    assert build["is_cuda_build"] is ("CUDAExecutionProvider" in said["providers"]), said["providers"]
    assert said["cuda"] is not None, "a CUDA build of ONNX Runtime is needed here (onnxruntime-gpu)"
    assert _fact(build, "cuda") == said["cuda"]
    assert said["preload_dlls"]


def test_onnxruntime_provider_loads_only_as_the_doctor_predicts(doctor: dict[str, Any]) -> None:
    """A plain load of the CUDA provider (what a session asking for CUDAExecutionProvider does) fails on a library
    the doctor says its search cannot find, or succeeds with the copies the doctor names; after
    ``onnxruntime.preload_dlls()`` nothing but the driver can be missing, and each library the doctor says the
    plain search cannot find was mapped from the wheel copy it names first in ``shadowed``. On a machine without a
    driver libcuda.so.1 is missing both times (glibc unmaps a failed load): the copies preload_dlls mapped remain."""
    _installed("onnxruntime")
    build = _framework(doctor, "onnxruntime")
    provider = os.path.join(build["location"], "capi", _ORT_PROVIDER)
    said = _child(
        f"import ctypes, json, os\n{_MAPS}\n"
        f"provider = {provider!r}\n"
        "def attempt():\n"
        "    try:\n"
        "        ctypes.CDLL(provider)\n"
        "        return None\n"
        "    except OSError as error:\n"
        "        return str(error)\n"
        "plain = attempt()\n"
        "plain_mapped = mapped()\n"
        "import onnxruntime\n"
        "onnxruntime.preload_dlls()\n"
        "print(json.dumps({'plain': plain, 'plain_mapped': plain_mapped, 'after': attempt(), 'mapped': mapped()}))"
    )
    needed = [load for load in build["loads"] if load["how"] == "DT_NEEDED"]
    assert needed, f"the doctor lists no DT_NEEDED loads of {_ORT_PROVIDER}: {build['loads']}"
    unfound = [load["name"] for load in needed if load["path"] is None]
    driver = doctor["environment"]["driver"]["state"] == "found"
    if unfound:
        assert said["plain"] is not None, f"the provider loaded, yet the doctor cannot find {unfound}"
        assert any(name in said["plain"] for name in unfound), (said["plain"], unfound)
    elif said["plain"] is None:
        for load in needed:
            assert os.path.realpath(load["path"]) in said["plain_mapped"], load
    else:
        assert not driver, said["plain"]
        assert "libcuda.so.1" in said["plain"], said["plain"]
    assert said["after"] is None or (not driver and "libcuda.so.1" in said["after"]), said["after"]
    for load in needed:
        if load["path"] is None and load["shadowed"]:
            assert os.path.realpath(load["shadowed"][0]) in said["mapped"], (load, said["mapped"])
