"""Every vendor call the product makes, made once on this machine, with what each one returned: the record that
compares NVIDIA's own libraries with the stand-ins, call by call (tests/test_vendor_calls.py).

    python tests/vendorcalls.py DOCTOR_JSON > calls.json

DOCTOR_JSON is ``pytest-cudnn doctor --json`` from the same environment: the CUDA runtimes and cuDNNs it found are
the copies called. Two parts:

- ``jobs``: the product's own probe jobs (pytest_cudnn.native.calls), each in its own process, answers as the
  product reads them;
- ``calls``: the raw calls under them and the live ones the ``gpu`` fixture makes, one row each: return code and
  value, the error paths too (an index past the last GPU, an unknown UUID, a buffer too small, MIG calls on a GPU
  with MIG off, shutting NVML down twice), while another process holds a CUDA context on device 0.

GPU and MIG UUIDs are replaced by numbered ones and process names cut to their file name: the record is committed
(``tests/data/real-gpu/``). Every call runs in a child process bounded by a timeout.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0
_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")

# A process that holds a CUDA context on device 0 until its standard input closes: what NVML then lists.
HOLDER = """
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
context = ctypes.c_void_p()
status = cuda.cuInit(0) or cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0)
print(status, flush=True)
sys.stdin.read()
"""


def redacted(value: Any, numbers: dict[str, str] | None = None) -> Any:
    """``value`` with every GPU and MIG UUID replaced by a numbered one (the same UUID, the same number)."""
    numbers = {} if numbers is None else numbers

    def number(match: re.Match[str]) -> str:
        seen = numbers.setdefault(match.group(0).lower(), f"{len(numbers) + 1:012d}")
        return f"{match.group(1)}-00000000-0000-0000-0000-{seen}"

    if isinstance(value, str):
        return _UUID.sub(number, value)
    if isinstance(value, list):
        return [redacted(item, numbers) for item in value]
    if isinstance(value, dict):
        return {key: redacted(item, numbers) for key, item in value.items()}
    return value


class _Calls:
    """Rows of ``{"call", "rc", "value"}``; a function the library lacks is ``"rc": "missing"``."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def call(
        self, library: ctypes.CDLL, label: str, name: str, args: list[Any], read: Callable[[], Any] = lambda: None
    ) -> int | None:
        function = getattr(library, name, None)
        if function is None:
            self.rows.append({"call": label, "rc": "missing"})
            return None
        function.restype = ctypes.c_int
        code = int(function(*args))
        row: dict[str, Any] = {"call": label, "rc": code}
        if code == 0:
            row["value"] = read()
        self.rows.append(row)
        return code

    def value(self, library: ctypes.CDLL, label: str, name: str, restype: Any, args: list[Any]) -> Any:
        function = getattr(library, name, None)
        if function is None:
            self.rows.append({"call": label, "rc": "missing"})
            return None
        function.restype = restype
        value = function(*args)
        value = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        self.rows.append({"call": label, "value": value})
        return value


def _value(number: Any) -> Any:
    return number.value


def _text(buffer: Any) -> str:
    """A C string: a ctypes buffer's, or a structure's char array (ctypes gives that one as bytes)."""
    return bytes(buffer if isinstance(buffer, bytes) else buffer.value).decode("utf-8", "replace")


def _nvml(calls: _Calls, holder: int | None) -> None:
    from pytest_cudnn.native.calls import _Attributes, _Memory, _PciInfo  # the product's own structures

    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    calls.call(nvml, "nvmlInitWithFlags(0)", "nvmlInitWithFlags", [ctypes.c_uint(0)])
    for name in ("nvmlSystemGetDriverVersion", "nvmlSystemGetNVMLVersion"):
        text = ctypes.create_string_buffer(80)
        calls.call(nvml, f"{name}(80)", name, [text, ctypes.c_uint(80)], partial(_text, text))
    small = ctypes.create_string_buffer(4)
    calls.call(nvml, "nvmlSystemGetDriverVersion(4)", "nvmlSystemGetDriverVersion", [small, ctypes.c_uint(4)])
    for name in ("nvmlSystemGetCudaDriverVersion", "nvmlSystemGetCudaDriverVersion_v2"):
        number = ctypes.c_int()
        calls.call(nvml, f"{name}()", name, [ctypes.byref(number)], partial(_value, number))
    count = ctypes.c_uint()
    calls.call(nvml, "nvmlDeviceGetCount_v2()", "nvmlDeviceGetCount_v2", [ctypes.byref(count)], lambda: count.value)
    handle = ctypes.c_void_p()
    if calls.call(nvml, "nvmlDeviceGetHandleByIndex_v2(0)", "nvmlDeviceGetHandleByIndex_v2", [0, ctypes.byref(handle)]):
        return
    past = ctypes.c_void_p()
    calls.call(
        nvml, "nvmlDeviceGetHandleByIndex_v2(count)", "nvmlDeviceGetHandleByIndex_v2", [count, ctypes.byref(past)]
    )
    uuid = ctypes.create_string_buffer(96)
    for name, buffer in (("nvmlDeviceGetName", ctypes.create_string_buffer(96)), ("nvmlDeviceGetUUID", uuid)):
        calls.call(nvml, f"{name}(96)", name, [handle, buffer, ctypes.c_uint(96)], partial(_text, buffer))
    calls.call(nvml, "nvmlDeviceGetName(4)", "nvmlDeviceGetName", [handle, small, ctypes.c_uint(4)])
    pci = _PciInfo()
    calls.call(
        nvml, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v3", [handle, ctypes.byref(pci)],
        lambda: {"busId": _text(pci.busId), "busIdLegacy": _text(pci.busIdLegacy), "domain": pci.domain},
    )  # fmt: skip
    major, minor = ctypes.c_int(), ctypes.c_int()
    calls.call(
        nvml, "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetCudaComputeCapability",
        [handle, ctypes.byref(major), ctypes.byref(minor)], lambda: [major.value, minor.value],
    )  # fmt: skip
    memory = _Memory()
    calls.call(
        nvml, "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo", [handle, ctypes.byref(memory)],
        lambda: {"total": memory.total, "free+used=total": memory.free + memory.used == memory.total},
    )  # fmt: skip
    current, pending = ctypes.c_uint(), ctypes.c_uint()
    calls.call(
        nvml, "nvmlDeviceGetMigMode", "nvmlDeviceGetMigMode", [handle, ctypes.byref(current), ctypes.byref(pending)],
        lambda: [current.value, pending.value],
    )  # fmt: skip
    slots = ctypes.c_uint()
    calls.call(
        nvml, "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetMaxMigDeviceCount", [handle, ctypes.byref(slots)],
        lambda: slots.value,
    )  # fmt: skip
    mig = ctypes.c_void_p()
    calls.call(
        nvml, "nvmlDeviceGetMigDeviceHandleByIndex(0)", "nvmlDeviceGetMigDeviceHandleByIndex",
        [handle, ctypes.c_uint(0), ctypes.byref(mig)],
    )  # fmt: skip
    for name in ("nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId"):
        instance = ctypes.c_uint()
        calls.call(nvml, f"{name}(gpu)", name, [handle, ctypes.byref(instance)])
    attributes = _Attributes()
    calls.call(
        nvml, "nvmlDeviceGetAttributes_v2(gpu)", "nvmlDeviceGetAttributes_v2", [handle, ctypes.byref(attributes)]
    )
    found = ctypes.c_void_p()
    calls.call(
        nvml, "nvmlDeviceGetHandleByUUID(own)", "nvmlDeviceGetHandleByUUID", [uuid.value, ctypes.byref(found)],
        lambda: found.value == handle.value,
    )  # fmt: skip
    calls.call(
        nvml, "nvmlDeviceGetHandleByUUID(unknown)", "nvmlDeviceGetHandleByUUID",
        [b"GPU-00000000-0000-0000-0000-000000000000", ctypes.byref(found)],
    )  # fmt: skip
    _processes(calls, nvml, handle, holder)
    _state(calls, nvml, handle)
    for code in (0, 1, 2, 3, 6, 7, 9, 13, 999):
        calls.value(nvml, f"nvmlErrorString({code})", "nvmlErrorString", ctypes.c_char_p, [code])
    calls.call(nvml, "nvmlShutdown()", "nvmlShutdown", [])
    calls.call(nvml, "nvmlShutdown() again", "nvmlShutdown", [])


# The GPU's state (issue 32), as the probe asks it (native/calls.py _HEALTH, _pairs): (label, function, the
# arguments between the handle and the answer, the answer's C type). With one GPU, the pair calls are asked of the
# GPU with itself: NVML's error for that is recorded.
_STATE: tuple[tuple[str, str, tuple[int, ...], Any], ...] = (
    ("nvmlDeviceGetComputeMode", "nvmlDeviceGetComputeMode", (), ctypes.c_uint),
    ("nvmlDeviceGetPersistenceMode", "nvmlDeviceGetPersistenceMode", (), ctypes.c_uint),
    ("nvmlDeviceGetTotalEccErrors(1,0)", "nvmlDeviceGetTotalEccErrors", (1, 0), ctypes.c_ulonglong),
    ("nvmlDeviceGetTotalEccErrors(1,1)", "nvmlDeviceGetTotalEccErrors", (1, 1), ctypes.c_ulonglong),
    ("nvmlDeviceGetRetiredPagesPendingStatus", "nvmlDeviceGetRetiredPagesPendingStatus", (), ctypes.c_uint),
    ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksEventReasons", (), ctypes.c_ulonglong),
    ("nvmlDeviceGetTemperature(0)", "nvmlDeviceGetTemperature", (0,), ctypes.c_uint),
    ("nvmlDeviceGetTemperatureThreshold(1)", "nvmlDeviceGetTemperatureThreshold", (1,), ctypes.c_uint),
    ("nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkGeneration", (), ctypes.c_uint),
    ("nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration", (), ctypes.c_uint),
    ("nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetCurrPcieLinkWidth", (), ctypes.c_uint),
    ("nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth", (), ctypes.c_uint),
    ("nvmlDeviceGetNvLinkState(0)", "nvmlDeviceGetNvLinkState", (0,), ctypes.c_uint),
    ("nvmlDeviceGetNvLinkState(18)", "nvmlDeviceGetNvLinkState", (18,), ctypes.c_uint),
)


def _state(calls: _Calls, nvml: ctypes.CDLL, handle: ctypes.c_void_p) -> None:
    for label, name, before, kind in _STATE:
        value = kind()
        arguments = [handle, *(ctypes.c_uint(number) for number in before), ctypes.byref(value)]
        calls.call(nvml, label, name, arguments, partial(_value, value))
    current, pending = ctypes.c_uint(), ctypes.c_uint()
    calls.call(
        nvml, "nvmlDeviceGetEccMode", "nvmlDeviceGetEccMode", [handle, ctypes.byref(current), ctypes.byref(pending)],
        lambda: [current.value, pending.value],
    )  # fmt: skip
    rows = [ctypes.c_uint() for _ in range(4)]
    calls.call(
        nvml, "nvmlDeviceGetRemappedRows", "nvmlDeviceGetRemappedRows", [handle, *map(ctypes.byref, rows)],
        lambda: [row.value for row in rows],
    )  # fmt: skip
    level = ctypes.c_int()
    calls.call(
        nvml, "nvmlDeviceGetTopologyCommonAncestor(self)", "nvmlDeviceGetTopologyCommonAncestor",
        [handle, handle, ctypes.byref(level)],
    )  # fmt: skip
    status = ctypes.c_int()
    calls.call(
        nvml, "nvmlDeviceGetP2PStatus(self,0)", "nvmlDeviceGetP2PStatus", [handle, handle, 0, ctypes.byref(status)]
    )


def _processes(calls: _Calls, nvml: ctypes.CDLL, handle: ctypes.c_void_p, holder: int | None) -> None:
    """The compute processes as nvidia-ml-py asks for them (pynvml.nvmlDeviceGetComputeRunningProcesses: the
    count with no buffer first, then the list), and the name of the one that holds the context."""

    class Process(ctypes.Structure):  # nvmlProcessInfo_t (v2), as the _v3 call fills it
        _fields_ = [
            ("pid", ctypes.c_uint),
            ("usedGpuMemory", ctypes.c_ulonglong),
            ("gpuInstanceId", ctypes.c_uint),
            ("computeInstanceId", ctypes.c_uint),
        ]

    name = "nvmlDeviceGetComputeRunningProcesses_v3"
    count = ctypes.c_uint(0)
    calls.call(nvml, f"{name}(count)", name, [handle, ctypes.byref(count), None], lambda: count.value)
    listed = (Process * max(1, count.value + 4))()
    count = ctypes.c_uint(len(listed))
    calls.call(
        nvml, f"{name}(list)", name, [handle, ctypes.byref(count), listed],
        lambda: {"holder listed": any(p.pid == holder for p in listed[: count.value])},
    )  # fmt: skip
    if holder is not None:
        text = ctypes.create_string_buffer(1024)
        calls.call(
            nvml, "nvmlSystemGetProcessName(holder)", "nvmlSystemGetProcessName",
            [ctypes.c_uint(holder), text, ctypes.c_uint(1024)], lambda: os.path.basename(_text(text)),
        )  # fmt: skip


def _driver(calls: _Calls) -> None:
    cuda = ctypes.CDLL("libcuda.so.1")
    number = ctypes.c_int()
    calls.call(cuda, "cuDriverGetVersion", "cuDriverGetVersion", [ctypes.byref(number)], lambda: number.value)
    calls.call(cuda, "cuInit(0)", "cuInit", [ctypes.c_uint(0)])
    calls.call(cuda, "cuDeviceGetCount", "cuDeviceGetCount", [ctypes.byref(number)], lambda: number.value)


def _cudart(calls: _Calls, path: str) -> None:
    cudart = ctypes.CDLL(path)
    for name in ("cudaRuntimeGetVersion", "cudaDriverGetVersion", "cudaGetDeviceCount"):
        number = ctypes.c_int(-1)
        calls.call(cudart, name, name, [ctypes.byref(number)], partial(_value, number))
    for code in (0, 35, 100):
        calls.value(cudart, f"cudaGetErrorString({code})", "cudaGetErrorString", ctypes.c_char_p, [code])


def _cudnn(calls: _Calls, path: str) -> None:
    cudnn = ctypes.CDLL(path)
    calls.value(cudnn, "cudnnGetVersion", "cudnnGetVersion", ctypes.c_size_t, [])
    calls.value(cudnn, "cudnnGetCudartVersion", "cudnnGetCudartVersion", ctypes.c_size_t, [])
    for kind in (0, 1, 2, 3):
        number = ctypes.c_int(-1)
        calls.call(cudnn, f"cudnnGetProperty({kind})", "cudnnGetProperty", [kind, ctypes.byref(number)],
                   partial(_value, number))  # fmt: skip
    for code in (0, 1, 4, 3000):
        calls.value(cudnn, f"cudnnGetErrorString({code})", "cudnnGetErrorString", ctypes.c_char_p, [code])
    handle = ctypes.c_void_p()
    created = calls.call(cudnn, "cudnnCreate", "cudnnCreate", [ctypes.byref(handle)])
    last = getattr(cudnn, "cudnnGetLastErrorString", None)
    if last is not None:
        text = ctypes.create_string_buffer(1024)
        last.restype = None
        last(text, ctypes.c_size_t(1024))
        calls.rows.append({"call": "cudnnGetLastErrorString", "value": _text(text)})
    if created == 0:
        calls.call(cudnn, "cudnnDestroy", "cudnnDestroy", [handle])


def raw_calls(plan: dict[str, Any]) -> list[dict[str, Any]]:
    calls = _Calls()
    parts: tuple[tuple[str, Callable[[], None]], ...] = (
        ("nvml", lambda: _nvml(calls, plan["holder"])),
        ("libcuda", lambda: _driver(calls)),
    )
    for part, run in parts:
        try:
            run()
        except OSError as error:
            calls.rows.append({"call": part, "error": str(error)})
    for kind, run_one in (("cudart", _cudart), ("cudnn", _cudnn)):
        for path in plan[kind]:
            calls.rows.append({"call": f"{kind} {path}"})
            try:
                run_one(calls, path)
            except OSError as error:
                calls.rows.append({"call": kind, "error": str(error)})
    return calls.rows


def found_copies(doctor: dict[str, Any], key: str) -> list[str]:
    return [copy["path"] for copy in doctor["environment"][key] if copy.get("state") == "found" and copy.get("path")]


def record(doctor: dict[str, Any]) -> dict[str, Any]:
    from pytest_cudnn.native.isolation import run_jobs

    cudarts, cudnns = found_copies(doctor, "cuda_runtimes"), found_copies(doctor, "cudnns")
    jobs = [{"kind": "nvml"}, {"kind": "cuda", "name": "libcuda.so.1"}]
    jobs += [{"kind": "cudart", "path": path} for path in cudarts] + [
        {"kind": "cudnn", "path": path} for path in cudnns
    ]
    answers = [answer for _, answer in run_jobs(dict(enumerate(jobs)), TIMEOUT)]
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        held = holder.stdout.readline().strip()
        time.sleep(0.5)
        plan = {"holder": holder.pid if held == "0" else None, "cudart": cudarts, "cudnn": cudnns}
        done = subprocess.run(
            [sys.executable, __file__, "--raw", json.dumps(plan)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    finally:
        holder.kill()
        holder.wait()
    calls = json.loads(done.stdout) if done.returncode == 0 else [{"error": done.stderr[-2000:]}]
    made: dict[str, Any] = redacted({
        "holder_status": held,
        "jobs": [{"job": job, "answer": answer} for job, answer in zip(jobs, answers, strict=True)],
        "calls": calls,
    })  # fmt: skip
    return made


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    if argv[:1] == ["--raw"]:
        print(json.dumps(raw_calls(json.loads(argv[1]))))
        return 0
    doctor = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print(json.dumps(record(doctor), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
