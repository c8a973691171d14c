"""Findings: what is wrong with an environment, where, why, and what to do.

Pure package: an :class:`~pytest_cudnn.environment.Environment` plus the sourced knowledge in
:mod:`pytest_cudnn.compat` give a list of :class:`Finding`. The rules are split by component (driver, runtime,
cudnn, tensorflow, loader, variables), each a small generator; :mod:`.stack` says which copies the stack uses,
:mod:`.model` what a finding is, :mod:`.result` the judgement every view reads (:class:`Diagnosis`). Codes are
stable kebab-case strings for grep and JSON, all listed in :data:`CODES`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..environment import Environment
from .cudnn import cudnn_rules
from .driver import driver_rules, gpu_rules
from .frameworks import framework_rules
from .loader import loader_rules
from .model import CAUSES, CODES, ORDER, STOPS_ITS_COPY, Finding, Rule, Severity, Verdict, verdict
from .result import Diagnosis, FrameworkJudgement, diagnosis_of, judge_environment
from .runtime import gpu_arch_rules, runtime_rules
from .stack import assignable_devices, selected_cudnn, selected_runtime, stack_cudnn, stack_runtime, visible_gpus
from .tensorflow import tensorflow_rules
from .variables import device_rules, path_rules, windows_rules

__all__ = [
    "CODES",
    "STOPS_ITS_COPY",
    "Diagnosis",
    "Finding",
    "FrameworkJudgement",
    "Severity",
    "Verdict",
    "assignable_devices",
    "diagnose",
    "diagnosis_of",
    "judge_environment",
    "selected_cudnn",
    "selected_runtime",
    "stack_cudnn",
    "stack_runtime",
    "verdict",
    "visible_gpus",
]


def process_rules(env: Environment) -> Iterator[Finding]:
    """Frameworks that share one process (:mod:`.process`), imported only where two GPU frameworks are installed:
    a host with one pays nothing for the order model."""
    if sum(build.is_cuda_build is not False and bool(build.loads) for build in env.frameworks) < 2:
        return
    from .process import process_rules as rules

    yield from rules(env)


RULES: tuple[Rule, ...] = (
    driver_rules,
    gpu_rules,
    device_rules,  # which devices CUDA sees (MIG, CUDA_VISIBLE_DEVICES): a cause of the runtime and cuDNN findings
    runtime_rules,
    gpu_arch_rules,
    tensorflow_rules,
    framework_rules,
    cudnn_rules,
    loader_rules,
    path_rules,
    windows_rules,
    process_rules,  # frameworks that share one process: .process
)


def diagnose(env: Environment, rules: tuple[Rule, ...] = RULES) -> list[Finding]:
    """All findings, errors first, each once, in a stable order; within a severity, a cause (:data:`CAUSES`) before
    what follows from it."""
    seen: set[tuple[str, str]] = set()
    findings = []
    for rule in rules:
        for finding in rule(env):
            key = (finding.code, finding.summary)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    return sorted(findings, key=lambda f: (ORDER[f.severity], f.code not in CAUSES))
