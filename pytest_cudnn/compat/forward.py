"""CUDA forward compatibility: a newer user-mode driver (libcuda from a cuda-compat package) over an older kernel
driver. Which GPUs it runs on, which kernel driver branches are still supported, and the errors CUDA gives when it
does not apply. Each fact names its source in :mod:`.sources`.

Pure data and lookups: no I/O.
"""

from __future__ import annotations

import datetime
import re
from typing import NamedTuple

from .cuda import driver_branch

__all__ = [
    "BRANCHES",
    "COMPAT_NOT_SUPPORTED_ON_DEVICE",
    "GPU_RULE",
    "NEWEST_EDITION",
    "SYSTEM_DRIVER_MISMATCH",
    "Branch",
    "branch_of",
    "compat_folder",
    "end_of_life_text",
    "forward_compatible_gpu",
    "supported_branches",
    "supported_on",
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
# A hint, not NVIDIA's list (compat audit W3): "Tesla K80" matches though no supported branch drives Kepler. The
# runtime's own answer decides first (804, cudaErrorCompatNotSupportedOnDevice); the name only words a finding.
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
    designation: str  # "Long Term Support Branch", "Production Branch", "New Feature Branch", "end of life"
    # The last month NVIDIA supports it, (year, month), as the newest edition that names it says; None where no
    # edition gives one (the "all other previous driver branches" rule: ended, no month named).
    end_of_life: tuple[int, int] | None
    source: str


_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_LTSB, _PB, _NFB = "Long Term Support Branch", "Production Branch", "New Feature Branch"
# NVIDIA's "Supported Drivers and CUDA Toolkit Versions", Table 2 "CUDA and Drivers": each edition replaces the table
# of the one before (it does not add rows to it), so each branch keeps the end of life of the newest edition that
# lists it. The 620 edition: R580 LTSB June 2028, R595 PB March 2027, R620 LTSB September 2029 ("Only Long Term
# Support and Production branches are listed. New Feature Branches are short-lived and do not have an end-of-life
# date."). The 615 edition: R535 LTSB June 2026, R580 June 2028, R595 March 2027, R610 NFB August 2026. The
# 580-era edition (the unversioned page): R570 PB February 2026 (R580 then August 2028, since moved to June 2028);
# the 615 edition no longer lists R570, as ended. R610 keeps the 615 edition's August 2026: the 620 edition lists no
# New Feature Branch at all, so it neither extends nor ends it, and August 2026 has passed either way.
_LISTED: dict[int, tuple[str, tuple[int, int]]] = {
    535: (_LTSB, (2026, 6)),
    570: (_PB, (2026, 2)),
    580: (_LTSB, (2028, 6)),
    595: (_PB, (2027, 3)),
    610: (_NFB, (2026, 8)),
    620: (_LTSB, (2029, 9)),
}
# The branches the newest edition (620) lists. Where no day is known (a snapshot whose probe time cannot be read),
# these alone are supported: the table as it stands, with its rule that every branch it does not list has ended.
NEWEST_EDITION = frozenset({580, 595, 620})
_END_OF_LIFE = (575, 565, 560, 550, 525, 515, 510, 495, 465, 460, 455, 450, 440, 418, 410)
BRANCHES: dict[int, Branch] = {
    **{n: Branch(n, d, eol, "datacenter-driver-branches") for n, (d, eol) in _LISTED.items()},
    **{n: Branch(n, "end of life", None, "datacenter-driver-branches") for n in _END_OF_LIFE},
}


def branch_of(driver_version: str | None) -> Branch | None:
    """The data-center driver branch of a driver version ("535.104.05" -> R535), when NVIDIA's table lists it.

    >>> branch_of("535.104.05")[:3]
    (535, 'Long Term Support Branch', (2026, 6))
    >>> branch_of("470.256.02").designation, branch_of("615.20.01").designation, branch_of("999.1") is None
    ('end of life', 'end of life', True)
    """
    number = driver_branch(driver_version)
    if number is None:
        return None
    if number in BRANCHES:
        return BRANCHES[number]
    # "All other previous driver branches not listed ... are end of life": below the newest branch the table names,
    # a branch it does not list has ended (R470, R545, a New Feature Branch such as R615 that the newest edition
    # leaves out); above it, nothing is said yet.
    if number < max(BRANCHES):
        return Branch(number, "end of life", None, "datacenter-driver-branches")
    return None


def supported_on(branch: Branch, on: datetime.date | None) -> bool:
    """Whether NVIDIA supports ``branch`` on the day ``on``: before the first day of the month after its end of
    life. A branch ended with no month named is never supported. ``on`` None (no day known): supported only if the
    newest edition lists it.

    >>> r535 = BRANCHES[535]
    >>> supported_on(r535, datetime.date(2026, 6, 30)), supported_on(r535, datetime.date(2026, 7, 1))
    (True, False)
    >>> supported_on(BRANCHES[610], datetime.date(2026, 11, 29)), supported_on(BRANCHES[620], None)
    (False, True)
    """
    if branch.end_of_life is None:
        return False
    if on is None:
        return branch.number in NEWEST_EDITION
    return (on.year, on.month) <= branch.end_of_life


def supported_branches(on: datetime.date | None, *, new_feature: bool = False) -> tuple[Branch, ...]:
    """The branches NVIDIA supports on the day ``on``, oldest first: the Long Term Support and Production Branches,
    the ones to move a host to (a New Feature Branch is short-lived: the newest edition lists none), with
    ``new_feature`` those too.

    >>> [f"R{b.number}" for b in supported_branches(datetime.date(2026, 11, 29))]
    ['R580', 'R595', 'R620']
    >>> [f"R{b.number}" for b in supported_branches(datetime.date(2026, 5, 1), new_feature=True)]
    ['R535', 'R580', 'R595', 'R610', 'R620']
    """
    return tuple(
        branch
        for branch in (BRANCHES[number] for number in sorted(BRANCHES))
        if supported_on(branch, on) and (new_feature or branch.designation != _NFB)
    )


def end_of_life_text(branch: Branch) -> str | None:
    """The month a branch's support ends, as NVIDIA's table writes it; None where it names none.

    >>> end_of_life_text(BRANCHES[535]), end_of_life_text(BRANCHES[550])
    ('June 2026', None)
    """
    if branch.end_of_life is None:
        return None
    year, month = branch.end_of_life
    return f"{_MONTHS[month - 1]} {year}"


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
