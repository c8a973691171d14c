"""No probe process outlives its caller: the doctor or pytest killed (SIGTERM, SIGINT, SIGKILL) while a probe hangs
inside a library leaves nothing behind. Each run carries a unique token in its environment; the probe's child and
grandchildren inherit it, so /proc tells which processes belong to the run."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from .interrupts import interruptible, sigint_ignored
from .simhost import PYTEST, SimHost

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

TOKEN = "PYTEST_CUDNN_TEST_TOKEN"


def tagged(token: str) -> list[int]:
    """Live processes whose environment carries ``token`` (zombies have no environment left to read)."""
    marker = f"{TOKEN}={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry))
    return found


def wait_for(condition: str, check: Callable[[], object], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {condition}")
        time.sleep(0.02)


@pytest.fixture
def hung_host(host: SimHost) -> Iterator[tuple[SimHost, dict[str, str], Path]]:
    """A host whose CUDA runtime hangs in its first call, and the environment of one tagged run on it."""
    folder = host.folder("opt/hang")
    host.add_cudart(folder, 12020, behaviour="hang")
    host.ld_library_path.append(str(folder))
    token = uuid.uuid4().hex
    log = host.root / "hang.log"
    env = host.environ({TOKEN: token, "SIMHOST_HANG_LOG": str(log)})
    try:
        yield host, env, log
    finally:  # whatever the test found, leave nothing running
        for pid in tagged(token):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def interrupt_while_hung(command: list[str], env: dict[str, str], log: Path, cwd: Path, sig: int) -> str:
    process = subprocess.Popen(interruptible(command), env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for("the probe reaches the hang", lambda: log.exists() and log.read_text().strip())
        # The caller, the probe's child interpreter and the hung grandchild at least.
        assert len(tagged(env[TOKEN])) >= 3
        process.send_signal(sig)
        _, errors = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    wait_for("no process of the run is left", lambda: not tagged(env[TOKEN]), timeout=10)
    return errors.decode("utf-8", "replace")


@pytest.mark.e2e
@pytest.mark.parametrize(("launch", "ignored"), [(list, True), (interruptible, False)], ids=["plain", "interruptible"])
def test_a_child_that_a_test_interrupts_takes_sigint_where_the_test_session_ignores_it(
    launch: Callable[[Sequence[str]], list[str]], ignored: bool
) -> None:
    """A session started with SIGINT ignored: a plain child inherits that, and a test's SIGINT never stops it."""
    child = launch([sys.executable, "-c", "import signal as s; print(s.getsignal(s.SIGINT) == s.SIG_IGN)"])
    session = "import signal as s, subprocess, sys; s.signal(s.SIGINT, s.SIG_IGN); subprocess.run(sys.argv[1:])"
    said = subprocess.run([sys.executable, "-c", session, *child], capture_output=True, text=True, check=True)
    assert said.stdout == f"{ignored}\n"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name)
def test_killing_the_doctor_while_a_probe_hangs_leaves_no_process(
    hung_host: tuple[SimHost, dict[str, str], Path], sig: signal.Signals
) -> None:
    host, env, log = hung_host
    command = [sys.executable, "-m", "pytest_cudnn", "doctor", "--timeout", "600"]
    interrupt_while_hung(command, env, log, host.root, sig)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_killing_pytest_while_a_probe_hangs_leaves_no_process(
    hung_host: tuple[SimHost, dict[str, str], Path], sig: signal.Signals
) -> None:
    host, env, log = hung_host
    suite = host.root / "suite"
    suite.mkdir()
    (suite / "test_gpu.py").write_text("import pytest\n\n@pytest.mark.requires_cudnn('>=9')\ndef test_a():\n    pass\n")
    command = [*PYTEST, "--gpu-probe-timeout", "600", str(suite)]
    interrupt_while_hung(command, env, log, suite, sig)


def _ignores_sigint(pid: int) -> bool:
    """From /proc/PID/status's SigIgn mask (proc(5)): bit N-1 is signal N."""
    status = Path(f"/proc/{pid}/status").read_text()
    [mask] = [line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")]
    return bool(int(mask, 16) >> (signal.SIGINT - 1) & 1)


def test_a_doctor_started_with_sigint_ignored_keeps_its_probe_so_and_still_leaves_nothing_on_sigterm(
    hung_host: tuple[SimHost, dict[str, str], Path],
) -> None:
    """A background job (``cmd &`` in a script, nohup-style launchers) starts with SIGINT ignored: a terminal's
    Ctrl-C is not meant for it, so neither the doctor nor any process of its probe may take it back; the probe's
    own bounds (its timeout, the parent-death signal) do not rely on SIGINT."""
    host, env, log = hung_host
    command = sigint_ignored([sys.executable, "-m", "pytest_cudnn", "doctor", "--timeout", "600"])
    process = subprocess.Popen(command, env=env, cwd=host.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for("the probe reaches the hang", lambda: log.exists() and log.read_text().strip())
        run = tagged(env[TOKEN])
        assert len(run) >= 3
        assert [pid for pid in run if not _ignores_sigint(pid)] == []
        process.terminate()
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    wait_for("no process of the run is left", lambda: not tagged(env[TOKEN]), timeout=10)


@pytest.mark.e2e
@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_caller_stopped_while_waiting_kills_and_reaps_its_child(
    stop: type[BaseException], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_cudnn.native.isolation import Child

    child = Child(dict(os.environ))

    def interrupt(*args: object) -> list[object]:
        raise stop

    monkeypatch.setattr("selectors.DefaultSelector.select", interrupt)
    with pytest.raises(stop):
        child.run({0: {"kind": "resolve", "name": "libpytest_cudnn_absent.so"}}, job_timeout=600, total_timeout=600)
    assert child.process.returncode == -signal.SIGKILL
    child.close()  # and closing it afterwards is harmless
