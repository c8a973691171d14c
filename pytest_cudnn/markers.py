"""Requirement markers: parse and validate them, then judge them against an environment.

Pure module: no pytest import. Parsing happens at collection (a bad marker is the test author's error and says
which test, which marker and which value); judging happens at setup against the probed environment and gives
the message a skip or a failure carries: what was required, what was found and where, and the fix.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from . import phrases
from .devices import CudaDevice
from .diagnosis import (
    STOPS_ITS_COPY,
    Finding,
    Severity,
    selected_cudnn,
    selected_runtime,
    stack_cudnn,
    stack_runtime,
    visible_gpus,
)
from .diagnosis.frameworks import blocking_finding
from .diagnosis.stack import loaded_by, no_device_cause, visible_devices
from .environment import CudaRuntime, Cudnn, Environment, State
from .frameworks import REGISTRY
from .signatures import FRAMEWORK_NAMES, MARKERS
from .text import PYTEST_LINE, clip, line, listing, printable

__all__ = [
    "MARKERS",
    "InvalidMarker",
    "Outcome",
    "Requirement",
    "judge",
    "parse_marker",
    "parse_memory",
]

# The framework each framework marker is about, by import name (TensorFlow's marker has its own judge).
_FRAMEWORK_MARKERS = {entry.marker: entry.name for entry in REGISTRY if not entry.own_rules}
_ALL_FRAMEWORK_MARKERS = {entry.marker: entry.display for entry in REGISTRY}


class InvalidMarker(ValueError):
    """A requirement marker whose arguments cannot be understood; the message names the marker and the value."""


@dataclass(frozen=True)
class Requirement:
    marker: str
    spec: SpecifierSet | None = None
    count: int = 1
    memory: int | None = None  # bytes free on the test's GPU
    memory_text: str | None = None  # the size as the marker wrote it ("100GB"), said back as written
    compute_capability: SpecifierSet | None = None
    name: str | None = None
    gpu: bool = True
    framework: str | None = None  # requires_cudnn / requires_cuda: the framework whose copy is judged

    def describe(self) -> str:
        if self.marker == "requires_gpu":
            parts = [f"{self.count} GPU{'s' if self.count != 1 else ''}"]
            if self.memory is not None:
                parts.append(f"{self.memory_text or phrases.size(self.memory)} free")
            if self.compute_capability is not None:
                parts.append(f"compute capability {self.compute_capability}")
            if self.name is not None:
                parts.append(f"named {self.name!r}")
            return "requires " + ", ".join(parts)
        what = {
            "requires_cudnn": "cuDNN",
            "requires_cuda": "CUDA runtime",
            "requires_driver": "NVIDIA driver",
            **_ALL_FRAMEWORK_MARKERS,
        }[self.marker]
        text = f"requires {what}" + (f" {self.spec}" if self.spec is not None and str(self.spec) else "")
        if self.framework:
            text += f" as {phrases.framework(self.framework)} loads it"
        if self.marker in _ALL_FRAMEWORK_MARKERS and self.gpu:
            text += " with a usable GPU build"
        return text


_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_MEMORY = re.compile(r"^\s*(\d+)(?:\.(\d+))?\s*([a-zA-Z]*)\s*$")
# Far beyond any GPU (the largest today hold under 2**38 bytes), small enough for every integer it meets.
_MEMORY_LIMIT = 2**60


def parse_memory(value: object) -> int:
    """'16GiB' -> 17179869184, '24GB' -> 24000000000, 1024 -> 1024. Units: B, KB/MB/GB/TB (powers of 1000),
    KiB/MiB/GiB/TiB (powers of 1024).

    >>> parse_memory("1.5 GiB")
    1610612736
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidMarker(f"memory must be bytes or a string such as '16GiB', not {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise InvalidMarker(f"memory must not be negative: {value!r}")
        size = value
    else:
        match = _MEMORY.match(value)
        unit = match.group(3).lower() if match else None
        if not match or unit not in _UNITS:
            raise InvalidMarker(f"memory {value!r} is not a size such as '16GiB', '24GB' or '512MiB'")
        whole, fraction = match.group(1), match.group(2) or ""
        if len(whole) + len(fraction) > 40:  # int() of thousands of digits is slow, and no GPU is that large
            raise InvalidMarker(f"memory {value!r} is larger than any GPU's memory")
        # Exact integer arithmetic: float() turns a long digit string into inf and int(inf) raises.
        size = int(whole + fraction) * _UNITS[unit] // 10 ** len(fraction)
    if size > _MEMORY_LIMIT:
        raise InvalidMarker(f"memory {value!r} is larger than any GPU's memory")
    return size


def _spec(value: object, what: str) -> SpecifierSet:
    if not isinstance(value, str):
        raise InvalidMarker(f"{what} must be a version specifier string such as '>=8.9,<10', not {value!r}")
    text = value.strip()
    if not text.strip(", "):
        raise InvalidMarker(f"{what} {value!r} is empty: give a specifier set such as '>=8.9,<10'")
    if re.search(r"\d{31}", text):  # packaging's int() refuses over 4300 digits; no version needs 31
        raise InvalidMarker(f"{what} {clip(value, 40)!r} holds a number too long for a version")
    if re.fullmatch(r"\d+(\.\d+)*", text):
        text = f"=={text}.*"  # a bare version means that release line: '8' is 8.x
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise InvalidMarker(f"{what} {value!r} is not a PEP 440 specifier set such as '>=8.9,<10'") from None


def parse_marker(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Requirement:
    """Validate one marker's arguments. Raises InvalidMarker naming the bad value."""
    if name in ("requires_cudnn", "requires_cuda", "requires_driver"):
        extra = set(kwargs) - {"spec", *(("framework",) if name != "requires_driver" else ())}
        if extra:
            raise InvalidMarker(
                f"unknown argument {sorted(extra)[0]!r}; the signature is {MARKERS[name].split(':')[0]}"
            )
        values = list(args) + ([kwargs["spec"]] if "spec" in kwargs else [])
        if len(values) != 1:
            raise InvalidMarker(f"takes exactly one specifier, got {len(values)}")
        framework = kwargs.get("framework")
        if framework is not None and framework not in FRAMEWORK_NAMES:
            names = ", ".join(repr(n) for n in FRAMEWORK_NAMES)
            raise InvalidMarker(f"framework must be one of {names}, not {clip(repr(framework), 60)}")
        return Requirement(name, spec=_spec(values[0], "spec"), framework=framework)
    if name == "requires_gpu":
        params = ("count", "memory", "compute_capability", "name")
        if len(args) > len(params):
            raise InvalidMarker(f"takes at most {len(params)} arguments, got {len(args)}")
        given = dict(zip(params[: len(args)], args, strict=True))
        for key, value in kwargs.items():
            if key not in params:
                raise InvalidMarker(f"unknown argument {key!r}; the signature is {MARKERS[name].split(':')[0]}")
            if key in given:
                raise InvalidMarker(f"argument {key!r} given twice")
            given[key] = value
        count = given.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InvalidMarker(f"count must be a whole number of GPUs, at least 1, not {count!r}")
        memory = given.get("memory")
        cc = given.get("compute_capability")
        gpu_name = given.get("name")
        if gpu_name is not None and (not isinstance(gpu_name, str) or not gpu_name.strip()):
            raise InvalidMarker(f"name must be a non-empty glob string such as '*A100*', not {gpu_name!r}")
        return Requirement(
            name,
            count=count,
            memory=None if memory is None else parse_memory(memory),
            memory_text=memory.strip() if isinstance(memory, str) else None,
            compute_capability=None if cc is None else _spec(cc, "compute_capability"),
            name=gpu_name,
        )
    if name in _ALL_FRAMEWORK_MARKERS:
        extra = set(kwargs) - {"spec", "gpu"}
        if extra:
            raise InvalidMarker(
                f"unknown argument {sorted(extra)[0]!r}; the signature is {MARKERS[name].split(':')[0]}"
            )
        values = list(args) + ([kwargs["spec"]] if "spec" in kwargs else [])
        if len(values) > 1:
            raise InvalidMarker(f"takes at most one specifier, got {len(values)}")
        gpu = kwargs.get("gpu", True)
        if not isinstance(gpu, bool):
            raise InvalidMarker(f"gpu must be True or False, not {gpu!r}")
        spec = None if not values or values[0] is None else _spec(values[0], "spec")
        return Requirement(name, spec=spec, gpu=gpu)
    raise InvalidMarker(f"unknown marker {name!r}")  # pragma: no cover - the plugin asks only for its own


@dataclass(frozen=True)
class Outcome:
    ok: bool
    message: str  # for a failed requirement: required, found (where, how), why and the fix; printable
    cause: str  # what failed, to group skips by: a requirement key ("cudnn-version", "gpu-memory") or the code of
    # the finding that makes the required component unusable ("cudnn-incomplete", "driver-too-old-for-cuda")


def _contains(spec: SpecifierSet | None, version: str | None) -> bool:
    if spec is None:
        return True
    if version is None:
        return False
    try:
        return spec.contains(Version(version), prereleases=True)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return False


def _stops(finding: Finding) -> bool:
    """Whether a finding says its subject copies cannot run: an error, or a finding that stops its copy whatever
    its severity for the host as a whole."""
    return finding.code in STOPS_ITS_COPY or finding.severity is Severity.ERROR


def _errors_about(findings: Sequence[Finding], path: str) -> Finding | None:
    """The first finding that this very copy cannot run."""
    return next((f for f in findings if path in f.subjects and _stops(f)), None)


def _fail(
    requirement: Requirement, found: str, cause: str, finding: Finding | None = None, *, found_is_finding: bool = False
) -> Outcome:
    """A failed requirement: what was required, what was found, and, when a finding explains it, why and the fix.
    Only a finding about the component judged is given: other findings are the doctor's business. When what was
    found is the finding's own summary, it is not said twice."""
    message = f"{requirement.describe()}; found {found}"
    if finding is not None:
        message += f"; fix: {finding.fix}" if found_is_finding else f"; {finding.summary}; fix: {finding.fix}"
    # A skip's reason is a line of pytest's -rs summary: what a snapshot says (a GPU's name, a path) is bounded.
    return Outcome(False, line(message, PYTEST_LINE), cause)


def _version_cause(requirement: Requirement) -> str:
    return requirement.marker.removeprefix("requires_") + "-version"


def _gpu_blocker(env: Environment, findings: Sequence[Finding], requirement: Requirement) -> Outcome | None:
    """A requirement that needs a GPU fails first of all when none is usable, for the reason the doctor gives."""
    if env.driver.state is not State.FOUND:
        finding = next((f for f in findings if f.component == "driver" and f.severity is Severity.ERROR), None)
        if finding is None:
            return _fail(requirement, f"no NVIDIA driver ({env.driver.reason or env.driver.state.value})", "no-driver")
        return _fail(requirement, finding.summary, finding.code, finding, found_is_finding=True)
    # The doctor's reading and finding, not a second opinion: the finding that says why no device is visible is
    # the one the doctor raised from this same reading (findings come from diagnose(env)).
    cause = no_device_cause(env, visible_devices(env))
    if cause is not None:
        finding = next((f for f in findings if f.code == cause), None)
        if finding is None:
            return _fail(requirement, "no GPU visible to CUDA", cause)
        return _fail(requirement, finding.summary, finding.code, finding, found_is_finding=True)
    return None


def judge(
    requirement: Requirement,
    env: Environment,
    findings: Sequence[Finding],
    device: CudaDevice | None = None,
) -> Outcome:
    """Whether ``env`` meets ``requirement``; ``device`` is the GPU the test runs on (default: the first visible)."""
    ok = Outcome(True, printable(requirement.describe()), "")
    if requirement.marker == "requires_driver":
        driver = env.driver
        if driver.state is not State.FOUND:
            blocked = _gpu_blocker(env, findings, requirement)
            return blocked or ok
        if not _contains(requirement.spec, driver.version):
            return _fail(requirement, f"driver {driver.version} ({driver.path})", "driver-version")
        return ok
    if requirement.marker == "requires_tensorflow":
        return _judge_tensorflow(requirement, env, findings)
    if requirement.marker in _FRAMEWORK_MARKERS:
        return _judge_framework(requirement, env, findings)
    blocked = _gpu_blocker(env, findings, requirement)
    if blocked is not None:
        return blocked
    named = requirement.framework
    if named is not None and not any(b.name == named for b in env.frameworks):
        return _fail(requirement, f"no {phrases.framework(named)} installed", f"{named}-missing")
    if requirement.marker == "requires_cudnn":
        cudnn = selected_cudnn(env, requirement.spec, _unusable(findings), named)
        return _judge_copy(requirement, env, findings, cudnn, "cuDNN")
    if requirement.marker == "requires_cuda":
        runtime = selected_runtime(env, requirement.spec, _unusable(findings), named)
        return _judge_copy(requirement, env, findings, runtime, "CUDA runtime")
    return _judge_gpu(requirement, env, device)


def _unusable(findings: Sequence[Finding]) -> frozenset[str]:
    return frozenset(path for f in findings if _stops(f) for path in f.subjects)


def _judge_copy(
    requirement: Requirement,
    env: Environment,
    findings: Sequence[Finding],
    copy: CudaRuntime | Cudnn | None,
    label: str,
) -> Outcome:
    """A cuDNN or CUDA runtime requirement: the copy the stack uses must match and must be able to run."""
    kind = requirement.marker.removeprefix("requires_")
    if copy is None:
        who = phrases.framework(requirement.framework) if requirement.framework else "the loader"
        return _fail(requirement, f"no {label} {who} can find", f"{kind}-missing")
    users = [f"{phrases.framework(b.name)} {b.version or ''}".strip() for b in loaded_by(env, copy)]
    where = phrases.copy(copy, *([f"loaded by {' and '.join(users)}"] if users else []))
    broken = _errors_about(findings, copy.path)
    # A version that does not match is the cause; but a copy too broken to tell its version fails for that.
    if not _contains(requirement.spec, copy.version) and not (copy.version is None and broken is not None):
        return _fail(requirement, where, _version_cause(requirement))
    if broken is not None:
        return _fail(requirement, where, broken.code, broken)
    return Outcome(True, printable(requirement.describe()), "")


def _judge_gpu(requirement: Requirement, env: Environment, device: CudaDevice | None) -> Outcome:
    gpus = visible_gpus(env)
    if len(gpus) < requirement.count:
        names = listing([f"[{g.label.removeprefix('GPU ')}] {g.name}" for g in gpus])
        mig = " (a CUDA process sees a single MIG device)" if any(g.mig is not None for g in gpus) else ""
        return _fail(requirement, f"{len(gpus)} visible GPU(s): {names}{mig}", "gpu-count")
    device = device or gpus[0]
    label = phrases.gpu(device)
    if requirement.memory is not None and (device.memory_free is None or device.memory_free < requirement.memory):
        return _fail(requirement, label, "gpu-memory")
    if requirement.compute_capability is not None and not _contains(
        requirement.compute_capability, device.compute_capability
    ):
        return _fail(requirement, label, "gpu-capability")
    if requirement.name is not None and not fnmatch.fnmatchcase(device.name or "", requirement.name):
        return _fail(requirement, label, "gpu-name")
    return Outcome(True, printable(requirement.describe()), "")


def _judge_framework(requirement: Requirement, env: Environment, findings: Sequence[Finding]) -> Outcome:
    """requires_torch / requires_jax: installed within spec and, with gpu=True, able to run GPU work here."""
    name = _FRAMEWORK_MARKERS[requirement.marker]
    build = next((b for b in env.frameworks if b.name == name), None)
    if build is None:
        return _fail(requirement, f"no {phrases.framework(name)} installed", f"{name}-missing")
    where = (
        f"{phrases.framework(name)} {build.version or '(version unknown)'} ({build.distribution}) at {build.location}"
    )
    if requirement.spec is not None and not _contains(requirement.spec, build.version):
        return _fail(requirement, where, f"{name}-version")
    if not requirement.gpu:
        return Outcome(True, printable(requirement.describe()), "")
    if build.is_cuda_build is False:
        cpu_only = next((f for f in findings if f.code == "framework-cpu-only" and build.location in f.subjects), None)
        return _fail(requirement, where + " (a CPU-only build)", "framework-cpu-only", cpu_only)
    blocked = _gpu_blocker(env, findings, requirement)
    if blocked is not None:
        return blocked
    finding = blocking_finding(build, findings)
    if finding is not None:
        return _fail(requirement, where, finding.code, finding)
    return Outcome(True, printable(requirement.describe()), "")


def _judge_tensorflow(requirement: Requirement, env: Environment, findings: Sequence[Finding]) -> Outcome:
    tf = env.tensorflow
    if tf.state is State.ABSENT:
        return _fail(requirement, "no TensorFlow installed", "tensorflow-missing")
    where = f"TensorFlow {tf.version} ({tf.distribution}) at {tf.location}"
    if requirement.spec is not None and not _contains(requirement.spec, tf.version):
        return _fail(requirement, where, "tensorflow-version")
    if requirement.gpu:
        if tf.is_cuda_build is False:
            cpu_only = next(
                (f for f in findings if f.code in ("tensorflow-cpu-only", "windows-tensorflow-no-gpu")), None
            )
            return _fail(requirement, where + " (a CPU-only build)", "tensorflow-cpu-only", cpu_only)
        blocked = _gpu_blocker(env, findings, requirement)
        if blocked is not None:
            return blocked
        # TensorFlow's own stack: its findings, and errors about the copies it loads.
        used = {copy.path for copy in (stack_runtime(env), stack_cudnn(env)) if copy is not None}
        finding = next(
            (
                f
                for f in findings
                if f.severity is Severity.ERROR
                and (f.component in ("tensorflow", "driver", "gpu", "loader") or used & set(f.subjects))
            ),
            None,
        )
        if finding is not None:
            return _fail(requirement, where, finding.code, finding)
    return Outcome(True, printable(requirement.describe()), "")
