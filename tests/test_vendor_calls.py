"""The stand-in vendor libraries answer as NVIDIA's own did on the lent H100, call by call.

``tests/data/real-gpu/h100-calls.json`` is what ``tests/vendorcalls.py`` recorded there: every NVML, libcuda,
cudart and cuDNN call the product makes, error paths too, and the product's own probe jobs. The same script run on
a stand-in host built like that machine (one H100, driver 580.159.04, CUDA 13.0, a CUDA 13.0 runtime and cuDNN
9.14.0 built for it) must record the same answers. :func:`call_differences` says where two records disagree;
what legitimately differs between the two machines (paths, the PCI bus id's digits, memory sizes, the name of the
Python that holds a context, which copies of cudart and cuDNN are installed) is compared by its form.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from .gpumachine import stand_in_machine
from .simhost import Compiler, SimGpu, SimHost
from .vendorcalls import _STATE

DATA = Path(__file__).parent / "data" / "real-gpu"
VENDORCALLS = Path(__file__).parent / "vendorcalls.py"

Form = tuple[str, Callable[[Any], bool]]


def _matching(pattern: str) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and re.fullmatch(pattern, value) is not None


def _size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _library(name: str) -> Form:
    return (f"an absolute path to {name}.<major>", _matching(rf"/.+/{re.escape(name)}\.\d+"))


_BUS_ID: Form = ("a PCI bus id DDDDDDDD:BB:DD.F", _matching(r"[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"))
_LEGACY_BUS_ID: Form = ("a PCI bus id DDDD:BB:DD.F", _matching(r"[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"))
_SIZE: Form = ("a size in bytes", _size)

# What differs between two machines with the same stack, by the flattened key it is recorded under (see _flat;
# ``[]`` stands for any list index, ``*`` for any part of a name): compared by form, not value.
FORMS: dict[str, Form] = {
    "calls nvmlDeviceGetPciInfo_v3.value.busId": _BUS_ID,
    "calls nvmlDeviceGetPciInfo_v3.value.busIdLegacy": _LEGACY_BUS_ID,
    "calls nvmlDeviceGetMemoryInfo.value.total": _SIZE,
    # The holder is started as sys.executable: python3 on the lent machine, a virtual environment's python here.
    "calls nvmlSystemGetProcessName(holder).value": ("a Python's file name", _matching(r"python[0-9.]*")),
    "calls cudart.path": _library("libcudart.so"),
    "calls cudnn.path": _library("libcudnn.so"),
    "job nvml.path": _library("libnvidia-ml.so"),
    "job nvml.gpus[].pci_bus_id": _BUS_ID,
    "job nvml.gpus[].memory_*": _SIZE,
    "job cuda.path": _library("libcuda.so"),
    "job cudart.loaded": _library("libcudart.so"),
    "job cudart.job.path": _library("libcudart.so"),
    "job cudnn.loaded": _library("libcudnn.so"),
    "job cudnn.job.path": _library("libcudnn.so"),
}

# Differences accepted although no form covers them, each with its reason. None so far.
ACCEPTED: dict[str, str] = {}

# What the product asks from issue 32 on (each GPU's state, how pairs of GPUs reach each other), which the record
# made on the lent H100 before it does not hold. Where NVIDIA's record has no answer under such a key the stand-in's
# is not a difference; once .ci/real-gpu records them on the next lent GPU they are compared like every other.
UNRECORDED = (
    "job nvml.gpus[].health.",
    "job nvml.pairs",
    *(f"calls {label}" for label, *_ in _STATE),
    "calls nvmlDeviceGetEccMode",
    "calls nvmlDeviceGetRemappedRows",
    "calls nvmlDeviceGetTopologyCommonAncestor(self)",
    "calls nvmlDeviceGetP2PStatus(self,0)",
)


def _unrecorded(key: str) -> bool:
    return any(re.match(re.escape(prefix).replace(r"\[\]", r"\[\d+\]"), key) for prefix in UNRECORDED)


def _flat(value: Any, prefix: str) -> dict[str, Any]:
    """``value`` as ``{key: leaf}``: dict members as ``.name``, the items of a list of dicts as ``[i]``; a list of
    plain values is one leaf."""
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flat(item, f"{prefix}.{key}"))
        return flat
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        flat = {}
        for index, item in enumerate(value):
            flat.update(_flat(item, f"{prefix}[{index}]"))
        return flat
    return {prefix: value}


def _form(key: str) -> Form | None:
    """The form ``key``'s values are compared by, if any (FORMS)."""
    for pattern, form in FORMS.items():
        regex = re.escape(pattern).replace(r"\[\]", r"\[\d+\]").replace(r"\*", "[^.]*")
        if re.fullmatch(regex, key):
            return form
    return None


def _sections(record: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A record's answers in parts that are compared whole: the driver's calls (NVML, libcuda), each cudart or
    cuDNN copy's calls, each probe job; as ``(kind, flattened answers)``."""
    parts: list[tuple[str, dict[str, Any]]] = [("calls", {"calls holder_status": record.get("holder_status")})]
    for row in record.get("calls", []):
        label = str(row.get("call", "?"))
        kind, _, path = label.partition(" ")
        if set(row) == {"call"} and kind in ("cudart", "cudnn"):
            parts.append((kind, {f"calls {kind}.path": path}))
            continue
        rest = {key: value for key, value in row.items() if key != "call"}
        parts[-1][1].update(_flat(rest, f"calls {label}"))
    for job in record.get("jobs", []):
        kind = str(job.get("job", {}).get("kind", "?"))
        parts.append((f"job {kind}", _flat({"job": job.get("job"), **(job.get("answer") or {})}, f"job {kind}")))
    return parts


def _part_differences(real: Mapping[str, Any], ours: Mapping[str, Any]) -> list[str]:
    found = []
    for key in sorted(set(real) | set(ours)):
        form = _form(key)
        if key not in ours:
            found.append(f"{key}: NVIDIA {real[key]!r}, the stand-in no answer")
        elif key not in real:
            if not _unrecorded(key):
                found.append(f"{key}: NVIDIA no answer, the stand-in {ours[key]!r}")
        elif form is not None:
            what, fits = form
            if not (fits(real[key]) and fits(ours[key])):
                found.append(f"{key}: not both {what}: NVIDIA {real[key]!r}, the stand-in {ours[key]!r}")
        elif real[key] != ours[key]:
            found.append(f"{key}: NVIDIA {real[key]!r}, the stand-in {ours[key]!r}")
    return [difference for difference in found if difference.partition(":")[0] not in ACCEPTED]


def call_differences(real: Mapping[str, Any], stand_in: Mapping[str, Any]) -> list[str]:
    """Every answer the stand-in's record gives otherwise than NVIDIA's, one line each. Each part of the stand-in's
    record is held to the part of the same kind in NVIDIA's that it comes closest to: a machine may hold copies of
    cudart and cuDNN that the other lacks, and those are not differences; a kind either record lacks entirely is."""
    real_parts, our_parts = _sections(real), _sections(stand_in)
    found = []
    for kind in sorted({kind for kind, _ in real_parts} - {kind for kind, _ in our_parts}):
        found.append(f"{kind}: NVIDIA answered, the stand-in has none")
    for kind, ours in our_parts:
        candidates = [_part_differences(theirs, ours) for other, theirs in real_parts if other == kind]
        if not candidates:
            found.append(f"{kind}: the stand-in answered, NVIDIA has none")
            continue
        found += min((len(differences), differences) for differences in candidates)[1]
    return found


# The comparison itself ----------------------------------------------------------------------------------------

_NVML: list[dict[str, Any]] = [
    {"call": "nvmlInitWithFlags(0)", "rc": 0, "value": None},
    {"call": "nvmlDeviceGetHandleByIndex_v2(count)", "rc": 2},
    {"call": "nvmlDeviceGetPciInfo_v3", "rc": 0,
     "value": {"busId": "00000000:00:06.0", "busIdLegacy": "0000:00:06.0", "domain": 0}},
    {"call": "nvmlDeviceGetMemoryInfo", "rc": 0, "value": {"free+used=total": True, "total": 85520809984}},
    {"call": "nvmlSystemGetProcessName(holder)", "rc": 0, "value": "python3"},
]  # fmt: skip
_CUDNN: list[dict[str, Any]] = [
    {"call": "cudnn /lib/x86_64-linux-gnu/libcudnn.so.9"},
    {"call": "cudnnGetProperty(3)", "rc": 2000},
    {"call": "cudnnGetErrorString(1)", "value": "CUDNN_UNKNOWN_STATUS"},
]
_JOB: dict[str, Any] = {
    "job": {"kind": "nvml"},
    "answer": {"path": "/usr/lib/libnvidia-ml.so.1", "gpus": [{"mig_mode": False}]},
}
REAL: dict[str, Any] = {"holder_status": "0", "calls": _NVML + _CUDNN, "jobs": [_JOB]}
_PCI_ELSEWHERE = {
    "call": "nvmlDeviceGetPciInfo_v3",
    "rc": 0,
    "value": {"busId": "00000000:18:00.0", "busIdLegacy": "0000:18:00.0", "domain": 0},
}
_NO_LEGACY = {**_PCI_ELSEWHERE, "value": {"busId": "00000000:00:06.0", "busIdLegacy": "", "domain": 0}}
_SMALLER = {"call": "nvmlDeviceGetMemoryInfo", "rc": 0, "value": {"free+used=total": True, "total": 2**30}}


def _changed(calls: Sequence[dict[str, Any]] = (), jobs: Sequence[dict[str, Any]] = (_JOB,)) -> dict[str, Any]:
    """REAL with the rows of ``calls`` in place of those of the same call (a row with ``drop`` removes it), and
    ``jobs`` for its jobs."""
    by_call = {row["call"]: row for row in calls}
    rows = [by_call.get(row["call"], row) for row in _NVML + _CUDNN]
    return {**REAL, "calls": [row for row in rows if "drop" not in row], "jobs": list(jobs)}


@pytest.mark.parametrize(
    ("stand_in", "expected"),
    [
        pytest.param(REAL, [], id="the same answers"),
        pytest.param(
            _changed([{"call": "nvmlDeviceGetHandleByIndex_v2(count)", "rc": 15}]),
            ["calls nvmlDeviceGetHandleByIndex_v2(count).rc: NVIDIA 2, the stand-in 15"],
            id="another return code",
        ),
        pytest.param(
            _changed([{"call": "nvmlDeviceGetHandleByIndex_v2(count)", "rc": 0, "value": None}]),
            [
                "calls nvmlDeviceGetHandleByIndex_v2(count).rc: NVIDIA 2, the stand-in 0",
                "calls nvmlDeviceGetHandleByIndex_v2(count).value: NVIDIA no answer, the stand-in None",
            ],
            id="success where NVIDIA failed",
        ),
        pytest.param(
            _changed(
                [_PCI_ELSEWHERE, _SMALLER, {"call": "nvmlSystemGetProcessName(holder)", "rc": 0, "value": "python"}]
            ),
            [],
            id="other bus id digits, memory size and Python: the same forms",
        ),
        pytest.param(
            _changed([_NO_LEGACY]),
            [
                "calls nvmlDeviceGetPciInfo_v3.value.busIdLegacy: not both a PCI bus id DDDD:BB:DD.F: "
                "NVIDIA '0000:00:06.0', the stand-in ''"
            ],
            id="a value of the wrong form",
        ),
        pytest.param(
            _changed([{"call": "nvmlSystemGetProcessName(holder)", "drop": True}]),
            [
                "calls nvmlSystemGetProcessName(holder).rc: NVIDIA 0, the stand-in no answer",
                "calls nvmlSystemGetProcessName(holder).value: NVIDIA 'python3', the stand-in no answer",
            ],
            id="a call the stand-in's run did not make",
        ),
        pytest.param(
            _changed([{"call": "cudnnGetErrorString(1)", "value": "CUDNN_STATUS_INTERNAL_ERROR"}]),
            [
                "calls cudnnGetErrorString(1).value: NVIDIA 'CUDNN_UNKNOWN_STATUS', the stand-in "
                "'CUDNN_STATUS_INTERNAL_ERROR'"
            ],
            id="a copy's answer",
        ),
        pytest.param(
            {**REAL, "calls": [row for row in REAL["calls"] if row not in _CUDNN]},
            ["cudnn: NVIDIA answered, the stand-in has none"],
            id="no cuDNN at all",
        ),
        pytest.param(
            _changed(jobs=[{**_JOB, "answer": {**_JOB["answer"], "gpus": [{}]}}]),
            ["job nvml.gpus[0].mig_mode: NVIDIA False, the stand-in no answer"],
            id="the product reads it otherwise",
        ),
        pytest.param(
            _changed(jobs=[{**_JOB, "answer": {**_JOB["answer"], "path": "/host/usr/lib/driver/libnvidia-ml.so.1"}}]),
            [],
            id="the library elsewhere",
        ),
    ],
)
def test_call_differences(stand_in: dict[str, Any], expected: list[str]) -> None:
    assert call_differences(REAL, stand_in) == expected


def test_a_copy_the_stand_in_host_lacks_is_no_difference() -> None:
    other = [{"call": "cudnn /opt/venv/nvidia/cudnn/lib/libcudnn.so.9"}, {"call": "cudnnGetProperty(3)", "rc": 2000}]
    two_copies = {**REAL, "calls": REAL["calls"] + other}
    assert call_differences(two_copies, REAL) == []
    assert call_differences(REAL, two_copies) == [
        "calls cudnnGetErrorString(1).value: NVIDIA 'CUDNN_UNKNOWN_STATUS', the stand-in no answer"
    ]


def test_the_state_calls_are_compared_once_nvidia_answered_them() -> None:
    # Issue 32's calls: unrecorded, the stand-in's answer is no difference; recorded, it is held to NVIDIA's.
    mode = {"call": "nvmlDeviceGetComputeMode", "rc": 0, "value": 0}
    with_mode = {**REAL, "calls": [*REAL["calls"], mode]}
    assert call_differences(REAL, with_mode) == []
    exclusive = {**REAL, "calls": [*REAL["calls"], {**mode, "value": 3}]}
    assert call_differences(with_mode, exclusive) == ["calls nvmlDeviceGetComputeMode.value: NVIDIA 0, the stand-in 3"]
    other = {**REAL, "calls": [*REAL["calls"], {"call": "nvmlDeviceGetFanSpeed", "rc": 0, "value": 30}]}
    assert call_differences(REAL, other) == [
        "calls nvmlDeviceGetFanSpeed.rc: NVIDIA no answer, the stand-in 0",
        "calls nvmlDeviceGetFanSpeed.value: NVIDIA no answer, the stand-in 30",
    ]


# The stand-ins against the record ------------------------------------------------------------------------------


def _h100_host(root: Path, compiler: Compiler) -> tuple[SimHost, Any]:
    """A stand-in host with the lent machine's GPU and driver as its snapshot gives them."""
    driver = json.loads((DATA / "h100-snapshot.json").read_text())["driver"]
    [gpu] = driver["gpus"]
    major, minor = (int(part) for part in gpu["compute_capability"].split("."))
    h100 = SimGpu(
        name=gpu["name"],
        uuid="GPU-6a1f0c2e-9b4d-4e7a-8c15-3d2b7f9e0a41",
        pci_bus_id=gpu["pci_bus_id"],
        compute_capability=(major, minor),
        memory_total=gpu["memory_total"],
        memory_free=gpu["memory_free"],
    )
    host = SimHost(root, compiler)
    return host, stand_in_machine(host, gpus=(h100,), driver=driver["version"])


def test_the_stand_ins_answer_as_nvidia_did_on_the_h100(tmp_path: Path, compiler: Compiler) -> None:
    host, machine = _h100_host(tmp_path / "host", compiler)
    _, doctor = machine.doctor_json()
    # The copies planted on the stand-in host only: the machine running the tests may have CUDA of its own.
    for key in ("cuda_runtimes", "cudnns"):
        doctor["environment"][key] = [
            copy for copy in doctor["environment"][key] if str(copy.get("path") or "").startswith(str(host.root))
        ]
    (tmp_path / "doctor.json").write_text(json.dumps(doctor))
    done = machine.run([sys.executable, str(VENDORCALLS), str(tmp_path / "doctor.json")], timeout=180)
    assert done.returncode == 0, done.stderr[-4000:]
    stand_in = json.loads(done.stdout)
    assert [row["call"] for row in stand_in["calls"] if set(row) == {"call"}] == [
        f"cudart {host.root}/usr/local/cuda-13.0/lib64/libcudart.so.13",
        f"cudnn {host.root}/usr/local/cuda-13.0/lib64/libcudnn.so.9",
    ]
    real = json.loads((DATA / "h100-calls.json").read_text())
    differences = call_differences(real, stand_in)
    assert not differences, "the stand-ins answer otherwise than NVIDIA's libraries:\n" + "\n".join(differences)


@pytest.mark.parametrize(
    ("gpu", "state"),
    [
        (SimGpu("NVIDIA H100 80GB HBM3"), 0),
        (SimGpu("NVIDIA A100-SXM4-40GB"), 0),
        (SimGpu("NVIDIA H200"), 0),
        (SimGpu("Tesla T4"), -1),
        (SimGpu("NVIDIA GeForce RTX 4090"), -1),
        (SimGpu("Tesla T4", mig_mode=0), 0),
        (SimGpu("NVIDIA H100 80GB HBM3", mig_mode=-1), -1),
    ],
)
def test_a_stand_in_gpu_supports_mig_by_what_it_is(gpu: SimGpu, state: int) -> None:
    assert gpu.mig_state == state


def test_mig_off_and_no_mig_read_apart(host: SimHost) -> None:
    consumer = SimGpu("NVIDIA GeForce RTX 4090", "GPU-4090", "00000000:01:00.0", (8, 9), 24 * 2**30, 23 * 2**30)
    host.add_driver([SimGpu("NVIDIA H100 80GB HBM3", compute_capability=(9, 0)), consumer])
    _, report = host.doctor_json()
    gpus = report["environment"]["driver"]["gpus"]
    assert [(gpu["mig_mode"], gpu["mig"], gpu["error"]) for gpu in gpus] == [(False, [], None), (None, [], None)]


def test_two_lent_h100s_answered_every_call_alike() -> None:
    # Two sessions, two machines of one kind (tests/data/real-gpu/README.md): the record is of the machine kind, not
    # of one day's machine, so the stand-ins built from it fit the next one too. Free memory is not compared.
    first, second = (json.loads((DATA / f"{name}-calls.json").read_text()) for name in ("h100", "h100b"))
    assert call_differences(first, second) == []
