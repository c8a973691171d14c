"""Fault injection on simulated hosts: broken, crashing and hanging libraries and hostile loader paths each
become a recorded error, and neither the doctor nor a test session crashes or hangs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from pytest_cudnn.environment import Unreadable
from pytest_cudnn.probe.discovery import FAMILIES, Layout, RealFileSystem, find_candidates
from pytest_cudnn.probing.host import probe_environment

from .simhost import Compiler, SimGpu, SimHost
from .test_simulated_hosts import planted


def test_a_runtime_that_aborts_is_recorded_by_signal(host: SimHost) -> None:
    folder = host.folder("opt/abort")
    host.add_cudart(folder, 12020, behaviour="abort")
    host.ld_library_path.append(str(folder))
    _, report = host.doctor_json()
    [runtime] = planted(report["environment"]["cuda_runtimes"], host)
    assert (runtime["state"], runtime["failure"]) == ("error", "crashed")
    assert "killed by SIGABRT" in runtime["reason"]


def test_garbage_and_truncated_libraries_are_errors_naming_the_file(host: SimHost) -> None:
    folder = host.folder("opt/broken")
    (folder / "libcudart.so.12").write_bytes(os.urandom(4096))
    good = host.add_cudnn(host.folder("opt/good"), (9, 3, 0), cudart_version=12050)
    truncated = folder / "libcudnn.so.9"
    truncated.write_bytes(good.resolve().read_bytes()[:2000])
    host.ld_library_path.append(str(folder))
    code, report = host.doctor_json()
    env = report["environment"]
    [runtime] = [r for r in env["cuda_runtimes"] if r["path"] == str(folder / "libcudart.so.12")]
    assert (runtime["state"], runtime["failure"]) == ("error", "unloadable")
    assert runtime["reason"].startswith(f"{folder / 'libcudart.so.12'}: OSError: ")
    [cudnn] = [c for c in env["cudnns"] if c["path"] == str(truncated)]
    # The loader maps the segments the header promises, past the end of the file, and dies of SIGBUS.
    assert (cudnn["state"], cudnn["failure"]) == ("error", "crashed")
    assert str(truncated) in cudnn["reason"]
    codes = {f["code"] for f in report["findings"]}
    assert {"cuda-runtime-probe-failed", "cudnn-incomplete"} <= codes
    assert code == 1


def test_hostile_loader_path_entries_are_survived(host: SimHost) -> None:
    host.add_driver([SimGpu()])
    loop = host.root / "loop"
    loop.symlink_to(host.root / "loop")  # a symlink loop as a folder
    not_a_folder = host.root / "file.txt"
    not_a_folder.write_text("not a folder")
    looped_lib = host.folder("opt/lib")
    (looped_lib / "libcudnn.so.8").symlink_to(looped_lib / "libcudnn.so.8")  # a symlink loop as a library
    host.ld_library_path += [str(loop), str(not_a_folder), str(host.root / "missing"), str(looped_lib)]
    completed = host.run("doctor", "--json")
    assert completed.returncode in (0, 1), completed.stderr
    report = json.loads(completed.stdout)
    assert report["environment"]["driver"]["state"] == "found"
    [cudnn] = planted(report["environment"]["cudnns"], host)
    assert (cudnn["state"], cudnn["failure"]) == ("error", "unloadable")
    assert "Too many levels of symbolic links" in cudnn["reason"]  # the loader's own words
    assert "Traceback" not in completed.stderr


def test_a_session_on_a_host_full_of_faults_finishes_with_its_header(host: SimHost) -> None:
    host.add_driver([SimGpu(), SimGpu(uuid="GPU-2", pci_bus_id="00000000:05:00.0")], nvml_fail_from_index=1)
    for behaviour in ("hang", "segfault"):
        folder = host.folder(f"opt/{behaviour}")
        host.add_cudart(folder, 12020, behaviour=behaviour)
        host.ld_library_path.append(str(folder))
    broken = host.folder("opt/cudnn")
    host.add_cudnn(broken, (9, 1, 0), cudart_version=12050, siblings=False)
    host.ld_library_path.append(str(broken))
    tests = {
        "test_f.py": "import pytest\n\n@pytest.mark.requires_cudnn('>=9')\ndef test_a():\n    pass\n\n"
        "def test_b():\n    pass\n"
    }
    completed = host.pytest("--gpu-probe-timeout", "1", files=tests, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert re.search(r"^pytest-cudnn: [✓!✗] driver 535\.104\.05", completed.stdout, re.M), completed.stdout
    assert "1 passed, 1 skipped" in completed.stdout
    assert f"cuDNN at {broken / 'libcudnn.so.9'} is missing its sub-libraries" in completed.stdout


def test_unreadable_folders_are_skipped_and_unreadable_libraries_are_errors(
    host: SimHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root reads every folder, so unreadability is injected where the probe meets it: listing a folder raises
    # PermissionError in discovery, and loading a library fails with EACCES in the child.
    locked = host.folder("opt/locked")
    host.add_cudart(locked, 12020)
    real_listdir = os.listdir

    def listdir(path: Any) -> list[str]:
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    layout = Layout(system="Linux", variables={"LD_LIBRARY_PATH": str(locked)})
    fs = RealFileSystem()
    assert fs.listdir(str(locked)) is None
    assert find_candidates(layout, FAMILIES["cudart"], fs) == []
    assert fs.unreadable == {str(locked): "Permission denied"}
    # The probe says so: copies there are unknown, not absent.
    env = probe_environment(environ={"LD_LIBRARY_PATH": f"{locked}:{locked}/"})
    assert env.unreadable == (Unreadable(str(locked), "Permission denied"),)


def test_a_library_that_cannot_be_opened_is_an_error_naming_it(host: SimHost) -> None:
    folder = host.folder("opt/lib")
    library = folder / "libcudart.so.12"
    library.mkdir()  # a folder where the library should be: opening it fails as an unreadable file does
    host.ld_library_path.append(str(folder))
    _, report = host.doctor_json()
    [runtime] = planted(report["environment"]["cuda_runtimes"], host)
    assert (runtime["state"], runtime["failure"]) == ("error", "unloadable")
    assert runtime["reason"].startswith(f"{library}: OSError: ")


@pytest.mark.e2e
def test_a_child_interpreter_that_cannot_start_is_an_error_not_a_crash(tmp_path: Any) -> None:
    from pytest_cudnn.probing.host import ProbeOptions, probe_environment

    env = probe_environment(ProbeOptions(python=str(tmp_path / "no-python")))
    assert env.driver.state.value == "error"
    assert env.driver.reason is not None
    assert f"cannot start {tmp_path / 'no-python'}" in env.driver.reason


def loader_finds(name: str) -> bool:
    """Whether a plain dlopen of ``name`` succeeds on this machine (asked in a child: nothing loads here)."""
    code = f"import ctypes, sys\ntry:\n    ctypes.CDLL({name!r})\nexcept OSError:\n    sys.exit(1)\n"
    return subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


CUDNN_87_MESSAGE = (
    "Could not load library libcudnn_ops_infer.so.8. Error: libnvrtc.so: cannot open shared object file: "
    "No such file or directory"
)


@pytest.mark.skipif(loader_finds("libnvrtc.so"), reason="this machine has a libnvrtc.so the loader finds")
def test_a_cudnn_whose_sub_library_cannot_load_its_dependency_names_the_dependency(host: SimHost) -> None:
    # cuDNN 8.7.0.84, as TensorFlow 2.14 pins it, without the CUDA toolkit's NVRTC: the sub-library is there,
    # the library it loads is not, and the process aborts.
    host.add_driver([SimGpu()])
    folder = host.folder("opt/cudnn-8.7/lib")
    host.add_cudnn(folder, (8, 7, 0), cudart_version=11080, sublibrary_needs="libnvrtc.so")
    host.ld_library_path.append(str(folder))
    _, report = host.doctor_json()
    [cudnn] = planted(report["environment"]["cudnns"], host)
    assert (cudnn["state"], cudnn["failure"]) == ("error", "crashed")
    assert cudnn["missing_dependencies"] == ["libnvrtc.so"]  # the dependency, not the sub-library that exists
    assert cudnn["siblings_missing"] == []
    assert CUDNN_87_MESSAGE in cudnn["reason"]
    assert "killed by SIGABRT" in cudnn["reason"]
    assert "cudnn-dependency-missing" in {f["code"] for f in report["findings"]}


def test_the_same_cudnn_with_its_dependency_on_the_loader_path_loads(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([SimGpu()])
    folder = host.folder("opt/cudnn-8.7/lib")
    host.add_cudnn(folder, (8, 7, 0), cudart_version=11080, sublibrary_needs="libnvrtc.so")
    compiler.shared_library("int nvrtc_present = 1;\n", "libnvrtc.so", folder / "libnvrtc.so", libs=())
    host.ld_library_path.append(str(folder))
    _, report = host.doctor_json()
    [cudnn] = planted(report["environment"]["cudnns"], host)
    assert (cudnn["state"], cudnn["failure"], cudnn["version"]) == ("found", None, "8.7.0")
    assert cudnn["missing_dependencies"] == []


def test_a_cudnn_whose_own_dependency_is_missing_cannot_be_loaded_and_names_it(host: SimHost) -> None:
    folder = host.folder("opt/cudnn/lib")
    host.add_cudnn(folder, (9, 1, 0), cudart_version=12030, needs=["libpytest_cudnn_absent.so.1"])
    host.ld_library_path.append(str(folder))
    _, report = host.doctor_json()
    [cudnn] = planted(report["environment"]["cudnns"], host)
    assert (cudnn["state"], cudnn["failure"]) == ("error", "unloadable")
    assert cudnn["missing_dependencies"] == ["libpytest_cudnn_absent.so.1"]
    assert "libpytest_cudnn_absent.so.1: cannot open shared object file" in cudnn["reason"]
