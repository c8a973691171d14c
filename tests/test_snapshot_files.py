"""What ``--env FILE`` / ``--gpu-env FILE`` may name: a regular file of a sane size. Anything else (a pipe, a
device, a folder, a file too big, text that is not JSON) is one clear line naming the file, and never a hang."""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn import environment
from pytest_cudnn.cli import main
from pytest_cudnn.environment import InvalidSnapshot, load_snapshot

EXAMPLE = Path(__file__).parent.parent / "examples" / "snapshots" / "healthy-tf2.18-a100.json"


def _doctor(path: str | Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """The doctor in a child process with 1 GiB of address space, so a defect can neither hang nor starve us."""

    def limit_memory() -> None:  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    return subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--env", str(path)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=limit_memory,
    )


def _in_thread(call: Callable[[], Any], timeout: float = 10) -> Any:
    """``call()``'s result or exception, failing the test if it does not return within ``timeout``."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # handed back to the test
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert outcome, f"still blocked after {timeout} s"
    return outcome[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "snap.json"
    os.mkfifo(path)
    yield path
    # A reader still blocked in open() (the defect) is released by a writer arriving and leaving; with no reader
    # left, the open fails (ENXIO) and there is nothing to release.
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.e2e
def test_a_fifo_is_refused_at_once_not_waited_on(fifo: Path) -> None:
    completed = _doctor(fifo)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr == f"pytest-cudnn: error: snapshot {fifo}: is a named pipe (FIFO), not a regular file\n"


@pytest.mark.e2e
def test_dev_zero_is_refused_not_read_until_memory_runs_out() -> None:
    completed = _doctor("/dev/zero")
    assert completed.returncode == 2
    assert completed.stderr == "pytest-cudnn: error: snapshot /dev/zero: is a character device, not a regular file\n"


def test_a_file_swapped_for_a_fifo_just_before_it_is_opened_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "snap.json"
    path.write_text(EXAMPLE.read_text())

    def swapping(real_open: Callable[..., Any]) -> Callable[..., Any]:
        def swap_then_open(name: Any, *args: Any, **kwargs: Any) -> Any:
            # Whatever was checked before the open saw a regular file; what gets opened is a FIFO.
            if not isinstance(name, int) and os.fspath(name) == str(path) and path.is_file():
                path.unlink()
                os.mkfifo(path)
            return real_open(name, *args, **kwargs)

        return swap_then_open

    for owner in (os, io, builtins):
        monkeypatch.setattr(owner, "open", swapping(owner.open))
    try:
        outcome = _in_thread(lambda: load_snapshot(path))
    finally:
        monkeypatch.undo()
        with contextlib.suppress(OSError):  # release a reader still blocked in open(), as the fifo fixture does
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    assert isinstance(outcome, InvalidSnapshot)
    assert str(outcome) == f"{path}: is a named pipe (FIFO), not a regular file"


def test_a_file_larger_than_any_snapshot_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: costs no disk
        handle.truncate(environment.MAX_SNAPSHOT_BYTES + 1)
    with pytest.raises(InvalidSnapshot) as error:
        load_snapshot(path)
    assert str(error.value) == f"{path}: is {environment.MAX_SNAPSHOT_BYTES + 1} bytes; a snapshot is at most 16 MiB"


def test_a_file_that_says_it_is_empty_is_read_no_further_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # /proc files report a size of 0 whatever they hold: only the bytes read can be counted.
    monkeypatch.setattr(environment, "MAX_SNAPSHOT_BYTES", 256)
    assert os.stat("/proc/self/maps").st_size == 0
    with pytest.raises(InvalidSnapshot) as error:
        load_snapshot("/proc/self/maps")
    assert str(error.value) == "/proc/self/maps: holds more than 256 bytes, the most a snapshot can be"


def test_the_limit_has_room_for_ten_thousand_gpus() -> None:
    data = json.loads(EXAMPLE.read_text())
    gpu = dict(data["driver"]["gpus"][0], error="nvmlDeviceGetPciInfo_v3: GPU is lost; nvmlDeviceGetMemoryInfo: lost")
    data["driver"]["gpus"] = [dict(gpu, index=index) for index in range(10_000)]
    size = len(json.dumps(data, indent=2))
    assert size * 3 < environment.MAX_SNAPSHOT_BYTES, size


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda path: path.mkdir(), "is a folder, not a regular file"),
        (lambda path: None, "cannot be read: No such file or directory"),
        (lambda path: path.write_bytes(b""), "is empty"),
        (lambda path: path.write_bytes(b"  \n"), "is empty"),
        (lambda path: path.write_bytes(b"\xff\xfe{\x00}\x00"), "is not UTF-8 text (a UTF-16 byte-order mark:"),
        (lambda path: path.write_bytes(b'{"a": 1}\xe9'), "is not UTF-8 text (byte 8)"),
        (lambda path: path.write_text("1" * 5000), "has a number of 5000 digits, more than any snapshot holds"),
        (lambda path: path.write_text('{"a": -' + "9" * 101 + "}"), "has a number of 101 digits, more than any"),
        (lambda path: path.write_text("[" * 100_000), "is nested too deeply to be a snapshot"),
        (lambda path: path.symlink_to(path), "cannot be read: Too many levels of symbolic links"),
    ],
)
def test_each_unusable_file_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], Any], problem: str
) -> None:
    path = tmp_path / "snap.json"
    make(path)
    assert main(["doctor", "--env", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"pytest-cudnn: error: snapshot {path}: {problem}")
    assert err.count("\n") == 1


def test_a_snapshot_with_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.read_bytes())
    assert load_snapshot(path) == load_snapshot(EXAMPLE)


def test_an_empty_path_names_no_snapshot() -> None:
    with pytest.raises(InvalidSnapshot, match=r"^'': an empty path names no snapshot file$"):
        load_snapshot("")


def _as_nobody(call: Callable[[], object]) -> str:
    """What ``call`` raised (or "") in a forked process without root's right to read everything: the tests run
    as root on CI, and root reads any file whatever its mode."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            call()
            message = ""
        except Exception as error:
            message = str(error)
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    return said


@pytest.mark.e2e
def test_an_unreadable_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_text(EXAMPLE.read_text())
    path.chmod(0)
    tmp_path.chmod(0o755)  # so that only the file's own mode stands in the way
    assert _as_nobody(lambda: load_snapshot(path)) == f"{path}: cannot be read: Permission denied"


def test_gpu_env_naming_a_fifo_is_a_usage_error_not_a_hang(fifo: Path, pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest_subprocess(f"--gpu-env={fifo}", timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--gpu-env: {fifo}: is a named pipe (FIFO), not a regular file"])


# Devices that cannot all be so at once (issue 19, N10) ---------------------------------------------------------

MIG_EXAMPLE = EXAMPLE.parent / "mig-h100-ci-runner.json"
MIG_0 = "MIG-1f0c8a2e-7b3d-5e91-a4c6-000000000001"
GPU_0 = "GPU-a2c4e6f8-1b3d-4f5a-8c7e-9d0b1a2c3e4f"
ONE_UUID = "a UUID names one device (CUDA_VISIBLE_DEVICES, and pytest-cudnn for each xdist worker, name devices by it)"


def _second_gpu(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        first = data["driver"]["gpus"][0]
        data["driver"]["gpus"].append(dict(first, mig_mode=None, mig=[], **changes))

    return edit


def _mig(position: int, **changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["driver"]["gpus"][0]["mig"][position].update(changes)

    return edit


def _gpu(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["driver"]["gpus"][0].update(changes)

    return edit


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            _mig(1, uuid=MIG_0),
            f"driver.gpus[0].mig[1].uuid: '{MIG_0}' is also at driver.gpus[0].mig[0].uuid: {ONE_UUID}",
        ),
        (_mig(2, uuid=GPU_0), f"driver.gpus[0].mig[2].uuid: '{GPU_0}' is also at driver.gpus[0].uuid: {ONE_UUID}"),
        (_second_gpu(index=1), f"driver.gpus[1].uuid: '{GPU_0}' is also at driver.gpus[0].uuid: {ONE_UUID}"),
        (
            _second_gpu(uuid="GPU-other"),
            "driver.gpus[1].index: 0 is also at driver.gpus[0].index: NVML numbers each GPU once",
        ),
        (
            _mig(1, index=0),
            "driver.gpus[0].mig[1].index: 0 is also at driver.gpus[0].mig[0].index: NVML numbers each MIG device "
            "of a GPU once",
        ),
        (
            _mig(1, gpu_instance_id=1),
            "driver.gpus[0].mig[1].compute_instance_id: GPU instance 1, compute instance 0 is also at "
            "driver.gpus[0].mig[0].compute_instance_id: a GPU instance's compute instance is one MIG device",
        ),
        (
            _mig(0, memory_free=1000 * 1024**4),
            "driver.gpus[0].mig[0].memory_free: 1099511627776000 bytes free is more than memory_total, "
            "42412802048 bytes",
        ),
        (
            _gpu(memory_free=85520809985),
            "driver.gpus[0].memory_free: 85520809985 bytes free is more than memory_total, 85520809984 bytes",
        ),
        (
            _mig(0, index=10**90),
            "driver.gpus[0].mig[0].index: expected a non-negative integer below 2**32 (an NVML unsigned int), got "
            "100000000000000000...0000000000000000000",
        ),
        (
            _mig(3, gpu_instance_id=2**32),
            "driver.gpus[0].mig[3].gpu_instance_id: expected a non-negative integer below 2**32 (an NVML unsigned "
            "int), got 4294967296",
        ),
        (
            _gpu(index=2**32),
            "driver.gpus[0].index: expected a non-negative integer below 2**32 (an NVML unsigned int), got 4294967296",
        ),
    ],
)
def test_devices_that_cannot_all_be_so_are_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[dict[str, Any]], None], problem: str
) -> None:
    data = json.loads(MIG_EXAMPLE.read_text())
    edit(data)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidSnapshot) as error:
        load_snapshot(path)
    assert str(error.value) == f"{path}: {problem}"
    assert main(["doctor", "--env", str(path)]) == 2
    assert capsys.readouterr().err == f"pytest-cudnn: error: snapshot {path}: {problem}\n"


@pytest.mark.parametrize(
    "edit",
    [
        _mig(1, memory_free=None, memory_total=None),
        _mig(1, uuid=None),
        _mig(0, gpu_instance_id=None, compute_instance_id=None),
        _mig(1, gpu_instance_id=None, compute_instance_id=None),  # two unknowns are not one instance
        _gpu(memory_free=85520809984),  # all of it free
        _second_gpu(index=1, uuid=None),
    ],
)
def test_devices_with_unknown_facts_are_not_refused(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(MIG_EXAMPLE.read_text())
    edit(data)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(data))
    assert load_snapshot(path).driver.gpus[0].mig


def test_instance_ids_nvml_did_not_give_are_shown_as_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(MIG_EXAMPLE.read_text())
    _mig(0, gpu_instance_id=None, compute_instance_id=None)(data)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(data))
    main(["doctor", "-v", "--env", str(path)])
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.strip().startswith("MIG 0 ")]
    assert "GPU instance unknown, compute instance unknown, " in line
    assert "None" not in out
