"""TensorFlow's published build facts: tested configurations, ``and-cuda`` wheel pins, loading rules.

Pure data and lookups. The rows are copied verbatim from the sources named in each table (see
:mod:`pytest_cudnn.compat.sources`); versions keep the documents' own spelling ("10" and "10.0" both occur).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import Version

from .._base.versions import specifier_set

__all__ = [
    "AND_CUDA",
    "AND_CUDA_EXTRAS",
    "TESTED_BUILDS",
    "WINDOWS_LAST_GPU_RELEASE",
    "AndCudaExtra",
    "AndCudaRemedy",
    "Pin",
    "TestedBuild",
    "WheelPins",
    "accepts_cudnn",
    "and_cuda_extra",
    "and_cuda_pins",
    "and_cuda_remedy",
    "in_pins",
    "library_in_pins",
    "library_names",
    "pin_for",
    "tested_build",
]


@dataclass(frozen=True)
class TestedBuild:
    """One row of a 'Tested build configurations' table."""

    tensorflow: str  # the row's release, e.g. "2.3.0"
    system: str  # "Linux" or "Windows"
    python: str  # as written, e.g. "3.5-3.8"
    cudnn: str  # as written, e.g. "7.6"
    cuda: str  # as written, e.g. "10.1"
    source: str


# (release, Python, cuDNN, CUDA), newest first. Source: "tf-tested-linux".
_LINUX = (
    ("2.21.0", "3.10-3.13", "9.3", "12.5"),
    ("2.20.0", "3.9-3.13", "9.3", "12.5"),
    ("2.19.0", "3.9-3.12", "9.3", "12.5"),
    ("2.18.0", "3.9-3.12", "9.3", "12.5"),
    ("2.17.0", "3.9-3.12", "8.9", "12.3"),
    ("2.16.1", "3.9-3.12", "8.9", "12.3"),
    ("2.15.0", "3.9-3.11", "8.9", "12.2"),
    ("2.14.0", "3.9-3.11", "8.7", "11.8"),
    ("2.13.0", "3.8-3.11", "8.6", "11.8"),
    ("2.12.0", "3.8-3.11", "8.6", "11.8"),
    ("2.11.0", "3.7-3.10", "8.1", "11.2"),
    ("2.10.0", "3.7-3.10", "8.1", "11.2"),
    ("2.9.0", "3.7-3.10", "8.1", "11.2"),
    ("2.8.0", "3.7-3.10", "8.1", "11.2"),
    ("2.7.0", "3.7-3.9", "8.1", "11.2"),
    ("2.6.0", "3.6-3.9", "8.1", "11.2"),
    ("2.5.0", "3.6-3.9", "8.1", "11.2"),
    ("2.4.0", "3.6-3.8", "8.0", "11.0"),
    ("2.3.0", "3.5-3.8", "7.6", "10.1"),
    ("2.2.0", "3.5-3.8", "7.6", "10.1"),
    ("2.1.0", "2.7, 3.5-3.7", "7.6", "10.1"),
    ("2.0.0", "2.7, 3.3-3.7", "7.4", "10.0"),
    ("1.15.0", "2.7, 3.3-3.7", "7.4", "10.0"),
    ("1.14.0", "2.7, 3.3-3.7", "7.4", "10.0"),
    ("1.13.1", "2.7, 3.3-3.7", "7.4", "10.0"),
    ("1.12.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.11.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.10.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.9.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.8.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.7.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.6.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.5.0", "2.7, 3.3-3.6", "7", "9"),
    ("1.4.0", "2.7, 3.3-3.6", "6", "8"),
    ("1.3.0", "2.7, 3.3-3.6", "6", "8"),
    ("1.2.0", "2.7, 3.3-3.6", "5.1", "8"),
    ("1.1.0", "2.7, 3.3-3.6", "5.1", "8"),
    ("1.0.0", "2.7, 3.3-3.6", "5.1", "8"),
)

# Native Windows GPU builds end at 2.10. Source: "tf-tested-windows".
_WINDOWS = (
    ("2.10.0", "3.7-3.10", "8.1", "11.2"),
    ("2.9.0", "3.7-3.10", "8.1", "11.2"),
    ("2.8.0", "3.7-3.10", "8.1", "11.2"),
    ("2.7.0", "3.7-3.9", "8.1", "11.2"),
    ("2.6.0", "3.6-3.9", "8.1", "11.2"),
    ("2.5.0", "3.6-3.9", "8.1", "11.2"),
    ("2.4.0", "3.6-3.8", "8.0", "11.0"),
    ("2.3.0", "3.5-3.8", "7.6", "10.1"),
    ("2.2.0", "3.5-3.8", "7.6", "10.1"),
    ("2.1.0", "3.5-3.7", "7.6", "10.1"),
    ("2.0.0", "3.5-3.7", "7.4", "10"),
    ("1.15.0", "3.5-3.7", "7.4", "10"),
    ("1.14.0", "3.5-3.7", "7.4", "10"),
    ("1.13.0", "3.5-3.7", "7.4", "10"),
    ("1.12.0", "3.5-3.6", "7.2", "9.0"),
    ("1.11.0", "3.5-3.6", "7", "9"),
    ("1.10.0", "3.5-3.6", "7", "9"),
    ("1.9.0", "3.5-3.6", "7", "9"),
    ("1.8.0", "3.5-3.6", "7", "9"),
    ("1.7.0", "3.5-3.6", "7", "9"),
    ("1.6.0", "3.5-3.6", "7", "9"),
    ("1.5.0", "3.5-3.6", "7", "9"),
    ("1.4.0", "3.5-3.6", "6", "8"),
    ("1.3.0", "3.5-3.6", "6", "8"),
    ("1.2.0", "3.5-3.6", "5.1", "8"),
    ("1.1.0", "3.5", "5.1", "8"),
    ("1.0.0", "3.5", "5.1", "8"),
)

TESTED_BUILDS: tuple[TestedBuild, ...] = tuple(
    TestedBuild(release, "Linux", python, cudnn, cuda, "tf-tested-linux") for release, python, cudnn, cuda in _LINUX
) + tuple(
    TestedBuild(release, "Windows", python, cudnn, cuda, "tf-tested-windows")
    for release, python, cudnn, cuda in _WINDOWS
)

WINDOWS_LAST_GPU_RELEASE = ("2.10", "tf-windows-gpu-end")


@dataclass(frozen=True)
class WheelPins:
    """What ``pip install tensorflow[and-cuda]==<release>`` requires for cuDNN and the CUDA runtime."""

    tensorflow: str  # release series, e.g. "2.18"
    cudnn_package: str
    cudnn: str  # the requirement's specifier as published
    runtime_package: str
    runtime: str
    source: str


# Read from each release's wheel METADATA. 2.20 and later publish ranges: the docs' 9.3 / 12.5 is a floor there,
# not the only tested pair. Source: "tf-and-cuda".
AND_CUDA: tuple[WheelPins, ...] = (
    WheelPins("2.14", "nvidia-cudnn-cu11", "==8.7.0.84", "nvidia-cuda-runtime-cu11", "==11.8.89", "tf-and-cuda"),
    WheelPins("2.15", "nvidia-cudnn-cu12", "==8.9.4.25", "nvidia-cuda-runtime-cu12", "==12.2.140", "tf-and-cuda"),
    WheelPins("2.16", "nvidia-cudnn-cu12", "==8.9.7.29", "nvidia-cuda-runtime-cu12", "==12.3.101", "tf-and-cuda"),
    WheelPins("2.17", "nvidia-cudnn-cu12", "==8.9.7.29", "nvidia-cuda-runtime-cu12", "==12.3.101", "tf-and-cuda"),
    WheelPins("2.18", "nvidia-cudnn-cu12", "==9.3.0.75", "nvidia-cuda-runtime-cu12", "==12.5.82", "tf-and-cuda"),
    WheelPins("2.19", "nvidia-cudnn-cu12", "==9.3.0.75", "nvidia-cuda-runtime-cu12", "==12.5.82", "tf-and-cuda"),
    WheelPins(
        "2.20", "nvidia-cudnn-cu12", ">=9.3.0.75,<10.0", "nvidia-cuda-runtime-cu12", ">=12.5.82,<13.0", "tf-and-cuda"
    ),
    WheelPins(
        "2.21", "nvidia-cudnn-cu12", ">=9.3.0.75,<10.0", "nvidia-cuda-runtime-cu12", ">=12.5.82,<13.0", "tf-and-cuda"
    ),
)


@dataclass(frozen=True)
class Pin:
    """One ``Requires-Dist: ...; extra == 'and-cuda'`` line of a tensorflow wheel."""

    component: str  # what it provides: "cudnn", "cudart", "cublas", "nvrtc", ..., "tensorrt"
    package: str  # as published, e.g. "nvidia-cudnn-cu12"
    specifier: str  # e.g. "==9.3.0.75"

    @property
    def requirement(self) -> str:
        return f"{self.package}{self.specifier}"


@dataclass(frozen=True)
class AndCudaExtra:
    """What ``tensorflow[and-cuda]`` requires for some releases, and the Pythons it installs on (Linux x86_64)."""

    releases: tuple[str, ...]  # the exact tensorflow versions, e.g. ("2.14.0", "2.14.1")
    pins: tuple[Pin, ...]
    pythons: tuple[str, ...]  # Pythons with a tensorflow wheel for these releases
    extra_pythons: tuple[str, ...]  # Pythons on which ``pip install 'tensorflow[and-cuda]==X'`` resolves
    source: str


# (component, package suffix or name) in METADATA order, then the versions per release family.
_CU11 = ("cudart", "cublas", "cufft", "cudnn", "curand", "cusolver", "cusparse", "nccl", "cupti", "nvcc")
_CU12 = ("cublas", "cupti", "nvcc", "nvrtc", "cudart", "cudnn", "cufft", "curand", "cusolver", "cusparse", "nccl")
_PACKAGES = {
    "cudart": "nvidia-cuda-runtime",
    "cublas": "nvidia-cublas",
    "cufft": "nvidia-cufft",
    "cudnn": "nvidia-cudnn",
    "curand": "nvidia-curand",
    "cusolver": "nvidia-cusolver",
    "cusparse": "nvidia-cusparse",
    "nccl": "nvidia-nccl",
    "cupti": "nvidia-cuda-cupti",
    "nvcc": "nvidia-cuda-nvcc",
    "nvrtc": "nvidia-cuda-nvrtc",
    "nvjitlink": "nvidia-nvjitlink",
}


def _pins(cuda: str, components: tuple[str, ...], specifiers: str, *others: tuple[str, str, str]) -> tuple[Pin, ...]:
    nvidia = tuple(
        Pin(component, f"{_PACKAGES[component]}-{cuda}", spec)
        for component, spec in zip(components, specifiers.split(), strict=True)
    )
    return nvidia + tuple(Pin(*other) for other in others)


_PINS_214 = _pins(
    "cu11",
    _CU11,
    "==11.8.89 ==11.11.3.6 ==10.9.0.58 ==8.7.0.84 ==10.3.0.86 ==11.4.1.48 ==11.7.5.86 ==2.16.5 ==11.8.87 ==11.8.89",
    ("tensorrt", "tensorrt", "==8.5.3.1"),
)
_SPECS_215 = "==12.2.5.6 ==12.2.142 ==12.2.140 ==12.2.140 ==12.2.140 ==8.9.4.25 ==11.0.8.103 ==10.3.3.141 "
_SPECS_215 += "==11.5.2.141 ==12.1.2.141 ==2.16.5 ==12.2.140"
_SPECS_216 = "==12.3.4.1 ==12.3.101 ==12.3.107 ==12.3.107 ==12.3.101 ==8.9.7.29 ==11.0.12.1 ==10.3.4.107 "
_SPECS_216 += "==11.5.4.101 ==12.2.0.103 ==2.19.3 ==12.3.101"
_SPECS_218 = "==12.5.3.2 ==12.5.82 ==12.5.82 ==12.5.82 ==12.5.82 ==9.3.0.75 ==11.2.3.61 ==10.3.6.82 ==11.6.3.83 "
_SPECS_218 += "==12.5.1.3 {nccl} ==12.5.82"
_SPECS_220 = ">=12.5.3.2,<13.0 >=12.5.82,<13.0 >=12.5.82,<13.0 >=12.5.82,<13.0 >=12.5.82,<13.0 >=9.3.0.75,<10.0 "
_SPECS_220 += ">=11.2.3.61,<12.0 >=10.3.6.82,<11.0 >=11.6.3.83,<12.0 >=12.5.1.3,<13.0 {nccl} >=12.5.82,<13.0"
_CU12_JIT = (*_CU12, "nvjitlink")
_PY39_311 = ("3.9", "3.10", "3.11")
_PY39_312 = ("3.9", "3.10", "3.11", "3.12")

# Read from each release's wheel METADATA ("tf-and-cuda"); the Pythons from resolving the extra with pip against PyPI
# for CPython 3.9 to 3.14 ("tf-and-cuda-pythons"). 2.14's tensorrt==8.5.3.1 has no wheel for 3.11; 2.15.0's
# tensorrt==8.6.1.post1 and tensorrt-libs==8.6.1 have none at all (2.15.0.post1 dropped them). From 2.20 the pins
# are ranges (METADATA writes "<10.0,>=9.3.0.75"; the same set is kept here lower bound first).
AND_CUDA_EXTRAS: tuple[AndCudaExtra, ...] = (
    AndCudaExtra(("2.14.0", "2.14.1"), _PINS_214, _PY39_311, ("3.9", "3.10"), "tf-and-cuda-pythons"),
    AndCudaExtra(
        ("2.15.0",),
        _pins(
            "cu12",
            _CU12_JIT,
            _SPECS_215,
            ("tensorrt", "tensorrt", "==8.6.1.post1"),
            ("tensorrt", "tensorrt-bindings", "==8.6.1"),
            ("tensorrt", "tensorrt-libs", "==8.6.1"),
        ),
        _PY39_311,
        (),
        "tf-and-cuda-pythons",
    ),
    AndCudaExtra(
        ("2.15.0.post1", "2.15.1"), _pins("cu12", _CU12_JIT, _SPECS_215), _PY39_311, _PY39_311, "tf-and-cuda-pythons"
    ),
    AndCudaExtra(
        ("2.16.1", "2.16.2", "2.17.0", "2.17.1"),
        _pins("cu12", _CU12_JIT, _SPECS_216),
        _PY39_312,
        _PY39_312,
        "tf-and-cuda-pythons",
    ),
    AndCudaExtra(
        ("2.18.0", "2.18.1"),
        _pins("cu12", _CU12_JIT, _SPECS_218.format(nccl="==2.21.5")),
        _PY39_312,
        _PY39_312,
        "tf-and-cuda-pythons",
    ),
    AndCudaExtra(
        ("2.19.0", "2.19.1"),
        _pins("cu12", _CU12_JIT, _SPECS_218.format(nccl="==2.23.4")),
        _PY39_312,
        _PY39_312,
        "tf-and-cuda-pythons",
    ),
    AndCudaExtra(
        ("2.20.0",),
        _pins("cu12", _CU12_JIT, _SPECS_220.format(nccl=">=2.25.1,<3.0")),
        (*_PY39_312, "3.13"),
        (*_PY39_312, "3.13"),
        "tf-and-cuda-pythons",
    ),
    AndCudaExtra(
        ("2.21.0",),
        _pins("cu12", _CU12_JIT, _SPECS_220.format(nccl=">=2.27.7,<3.0")),
        ("3.10", "3.11", "3.12", "3.13"),
        ("3.10", "3.11", "3.12", "3.13"),
        "tf-and-cuda-pythons",
    ),
)


@dataclass(frozen=True)
class AndCudaRemedy:
    """A ``pip install`` line that installs on the given Python, and what it leaves out of the extra."""

    command: str
    uses_extra: bool  # False: the extra does not install there, so its nvidia pins are named one by one
    left_out: tuple[str, ...]  # requirements of the extra the command skips
    source: str


def _series(version: str) -> tuple[int, int] | None:
    try:
        release = Version(version).release
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None
    return (release[0], release[1] if len(release) > 1 else 0)


def tested_build(tensorflow_version: str, system: str) -> TestedBuild | None:
    """The tested configuration of the release series ``tensorflow_version`` belongs to (2.3.1 -> 2.3.0)."""
    series = _series(tensorflow_version)
    if series is None:
        return None
    return next((row for row in TESTED_BUILDS if row.system == system and _series(row.tensorflow) == series), None)


def and_cuda_pins(tensorflow_version: str) -> WheelPins | None:
    series = _series(tensorflow_version)
    return next((pins for pins in AND_CUDA if _series(pins.tensorflow) == series), None)


def and_cuda_extra(tensorflow_version: str) -> AndCudaExtra | None:
    """The extra of release ``tensorflow_version``; a release not in the table gets its series' row only where
    every release of the series published the same extra."""
    exact = next((row for row in AND_CUDA_EXTRAS if tensorflow_version in row.releases), None)
    if exact is not None:
        return exact
    series = _series(tensorflow_version)
    rows = [row for row in AND_CUDA_EXTRAS if any(_series(r) == series for r in row.releases)]
    return rows[0] if len(rows) == 1 else None


def pin_for(tensorflow_version: str, component: str) -> Pin | None:
    """The package and requirement ``tensorflow[and-cuda]`` pins for ``component`` ("cudnn", "cudart", "cublas",
    "nvrtc", ...), e.g. Pin("cudnn", "nvidia-cudnn-cu11", "==8.7.0.84") for 2.14.1."""
    row = and_cuda_extra(tensorflow_version)
    return next((pin for pin in row.pins if pin.component == component), None) if row else None


def and_cuda_remedy(tensorflow_version: str, python_version: str) -> AndCudaRemedy | None:
    """The ``pip install`` line that gives TensorFlow ``tensorflow_version`` its CUDA wheels on Python
    ``python_version`` ("3.11.4"): the extra where it installs there, else its nvidia pins one by one (leaving out
    what has no installable distribution, tensorrt). None where TensorFlow has no wheel for that Python or the
    release is not one of the table's.

    >>> and_cuda_remedy("2.14.1", "3.10").command
    "pip install 'tensorflow[and-cuda]==2.14.1'"
    >>> remedy = and_cuda_remedy("2.14.1", "3.11.9")
    >>> remedy.command.split()[:3], remedy.left_out
    (['pip', 'install', "'nvidia-cuda-runtime-cu11==11.8.89'"], ('tensorrt==8.5.3.1',))
    """
    # Only a published release: what installs was resolved for those, and only they can be installed.
    row = next((row for row in AND_CUDA_EXTRAS if tensorflow_version in row.releases), None)
    try:
        release = Version(python_version).release
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None
    python = ".".join(str(part) for part in release[:2])
    if row is None or len(release) < 2:
        return None
    if python in row.extra_pythons:
        return AndCudaRemedy(f"pip install 'tensorflow[and-cuda]=={tensorflow_version}'", True, (), row.source)
    if python not in row.pythons:
        return None
    wheels = [pin for pin in row.pins if pin.package.startswith("nvidia-")]
    command = "pip install " + " ".join(f"'{pin.requirement}'" for pin in wheels)
    left_out = tuple(pin.requirement for pin in row.pins if pin not in wheels)
    return AndCudaRemedy(command, False, left_out, row.source)


def library_names(system: str, cuda_version: str | None, cudnn_version: str | None) -> tuple[str | None, str | None]:
    """The CUDA runtime and cuDNN library names TensorFlow's loader asks for (source "tf-dso-names").

    ``libcudart.so.<TF_CUDART_VERSION>`` and ``libcudnn.so.<major>``; on Windows ``cudart64_<suffix>.dll`` and
    ``cudnn64_<major>.dll``. TF_CUDART_VERSION is the runtime's soname suffix: major.minor below CUDA 11 (10.1),
    "11.0" for every 11.x, the major alone from 12. A major-only CUDA below 11 ('10', as TF 1.15, 2.0 and 2.2
    recorded on Linux) does not say which minor, so no name is given.
    """
    cudart = cudnn = None
    parts = cuda_version.split(".") if cuda_version else []
    major = int(parts[0]) if parts and re.fullmatch(r"\d{1,9}", parts[0]) else 0
    if major and (major >= 11 or len(parts) > 1):
        minor = parts[1] if len(parts) > 1 else "0"
        if system == "Windows":
            if major < 11:
                cudart = f"cudart64_{major}{minor}.dll"
            else:
                cudart = "cudart64_110.dll" if major == 11 else f"cudart64_{major}.dll"
        elif major < 11:
            cudart = f"libcudart.so.{major}.{minor}"
        else:
            cudart = "libcudart.so.11.0" if major == 11 else f"libcudart.so.{major}"
    if cudnn_version:
        major_cudnn = cudnn_version.split(".")[0]
        cudnn = f"cudnn64_{major_cudnn}.dll" if system == "Windows" else f"libcudnn.so.{major_cudnn}"
    return cudart, cudnn


def accepts_cudnn(compiled: str, loaded: str) -> bool:
    """TensorFlow's run-time cuDNN check (source "tf-cudnn-rule"): same major, loaded minor not older than the
    compiled one; the patch level is ignored. A compiled version without a minor ("7") checks the major only.

    >>> accepts_cudnn("7.6", "7.6.5"), accepts_cudnn("8.9", "8.6.0"), accepts_cudnn("7", "8.0.5")
    (True, False, False)
    """
    if not (re.fullmatch(r"\d{1,9}(\.\d{1,9})*", compiled) and re.fullmatch(r"\d{1,9}(\.\d{1,9})*", loaded)):
        return False  # not versions this rule can compare
    want = [int(p) for p in compiled.split(".")[:2]]
    have = [int(p) for p in loaded.split(".")[:2]]
    if want[0] != have[0]:
        return False
    return len(want) < 2 or len(have) < 2 or have[1] >= want[1]


def in_pins(spec: str, version: str) -> bool:
    """Whether the installed distribution version ``version`` (from its dist-info, "9.3.0.75") meets the published
    requirement ``spec`` ("==9.3.0.75"), by PEP 440 as pip decides it.

    A distribution 9.3.0 does not meet ==9.3.0.75 (9.3.0 is 9.3.0.0). For the three parts a library reports about
    itself, use :func:`library_in_pins`.

    >>> in_pins("==9.3.0.75", "9.3.0.75"), in_pins("==9.3.0.75", "9.3.0"), in_pins(">=9.3.0.75,<10.0", "9.10.2.21")
    (True, False, True)
    """
    try:
        specifier = specifier_set(spec)
        candidate = Version(version)
    except ValueError:  # InvalidVersion, InvalidSpecifier, or a number beyond int()'s digit limit
        return False
    # An installed pre-release satisfies a requirement for pip (prereleases only gate what pip picks to install).
    return specifier.contains(candidate, prereleases=True)


def library_in_pins(spec: str, version: str) -> bool:
    """Whether a library's own three-part version ("9.3.0", from cudnnGetVersion) can be the wheel a pin names:
    ==9.3.0.75 is wheel 9.3.0.75, whose library says 9.3.0. Ranges need the wheel's version (:func:`in_pins`).

    >>> [library_in_pins("==9.3.0.75", version) for version in ("9.3.0", "9.3", "9.1.0")]
    [True, False, False]
    """
    try:
        specifier = specifier_set(spec)
        candidate = Version(version)
    except ValueError:  # InvalidVersion, InvalidSpecifier, or a number beyond int()'s digit limit
        return False
    if specifier.contains(candidate, prereleases=True):
        return True
    exact = [_version_or_none(s.version) for s in specifier if s.operator == "=="]
    return (
        len(candidate.release) == 3
        and len(exact) == len(specifier) > 0
        and all(pin is not None and pin.release[:3] == candidate.release for pin in exact)
    )


def _version_or_none(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None  # a wildcard pin ("9.3.*") is not one wheel
