"""Every rule, in the order their findings are listed, and :func:`diagnose`, which runs them: the findings
:mod:`.result` judges from."""

from __future__ import annotations

from collections.abc import Iterator

from ..environment import Environment
from .container import container_rules
from .cudnn import cudnn_rules
from .driver import driver_rules, gpu_rules
from .forward import forward_rules
from .frameworks import framework_rules
from .loader import loader_rules
from .model import CAUSES, ORDER, Finding, Rule
from .runtime import gpu_arch_rules, runtime_rules
from .tensorflow import tensorflow_rules
from .variables import device_rules, path_rules, windows_rules
from .wheels import wheel_rules

__all__ = ["RULES", "diagnose"]


def process_rules(env: Environment) -> Iterator[Finding]:
    """Frameworks that share one process (:mod:`.process`), imported only where two GPU frameworks are installed:
    a host with one pays nothing for the order model."""
    if sum(build.is_cuda_build is not False and bool(build.loads) for build in env.frameworks) < 2:
        return
    from .process import process_rules as rules

    yield from rules(env)


RULES: tuple[Rule, ...] = (
    container_rules,  # a container's causes first: the driver's and CUDA's failures follow from them
    driver_rules,
    forward_rules,
    gpu_rules,
    device_rules,  # which devices CUDA sees (MIG, CUDA_VISIBLE_DEVICES): a cause of the runtime and cuDNN findings
    runtime_rules,
    gpu_arch_rules,
    tensorflow_rules,
    framework_rules,
    wheel_rules,
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
