"""The newest published build of a framework that runs on this host, for the fixes that say what to install.

PyPI's default builds moved to CUDA 13 (PyTorch from 2.11, ONNX Runtime's ``onnxruntime-gpu`` from 1.27), and a
CUDA 13 build needs driver 580.65.06 or newer ("cuda-13-driver") and a GPU of
compute capability 7.5 or newer ("cuda-13-arch-removal"). A plain ``pip install torch`` on a driver-550 host, or on
a V100, installs a build that cannot run there. So a fix that says "install a CUDA build" names the release bound
of the newest line of builds whose CUDA the driver runs and whose GPU code every GPU here can run, and says why the
newer ones cannot. Where the host says too little to tell (no driver read, no GPU), the plain hint stands.

Pure: reads the Environment, and each framework's lines of builds from its registry entry (``Framework.pypi``,
from the sourced tables in :mod:`pytest_cudnn.compat`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from .._base.versions import decimal
from ..compat import cuda as cuda_facts
from ..environment import Environment, State
from ..frameworks import framework
from ..frameworks.base import BuildLine
from .kernels import runs_on
from .stack import gpu_text, gpus_with_capability

__all__ = ["install", "newest_that_runs", "why_not"]


def why_not(env: Environment, line: BuildLine) -> str | None:
    """Why builds of ``line`` cannot run here ("driver 550.54.15 is below 580.65.06"); None where they can, or where
    the host does not say (no driver version read)."""
    driver = env.driver
    floor = cuda_facts.minimum_driver(line.cuda, env.host.system)
    if floor is not None and driver.state is State.FOUND and driver.version:
        have, need = cuda_facts.driver_tuple(driver.version), cuda_facts.driver_tuple(floor[0])
        if have is not None and need is not None and have < need:
            return f"driver {driver.version} is below {floor[0]}"
    supported = cuda_facts.supported_capabilities(line.cuda)
    for gpu in gpus_with_capability(env):
        capability = gpu.compute_capability or ""
        if line.targets:
            if runs_on(line.targets, capability) is None:
                return f"{gpu_text(gpu)} is not among its GPU targets ({', '.join(line.targets)})"
        elif supported is not None and _cc(capability) < _cc(supported.oldest):
            return f"{gpu_text(gpu)} is below compute capability {supported.oldest}, CUDA {line.cuda}'s oldest"
    return None


def newest_that_runs(env: Environment, lines: Sequence[BuildLine]) -> tuple[BuildLine, BuildLine, str] | None:
    """Where the newest of ``lines`` (newest first) cannot run here: the newest that can, the line just newer than
    it, and why that one cannot. None where the newest runs, where none does, or where the host says too little."""
    blocked = why_not(env, lines[0]) if lines else None
    if blocked is None:
        return None
    for newer, line in itertools.pairwise(lines):
        why = why_not(env, line)
        if why is None:
            return line, newer, blocked
        blocked = why
    return None


def install(env: Environment, name: str) -> str | None:
    """``pip install`` of the newest release of framework ``name`` that runs here, with why a newer one does not,
    where a plain install would bring one that cannot run; None otherwise (and for frameworks not tabled here)."""
    entry = framework(name)
    known = entry.pypi if entry is not None else None
    found = newest_that_runs(env, known[1]()) if known else None
    if known is None or found is None:
        return None
    line, newer, why = found
    return (
        f'pip install "{known[0]}<{line.below}" ({newer.first} and later are built for CUDA {newer.cuda}, which '
        f"cannot run here: {why})"
    )


def _cc(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return decimal(major, 4) or 0, decimal(minor, 4) or 0
