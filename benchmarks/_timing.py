"""Shared helpers: run commands interleaved, so that load on the machine hits them alike, and record both wall
time and CPU time (user + system, from the child's rusage). On a shared machine CPU time is the steadier of the
two, so ratios are given for both."""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def interleaved(
    commands: Mapping[str, Sequence[str]],
    repeat: int,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    allowed: Mapping[str, Sequence[int]] | None = None,  # per command, exit statuses besides 0 that are fine
) -> dict[str, Samples]:
    """Run every command ``repeat`` times, round-robin; return each one's wall and CPU seconds."""
    write_bytecode()
    samples = {name: Samples() for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            before = os.times()
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, check=False, env=dict(env) if env else None, cwd=cwd)
            samples[name].wall.append(time.perf_counter() - started)
            if done.returncode not in (0, *(allowed or {}).get(name, ())):  # a command that fails early would look fast
                tail = (done.stdout + done.stderr).decode("utf-8", "replace")[-2000:]
                raise SystemExit(f"{name}: exit status {done.returncode}\n{tail}")
            after = os.times()
            samples[name].cpu.append(
                (after.children_user - before.children_user) + (after.children_system - before.children_system)
            )
    return samples


def write_bytecode() -> None:
    """Compile the package's bytecode first, as ``pip install`` does for a wheel: a machine with
    ``PYTHONDONTWRITEBYTECODE=1`` (this project's own does) never caches it for an editable install, and every run
    would pay the compiler (about 45 ms for the plugin) on top of what a user's installed copy costs, while pytest and
    the other plugins, installed as wheels, already have theirs."""
    package = Path(__file__).resolve().parent.parent / "pytest_cudnn"
    compileall.compile_dir(str(package), quiet=1)


def describe(samples: dict[str, Samples], baseline: str) -> str:
    base_wall = statistics.median(samples[baseline].wall)
    base_cpu = statistics.median(samples[baseline].cpu)
    lines = []
    for name, sample in samples.items():
        wall, cpu = statistics.median(sample.wall), statistics.median(sample.cpu)
        lines.append(
            f"{name:<36} wall median {wall * 1000:8.1f} ms (x{wall / base_wall:4.2f})   "
            f"CPU median {cpu * 1000:8.1f} ms (x{cpu / base_cpu:4.2f})"
        )
    return "\n".join(lines)
