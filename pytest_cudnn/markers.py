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
from ._base.text import PYTEST_LINE, clip, line, listing, printable
from .compat.catalog import MARKED, LibraryKind
from .devices import CudaDevice
from .diagnosis import STOPS_ITS_COPY, Diagnosis, Finding, FrameworkJudgement, Severity, visible_gpus
from .diagnosis.frameworks import label as framework_label
from .diagnosis.health import P2P_STATUS, peer_access
from .diagnosis.stack import loaded_by, selected_cudnn, selected_runtime
from .environment import CudaRuntime, Cudnn, Environment, LibraryCopy, State
from .frameworks import REGISTRY
from .signatures import FRAMEWORK_NAMES, MARKERS

__all__ = [
    "MARKERS",
    "InvalidMarker",
    "Outcome",
    "Requirement",
    "copy_for",
    "judge",
    "parse_marker",
    "parse_memory",
]

# The framework each framework marker is about; every one is a question to its verdict.
_MARKER_ENTRIES = {entry.marker: entry for entry in REGISTRY}
_FRAMEWORK_MARKERS = {marker: entry.name for marker, entry in _MARKER_ENTRIES.items()}
_ALL_FRAMEWORK_MARKERS = {marker: entry.display for marker, entry in _MARKER_ENTRIES.items()}
# The catalog's further kinds (NCCL): requires_nccl judges the copy a framework loads, as requires_cudnn does.
_KIND_MARKERS = {f"requires_{kind.key}": kind for kind in MARKED}
_COPY_MARKERS = ("requires_cudnn", "requires_cuda", *_KIND_MARKERS)


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
    framework: str | None = None  # requires_cudnn / requires_cuda / requires_nccl: the framework whose copy is judged
    preload: str | None = None  # requires_onnxruntime(preload_dlls=True): judged after that call ("onnxruntime...")
    healthy: bool = False  # requires_gpu(healthy=True): the test's GPU has no fault of its state (issue 32)
    peer_access: bool = False  # requires_gpu(count=2, peer_access=True): the test's GPUs read and write each other's
    interconnect: str | None = None  # requires_gpu(count=2, interconnect="nvlink"): they reach each other by NVLink

    def describe(self) -> str:
        if self.marker == "requires_gpu":
            parts = [f"{self.count} GPU{'s' if self.count != 1 else ''}"]
            if self.memory is not None:
                parts.append(f"{self.memory_text or phrases.size(self.memory)} free")
            if self.compute_capability is not None:
                parts.append(f"compute capability {self.compute_capability}")
            if self.name is not None:
                parts.append(f"named {self.name!r}")
            if self.healthy:
                parts.append("healthy")
            if self.peer_access:
                parts.append("with peer access to each other")
            if self.interconnect:
                parts.append("connected by NVLink")
            return "requires " + ", ".join(parts)
        what = {
            "requires_cudnn": "cuDNN",
            "requires_cuda": "CUDA runtime",
            "requires_driver": "NVIDIA driver",
            **{marker: kind.display for marker, kind in _KIND_MARKERS.items()},
            **_ALL_FRAMEWORK_MARKERS,
        }[self.marker]
        text = f"requires {what}" + (f" {self.spec}" if self.spec is not None and str(self.spec) else "")
        if self.framework:
            text += f" as {phrases.framework(self.framework)} loads it"
        if self.marker in _ALL_FRAMEWORK_MARKERS and self.gpu:
            text += " with a usable GPU build" + (f" after {self.preload}" if self.preload else "")
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
    if name in (*_COPY_MARKERS, "requires_driver"):
        return _library_marker(name, args, kwargs)
    if name == "requires_gpu":
        return _gpu_marker(name, args, kwargs)
    if name in _ALL_FRAMEWORK_MARKERS:
        return _framework_marker(name, args, kwargs)
    raise InvalidMarker(f"unknown marker {name!r}")  # pragma: no cover - the plugin asks only for its own


def _unknown(name: str, extra: set[str]) -> InvalidMarker:
    return InvalidMarker(f"unknown argument {sorted(extra)[0]!r}; the signature is {MARKERS[name].split(':')[0]}")


def _one_spec(args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
    """The marker's specifier, given by position or as ``spec=``: at most one."""
    values = list(args) + ([kwargs["spec"]] if "spec" in kwargs else [])
    if len(values) > 1:
        raise InvalidMarker(f"takes at most one specifier, got {len(values)}")
    return values


def _library_marker(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Requirement:
    """requires_cudnn, requires_cuda, requires_nccl, requires_driver: one specifier, and (not for the driver)
    ``framework=``."""
    extra = set(kwargs) - {"spec", *(("framework",) if name != "requires_driver" else ())}
    if extra:
        raise _unknown(name, extra)
    values = _one_spec(args, kwargs)
    framework = kwargs.get("framework")
    if framework is not None and framework not in FRAMEWORK_NAMES:
        names = ", ".join(repr(n) for n in FRAMEWORK_NAMES)
        raise InvalidMarker(f"framework must be one of {names}, not {clip(repr(framework), 60)}")
    # Bare (@requires_cudnn): any version, as requires_tensorflow() takes it; a copy must still be found, its
    # version read, and nothing stop it.
    wanted = _spec(values[0], "spec") if values else SpecifierSet()
    return Requirement(name, spec=wanted, framework=framework)


_GPU_KEYWORDS = ("healthy", "peer_access", "interconnect")  # keyword-only
_INTERCONNECTS = ("nvlink",)


def _gpu_marker(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Requirement:
    """requires_gpu(count, memory, compute_capability, name, *, healthy, peer_access, interconnect), the first four
    by position or by keyword."""
    params = ("count", "memory", "compute_capability", "name")
    if len(args) > len(params):
        raise InvalidMarker(f"takes at most {len(params)} arguments, got {len(args)}")
    given = dict(zip(params[: len(args)], args, strict=True))
    for key, value in kwargs.items():
        if key not in params + _GPU_KEYWORDS:
            raise _unknown(name, {key})
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
    for flag in ("healthy", "peer_access"):
        if not isinstance(given.get(flag, False), bool):
            raise InvalidMarker(f"{flag} must be True or False, not {clip(repr(given[flag]), 60)}")
    interconnect = given.get("interconnect")
    if interconnect is not None and interconnect not in _INTERCONNECTS:
        raise InvalidMarker(f"interconnect must be 'nvlink', not {clip(repr(interconnect), 60)}")
    if (given.get("peer_access") or interconnect) and count < 2:
        raise InvalidMarker("peer_access and interconnect are about two GPUs or more: give count=2 or more")
    return Requirement(
        name,
        count=count,
        memory=None if memory is None else parse_memory(memory),
        memory_text=memory.strip() if isinstance(memory, str) else None,
        compute_capability=None if cc is None else _spec(cc, "compute_capability"),
        name=gpu_name,
        healthy=given.get("healthy", False),
        peer_access=given.get("peer_access", False),
        interconnect=interconnect,
    )


def _framework_marker(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Requirement:
    """requires_<framework>(spec=None, *, gpu=True), and ``preload_dlls=`` where the framework has a preload."""
    entry = _MARKER_ENTRIES[name]
    extra = set(kwargs) - {"spec", "gpu"} - ({"preload_dlls"} if entry.preload else set())
    if extra:
        raise _unknown(name, extra)
    values = _one_spec(args, kwargs)
    gpu = kwargs.get("gpu", True)
    if not isinstance(gpu, bool):
        raise InvalidMarker(f"gpu must be True or False, not {gpu!r}")
    spec = None if not values or values[0] is None else _spec(values[0], "spec")
    preload = kwargs.get("preload_dlls", False)
    if not isinstance(preload, bool):
        raise InvalidMarker(f"preload_dlls must be True or False, not {clip(repr(preload), 60)}")
    return Requirement(name, spec=spec, gpu=gpu, preload=entry.preload[0] if preload and entry.preload else None)


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


def _ok(requirement: Requirement) -> Outcome:
    return Outcome(True, printable(requirement.describe()), "")


def _version_cause(requirement: Requirement) -> str:
    return requirement.marker.removeprefix("requires_") + "-version"


def _host_blocked(requirement: Requirement, diagnosis: Diagnosis) -> Outcome | None:
    """A requirement that needs a GPU fails first of all when none is usable, for the reason the doctor gives."""
    host = diagnosis.host
    if host is None:
        return None
    return _fail(requirement, host.reason, host.cause, host.finding, found_is_finding=host.finding is not None)


def judge(requirement: Requirement, diagnosis: Diagnosis, device: CudaDevice | None = None) -> Outcome:
    """Whether the diagnosed environment meets ``requirement``; ``device`` is the GPU the test runs on (default:
    the first visible). Every answer is read from ``diagnosis``: a framework's verdict, the copies it loads, the
    finding that stops it; nothing is judged a second way here."""
    env = diagnosis.env
    if requirement.marker == "requires_driver":
        driver = env.driver
        if driver.state is not State.FOUND:
            return _host_blocked(requirement, diagnosis) or _ok(requirement)
        if not _contains(requirement.spec, driver.version):
            return _fail(requirement, f"driver {driver.version} ({driver.path})", "driver-version")
        return _ok(requirement)
    if requirement.marker in _FRAMEWORK_MARKERS:
        return _judge_framework(requirement, diagnosis)
    blocked = _host_blocked(requirement, diagnosis)
    if blocked is not None:
        return blocked
    if requirement.marker in _COPY_MARKERS:
        return _judge_library(requirement, diagnosis)
    return _judge_gpu(requirement, diagnosis, device)


Copy = CudaRuntime | Cudnn | LibraryCopy


def _its_copy(requirement: Requirement, judged: FrameworkJudgement) -> Copy | None:
    kind = _KIND_MARKERS.get(requirement.marker)
    if kind is not None:
        return judged.library(kind.key)
    return judged.cudnn if requirement.marker == "requires_cudnn" else judged.runtime


def copy_for(requirement: Requirement, diagnosis: Diagnosis) -> list[tuple[FrameworkJudgement | None, Copy | None]]:
    """The copies a cuDNN, CUDA or catalog-kind (NCCL) requirement judges, each with the framework that loads it:
    ``framework=X``'s, else every installed GPU framework's that loads one, else the loader's (see
    :meth:`Diagnosis.copies_for`)."""
    named = requirement.framework
    if named is not None:
        judged = diagnosis.framework(named)
        return [] if judged is None else [(judged, _its_copy(requirement, judged))]
    kind = _KIND_MARKERS.get(requirement.marker)
    if kind is not None:
        users = [judged for judged in diagnosis.frameworks if judged.gpu_build and judged.library(kind.key)]
        return [(judged, judged.library(kind.key)) for judged in users] or [(None, _loader_copy(diagnosis, kind))]
    cudnn = requirement.marker == "requires_cudnn"
    users = diagnosis.copies_for(Cudnn if cudnn else CudaRuntime)
    if users:
        return [(judged, _its_copy(requirement, judged)) for judged in users]
    # No framework loads one: the copy the loader (or TensorFlow's search) gives, one matching if any does.
    avoid = frozenset(path for f in diagnosis.findings if _stops(f) for path in f.subjects)
    select = selected_cudnn if cudnn else selected_runtime
    return [(None, select(env=diagnosis.env, spec=requirement.spec, avoid=avoid))]


def _loader_copy(diagnosis: Diagnosis, kind: LibraryKind) -> LibraryCopy | None:
    """The copy of ``kind`` a plain dlopen of its name gives (as loaded in the probe's child, else as predicted)."""
    env = diagnosis.env
    for resolution in env.resolutions:
        if resolution.context == "process" and re.fullmatch(kind.linux, resolution.name):
            path = resolution.loaded or resolution.predicted
            copy = env.library(path) if path else None
            if copy is not None and copy.kind == kind.key:
                return copy
    return None


def _judge_library(requirement: Requirement, diagnosis: Diagnosis) -> Outcome:
    """requires_cudnn / requires_cuda: every copy the requirement judges (:func:`copy_for`) must match, and the
    framework that loads it must be able to run."""
    named = requirement.framework
    judged_copies = copy_for(requirement, diagnosis)
    if named is not None and not judged_copies:
        return _fail(requirement, f"no {phrases.framework(named)} installed", f"{named}-missing")
    kind = _KIND_MARKERS.get(requirement.marker)
    label = kind.display if kind else "cuDNN" if requirement.marker == "requires_cudnn" else "CUDA runtime"
    for judged, copy in judged_copies:
        outcome = _judge_copy(requirement, diagnosis, judged, copy, label)
        if not outcome.ok:
            if named is None and len(judged_copies) > 1 and judged is not None:
                # Several frameworks, each with its copy: say how to ask about one of them.
                note = f" (without framework=, every installed framework's {label} must meet it: name one)"
                return Outcome(False, line(outcome.message + note, PYTEST_LINE), outcome.cause)
            return outcome
    return _ok(requirement)


def _judge_copy(
    requirement: Requirement,
    diagnosis: Diagnosis,
    judged: FrameworkJudgement | None,
    copy: Copy | None,
    label: str,
) -> Outcome:
    """One copy: it must exist, match, be able to run, and the framework that loads it (if any) must be able to."""
    kind = requirement.marker.removeprefix("requires_")
    if copy is None:
        who = phrases.framework(judged.name) if judged is not None else "the loader"
        if judged is not None and not judged.gpu_build:
            return _fail(requirement, _cpu_only(judged), judged.cause, judged.finding)
        if judged is not None and kind == "cuda" and judged.static_runtime:
            return _judge_static(requirement, judged)
        return _fail(requirement, f"no {label} {who} can find", f"{kind}-missing")
    loaders = (
        [j.build for j in diagnosis.frameworks if copy in j.libraries]
        if isinstance(copy, LibraryCopy)
        else loaded_by(diagnosis.env, copy)
    )
    users = [f"{phrases.framework(b.name)} {b.version or ''}".strip() for b in loaders]
    where = phrases.copy(copy, *([f"loaded by {' and '.join(users)}"] if users else []))
    broken = _errors_about(diagnosis.findings, copy.path)
    # A version that does not match is the cause; but a copy too broken to tell its version fails for that.
    if not _contains(requirement.spec, copy.version) and not (copy.version is None and broken is not None):
        return _fail(requirement, where, _version_cause(requirement))
    if broken is not None:
        return _fail(requirement, where, broken.code, broken)
    if judged is not None and not judged.ok:
        # The framework that loads this copy cannot run, so neither can a test that uses the copy through it.
        if judged.finding is not None:
            return _fail(requirement, where, judged.cause, judged.finding)
        return _fail(requirement, f"{where}; {framework_label(judged.build)}: {judged.summary}", judged.cause)
    return _ok(requirement)


def _judge_static(requirement: Requirement, judged: FrameworkJudgement) -> Outcome:
    """A CUDA requirement on a framework that links its runtime statically (CuPy): judged by the CUDA it was built
    for, as its files say; there is no libcudart of its own to look at."""
    fact = judged.build.cuda
    where = f"{framework_label(judged.build)}'s own CUDA runtime, linked into it"
    where += f": CUDA {fact.value} ({fact.how})" if fact is not None else " (its CUDA release unread)"
    if not _contains(requirement.spec, fact.value if fact is not None else None):
        return _fail(requirement, where, _version_cause(requirement))
    if not judged.ok:
        return _fail(requirement, where, judged.cause, judged.finding)
    return _ok(requirement)


def _cpu_only(judged: FrameworkJudgement) -> str:
    """Where a CPU-only build is; "(a CPU-only build)" only where no finding will say so."""
    return _where(judged) + ("" if judged.finding is not None else " (a CPU-only build)")


def _judge_gpu(requirement: Requirement, diagnosis: Diagnosis, device: CudaDevice | None) -> Outcome:
    env = diagnosis.env
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
    faults = diagnosis.gpu_faults(device.index) if requirement.healthy else ()
    if faults:
        return _fail(requirement, label, faults[0].code, faults[0])
    if requirement.peer_access or requirement.interconnect:
        return _judge_pairs(requirement, env, gpus[: requirement.count])
    return _ok(requirement)


def _judge_pairs(requirement: Requirement, env: Environment, devices: Sequence[CudaDevice]) -> Outcome:
    """The test's GPUs (CUDA's first ``count``, as the test sees them) reach each other as required: every pair's
    P2P read and write OK, or its NVLink P2P OK, as the probe read them (NVML's P2P status)."""
    if any(device.mig is not None for device in devices):
        return _fail(requirement, "MIG devices, which have no peer access to each other", "gpu-peer-access")
    for at, one in enumerate(devices):
        for other in devices[at + 1 :]:
            pair = peer_access(env, one.index, other.index)
            found = f"{phrases.gpu(one)} and {phrases.gpu(other)}"
            if pair is None:
                return _fail(requirement, f"{found}, whose P2P status the probe did not read", "gpu-peer-access")
            if requirement.interconnect == "nvlink" and pair.p2p_nvlink != 0:
                return _fail(requirement, f"{found}, NVLink P2P {_p2p(pair.p2p_nvlink)}", "gpu-interconnect")
            if requirement.peer_access and (pair.p2p_read, pair.p2p_write) != (0, 0):
                said = f"P2P read {_p2p(pair.p2p_read)}, write {_p2p(pair.p2p_write)}"
                return _fail(requirement, f"{found}, {said}", "gpu-peer-access")
    return _ok(requirement)


def _p2p(status: int | None) -> str:
    return "not read" if status is None else P2P_STATUS.get(status, f"status {status}")


def _where(judged: FrameworkJudgement) -> str:
    build = judged.build
    name = phrases.framework(build.name)
    return f"{name} {build.version or '(version unknown)'} ({build.distribution}) at {build.location}"


def _judge_framework(requirement: Requirement, diagnosis: Diagnosis) -> Outcome:
    """requires_torch / requires_jax / requires_tensorflow / requires_cupy: installed within spec and, with
    gpu=True, exactly what the framework's verdict in the diagnosis says."""
    name = _FRAMEWORK_MARKERS[requirement.marker]
    judged = diagnosis.framework(name)
    if judged is not None and requirement.preload and judged.preloaded is not None:
        judged = judged.preloaded  # the test calls the preload first: judged as the host is once it has
    if judged is None or judged.build.state is State.ABSENT:
        return _fail(requirement, f"no {phrases.framework(name)} installed", f"{name}-missing")
    where = _where(judged)
    if requirement.spec is not None and not _contains(requirement.spec, judged.version):
        return _fail(requirement, where, f"{name}-version")
    if not requirement.gpu or judged.ok:
        return _ok(requirement)
    if not judged.gpu_build and judged.build.state is State.FOUND:
        return _fail(requirement, _cpu_only(judged), judged.cause, judged.finding)
    if judged.host_wide:
        return _fail(requirement, judged.summary.removeprefix("cannot run: "), judged.cause, judged.finding,
                     found_is_finding=judged.finding is not None)  # fmt: skip
    if judged.finding is not None:
        return _fail(requirement, where, judged.cause, judged.finding)
    return _fail(requirement, f"{where}: {judged.summary}", judged.cause)
