"""The native probes. Each function runs in a disposable child process (see isolation.py), never in pytest's.

Every function takes a job description and returns plain JSON values. A vendor library may still abort,
crash or hang inside a call: the isolation layer turns that into a recorded error naming the library.
Libraries are only ever loaded by absolute path, or by a bare soname that the loader resolves
with the sanitised LD_LIBRARY_PATH the child was given; never from a relative path.
"""

from __future__ import annotations

import ctypes
import os
import sys

from .protocol import NOT_THE_LIBRARY, UNLOADABLE

__all__ = ["JOBS", "loaded_path", "missing_libraries"]

TYPE_CHECKING = False  # as in isolation.py: the child does not import typing (nor collections.abc, 2 ms)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    from .protocol import (
        CudaAnswer,
        CudaJob,
        CudartAnswer,
        CudartJob,
        CudnnAnswer,
        CudnnJob,
        GpuAnswer,
        HealthAnswer,
        JaxVersionsAnswer,
        JaxVersionsJob,
        LibraryAnswer,
        LibraryJob,
        MigAnswer,
        NvmlAnswer,
        NvmlJob,
        Outcome,
        PairAnswer,
        PathfinderAnswer,
        PathfinderJob,
        PathfinderLibrary,
        ResolveAnswer,
        ResolveJob,
        Runners,
    )

    T = TypeVar("T")

_WINDOWS = sys.platform.startswith("win")


def loaded_path(library: ctypes.CDLL) -> str | None:
    """The file the loader actually mapped for ``library``.

    Linux: dlinfo(RTLD_DI_LINKMAP) gives the link_map, whose second member l_name is the path as opened
    (dlinfo(3)). Windows: GetModuleFileNameW on the module handle.
    """
    handle = library._handle
    if _WINDOWS:  # pragma: no cover - exercised on Windows only
        buffer = ctypes.create_unicode_buffer(32768)
        if ctypes.windll.kernel32.GetModuleFileNameW(ctypes.c_void_p(handle), buffer, 32768):  # type: ignore[attr-defined]
            return buffer.value
        return None

    class LinkMap(ctypes.Structure):
        _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]

    rtld_di_linkmap = 2
    for libname in (None, "libdl.so.2"):
        try:
            dlinfo = ctypes.CDLL(libname).dlinfo
        except (OSError, AttributeError):
            continue
        dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        dlinfo.restype = ctypes.c_int
        pointer = ctypes.POINTER(LinkMap)()
        if dlinfo(ctypes.c_void_p(handle), rtld_di_linkmap, ctypes.byref(pointer)) == 0 and pointer:
            name = pointer.contents.l_name
            return os.fsdecode(name) if name else None
    return None


def _load(path: str) -> ctypes.CDLL:
    if not (os.path.isabs(path) or (os.sep not in path and "/" not in path)):
        raise ValueError(f"refusing to load a relative path: {path!r}")
    return ctypes.CDLL(path)


def _opened(path: str, failed: Outcome) -> ctypes.CDLL | None:
    """The library at ``path``, loaded; None, with ``failed`` saying why, where the loader refuses it."""
    try:
        return _load(path)
    except OSError as error:
        _unloadable(path, error, failed)
        return None


def _unloadable(path: str, error: OSError, answer: Outcome) -> None:
    """dlopen refused the file: a damaged or foreign file, a link loop, no permission, a dependency it cannot
    find. ctypes' OSError carries dlerror(3), the loader's own words, which name the file at fault."""
    answer["error"] = f"{path}: OSError: {error}"
    answer["failure"] = UNLOADABLE
    missing = missing_libraries(str(error), own_names(path))
    if missing:
        answer["missing"] = missing


# glibc's loader says "<name>: cannot open shared object file: <reason>" for a library it could not open
# (elf/dl-load.c, _dl_map_object); cuDNN 8 repeats it when a sub-library's dependency fails: "Could not load
# library libcudnn_ops_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file or directory".
_CANNOT_OPEN = ": cannot open shared object file"


def missing_libraries(text: str, own: Sequence[str] = ()) -> list[str]:
    """The libraries ``text`` (dlerror(3), or what a library printed) says could not be opened, by file name,
    once each, in order; names in ``own`` (the library probed, which may itself be the file at fault) are left
    out. String scanning only: the child does not import re.

    >>> missing_libraries("Could not load library libcudnn_ops_infer.so.8. Error: libnvrtc.so: cannot open "
    ...                   "shared object file: No such file or directory")
    ['libnvrtc.so']
    """
    names: list[str] = []
    at = text.find(_CANNOT_OPEN)
    while at >= 0:
        head = text[:at]
        start = max(head.rfind(separator) for separator in " \t\n'\"") + 1
        name = head[start:].rsplit("/", 1)[-1]
        if name and name not in own and name not in names:
            names.append(name)
        at = text.find(_CANNOT_OPEN, at + len(_CANNOT_OPEN))
    return names


def own_names(path: str) -> tuple[str, ...]:
    """The file names a library answers to: its own, and the one its links end at."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = path
    return (os.path.basename(path), os.path.basename(real))


def _function(library: ctypes.CDLL, name: str, restype: Any, *argtypes: Any) -> Callable[..., Any] | None:
    try:
        function = getattr(library, name)
    except AttributeError:
        return None
    function.restype = restype
    function.argtypes = list(argtypes)
    return function  # type: ignore[no-any-return]


def _text(value: bytes | None) -> str | None:
    return value.decode("utf-8", "replace") if value is not None else None


class NvmlError(Exception):
    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code


# NVML's own texts for the codes the library may not be there to describe (nvml.h, nvmlReturn_t).
_NVML_TEXTS = {9: "Driver Not Loaded", 12: "NVML Shared Library Not Found", 13: "Function Not Found"}


class _Nvml:
    """NVML through ctypes, calling the same versioned entry points nvidia-ml-py calls.

    The probe does not import pynvml: importing it costs the child 24-50 ms, more than all the NVML calls of a
    16-GPU host together (about 1 ms). The ``gpu`` fixture, which runs in the test process, uses pynvml.
    """

    def __init__(self) -> None:
        self.library = self._load()

    @staticmethod
    def _load() -> ctypes.CDLL:
        # As nvidia-ml-py: libnvidia-ml.so.1 by soname on Linux; on Windows System32 first (DCH drivers), then
        # the NVSMI folder of older drivers.
        if not _WINDOWS:
            candidates = ["libnvidia-ml.so.1"]
        else:  # pragma: no cover - Windows only
            windir = os.environ.get("WINDIR", "C:\\Windows")
            program_files = os.environ.get("PROGRAMFILES", "C:\\Program Files")
            candidates = [
                os.path.join(windir, "System32", "nvml.dll"),
                os.path.join(program_files, "NVIDIA Corporation", "NVSMI", "nvml.dll"),
            ]
        for candidate in candidates:
            try:
                return ctypes.CDLL(candidate)
            except OSError:
                continue
        raise NvmlError(12, _NVML_TEXTS[12])

    def text(self, code: int) -> str:
        describe = _function(self.library, "nvmlErrorString", ctypes.c_char_p, ctypes.c_int)
        text = _text(describe(code)) if describe is not None else None
        return text or _NVML_TEXTS.get(code, f"NVML error {code}")

    def call(self, name: str, *args: Any) -> None:
        function = getattr(self.library, name, None)
        if function is None:
            raise NvmlError(13, f"{_NVML_TEXTS[13]}: {name}")
        code = function(*args)
        if code != 0:
            raise NvmlError(code, self.text(code))

    def string(self, name: str, *args: Any, size: int = 96) -> str:
        buffer = ctypes.create_string_buffer(size)
        self.call(name, *args, buffer, ctypes.c_uint(size))
        return _text(buffer.value) or ""


class _PciInfo(ctypes.Structure):  # nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it
    _fields_ = [
        ("busIdLegacy", ctypes.c_char * 16),
        ("domain", ctypes.c_uint),
        ("bus", ctypes.c_uint),
        ("device", ctypes.c_uint),
        ("pciDeviceId", ctypes.c_uint),
        ("pciSubSystemId", ctypes.c_uint),
        ("busId", ctypes.c_char * 32),
    ]


class _Memory(ctypes.Structure):  # nvmlMemory_t (v1), as nvmlDeviceGetMemoryInfo fills it
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def _attempt(key: str, call: Callable[[], T], failures: list[str]) -> T | None:
    """``call()``, or None with its NVML error in ``failures``: one failing call costs only its own fact."""
    try:
        return call()
    except NvmlError as error:
        failures.append(f"{key}: {error}")
        return None


def _memory(nvml: _Nvml, handle: ctypes.c_void_p) -> tuple[int, int]:
    info = _Memory()
    nvml.call("nvmlDeviceGetMemoryInfo", handle, ctypes.byref(info))
    return int(info.total), int(info.free)


def _pci_bus_id(nvml: _Nvml, handle: ctypes.c_void_p) -> str:
    info = _PciInfo()
    nvml.call("nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(info))
    return _text(info.busId) or ""


def _compute_capability(nvml: _Nvml, handle: ctypes.c_void_p) -> str:
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvml.call("nvmlDeviceGetCudaComputeCapability", handle, ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


# NVML's answers that mean the GPU or driver has no such fact, not that reading it failed: NOT_SUPPORTED and
# FUNCTION_NOT_FOUND (a driver older than the call).
_UNSUPPORTED = (3, 13)
_NVLINK_MAX_LINKS = 18  # nvml.h NVML_NVLINK_MAX_LINKS


def _uint(nvml: _Nvml, name: str, handle: ctypes.c_void_p, *before: Any, kind: Any = ctypes.c_uint) -> int:
    """The number ``name(handle, *before, &value)`` answers: an ``unsigned int`` (or enum), or ``kind``."""
    value = kind()
    nvml.call(name, handle, *before, ctypes.byref(value))
    return int(value.value)


def _ulonglong(nvml: _Nvml, name: str, handle: ctypes.c_void_p, *before: Any) -> int:
    return _uint(nvml, name, handle, *before, kind=ctypes.c_ulonglong)


def _ecc_mode(nvml: _Nvml, handle: ctypes.c_void_p) -> bool:
    current, pending = ctypes.c_uint(), ctypes.c_uint()
    nvml.call("nvmlDeviceGetEccMode", handle, ctypes.byref(current), ctypes.byref(pending))
    return bool(current.value)


def _remapped_rows(nvml: _Nvml, handle: ctypes.c_void_p) -> tuple[bool, bool]:
    corrected, uncorrected, pending, failure = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    refs = (ctypes.byref(corrected), ctypes.byref(uncorrected), ctypes.byref(pending), ctypes.byref(failure))
    nvml.call("nvmlDeviceGetRemappedRows", handle, *refs)
    return bool(pending.value), bool(failure.value)


def _nvlinks(nvml: _Nvml, handle: ctypes.c_void_p) -> int:
    """The active links: NOT_SUPPORTED on the first link is a GPU without NVLink; past its last link, INVALID_ARGUMENT
    or NOT_SUPPORTED end the count."""
    active = 0
    for link in range(_NVLINK_MAX_LINKS):
        try:
            active += _uint(nvml, "nvmlDeviceGetNvLinkState", handle, ctypes.c_uint(link))
        except NvmlError as error:
            if link == 0 or error.code not in (2, *_UNSUPPORTED):
                raise
            break
    return active


# The state of a GPU (issue 32), call by call: (the answer's key, what reads it). Read only; nothing is set.
_HEALTH: tuple[tuple[str, Callable[[_Nvml, ctypes.c_void_p], Any]], ...] = (
    ("compute_mode", lambda nvml, h: _uint(nvml, "nvmlDeviceGetComputeMode", h)),
    ("persistence", lambda nvml, h: bool(_uint(nvml, "nvmlDeviceGetPersistenceMode", h))),
    ("ecc", _ecc_mode),
    # NVML_MEMORY_ERROR_TYPE_UNCORRECTED (1); NVML_VOLATILE_ECC (0), NVML_AGGREGATE_ECC (1)
    ("ecc_uncorrected_volatile", lambda nvml, h: _ulonglong(nvml, "nvmlDeviceGetTotalEccErrors", h, 1, 0)),
    ("ecc_uncorrected_aggregate", lambda nvml, h: _ulonglong(nvml, "nvmlDeviceGetTotalEccErrors", h, 1, 1)),
    ("retired_pages_pending", lambda nvml, h: bool(_uint(nvml, "nvmlDeviceGetRetiredPagesPendingStatus", h))),
    ("remapped_rows", _remapped_rows),
    ("clocks_event_reasons", lambda nvml, h: _ulonglong(nvml, "nvmlDeviceGetCurrentClocksEventReasons", h)),
    ("temperature", lambda nvml, h: _uint(nvml, "nvmlDeviceGetTemperature", h, 0)),  # NVML_TEMPERATURE_GPU
    # NVML_TEMPERATURE_THRESHOLD_SLOWDOWN (1)
    ("slowdown_temperature", lambda nvml, h: _uint(nvml, "nvmlDeviceGetTemperatureThreshold", h, 1)),
    ("pcie_generation", lambda nvml, h: _uint(nvml, "nvmlDeviceGetCurrPcieLinkGeneration", h)),
    ("pcie_generation_max", lambda nvml, h: _uint(nvml, "nvmlDeviceGetMaxPcieLinkGeneration", h)),
    ("pcie_width", lambda nvml, h: _uint(nvml, "nvmlDeviceGetCurrPcieLinkWidth", h)),
    ("pcie_width_max", lambda nvml, h: _uint(nvml, "nvmlDeviceGetMaxPcieLinkWidth", h)),
    ("nvlinks_active", _nvlinks),
)


def _health(nvml: _Nvml, handle: ctypes.c_void_p, errors: list[str]) -> HealthAnswer:
    """The GPU's state; a call NVML does not support for it is named in ``unsupported``, never an error."""
    health: dict[str, Any] = {}
    unsupported: list[str] = []
    for key, read in _HEALTH:
        try:
            value = read(nvml, handle)
        except NvmlError as error:
            if error.code in _UNSUPPORTED:
                unsupported.append(key)
            else:
                errors.append(f"{key}: {error}")
            continue
        if key == "remapped_rows":
            health["remap_pending"], health["remap_failure"] = value
        else:
            health[key] = value
    health["unsupported"] = unsupported
    return health  # type: ignore[return-value]


# How two GPUs reach each other, call by call: (the answer's key, the call, its arguments between the two handles
# and the answer).
_PAIR_CALLS: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("topology", "nvmlDeviceGetTopologyCommonAncestor", ()),
    ("p2p_read", "nvmlDeviceGetP2PStatus", (0,)),
    ("p2p_write", "nvmlDeviceGetP2PStatus", (1,)),
    ("p2p_nvlink", "nvmlDeviceGetP2PStatus", (2,)),
)


def _pairs(nvml: _Nvml, handles: Sequence[tuple[int, ctypes.c_void_p]]) -> list[PairAnswer]:
    """Every pair of GPUs: their common ancestor and P2P status (nvmlGpuP2PCapsIndex_t READ 0, WRITE 1, NVLINK 2).
    A value NVML does not give is left out."""
    pairs: list[PairAnswer] = []
    for at, (first, one) in enumerate(handles):
        for second, other in handles[at + 1 :]:
            pair: PairAnswer = {"first": first, "second": second}
            for key, name, before in _PAIR_CALLS:
                value = ctypes.c_int()
                try:
                    nvml.call(name, one, other, *before, ctypes.byref(value))
                except NvmlError:
                    continue
                pair[key] = int(value.value)  # type: ignore[literal-required]
            pairs.append(pair)
    return pairs


def _gpu(nvml: _Nvml, handle: ctypes.c_void_p, index: int) -> GpuAnswer:
    """One GPU's facts, call by call, then its MIG mode and devices."""
    gpu: GpuAnswer = {"index": index}
    errors: list[str] = []
    if (name := _attempt("name", lambda: nvml.string("nvmlDeviceGetName", handle), errors)) is not None:
        gpu["name"] = name
    if (uuid := _attempt("uuid", lambda: nvml.string("nvmlDeviceGetUUID", handle), errors)) is not None:
        gpu["uuid"] = uuid
    if (bus := _attempt("pci_bus_id", lambda: _pci_bus_id(nvml, handle), errors)) is not None:
        gpu["pci_bus_id"] = bus
    if (capability := _attempt("compute_capability", lambda: _compute_capability(nvml, handle), errors)) is not None:
        gpu["compute_capability"] = capability
    if (memory := _attempt("memory", lambda: _memory(nvml, handle), errors)) is not None:
        gpu["memory_total"], gpu["memory_free"] = memory
    _mig(nvml, handle, gpu, errors)
    gpu["health"] = _health(nvml, handle, errors)
    if errors:
        gpu["error"] = "; ".join(errors)
    return gpu


class _Attributes(ctypes.Structure):  # nvmlDeviceAttributes_t, as nvmlDeviceGetAttributes_v2 fills it
    _fields_ = [
        ("multiprocessorCount", ctypes.c_uint),
        ("sharedCopyEngineCount", ctypes.c_uint),
        ("sharedDecoderCount", ctypes.c_uint),
        ("sharedEncoderCount", ctypes.c_uint),
        ("sharedJpegCount", ctypes.c_uint),
        ("sharedOfaCount", ctypes.c_uint),
        ("gpuInstanceSliceCount", ctypes.c_uint),
        ("computeInstanceSliceCount", ctypes.c_uint),
        ("memorySizeMB", ctypes.c_ulonglong),
    ]


# nvml.h, nvmlReturn_t: NVML_ERROR_NOT_SUPPORTED (a GPU without MIG), NVML_ERROR_NOT_FOUND (no MIG device at an
# index), NVML_ERROR_FUNCTION_NOT_FOUND (a driver older than the MIG API, R450).
_NOT_SUPPORTED, _NOT_FOUND, _FUNCTION_NOT_FOUND = 3, 6, 13
_MIG_ENABLE = 1  # NVML_DEVICE_MIG_ENABLE


def _instance_id(nvml: _Nvml, handle: ctypes.c_void_p, call: str) -> int:
    value = ctypes.c_uint()
    nvml.call(call, handle, ctypes.byref(value))
    return value.value


def _attributes(nvml: _Nvml, handle: ctypes.c_void_p) -> tuple[int, int, int]:
    info = _Attributes()
    nvml.call("nvmlDeviceGetAttributes_v2", handle, ctypes.byref(info))
    return int(info.gpuInstanceSliceCount), int(info.computeInstanceSliceCount), int(info.multiprocessorCount)


def _mig_device(nvml: _Nvml, handle: ctypes.c_void_p, index: int) -> MigAnswer:
    """A MIG device's facts, read through its own handle (the same calls as a GPU's, and its instance ids)."""
    mig: MigAnswer = {"index": index}
    errors: list[str] = []
    if (uuid := _attempt("uuid", lambda: nvml.string("nvmlDeviceGetUUID", handle), errors)) is not None:
        mig["uuid"] = uuid
    if (name := _attempt("name", lambda: nvml.string("nvmlDeviceGetName", handle), errors)) is not None:
        mig["name"] = name
    gpu_instance = _attempt("gpu_instance_id", lambda: _instance_id(nvml, handle, "nvmlDeviceGetGpuInstanceId"), errors)
    if gpu_instance is not None:
        mig["gpu_instance_id"] = gpu_instance
    compute_instance = _attempt(
        "compute_instance_id", lambda: _instance_id(nvml, handle, "nvmlDeviceGetComputeInstanceId"), errors
    )
    if compute_instance is not None:
        mig["compute_instance_id"] = compute_instance
    if (attributes := _attempt("attributes", lambda: _attributes(nvml, handle), errors)) is not None:
        mig["gpu_slices"], mig["compute_slices"], mig["multiprocessors"] = attributes
    if (memory := _attempt("memory", lambda: _memory(nvml, handle), errors)) is not None:
        mig["memory_total"], mig["memory_free"] = memory
    if errors:
        mig["error"] = "; ".join(errors)
    return mig


def _mig(nvml: _Nvml, handle: ctypes.c_void_p, gpu: GpuAnswer, errors: list[str]) -> None:
    """MIG mode and, when it is on, every MIG device of one GPU. A GPU or driver without MIG says nothing."""
    current, pending = ctypes.c_uint(), ctypes.c_uint()
    try:
        nvml.call("nvmlDeviceGetMigMode", handle, ctypes.byref(current), ctypes.byref(pending))
    except NvmlError as error:
        if error.code not in (_NOT_SUPPORTED, _FUNCTION_NOT_FOUND):
            errors.append(f"mig_mode: {error}")
        return
    gpu["mig_mode"] = current.value == _MIG_ENABLE
    if pending.value != current.value:
        gpu["mig_pending"] = pending.value == _MIG_ENABLE
    if current.value != _MIG_ENABLE:
        return
    count = ctypes.c_uint()
    try:
        nvml.call("nvmlDeviceGetMaxMigDeviceCount", handle, ctypes.byref(count))
    except NvmlError as error:
        errors.append(f"nvmlDeviceGetMaxMigDeviceCount: {error}")
        return
    devices: list[MigAnswer] = []
    for index in range(count.value):
        device = ctypes.c_void_p()
        try:
            nvml.call("nvmlDeviceGetMigDeviceHandleByIndex", handle, ctypes.c_uint(index), ctypes.byref(device))
        except NvmlError as error:
            if error.code != _NOT_FOUND:  # an index with no MIG device behind it: slots are sparse
                errors.append(f"nvmlDeviceGetMigDeviceHandleByIndex({index}): {error}")
            continue
        devices.append(_mig_device(nvml, device, index))
    gpu["mig"] = devices


def _cuda_version(nvml: _Nvml) -> int:
    value = ctypes.c_int()
    nvml.call("nvmlSystemGetCudaDriverVersion", ctypes.byref(value))
    return value.value


def probe_nvml(job: NvmlJob) -> NvmlAnswer:
    """The driver and every GPU through NVML. Each GPU's facts are read call by call so one failing call (or a
    device failing half-way through the list) costs only that fact. Error texts are NVML's own
    (nvmlErrorString)."""
    gpus: list[GpuAnswer] = []
    result: NvmlAnswer = {"gpus": gpus}
    try:
        nvml = _Nvml()
    except NvmlError as error:
        return {**result, "state": "absent", "reason": str(error), "nvml_error": error.code}
    result["path"] = loaded_path(nvml.library)
    try:
        nvml.call("nvmlInitWithFlags", ctypes.c_uint(0))
    except NvmlError as error:
        return {**result, "state": "error", "reason": str(error), "nvml_error": error.code}
    result["state"] = "found"
    errors: list[str] = []
    if (version := _attempt("version", lambda: nvml.string("nvmlSystemGetDriverVersion", size=80), errors)) is not None:
        result["version"] = version
    nvml_version = _attempt("nvml_version", lambda: nvml.string("nvmlSystemGetNVMLVersion", size=80), errors)
    if nvml_version is not None:
        result["nvml_version"] = nvml_version
    if (cuda_version := _attempt("cuda_version_raw", lambda: _cuda_version(nvml), errors)) is not None:
        result["cuda_version_raw"] = cuda_version
    count = ctypes.c_uint()
    try:
        nvml.call("nvmlDeviceGetCount_v2", ctypes.byref(count))
    except NvmlError as error:
        return {**result, "state": "error", "reason": f"nvmlDeviceGetCount: {error}", "nvml_error": error.code}
    handles: list[tuple[int, ctypes.c_void_p]] = []
    for index in range(count.value):
        handle = ctypes.c_void_p()
        try:
            nvml.call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
        except NvmlError as error:
            gpus.append({"index": index, "error": f"nvmlDeviceGetHandleByIndex({index}): {error}"})
            continue
        gpus.append(_gpu(nvml, handle, index))
        handles.append((index, handle))
    if len(handles) > 1:
        result["pairs"] = _pairs(nvml, handles)
    if errors:
        result["reason"] = "; ".join(errors)
    try:  # noqa: SIM105 - contextlib is not imported in the child
        nvml.call("nvmlShutdown")
    except NvmlError:
        pass
    return result


def probe_cuda_driver(job: CudaJob) -> CudaAnswer:
    """libcuda as the loader finds it: cuDriverGetVersion, then cuInit and cuDeviceGetCount.

    cuInit creates no context (CUDA Driver API, "Initialization"); this runs in a throwaway process anyway.
    """
    name = job["name"]
    try:
        library = _load(name)
    except OSError as error:
        return {"state": "absent", "reason": str(error)}
    result: CudaAnswer = {"state": "found", "path": loaded_path(library)}
    get_version = _function(library, "cuDriverGetVersion", ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    if get_version is None:
        return {**result, "state": "error", "reason": f"{name} has no cuDriverGetVersion: not a CUDA driver library"}
    version = ctypes.c_int(0)
    status = get_version(ctypes.byref(version))
    if status == 0:
        result["version_raw"] = version.value
    else:
        result["state"], result["reason"] = "error", f"cuDriverGetVersion returned {status}"
    init = _function(library, "cuInit", ctypes.c_int, ctypes.c_uint)
    if init is not None:
        result["init_status"] = init(0)
        count_function = _function(library, "cuDeviceGetCount", ctypes.c_int, ctypes.POINTER(ctypes.c_int))
        if result["init_status"] == 0 and count_function is not None:
            count = ctypes.c_int(0)
            if count_function(ctypes.byref(count)) == 0:
                result["device_count"] = count.value
    return result


def probe_cudart(job: CudartJob) -> CudartAnswer:
    """One CUDA runtime by absolute path. cudaGetDeviceCount leaves its output untouched on error, so the
    count is read only when the status is 0 (field notes; CUDA Runtime API)."""
    failed: CudartAnswer = {}
    library = _opened(job["path"], failed)
    if library is None:
        return failed
    result: CudartAnswer = {"loaded": loaded_path(library)}
    version = ctypes.c_int(0)
    runtime_version = _function(library, "cudaRuntimeGetVersion", ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    if runtime_version is None:
        return {**result, "error": "no cudaRuntimeGetVersion symbol: not a CUDA runtime", "failure": NOT_THE_LIBRARY}
    status = runtime_version(ctypes.byref(version))
    if status == 0:
        result["version_raw"] = version.value
    driver_function = _function(library, "cudaDriverGetVersion", ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    if driver_function is not None:
        driver = ctypes.c_int(-1)
        if driver_function(ctypes.byref(driver)) == 0:
            result["driver_version_raw"] = driver.value
    count_function = _function(library, "cudaGetDeviceCount", ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    error_string = _function(library, "cudaGetErrorString", ctypes.c_char_p, ctypes.c_int)
    if count_function is not None:
        count = ctypes.c_int(-1)
        status = count_function(ctypes.byref(count))
        result["device_count_status"] = status
        if status == 0:
            result["device_count"] = count.value
        elif error_string is not None:
            result["device_count_error"] = _text(error_string(status))
    return result


def probe_cudnn(job: CudnnJob) -> CudnnAnswer:
    """One cuDNN by absolute path: version (by property, so neither integer encoding matters), the CUDA
    runtime it was built for, and whether a handle can be created. A front library whose sub-libraries are
    missing aborts the process on the first call (field notes): that is why this runs in a child."""
    failed: CudnnAnswer = {}
    library = _opened(job["path"], failed)
    if library is None:
        return failed
    result: CudnnAnswer = {"loaded": loaded_path(library)}
    get_version = _function(library, "cudnnGetVersion", ctypes.c_size_t)
    if get_version is None:
        return {**result, "error": "no cudnnGetVersion symbol: not a cuDNN library", "failure": NOT_THE_LIBRARY}
    result["version_raw"] = int(get_version())
    get_property = _function(library, "cudnnGetProperty", ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    if get_property is not None:
        parts = []
        for kind in (0, 1, 2):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL (libraryPropertyType)
            value = ctypes.c_int(-1)
            if get_property(kind, ctypes.byref(value)) != 0:
                break
            parts.append(value.value)
        if len(parts) == 3:
            result["property_version"] = parts
    cudart = _function(library, "cudnnGetCudartVersion", ctypes.c_size_t)
    if cudart is not None:
        result["cudart_version_raw"] = int(cudart())
    error_string = _function(library, "cudnnGetErrorString", ctypes.c_char_p, ctypes.c_int)
    create = _function(library, "cudnnCreate", ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
    if create is not None:
        handle = ctypes.c_void_p()
        status = create(ctypes.byref(handle))
        result["create_status"] = status
        if error_string is not None:
            result["create_error"] = _text(error_string(status))
        last = _function(library, "cudnnGetLastErrorString", None, ctypes.c_char_p, ctypes.c_size_t)
        if status != 0 and last is not None:
            buffer = ctypes.create_string_buffer(1024)
            last(buffer, ctypes.c_size_t(1024))
            result["last_error"] = _text(buffer.value) or None
        if status == 0:
            destroy = _function(library, "cudnnDestroy", ctypes.c_int, ctypes.c_void_p)
            if destroy is not None:
                destroy(handle)
    return result


def probe_library(job: LibraryJob) -> LibraryAnswer:
    """One copy of a catalog kind by absolute path, asked its version through its own call (``job["shape"]``: a
    version code, ncclGetVersion; or three library properties, cublasGetProperty) and, where it has one, the CUDA
    runtime it was built with. Nothing else is called: neither call touches a GPU."""
    failed: LibraryAnswer = {}
    library = _opened(job["path"], failed)
    if library is None:
        return failed
    result: LibraryAnswer = {"loaded": loaded_path(library)}
    properties = job["shape"] == "properties"
    argtypes = (ctypes.c_int, ctypes.POINTER(ctypes.c_int)) if properties else (ctypes.POINTER(ctypes.c_int),)
    call = _function(library, job["call"], ctypes.c_int, *argtypes)
    if call is None:
        return {**result, "error": f"no {job['call']} symbol: not the library", "failure": NOT_THE_LIBRARY}
    parts = []
    for kind in (0, 1, 2) if properties else (None,):
        value = ctypes.c_int(-1)
        status = call(kind, ctypes.byref(value)) if properties else call(ctypes.byref(value))
        result["status"] = status
        if status != 0:
            break
        parts.append(value.value)
    if properties and len(parts) == 3:
        result["parts"] = parts
    elif not properties and parts:
        result["version_raw"] = parts[0]
    cuda = _function(library, job["cuda_call"], ctypes.c_size_t) if job["cuda_call"] else None
    if cuda is not None:
        result["cuda_raw"] = int(cuda())
    return result


def probe_resolve(job: ResolveJob) -> ResolveAnswer:
    """What a plain dlopen of a bare name loads in this environment: the loader's own answer."""
    try:
        library = ctypes.CDLL(job["name"])
    except OSError as error:
        return {"loaded": None, "error": str(error)}
    return {"loaded": loaded_path(library)}


def probe_jax_versions(job: JaxVersionsJob) -> JaxVersionsAnswer:
    """The build versions JAX's CUDA plugin records only in its compiled ``jax_cudaNN_plugin._versions`` module,
    loaded from its file alone (the package's __init__ is not run): cuda_runtime_build_version() (12090) and
    cudnn_build_version() (90800). It maps no CUDA library."""
    import importlib.util

    name = job["module"]
    spec = importlib.util.spec_from_file_location(name, job["path"])
    if spec is None or spec.loader is None:
        return {"error": f"{job['path']}: not a Python extension module"}
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cuda, cudnn = module.cuda_runtime_build_version(), module.cudnn_build_version()
    return {
        "cuda_runtime_build_version": cuda if isinstance(cuda, int) else None,
        "cudnn_build_version": cudnn if isinstance(cudnn, int) else None,
    }


def probe_pathfinder(job: PathfinderJob) -> PathfinderAnswer:
    """CuPy's locator, NVIDIA's ``cuda.pathfinder``, run as CuPy runs it: ``load_nvidia_dynamic_lib(name)`` for each
    name in order, in one process (a library's dependencies are loaded first, and a copy already loaded serves
    later requests). Each answer: the file it loaded and how it was found (``found_via``), or its error.

    pathfinder's site-packages step reads site.getsitepackages() and the user site. This child runs without site
    (-S), where a distribution's Python may answer other folders (Debian's Python 3.12 in a venv answered /usr's
    dist-packages, seen on the lent H100): the caller's own list, user site included, is handed over and is what
    site.getsitepackages() answers here."""
    import site

    folders = [folder for folder in job.get("site_dirs") or () if isinstance(folder, str)]
    site.getsitepackages = lambda prefixes=None: list(folders)
    site.ENABLE_USER_SITE = False  # already in the list, where pathfinder would put it
    from cuda import pathfinder  # type: ignore[import-not-found, import-untyped, unused-ignore]

    answers: dict[str, PathfinderLibrary] = {}
    for name in job["names"]:
        try:
            found = pathfinder.load_nvidia_dynamic_lib(name)
        except Exception as error:  # DynamicLibNotFoundError and whatever else the search raised: its own words
            answers[name] = {"error": f"{error.__class__.__name__}: {str(error)[:_PATHFINDER_ERROR]}"}
            continue
        answers[name] = {
            "abs_path": getattr(found, "abs_path", None),
            "found_via": getattr(found, "found_via", None),
            "was_already_loaded_from_elsewhere": getattr(found, "was_already_loaded_from_elsewhere", None),
        }
    return {"version": getattr(pathfinder, "__version__", None), "libraries": answers}


# pathfinder's "not found" error lists every folder it looked in, with their files: the head says what it sought.
_PATHFINDER_ERROR = 600


# The function for each kind of job (protocol.Runners: mypy holds each to its job and answer, and every kind to one).
JOBS: Runners = {
    "nvml": probe_nvml,
    "cuda": probe_cuda_driver,
    "cudart": probe_cudart,
    "cudnn": probe_cudnn,
    "resolve": probe_resolve,
    "jax_versions": probe_jax_versions,
    "pathfinder": probe_pathfinder,
    "library": probe_library,
}
