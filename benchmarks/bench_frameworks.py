"""The doctor against ``import torch`` on a host with torch, JAX and TensorFlow installed (goal: the doctor at least
15x faster), and the doctor's peak memory (goal: under 64 MB, for the doctor and for its probe child each).

    tox -e frameworks --notest        # once: real CUDA builds of torch, JAX and TensorFlow (~12 GB)
    python benchmarks/bench_frameworks.py [--python .tox/frameworks/bin/python] [--repeat 10]

Every command runs with the given interpreter, from the repository root, so ``-m pytest_cudnn`` is this checkout.
Peak memory is the maximum resident set size the kernel reports: the doctor runs inside a small wrapper that reads
its own RUSAGE_SELF (the doctor's process) and RUSAGE_CHILDREN (the largest probe child) when it is done.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import tempfile
from pathlib import Path

from _timing import describe, interleaved

ROOT = Path(__file__).resolve().parent.parent
DOCTOR = "pytest-cudnn doctor --json"
TORCH = "python -c 'import torch'"
SPEED_GOAL = 15.0  # import torch / doctor, wall-clock medians
MEMORY_GOAL_MB = 64.0

# Runs the doctor in this process, its output thrown away, then writes this process's peak RSS and its children's.
_MEMORY = """
import json, os, resource, runpy, sys
out = sys.argv[1]
sys.argv = ["pytest-cudnn", "doctor", "--json"]
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
try:
    runpy.run_module("pytest_cudnn", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
with open(out, "w") as file:
    json.dump({"doctor": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               "probe": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}, file)
"""

_TORCH_MEMORY = "import resource, torch; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"

_VERSIONS = """
import importlib.metadata, json
found = {}
for name in ("torch", "jax", "jax-cuda12-plugin", "tensorflow", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"):
    try:
        found[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        pass
print(json.dumps(found))
"""


def _default_python() -> str:
    candidate = ROOT / ".tox" / "frameworks" / "bin" / "python"
    if not candidate.exists():
        raise SystemExit(f"no {candidate}: run 'tox -e frameworks --notest' first, or name one with --python")
    return str(candidate)


def _peak_memory(python: str) -> dict[str, float]:
    """MB, as ru_maxrss gives kilobytes on Linux."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "rss.json")
        subprocess.run([python, "-c", _MEMORY, out], check=True, cwd=ROOT)
        with open(out) as file:
            peaks: dict[str, int] = json.load(file)
    return {name: kilobytes / 1024 for name, kilobytes in peaks.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", help="an interpreter with torch, JAX and TensorFlow (default: .tox/frameworks)")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    python = args.python or _default_python()
    versions = json.loads(subprocess.run([python, "-c", _VERSIONS], capture_output=True, text=True, check=True).stdout)
    if "torch" not in versions:
        raise SystemExit(f"{python} has no torch: nothing to compare the doctor with")

    commands = {DOCTOR: [python, "-m", "pytest_cudnn", "doctor", "--json"], TORCH: [python, "-c", "import torch"]}
    interleaved(
        commands, 1, cwd=str(ROOT), allowed={DOCTOR: (1,)}
    )  # warm the page cache: the first import of torch reads ~1 GB
    times = interleaved(commands, args.repeat, cwd=str(ROOT), allowed={DOCTOR: (1,)})  # no GPU: exit 1
    memory = [_peak_memory(python) for _ in range(args.repeat)]
    torch_rss = [
        int(subprocess.run([python, "-c", _TORCH_MEMORY], capture_output=True, text=True, check=True, cwd=ROOT).stdout)
        / 1024
        for _ in range(3)
    ]

    doctor_wall = statistics.median(times[DOCTOR].wall)
    torch_wall = statistics.median(times[TORCH].wall)
    speedup = torch_wall / doctor_wall
    doctor_peak = max(sample["doctor"] for sample in memory)
    probe_peak = max(sample["probe"] for sample in memory)
    print(
        f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{datetime.date.today().isoformat()}, {args.repeat} runs each, interleaved"
    )
    print(f"interpreter {python}: " + ", ".join(f"{name} {version}" for name, version in versions.items()))
    print(describe(times, DOCTOR))
    print(
        f"import torch / doctor: x{speedup:.1f} wall (goal: at least x{SPEED_GOAL:.0f}: "
        f"{'met' if speedup >= SPEED_GOAL else 'NOT met'})"
    )
    print(
        f"peak RSS: doctor {doctor_peak:.1f} MB (median {statistics.median(s['doctor'] for s in memory):.1f}), "
        f"largest probe child {probe_peak:.1f} MB (median {statistics.median(s['probe'] for s in memory):.1f}); "
        f"goal: under {MEMORY_GOAL_MB:.0f} MB: "
        f"{'met' if max(doctor_peak, probe_peak) < MEMORY_GOAL_MB else 'NOT met'}"
    )
    print(f"for scale, import torch peaks at {statistics.median(torch_rss):.0f} MB RSS")


if __name__ == "__main__":
    main()
