"""What the plugin costs a plugin author's suite: many in-process pytester runs, none of them using the plugin.

Each of ``--tests`` tests calls ``pytester.runpytest()`` on a one-test file. The outer run is ``pytest -q`` (no
header, so the outer run imports nothing of the diagnosis either); pytester drops the modules each inner run
imported, so whatever a nested run imports is paid again by every one of them. Goal: the plugin adds nothing
measurable per inner run beyond registering its options and markers.

Two set-ups, both measured, with and without the plugin in the outer run and in every inner run:

- ``venv``: every plugin this virtualenv has loads (as for a user) but Hypothesis' in the inner runs (its summary
  hook imports Hypothesis, which pytest then assertion-rewrites: about 2 s a run on a machine that keeps no bytecode,
  which would drown what is measured here); the baseline is ``-p no:cudnn``.
- ``bare``: pytest alone (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``), the plugin added with ``-p pytest_cudnn.plugin``:
  the strictest baseline, where the plugin's cost shows most.

python benchmarks/bench_nested.py [--repeat 5] [--tests 50] [--setup venv|bare]
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import describe, interleaved

# The inner runs' flags come from BENCH_INNER: pytester discards PYTEST_ADDOPTS, and the inner run is a new
# configuration that does not inherit the outer run's -p options.
SUITE = """
import os
import shlex

import pytest

pytest_plugins = ["pytester"]


@pytest.mark.parametrize("n", range({tests}))
def test_inner(pytester, n):
    pytester.makepyfile("def test_a():\\n    pass\\n")
    pytester.runpytest("-p", "no:cacheprovider", *shlex.split(os.environ["BENCH_INNER"])).assert_outcomes(passed=1)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tests", type=int, default=50, help="in-process pytester runs per outer run")
    parser.add_argument("--setup", choices=["venv", "bare"], action="append", help="the set-ups to measure (both)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "test_nested.py").write_text(SUITE.format(tests=args.tests), encoding="utf-8")
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_nested.py"]
        bare = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        # (set-up, environment, the inner runs' own flags, the plugin's flags without it and with it)
        for setup, env, inner, without, with_plugin in (
            ("venv", None, ["-p", "no:hypothesispytest"], ["-p", "no:cudnn"], []),
            ("bare", bare, [], [], ["-p", "pytest_cudnn.plugin"]),
        ):
            if args.setup and setup not in args.setup:
                continue
            commands = {
                f"{setup}: {name}": ["env", f"BENCH_INNER={shlex.join(inner + flags)}", *pytest, *flags]
                for name, flags in (("without", without), ("with the plugin", with_plugin))
            }
            times = interleaved(commands, args.repeat, env=env, cwd=folder)
            print(describe(times, next(iter(commands))))
            base, plugin = times[f"{setup}: without"], times[f"{setup}: with the plugin"]
            wall, cpu = (
                (statistics.median(getattr(plugin, kind)) - statistics.median(getattr(base, kind))) / args.tests * 1000
                for kind in ("wall", "cpu")
            )
            print(f"{setup}: the plugin per inner run: {wall:+.1f} ms wall, {cpu:+.1f} ms CPU")
    print(
        f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{args.tests} inner runs per outer run, {args.repeat} outer runs each, interleaved"
    )


if __name__ == "__main__":
    main()
