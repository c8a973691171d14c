"""The judgement of one environment, worked out once: what every view reads.

A :class:`Diagnosis` holds the findings, the verdict on the host, and for each installed framework a
:class:`FrameworkJudgement`: whether it can run GPU work here, the finding (or the missing driver or device) that
stops it, and the CUDA runtime and cuDNN copies it loads, which are the copies its verdict judged. The doctor's
text, JSON and ``--framework`` exit, the session header, every marker, the cuDNN handle fixtures, the JUnit
properties, the step summary, ``--gpu-report`` and the fleet read it; none of them works the answer out again.

The one rule for what stops a framework is :func:`.frameworks.concerns` (a finding about its folder or a copy it
loads, TensorFlow's own rules for TensorFlow, or the host every framework runs on). The one rule for a cuDNN or
CUDA requirement that names no framework is :meth:`Diagnosis.copies_for`: the copy of every installed GPU framework
that loads one must meet it; with none, the copy the loader (or TensorFlow's search) gives.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from .._base.versions import major_of
from ..compat.cupy import NO_CUDNN, STATIC_CUDA_RUNTIME
from ..environment import CudaRuntime, Cudnn, Environment, FrameworkBuild, LibraryCopy, State
from ..frameworks import framework
from ..frameworks.base import own_rules
from .frameworks import blocking_finding
from .health import HEALTH_FAULTS
from .libraries import copies_loaded
from .model import Finding, Severity, Verdict, verdict
from .rules import cause_first, diagnose
from .stack import (
    framework_copies,
    loader_copies,
    no_device_cause,
    selected_cudnn,
    selected_runtime,
    stack_cudnn,
    stack_runtime,
    visible_devices,
)

__all__ = ["Diagnosis", "FrameworkJudgement", "HostBlocker", "diagnosis_of", "judge_environment"]

# The findings that say a build will not use the GPU: TensorFlow's come from its build info (and Windows' native
# TensorFlow after 2.10), the others' from their own files.
_CPU_ONLY = {"framework-cpu-only": False, "tensorflow-cpu-only": True, "windows-tensorflow-no-gpu": True}


@dataclass(frozen=True)
class HostBlocker:
    """Why no GPU work can run on this host at all: no driver, or no device CUDA can see."""

    cause: str  # the finding's code ("driver-not-loadable", "no-gpu", ...) or "no-driver" when no finding says
    reason: str  # the finding's summary, or what was read
    finding: Finding | None


@dataclass(frozen=True)
class FrameworkJudgement:
    """One installed framework's verdict and the copies it was judged with."""

    build: FrameworkBuild
    ok: bool
    summary: str  # "can run GPU work here", "cannot run: <the finding's summary>", "it will not use the GPU"
    cause: str  # "" when ok; else the code of the finding that stops it, "framework-cpu-only", "framework-unreadable"
    finding: Finding | None  # the finding that stops it, when one does
    host_wide: bool  # stopped by the host (no driver, no visible device), not by anything of its own
    runtime: CudaRuntime | None  # the CUDA runtime it loads, as probed
    cudnn: Cudnn | None  # the cuDNN it loads, as probed
    copies_read: bool = True  # its own search said which copies; False: those a plain dlopen gives stand for them
    # Its verdict once its own preload call has run (ONNX Runtime's preload_dlls(): ``preload`` names the call),
    # where that call supplies libraries its search cannot find; None where it changes nothing.
    preloaded: FrameworkJudgement | None = None
    preload: str | None = None
    # The copy of each further kind of the catalog it loads (NCCL), as probed (diagnosis/libraries.py).
    libraries: tuple[LibraryCopy, ...] = ()

    def library(self, kind: str) -> LibraryCopy | None:
        """The copy of catalog kind ``kind`` ("nccl") it loads; None where it loads none that was probed."""
        return next((copy for copy in self.libraries if copy.kind == kind), None)

    @property
    def name(self) -> str:
        return self.build.name

    @property
    def version(self) -> str | None:
        return self.build.version

    @property
    def gpu_build(self) -> bool:
        """Installed, read, and not a CPU-only build."""
        return self.build.state is State.FOUND and self.build.is_cuda_build is not False

    @property
    def verdict(self) -> Verdict:
        return Verdict(self.ok, self.summary)

    @property
    def after_preload(self) -> str:
        """What its own preload call changes, as the views say it after its verdict: "; after
        onnxruntime.preload_dlls(): can run GPU work here"; "" where the call changes nothing."""
        if self.preloaded is None or self.preload is None:
            return ""
        return f"; after {self.preload}: {self.preloaded.summary}"

    @property
    def static_runtime(self) -> bool:
        """Its CUDA runtime is linked into its own objects (CuPy, "cupy-static-cudart"): no libcudart is its."""
        return self.name in {name for name, _ in STATIC_CUDA_RUNTIME}


@dataclass(frozen=True)
class Diagnosis:
    """Everything judged about one environment (see the module docstring)."""

    env: Environment
    findings: tuple[Finding, ...]
    verdict: Verdict
    host: HostBlocker | None
    frameworks: tuple[FrameworkJudgement, ...]
    runtime: CudaRuntime | None  # the CUDA runtime in use: a framework's, else TensorFlow's, else the loader's
    cudnn: Cudnn | None  # the cuDNN in use, likewise (the header's and the JUnit properties' copies)

    def framework(self, name: str) -> FrameworkJudgement | None:
        return next((judged for judged in self.frameworks if judged.name == name), None)

    def gpu_faults(self, index: int) -> tuple[Finding, ...]:
        """The findings of faults in GPU ``index``'s own state (issue 32: ECC, memory repairs, a compute mode that
        refuses work; errors or, beside healthy GPUs, warnings), as the doctor lists them: what
        requires_gpu(healthy=True), --gpu-health and the JUnit properties read."""
        return self._faults_by_gpu.get(index, ())

    @functools.cached_property
    def _faults_by_gpu(self) -> dict[int, tuple[Finding, ...]]:
        """:meth:`gpu_faults` for every GPU, made in one pass over the findings: a marker judged per test and a
        header line per GPU cost no more than a look-up each."""
        found: dict[int, list[Finding]] = {}
        for finding in self.findings:
            if finding.code in HEALTH_FAULTS:
                for index in dict.fromkeys(finding.gpus):
                    found.setdefault(index, []).append(finding)
        return {index: tuple(faults) for index, faults in found.items()}

    def copies_for(self, kind: type[Cudnn] | type[CudaRuntime]) -> list[FrameworkJudgement]:
        """Who must meet a cuDNN (or CUDA runtime) requirement that names no framework: every installed GPU framework
        that loads one (for the CUDA runtime, a framework that links its own statically too). None of them: the
        loader's copy is judged (which the caller selects by the requirement's specifier)."""
        return [
            judged
            for judged in self.frameworks
            if judged.gpu_build
            and ((judged.cudnn if kind is Cudnn else judged.runtime) is not None
                 or (kind is CudaRuntime and judged.static_runtime))
        ]  # fmt: skip


def loaded_copies_of(env: Environment, build: FrameworkBuild) -> tuple[CudaRuntime | None, Cudnn | None, bool]:
    """The CUDA runtime and cuDNN ``build`` loads, and whether its own search said so: those of its loads; for
    TensorFlow without them, those its loader model picks; for a framework whose search was not read (Windows, an
    older snapshot, an object that could not be read), those a plain dlopen gives (not read). A framework that links
    its CUDA runtime statically (CuPy) loads none."""
    if build.state is not State.FOUND or build.is_cuda_build is False:
        return None, None, True
    static = build.name in {name for name, _ in STATIC_CUDA_RUNTIME}
    if build.loads:
        copies = framework_copies(env, build)
        runtime = next((c for c in copies if isinstance(c, CudaRuntime)), None)
        return runtime, next((c for c in copies if isinstance(c, Cudnn)), None), True
    if own_rules(build.name):  # without loads of its own: the copies its own search rules give
        return stack_runtime(env), stack_cudnn(env), True
    runtime, cudnn = loader_copies(env)
    without_cudnn = any(
        name == build.name and (major_of(build.version) or 0) >= first for name, first, _ in NO_CUDNN
    )  # CuPy 14 uses no cuDNN: the loader's copy is not its
    return (None if static else runtime), (None if without_cudnn else cudnn), False


def host_blocker(env: Environment, findings: tuple[Finding, ...]) -> HostBlocker | None:
    """No driver, or no device CUDA can see: the reason the doctor gives, from the finding it raised."""
    if env.driver.state is not State.FOUND:
        # A container's cause first (it is why the driver is missing), else the driver's own finding.
        errors = [f for f in findings if f.severity is Severity.ERROR]
        finding = next((f for f in errors if f.code.startswith("container-")), None) or next(
            (f for f in errors if f.component == "driver"), None
        )
        if finding is None:
            return HostBlocker("no-driver", f"no NVIDIA driver ({env.driver.reason or env.driver.state.value})", None)
        return HostBlocker(finding.code, finding.summary, finding)
    cause = no_device_cause(env, visible_devices(env))
    if cause is None:
        return None
    finding = next((f for f in findings if f.code == cause), None)
    return HostBlocker(cause, finding.summary if finding else "no GPU visible to CUDA", finding)


def _judge(
    env: Environment, build: FrameworkBuild, findings: tuple[Finding, ...], host: HostBlocker | None
) -> FrameworkJudgement:
    runtime, cudnn, read = loaded_copies_of(env, build)
    copies = tuple(copy.path for copy in (runtime, cudnn) if copy is not None)
    libraries = copies_loaded(env, build)

    def judged(
        ok: bool, summary: str, cause: str, finding: Finding | None = None, host_wide: bool = False
    ) -> FrameworkJudgement:
        return FrameworkJudgement(
            build, ok, summary, cause, finding, host_wide, runtime, cudnn, read, libraries=libraries
        )

    if build.state is not State.FOUND:
        return judged(False, f"not readable: {build.reason or build.state.value}", "framework-unreadable")
    if build.is_cuda_build is False:
        tensorflow = own_rules(build.name)
        cpu_only = next(
            (f for f in findings if f.code in _CPU_ONLY and _CPU_ONLY[f.code] == tensorflow
             and (tensorflow or build.location in f.subjects)),
            None,
        )  # fmt: skip
        cause = cpu_only.code if cpu_only else ("tensorflow-cpu-only" if tensorflow else "framework-cpu-only")
        return judged(False, "it will not use the GPU", cause, cpu_only)
    if host is not None:
        return judged(False, f"cannot run: {host.reason}", host.cause, host.finding, host_wide=True)
    # Its objects unread too (a provider file missing, an ELF that could not be read): nothing says it brings its
    # own CUDA runtime, so no runtime anywhere stops it. With its objects read (Windows, an older snapshot), not so.
    error = blocking_finding(build, findings, copies, read or bool(build.objects))
    if error is not None:
        return judged(False, f"cannot run: {error.summary}", error.code, error)
    return judged(True, "can run GPU work here", "")


def _preloading(env: Environment, judged: FrameworkJudgement) -> FrameworkJudgement:
    """``judged`` with its verdict after its framework's own preload call, judged on the host as that call leaves
    it (every finding worked out again: the libraries it supplies are judged like any others); itself unchanged
    where there is no such call or it changes nothing."""
    entry = framework(judged.name)
    if entry is None or entry.preload is None or judged.build.state is not State.FOUND or judged.host_wide:
        return judged  # stopped by the host (no driver, no device): no call of its own changes that
    call, preloaded = entry.preload
    after = preloaded(judged.build)
    if after is None:
        return judged
    frameworks = tuple(after if build is judged.build else build for build in env.frameworks)
    again = judge_environment(dataclasses.replace(env, frameworks=frameworks)).framework(judged.name)
    return dataclasses.replace(judged, preloaded=again, preload=call) if again is not None else judged


def judge_environment(env: Environment, findings: tuple[Finding, ...] | None = None) -> Diagnosis:
    """The diagnosis of ``env`` (``findings``: those already worked out for it by :func:`..diagnose`; given ones are
    put in cause order too, so that every diagnosis lists a cause right before what follows from it)."""
    findings = tuple(diagnose(env) if findings is None else cause_first(findings))
    host = host_blocker(env, findings)
    frameworks = tuple(_preloading(env, _judge(env, build, findings, host)) for build in env.frameworks)
    in_use = (selected_runtime(env), selected_cudnn(env))
    return Diagnosis(env, findings, verdict(list(findings)), host, frameworks, *in_use)


def diagnosis_of(env: Environment) -> Diagnosis:
    """:func:`judge_environment`, kept for the last environment by identity (the environment is frozen, and a run
    judges one environment per host): every view of a run reads the same value."""
    last = _LAST[0] if _LAST else None  # read once: another thread may replace it meanwhile
    if last is not None and last.env is env:
        return last
    made = judge_environment(env)
    _LAST[:] = [made]
    return made


_LAST: list[Diagnosis] = []
