"""PyTorch's published build facts: the CUDA variant of each release's PyPI wheels, its pins, its GPU targets, and
PyTorch's own cuDNN acceptance rule.

Pure data and lookups, nothing imports torch. Each row cites a key of :mod:`pytest_cudnn.compat.sources`. Only the
variant PyPI carries is tabled (cu117 for 2.0, cu121 for 2.1 to 2.4, ...): the other variants live on
download.pytorch.org, which was not read, so a local version such as ``2.5.1+cu118`` finds no row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from packaging.version import Version

__all__ = [
    "CUDA_TOOLKIT_CUDART",
    "CUDA_TOOLKIT_EXTRA",
    "INDEX_VARIANTS",
    "RELEASES",
    "SM_FLOOR_SINCE",
    "IndexVariant",
    "LastForGpu",
    "Pin",
    "TorchRelease",
    "accepts_cudnn",
    "architectures",
    "last_for_gpu",
    "release",
    "runtime_wheel",
    "variant_pins",
]


@dataclass(frozen=True)
class Pin:
    """One ``Requires-Dist`` line of a torch wheel, e.g. Pin("nvidia-cudnn-cu12", "==9.1.0.70")."""

    package: str  # as published; from 2.11 the runtime comes as "cuda-toolkit" with a "cudart" extra
    specifier: str

    @property
    def requirement(self) -> str:
        return f"{self.package}{self.specifier}"


@dataclass(frozen=True)
class TorchRelease:
    """The CUDA build of one torch release as its PyPI wheel publishes it."""

    version: str  # the public version, "2.5.1"
    local: str  # torch/version.py's local part, "cu124"
    cuda: str  # torch.version.cuda, "12.4"
    cudnn: Pin
    runtime: Pin
    compiled_cudnn: str | None  # macros.h CUDNN_VERSION (2.8 and later); earlier wheels carry no macros.h
    architectures: tuple[str, ...]  # the sm_XX of NVCC_FLAGS_EXTRA (TORCH_CUDA_ARCH_LIST as built)
    source: str


def _sms(*numbers: int) -> tuple[str, ...]:
    return tuple(f"sm_{n}" for n in numbers)


# NVCC_FLAGS_EXTRA in torch/include/ATen/cuda/CUDAConfig.h: every "-gencode;arch=compute_N,code=sm_N" pair, no PTX.
# The fatbins also hold a few arch-specific kernels outside this list (2.15: sm_90a, sm_100a, sm_103; measured in
# docs/build-facts.md), so this is the floor of what the build targets, not every cubin.
_SM_37_86 = _sms(37, 50, 60, 70, 75, 80, 86)
_SM_50_90 = _sms(50, 60, 70, 75, 80, 86, 90)
_SM_70_120 = _sms(70, 75, 80, 86, 90, 100, 120)
_SM_75_120 = _sms(75, 80, 86, 90, 100, 120)

_CU11 = ("nvidia-cudnn-cu11", "nvidia-cuda-runtime-cu11")
_CU12 = ("nvidia-cudnn-cu12", "nvidia-cuda-runtime-cu12")
# From 2.11 the CUDA 13 libraries come from one requirement, "cuda-toolkit[cublas,cudart,...]==13.0.2" (2.12.x
# leaves "cublas" out of the extras list).
_CU13 = ("nvidia-cudnn-cu13", "cuda-toolkit")

# (releases, local, cuda, (cudnn package, runtime package), cudnn pin, runtime pin, compiled cuDNN, architectures),
# oldest first. Source: "torch-pypi-wheels".
_ROWS: tuple[tuple[tuple[str, ...], str, str, tuple[str, str], str, str, str | None, tuple[str, ...]], ...] = (
    # 1.13 is the first release whose PyPI wheel pins nvidia wheels (compat-audit F5).
    (("1.13.0", "1.13.1"), "cu117", "11.7", _CU11, "==8.5.0.96", "==11.7.99", None, _SM_37_86),
    (("2.0.0", "2.0.1"), "cu117", "11.7", _CU11, "==8.5.0.96", "==11.7.99", None, _SM_37_86),
    (
        ("2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1"),
        "cu121",
        "12.1",
        _CU12,
        "==8.9.2.26",
        "==12.1.105",
        None,
        _SM_50_90,
    ),
    (("2.4.0", "2.4.1"), "cu121", "12.1", _CU12, "==9.1.0.70", "==12.1.105", None, _SM_50_90),
    (("2.5.0", "2.5.1", "2.6.0"), "cu124", "12.4", _CU12, "==9.1.0.70", "==12.4.127", None, _SM_50_90),
    (("2.7.0", "2.7.1"), "cu126", "12.6", _CU12, "==9.5.1.17", "==12.6.77", None, _SM_50_90),
    # 2.8 to 2.9 were compiled against cuDNN 9.8.0 but pin the 9.10.2.21 wheel (minor newer: accepted).
    (("2.8.0", "2.9.0", "2.9.1"), "cu128", "12.8", _CU12, "==9.10.2.21", "==12.8.90", "9.8.0", _SM_70_120),
    (("2.10.0",), "cu128", "12.8", _CU12, "==9.10.2.21", "==12.8.90", "9.10.2", _SM_70_120),
    (("2.11.0",), "cu130", "13.0", _CU13, "==9.19.0.56", "==13.0.2", "9.19.0", _SM_75_120),
    (("2.12.0", "2.12.1"), "cu130", "13.0", _CU13, "==9.20.0.48", "==13.0.2", "9.20.0", _SM_75_120),
    (("2.13.0",), "cu130", "13.0", _CU13, "==9.20.0.48", "==13.0.3", "9.20.0", _SM_75_120),
    (("2.14.0", "2.14.1"), "cu130", "13.0", _CU13, "==9.24.0.43", "==13.0.3", "9.24.0", _SM_75_120),
    (("2.15.0",), "cu132", "13.2", _CU13, "==9.26.0.51", "==13.2.2", "9.26.0", _SM_75_120),
)

RELEASES: tuple[TorchRelease, ...] = tuple(
    TorchRelease(
        version,
        local,
        cuda,
        Pin(packages[0], cudnn),
        Pin(packages[1], runtime),
        compiled,
        archs,
        "torch-pypi-wheels",
    )
    for versions, local, cuda, packages, cudnn, runtime, compiled, archs in _ROWS
    for version in versions
)

# The first release whose torch/backends/cudnn/__init__.py refuses cuDNN 9.11+ below compute capability 7.5.
# Source: "torch-cudnn-rule".
SM_FLOOR_SINCE = ("2.10.0", "torch-cudnn-rule")


def release(version: str) -> TorchRelease | None:
    """The tabled build of ``version`` ("2.5.1" or "2.5.1+cu124"). A local part must name the tabled variant:
    "2.5.1+cu118" is a real wheel, but not the one tabled, so it gets None.

    >>> release("2.5.1+cu124").cudnn.requirement
    'nvidia-cudnn-cu12==9.1.0.70'
    >>> release("2.5.1+cu118") is None, release("2.5.2") is None
    (True, True)
    """
    try:
        parsed = Version(version)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None
    if parsed.pre or parsed.post is not None or parsed.dev is not None or parsed.epoch:
        return None
    public = parsed.base_version
    row = next((row for row in RELEASES if Version(row.version) == Version(public)), None)
    if row is None or (parsed.local is not None and parsed.local != row.local):
        return None
    return row


def variant_pins(version: str) -> tuple[Pin, Pin] | None:
    """The (cuDNN, CUDA runtime) requirements the wheel of ``version`` publishes."""
    row = release(version)
    return (row.cudnn, row.runtime) if row else None


# From 2.11 the runtime pin is the cuda-toolkit meta-package; the cudart wheel it installs comes through its "cudart"
# extra: (cuda-toolkit version as torch pins it, the requirement of that extra). Source: "cuda-toolkit-extras".
CUDA_TOOLKIT_CUDART: tuple[tuple[str, str, str], ...] = (
    ("13.0.2", "nvidia-cuda-runtime==13.0.96.*", "cuda-toolkit-extras"),
    ("13.0.3", "nvidia-cuda-runtime==13.0.96.*", "cuda-toolkit-extras"),  # published as 13.0.3.0
    ("13.2.2", "nvidia-cuda-runtime==13.2.86.*", "cuda-toolkit-extras"),
    ("13.3.0", "nvidia-cuda-runtime==13.3.29.*", "cuda-toolkit-extras"),
    ("13.3.1", "nvidia-cuda-runtime==13.3.29.*", "cuda-toolkit-extras"),
    ("13.4.1.0", "nvidia-cuda-runtime==13.4.49.*", "cuda-toolkit-extras"),  # 13.4 GA is 13.4.1; there is no 13.4.0
    ("13.4.3", "nvidia-cuda-runtime==13.4.92.*", "cuda-toolkit-extras"),
    ("13.5.0", "nvidia-cuda-runtime==13.5.37.*", "cuda-toolkit-extras"),
)


# The cuda-toolkit extra that installs each NVIDIA wheel by its own name (the extra named after the component: the
# cublas extra also brings nvrtc, cusolver brings cublas and cusparse, which are not theirs). Source:
# "cuda-toolkit-13-extras".
CUDA_TOOLKIT_EXTRA: dict[str, str] = {
    "nvidia-cublas": "cublas",
    "nvidia-cuda-runtime": "cudart",
    "nvidia-cufft": "cufft",
    "nvidia-cufile": "cufile",
    "nvidia-cuda-cupti": "cupti",
    "nvidia-curand": "curand",
    "nvidia-cusolver": "cusolver",
    "nvidia-cusparse": "cusparse",
    "nvidia-nvjitlink": "nvjitlink",
    "nvidia-cuda-nvrtc": "nvrtc",
    "nvidia-nvtx": "nvtx",
}


def runtime_wheel(version: str) -> str | None:
    """The CUDA runtime wheel requirement the wheel of torch ``version`` installs: its own pin up to 2.10, the cudart
    extra of the pinned cuda-toolkit from 2.11 (compat-audit F4). None where not tabled.

    >>> runtime_wheel("2.5.1"), runtime_wheel("2.15.0")
    ('nvidia-cuda-runtime-cu12==12.4.127', 'nvidia-cuda-runtime==13.2.86.*')
    """
    row = release(version)
    if row is None:
        return None
    if row.runtime.package != "cuda-toolkit":
        return row.runtime.requirement
    pinned = row.runtime.specifier.removeprefix("==")
    return next((cudart for toolkit, cudart, _ in CUDA_TOOLKIT_CUDART if toolkit == pinned), None)


def architectures(version: str) -> tuple[str, ...] | None:
    """The GPU architectures the wheel of ``version`` compiles for ("sm_50", ...), None where not tabled."""
    row = release(version)
    return row.architectures if row else None


@dataclass(frozen=True)
class IndexVariant:
    """Builds of PyTorch on its own package index that keep older GPUs after PyPI's default dropped them: the
    releases ``first`` to ``last`` (by major.minor) of variant ``local`` at ``index``, built for ``architectures``."""

    first: str
    last: str
    local: str
    index: str
    architectures: tuple[str, ...]
    source: str


# The CUDA 12.6 variant keeps Maxwell, Pascal and Volta from 2.11, when PyPI's default moved to CUDA 13 (sm_75+),
# to 2.14; the 2.15 RFC proposes removing it, so no later release is tabled. Source: "torch-cu126-variant".
INDEX_VARIANTS: tuple[IndexVariant, ...] = (
    IndexVariant("2.11", "2.14", "cu126", "https://download.pytorch.org/whl/cu126", _SM_50_90, "torch-cu126-variant"),
)


@dataclass(frozen=True)
class LastForGpu:
    """The newest tabled release whose GPU code runs on a GPU (``last``, with ``target``, its sm_XX that does), and
    the tabled release after it, the first without (``dropped``). Source "torch-pypi-wheels"."""

    last: TorchRelease
    target: str
    dropped: TorchRelease

    @property
    def specifier(self) -> str:
        """pip's bound that keeps the releases up to ``last``: "<2.11" (the minor that dropped it; the release
        itself where a patch release did)."""
        last, dropped = Version(self.last.version).release, Version(self.dropped.version).release
        if last[:2] == dropped[:2]:
            return f"<{self.dropped.version}"
        return f"<{dropped[0]}.{dropped[1]}"


def last_for_gpu(capability: str, runs: Callable[[Sequence[str], str], str | None]) -> LastForGpu | None:
    """The newest tabled release whose architectures run on a GPU of ``capability`` ("7.0"), by ``runs``, the rule
    of where GPU code runs (:func:`pytest_cudnn.diagnosis.kernels.runs_on`: SASS of the same major at a lower or
    equal minor, PTX at a lower or equal capability; passed in, as the facts import no judgement). None where the
    newest tabled release runs there, or none does.

    >>> from pytest_cudnn.diagnosis.kernels import runs_on
    >>> v100 = last_for_gpu("7.0", runs_on)
    >>> v100.last.version, v100.target, v100.dropped.version, v100.specifier
    ('2.10.0', 'sm_70', '2.11.0', '<2.11')
    >>> [found.specifier if (found := last_for_gpu(cc, runs_on)) else None for cc in ("6.0", "6.1", "3.7", "3.5")]
    ['<2.8', '<2.8', '<2.1', None]
    >>> last_for_gpu("7.5", runs_on) is None  # the newest runs on a T4
    True
    """
    newer: TorchRelease | None = None
    for row in reversed(RELEASES):  # newest first
        if runs(row.architectures, capability) is not None:
            if newer is None:
                return None
            target = next((t for t in reversed(row.architectures) if runs((t,), capability) is not None), "")
            return LastForGpu(row, target, newer)
        newer = row
    return None


_VERSION = re.compile(r"(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?")


def accepts_cudnn(
    compiled: str,
    loaded: str,
    capability: tuple[int, int] | None = None,
    *,
    torch_version: str | None = None,
    skip_check: bool = False,
) -> bool:
    """Whether PyTorch's ``torch.backends.cudnn._init`` accepts cuDNN ``loaded`` ("9.10.2") in a build compiled
    against ``compiled`` ("9.8.0") on devices whose lowest compute capability is ``capability`` (None: no device
    seen). Source "torch-cudnn-rule".

    Same major; below cuDNN 7 the same minor; otherwise loaded minor at least the compiled minor. From torch 2.10
    (``torch_version``; None means a current torch) a loaded cuDNN 9.11 or newer is refused below compute
    capability 7.5. ``skip_check`` is PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1: when the versions disagree,
    ``_init`` returns before the compute-capability check, so both are skipped; when they agree it changes nothing.

    >>> accepts_cudnn("9.8.0", "9.10.2"), accepts_cudnn("9.8.0", "9.1.0"), accepts_cudnn("9.1.0", "8.9.7")
    (True, False, False)
    >>> accepts_cudnn("9.10.2", "9.11.0", (7, 0)), accepts_cudnn("9.10.2", "9.11.0", (7, 0), torch_version="2.9.1")
    (False, True)
    >>> accepts_cudnn("9.12.0", "9.11.0", (7, 0), skip_check=True)  # older minor: both checks skipped
    True
    >>> accepts_cudnn("9.10.2", "9.11.0", (7, 0), skip_check=True)  # versions agree: the SM check still runs
    False
    """
    want = _VERSION.fullmatch(compiled)
    have = _VERSION.fullmatch(loaded)
    if want is None or have is None:
        return False  # not versions this rule can compare
    want_major, want_minor = int(want[1]), int(want[2])
    have_major, have_minor = int(have[1]), int(have[2])
    if have_major != want_major:
        return skip_check
    if have_minor < want_minor if have_major >= 7 else have_minor != want_minor:
        return skip_check
    if capability is None or (have_major, have_minor) < (9, 11):
        return True
    if torch_version is not None:
        try:
            if Version(torch_version).release < Version(SM_FLOOR_SINCE[0]).release:
                return True
        except ValueError:  # InvalidVersion: judge as a current torch
            pass
    return capability >= (7, 5)
