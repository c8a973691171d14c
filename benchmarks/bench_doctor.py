"""Doctor wall time against a bare interpreter (goal: under 10x), and against importing TensorFlow.

python benchmarks/bench_doctor.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys

from _timing import describe, interleaved

# The doctor exits 1 on a host that cannot run GPU work (this one, without a GPU): still a full run to time.
UNHEALTHY_IS_FINE = {"pytest-cudnn doctor": (1,), "pytest-cudnn doctor --json": (1,)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "pytest-cudnn doctor": [sys.executable, "-m", "pytest_cudnn", "doctor"],
        "pytest-cudnn doctor --json": [sys.executable, "-m", "pytest_cudnn", "doctor", "--json"],
    }
    if importlib.util.find_spec("tensorflow") is not None:
        commands["python -c 'import tensorflow'"] = [sys.executable, "-c", "import tensorflow"]
    times = interleaved(commands, args.repeat, allowed=UNHEALTHY_IS_FINE)
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.repeat} runs each, interleaved")
    print(describe(times, "python -c pass"))
    if "python -c 'import tensorflow'" not in commands:
        print("TensorFlow is not installed here: no comparison with 'import tensorflow'")


if __name__ == "__main__":
    main()
