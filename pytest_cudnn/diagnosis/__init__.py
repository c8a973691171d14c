"""Findings: what is wrong with an environment, where, why, and what to do.

Pure package: an :class:`~pytest_cudnn.environment.Environment` plus the sourced knowledge in
:mod:`pytest_cudnn.compat` give a list of :class:`Finding`. The rules are split by component (driver, runtime,
cudnn, tensorflow, loader, variables), each a small generator, run in order by :mod:`.rules`; :mod:`.stack` says
which copies the stack uses, :mod:`.model` what a finding is, :mod:`.result` the judgement every view reads
(:class:`Diagnosis`). Codes are stable kebab-case strings for grep and JSON, all listed in :data:`CODES`.
"""

from __future__ import annotations

from .model import CODES, STOPS_ITS_COPY, Finding, Severity, Verdict, verdict
from .result import Diagnosis, FrameworkJudgement, diagnosis_of, judge_environment
from .rules import RULES, diagnose
from .stack import assignable_devices, selected_cudnn, selected_runtime, stack_cudnn, stack_runtime, visible_gpus

__all__ = [
    "CODES",
    "RULES",
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
