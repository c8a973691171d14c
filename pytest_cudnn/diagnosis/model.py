"""What a diagnosis says: findings with their stable codes, severities and sources, and the verdict."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from packaging.version import Version

from ..compat.sources import SOURCES
from ..environment import (
    Environment,
    Via,
)


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True)
class Finding:
    code: str  # stable, kebab-case, one of CODES
    severity: Severity
    component: str  # "driver", "gpu", "cuda-runtime", "cudnn", "tensorflow", "loader", "environment", "framework"
    summary: str  # one line
    evidence: tuple[str, ...]  # found versions, paths and how they were found; what was expected and by whom
    fix: str
    # The library copies (their paths) this finding is about: a requirement on a copy fails on its errors only.
    subjects: tuple[str, ...] = ()
    # The pip requirement after whose install this finding is gone, exactly as ``pip install`` takes it
    # ("nvidia-cudnn-cu12<9.11"), checked against the pins of the frameworks installed (diagnosis/remedies.py);
    # None where no requirement alone resolves it. ``fix`` says the same in words.
    requirement: str | None = None
    # The code of the finding of this diagnosis that this one follows from (it is listed after that one, and the
    # verdict names that one): "no-cuda-runtime" because "framework-cpu-only". None for a finding of its own.
    because: str | None = None
    # The GPUs (their NVML indexes) this finding is about; () when it is about no particular GPU. A view marks a GPU
    # by these, never by what the summary's text names (a GPU's name is read from elsewhere and may say "GPU 1").
    gpus: tuple[int, ...] = ()
    # The frameworks (import names) this finding is about, where the rule knows them exactly: a cuDNN judged against
    # the CUDA runtime some frameworks load it with concerns those, not another framework that loads the same cuDNN
    # with its own runtime. () where the copies in subjects decide (diagnosis/frameworks.py: concerns).
    frameworks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    ok: bool
    summary: str


CODES: dict[str, str] = {
    "no-driver": "no NVIDIA driver library at all",
    "driver-module-mismatch": "kernel module and user-space driver differ (upgrade without reboot)",
    "driver-not-loaded": "driver installed, kernel module not loaded",
    "driver-error": "NVML failed for another reason",
    "no-gpu": "the driver runs but reports no GPU",
    "driver-dropped-gpu": "the driver (R590 or newer) does not drive NVIDIA GPUs on the PCI bus",
    "wsl-no-gpu": "WSL gives this Linux no GPU (WSL 1, no /dev/dxg, or no Windows driver)",
    "wsl-libraries-not-on-loader-path": "WSL2's driver libraries in /usr/lib/wsl/lib are not on the loader path",
    "wsl-linux-driver-installed": "a Linux NVIDIA driver inside WSL2 shadows the Windows driver's libraries",
    "tegra-host": "a Jetson/Tegra host: NVML does not describe its GPU, libcuda does",
    "forward-compat-in-use": "a newer user-mode libcuda (cuda-compat) runs over an older kernel driver, and works",
    "forward-compat-unsupported-gpu": "CUDA forward compatibility is not supported on the GPU (804)",
    "forward-compat-unsupported-branch": "CUDA forward compatibility on a kernel driver branch NVIDIA lists as ended",
    "container-capabilities-missing": "NVIDIA_DRIVER_CAPABILITIES leaves out what the toolkit must mount",
    "container-gpus-hidden": "NVIDIA_VISIBLE_DEVICES asks the container toolkit for no GPU",
    "container-toolkit-not-used": "a container that asks for GPUs was started without the NVIDIA container toolkit",
    "gpu-probe-partial": "some facts of a GPU could not be read",
    "gpu-memory-low": "a GPU has little free memory left",
    "no-cuda-runtime": "no CUDA runtime anywhere",
    "cuda-runtime-probe-failed": "a CUDA runtime copy could not be loaded or probed",
    "cuda-runtime-cannot-run": "a CUDA runtime's own answer says it cannot use the driver or the GPUs",
    "driver-too-old-for-cuda": "the driver is older than the CUDA runtime needs",
    "gpu-ecc-uncorrectable": "a GPU has had uncorrectable ECC errors since the driver loaded",
    "gpu-row-remap-failure": "a row remapping of a GPU's memory failed: the GPU needs repair",
    "gpu-memory-repair-pending": "a GPU's memory repairs wait for a GPU reset (rows) or a reboot (pages)",
    "gpu-compute-prohibited": "a GPU's compute mode is PROHIBITED: no CUDA context can be made on it",
    "gpu-exclusive-process": "a GPU's compute mode is EXCLUSIVE_PROCESS: one process at a time",
    "gpu-throttled": "a busy GPU's clocks are held down (thermal, power), or it is at its slowdown temperature",
    "gpu-pcie-degraded": "a GPU's PCIe link is trained below its maximum width (or generation, under load)",
    "gpu-persistence-off": "a GPU has persistence mode off: each process waits for its initialisation",
    "gpu-no-peer-access": "pairs of GPUs cannot access each other's memory (P2P)",
    "gpu-unsupported-by-cuda": "the CUDA runtime's toolkit cannot target this GPU",
    "tensorflow-cudart-not-found": "the CUDA runtime TensorFlow loads is not on the loader path",
    "tensorflow-cudnn-not-found": "the cuDNN TensorFlow loads is not on the loader path",
    "tensorflow-cudnn-too-old": "the cuDNN TensorFlow loads is older than the one it was compiled with",
    "tensorflow-library-shadowed": "a copy on LD_LIBRARY_PATH wins over the wheel beside TensorFlow",
    "tensorflow-build-unrecorded": "the build info records no CUDA version; the tested table stands in",
    "tensorflow-cpu-only": "TensorFlow is a CPU-only build",
    "tensorflow-no-kernels-for-gpu": "the TensorFlow build has no kernels for the GPU",
    "tensorflow-ptx-only": "the GPU runs TensorFlow only through PTX JIT compilation",
    "tensorflow-wheel-pins": "the nvidia wheels beside TensorFlow do not meet its and-cuda pins",
    "cudnn-incomplete": "cuDNN front library without its sub-libraries",
    "cudnn-not-loadable": "a cuDNN copy cannot be loaded (damaged, unreadable, a link loop, a missing dependency)",
    "cudnn-dependency-missing": "cuDNN loads, but a library it needs at run time is missing: it aborts",
    "cudnn-probe-failed": "a cuDNN copy crashed or hung when probed",
    "cudnn-cuda-mismatch": "cuDNN was built for another CUDA than the runtime in use",
    "cudnn-create-failed": "cudnnCreate fails on a host with GPUs",
    "cudnn-gpu-unsupported": "the cuDNN release does not support this GPU",
    "cudnn-known-bad": "a published bad combination of cuDNN and GPU or CUDA",
    "library-shadowed": "several copies of one library name; the loader's pick is explained",
    "loader-disagrees": "the real loader picked another copy than the search rules predict",
    "ld-library-path-relative": "LD_LIBRARY_PATH has relative or empty entries",
    "path-variable-missing": "CUDA_HOME / CUDA_PATH / CUDNN_PATH / CONDA_PREFIX names no folder",
    "path-variable-unused": "an install-location variable holds libraries the loader never looks at",
    "cuda-visible-devices-hides-all": "CUDA_VISIBLE_DEVICES leaves no GPU visible",
    "cuda-visible-devices-invalid": "CUDA_VISIBLE_DEVICES names devices that do not exist",
    "cuda-visible-devices-mig": "CUDA_VISIBLE_DEVICES names MIG devices, and NVML lists none to judge them by",
    "mig-no-devices": "a GPU has MIG enabled but no MIG devices: CUDA runs nothing on it",
    "mig-mode-pending": "a GPU's MIG mode changes at its next reset",
    "mig-devices-unused": "CUDA's MIG rules leave some of the devices here unused by one process",
    "library-folder-unreadable": "a folder the loader searches could not be listed",
    "cuda-device-order": "CUDA numbers these GPUs differently from nvidia-smi",
    "framework-cpu-only": "a framework's install (TensorFlow's has its own code) is a CPU-only build",
    "framework-driver-too-old": "the driver is older than the CUDA a framework's build loads or was built for",
    "framework-import-object-missing": "a shared object a framework's import loads is missing: it cannot be imported",
    "framework-import-library-missing": "a library an object of a framework's import needs is not found: no import",
    "framework-library-missing": "a CUDA library a framework cannot do without is not found by its own search",
    "framework-cudnn-mismatch": "the cuDNN a framework loads fails that framework's own cuDNN rule",
    "framework-copies-differ": "two frameworks load different copies of one library; a process gets one",
    "framework-needs-import-order": "a framework loads every library it needs only after another framework's import",
    "framework-import-order-conflict": "after another framework's import, a framework gets a copy it refuses",
    "framework-no-kernels-for-gpu": "a PyTorch build carries no kernels for the GPU",
    "framework-gpu-below-floor": "the GPU is older than the oldest a framework's build supports by its documentation",
    "framework-check-skipped": "a framework runs only because a variable switches its own version check off",
    "framework-ptx-newer-than-driver": "a framework has only PTX for a GPU, from a CUDA newer than the driver",
    "framework-ptx-only": "the GPU runs a PyTorch build only through PTX JIT compilation",
    "wheel-files-overwritten": "another wheel wrote over files of a distribution a framework pins (shared folders)",
    "library-probe-failed": "a copy of a catalog library (NCCL) could not be loaded or asked its version",
    "library-pin-not-met": "the copy of a library (NCCL) a framework loads is not what the framework pins",
    "library-cuda-mismatch": "a framework loads a library (NCCL) built for another CUDA major than itself",
    "library-driver-too-old": "the driver is older than the CUDA a library (NCCL) was built for: it cannot start",
    "library-release-mismatch": "a framework loads two libraries of different releases that must be one (cuBLAS and "
    "cuBLASLt)",
    "windows-tensorflow-no-gpu": "native Windows TensorFlow after 2.10 has no GPU support",
    "windows-dll-path-only": "DLLs found only through PATH, which Python 3.8+ extension loading ignores",
}

# Findings that say their subject copy cannot run at all, whatever their severity for the host as a whole (a
# runtime the driver is too old for is a warning while another runtime works, but a test that needs that very
# copy cannot run).
STOPS_ITS_COPY = frozenset(
    {
        "driver-too-old-for-cuda",
        "gpu-unsupported-by-cuda",
        "cuda-runtime-cannot-run",
        "cuda-runtime-probe-failed",
        "cudnn-incomplete",
        "cudnn-not-loadable",
        "cudnn-dependency-missing",
        "cudnn-probe-failed",
        "cudnn-create-failed",
        "cudnn-gpu-unsupported",
    }
)

# Findings that are the cause of others of their severity, listed (and, as errors, headlining the verdict) before
# them: a CPU-only build brings no CUDA runtime, so "no CUDA runtime" follows from it; a GPU with MIG on and no
# MIG device leaves CUDA no device, so the cuDNN handle that cannot be made follows from it.
CAUSES = ("tensorflow-cpu-only", "framework-cpu-only", "mig-no-devices")

# A finding that follows from another when both are raised: diagnose() sets its ``because`` to the cause's code and
# lists it right after that cause, and the verdict names the cause. "host": whatever the two are about; "error": when
# the cause is an error (it stops everything); "subject": when they share a subject (one library copy, one
# framework). A rule that knows its cause sets ``because`` itself (cudnn-create-failed names why CUDA sees no
# device). tests/test_cause_first.py keeps the table acyclic.
FOLLOWS: dict[str, tuple[tuple[str, str], ...]] = {
    # WSL2's driver is the Windows one, reached through /usr/lib/wsl/lib and /dev/dxg; R590+ loads no module for a
    # machine whose GPUs it all dropped.
    "no-driver": (("wsl-libraries-not-on-loader-path", "host"), ("wsl-no-gpu", "host")),
    "driver-not-loaded": (("driver-dropped-gpu", "host"),),
    # A CPU-only build brings no CUDA runtime, and when it is an error no GPU framework is there that would (as a
    # warning, a GPU framework is installed, and the CPU-only one is not why that one finds no runtime).
    "no-cuda-runtime": (("tensorflow-cpu-only", "error"), ("framework-cpu-only", "error")),
    # The copy TensorFlow gets is the one LD_LIBRARY_PATH put before its wheel's.
    "tensorflow-cudnn-too-old": (("tensorflow-library-shadowed", "subject"),),
    "framework-cudnn-mismatch": (("tensorflow-library-shadowed", "subject"),),
    # The later import gets the earlier one's copy because the two load different copies.
    "framework-import-order-conflict": (("framework-copies-differ", "subject"),),
    # A driver too old for a framework's CUDA is why its cuDNN cannot make a handle (cudnnCreate fails as CUDA does).
    "cudnn-create-failed": (("framework-driver-too-old", "error"),),
    # A cuDNN another wheel wrote over a framework's own is built for another CUDA than that framework's runtime.
    "cudnn-cuda-mismatch": (("wheel-files-overwritten", "subject"),),
    # So is the NCCL: the other CUDA major's wheel wrote it, of another version.
    "library-pin-not-met": (("wheel-files-overwritten", "subject"),),
    "library-cuda-mismatch": (("wheel-files-overwritten", "subject"),),
    # A driver too old for a framework's CUDA is too old for the libraries of that CUDA it loads.
    "library-driver-too-old": (("framework-driver-too-old", "error"), ("driver-too-old-for-cuda", "error")),
    # CUDA 13 dropped the GPUs before Turing: a framework whose documented floor follows CUDA's says so for itself.
    "framework-gpu-below-floor": (("gpu-unsupported-by-cuda", "host"),),
    # A framework needs another's import first because alone it cannot load a library.
    "framework-needs-import-order": (("framework-library-missing", "subject"),),
}

Rule = Callable[[Environment], Iterator[Finding]]

LOADER_VIAS = {
    Via.LD_LIBRARY_PATH,
    Via.RUNPATH,
    Via.LDCONFIG,
    Via.SYSTEM_DEFAULT,
    Via.APP_DIR,
    Via.DLL_DIRECTORY,
    Via.SYSTEM32,
    Via.PATH,
    Via.LOADER,
}


def make_finding(
    code: str,
    severity: Severity,
    component: str,
    summary: str,
    evidence: Iterable[str],
    fix: str,
    subjects: Iterable[str] = (),
    requirement: str | None = None,
    because: str | None = None,
    gpus: Iterable[int] = (),
    frameworks: Iterable[str] = (),
) -> Finding:
    assert code in CODES, code
    assert because is None or because in CODES, because
    return Finding(
        code,
        severity,
        component,
        summary,
        tuple(e for e in evidence if e),
        fix,
        tuple(subjects),
        requirement,
        because,
        tuple(gpus),
        tuple(frameworks),
    )


def folder_of(path: str) -> str:
    """The folder of a Linux or Windows path, as the host wrote it: '/opt/cuda/lib64/libcudart.so.12' ->
    '/opt/cuda/lib64', 'C:\\CUDA\\bin\\cudart64_110.dll' -> 'C:\\CUDA\\bin'."""
    trimmed = path.rstrip("/\\")
    return trimmed.rsplit("/" if "/" in trimmed else "\\", 1)[0]


def cite(key: str) -> str:
    return f"source: {SOURCES[key]}"


def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None


# Digit runs are bounded (and must end where the run ends): int() refuses over 4300 digits, and a "major" of a
# thousand digits is no version at all.
def major(text: str | None) -> int | None:
    match = re.match(r"(\d{1,9})(?!\d)", text or "")
    return int(match.group(1)) if match else None


def major_minor(text: str | None) -> str | None:
    match = re.match(r"(\d{1,9})(?!\d)(?:\.(\d{1,9})(?!\d))?", text or "")
    return f"{match.group(1)}.{match.group(2) or 0}" if match else None


def cause_links(findings: Sequence[Finding]) -> list[int | None]:
    """For each finding, the index of the one it follows from: diagnose() lists each cause right before what
    follows from it, so that is the nearest finding above of its ``because``'s code; None for a finding of its own
    or whose cause is not among ``findings`` (a note a view leaves out). Each link points up: no loop.

    >>> a = make_finding("framework-cpu-only", Severity.ERROR, "framework", "a", (), "")
    >>> b = make_finding("no-cuda-runtime", Severity.ERROR, "cuda-runtime", "b", (), "", because="framework-cpu-only")
    >>> cause_links([a, b]), cause_links([b])
    ([None, 0], [None])
    """
    last: dict[str, int] = {}  # code -> the index of the nearest finding of that code so far
    links: list[int | None] = []
    for index, finding in enumerate(findings):
        cause = finding.because
        links.append(last.get(cause) if cause is not None and cause != finding.code else None)
        last[finding.code] = index
    return links


def root_cause(findings: Sequence[Finding], index: int) -> Finding:
    """The finding that ``findings[index]`` follows from at the end of its ``because`` chain (itself when it follows
    from none), by :func:`cause_links`."""
    links = cause_links(findings)
    while (cause := links[index]) is not None:
        index = cause
    return findings[index]


def verdict(findings: list[Finding]) -> Verdict:
    errors = [i for i, f in enumerate(findings) if f.severity is Severity.ERROR]
    if errors:
        more = f" (and {len(errors) - 1:,} more error{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        first = findings[errors[0]]
        root = root_cause(findings, errors[0])
        because = f", because {root.summary}" if root is not first else ""
        return Verdict(False, f"cannot run GPU work: {first.summary}{because}{more}")
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    if warnings:
        return Verdict(True, f"the GPU stack holds together ({warnings:,} warning{'s' if warnings > 1 else ''})")
    return Verdict(True, "the GPU stack holds together")
