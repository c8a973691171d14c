"""Real runs behind the documentation's page on many GPUs and many machines (docs/many-gpus.md), printed as it shows
them.

    python examples/many_gpus.py live     # requires_gpu(memory=...) judged at test setup on a simulated host
    python examples/many_gpus.py remote   # one local xdist worker and one on another machine (a socket server)
    python examples/many_gpus.py fleet    # four CI runners' --gpu-report files merged by pytest-cudnn fleet

``live`` builds a simulated host with the test suite's stand-in driver (tests/simhost.py, compiled with gcc) and
runs pytest on it: a test that takes a GPU's memory, through the stand-in NVML's state file, before a later test
asks for it. ``remote`` builds two simulated hosts, A (driver 535, one GPU) where pytest runs and B (driver 550, two
GPUs) where execnet's socket server runs (tests/remotehost.py), and runs a suite with ``--dist each`` on a local
worker and one through the socket server, whose spec names the suite's folder on B (``chdir=``); it checks in
``--gpu-report`` that each worker ran the test (skipped on A, passed on B) and exits with the run's output when one
did not, and shows the header's host lines, the skip and the tally, with the port written as PORT and the stack's
warning count left out (both depend on the machine running it: its own CUDA copies count).
``fleet`` runs the example suite on four example snapshots, one runner each (one runner's report is missing on
purpose), then the fleet command on their reports. Each prints the command it ran and what it printed;
temporary folders are printed as ``/tmp/...``. examples/readme_examples.py puts the output in docs/many-gpus.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HOG = """\
import os
import pytest


def test_a_training_job_starts(gpu):
    # Stands for another process taking 30 GiB of the GPU after the session-start probe saw 39 GiB free.
    with open(os.environ["SIMHOST_NVML_STATE"], "w") as state:
        state.write(f"free {gpu.uuid} {9 * 2**30}\\n")
        state.write(f"proc {gpu.uuid} 4242 {30 * 2**30} python3\\n")


@pytest.mark.requires_gpu(memory="16GiB")
def test_needs_16_gib():
    pass
"""

RUNNERS = {  # runner -> the example snapshot its report replays
    "a100": "healthy-tf2.18-a100",
    "h100-mig": "mig-h100-ci-runner",
    "t4": "tf2.3-meets-cudnn8",
    "lost-gpu": "ci-runner-lost-its-gpu",
}


def _run(command: list[str], cwd: Path, env: dict[str, str], shown: str) -> str:
    completed = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=300, check=False)
    return f"$ {shown}\n{completed.stdout.rstrip()}\n"


def _environ(extra: dict[str, str] | None = None) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "GITHUB_", "CUDA_"))}
    environ.update(COLUMNS="10000", PY_COLORS="0", NO_COLOR="1", **(extra or {}))
    return environ


def live() -> str:
    from tests.simhost import Compiler, SimGpu, SimHost

    with tempfile.TemporaryDirectory() as scratch:
        host = SimHost(Path(scratch) / "host", Compiler(Path(scratch) / "cc"))
        host.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
        suite = host.root / "suite"
        suite.mkdir()
        (suite / "test_memory.py").write_text(HOG)
        environ = _environ(host.environ({"SIMHOST_NVML_STATE": str(host.root / "nvml-state")}))
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs"]
        output = _run(command, suite, environ, "pytest -rs")
        # The header, the progress line and the time taken depend on the machine; the skip and the tally do not.
        lines = output.splitlines()
        kept = [line for line in lines if line.startswith(("$", "SKIPPED"))]
        kept.append(re.sub(r" in [0-9.]+s.*", "", lines[-1].strip("= ")))
        return "\n".join(kept).replace(scratch, "/tmp") + "\n"


REMOTE_SUITE = """\
import pytest


@pytest.mark.requires_driver(">=550")
def test_needs_driver_550():
    pass
"""


def remote() -> str:
    from tests.remotehost import SocketServer
    from tests.simhost import Compiler, SimGpu, SimHost

    with tempfile.TemporaryDirectory() as scratch:
        compiler = Compiler(Path(scratch) / "cc")
        hosts = {}
        for name, gpus, driver, cuda in (("a", 1, "535.104.05", 12020), ("b", 2, "550.54.15", 12040)):
            host = SimHost(Path(scratch) / name, compiler)
            devices = [SimGpu(uuid=f"GPU-{name * 8}-0000-0000-0000-00000000000{i}") for i in range(gpus)]
            host.add_driver(devices, version=driver, cuda_version=cuda)
            host.add_stack("opt/cuda/lib64", cuda)
            (host.folder("work/suite") / "test_remote.py").write_text(REMOTE_SUITE)
            (host.root / "work" / "pytest.ini").write_text("[pytest]\ntestpaths = suite\n")
            hosts[name] = host
        # The server starts elsewhere than the suite, as one started at boot or by hand would: the worker finds
        # the suite's folder through chdir=, without which it would collect nothing (xdist's pyexecnetcache).
        server = SocketServer.start(hosts["b"], hosts["b"].root)
        try:
            spec = f"socket={server.address}//chdir={hosts['b'].root / 'work'}"
            command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "xdist", "-rs", "--dist"]
            command += ["each", "--tx", "popen", "--tx", spec, "--gpu-report=gpu-report.json"]
            shown = f"pytest -p xdist -rs --dist each --tx popen --tx {spec} --gpu-report=gpu-report.json"
            output = _run(command, hosts["a"].root / "work", _environ(hosts["a"].environ()), shown)
        finally:
            server.stop()
        _check_remote(output, hosts["a"].root / "work" / "gpu-report.json", f"socket={server.address}")
        lines = output.splitlines()
        kept = [line for line in lines if line.startswith(("$", "pytest-cudnn: xdist", "SKIPPED"))]
        kept.append(re.sub(r" in [0-9.]+s.*", "", lines[-1].strip("= ")))
        text = "\n".join(kept).replace(scratch, "/tmp").replace(str(server.port), "PORT")
        return re.sub(r" \([0-9]+ warnings?\)", "", text) + "\n"


def _check_remote(output: str, report: Path, remote: str) -> None:
    """What docs/many-gpus.md says of this run, from what it did, not only from what it printed: each worker ran the
    test, skipped on the local driver 535 machine, passed on the remote driver 550 one."""
    try:
        tests = json.loads(report.read_text())["tests"]
        ran = {
            (t["worker"], t["host"], t["outcome"], "found driver 535.104.05" in (t.get("reason") or "")) for t in tests
        }
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"many_gpus.py remote: no usable --gpu-report ({error}):\n{output}") from None
    expected = {("gw0", "local", "skipped", True), ("gw1", remote, "passed", False)}
    tally = output.splitlines()[-1]
    if ran != expected or " 1 passed, 1 skipped in " not in tally:
        raise SystemExit(
            f"many_gpus.py remote: expected {sorted(expected)} and 1 passed, 1 skipped; ran {sorted(ran)}:\n{output}"
        )


def fleet() -> str:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for runner, snapshot in RUNNERS.items():
            if runner == "lost-gpu":
                continue  # its job died before it uploaded a report
            report = work / "reports" / runner / "gpu-report.json"
            command = [
                sys.executable,
                "-m",
                "pytest",
                "examples/suite",
                "-p",
                "no:cacheprovider",
                "-q",
                f"--gpu-env=examples/snapshots/{snapshot}.json",
                f"--gpu-report={report}",
            ]
            subprocess.run(command, capture_output=True, cwd=ROOT, env=_environ(), timeout=300, check=False)
        paths = [f"reports/{runner}/gpu-report.json" for runner in RUNNERS]
        command = [sys.executable, "-m", "pytest_cudnn", "fleet", *paths]
        return _run(command, work, _environ(), "pytest-cudnn fleet " + " ".join(paths)).replace(scratch, "/tmp")


def main(argv: list[str]) -> int:
    parts = {"live": live, "remote": remote, "fleet": fleet}
    if len(argv) != 1 or argv[0] not in parts:
        print("usage:\n" + "\n".join((__doc__ or "").splitlines()[2:5]), file=sys.stderr)
        return 2
    sys.stdout.write(parts[argv[0]]())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
