"""Large inputs for the scale tests and benchmarks/bench_scale.py: a healthy host grown along one dimension (GPUs,
MIG devices, library copies, notes, framework loads), fleets of many runners, and a count of the work a call does.

Real hosts have a few dozen GPUs, but a snapshot from elsewhere is data: within the 16 MiB limit it can list
100,000 GPUs or notes, and whatever reads it must stay linear (field test of 2026-11-24, N4). The work is counted,
never timed: :func:`calls` counts the Python and builtin calls a piece of work makes (``sys.setprofile``), which
grows about fourfold for four times the input when the work is linear, and sixteenfold when it is quadratic.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest_cudnn
from pytest_cudnn._base.serde import to_json
from pytest_cudnn._base.style import Style
from pytest_cudnn.devices import with_free
from pytest_cudnn.diagnosis import diagnose, judge_environment, verdict, visible_gpus
from pytest_cudnn.environment import Environment, Unreadable
from pytest_cudnn.markers import judge, parse_marker
from pytest_cudnn.report import doctor_json, doctor_summary, doctor_text, header_lines, markdown_summary
from tests.envbuilder import SITE, EnvBuilder, gpu, mig, partitioned, rpath_load

__all__ = ["DIMENSIONS", "calls", "doctor_work", "fleet_reports", "grown", "judge_work"]

DIMENSIONS = ("gpus", "visible", "mig", "copies", "notes", "loads")


def grown(dimension: str, n: int) -> Environment:
    """A healthy host (driver 550, TensorFlow 2.18 with its wheels, torch) with ``n`` of one thing:

    gpus: A100s; visible: as many, each named by UUID in CUDA_VISIBLE_DEVICES; mig: MIG devices, four per H100,
    all named in CUDA_VISIBLE_DEVICES; copies: a third as many cuDNN and CUDA runtime copies on LD_LIBRARY_PATH;
    notes: probe notes, unreadable folders and relative LD_LIBRARY_PATH entries; loads: libraries torch loads.
    """
    builder = EnvBuilder.healthy().with_torch()
    if dimension in ("gpus", "visible"):
        gpus = [gpu(index, uuid=f"GPU-{index:08d}-aaaa-bbbb-cccc-000000000000") for index in range(n)]
        builder.with_gpus(*gpus)
        if dimension == "visible":
            builder.variables["CUDA_VISIBLE_DEVICES"] = ",".join(g.uuid or "" for g in reversed(gpus))
    elif dimension == "mig":
        parents = [
            partitioned(
                index, *(mig(slot, uuid=f"MIG-{index:08d}-{slot:04d}-2222-3333-444444444444") for slot in range(4))
            )
            for index in range(max(n // 4, 1))
        ]
        builder.with_gpus(*parents)
        builder.with_driver(version="570.86.10")
        builder.variables["CUDA_VISIBLE_DEVICES"] = ",".join(m.uuid or "" for p in parents for m in p.mig)
    elif dimension == "copies":
        for copy in range(max(n // 3, 1)):  # each is two libraries, their resolutions and a folder
            folder = f"/opt/copy{copy}/lib64"
            builder.runtime(f"{folder}/libcudart.so.12", 12040, rank=copy + 1)
            builder.cudnn(f"{folder}/libcudnn.so.9", "9.3.0", 12040, rank=copy + 1)
        builder.variables["LD_LIBRARY_PATH"] = ":".join(f"/opt/copy{copy}/lib64" for copy in range(max(n // 3, 1)))
    elif dimension == "notes":
        builder.notes += [f"note {index}: something the probe noticed" for index in range(n)]
        builder.unreadable += [Unreadable(f"/opt/unreadable{index}", "Permission denied") for index in range(n)]
        builder.variables["LD_LIBRARY_PATH"] = ":".join(f"rel{index}" for index in range(n))
    elif dimension == "loads":
        builder.frameworks.clear()
        loads = tuple(rpath_load(f"{SITE}/nvidia/lib{index}/libdep{index}.so.1") for index in range(n))
        builder.with_torch(loads=loads)
    else:
        raise ValueError(f"unknown dimension {dimension!r}")
    return builder.build()


_REQUIREMENTS = [
    parse_marker("requires_gpu", (), {"memory": "1GiB"}),
    parse_marker("requires_gpu", (2,), {}),
    parse_marker("requires_cudnn", (">=9",), {}),
    parse_marker("requires_cuda", (">=12",), {}),
    parse_marker("requires_driver", (">=535",), {}),
    parse_marker("requires_tensorflow", (), {"gpu": True}),
    parse_marker("requires_torch", (), {"gpu": True}),
]


def doctor_work(env: Environment) -> None:
    """What the doctor and the plugin's session start do with an environment: read it from JSON, diagnose it,
    and render every view of it (the last two with its strings counted)."""
    Environment.from_json(json.loads(env.dumps()))
    env = counted(env)
    findings = diagnose(env)
    judged = verdict(findings)
    diagnosis = judge_environment(env, tuple(findings))
    doctor_text(diagnosis, judged)
    doctor_text(diagnosis, judged, source="s.json")
    doctor_summary(diagnosis, judged, source="s.json", style=Style(colour=True))
    json.dumps(doctor_json(diagnosis, judged))
    header_lines(diagnosis, runtime=None, cudnn=None, verbose=True)
    markdown_summary(diagnosis, [("cudnn-version", 3, "requires cuDNN >=10")])


def judge_work(env: Environment, findings: list[Any], tests: int = 50) -> None:
    """The plugin's judgement at each test's setup: each kind of requirement once (the plugin keeps each parsed
    requirement's outcome for the run), and a memory requirement at every test's setup, against the free memory
    NVML reads then."""
    device = visible_gpus(env)[0]
    diagnosis = judge_environment(env, tuple(findings))
    for requirement in _REQUIREMENTS:
        judge(requirement, diagnosis, device)
    for _ in range(tests):
        judge(_REQUIREMENTS[0], diagnosis, with_free(device, 2 * 1024**3))


def fleet_reports(folder: Path, runners: int, findings: int = 3, tests: int = 3) -> list[tuple[str, str]]:
    """``runners`` reports with ``findings`` findings and ``tests`` tests beyond a healthy host's: each finding is
    on every other runner, each test refused on every other runner and run on the rest, so that every runner
    differs from its neighbours in both."""
    env = EnvBuilder.healthy().build()
    environment = env.to_json()
    found = diagnose(env)
    reports = []
    for index in range(runners):
        own = [
            {
                "code": f"code-{k}",
                "severity": "warning",
                "component": "gpu",
                "summary": f"finding {k}",
                "evidence": [],
                "fix": "none",
                "subjects": [],
            }
            for k in range(findings)
            if (index + k) % 2
        ]
        document = {
            "environment": environment,
            "findings": [to_json(f) for f in found] + own,
            "verdict": to_json(verdict(found)),
            "frameworks": [],
            "require_gpu": False,
            "xdist": {},
            "xdist_note": None,
            "tests": [
                {
                    "nodeid": f"t.py::test_{k}",
                    "requirements": [],
                    "gpu": 0,
                    "outcome": "skipped",
                    "reason": f"requires cuDNN >={k}; found none",
                    "cause": f"cause-{k}",
                }
                if (index + k) % 2
                else {"nodeid": f"t.py::test_{k}", "requirements": [], "gpu": 0, "outcome": "passed"}
                for k in range(tests)
            ],
        }
        path = folder / f"runner{index}.json"
        path.write_text(json.dumps(document))
        reports.append((f"runner{index}", str(path)))
    return reports


class _Counted(str):
    """A string whose comparisons and hashes are Python calls, so that :func:`calls` sees them: ``name in
    names`` over a list of plain strings runs in C, where no profiler looks."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other) is True

    def __ne__(self, other: object) -> bool:
        return str.__ne__(self, other) is True

    def __hash__(self) -> int:
        return str.__hash__(self)


def counted(value: Any) -> Any:
    """``value`` with every string in it (in dataclasses, tuples, lists and dicts) made a counted one."""
    if type(value) is str:
        return _Counted(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value, **{f.name: counted(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        )
    if isinstance(value, tuple | list):
        return type(value)(counted(item) for item in value)
    if isinstance(value, dict):
        return {counted(key): counted(item) for key, item in value.items()}
    return value


def calls(work: Callable[[], object]) -> Counter[str]:
    """The calls ``work`` makes in pytest-cudnn's own code, by name: its functions and the dataclass methods and
    counted strings it compares, and the builtins it calls. What a library does inside (packaging parsing a
    specifier, json encoding) is one call to it: linear in itself, it would only drown the signal."""
    counted: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(_OURS):
                counted[f"{code.co_filename.rpartition('/')[2]}:{code.co_firstlineno}:{code.co_name}"] += 1
        elif event == "c_call" and frame.f_code.co_filename.startswith(_OURS):
            counted[getattr(arg, "__qualname__", "builtin")] += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return counted


# pytest-cudnn's modules, the methods dataclasses generate (their code is compiled from "<string>"), _Counted.
_OURS = (str(Path(pytest_cudnn.__file__).parent), "<string>", __file__)


def growth(small: Counter[str], large: Counter[str]) -> Iterator[tuple[str, int, int]]:
    """The functions whose calls grew the most, most first: (name, calls on the small input, on the large)."""
    for name in sorted(large, key=lambda key: small.get(key, 0) - large[key] * 1.0)[:5]:
        yield name, small.get(name, 0), large[name]
