"""The cost of bounding a live read (issue 19): ``requires_gpu(memory=...)`` reads free memory at each marked test's
setup, and each read now runs on a worker thread the test process waits for (pytest_cudnn._base.deadline). Measured
in-process against the stand-in NVML (tests/simhost.py, needs gcc), beside the same pynvml calls made directly on
the calling thread, as the read was made before; rounds interleaved, medians per read.

    python benchmarks/bench_live_read.py [--reads 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pynvml  # noqa: E402

from pytest_cudnn import live  # noqa: E402
from tests.simhost import Compiler, SimGpu, SimHost  # noqa: E402


def per_read(read: Callable[[], object], reads: int) -> float:
    started = time.perf_counter()
    for _ in range(reads):
        read()
    return (time.perf_counter() - started) / reads


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        gpu = SimGpu()
        host = SimHost(Path(scratch) / "host", Compiler(Path(scratch) / "cache"))
        host.add_driver([gpu])
        path = str(host.driver_dir / "libnvidia-ml.so.1")

        def bounded() -> object:
            reading = live.read(gpu.uuid, library=path, timeout=10)
            assert reading.free == gpu.memory_free, reading.error
            return reading

        def direct() -> object:
            return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByUUID(gpu.uuid)).free

        bounded()  # opens NVML (nvmlInit) through the stand-in, by its path
        samples: dict[str, list[float]] = {"direct (before)": [], "bounded": []}
        for _ in range(args.rounds):
            samples["direct (before)"].append(per_read(direct, args.reads))
            samples["bounded"].append(per_read(bounded, args.reads))
        live.close()
    base = statistics.median(samples["direct (before)"])
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<16} {median * 1e6:8.1f} us per read  {median / base:5.2f}x")
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.rounds} rounds of {args.reads} reads")


if __name__ == "__main__":
    main()
