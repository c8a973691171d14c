"""The plugin's fixed cost on a one-test suite (issue 11): ``pytest --co -q``, ``pytest -q`` and ``pytest`` with the
plugin against the same runs with ``-p no:cudnn``, interleaved. Goals: at most 1.03x for ``--co`` (nothing is
probed, so nothing should be paid) and at most 1.12x for a full run with the probe and the header (``pytest``:
``-q`` shows no header, so it probes nothing).

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
        # -q shows no header, so nothing there needs the environment and nothing is probed; the default verbosity
        # shows the header: the probe and the diagnosis are paid.
        for flags in (["--co", "-q"], ["-q"], []):
            commands = {
                f"pytest {' '.join(flags)} -p no:cudnn".replace("  ", " "): [*pytest, *flags, "-p", "no:cudnn"],
                f"pytest {' '.join(flags)}".strip(): [*pytest, *flags],
            }
            times = interleaved(commands, args.repeat, cwd=folder)
            print(describe(times, next(iter(commands))))
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.repeat} runs each, interleaved")


if __name__ == "__main__":
    main()
