"""The fixed cost of a change, side by side with the code before it (issue 20: the redesign must not raise it).

Two interpreters, each with its own pytest-cudnn (an editable install of each checkout): ``--before PYTHON`` and
this one. Interleaved, the strictest baseline (pytest alone, ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, the plugin named
with ``-p``) for ``pytest --co -q`` (nothing probed: importing and registering the plugin) and ``pytest`` (the
header: probe and diagnosis), and ``pytest-cudnn doctor`` against ``python -c pass``. On a machine without a GPU the
doctor exits 1; that run is still a whole one.

    git worktree add /tmp/before <commit> && python3 -m venv /tmp/before/.venv
    /tmp/before/.venv/bin/pip install -e '/tmp/before[test]'
    python benchmarks/bench_before_after.py --before /tmp/before/.venv/bin/python [--repeat 15]
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import describe, interleaved


def _package_of(python: str) -> Path:
    found = subprocess.run(
        [python, "-c", "import pytest_cudnn, os; print(os.path.dirname(pytest_cudnn.__file__))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(found.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="a Python whose pytest_cudnn is the code before the change")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    before, after = args.before, sys.executable
    for python in (before, after):  # as pip install does for a wheel (see _timing.write_bytecode)
        compileall.compile_dir(str(_package_of(python)), quiet=1)
    bare = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")

        def pytest(python: str, *flags: str) -> list[str]:
            return [python, "-m", "pytest", "-p", "no:cacheprovider", *flags, "test_a.py"]

        groups = {
            "pytest --co -q": {
                "pytest alone": pytest(after, "--co", "-q"),
                "before": pytest(before, "--co", "-q", "-p", "pytest_cudnn.plugin"),
                "after": pytest(after, "--co", "-q", "-p", "pytest_cudnn.plugin"),
            },
            "pytest (header: probe and diagnosis)": {
                "pytest alone": pytest(after),
                "before": pytest(before, "-p", "pytest_cudnn.plugin"),
                "after": pytest(after, "-p", "pytest_cudnn.plugin"),
            },
            "doctor": {
                "python -c pass": [after, "-c", "pass"],
                "before": [before, "-m", "pytest_cudnn", "doctor"],
                "after": [after, "-m", "pytest_cudnn", "doctor"],
            },
        }
        for title, commands in groups.items():
            times = interleaved(commands, args.repeat, env=bare, cwd=folder, allowed={"before": (1,), "after": (1,)})
            print(f"## {title}")
            print(describe(times, next(iter(commands))))
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.repeat} runs each, interleaved")


if __name__ == "__main__":
    main()
