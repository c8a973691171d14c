"""Calls the test process makes into NVML and cuDNN (free memory at setup, ``gpu.memory_free``, the handle
fixtures) on a simulated host whose libraries hang or fail mid-run, after the session-start probe: each ends within
the run's bound (--gpu-probe-timeout) with a stated outcome naming the call and the library, Ctrl-C still ends the
run, and no library is ever loaded from the current folder."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from .interrupts import interruptible
from .simhost import PYTEST, Compiler, SimGpu, SimHost

BOUND = "5"  # seconds, --gpu-probe-timeout: the bound on each call in these runs
A100 = "GPU 0 NVIDIA A100-SXM4-40GB"


@pytest.fixture
def faulty(host: SimHost, tmp_path: Path) -> dict[str, str]:
    """A healthy host (driver 550, one A100 with 39 GiB free, CUDA 12.5 and cuDNN 9.3) whose NVML and cuDNN
    misbehave once a test writes a fault into their control files; the variables that name those files."""
    host.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
    host.add_stack("opt/cuda-12.5/lib64", 12050, (9, 3, 0))
    return {
        "SIMHOST_NVML_FAULT": str(tmp_path / "nvml-fault"),
        "SIMHOST_CUDNN_FAULT": str(tmp_path / "cudnn-fault"),
        "SIMHOST_HANG_LOG": str(tmp_path / "hangs"),
    }


def nvml(host: SimHost) -> str:
    return str(host.driver_dir / "libnvidia-ml.so.1")


def hangs(variables: dict[str, str]) -> list[str]:
    """The processes that entered a stand-in's hang, one line per call that did."""
    log = Path(variables["SIMHOST_HANG_LOG"])
    return log.read_text().split() if log.exists() else []


HANG = {
    "test_hang.py": """
        import os
        import pytest

        def test_1_nvml_stops_answering():
            with open(os.environ["SIMHOST_NVML_FAULT"], "w") as fault:
                fault.write(os.environ["FAULT"])

        @pytest.mark.requires_gpu(memory="16GiB")
        def test_2_needs_16_gib():
            pass

        def test_3_reads_free_memory(gpu):
            try:
                free = gpu.memory_free
            except Exception as error:
                print(f"memory_free: {type(error).__name__}: {error}")
            else:
                print(f"memory_free: {free}")
    """,
}


@pytest.mark.parametrize(("fault", "call"), [("hang-init", "nvmlInit"), ("hang-memory", "nvmlDeviceGetMemoryInfo")])
def test_a_hanging_nvml_ends_within_the_bound_as_a_stated_skip(
    host: SimHost, faulty: dict[str, str], fault: str, call: str
) -> None:
    completed = host.pytest(
        "-p", "no:randomly", "-s", "--gpu-probe-timeout", BOUND, files=HANG, extra_env={**faulty, "FAULT": fault}
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "2 passed, 1 skipped" in completed.stdout
    stated = f"{call} did not return within 5 s (--gpu-probe-timeout) in {nvml(host)}; it is not called again"
    assert (
        f"requires 1 GPU, 16GiB free; found {A100} (compute capability 8.0, Ampere, free memory unknown) at test "
        f"setup: {stated}"
    ) in completed.stdout, completed.stdout
    assert "1 x gpu-memory-unread: requires 1 GPU, 16GiB free" in completed.stdout
    said = f"memory_free: LiveReadError: {A100} (GPU-00000000-0000-0000-0000-000000000000): its free memory cannot "
    said += "be read now: "
    assert f"{said}{stated}" in completed.stdout
    # Given up after the first: the fixture's read answered at once, without calling NVML again.
    assert hangs(faulty) == [hangs(faulty)[0]]


def test_ctrl_c_ends_a_run_whose_nvml_hangs(host: SimHost, faulty: dict[str, str], tmp_path: Path) -> None:
    """SIGINT to pytest while NVML hangs in its process ends the run; the bound is an hour, so nothing else could."""
    hang_log = Path(faulty["SIMHOST_HANG_LOG"])
    os.mkfifo(hang_log)  # the hang writes its pid into it: reading it waits for the hang, without polling
    suite = host.folder("suite")
    (suite / "test_hang.py").write_text(textwrap.dedent(HANG["test_hang.py"]))
    process = subprocess.Popen(
        interruptible([*PYTEST, "-p", "no:randomly", "--gpu-probe-timeout", "3600"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=host.environ({**faulty, "FAULT": "hang-memory"}),
        cwd=suite,
        start_new_session=True,
    )
    try:
        reader = os.open(hang_log, os.O_RDONLY | os.O_NONBLOCK)
        try:
            ready, _, _ = select.select([reader], [], [], 300)
            assert ready, "the run never reached the hanging NVML call"
            hung_in = int(os.read(reader, 64).split()[0])
        finally:
            os.close(reader)
        assert hung_in == process.pid  # the live read runs in pytest's own process
        os.kill(process.pid, signal.SIGINT)
        try:
            output, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail(f"SIGINT did not end the run; its threads: {signal_state(process.pid)}")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    text = output.decode(errors="replace")
    assert process.returncode == pytest.ExitCode.INTERRUPTED, text
    assert "KeyboardInterrupt" in text


def signal_state(pid: int) -> list[str]:
    """Each thread of ``pid``: its state, the signals it blocks and has pending, and where in the kernel it waits
    (proc(5)); what a run that Ctrl-C did not end was doing, for a failure seen only on a loaded CI machine."""
    found = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            status = dict(line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line)
            wchan = (task / "wchan").read_text()
        except OSError:
            continue
        found.append(" ".join(f"{key}={status.get(key, '?').strip()}" for key in ("Name", "State", "SigBlk", "SigPnd")))
        found[-1] += f" wchan={wchan}"
    return found


LOST = {
    "test_lost.py": """
        import os
        import pytest

        def test_1_the_gpu_falls_off_the_bus():
            with open(os.environ["SIMHOST_NVML_FAULT"], "w") as fault:
                fault.write("lost-memory")

        @pytest.mark.requires_gpu(memory="16GiB")
        def test_2_needs_16_gib():
            pass

        def test_3_the_readme_example(gpu):
            assert gpu.memory_free > 2**30
    """,
}


def test_a_lost_gpu_is_a_stated_outcome_for_memory_markers_and_memory_free(
    host: SimHost, faulty: dict[str, str], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    completed = host.pytest("-p", "no:randomly", f"--gpu-report={report}", files=LOST, extra_env=faulty)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "1 failed, 1 passed, 1 skipped" in completed.stdout
    answer = f"nvmlDeviceGetMemoryInfo answered 15 (GPU is lost) in {nvml(host)}"
    reason = f"requires 1 GPU, 16GiB free; found {A100} (compute capability 8.0, Ampere, free memory unknown) at test"
    assert f"{reason} setup: {answer}" in completed.stdout, completed.stdout
    assert "1 x gpu-memory-unread: requires 1 GPU, 16GiB free" in completed.stdout
    assert (
        f"LiveReadError: {A100} (GPU-00000000-0000-0000-0000-000000000000): its free memory cannot be read now: "
        f"{answer}"
    ) in completed.stdout
    [entry] = [t for t in json.loads(report.read_text())["tests"] if t["nodeid"].endswith("test_2_needs_16_gib")]
    assert (entry["outcome"], entry["cause"]) == ("skipped", "gpu-memory-unread")
    failed = host.pytest("-p", "no:randomly", "--require-gpu", files=LOST, extra_env=faulty)
    assert "1 failed, 1 passed, 1 error" in failed.stdout, failed.stdout
    assert f"{answer} [--require-gpu]" in failed.stdout


def test_a_memory_marker_without_pynvml_says_so(host: SimHost, faulty: dict[str, str]) -> None:
    (host.site_packages / "pynvml.py").write_text("raise ImportError('nvidia-ml-py is broken here')\n")
    tests = {"test_m.py": "import pytest\n\n@pytest.mark.requires_gpu(memory='1GiB')\ndef test_m():\n    pass\n"}
    completed = host.pytest(files=tests, extra_env=faulty)
    assert "1 skipped" in completed.stdout, completed.stdout + completed.stderr
    assert (
        "at test setup: pynvml (nvidia-ml-py) cannot be imported: ImportError: nvidia-ml-py is broken here"
        in completed.stdout
    )


def test_an_nvml_another_library_loaded_into_nvidia_ml_py_is_not_read(host: SimHost, faulty: dict[str, str]) -> None:
    """Code of the suite's that gave nvidia-ml-py another NVML first: reading through it would read a library the
    probe never vouched for, so the requirement cannot be confirmed."""
    other = host.folder("opt/other-nvml") / "libnvidia-ml.so.1"
    other.write_bytes(Path(nvml(host)).read_bytes())
    tests = {
        "conftest.py": f"import ctypes, pynvml\npynvml.nvmlLib = ctypes.CDLL({str(other)!r})\n",
        "test_m.py": "import pytest\n\n@pytest.mark.requires_gpu(memory='1GiB')\ndef test_m():\n    pass\n",
    }
    completed = host.pytest(files=tests, extra_env=faulty)
    assert "1 skipped" in completed.stdout, completed.stdout + completed.stderr
    assert f"at test setup: nvidia-ml-py in this process already uses {other}, not the one the probe read" in (
        completed.stdout
    )


HANDLES = {
    "test_handles.py": """
        import os

        def test_1_cudnn_stops_answering():
            with open(os.environ["SIMHOST_CUDNN_FAULT"], "w") as fault:
                fault.write("hang-create")

        def test_2_handle(cudnn_handle):
            pass

        def test_3_another_handle(cudnn_handle):
            pass
    """,
}


def test_a_hanging_cudnn_create_ends_within_the_bound_as_a_stated_skip(host: SimHost, faulty: dict[str, str]) -> None:
    completed = host.pytest("-p", "no:randomly", "--gpu-probe-timeout", BOUND, files=HANDLES, extra_env=faulty)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "1 passed, 2 skipped" in completed.stdout
    cudnn = host.root / "opt/cuda-12.5/lib64/libcudnn.so.9"
    assert (
        f"cannot create a cuDNN handle: cudnnCreate did not return within 5 s (--gpu-probe-timeout) in {cudnn}; "
        "it is not called again in this process"
    ) in completed.stdout, completed.stdout
    assert "2 x cudnn-create-hung: cannot create a cuDNN handle" in completed.stdout
    assert hangs(faulty) == [hangs(faulty)[0]]  # the second handle was refused without calling cuDNN


_PLANTED = """\
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
  const char *path = getenv("PLANTED_MARKER"); FILE *f;
  if (path && (f = fopen(path, "a"))) { fprintf(f, "%(soname)s in pid %%d\\n", (int)getpid()); fclose(f); } }
"""


def test_no_library_is_loaded_from_the_current_folder(
    host: SimHost, faulty: dict[str, str], compiler: Compiler, tmp_path: Path
) -> None:
    """A relative LD_LIBRARY_PATH entry makes the loader search the current folder for every soname; the test
    process reads NVML and creates a handle with one first on the list and copies planted in its folder."""
    suite = host.folder("suite")
    for soname in ("libnvidia-ml.so.1", "libcuda.so.1"):
        source = _PLANTED % {"soname": soname}
        compiler.shared_library(source, soname, suite / soname, libs=())
    host.ld_library_path.insert(0, ".")
    marker = tmp_path / "planted-loaded"
    tests = {
        "test_here.py": """
            import pytest

            @pytest.mark.requires_gpu(memory="1GiB")
            def test_reads_live(gpu, cudnn_handle):
                assert gpu.memory_free == 39 * 2**30
                assert cudnn_handle.value.value
        """
    }
    completed = host.pytest(files=tests, extra_env={**faulty, "PLANTED_MARKER": str(marker)})
    assert not marker.exists(), marker.read_text()
    assert "1 passed" in completed.stdout, completed.stdout + completed.stderr
