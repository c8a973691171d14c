"""The requirement markers' signatures and help, as `pytest --markers` shows them.

Its own module, importing nothing: pytest_configure registers the markers on every run, and a run that uses none
of them (``--collect-only``, a CPU-only suite) must not pay for the parsing and judging in :mod:`.markers`.
"""

from __future__ import annotations

from .compat.catalog import MARKED
from .frameworks import NAMES, REGISTRY

__all__ = ["FRAMEWORK_NAMES", "MARKERS", "USES_GPU"]

# The frameworks the probe reads, by import name: requires_cudnn(framework=...), doctor --framework.
FRAMEWORK_NAMES = NAMES

# name -> call signature and help, as `pytest --markers` shows them.
MARKERS: dict[str, str] = {
    "requires_cudnn": "requires_cudnn(spec='', *, framework=None): skip unless the cuDNN in use matches the PEP 440 "
    "specifier set, e.g. '>=8.9,<10' (none: any version): the one the framework loads ("
    + ", ".join(repr(name) for name in FRAMEWORK_NAMES)
    + "; unnamed: the copy of every installed GPU framework).",
    "requires_cuda": "requires_cuda(spec='', *, framework=None): skip unless the CUDA runtime in use matches the "
    "specifier set, e.g. '>=12' (none: any version; the framework's copy, as for requires_cudnn).",
    # One per further kind of the library catalog that has a marker: requires_nccl, requires_cublas.
    **{
        f"requires_{kind.key}": f"requires_{kind.key}(spec='', *, framework=None): skip unless the {kind.display} in "
        f"use matches the specifier set, e.g. '>={kind.example}' (none: any version; the framework's copy, as for "
        "requires_cudnn)."
        for kind in MARKED
    },
    "requires_driver": "requires_driver(spec=''): skip unless the NVIDIA driver version matches, e.g. '>=535' "
    "(none: any driver).",
    "requires_gpu": "requires_gpu(count=1, memory=None, compute_capability=None, name=None, *, healthy=False, "
    "peer_access=False, interconnect=None): skip unless at least count GPUs are visible and the test's GPU has "
    "memory free ('16GiB', '24GB' or bytes), a compute capability matching the specifier set (e.g. '>=8.0') and a "
    "name matching the glob; healthy=True: no fault of its state (uncorrectable ECC errors, memory repairs "
    "pending, compute mode PROHIBITED); peer_access=True: the first count GPUs read and write each other's memory "
    "(P2P); interconnect='nvlink': they reach each other by NVLink.",
    # One per framework of the registry: requires_tensorflow, requires_torch, ...
    **{entry.marker: entry.marker_help for entry in sorted(REGISTRY, key=lambda entry: not entry.own_rules)},
}

# Not a requirement on the stack but a check on the test (pytest_cudnn._run.gpu_use): registered beside them.
USES_GPU = (
    "uses_gpu: fail the test when, after it ran, its process holds no CUDA context on the GPU it was given (the gpu "
    "fixture's; skips, or fails under --require-gpu, without a GPU); --assert-gpu-used applies it to every test "
    "given the gpu fixture."
)
