"""The plugin's cost per run with the cache of file facts warm and cold, beside pytest without it (issue 28).

One interpreter (``--python``; default ``.tox/frameworks``, real torch, JAX, TensorFlow and ONNX Runtime wheels),
its pytest-cudnn installed as a wheel (``pip install --no-deps --force-reinstall .``: pytest then marks the package
for assertion rewriting, as it does for every user). Interleaved, in a folder holding one test:

* ``python -c pass`` and, where torch is installed, ``python -c "import torch"``;
* ``pytest`` with every other pytest11 plugin of that interpreter turned off (``-p no:NAME``): without pytest-cudnn
  (``-p no:cudnn``, the baseline), with it warm (the cache as the run before left it), with it cold (the cache
  folder removed before each run, so each one reads every file and writes the cache), and, with ``--before ROOT``,
  the code before the change (``PYTHONPATH=ROOT``: a checkout whose ``pytest_cudnn`` shadows the installed one);
  ``--co -q`` (nothing probed) the same;
* ``pytest-cudnn doctor`` warm, cold and before (exit 1 on a machine without a GPU: still a whole run).

Each set runs twice, with ``PYTHONDONTWRITEBYTECODE=1`` (container images, this project's machines; pytest's own
cached bytecode of the packages removed first) and without.
Medians of wall and CPU time, and the ratios the goals are stated in. Not a test: nothing asserts a time.

    git worktree add /tmp/before <commit before the change>
    .tox/frameworks/bin/pip install --no-deps --force-reinstall .
    python benchmarks/bench_warm_cold.py [--python .tox/frameworks/bin/python] [--before /tmp/before] [--repeat 15]
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from _timing import Samples, interleaved

ROOT = Path(__file__).resolve().parent.parent

_PLUGINS = """
import importlib.metadata, json
print(json.dumps(sorted({e.name for e in importlib.metadata.entry_points(group="pytest11")})))
"""
_INSTALLED = """
import importlib.metadata, json, pytest_cudnn, os
try:
    torch = importlib.metadata.version("torch")
except importlib.metadata.PackageNotFoundError:
    torch = None
files = importlib.metadata.distribution("pytest-cudnn").files or []
editable = not any(str(f).startswith("pytest_cudnn/") for f in files)
print(json.dumps({"torch": torch, "editable": editable, "package": os.path.dirname(pytest_cudnn.__file__)}))
"""


def _median(samples: Samples, what: str) -> float:
    values: list[float] = getattr(samples, what)
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=str(ROOT / ".tox" / "frameworks" / "bin" / "python"))
    parser.add_argument("--before", help="a checkout of the code before the change (its pytest_cudnn is used)")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    python = os.path.abspath(args.python)
    facts = json.loads(subprocess.run([python, "-c", _INSTALLED], capture_output=True, text=True, check=True).stdout)
    if facts["editable"]:
        raise SystemExit(f"{python}: pytest-cudnn is an editable install; install it as a wheel (see the docstring)")
    others = [name for name in json.loads(subprocess.run([python, "-c", _PLUGINS], capture_output=True, text=True,
                                                         check=True).stdout) if name != "cudnn"]  # fmt: skip
    packages = [facts["package"]] + ([os.path.join(args.before, "pytest_cudnn")] if args.before else [])
    for package in packages:
        compileall.compile_dir(package, quiet=1)  # as pip did at install
        # pytest's rewriter reads its own cached bytecode even with PYTHONDONTWRITEBYTECODE=1: an earlier run that
        # could write it would hide what a machine that never could pays.
        for cached in Path(package).rglob("__pycache__/*-pytest-*.pyc"):
            cached.unlink()
    scratch = Path(tempfile.mkdtemp(prefix="bench-warm-cold-"))
    try:
        (scratch / "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
        warm, cold = scratch / "warm", scratch / "cold"
        off = [flag for name in others for flag in ("-p", f"no:{name}")]

        def pytest(*flags: str, cache: Path = warm, before: bool = False) -> list[str]:
            command = [python, "-m", "pytest", "-p", "no:cacheprovider", *off, *flags, "test_a.py"]
            return _with(command, cache, before, args.before)

        def doctor(cache: Path = warm, before: bool = False) -> list[str]:
            return _with([python, "-m", "pytest_cudnn", "doctor"], cache, before, args.before)

        groups: dict[str, dict[str, list[str]]] = {
            "one-test pytest (header: probe and diagnosis)": {
                "pytest -p no:cudnn": pytest("-p", "no:cudnn"),
                "warm": pytest(),
                "cold": pytest(cache=cold),
                **({"before": pytest(before=True)} if args.before else {}),
            },
            "pytest --co -q (nothing probed)": {
                "pytest -p no:cudnn": pytest("--co", "-q", "-p", "no:cudnn"),
                "with pytest-cudnn": pytest("--co", "-q"),
                **({"before": pytest("--co", "-q", before=True)} if args.before else {}),
            },
            "pytest-cudnn doctor": {
                "python -c pass": [python, "-c", "pass"],
                **({"import torch": [python, "-c", "import torch"]} if facts["torch"] else {}),
                "warm": doctor(),
                "cold": doctor(cold),
                **({"before": doctor(before=True)} if args.before else {}),
            },
        }
        print(
            f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"{datetime.date.today().isoformat()}, {args.repeat} runs each, interleaved; {python}"
            + (f" (torch {facts['torch']})" if facts["torch"] else " (no torch)")
            + f"; other pytest plugins turned off: {', '.join(others) or 'none'}"
        )
        for bytecode in ("PYTHONDONTWRITEBYTECODE=1", "bytecode written"):
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            if bytecode.startswith("PYTHONDONTWRITEBYTECODE"):
                env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["XDG_CACHE_HOME"] = str(warm)
            for name, commands in groups.items():
                allowed = {key: (1,) for key in commands if name.startswith("pytest-cudnn doctor")}
                interleaved(commands, 1, env=env, cwd=str(scratch), allowed=allowed)  # the cache, the page cache
                samples = interleaved(commands, args.repeat, env=env, cwd=str(scratch), allowed=allowed)
                print(f"\n{name}, {bytecode}")
                print(_table(samples, name))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _with(command: list[str], cache: Path, before: bool, root: str | None) -> list[str]:
    """``command`` with the cache folder ``cache`` (removed first when it is the cold one) and, for ``before``,
    the old checkout first on the path; through env(1) and sh, each the same for every command of a group."""
    setting = [f"XDG_CACHE_HOME={cache}"] + ([f"PYTHONPATH={root}"] if before and root else [])
    remove = f'rm -rf "{cache}"; ' if cache.name == "cold" else ""
    return ["sh", "-c", f'{remove}exec env {" ".join(setting)} "$@"', "sh", *command]


def _table(samples: dict[str, Samples], group: str) -> str:
    base = "python -c pass" if group.startswith("pytest-cudnn doctor") else "pytest -p no:cudnn"
    base_wall, base_cpu = _median(samples[base], "wall"), _median(samples[base], "cpu")
    torch = samples.get("import torch")
    lines = []
    for name, sample in samples.items():
        wall, cpu = _median(sample, "wall"), _median(sample, "cpu")
        line = (
            f"  {name:<20} wall {wall * 1000:8.1f} ms (x{wall / base_wall:5.2f}, {(wall - base_wall) * 1000:+7.1f} ms)"
            f"   CPU {cpu * 1000:8.1f} ms (x{cpu / base_cpu:5.2f})"
        )
        if torch is not None and name not in ("python -c pass", "import torch"):
            line += f"   import torch / this: x{_median(torch, 'wall') / wall:5.1f} wall"
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
