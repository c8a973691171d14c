"""cuDNN facts: the oldest GPU each release line supports, and known-bad combinations.

Pure data and lookups; rows cite :mod:`pytest_cudnn.compat.sources`.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from .._base.versions import specifier_set

__all__ = [
    "GPU_FLOORS",
    "KNOWN_BAD",
    "UNKNOWN_FLOORS",
    "GpuFloor",
    "KnownBad",
    "UnknownFloor",
    "known_bad",
    "last_supporting",
    "oldest_capability",
    "support_floor",
]


@dataclass(frozen=True)
class GpuFloor:
    cudnn: str  # specifier over the cuDNN version
    cuda_major_below: int | None  # the row applies to builds for CUDA majors below this (None: all builds)
    oldest: str  # oldest supported compute capability
    source: str


@dataclass(frozen=True)
class UnknownFloor:
    """A range of cuDNN releases for which NVIDIA published no oldest supported GPU that we could find."""

    cudnn: str  # specifier over the cuDNN version
    reason: str
    source: str


# Ordered: the first matching row applies.
# - before 7: no support matrix found; see UNKNOWN_FLOORS (compat-audit W1).
# - 7.x: Kepler (3.x) and later ("cudnn-matrix-7").
# - 8.0 to 8.5: builds for CUDA 10.2 'SM 3.0 and later', builds for CUDA 11 'SM 3.5 and later' ("cudnn-matrix-8").
# - 8.6, 8.7: no support matrix found; see UNKNOWN_FLOORS.
# - 8.8: the release's own header sets the minimum to SM 5.0 ("cudnn-88-header"), as 8.9's does.
# - 8.9 and 9.0 to 9.10: 5.0 and later ("cudnn-matrix-89", "cudnn-matrix-9").
# - 9.11 and later: 7.5 and later ("cudnn-911-floor"; the 9.11 notes themselves were not read, see the source).
GPU_FLOORS: tuple[GpuFloor, ...] = (
    GpuFloor(">=7,<8", None, "3.0", "cudnn-matrix-7"),
    GpuFloor(">=8,<8.6", 11, "3.0", "cudnn-matrix-8"),
    GpuFloor(">=8,<8.6", None, "3.5", "cudnn-matrix-8"),
    GpuFloor(">=8.8,<8.9", None, "5.0", "cudnn-88-header"),
    GpuFloor(">=8.9,<9", None, "5.0", "cudnn-matrix-89"),
    GpuFloor(">=9,<9.11", None, "5.0", "cudnn-matrix-9"),
    GpuFloor(">=9.11", None, "7.5", "cudnn-911-floor"),
)

UNKNOWN_FLOORS: tuple[UnknownFloor, ...] = (
    UnknownFloor(
        "<7",
        "no NVIDIA support matrix for cuDNN 5.x or 6.x was found (the archived matrices start at 7.x)",
        "cudnn-before-7-unknown",
    ),
    UnknownFloor(
        ">=8.6,<8.8",
        "NVIDIA's support matrices for cuDNN 8.6 and 8.7 were not found, and their headers set no minimum; "
        "8.5 supported SM 3.5 (CUDA 11 builds) and 8.8 sets SM 5.0",
        "cudnn-86-87-unknown",
    ),
)


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None


def support_floor(cudnn: str, cuda_major: int | None) -> GpuFloor | UnknownFloor | None:
    """What NVIDIA says is the oldest GPU cuDNN ``cudnn`` supports: a floor, an :class:`UnknownFloor` where it
    published none, or None for a version outside the tables."""
    version = _version(cudnn)
    if version is None:
        return None
    unknown = next((row for row in UNKNOWN_FLOORS if version in specifier_set(row.cudnn)), None)
    if unknown is not None:
        return unknown
    for row in GPU_FLOORS:
        if version not in specifier_set(row.cudnn):
            continue
        if row.cuda_major_below is not None and (cuda_major is None or cuda_major >= row.cuda_major_below):
            continue
        return row
    return None


def oldest_capability(cudnn: str, cuda_major: int | None) -> GpuFloor | None:
    """The oldest compute capability cuDNN ``cudnn`` ("8.2.1") supports, for a build made for ``cuda_major``.

    None where nothing is known, including the releases NVIDIA published no floor for (8.6, 8.7): ask
    :func:`support_floor` to tell those apart.
    """
    row = support_floor(cudnn, cuda_major)
    return row if isinstance(row, GpuFloor) else None


@dataclass(frozen=True)
class SupportEnd:
    """Where cuDNN's support for a GPU ends: every release from ``below`` on (within the rows for that CUDA
    major) no longer supports it, so a requirement ``<below`` keeps a release that does."""

    below: str  # "9.11"
    oldest_after: str  # the oldest compute capability the release ``below`` supports
    source: str


def last_supporting(capability: str, cuda_major: int | None) -> SupportEnd | None:
    """The first cuDNN release from which no later release (of the rows for a build made for ``cuda_major``)
    supports compute capability ``capability``; None where the newest release supports it, or where no release
    in the tables ever did (no requirement keeps one).

    >>> end = last_supporting("7.0", 12)
    >>> end.below, end.oldest_after
    ('9.11', '7.5')
    >>> last_supporting("8.0", 12) is None
    True
    """
    cc = _version(capability)
    if cc is None:
        return None
    end: GpuFloor | None = None
    supported_before = False
    taken: set[str] = set()  # the first matching row applies: a later row of the same range is not this build's
    for row in GPU_FLOORS:
        if row.cuda_major_below is not None and (cuda_major is None or cuda_major >= row.cuda_major_below):
            continue
        if row.cudnn in taken:
            continue
        taken.add(row.cudnn)
        if cc < Version(row.oldest):
            end = end or row
        else:
            end, supported_before = None, True
    if end is None or not supported_before:
        return None
    lower = _bound(end.cudnn, ">=")
    for unknown in UNKNOWN_FLOORS:  # releases just before the end whose support was never published: not kept
        upper, start = _bound(unknown.cudnn, "<"), _bound(unknown.cudnn, ">=")
        if lower and upper and start and Version(upper) == Version(lower):
            lower = start
    return SupportEnd(lower, end.oldest, end.source) if lower else None


def _bound(spec: str, operator: str) -> str | None:
    return next((clause.version for clause in specifier_set(spec) if clause.operator == operator), None)


@dataclass(frozen=True)
class KnownBad:
    code: str
    cudnn: str  # specifier over the cuDNN version
    capability_below: str | None  # applies to GPUs older than this compute capability
    capability_at_least: str | None  # and at least this one
    cuda: str | None  # applies only to builds for this CUDA runtime (major.minor)
    summary: str
    remedy: str
    source: str


# NVIDIA's release notes only. That cuDNN 9.11 and later fail on GPUs older than compute capability 7.5 is the
# floor above, not a known-bad row: nothing more specific (convolutions, Ampere) was published by NVIDIA.
KNOWN_BAD: tuple[KnownBad, ...] = (
    KnownBad(
        "cudnn-pascal-fused-conv",
        ">=8.9.0,<8.9.2",
        "7.0",
        "6.0",
        None,
        "cuDNN 8.9.0 and 8.9.1 compute wrong results for fused convolution+bias+ReLU on Pascal GPUs",
        "upgrade cuDNN to 8.9.2 or later",
        "cudnn-892-notes",
    ),
    KnownBad(
        "cudnn-maxwell-fused-conv",
        ">=8.9.0,<8.9.3",
        "6.0",
        "5.0",
        None,
        "cuDNN 8.9.0 to 8.9.2 compute wrong results for a fused convolution engine on Maxwell GPUs",
        "upgrade cuDNN to 8.9.3 or later",
        "cudnn-892-notes",
    ),
    KnownBad(
        "cudnn-765-cuda102-nondeterminism",
        "==7.6.5",
        None,
        None,
        "10.2",
        "cuDNN 7.6.5 built for CUDA 10.2 gives nondeterministic RNN and multi-head attention results",
        "set CUBLAS_WORKSPACE_CONFIG=:16:8 (or :4096:2) where determinism matters",
        "cudnn-765-notes",
    ),
)


def fixed_in(row: KnownBad) -> str | None:
    """The first release past a known-bad range that ends ("8.9.2" for ">=8.9.0,<8.9.2"); None for one that
    does not (an exact release, whose remedy is no upgrade).

    >>> fixed_in(KNOWN_BAD[0]), fixed_in(KNOWN_BAD[-1])
    ('8.9.2', None)
    """
    return _bound(row.cudnn, "<")


def known_bad(cudnn: str, capability: str | None, cudart: str | None) -> list[KnownBad]:
    """Known-bad rows that apply to cuDNN ``cudnn`` built for CUDA ``cudart`` on a GPU of ``capability``."""
    version = _version(cudnn)
    if version is None:
        return []
    hits = []
    for row in KNOWN_BAD:
        if version not in specifier_set(row.cudnn):
            continue
        if row.cuda is not None and cudart != row.cuda:
            continue
        if row.capability_below is not None or row.capability_at_least is not None:
            cc = _version(capability) if capability else None
            if cc is None:
                continue
            if row.capability_below is not None and not cc < Version(row.capability_below):
                continue
            if row.capability_at_least is not None and not cc >= Version(row.capability_at_least):
                continue
        hits.append(row)
    return hits


# The first release of each cuDNN wheel on PyPI ("cudnn-wheel-first-releases"): a requirement below it has nothing
# to install.
FIRST_WHEEL_RELEASE = {"nvidia-cudnn-cu13": "9.12.0.46", "nvidia-cudnn-cu12": "8.8.0.121"}


def below_first_release(wheel: str, below: str) -> str | None:
    """The wheel's first release when ``<below`` leaves none of its releases; None when one remains (or the first
    release is not in the table).

    >>> below_first_release("nvidia-cudnn-cu13", "9.11"), below_first_release("nvidia-cudnn-cu12", "9.11")
    ('9.12.0.46', None)
    """
    first = FIRST_WHEEL_RELEASE.get(wheel)
    if first is None or _version(below) is None:
        return None
    return first if Version(first) >= Version(below) else None
