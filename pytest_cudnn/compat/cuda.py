"""CUDA toolkit facts: the minimum driver for each release, minor-version compatibility, target architectures.

Pure data and lookups; rows cite :mod:`pytest_cudnn.compat.sources`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

__all__ = [
    "ARCHITECTURES",
    "DROPPED_FROM",
    "MINOR_COMPATIBILITY",
    "TARGETS",
    "TOOLKIT_DRIVERS",
    "ArchitectureRange",
    "DriverFloor",
    "architecture_name",
    "driver_branch",
    "driver_tuple",
    "minimum_driver",
    "supported_capabilities",
    "target_toolkits",
]


# The driver branch from which NVIDIA's driver no longer drives Maxwell, Pascal or Volta GPUs: the matrix gives R580
# as their "Last Driver". Source: "driver-architecture-matrix".
DROPPED_FROM = 590


@dataclass(frozen=True)
class DriverFloor:
    cuda: str  # "12.4" (a toolkit release) or "12" (a major, under minor-version compatibility)
    linux: str
    windows: str | None  # None: NVIDIA publishes no Windows driver for it ("N/A" in Table 3 from CUDA 13.0)
    source: str

    @property
    def rule(self) -> str:
        """What the floor is, for a sentence: "the driver of the CUDA 11.0 GA toolkit" or "the minor-version
        compatibility floor of CUDA 12"."""
        if "." in self.cuda:
            return f"the driver of the CUDA {self.cuda} GA toolkit"
        return f"the minor-version compatibility floor of CUDA {self.cuda}"


# The driver of each toolkit's GA release (release notes, Table 3 "CUDA Toolkit and Corresponding Driver
# Versions"; Windows is "N/A" from CUDA 13.0). It always runs applications built with that toolkit; before CUDA 11
# it is also the minimum. Source: "cuda-release-notes".
_TOOLKITS = (
    ("13.2", "595.45.04", None),
    ("13.1", "590.44.01", None),
    ("13.0", "580.65.06", None),
    ("12.9", "575.51.03", "576.02"),
    ("12.8", "570.26", "570.65"),
    ("12.6", "560.28.03", "560.76"),
    ("12.5", "555.42.02", "555.85"),
    ("12.4", "550.54.14", "551.61"),
    ("12.3", "545.23.06", "545.84"),
    ("12.2", "535.54.03", "536.25"),
    ("12.1", "530.30.02", "531.14"),
    ("12.0", "525.60.13", "527.41"),
    ("11.8", "520.61.05", "520.06"),
    ("11.7", "515.43.04", "516.01"),
    ("11.6", "510.39.01", "511.23"),
    ("11.5", "495.29.05", "496.04"),
    ("11.4", "470.42.01", "471.11"),
    ("11.3", "465.19.01", "465.89"),
    ("11.2", "460.27.03", "460.82"),
    ("11.1", "455.23", "456.38"),
    ("11.0", "450.51.05", "451.48"),
    ("10.2", "440.33", "441.22"),
    ("10.1", "418.39", "418.96"),
    ("10.0", "410.48", "411.31"),
    ("9.2", "396.26", "397.44"),
    ("9.1", "390.46", "391.29"),
    ("9.0", "384.81", "385.54"),
    ("8.0", "367.48", "369.30"),
)
TOOLKIT_DRIVERS: tuple[DriverFloor, ...] = tuple(
    DriverFloor(cuda, linux, windows, "cuda-release-notes") for cuda, linux, windows in _TOOLKITS
)

# From CUDA 11, an application built with any minor release of a major also runs on a driver of that major at or
# above this floor; a newer driver is never too new. Table 2 gives only branches (">= 450", ">= 525", ">= 580"):
# CUDA 11's exact floor is in its footnote ("cuda-minor-compat"); CUDA 12's is the 12.0 GA driver of Table 3
# ("cuda-12-driver"); CUDA 13's Linux floor is the 13.0 GA driver and, Table 3 saying "N/A" for Windows, its Windows
# floor comes from NVIDIA's cuda-python ("cuda-13-driver").
MINOR_COMPATIBILITY: tuple[DriverFloor, ...] = (
    DriverFloor("11", "450.80.02", "452.39", "cuda-minor-compat"),
    DriverFloor("12", "525.60.13", "527.41", "cuda-12-driver"),
    DriverFloor("13", "580.65.06", "580.88", "cuda-13-driver"),
)


def driver_branch(version: str | None) -> int | None:
    """The branch of a driver version, its first number ("595.71.05" -> 595); None for text that names none.

    >>> driver_branch("595.71.05"), driver_branch("R595"), driver_branch(None)
    (595, None, None)
    """
    match = re.match(r"(\d{1,4})(?:\.|$)", version or "")
    return int(match.group(1)) if match else None


def driver_tuple(version: str) -> tuple[int, ...] | None:
    """'535.104.05' -> (535, 104, 5); None for anything that is not dotted digits."""
    if not re.fullmatch(r"\d{1,9}(\.\d{1,9})*", version.strip()):  # bounded: int() refuses over 4300 digits
        return None
    return tuple(int(part) for part in version.strip().split("."))


def _major_minor(cuda: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"(\d{1,9})(?:\.(\d{1,9}))?(?:\.\d{1,9})*", cuda.strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def minimum_driver(cuda: str, system: str) -> tuple[str, DriverFloor] | None:
    """The oldest driver that runs an application built with CUDA ``cuda`` ("12.5"), and the row that says so.

    Before CUDA 11: that toolkit's own GA driver. From CUDA 11: the lower of the toolkit's GA driver and the
    minor-version-compatibility floor of its major. CUDA 11.0 shipped before that floor (450.51.05 against
    450.80.02), so its own driver is the answer; a minor without a row (13.3) gets the floor of its major.

    >>> minimum_driver("11.0", "Linux")[0], minimum_driver("11.8", "Linux")[0], minimum_driver("13.1", "Windows")[0]
    ('450.51.05', '450.80.02', '580.88')
    """
    version = _major_minor(cuda)
    if version is None:
        return None
    major, minor = version
    # The major's floor first: on a tie (12.0 GA is the CUDA 12 floor) min() keeps the rule that covers the major.
    floors = [r for r in MINOR_COMPATIBILITY if r.cuda == str(major)] if major >= 11 else []
    floors += [r for r in TOOLKIT_DRIVERS if r.cuda == f"{major}.{minor}"]
    found = [(driver, row) for row in floors if (driver := row.windows if system == "Windows" else row.linux)]
    if not found:
        return None
    return min(found, key=lambda pair: driver_tuple(pair[0]) or ())


@dataclass(frozen=True)
class ArchitectureRange:
    since: str  # first toolkit with this range
    oldest: str  # oldest compute capability it can target
    newest: str  # newest compute capability it knows
    source: str


# Offline-compilation targets per toolkit (first and last CUDA release of each sm_XX). Source: "llvm-nvptx";
# CUDA 13 removed Maxwell, Pascal and Volta ("cuda-13-arch-removal").
ARCHITECTURES: tuple[ArchitectureRange, ...] = (
    ArchitectureRange("8.0", "2.0", "6.2", "llvm-nvptx"),
    ArchitectureRange("9.0", "3.0", "7.0", "llvm-nvptx"),
    ArchitectureRange("9.1", "3.0", "7.2", "llvm-nvptx"),
    ArchitectureRange("10.0", "3.0", "7.5", "llvm-nvptx"),
    ArchitectureRange("11.0", "3.5", "8.0", "llvm-nvptx"),
    ArchitectureRange("11.1", "3.5", "8.6", "llvm-nvptx"),
    ArchitectureRange("11.4", "3.5", "8.7", "llvm-nvptx"),
    ArchitectureRange("11.8", "3.5", "9.0", "llvm-nvptx"),
    ArchitectureRange("12.0", "5.0", "9.0", "llvm-nvptx"),
    ArchitectureRange("12.8", "5.0", "12.0", "llvm-nvptx"),
    ArchitectureRange("12.9", "5.0", "12.1", "llvm-nvptx"),
    ArchitectureRange("13.0", "7.5", "12.1", "cuda-13-arch-removal"),
)


# Each plain sm_XX target with the first and the last CUDA release that compiles for it (None: still current), as
# LLVM's NVPTX target list records them (its MIN_VER / MAX_VER; "NEW" is None here). Source: "llvm-nvptx". The
# ranges above cannot show a target that arrives inside one: sm_110 from 13.0, sm_107 only from 13.4.
_TARGETS = (
    ("sm_20", "7.0", "8.0"), ("sm_21", "7.0", "8.0"), ("sm_30", "7.0", "10.2"), ("sm_32", "7.0", "10.2"),
    ("sm_35", "7.0", "11.8"), ("sm_37", "7.0", "11.8"), ("sm_50", "7.0", None), ("sm_52", "7.0", None),
    ("sm_53", "7.0", None), ("sm_60", "8.0", None), ("sm_61", "8.0", None), ("sm_62", "8.0", None),
    ("sm_70", "9.0", None), ("sm_72", "9.1", None), ("sm_75", "10.0", None), ("sm_80", "11.0", None),
    ("sm_86", "11.1", None), ("sm_87", "11.4", None), ("sm_88", "13.0", None), ("sm_89", "11.8", None),
    ("sm_90", "11.8", None), ("sm_100", "12.8", None), ("sm_101", "12.8", "12.9"), ("sm_103", "12.9", None),
    ("sm_107", "13.4", None), ("sm_110", "13.0", None), ("sm_120", "12.8", None), ("sm_121", "12.9", None),
)  # fmt: skip
TARGETS: tuple[tuple[str, str, str | None, str], ...] = tuple((*row, "llvm-nvptx") for row in _TARGETS)


def target_toolkits(target: str) -> tuple[str, str | None] | None:
    """The first and last CUDA release that compiles for ``target`` ("sm_107"; an "a"/"f" suffix is the same
    target), the last None while current; None for a target not tabled.

    >>> target_toolkits("sm_107a"), target_toolkits("sm_101"), target_toolkits("sm_999")
    (('13.4', None), ('12.8', '12.9'), None)
    """
    plain = target[:-1] if target[-1:] in ("a", "f") else target
    return next(((first, last) for name, first, last, _ in TARGETS if name == plain), None)


def supported_capabilities(cuda: str) -> ArchitectureRange | None:
    """The compute-capability range of the newest row at or below toolkit ``cuda``."""
    version = _major_minor(cuda)
    if version is None:
        return None
    rows = [row for row in ARCHITECTURES if (_major_minor(row.since) or (0, 0)) <= version]
    return rows[-1] if rows else None


def last_targeting(capability: str) -> tuple[ArchitectureRange, ArchitectureRange] | None:
    """The last toolkit row that can still target ``capability`` ("7.0") and the row after it that cannot: where
    support for that GPU ends. None where the newest toolkit still targets it, or no toolkit ever did.

    >>> kept, dropped = last_targeting("7.0")
    >>> kept.since, dropped.since, dropped.oldest
    ('12.9', '13.0', '7.5')
    """
    cc = _major_minor(capability)
    if cc is None:
        return None
    for kept, dropped in pairwise(ARCHITECTURES):
        if (_major_minor(kept.oldest) or (99, 0)) <= cc < (_major_minor(dropped.oldest) or (0, 0)):
            return kept, dropped
    return None


# Architecture names by compute capability. Source: "cuda-gpus" (7.5 is Turing, 8.9 Ada Lovelace).
_ARCHITECTURE_NAMES = (
    ((12, 0), "Blackwell"),
    ((11, 0), "Blackwell"),
    ((10, 0), "Blackwell"),
    ((9, 0), "Hopper"),
    ((8, 9), "Ada Lovelace"),
    ((8, 0), "Ampere"),
    ((7, 5), "Turing"),
    ((7, 0), "Volta"),
    ((6, 0), "Pascal"),
    ((5, 0), "Maxwell"),
    ((3, 0), "Kepler"),
    ((2, 0), "Fermi"),
)


def architecture_name(capability: str) -> str | None:
    """'8.6' -> 'Ampere'."""
    version = _major_minor(capability)
    if version is None:
        return None
    return next((name for floor, name in _ARCHITECTURE_NAMES if version >= floor), None)
