"""Timings for the real-GPU tier (issue 12): the doctor and the plugin's header beside ``python -c pass`` and
``import torch`` (when installed), on whatever machine runs it; ``.ci/real-gpu`` runs it on a GPU machine. Each
warm (the cache of file facts filled by a first round) and cold (``PYTEST_CUDNN_CACHE=0``) (issue 28).

python benchmarks/bench_real_gpu.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import describe, interleaved

ROOT = str(Path(__file__).resolve().parent.parent)


# The doctor exits 1 on a host that cannot run GPU work (this one, without a GPU): still a full run to time.
UNHEALTHY_IS_FINE = {"pytest-cudnn doctor": (1,)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
        # The plugin blocked by its entry point's name, then named by module where it is wanted: the same commands
        # work whether or not it is installed (a working tree copied to a GPU machine).
        pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:cudnn"]
        # Warm: the cache of file facts (issue 28) in a folder of this run's, filled by the warm-up round; cold: the
        # cache off (every file read, nothing written).
        env["XDG_CACHE_HOME"] = str(Path(folder, "cache"))
        cold = ["env", "PYTEST_CUDNN_CACHE=0"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "pytest-cudnn doctor": [sys.executable, "-m", "pytest_cudnn", "doctor"],
            "pytest-cudnn doctor, cold": [*cold, sys.executable, "-m", "pytest_cudnn", "doctor"],
            "pytest, no plugin": [*pytest, "test_a.py"],
            "pytest, plugin and header": [*pytest, "-p", "pytest_cudnn.plugin", "test_a.py"],
            "pytest, plugin and header, cold": [*cold, *pytest, "-p", "pytest_cudnn.plugin", "test_a.py"],
        }
        if importlib.util.find_spec("torch") is not None:
            commands["python -c 'import torch'"] = [sys.executable, "-c", "import torch"]
        allowed = {**UNHEALTHY_IS_FINE, "pytest-cudnn doctor, cold": (1,)}
        interleaved(commands, 1, allowed=allowed, env=env, cwd=folder)  # the cache, the page cache
        times = interleaved(commands, args.repeat, allowed=allowed, env=env, cwd=folder)
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.repeat} runs each, interleaved")
    print(describe(times, "python -c pass"))
    for which in ("", ", cold"):
        added = statistics.median(times[f"pytest, plugin and header{which}"].wall) - statistics.median(
            times["pytest, no plugin"].wall
        )
        print(f"the plugin adds {added * 1000:.0f} ms{which or ', warm'} to a one-test pytest run (wall, medians)")


if __name__ == "__main__":
    main()
