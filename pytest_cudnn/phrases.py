"""One wording for each fact, shared by the doctor, the header, the findings and the skip reasons.

A GPU, a library copy, a size or a library name is said the same way wherever it appears, so that a user who
reads "GPU 0 Tesla T4 (compute capability 7.5, Turing, 14.6 GiB free)" in a skip reason finds the same words in
the doctor. Pure module: strings out; making them safe for a terminal is :mod:`pytest_cudnn._base.text`'s job, at
the point where they are shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .compat.catalog import kind_of
from .compat.cuda import architecture_name
from .devices import CudaDevice
from .environment import CudaRuntime, Cudnn, Gpu, LibraryCopy, Via

if TYPE_CHECKING:
    from .devices import Holder

__all__ = [
    "copy",
    "cudart_library",
    "cudnn_library",
    "framework",
    "gpu",
    "nvml_library",
    "size",
    "via",
]


def size(value: int | None) -> str:
    """Binary units, as nvidia-smi's MiB: 25769803776 -> '24.0 GiB'.

    >>> size(25769803776), size(512), size(None)
    ('24.0 GiB', '512 B', '?')
    """
    if value is None:
        return "?"
    amount = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(amount) < 1024 or unit == "PiB":
            return f"{int(amount)} B" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def via(vias: Iterable[Via]) -> str:
    return ", ".join(v.value for v in vias)


def gpu(device: Gpu | CudaDevice, *, free: bool = True) -> str:
    """'GPU 0 Tesla T4 (compute capability 7.5, Turing, 14.6 GiB free)'; a MIG device as
    'GPU 0 MIG 1 NVIDIA A100-SXM4-40GB MIG 1g.5gb (...)'."""
    facts = []
    if device.compute_capability:
        facts.append(f"compute capability {device.compute_capability}")
        arch = architecture_name(device.compute_capability)
        if arch:
            facts.append(arch)
    if free:
        facts.append(f"{size(device.memory_free)} free" if device.memory_free is not None else "free memory unknown")
    detail = f" ({', '.join(facts)})" if facts else ""
    label = device.label if isinstance(device, CudaDevice) else f"GPU {device.index}"
    return f"{label} {device.name or '(name unknown)'}{detail}"


def copy(item: CudaRuntime | Cudnn | LibraryCopy, *more: str) -> str:
    """'cuDNN 8.0.5 at /usr/lib/libcudnn.so.8 (via LD_LIBRARY_PATH)'; ``more`` facts join the parentheses. A copy of
    a further catalog kind says the CUDA its file says it was built for: 'NCCL 2.32.3 at ... (built for CUDA
    12.9, via ...)'."""
    if isinstance(item, LibraryCopy):
        found = kind_of(item.kind)
        label = found.display if found is not None else item.kind
        built = [f"built for CUDA {item.built_for.value}"] if item.built_for is not None else []
        facts = ", ".join([*built, f"via {via(item.via)}", *more])
        return f"{label} {item.version or '(version unknown)'} at {item.path} ({facts})"
    label = "CUDA runtime" if isinstance(item, CudaRuntime) else "cuDNN"
    facts = ", ".join([f"via {via(item.via)}", *more])
    return f"{label} {item.version or '(version unknown)'} at {item.path} ({facts})"


def nvml_library(system: str) -> str:
    return "nvml.dll" if system == "Windows" else "libnvidia-ml.so.1"


def cudart_library(system: str) -> str:
    return "cudart64_*.dll" if system == "Windows" else "libcudart.so.*"


def cudnn_library(system: str) -> str:
    return "cudnn64_*.dll" if system == "Windows" else "libcudnn.so.*"


def framework(name: str) -> str:
    """A framework's name as its users write it, from its import name: 'torch' -> 'PyTorch'."""
    from .frameworks.base import display_of  # the registry imports nothing heavy; here to keep phrases a leaf

    return display_of(name)


def holders(found: Sequence[Holder], limit: int = 4) -> str:
    """'pid 4242 python3 (30.0 GiB), pid 77 (memory not reported)': who holds a device's memory."""
    said = [
        f"pid {h.pid}{f' {h.name}' if h.name else ''} ({size(h.used) if h.used is not None else 'memory not reported'})"
        for h in found[:limit]
    ]
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return ", ".join(said) + more
