"""The plugin's fixed cost on a one-test suite (issue 11): ``pytest --co -q`` and ``pytest -q`` with the plugin
against the same runs with ``-p no:cudnn``, interleaved. Goals: at most 1.03x for ``--co`` (nothing is probed, so
nothing should be paid) and at most 1.12x for a full run (the probe and the header included).

python benchmarks/bench_fixed_cost.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

from _timing import describe, interleaved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
        pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_a.py"]
        for flags in (["--co", "-q"], ["-q"]):
            commands = {
                f"pytest {' '.join(flags)} -p no:cudnn": [*pytest, *flags, "-p", "no:cudnn"],
                f"pytest {' '.join(flags)}": [*pytest, *flags],
            }
            times = interleaved(commands, args.repeat, cwd=folder)
            print(describe(times, f"pytest {' '.join(flags)} -p no:cudnn"))
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.repeat} runs each, interleaved")


if __name__ == "__main__":
    main()
