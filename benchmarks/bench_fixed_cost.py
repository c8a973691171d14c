"""The plugin's fixed cost on a one-test suite (issue 11): ``pytest --co -q``, ``pytest -q`` and ``pytest`` with the
plugin against the same runs without it, interleaved. Goals: at most 1.03x for ``--co`` (nothing is probed, so
nothing should be paid) and at most 1.12x for a full run with the probe and the header (``pytest``: ``-q`` shows no
header, so it probes nothing).

Two set-ups, both measured:

- ``venv``: every plugin this virtualenv has (the README's, with pytest-xdist and hypothesis) loads, as it would for
  a user; the baseline is ``-p no:cudnn``.
- ``bare``: pytest alone (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``), the plugin added with ``-p pytest_cudnn.plugin``:
  the smallest baseline there is, so the plugin's cost shows most.

python benchmarks/bench_fixed_cost.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import os
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
        bare = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        # -q shows no header, so nothing there needs the environment and nothing is probed; the default verbosity
        # shows the header: the probe and the diagnosis are paid.
        for setup, env, without, with_plugin in (
            ("venv", None, ["-p", "no:cudnn"], []),
            ("bare", bare, [], ["-p", "pytest_cudnn.plugin"]),
        ):
            for flags in (["--co", "-q"], ["-q"], []):
                name = " ".join(["pytest", *flags])
                commands = {
                    f"{setup}: {name} (without)": [*pytest, *flags, *without],
                    f"{setup}: {name}": [*pytest, *flags, *with_plugin],
                }
                times = interleaved(commands, args.repeat, env=env, cwd=folder)
                print(describe(times, next(iter(commands))))
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.repeat} runs each, interleaved")


if __name__ == "__main__":
    main()
