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
from packaging.version import InvalidVersion, Version

from .diagnosis import Finding, Severity, selected_cudnn, selected_runtime, visible_gpus
from .environment import Environment, Gpu, State

__all__ = [
    "MARKERS",
    "InvalidMarker",
    "Outcome",
    "Requirement",
    "judge",
    "parse_marker",
    "parse_memory",
]

# name -> call signature and help, as `pytest --markers` shows them.
MARKERS: dict[str, str] = {
    "requires_cudnn": "requires_cudnn(spec): skip unless the cuDNN in use matches the PEP 440 specifier set, "
    "e.g. '>=8.9,<10'.",
    "requires_cuda": "requires_cuda(spec): skip unless the CUDA runtime in use matches the specifier set, e.g. '>=12'.",
    "requires_driver": "requires_driver(spec): skip unless the NVIDIA driver version matches, e.g. '>=535'.",
    "requires_gpu": "requires_gpu(count=1, memory=None, compute_capability=None, name=None): skip unless at least "
    "count GPUs are visible and the test's GPU has memory free ('16GiB', '24GB' or bytes), a compute capability "
    "matching the specifier set (e.g. '>=8.0') and a name matching the glob.",
    "requires_tensorflow": "requires_tensorflow(spec=None, *, gpu=True): skip unless TensorFlow is installed within "
    "spec and, with gpu=True, its build's CUDA and cuDNN are usable on this host.",
}


class InvalidMarker(ValueError):
    """A requirement marker whose arguments cannot be understood; the message names the marker and the value."""


@dataclass(frozen=True)
class Requirement:
    marker: str
    spec: SpecifierSet | None = None
    count: int = 1
    memory: int | None = None  # bytes free on the test's GPU
    compute_capability: SpecifierSet | None = None
    name: str | None = None
    gpu: bool = True

    def describe(self) -> str:
        if self.marker == "requires_gpu":
            parts = [f"{self.count} GPU{'s' if self.count != 1 else ''}"]
            if self.memory is not None:
                parts.append(f"{_bytes(self.memory)} free")
            if self.compute_capability is not None:
                parts.append(f"compute capability {self.compute_capability}")
            if self.name is not None:
                parts.append(f"named {self.name!r}")
            return "requires " + ", ".join(parts)
        what = {
            "requires_cudnn": "cuDNN",
            "requires_cuda": "CUDA runtime",
            "requires_driver": "NVIDIA driver",
            "requires_tensorflow": "TensorFlow",
        }[self.marker]
        text = f"requires {what}" + (f" {self.spec}" if self.spec is not None and str(self.spec) else "")
        if self.marker == "requires_tensorflow" and self.gpu:
            text += " with a usable GPU build"
        return text


def _bytes(value: int) -> str:
    for unit, size in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


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
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


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
        return value
    match = _MEMORY.match(value)
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise InvalidMarker(f"memory {value!r} is not a size such as '16GiB', '24GB' or '512MiB'")
    return int(float(match.group(1)) * _UNITS[unit])


def _spec(value: object, what: str) -> SpecifierSet:
    if not isinstance(value, str):
        raise InvalidMarker(f"{what} must be a version specifier string such as '>=8.9,<10', not {value!r}")
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)*", text):
        text = f"=={text}.*"  # a bare version means that release line: '8' is 8.x
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise InvalidMarker(f"{what} {value!r} is not a PEP 440 specifier set such as '>=8.9,<10'") from None


def parse_marker(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Requirement:
    """Validate one marker's arguments. Raises InvalidMarker naming the bad value."""
    if name in ("requires_cudnn", "requires_cuda", "requires_driver"):
        extra = set(kwargs) - {"spec"}
        if extra:
            raise InvalidMarker(
                f"unknown argument {sorted(extra)[0]!r}; the signature is {MARKERS[name].split(':')[0]}"
            )
        values = list(args) + ([kwargs["spec"]] if "spec" in kwargs else [])
        if len(values) != 1:
            raise InvalidMarker(f"takes exactly one specifier, got {len(values)}")
        return Requirement(name, spec=_spec(values[0], "spec"))
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
        if gpu_name is not None and not isinstance(gpu_name, str):
            raise InvalidMarker(f"name must be a glob string such as '*A100*', not {gpu_name!r}")
        return Requirement(
            name,
            count=count,
            memory=None if memory is None else parse_memory(memory),
            compute_capability=None if cc is None else _spec(cc, "compute_capability"),
            name=gpu_name,
        )
    if name == "requires_tensorflow":
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
    message: str  # for a failed requirement: required, found (where, how), why and the fix
    cause: str  # a short key to group skips by: a finding code, or e.g. "cudnn-version", "gpu-memory"


def _contains(spec: SpecifierSet | None, version: str | None) -> bool:
    if spec is None:
        return True
    if version is None:
        return False
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def _explain(findings: Sequence[Finding], components: Sequence[str]) -> Finding | None:
    """The first error-level finding about one of ``components``: the why and the fix of a failed requirement."""
    return next((f for f in findings if f.severity is Severity.ERROR and f.component in components), None)


def _fail(requirement: Requirement, found: str, finding: Finding | None, cause: str | None = None) -> Outcome:
    message = f"{requirement.describe()}; found {found}"
    cause = cause or requirement.marker.removeprefix("requires_") + "-version"
    if finding is not None:
        message += f"; {finding.summary}: {finding.remedy}"
        cause = finding.code
    return Outcome(False, message, cause)


def _gpu_blocker(env: Environment, findings: Sequence[Finding], requirement: Requirement) -> Outcome | None:
    """A requirement that needs a GPU fails first of all when none is usable."""
    if env.driver.state is not State.FOUND or not visible_gpus(env):
        finding = _explain(findings, ("driver", "gpu", "environment"))
        found = "no usable GPU" if env.driver.state is State.FOUND else f"no NVIDIA driver ({env.driver.reason})"
        return _fail(requirement, found, finding, "no-gpu")
    return None


def judge(
    requirement: Requirement,
    env: Environment,
    findings: Sequence[Finding],
    device: Gpu | None = None,
) -> Outcome:
    """Whether ``env`` meets ``requirement``; ``device`` is the GPU the test runs on (default: the first visible)."""
    ok = Outcome(True, requirement.describe(), "")
    if requirement.marker == "requires_driver":
        driver = env.driver
        if driver.state is not State.FOUND:
            return _fail(requirement, f"no NVIDIA driver ({driver.reason})", _explain(findings, ("driver",)))
        if not _contains(requirement.spec, driver.version):
            return _fail(requirement, f"driver {driver.version} ({driver.path})", None)
        return ok
    if requirement.marker == "requires_tensorflow":
        return _judge_tensorflow(requirement, env, findings)
    blocked = _gpu_blocker(env, findings, requirement)
    if blocked is not None:
        return blocked
    if requirement.marker == "requires_cudnn":
        cudnn = selected_cudnn(env, requirement.spec)
        if cudnn is None:
            return _fail(requirement, "no cuDNN the loader can find", _explain(findings, ("cudnn", "tensorflow")))
        where = f"cuDNN {cudnn.version} at {cudnn.path} (via {', '.join(v.value for v in cudnn.via)})"
        if not _contains(requirement.spec, cudnn.version):
            return _fail(requirement, where, _explain(findings, ("cudnn", "tensorflow")))
        if cudnn.state is State.ERROR or cudnn.siblings_missing:
            return _fail(requirement, where, _explain(findings, ("cudnn",)), "cudnn-incomplete")
        return ok
    if requirement.marker == "requires_cuda":
        runtime = selected_runtime(env, requirement.spec)
        if runtime is None:
            return _fail(requirement, "no CUDA runtime the loader can find", _explain(findings, ("cuda-runtime",)))
        where = f"CUDA runtime {runtime.version} at {runtime.path} (via {', '.join(v.value for v in runtime.via)})"
        if not _contains(requirement.spec, runtime.version):
            return _fail(requirement, where, _explain(findings, ("cuda-runtime",)))
        return ok
    return _judge_gpu(requirement, env, findings, device)


def _judge_gpu(requirement: Requirement, env: Environment, findings: Sequence[Finding], device: Gpu | None) -> Outcome:
    gpus = visible_gpus(env)
    if len(gpus) < requirement.count:
        names = ", ".join(f"[{g.index}] {g.name}" for g in gpus)
        return _fail(requirement, f"{len(gpus)} visible GPU(s): {names}", None, "gpu-count")
    device = device or gpus[0]
    label = f"GPU {device.index} {device.name} (compute capability {device.compute_capability}, " + (
        f"{_bytes(device.memory_free)} free)" if device.memory_free is not None else "free memory unknown)"
    )
    if requirement.memory is not None and (device.memory_free is None or device.memory_free < requirement.memory):
        return _fail(requirement, label, None, "gpu-memory")
    if requirement.compute_capability is not None and not _contains(
        requirement.compute_capability, device.compute_capability
    ):
        return _fail(requirement, label, None, "gpu-capability")
    if requirement.name is not None and not fnmatch.fnmatchcase(device.name or "", requirement.name):
        return _fail(requirement, label, None, "gpu-name")
    return Outcome(True, requirement.describe(), "")


def _judge_tensorflow(requirement: Requirement, env: Environment, findings: Sequence[Finding]) -> Outcome:
    tf = env.tensorflow
    if tf.state is State.ABSENT:
        return _fail(requirement, "no TensorFlow installed", None, "tensorflow-missing")
    where = f"TensorFlow {tf.version} ({tf.distribution}) at {tf.location}"
    if not _contains(requirement.spec, tf.version) and requirement.spec is not None:
        return _fail(requirement, where, None)
    if requirement.gpu:
        if tf.is_cuda_build is False:
            cpu_only = next(
                (f for f in findings if f.code in ("tensorflow-cpu-only", "windows-tensorflow-no-gpu")), None
            )
            return _fail(requirement, where + " (a CPU-only build)", cpu_only, "tensorflow-cpu-only")
        blocked = _gpu_blocker(env, findings, requirement)
        if blocked is not None:
            return blocked
        finding = _explain(findings, ("tensorflow", "cudnn", "cuda-runtime", "driver", "gpu", "loader"))
        if finding is not None:
            return _fail(requirement, where, finding)
    return Outcome(True, requirement.describe(), "")
