"""The environment model: one immutable picture of the GPU stack, with provenance for every fact.

Everything the plugin, the diagnosis and the doctor say is read from an :class:`Environment`. It is built by
:mod:`pytest_cudnn.probe` on a live host or loaded from a snapshot file, and round-trips through JSON.
Each component records its :class:`State` (found, absent, error), the raw value as the library gave it beside
the decoded one, the absolute path it came from and the mechanisms that found that path.

Pure module: no ctypes, no pytest, no framework imports.
"""

from __future__ import annotations

import datetime
import enum
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._base.serde import DecodeError, Rule, from_json, rule, to_json
from ._base.text import clip
from ._base.versions import is_pep440
from .files import DocumentRefused, read_json_document
from .native import protocol

__all__ = [
    "ALLOWED_VARIABLES",
    "CHECK_SWITCHES",
    "CONTAINER_VARIABLES",
    "HIDDEN",
    "INSTALL_VARIABLES",
    "MAX_SNAPSHOT_BYTES",
    "OBJECT_MISSING",
    "SCHEMA",
    "SCHEMA_VERSION",
    "WINDOWS_ONLY_VARIABLES",
    "BuildFact",
    "Candidate",
    "CudaDriver",
    "CudaRuntime",
    "Cudnn",
    "Distribution",
    "Driver",
    "Environment",
    "Failure",
    "FrameworkBuild",
    "Gpu",
    "GpuHealth",
    "GpuPair",
    "Host",
    "InvalidSnapshot",
    "KernelDriver",
    "LibraryCopy",
    "LinkedObject",
    "LoadedLibrary",
    "MigDevice",
    "PathCheck",
    "PciGpu",
    "Pin",
    "Platform",
    "RecordEntry",
    "Resolution",
    "State",
    "TensorFlow",
    "Unreadable",
    "Via",
    "WheelCheck",
    "WheelFile",
    "by_file",
    "load_snapshot",
    "soname_order",
]

SCHEMA = "pytest-cudnn/environment"
# 2: snapshots carry the kernel driver, the wheel files checked and where libcuda's links end (issue 21). 3: the copies
# of the catalog's further kinds (``libraries``: NCCL, cuBLAS), and TensorFlow's build info in its entry among the
# frameworks (``build_info``) rather than beside them. Older files still load (read into this shape); an older
# reader refuses a newer version, naming it. 4: the host's platform (``platform``: WSL2, Tegra, the NVIDIA GPUs on the
# PCI bus), issue 31.
SCHEMA_VERSION = 4
READS = (1, 2, 3, 4)

# The only environment variables ever recorded: snapshots and reports get shared, nothing else may leak.
ALLOWED_VARIABLES = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDNN_PATH",
    "LD_LIBRARY_PATH",
    "CONDA_PREFIX",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    # The frameworks' own switches for their version checks (frameworks/*: skip_check)
    "PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK",
    "JAX_SKIP_CUDA_CONSTRAINTS_CHECK",
)
HIDDEN = "\u2026"  # what stands for a value that is not shown


def shown_spec(spec: str) -> str:
    """An execnet spec (or a host key made of one) with the value of each ``env:`` variable off the allowlist
    hidden; execnet splits a spec at ``//``, so no value holds one.

    >>> shown_spec("socket=10.0.0.2:8888//env:CUDA_VISIBLE_DEVICES=1//env:HF_TOKEN=hf_abc")
    'socket=10.0.0.2:8888//env:CUDA_VISIBLE_DEVICES=1//env:HF_TOKEN=\u2026'
    """
    return "//".join(_shown_setting(part) for part in spec.split("//"))


def _shown_setting(part: str) -> str:
    name, equals, value = part.partition("=")
    if not (name.startswith("env:") and equals) or value.startswith(HIDDEN):  # hidden already (` #2` kept)
        return part
    return f"{name}={value if name[4:] in ALLOWED_VARIABLES else HIDDEN}"


# Set by NVIDIA's CUDA images and read by the NVIDIA container toolkit: which GPUs and which driver libraries it
# mounts into a container (compat/sources.py "container-toolkit-variables"). Shown only where set.
CONTAINER_VARIABLES = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")
CHECK_SWITCHES = ("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK", "JAX_SKIP_CUDA_CONSTRAINTS_CHECK")
WINDOWS_ONLY_VARIABLES = ("PATH",)


class State(str, enum.Enum):
    FOUND = "found"
    ABSENT = "absent"
    ERROR = "error"


class Failure(str, enum.Enum):
    """How probing one library copy failed, when it did: each has its own cause and its own fix. The values are
    the probe child's own (native/protocol.py, which says what each means), spelt there once."""

    UNLOADABLE = protocol.UNLOADABLE
    CRASHED = protocol.CRASHED
    HUNG = protocol.HUNG
    NOT_THE_LIBRARY = protocol.NOT_THE_LIBRARY
    NO_ANSWER = protocol.NO_ANSWER


class Via(str, enum.Enum):
    """How a library file was found. Only some of these are places the dynamic loader itself searches."""

    LD_LIBRARY_PATH = "LD_LIBRARY_PATH"
    RUNPATH = "framework RUNPATH"  # a framework's own library folders, e.g. nvidia/*/lib wheels beside TF
    LDCONFIG = "ldconfig cache"
    SYSTEM_DEFAULT = "system default folder"
    CUDA_HOME = "CUDA_HOME"
    CUDA_PATH = "CUDA_PATH"
    CUDNN_PATH = "CUDNN_PATH"
    CONDA_PREFIX = "CONDA_PREFIX"
    PIP_WHEEL = "pip nvidia wheel"
    COMMON_LOCATION = "common install location"
    PATH = "PATH"  # Windows: searched by LoadLibrary
    APP_DIR = "application folder"  # Windows: the folder of python.exe
    SYSTEM32 = "System32"  # Windows
    DLL_DIRECTORY = "DLL directory"  # Windows: os.add_dll_directory / conda's Library\\bin
    LOADER = "dynamic loader"  # the loader's own answer, e.g. NVML's dlopen("libnvidia-ml.so.1")
    FRAMEWORK = "a framework's own search"  # where a framework's RPATH, RUNPATH or preload reaches


# Variables that name install locations: the loader never reads them. Each maps to how a copy found there is tagged.
INSTALL_VARIABLES: dict[str, Via] = {
    "CUDA_HOME": Via.CUDA_HOME,
    "CUDA_PATH": Via.CUDA_PATH,
    "CUDNN_PATH": Via.CUDNN_PATH,
    "CONDA_PREFIX": Via.CONDA_PREFIX,
}


def _pattern(expected: str, regex: str) -> dict[str, Rule]:
    compiled = re.compile(regex, re.ASCII)  # ASCII digits only: int() and the version parsers read these
    return rule(expected, lambda text: compiled.fullmatch(text) is not None)


def _is_iso_time(text: str) -> bool:
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# What a value must be beyond its type, checked when a snapshot is loaded (serde reads each field's metadata), so
# that nothing after loading trips on a hand-edited value. Each is what the probe itself writes.
_DRIVER_VERSION = _pattern("a driver version such as '535.104.05'", r"[0-9]+(\.[0-9]+)+")  # as nvidia-smi prints
_CUDA_VERSION = _pattern("a CUDA version such as '12.4'", r"[0-9]+\.[0-9]+")  # versions.cuda_version_from_int
_CUDNN_VERSION = _pattern("a version such as '9.1.0'", r"[0-9]+\.[0-9]+\.[0-9]+")
_BUILD_VERSION = _pattern("a version such as '12.5.1' or '9'", r"[0-9]+(\.[0-9]+)*")  # tensorflow_version_field
_PEP440_VERSION = rule("a PEP 440 version such as '2.18.0'", is_pep440)
_KERNEL_RELEASE = _pattern("a kernel release such as '5.15.153.1-microsoft-standard-WSL2'", r"[!-~]{1,128}")
_PCI_BUS = _pattern("a PCI address such as '0000:01:00.0'", r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_PCI_DEVICE = _pattern("a PCI device id such as '1db4'", r"[0-9a-f]{4}")
_CAPABILITY = _pattern("a compute capability such as '8.0'", r"[0-9]+\.[0-9]+")
_NON_NEGATIVE = rule("a non-negative integer", lambda number: number >= 0)
# NVML hands out device indexes and GPU and compute instance IDs as C unsigned ints (nvmlDeviceGetHandleByIndex_v2,
# nvmlDeviceGetMigDeviceHandleByIndex, nvmlDeviceGetGpuInstanceId); anything larger came from no NVML.
_NVML_ID = rule("a non-negative integer below 2**32 (an NVML unsigned int)", lambda number: 0 <= number < 2**32)
_SECONDS = rule("a non-negative number of seconds", lambda number: math.isfinite(number) and number >= 0)
_ISO_TIME = rule("an ISO 8601 time such as '2026-11-21T10:00:00+00:00'", _is_iso_time)
_CONTEXT = rule("'process' or 'tensorflow'", lambda text: text in ("process", "tensorflow"))
LOAD_KINDS = ("DT_NEEDED", "dlopen", "preload")
_LOAD_KIND = rule("'DT_NEEDED', 'dlopen' or 'preload'", lambda text: text in LOAD_KINDS)


@dataclass(frozen=True)
class Candidate:
    """One file on disk that could satisfy a library name."""

    name: str  # the file name as found, e.g. "libcudnn.so.8"
    path: str  # absolute path where it was found
    real_path: str  # symlinks resolved: two candidates with one real_path are one copy
    via: tuple[Via, ...]  # every mechanism that found it, loader mechanisms first
    loader_rank: int | None = field(metadata=_NON_NEGATIVE)  # rank in the loader's search; None: it never looks there


def soname_order(name: str) -> tuple[int, str]:
    """Sonames before full file names: libcudnn.so.8 before libcudnn.so.8.9.7."""
    return name.count("."), name


def by_file(candidates: Sequence[Candidate]) -> list[list[Candidate]]:
    """Candidates grouped by the file they really are (their real path), in first-seen order."""
    groups: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault(candidate.real_path, []).append(candidate)
    return list(groups.values())


@dataclass(frozen=True)
class Resolution:
    """Which copy of one library name the loader picks, and which copies it shadows."""

    name: str  # soname or DLL name, e.g. "libcudnn.so.8"
    context: str = field(metadata=_CONTEXT)  # "process": a plain dlopen; "tensorflow": with TensorFlow's own RUNPATH
    candidates: tuple[Candidate, ...]  # loader order first (winner first), then copies the loader never sees
    predicted: str | None  # the path the loader's search rules give
    loaded: str | None  # the path a real dlopen in a child process loaded (None: not tried, or nothing)
    error: str | None  # why a real dlopen failed, as dlerror() said


@dataclass(frozen=True)
class MigDevice:
    """One MIG device of a partitioned GPU: a compute instance inside its GPU instance, which CUDA treats as one
    device (NVIDIA MIG User Guide, "CUDA Device Enumeration"). Read through NVML's MIG device handle."""

    index: int = field(metadata=_NVML_ID)  # nvmlDeviceGetMigDeviceHandleByIndex's index under the GPU
    uuid: str | None  # "MIG-..." (drivers from R470), what CUDA_VISIBLE_DEVICES names
    name: str | None  # NVML's name for it, e.g. "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
    gpu_instance_id: int | None = field(metadata=_NVML_ID)
    compute_instance_id: int | None = field(metadata=_NVML_ID)
    gpu_slices: int | None = field(metadata=_NON_NEGATIVE)  # nvmlDeviceAttributes_t.gpuInstanceSliceCount
    compute_slices: int | None = field(metadata=_NON_NEGATIVE)  # .computeInstanceSliceCount
    multiprocessors: int | None = field(metadata=_NON_NEGATIVE)  # .multiprocessorCount
    memory_total: int | None = field(metadata=_NON_NEGATIVE)  # bytes, the instance's own
    memory_free: int | None = field(metadata=_NON_NEGATIVE)  # bytes, at probe time
    error: str | None  # the NVML calls that failed for this instance


@dataclass(frozen=True)
class GpuHealth:
    """The state of one GPU that makes tests fail, or flaky, whatever the versions: what DCGM's deployment checks
    and ``nvidia-smi -q`` read. Read only, through NVML (nvml.h: compat/sources.py "nvml-state"). A value is None
    where the call answered NOT_SUPPORTED or no such function (named in ``unsupported``) or failed (the failure is
    in the GPU's ``error``)."""

    compute_mode: int | None = field(metadata=_NON_NEGATIVE)  # nvmlComputeMode_t: 0 DEFAULT, 2 PROHIBITED, 3 EXCL.
    persistence: bool | None  # nvmlDeviceGetPersistenceMode: Linux only
    ecc: bool | None  # nvmlDeviceGetEccMode, the current mode
    ecc_uncorrected_volatile: int | None = field(metadata=_NON_NEGATIVE)  # since the driver loaded
    ecc_uncorrected_aggregate: int | None = field(metadata=_NON_NEGATIVE)  # over the device's life
    retired_pages_pending: bool | None  # nvmlDeviceGetRetiredPagesPendingStatus: a reboot retires them
    remap_pending: bool | None  # nvmlDeviceGetRemappedRows isPending: a GPU reset remaps them
    remap_failure: bool | None  # nvmlDeviceGetRemappedRows failureOccurred: a remapping ever failed
    clocks_event_reasons: int | None = field(metadata=_NON_NEGATIVE)  # nvmlDeviceGetCurrentClocksEventReasons
    temperature: int | None = field(metadata=_NON_NEGATIVE)  # degrees C, the die
    slowdown_temperature: int | None = field(metadata=_NON_NEGATIVE)  # NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
    pcie_generation: int | None = field(metadata=_NON_NEGATIVE)
    pcie_generation_max: int | None = field(metadata=_NON_NEGATIVE)
    pcie_width: int | None = field(metadata=_NON_NEGATIVE)
    pcie_width_max: int | None = field(metadata=_NON_NEGATIVE)
    nvlinks_active: int | None = field(metadata=_NON_NEGATIVE)  # links of NVML_NVLINK_MAX_LINKS that are active
    unsupported: tuple[str, ...] = ()  # the calls NVML answered NOT_SUPPORTED (3) or lacks (13)


@dataclass(frozen=True)
class GpuPair:
    """How two GPUs reach each other (NVML indexes ``first`` < ``second``): their common ancestor on the PCI tree
    (nvmlGpuTopologyLevel_t: 0 the same board, 10 one PCIe switch, 20 several, 30 one host bridge, 40 one NUMA
    node, 50 across the system) and nvmlDeviceGetP2PStatus for reads, writes and NVLink (0 OK; 1 chipset, 2 GPU, 3
    topology not supported, 4 disabled by a registry key, 5 not supported, 6 unknown). None: NVML did not say."""

    first: int = field(metadata=_NVML_ID)
    second: int = field(metadata=_NVML_ID)
    topology: int | None = field(metadata=_NON_NEGATIVE)
    p2p_read: int | None = field(metadata=_NON_NEGATIVE)
    p2p_write: int | None = field(metadata=_NON_NEGATIVE)
    p2p_nvlink: int | None = field(metadata=_NON_NEGATIVE)


@dataclass(frozen=True)
class Gpu:
    """One GPU as NVML numbers it (PCI bus order)."""

    index: int = field(metadata=_NVML_ID)
    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    compute_capability: str | None = field(metadata=_CAPABILITY)  # "8.6"
    memory_total: int | None = field(metadata=_NON_NEGATIVE)  # bytes
    memory_free: int | None = field(metadata=_NON_NEGATIVE)  # bytes, at probe time
    error: str | None  # the first NVML call that failed for this device
    mig_mode: bool | None = None  # nvmlDeviceGetMigMode's current mode; None: unsupported or unread
    mig_pending: bool | None = None  # the mode after the next GPU reset, when it differs from the current one
    mig: tuple[MigDevice, ...] = ()  # its MIG devices, when MIG is enabled
    health: GpuHealth | None = None  # its state (issue 32); None in snapshots written before it was read


@dataclass(frozen=True)
class Driver:
    """The NVIDIA driver as NVML reports it."""

    state: State
    path: str | None  # the libnvidia-ml the loader picked
    reason: str | None  # why absent or what failed, NVML's own words
    nvml_error: int | None  # NVML return code when it failed (9 driver not loaded, 12 library not found, 18 ...)
    version: str | None = field(metadata=_DRIVER_VERSION)  # exactly as NVML prints it, e.g. "535.104.05"
    cuda_version_raw: int | None = field(metadata=_NON_NEGATIVE)  # nvmlSystemGetCudaDriverVersion: newest CUDA
    cuda_version: str | None = field(metadata=_CUDA_VERSION)
    nvml_version: str | None
    gpus: tuple[Gpu, ...]
    pairs: tuple[GpuPair, ...] = ()  # every pair of its GPUs (issue 32); () with fewer than two, or in older files


@dataclass(frozen=True)
class CudaDriver:
    """libcuda (the driver API library the CUDA runtime loads)."""

    state: State
    path: str | None
    reason: str | None
    version_raw: int | None = field(metadata=_NON_NEGATIVE)  # cuDriverGetVersion
    version: str | None = field(metadata=_CUDA_VERSION)
    init_status: int | None  # cuInit(0)
    device_count: int | None = field(metadata=_NON_NEGATIVE)  # cuDeviceGetCount, only when cuInit succeeded
    # Symlinks resolved: a driver's libcuda.so.1 links to libcuda.so.<driver version>, and a cuda-compat package's
    # to the version of the driver it was built from. "" in snapshots written before it was recorded.
    real_path: str = ""


@dataclass(frozen=True)
class KernelDriver:
    """The NVIDIA kernel driver as the host's files show it, apart from the user-mode libraries that answer:
    read, never opened (no device node is opened, /proc is read through a bounded read)."""

    module_version: str | None = field(metadata=_DRIVER_VERSION)  # "Kernel Module  535.104.05" in /proc
    module_reason: str | None  # why the module's version is unknown: the file's absence or the OS's words
    device_nodes: tuple[str, ...] | None  # the /dev/nvidia* names; None: /dev could not be listed


@dataclass(frozen=True)
class PciGpu:
    """An NVIDIA display or 3D controller on the PCI bus, as /sys lists it whether or not a driver took it."""

    bus_id: str = field(metadata=_PCI_BUS)  # "0000:01:00.0"
    device_id: str = field(metadata=_PCI_DEVICE)  # "1db4", /sys/bus/pci/devices/<bus>/device
    model: str | None  # "Tesla V100-PCIE-16GB" (the driver's /proc) or "GV100GL [Tesla V100 PCIe 16GB]" (pci.ids)
    model_source: str | None  # the file the model was read from


@dataclass(frozen=True)
class Platform:
    """What kind of Linux host this is, from its own files (never uname: a simulated host shows it the same way):
    WSL2, where the Windows driver's user-mode libraries come from /usr/lib/wsl/lib and the GPU through /dev/dxg;
    a Jetson (Tegra), whose GPU NVML does not describe; and the NVIDIA GPUs on the PCI bus, read when NVML lists
    none."""

    kernel_release: str | None = field(metadata=_KERNEL_RELEASE)  # /proc/sys/kernel/osrelease
    wsl_libraries: tuple[str, ...] | None  # the driver's libraries in /usr/lib/wsl/lib; None: no such folder
    dxg: bool | None  # /dev/dxg, the GPU paravirtualisation device of WSL2; None: /dev could not be read
    tegra_release: str | None = field(metadata=_BUILD_VERSION)  # "36.4.0": /etc/nv_tegra_release's R36, REVISION 4.0
    pci_gpus: tuple[PciGpu, ...] | None = None  # None: not read (NVML listed GPUs) or /sys unreadable

    @property
    def wsl(self) -> int | None:
        """2 on WSL2, 1 on WSL 1 (a kernel release naming Microsoft: "5.15.153.1-microsoft-standard-WSL2",
        "4.4.0-19041-Microsoft"), None elsewhere.

        >>> Platform("5.15.153.1-microsoft-standard-WSL2", None, None, None).wsl
        2
        """
        release = (self.kernel_release or "").lower()
        if "microsoft" not in release:
            return None
        return 2 if "wsl2" in release or "microsoft-standard" in release else 1


@dataclass(frozen=True)
class CudaRuntime:
    """One copy of the CUDA runtime (libcudart / cudart64_*.dll), loaded by absolute path in a child process."""

    state: State
    path: str
    names: tuple[str, ...]  # the names this copy answers to, e.g. ("libcudart.so.12",)
    via: tuple[Via, ...]
    reason: str | None
    version_raw: int | None = field(metadata=_NON_NEGATIVE)  # cudaRuntimeGetVersion
    version: str | None = field(metadata=_CUDA_VERSION)
    driver_version_raw: int | None = field(metadata=_NON_NEGATIVE)  # cudaDriverGetVersion: 0 is no driver at all
    device_count_status: int | None  # cudaGetDeviceCount's status
    device_count_error: str | None  # cudaGetErrorString of that status
    device_count: int | None = field(metadata=_NON_NEGATIVE)  # only when the status was 0
    real_path: str = ""  # symlinks resolved: the file this copy really is
    failure: Failure | None = None  # how the probe failed, when state is ERROR


@dataclass(frozen=True)
class Cudnn:
    """One copy of cuDNN, loaded by absolute path in a child process."""

    state: State
    path: str
    names: tuple[str, ...]
    via: tuple[Via, ...]
    reason: str | None  # for an error: what killed or failed the probe, naming the library
    version_raw: int | None = field(metadata=_NON_NEGATIVE)  # cudnnGetVersion
    version: str | None = field(metadata=_CUDNN_VERSION)  # "8.9.7", from cudnnGetProperty or decoded from version_raw
    version_source: str | None  # "cudnnGetProperty", "cudnnGetVersion" or the header read when calls failed
    cudart_version_raw: int | None = field(metadata=_NON_NEGATIVE)  # cudnnGetCudartVersion: the CUDA it was built for
    cudart_version: str | None = field(metadata=_CUDA_VERSION)
    siblings_missing: tuple[str, ...]  # sub-libraries absent from the folder (cuDNN 8 and 9 are split)
    create_status: int | None  # cudnnCreate's status
    create_error: str | None  # cudnnGetErrorString of it
    last_error: str | None  # cudnnGetLastErrorString (cuDNN 9): the reason behind the status
    real_path: str = ""
    failure: Failure | None = None  # how the probe failed, when state is ERROR
    missing_dependencies: tuple[str, ...] = ()  # libraries it (or a sub-library) could not load, as it said


_KIND = rule("a library kind of the catalog, such as 'nccl'", lambda text: text in _catalog_keys())


def _catalog_keys() -> tuple[str, ...]:
    from .compat.catalog import JUDGED  # at decode time only: the model does not need the catalog to be built

    return tuple(kind.key for kind in JUDGED)


@dataclass(frozen=True)
class LibraryCopy:
    """One copy of a library kind of the catalog (compat/catalog.py) other than the CUDA runtime and cuDNN: NCCL.
    Versioned by its own call in a child process (loaded by absolute path); what its build wrote into the file
    (the CUDA it was built for) read from its .rodata, never by loading it."""

    kind: str = field(metadata=_KIND)  # "nccl"
    state: State
    path: str
    names: tuple[str, ...]
    via: tuple[Via, ...]
    reason: str | None  # for an error: what killed or failed the probe, naming the library
    version_raw: int | None = field(metadata=_NON_NEGATIVE)  # what its version call answered (ncclGetVersion)
    version: str | None = field(metadata=_CUDNN_VERSION)  # "2.21.5"
    built_for: BuildFact | None  # the CUDA it was built for, as its file writes it ("12.9", "NCCL version ...")
    real_path: str = ""
    failure: Failure | None = None  # how the probe failed, when state is ERROR


@dataclass(frozen=True)
class BuildFact:
    """One fact of a framework's build, and where it was read: nothing is said that was not read."""

    value: str  # "13.2", "9.26.0", as the file writes it
    source: str  # the file it was read from
    how: str  # what in that file: "cuda = '13.2'", "CUDNN_VERSION"


@dataclass(frozen=True)
class Pin:
    """One requirement a framework's distribution declares on an NVIDIA wheel, and what is installed."""

    requirement: str  # as its METADATA writes it, marker included
    package: str  # the distribution it names, as written
    specifier: str  # "==9.26.0.51", ">=9.8,<10"
    installed: str | None  # that distribution's version in the framework's own site folder; None: not there


# The reason of a framework's own object that is not where its package needs it (LinkedObject.reason).
OBJECT_MISSING = "missing: no such file"


@dataclass(frozen=True)
class LinkedObject:
    """One of a framework's own shared objects that use CUDA, as its ELF headers say: read, never loaded. Its
    DT_RPATH or DT_RUNPATH decides whether its copies beat LD_LIBRARY_PATH; its fatbin, which GPUs it can run on."""

    path: str
    soname: str | None
    needed: tuple[str, ...]  # DT_NEEDED, in the order the loader searches them
    rpath: str | None  # as written, e.g. "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"
    runpath: str | None
    sass: tuple[str, ...]  # GPU code in its .nv_fatbin: "sm_75", "sm_90a"
    ptx: tuple[str, ...]  # "compute_90"
    reason: str | None  # what could not be read


@dataclass(frozen=True)
class LoadedLibrary:
    """A CUDA library a framework loads and the copy its own search gives it, predicted from the ELF dynamic
    sections of its objects and from its Python-level preloads (never by loading it)."""

    name: str  # the name asked for, e.g. "libcudnn.so.9"
    requester: str | None  # the object whose DT_NEEDED or dlopen asks for it; None for a Python preload
    how: str = field(metadata=_LOAD_KIND)  # how it is loaded: "DT_NEEDED", "dlopen" or "preload"
    required: bool  # whether the framework's GPU support fails without it (False: it goes on without)
    path: str | None  # the file it gets, as the search spells it; None: found nowhere
    found_by: str | None  # the rule that found it: "DT_RPATH of /x/libtorch_cuda.so", "LD_LIBRARY_PATH", ...
    searched: tuple[str, ...] = ()  # the folders searched, in order, as the search spells them
    shadowed: tuple[str, ...] = ()  # other files of that name the search would have taken later; when found
    # nowhere, the wheel copies on sys.path that its search never reaches


@dataclass(frozen=True)
class FrameworkBuild:
    """A GPU framework as its files describe it (never imported): the same shape for every framework."""

    name: str  # "torch", "jax", "tensorflow", "cupy": the import name
    state: State
    reason: str | None  # absent: why; error: what could not be read; found: what is only partly known
    distribution: str | None
    version: str | None = field(metadata=_PEP440_VERSION)
    location: str | None  # the package folder
    is_cuda_build: bool | None  # None: its files do not say
    cuda: BuildFact | None  # the CUDA it was built for
    cudnn: BuildFact | None  # the cuDNN it was built with
    pins: tuple[Pin, ...]
    objects: tuple[LinkedObject, ...] = ()  # its CUDA-using shared objects
    loads: tuple[LoadedLibrary, ...] = ()  # the CUDA libraries it loads, each with the copy it gets
    # The architectures its build lists as its own ("sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"): for PyTorch the
    # CUDA_ARCH_FLAGS string torch.cuda.get_arch_list() splits, read from libtorch_python.so; None: not read. Its
    # objects' fatbins hold more (sm_90a-style code a few kernels are built for).
    arch_list: BuildFact | None = None
    # TensorFlow's build info, as its own files give it (build_info.py: its CUDA and cuDNN as written, its compute
    # capabilities, the library names and folders its own loader uses); None for every other framework.
    build_info: TensorFlow | None = None

    @classmethod
    def absent(cls, name: str) -> FrameworkBuild:
        """``name`` is not installed: no such package on the Python path."""
        return cls(
            name, State.ABSENT, f"no '{name}' package on the Python path", None, None, None, None, None, None, ()
        )


@dataclass(frozen=True)
class TensorFlow:
    """TensorFlow as its files describe it; never imported."""

    state: State
    reason: str | None
    distribution: str | None  # e.g. "tensorflow", "tensorflow-gpu", "tf-nightly"
    version: str | None = field(metadata=_PEP440_VERSION)  # from its distribution's metadata
    location: str | None  # the package folder
    build_info_path: str | None
    build_info_format: str | None  # which generation of build_info.py this is
    is_cuda_build: bool | None
    cuda_version_raw: str | None  # as written in build_info, e.g. "10.1", "64_101", "12.5.1"
    cuda_version: str | None = field(metadata=_BUILD_VERSION)
    cudnn_version_raw: str | None
    cudnn_version: str | None = field(metadata=_BUILD_VERSION)
    compute_capabilities: tuple[str, ...]  # e.g. ("sm_60", "compute_90")
    cudart_name: str | None  # the soname or DLL name it loads for the CUDA runtime
    cudnn_name: str | None
    library_dirs: tuple[str, ...]  # folders its own loader searches first (nvidia/*/lib wheels beside it)

    @classmethod
    def not_read(cls, reason: str, state: State = State.ABSENT, **known: Any) -> TensorFlow:
        """TensorFlow whose build facts were not read: absent, or an error with what was learnt before it."""
        values: dict[str, Any] = {name: None for name in cls.__dataclass_fields__ if name not in ("state", "reason")}
        values.update(compute_capabilities=(), library_dirs=())
        values.update(known)
        return cls(state=state, reason=reason, **values)


@dataclass(frozen=True)
class PathCheck:
    """An install-location variable (CUDA_HOME, CUDA_PATH, CUDNN_PATH, CONDA_PREFIX) and whether it exists."""

    variable: str
    value: str
    is_dir: bool


@dataclass(frozen=True)
class Unreadable:
    """A folder the probe had to search but could not list: copies in it are unknown, not absent."""

    path: str
    reason: str  # the operating system's words, e.g. "Permission denied"


@dataclass(frozen=True)
class Distribution:
    """An installed Python distribution that matters to the GPU stack (nvidia-* wheels, frameworks), read from
    its dist-info: the exact version pins are written against (nvidia-cudnn-cu12 9.3.0.75, where the library
    itself reports 9.3.0)."""

    name: str  # as its METADATA names it
    version: str
    location: str  # the site folder holding its dist-info


@dataclass(frozen=True)
class RecordEntry:
    """One line of an installed distribution's RECORD (PEP 376/627): what pip wrote for a file it installed."""

    distribution: str  # as its METADATA names it
    version: str
    size: int | None = field(metadata=_NON_NEGATIVE)  # as RECORD writes it; None: not written
    sha256: str | None  # urlsafe base64 without padding, as RECORD writes it; None: no sha256 written


@dataclass(frozen=True)
class WheelFile:
    """A file a framework loads from an nvidia-* wheel folder (``<site>/nvidia/*/lib``), against every installed
    distribution whose RECORD lists its path: the one whose RECORD it matches is the one that wrote it last."""

    path: str  # as the framework loads it
    size: int | None = field(metadata=_NON_NEGATIVE)  # on disk; None: it could not be read
    sha256: str | None  # on disk, as RECORD writes hashes; None: not hashed (over the limit, or unreadable)
    listed_by: tuple[RecordEntry, ...]  # each installed distribution's RECORD line for it

    def written_by(self, entry: RecordEntry) -> bool | None:
        """Whether the file on disk is the one ``entry``'s RECORD wrote: its size, and its hash when both are known;
        None when the RECORD line or the disk gives nothing to compare."""
        if self.size is None or entry.size is None:
            return None
        if entry.size != self.size:
            return False
        return self.sha256 is None or entry.sha256 is None or self.sha256 == entry.sha256


@dataclass(frozen=True)
class WheelCheck:
    """An installed distribution that lists a file a framework loads: its files on disk against its RECORD, by
    size (hashing a wheel whole would read a gigabyte)."""

    distribution: str
    version: str
    record: str  # the RECORD read
    files: int = field(metadata=_NON_NEGATIVE)  # the files its RECORD lists with a size
    differing: tuple[str, ...]  # those of a size other than RECORD's, or gone; paths as RECORD writes them


@dataclass(frozen=True)
class Host:
    system: str  # platform.system(): "Linux", "Windows"
    machine: str
    python: str
    platform: str  # platform.platform()


@dataclass(frozen=True)
class Environment:
    schema: str
    schema_version: int
    host: Host
    probed_at: str = field(metadata=_ISO_TIME)  # UTC
    probe_seconds: float = field(metadata=_SECONDS)
    variables: Mapping[str, str]  # allowlisted environment variables only
    driver: Driver
    cuda_driver: CudaDriver
    cuda_runtimes: tuple[CudaRuntime, ...]
    cudnns: tuple[Cudnn, ...]
    resolutions: tuple[Resolution, ...]
    notes: tuple[str, ...] = field(default=())  # things the probe noticed about its own inputs
    paths: tuple[PathCheck, ...] = field(default=())
    unreadable: tuple[Unreadable, ...] = field(default=())
    distributions: tuple[Distribution, ...] = field(default=())
    # Each framework found (frameworks/: PyTorch, JAX, CuPy, ONNX Runtime) as its files describe it, never imported
    frameworks: tuple[FrameworkBuild, ...] = field(default=())
    wheel_files: tuple[WheelFile, ...] = field(default=())  # the wheel files frameworks load, against RECORDs
    wheel_checks: tuple[WheelCheck, ...] = field(default=())  # the distributions listing them, against the disk
    # The kernel driver and device nodes (issue 21); None in snapshots written before they were recorded.
    kernel: KernelDriver | None = None
    libraries: tuple[LibraryCopy, ...] = field(default=())  # the catalog's further kinds (NCCL): every copy found
    platform: Platform | None = None  # WSL2, Tegra, the PCI bus (issue 31); None on Windows and in older snapshots

    @property
    def tensorflow(self) -> TensorFlow:
        """TensorFlow's build info, from its entry among the frameworks (schema 3: one model of every framework;
        snapshots of versions 1 and 2 kept it beside them, and are read into this shape)."""
        found = next((build.build_info for build in self.frameworks if build.build_info is not None), None)
        return found if found is not None else TensorFlow.not_read(NO_TENSORFLOW)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = to_json(self)
        return data

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, data: Any, source: str = "<json>", *, check_devices: bool = True) -> Environment:
        """Decode a snapshot; raises InvalidSnapshot naming ``source`` and the field at fault. ``check_devices``
        False takes devices that cannot all be so at once (see _check_devices) as they are."""
        if not isinstance(data, dict):
            raise InvalidSnapshot(source, "not a JSON object")
        if data.get("schema") != SCHEMA:
            raise InvalidSnapshot(source, f"not a pytest-cudnn environment (schema is {data.get('schema')!r})")
        version = data.get("schema_version")
        if isinstance(version, bool) or version not in READS:
            raise InvalidSnapshot(
                source,
                f"schema_version {version!r} is not supported (this pytest-cudnn reads {READS[0]} to {READS[-1]})",
            )
        try:
            env = from_json(cls, _schema_3(data) if version < 3 else data)
            if check_devices:
                _check_devices(env.driver)
        except DecodeError as error:
            raise InvalidSnapshot(source, str(error)) from None
        return _allowlisted(env)

    def library_runtime(self, path: str) -> CudaRuntime | None:
        return next((runtime for runtime in self.cuda_runtimes if runtime.path == path), None)

    def library_cudnn(self, path: str) -> Cudnn | None:
        return next((cudnn for cudnn in self.cudnns if cudnn.path == path), None)

    def library(self, path: str) -> LibraryCopy | None:
        """The copy of a catalog kind at ``path`` (as found, or the file it really is)."""
        return next((copy for copy in self.libraries if path in (copy.path, copy.real_path)), None)

    def resolution(self, name: str, context: str = "process") -> Resolution | None:
        return next((r for r in self.resolutions if r.name == name and r.context == context), None)


NO_TENSORFLOW = "no 'tensorflow' package on the Python path"


def _schema_3(data: dict[str, Any]) -> dict[str, Any]:
    """A snapshot of version 1 or 2 in version 3's shape: TensorFlow's build info, kept beside the frameworks then,
    moves into its entry among them (made from it where the snapshot has none, as TensorFlow was judged then)."""
    data = dict(data)
    tf = data.pop("tensorflow", None)
    if not isinstance(tf, dict) or tf.get("state") == State.ABSENT.value:
        return data
    frameworks = data.get("frameworks", [])
    if not isinstance(frameworks, list):
        return data  # decoding names the fault
    own = [build for build in frameworks if isinstance(build, dict) and build.get("name") == "tensorflow"]
    if own:
        data["frameworks"] = [{**build, "build_info": tf} if build is own[0] else build for build in frameworks]
        return data
    source = tf.get("build_info_path") or tf.get("location") or ""

    def fact(key: str) -> dict[str, Any] | None:
        return {"value": tf[key], "source": source, "how": key} if tf.get(key) else None

    made: dict[str, Any] = {
        "name": "tensorflow", "state": tf.get("state"), "reason": tf.get("reason"),
        "distribution": tf.get("distribution"), "version": tf.get("version"), "location": tf.get("location"),
        "is_cuda_build": tf.get("is_cuda_build"), "cuda": fact("cuda_version"), "cudnn": fact("cudnn_version"),
        "pins": [], "build_info": tf,
    }  # fmt: skip
    data["frameworks"] = [*frameworks, made]
    return data


class InvalidSnapshot(ValueError):
    """A snapshot file that cannot be replayed; the message names the file and the problem."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


def _check_devices(driver: Driver) -> None:
    """Refuse devices that cannot all be so at once, naming the field: each GPU has its own NVML index, each MIG
    device its own index and its own GPU and compute instance under its GPU, each device its own UUID, and none
    more memory free than it has. A copy-edited snapshot breaks these easily, and what follows from them goes
    wrong quietly: two devices of one UUID are named by none (CUDA_VISIBLE_DEVICES, and the UUID pytest-cudnn gives
    an xdist worker, then hide every device). Linear: each fact is looked up once in a dict."""
    indexes: dict[int, str] = {}
    uuids: dict[str, str] = {}
    for g, gpu in enumerate(driver.gpus):
        where = f"driver.gpus[{g}]"
        _once(indexes, gpu.index, f"{where}.index", "NVML numbers each GPU once")
        _once(uuids, gpu.uuid, f"{where}.uuid", _ONE_UUID)
        _within(gpu.memory_free, gpu.memory_total, where)
        mig_indexes: dict[int, str] = {}
        instances: dict[tuple[int, int], str] = {}
        for m, mig in enumerate(gpu.mig):
            at = f"{where}.mig[{m}]"
            _once(mig_indexes, mig.index, f"{at}.index", "NVML numbers each MIG device of a GPU once")
            _once(uuids, mig.uuid, f"{at}.uuid", _ONE_UUID)
            if mig.gpu_instance_id is not None and mig.compute_instance_id is not None:
                _once(
                    instances,
                    (mig.gpu_instance_id, mig.compute_instance_id),
                    f"{at}.compute_instance_id",
                    "a GPU instance's compute instance is one MIG device",
                )
            _within(mig.memory_free, mig.memory_total, at)


_ONE_UUID = "a UUID names one device (CUDA_VISIBLE_DEVICES, and pytest-cudnn for each xdist worker, name devices by it)"


def _once(seen: dict[Any, str], key: object, where: str, why: str) -> None:
    """Record that ``key`` sits at ``where``; a key already recorded elsewhere is refused, naming both places."""
    if key is None:
        return
    first = seen.setdefault(key, where)
    if first != where:
        shown = (
            f"GPU instance {key[0]}, compute instance {key[1]}"
            if isinstance(key, tuple)
            else repr(clip(key, 60))
            if isinstance(key, str)
            else str(key)
        )
        raise DecodeError(where, f"{shown} is also at {first}: {why}")


def _within(free: int | None, total: int | None, where: str) -> None:
    if free is not None and total is not None and free > total:
        raise DecodeError(
            f"{where}.memory_free",
            f"{clip(str(free), 30)} bytes free is more than memory_total, {clip(str(total), 30)} bytes",
        )


def _allowlisted(env: Environment) -> Environment:
    """Only the variables the probe itself would record. A hand-edited or foreign snapshot can hold others (keys,
    tokens), and whatever is replayed is printed by the doctor and written into reports: those are dropped, and a
    note names them, never their values."""
    allowed = ALLOWED_VARIABLES + (WINDOWS_ONLY_VARIABLES if env.host.system == "Windows" else ())
    ignored = {name for name in env.variables if name not in allowed}
    ignored |= {check.variable for check in env.paths if check.variable not in INSTALL_VARIABLES}
    if not ignored:
        return env
    names = [repr(name if len(name) <= 40 else name[:37] + "...") for name in sorted(ignored)]
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    said = (
        f"variable {shown} is not on pytest-cudnn's allowlist: ignored, and its value is not shown"
        if len(names) == 1
        else f"variables {shown} are not on pytest-cudnn's allowlist: ignored, and their values are not shown"
    )
    return replace(
        env,
        variables={name: value for name, value in env.variables.items() if name in allowed},
        paths=tuple(check for check in env.paths if check.variable in INSTALL_VARIABLES),
        notes=(*env.notes, f"the snapshot's {said}"),
    )


# Measured: a snapshot of 10,000 GPUs is 3.3 MB, 4.1 MB when each GPU records an NVML error. 16 MiB is four times
# that, and bounds what a wrong path (a log, an image) costs to parse: about 0.5 GB for 16 MiB of "[{},{},...]".
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024


def load_snapshot(path: str | Path) -> Environment:
    """Read a snapshot written by ``pytest-cudnn snapshot``: a regular UTF-8 JSON file of at most 16 MiB."""
    source = str(path)
    if not source:
        raise InvalidSnapshot("''", "an empty path names no snapshot file")
    try:
        data = read_json_document(
            source, MAX_SNAPSHOT_BYTES, "snapshot", ": write it with -o FILE, not a shell redirection"
        )
    except DocumentRefused as refused:
        raise InvalidSnapshot(source, str(refused)) from None
    return Environment.from_json(data, source)
