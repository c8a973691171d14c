"""Probe cost as the host grows: 1 to 16 GPUs, 1 to 10 copies of each library on the loader path.

Goal: linear, under 100 ms at 16 GPUs with 10 copies. Hosts are simulated with the test suite's stand-in
libraries (tests/simhost.py, needs gcc); the probe is the real one, run in-process as the plugin runs it.

    python benchmarks/bench_probe_scaling.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_cudnn.probing.host import probe_environment  # noqa: E402
from tests.simhost import Compiler, SimGpu, SimHost  # noqa: E402

GPU_COUNTS = (1, 4, 16)
COPY_COUNTS = (1, 5, 10)


def build(scratch: Path, compiler: Compiler, gpus: int, copies: int) -> SimHost:
    host = SimHost(scratch / f"host-{gpus}-{copies}", compiler)
    host.add_driver(
        [
            SimGpu(uuid=f"GPU-{index:08d}-0000-0000-0000-000000000000", pci_bus_id=f"00000000:{index:02X}:00.0")
            for index in range(gpus)
        ]
    )
    for copy in range(copies):
        folder = host.folder(f"opt/copy{copy}/lib64")
        host.add_cudart(folder, 12000 + 10 * copy)
        host.add_cudnn(folder, (9, copy, 0), cudart_version=12040)
        host.ld_library_path.append(str(folder))
    return host


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
        f"median of {args.repeat} probes (ms)"
    )
    print("copies \\ GPUs " + "".join(f"{gpus:>8}" for gpus in GPU_COUNTS))
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        compiler = Compiler(scratch / "cc")
        for copies in COPY_COUNTS:
            row = []
            for gpus in GPU_COUNTS:
                host = build(scratch, compiler, gpus, copies)
                environ = {**os.environ, **host.environ()}
                environ.pop("PYTHONPATH", None)
                times = []
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    env = probe_environment(environ=environ)
                    times.append(time.perf_counter() - started)
                assert len(env.driver.gpus) == gpus, env.driver
                assert sum(c.path.startswith(str(host.root)) for c in env.cudnns) == copies
                row.append(statistics.median(times) * 1000)
            print(f"{copies:>14}" + "".join(f"{value:8.1f}" for value in row))


if __name__ == "__main__":
    main()
