"""CUDA forward compatibility: a newer user-mode driver (libcuda from a cuda-compat package) over an older kernel
driver. Which GPUs it runs on, which kernel driver branches are still supported, and the errors CUDA gives when it
does not apply. Each fact names its source in :mod:`.sources`.

Pure data and lookups: no I/O.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "BRANCHES",
    "COMPAT_NOT_SUPPORTED_ON_DEVICE",
    "GPU_RULE",
    "SYSTEM_DRIVER_MISMATCH",
    "Branch",
    "branch_of",
    "compat_folder",
    "forward_compatible_gpu",
]

# cudaErrorCompatNotSupportedOnDevice / CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: "the system was upgraded to run
# with forward compatibility but the visible hardware detected by CUDA does not support this configuration".
COMPAT_NOT_SUPPORTED_ON_DEVICE = 804
# cudaErrorSystemDriverMismatch / CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: "a mismatch between the versions of the display
# driver and the CUDA driver".
SYSTEM_DRIVER_MISMATCH = 803
ERRORS_SOURCE = "cuda-compat-errors"


class GpuRule(NamedTuple):
    rule: str
    source: str


GPU_RULE = GpuRule(
    "forward compatibility applies only to NVIDIA data center GPUs, select NGC Server Ready SKUs of RTX cards and "
    "Jetson boards",
    "cuda-forward-compat",
)

# Consumer cards: never data-center parts, never NGC Server Ready SKUs.
_CONSUMER = re.compile(r"\b(GeForce|TITAN)\b", re.I)
# Data-center product lines by their NVML names ("Tesla T4", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3").
_DATA_CENTER = re.compile(
    r"\b(Tesla|A100|A800|A30|A40|A10G?|A16|A2|H100|H800|H200|H20|GH200|B100|B200|GB200|B300|GB300|L4|L40S?|L20|"
    r"T4|V100|P100|P40|P4)\b",
    re.I,
)


def forward_compatible_gpu(name: str | None) -> bool | None:
    """Whether NVIDIA's rule lets a GPU of this NVML name run forward compatibility: False for consumer cards,
    True for data-center ones, None when the name alone cannot tell (an RTX card may be a Server Ready SKU; the
    runtime's own answer decides).

    >>> forward_compatible_gpu("NVIDIA GeForce RTX 4090"), forward_compatible_gpu("NVIDIA H100 80GB HBM3")
    (False, True)
    """
    if not name:
        return None
    if _CONSUMER.search(name):
        return False
    if _DATA_CENTER.search(name):
        return True
    return None


class Branch(NamedTuple):
    number: int  # 535
    designation: str  # "Long Term Support Branch", "end of life"
    supported: bool
    source: str


_SUPPORTED = {
    535: "Long Term Support Branch",
    570: "Production Branch",
    580: "Long Term Support Branch",
    595: "Production Branch",
    610: "New Feature Branch",
    620: "Long Term Support Branch",
}
_END_OF_LIFE = (575, 565, 560, 550, 525, 515, 510, 495, 465, 460, 455, 450, 440, 418, 410)
BRANCHES: dict[int, Branch] = {
    **{n: Branch(n, d, True, "datacenter-driver-branches") for n, d in _SUPPORTED.items()},
    **{n: Branch(n, "end of life", False, "datacenter-driver-branches") for n in _END_OF_LIFE},
}


def branch_of(driver_version: str | None) -> Branch | None:
    """The data-center driver branch of a driver version ("535.104.05" -> R535), when NVIDIA's table lists it.

    >>> branch_of("550.54.15").supported, branch_of("535.104.05").supported, branch_of("470.256.02").supported
    (False, True, False)
    >>> branch_of("999.1") is None
    True
    """
    match = re.match(r"(\d{1,4})(?:\.|$)", driver_version or "")
    if not match:
        return None
    number = int(match.group(1))
    if number in BRANCHES:
        return BRANCHES[number]
    # "All other previous driver branches not listed ... are end of life": below the newest branch the table names,
    # a branch it does not list as supported has ended (R470, R545, ...); above it, nothing is said yet.
    if number < max(BRANCHES):
        return Branch(number, "end of life", False, "datacenter-driver-branches")
    return None


def compat_folder(path: str | None) -> str | None:
    """The folder that marks ``path`` as a forward-compatibility libcuda: a ``compat`` folder (the cuda-compat-X-Y
    package installs into /usr/local/cuda-X.Y/compat) or a folder named for a cuda-compat package (conda's
    cuda-compat). None for any other path.

    >>> compat_folder("/usr/local/cuda-13.0/compat/libcuda.so.1")
    '/usr/local/cuda-13.0/compat'
    """
    if not path:
        return None
    parts = path.split("/")
    for end in range(len(parts) - 1, 0, -1):
        part = parts[end - 1]
        if part == "compat" or part.startswith("cuda-compat"):
            return "/".join(parts[:end]) or None
    return None
