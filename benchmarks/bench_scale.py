"""The doctor as hosts and snapshots grow: 10 to 10,000 GPUs probed and replayed, and 100,000 snapshot notes.

Goal: linear. Before (field test of 2026-11-24, N4), 10,000 GPUs took the doctor 16 s and a 100,000-GPU snapshot
more than 5 minutes. Each case is a whole ``python -m pytest_cudnn doctor`` process, its output read and thrown away:

- probed: a simulated host (tests/simhost.py, needs gcc) whose NVML stand-in lists N A100s with their UUIDs; the
  doctor probes it as it would a real host (its child loads the stand-in and asks NVML about each GPU), then
  diagnoses and prints. Up to 1,000 GPUs: the probe reads at most 1 MiB of a child's answer, about 3,000 GPUs,
  and a host with more is said to have given no usable answer;
- replayed: ``doctor --env`` on the snapshot of that host (what ``pytest-cudnn snapshot`` writes), which skips the
  probe: this is the whole cost of a snapshot from elsewhere. 10,000 GPUs: the 1,000-GPU host's snapshot with its
  GPUs repeated (new indices and UUIDs). 100,000 GPUs: the README's healthy snapshot with its A100 repeated,
  without UUID or PCI bus and named "A100" to stay within the 16 MiB a snapshot may have (15 MB), as the field
  test built its own;
- notes: ``doctor --env`` on the README's healthy snapshot with 100,000 notes added. Replayed only: the probe
  writes a note per relative ``LD_LIBRARY_PATH`` entry, and one variable cannot hold 100,000 entries for exec
  (Linux's MAX_ARG_STRLEN is 128 KiB).

With ``--baseline ROOT`` (a checkout of the old code, e.g. ``git archive 5bac71f pytest_cudnn | tar -x -C ROOT``)
every case runs with that tree's ``pytest_cudnn`` too, interleaved with this one's, so that load on a shared
machine hits both alike. A case that the baseline cannot finish within ``--limit`` seconds is reported as such.

    python benchmarks/bench_scale.py [--baseline ROOT] [--repeat 3] [--limit 120]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import write_bytecode  # noqa: E402

from pytest_cudnn.environment import Gpu  # noqa: E402
from pytest_cudnn.probing.host import probe_environment  # noqa: E402
from tests.simhost import Compiler, SimGpu, SimHost  # noqa: E402

GPU_COUNTS = (10, 100, 1_000, 10_000)
MOST_GPUS = 100_000
PROBED_UP_TO = 1_000
NOTES = 100_000


def build(scratch: Path, compiler: Compiler, gpus: int) -> SimHost:
    host = SimHost(scratch / f"host-{gpus}", compiler)
    host.add_driver(
        [
            SimGpu(
                uuid=f"GPU-{index:08d}-0000-0000-0000-000000000000",
                pci_bus_id=f"{index // 256:08X}:{index % 256:02X}:00.0",
            )
            for index in range(gpus)
        ]
    )
    folder = host.folder("usr/local/cuda/lib64")
    host.add_cudart(folder, 12020)
    host.add_cudnn(folder, (9, 1, 0), cudart_version=12020)
    host.ld_library_path.append(str(folder))
    return host


def repeated(gpus: Sequence[Gpu], count: int) -> tuple[Gpu, ...]:
    """``count`` GPUs made of ``gpus`` over again, each with its own index and UUID."""
    return tuple(
        replace(gpus[index % len(gpus)], index=index, uuid=f"GPU-{index:08d}-0000-0000-0000-000000000000")
        for index in range(count)
    )


def environ_of(host: SimHost) -> dict[str, str]:
    environ = {**os.environ, **host.environ()}
    environ.pop("PYTHONPATH", None)
    return environ


def run(tree: Path, args: list[str], environ: Mapping[str, str], limit: float) -> tuple[float, float] | None:
    """One doctor process from ``tree`` (run there: ``-m`` puts the current folder first on the path): its wall
    and CPU seconds, or None when it ran past ``limit``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_cudnn", "doctor", *args],
            cwd=tree,
            env=dict(environ),
            capture_output=True,
            timeout=limit,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # a doctor that failed early would look fast
        raise SystemExit(f"{tree}: doctor {' '.join(args)}: exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median(samples: list[tuple[float, float] | None]) -> str:
    if any(sample is None for sample in samples):
        return "ran past the limit"
    walls, cpus = zip(*(sample for sample in samples if sample is not None), strict=True)
    return f"{statistics.median(walls):8.2f} s wall {statistics.median(cpus):8.2f} s CPU"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, help="a checkout of the old pytest_cudnn to run side by side")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds one doctor may take")
    args = parser.parse_args()
    trees = {"this tree": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    write_bytecode()
    if args.baseline:  # as write_bytecode does for this tree: neither pays the compiler in every run
        compileall.compile_dir(str(args.baseline / "pytest_cudnn"), quiet=1)
    print(f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, median of {args.repeat}")
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        compiler = Compiler(scratch / "cc")
        cases: dict[str, tuple[list[str], dict[str, str]]] = {}
        for gpus in GPU_COUNTS:
            if gpus <= PROBED_UP_TO:
                host = build(scratch, compiler, gpus)
                environ = environ_of(host)
                env = probe_environment(environ=environ)
                cases[f"{gpus:>6,} GPUs probed"] = ([], environ)
            else:
                env = replace(env, driver=replace(env.driver, gpus=repeated(env.driver.gpus, gpus)))
            assert len(env.driver.gpus) == gpus, env.driver
            snapshot = scratch / f"gpus-{gpus}.json"
            snapshot.write_text(env.dumps())
            cases[f"{gpus:>6,} GPUs replayed"] = (["--env", str(snapshot)], dict(os.environ))
        healthy = (ROOT / "examples" / "snapshots" / "healthy-tf2.18-a100.json").read_text()
        data = json.loads(healthy)
        gpu = {**data["driver"]["gpus"][0], "name": "A100", "uuid": None, "pci_bus_id": None}
        data["driver"]["gpus"] = [{**gpu, "index": index} for index in range(MOST_GPUS)]
        most = scratch / "most.json"
        most.write_text(json.dumps(data, separators=(",", ":")))
        cases[f"{MOST_GPUS:,} GPUs replayed"] = (["--env", str(most)], dict(os.environ))
        data = json.loads(healthy)
        data["notes"] = [f"note {index}: LD_LIBRARY_PATH entry 'lib{index}' is relative" for index in range(NOTES)]
        notes = scratch / "notes.json"
        notes.write_text(json.dumps(data))
        cases[f"{NOTES:,} notes replayed"] = (["--env", str(notes)], dict(os.environ))
        print(f"{'':24}" + "".join(f"{name:>40}" for name in trees))
        for name, (doctor_args, environ) in cases.items():
            samples: dict[str, list[tuple[float, float] | None]] = {tree: [] for tree in trees}
            for _ in range(args.repeat):
                for tree, path in trees.items():
                    if None not in samples[tree]:  # once past the limit, not again
                        samples[tree].append(run(path, doctor_args, environ, args.limit))
            print(f"{name:<24}" + "".join(f"{median(samples[tree]):>40}" for tree in trees), flush=True)


if __name__ == "__main__":
    main()
