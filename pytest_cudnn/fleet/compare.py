"""The differences between runners: which facts of their stacks differ, which findings only some have, and which
tests the environment refused on some runners while others ran them. Pure module."""

from __future__ import annotations

from collections.abc import Sequence

from .. import phrases
from ..diagnosis.health import HEALTH_FAULTS
from .model import (
    FactDifference,
    FindingDifference,
    Fleet,
    Problem,
    Refusal,
    RefusalDifference,
    Runner,
    Stack,
)
from .reading import read_runner, refusal_cause

__all__ = ["compare", "facts", "gpu_models", "read_fleet"]

_SEVERITY = {"error": 0, "warning": 1, "info": 2}
_RAN = ("passed", "failed")  # a test the environment did not refuse, and that ran


def read_fleet(reports: Sequence[tuple[str, str]]) -> Fleet:
    """Each (runner name, report path) read, and the runners compared."""
    read = [read_runner(name, path) for name, path in reports]
    return compare(
        [item for item in read if isinstance(item, Runner)], [item for item in read if isinstance(item, Problem)]
    )


def compare(runners: Sequence[Runner], problems: Sequence[Problem] = ()) -> Fleet:
    return Fleet(
        runners=tuple(runners),
        problems=tuple(problems),
        facts=_fact_differences(runners),
        findings=_finding_differences(runners),
        tests=_test_differences(runners),
    )


def gpu_models(stack: Stack) -> str:
    """'2x NVIDIA A100-SXM4-80GB (80.0 GiB)', and how many CUDA sees when CUDA_VISIBLE_DEVICES hides some; 'none'
    without GPUs."""
    shown = ", ".join(f"{m.count}x {m.name or '(name unknown)'} ({phrases.size(m.memory_total)})" for m in stack.gpus)
    count = sum(model.count for model in stack.gpus)
    visible = f", {stack.visible_gpus} visible to CUDA" if stack.visible_gpus != count else ""
    return (shown or "none") + visible


def unhealthy_gpus(runner: Runner) -> str:
    """'GPU 1 (gpu-ecc-uncorrectable)': the GPUs whose own state makes tests fail, as the runner's report found
    them (issue 32); 'none'."""
    found: dict[int, list[str]] = {}
    for finding in runner.findings:
        if finding.code in HEALTH_FAULTS:
            for index in finding.gpus:
                found.setdefault(index, []).append(finding.code)
    return ", ".join(f"GPU {index} ({', '.join(codes)})" for index, codes in sorted(found.items())) or "none"


def facts(runner: Runner) -> dict[str, tuple[str, str | None]]:
    """The runner's facts compared across the fleet: key -> (label, value); None: it has none."""
    stack = runner.stack
    found: dict[str, tuple[str, str | None]] = {
        "verdict": ("verdict", "can run GPU work" if runner.ok else "cannot run GPU work"),
        "python": ("Python", stack.python),
        "driver": ("driver", stack.driver or stack.driver_state),
        "cuda_driver": ("CUDA (driver)", stack.cuda_driver),
        "gpus": ("GPUs", gpu_models(stack)),
        "unhealthy": ("unhealthy GPUs", unhealthy_gpus(runner)),
        "cuda_runtime": ("CUDA runtime", stack.cuda_runtime),
        "cudnn": ("cuDNN", stack.cudnn),
    }
    for framework in stack.frameworks:
        said = "can run" if framework.ok else "cannot run"
        found[f"framework:{framework.name}"] = (
            phrases.framework(framework.name),
            f"{framework.version or '?'} ({said})",
        )
    found["require_gpu"] = ("--require-gpu", None if runner.require_gpu is None else str(runner.require_gpu).lower())
    return found


def _fact_differences(runners: Sequence[Runner]) -> tuple[FactDifference, ...]:
    if len(runners) < 2:
        return ()
    each = {runner.name: facts(runner) for runner in runners}
    labels: dict[str, str] = {}
    for known in each.values():
        for key, (label, _) in known.items():
            labels.setdefault(key, label)
    differences = []
    for key, label in labels.items():
        values = {name: known[key][1] if key in known else None for name, known in each.items()}
        if len(set(values.values())) > 1:
            differences.append(FactDifference(key, label, values))
    return tuple(differences)


def _finding_differences(runners: Sequence[Runner]) -> tuple[FindingDifference, ...]:
    if len(runners) < 2:
        return ()
    first: dict[str, tuple[str, str]] = {}  # code -> (severity, summary) as first seen
    severity: dict[str, str] = {}
    on: dict[str, dict[str, None]] = {}  # code -> the runners that have it, an ordered set: lists made it quadratic
    for runner in runners:
        for finding in runner.findings:
            first.setdefault(finding.code, (finding.severity, finding.summary))
            worst = severity.get(finding.code, finding.severity)
            severity[finding.code] = min(worst, finding.severity, key=lambda s: _SEVERITY.get(s, 3))
            on.setdefault(finding.code, {})[runner.name] = None
    differences = [
        FindingDifference(
            code,
            severity[code],
            first[code][1],
            tuple(on[code]),
            tuple(r.name for r in runners if r.name not in on[code]),
        )
        for code in first
        if len(on[code]) < len(runners)
    ]
    return tuple(sorted(differences, key=lambda d: _SEVERITY.get(d.severity, 3)))


def _test_differences(runners: Sequence[Runner]) -> tuple[RefusalDifference, ...]:
    if len(runners) < 2:
        return ()
    ran: dict[str, dict[str, str | None]] = {}
    refused: dict[str, list[Refusal]] = {}
    for runner in runners:
        for test in runner.tests:
            if test.reason is not None:
                refusal = Refusal(runner.name, test.outcome, refusal_cause(test), test.reason)
                refused.setdefault(test.nodeid, []).append(refusal)
            elif test.outcome in _RAN:
                ran.setdefault(test.nodeid, {})[runner.name] = test.outcome
    return tuple(
        RefusalDifference(nodeid, ran[nodeid], tuple(refusals))
        for nodeid, refusals in refused.items()
        if ran.get(nodeid)
    )
