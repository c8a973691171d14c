"""The cost of ``--assert-gpu-used`` (issue 22) on a 3000-test suite whose every test takes the ``gpu`` fixture, on
a simulated host (the stand-in libcuda and NVML of tests/simhost.py), run side by side, interleaved:

- ``pytest alone``: no plugin (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``); the suite's conftest gives a stand-in ``gpu``;
- ``plugin``: ``-p pytest_cudnn.plugin``, the real ``gpu`` fixture, nothing checked;
- ``plugin --assert-gpu-used``: every test checked. The first test makes the device's primary context through the
  stand-in libcuda (in every variant, so all do the same work), so every later test is judged ``used earlier``:
  libcuda is loaded, and each test pays the RTLD_NOLOAD look-up and the bounded cuDevicePrimaryCtxGetState call
  twice (at setup and after the call), the check's whole cost on a passing test;
- ``plugin --assert-gpu-used, CPU``: the same, with no test making a context (libcuda never loaded): every test
  fails, naming its GPU, so this is the cost of the failure path, its reports included; beside it, ``pytest alone,
  all failing``: pytest itself reporting 3000 failures (a conftest hook fails each test after its call).

python benchmarks/bench_gpu_used.py [--repeat 5] [--tests 3000]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _timing import describe, interleaved

from tests.simhost import Compiler, SimGpu, SimHost

CONFTEST = """\
import ctypes, os
import pytest

if os.environ.get("BENCH_PLUGIN") != "1":
    @pytest.fixture
    def gpu():
        return None

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    if os.environ.get("BENCH_FAIL") == "1":  # the failure path's baseline: pytest reporting 3000 failures
        pytest.fail("failed after the call", pytrace=False)
    return result

@pytest.fixture(scope="session", autouse=True)
def first_context():
    if os.environ.get("BENCH_CONTEXT") == "1":
        cuda = ctypes.CDLL("libcuda.so.1")
        cuda.cuInit(0)
        ctx = ctypes.c_void_p()
        cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tests", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        host = SimHost(scratch / "host", Compiler(scratch / "cc"))
        host.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
        host.add_stack("opt/cuda/lib64", 12040)
        suite = scratch / "host" / "suite"
        suite.mkdir(parents=True)
        (suite / "conftest.py").write_text(CONFTEST, encoding="utf-8")
        per_file = 100
        for start in range(0, args.tests, per_file):
            body = "".join(f"def test_{n}(gpu):\n    pass\n\n" for n in range(start, min(start + per_file, args.tests)))
            (suite / f"test_{start:05d}.py").write_text(body, encoding="utf-8")
        base = {**host.environ(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "BENCH_CONTEXT": "1"}
        base["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent.parent), base["PYTHONPATH"]])
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "."]
        plugin = [*pytest, "-p", "pytest_cudnn.plugin"]
        # Each command's own variables: interleaved() takes one environment, env(1) adds to it.
        runner = ["env"]
        commands = {
            "pytest alone": [*runner, *pytest],
            "pytest alone, all failing": [*runner, "BENCH_FAIL=1", *pytest],
            "plugin": [*runner, "BENCH_PLUGIN=1", *plugin],
            "plugin --assert-gpu-used": [*runner, "BENCH_PLUGIN=1", *plugin, "--assert-gpu-used"],
            "plugin --assert-gpu-used, CPU": [
                *runner,
                "BENCH_PLUGIN=1",
                "BENCH_CONTEXT=0",
                *plugin,
                "--assert-gpu-used",
            ],
        }
        times = interleaved(
            commands,
            args.repeat,
            env=base,
            cwd=str(suite),
            allowed={"plugin --assert-gpu-used, CPU": (1,), "pytest alone, all failing": (1,)},
        )
        print(describe(times, "pytest alone"))
        print()
        print(describe({name: times[name] for name in list(commands)[2:]}, "plugin"))
        print()
        failing = ("pytest alone, all failing", "plugin --assert-gpu-used, CPU")
        print(describe({name: times[name] for name in failing}, failing[0]))
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.tests} tests, {args.repeat} runs each")


if __name__ == "__main__":
    main()
