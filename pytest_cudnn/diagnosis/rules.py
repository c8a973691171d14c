"""Every rule, in the order their findings are listed, and :func:`diagnose`, which runs them: the findings
:mod:`.result` judges from."""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterator, Sequence

from ..environment import Environment
from .container import container_rules
from .cudnn import cudnn_rules
from .driver import driver_rules, gpu_rules
from .forward import forward_rules
from .frameworks import framework_rules
from .health import health_rules
from .libraries import library_rules
from .loader import loader_rules
from .model import CAUSES, FOLLOWS, ORDER, Finding, Rule, Severity
from .platform import platform_rules
from .runtime import gpu_arch_rules, runtime_rules
from .tensorflow import tensorflow_rules
from .variables import device_rules, path_rules, windows_rules
from .wheels import wheel_rules

__all__ = ["RULES", "cause_first", "diagnose"]


def process_rules(env: Environment) -> Iterator[Finding]:
    """Frameworks that share one process (:mod:`.process`), imported only where two GPU frameworks are installed:
    a host with one pays nothing for the order model."""
    if sum(build.is_cuda_build is not False and bool(build.loads) for build in env.frameworks) < 2:
        return
    from .process import process_rules as rules

    yield from rules(env)


RULES: tuple[Rule, ...] = (
    platform_rules,  # WSL2, Tegra, GPUs the driver dropped: what kind of host decides what the rest means
    container_rules,  # a container's causes first: the driver's and CUDA's failures follow from them
    driver_rules,
    forward_rules,
    gpu_rules,
    health_rules,  # each GPU's state (ECC, remapping, compute mode, clocks, link) and how pairs reach each other
    device_rules,  # which devices CUDA sees (MIG, CUDA_VISIBLE_DEVICES): a cause of the runtime and cuDNN findings
    runtime_rules,
    gpu_arch_rules,
    tensorflow_rules,
    framework_rules,
    wheel_rules,
    cudnn_rules,
    library_rules,  # the catalog's further kinds (NCCL): after the wheels that overwrite their files
    loader_rules,
    path_rules,
    windows_rules,
    process_rules,  # frameworks that share one process: .process
)


def diagnose(env: Environment, rules: tuple[Rule, ...] = RULES) -> list[Finding]:
    """All findings, each once, in a stable order, cause first: a finding that follows from another (its
    ``because``, set by its rule or by :data:`FOLLOWS`) comes right after it; the rest, errors first (a cause ranks
    with the worst of what follows from it) and within a severity a cause (:data:`CAUSES`) before the others."""
    seen: dict[tuple[str, str], int] = {}  # (code, summary) -> its place: one finding said once
    findings: list[Finding] = []
    for rule in rules:
        for finding in rule(env):
            key = (finding.code, finding.summary)
            if key not in seen:
                seen[key] = len(findings)
                findings.append(finding)
            elif finding.gpus:  # the same finding about another GPU: one finding about both
                first = findings[seen[key]]
                gpus = tuple(dict.fromkeys((*first.gpus, *finding.gpus)))
                findings[seen[key]] = dataclasses.replace(first, gpus=gpus)
    return cause_first(findings)


def cause_first(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` linked to their causes and ordered as :func:`diagnose` says. A ``because`` naming no finding
    raised here is dropped: the product never says a cause it did not find."""
    causes = _Index(findings)
    parent: list[int | None] = [causes.cause_of(at) for at in range(len(findings))]
    for index in range(len(findings)):  # a loop of causes (no table makes one) is cut where it closes
        walked, at = {index}, parent[index]
        while at is not None and at not in walked:
            walked.add(at)
            at = parent[at]
        if at == index:
            parent[index] = None
    linked = [
        dataclasses.replace(finding, because=None if cause is None else findings[cause].code)
        for finding, cause in zip(findings, parent, strict=True)
    ]
    children: dict[int, list[int]] = {}
    roots = []
    for index, cause in enumerate(parent):
        if cause is None:
            roots.append(index)
        else:
            children.setdefault(cause, []).append(index)

    def rank(index: int) -> int:  # the worst severity of a finding and of all that follows from it
        return min([ORDER[findings[index].severity], *(rank(child) for child in children.get(index, ()))])

    ordered: list[Finding] = []

    def emit(index: int) -> None:
        ordered.append(linked[index])
        for child in sorted(children.get(index, ()), key=lambda i: (ORDER[findings[i].severity], i)):
            emit(child)

    for root in sorted(roots, key=lambda i: (rank(i), findings[i].code not in CAUSES, i)):
        emit(root)
    return ordered


class _Index:
    """Where each finding's cause can be, looked up in time linear in the findings and their subjects: the findings
    of a code (of a code and a subject; of a code that are errors), each list in the order given."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = findings
        self.by_code: dict[str, list[int]] = {}
        self.errors: dict[str, list[int]] = {}
        self.by_subject: dict[tuple[str, str], list[int]] = {}
        for at, finding in enumerate(findings):
            self.by_code.setdefault(finding.code, []).append(at)
            if finding.severity is Severity.ERROR:
                self.errors.setdefault(finding.code, []).append(at)
            for subject in dict.fromkeys(finding.subjects):
                self.by_subject.setdefault((finding.code, subject), []).append(at)

    def cause_of(self, at: int) -> int | None:
        """The index of the finding ``findings[at]`` follows from, None for a root: of the code its rule named (or
        an earlier pass of this wrote), else of each code :data:`FOLLOWS` names for it in turn, one the link holds
        for ("subject": sharing a subject; "error": an error), the nearest above it, else the first below. A second
        pass over its own output so links each finding to the same cause (diagnose() lists it right above)."""
        finding = self.findings[at]
        table = dict(FOLLOWS.get(finding.code, ()))
        links = [(finding.because, table.get(finding.because, "host"))] if finding.because else list(table.items())
        for code, how in links:
            found = self._nearest(self._candidates(code, how, finding), at)
            if found is not None:
                return found
        return None

    def _candidates(self, code: str, how: str, finding: Finding) -> list[list[int]]:
        if how == "subject":
            return [self.by_subject.get((code, subject), []) for subject in dict.fromkeys(finding.subjects)]
        return [self.errors.get(code, [])] if how == "error" else [self.by_code.get(code, [])]

    @staticmethod
    def _nearest(lists: list[list[int]], at: int) -> int | None:
        above = [found[place - 1] for found in lists if (place := bisect.bisect_left(found, at)) > 0]
        if above:
            return max(above)
        below = [found[place] for found in lists if (place := bisect.bisect_right(found, at)) < len(found)]
        return min(below) if below else None
