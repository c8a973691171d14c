"""TensorFlow's published build facts: tested configurations, ``and-cuda`` wheel pins, loading rules.

Pure data and lookups. The rows are copied verbatim from the sources named in each table (see
:mod:`pytest_cudnn.compat.sources`); versions keep the documents' own spelling ("10" and "10.0" both occur).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = [
    "AND_CUDA",
    "TESTED_BUILDS",
    "WINDOWS_LAST_GPU_RELEASE",
    "TestedBuild",
    "WheelPins",
    "accepts_cudnn",
    "and_cuda_pins",
    "in_pins",
    "library_in_pins",
    "library_names",
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


def _series(version: str) -> tuple[int, int] | None:
    try:
        release = Version(version).release
    except InvalidVersion:
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


def library_names(system: str, cuda_version: str | None, cudnn_version: str | None) -> tuple[str | None, str | None]:
    """The CUDA runtime and cuDNN library names TensorFlow's loader asks for (source "tf-dso-names").

    ``libcudart.so.<TF_CUDART_VERSION>`` and ``libcudnn.so.<major>``; on Windows ``cudart64_<suffix>.dll`` and
    ``cudnn64_<major>.dll``. TF_CUDART_VERSION is the runtime's soname suffix: major.minor below CUDA 11 (10.1),
    "11.0" for every 11.x, the major alone from 12. A major-only CUDA below 11 ('10', as TF 1.15, 2.0 and 2.2
    recorded on Linux) does not say which minor, so no name is given.
    """
    cudart = cudnn = None
    parts = cuda_version.split(".") if cuda_version else []
    major = int(parts[0]) if parts and parts[0].isdigit() else 0
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
        specifier = SpecifierSet(spec)
        candidate = Version(version)
    except (InvalidVersion, InvalidSpecifier):
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
        specifier = SpecifierSet(spec)
        candidate = Version(version)
    except (InvalidVersion, InvalidSpecifier):
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
    except InvalidVersion:
        return None  # a wildcard pin ("9.3.*") is not one wheel
