"""Rules about every cuDNN copy: what happened to it, the CUDA it was built for, the GPUs it supports."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from ..compat import cudnn as cudnn_facts
from ..compat.libraries import provider
from ..environment import (
    Cudnn,
    Environment,
    Failure,
    Gpu,
    State,
)
from .model import (
    CODES,
    Finding,
    Severity,
    cite,
    folder_of,
    major,
    major_minor,
    make_finding,
    parse_version,
)
from .runtime import failed_how, failure_fix
from .stack import (
    copy_in_use,
    cudnn_evidence,
    gpu_text,
    gpus_with_capability,
    loader_visible,
    no_device_cause,
    runtime_evidence,
    stack_cudnns,
    stack_runtime,
    visible_devices,
)

# cuDNN --------------------------------------------------------------------------------------------


def cudnn_rules(env: Environment) -> Iterator[Finding]:
    for cudnn in env.cudnns:
        yield from _cudnn_copy(env, cudnn)
    runtime = stack_runtime(env)
    gpus = gpus_with_capability(env)
    for cudnn in stack_cudnns(env):
        if (
            runtime
            and runtime.version
            and cudnn.cudart_version
            and not _same_cuda(cudnn.cudart_version, runtime.version)
        ):
            yield make_finding(
                "cudnn-cuda-mismatch",
                Severity.ERROR,
                "cudnn",
                f"cuDNN {cudnn.version} was built for CUDA {cudnn.cudart_version}, but the stack uses CUDA "
                f"{runtime.version}",
                (cudnn_evidence(cudnn), runtime_evidence(runtime), "cudnnGetCudartVersion reports the build's CUDA"),
                f"install the cuDNN {cudnn.version} build for CUDA {major_minor(runtime.version)}",
                (cudnn.path,),
            )
        elif (
            runtime is None
            and cudnn.cudart_version
            and not any(
                r.version and loader_visible(r.via) and _same_cuda(cudnn.cudart_version, r.version)
                for r in env.cuda_runtimes
            )
        ):
            yield make_finding(
                "cudnn-cuda-mismatch",
                Severity.WARNING,
                "cudnn",
                f"cuDNN {cudnn.version} was built for CUDA {cudnn.cudart_version}, and no CUDA runtime of that "
                "release is on the loader path",
                [cudnn_evidence(cudnn)] + [runtime_evidence(r) for r in env.cuda_runtimes if loader_visible(r.via)],
                f"install the CUDA {major_minor(cudnn.cudart_version)} runtime, or the cuDNN build for your CUDA",
                (cudnn.path,),
            )
        for gpu in gpus:
            yield from _cudnn_gpu(cudnn, gpu)


def _cudnn_copy(env: Environment, cudnn: Cudnn) -> Iterator[Finding]:
    """A copy that cannot serve, named for what happened to it: it cannot be loaded, a library it needs is
    missing, its sub-libraries are missing, it crashed or hung. Severity follows who uses the copy."""
    severity = Severity.ERROR if copy_in_use(env, cudnn) else Severity.WARNING
    evidence = [cudnn_evidence(cudnn), cudnn.reason or ""]
    if cudnn.siblings_missing:
        evidence.append("missing beside it: " + ", ".join(cudnn.siblings_missing))
    if cudnn.missing_dependencies:
        missing = ", ".join(cudnn.missing_dependencies)
        fix, source = _dependency_fix(cudnn)
        yield make_finding(
            "cudnn-dependency-missing",
            severity,
            "cudnn",
            f"{_cudnn_label(cudnn)} at {cudnn.path} cannot load {missing}, which it needs: any call into it aborts "
            "the process",
            [*evidence, source],
            fix,
            (cudnn.path,),
        )
    elif cudnn.siblings_missing and cudnn.failure in (None, Failure.CRASHED):
        yield make_finding(
            "cudnn-incomplete",
            severity,
            "cudnn",
            f"cuDNN at {cudnn.path} is missing its sub-libraries; any call into it aborts the process",
            evidence,
            "reinstall cuDNN completely: every libcudnn_* file of one release in one folder",
            (cudnn.path,),
        )
    elif cudnn.state is State.ERROR:
        yield make_finding(
            "cudnn-not-loadable" if cudnn.failure is Failure.UNLOADABLE else "cudnn-probe-failed",
            severity,
            "cudnn",
            f"cuDNN at {cudnn.path} {failed_how(cudnn.failure)}",
            evidence,
            failure_fix(cudnn.failure, cudnn.reason, "cuDNN"),
            (cudnn.path,),
        )
    elif cudnn.create_status not in (None, 0) and gpus_with_capability(env):
        # Any copy, not only the stack's: a framework's own copy that cannot make a handle stops the tests that
        # use it (the doctor once printed "cudnnCreate: 1001" for torch's copy and raised nothing).
        last = f"; cuDNN says: {cudnn.last_error}" if cudnn.last_error else ""
        # When CUDA sees no device at all, that finding is the cause (it comes first); this one names it.
        cause = no_device_cause(env, visible_devices(env))
        because = f": CUDA sees no device ({cause}: {CODES[cause]})" if cause else " although the driver sees GPUs"
        yield make_finding(
            "cudnn-create-failed",
            severity,
            "cudnn",
            f"{_cudnn_label(cudnn)} at {cudnn.path}: cudnnCreate fails with {cudnn.create_status} "
            f"({cudnn.create_error}){because}",
            (cudnn_evidence(cudnn), f"cudnnCreate: {cudnn.create_status} {cudnn.create_error}{last}"),
            f"fix the cause first ({cause}, above): cuDNN needs a device CUDA can use"
            if cause
            else "run with CUDNN_LOGERR_DBG=1 (cuDNN 8) or CUDNN_LOGLEVEL_DBG=2 (cuDNN 9) and "
            "CUDNN_LOGDEST_DBG=stderr for the reason; check the driver and CUDA findings above",
            (cudnn.path,),
        )


def _cudnn_label(cudnn: Cudnn) -> str:
    return f"cuDNN {cudnn.version}" if cudnn.version else "cuDNN"


def _dependency_fix(cudnn: Cudnn) -> tuple[str, str]:
    """Install what provides the missing library (its pip wheel, and what the wheel really ships when that is
    not the very name cuDNN asks for), and the source that says so; or, untabled, a plain instruction."""
    missing = cudnn.missing_dependencies[0]
    found = provider(missing, major(cudnn.cudart_version))
    if found is None:
        folder = folder_of(cudnn.path)
        return f"install the library that provides {missing} where the loader finds it (beside {folder})", ""
    if found.package is None:
        return f"install {missing}: {found.note}", cite(found.source)
    shipped = f"; {found.note}" if not found.exact and found.note else ""
    return f"pip install '{found.requirement}' (it ships {found.file} in {found.folder}){shipped}", cite(found.source)


def _cudnn_gpu(cudnn: Cudnn, gpu: Gpu) -> Iterator[Finding]:
    if not cudnn.version:
        return
    floor = cudnn_facts.oldest_capability(cudnn.version, major(cudnn.cudart_version))
    cc = parse_version(gpu.compute_capability)
    if floor and cc is not None and cc < Version(floor.oldest):
        yield make_finding(
            "cudnn-gpu-unsupported",
            Severity.ERROR,
            "cudnn",
            f"cuDNN {cudnn.version} does not support {gpu_text(gpu)}: its oldest is {floor.oldest}",
            (cudnn_evidence(cudnn), cite(floor.source)),
            "use a cuDNN release that still supports this GPU (see the support matrix), or a newer GPU",
            (cudnn.path,),
        )
    for bad in cudnn_facts.known_bad(cudnn.version, gpu.compute_capability, major_minor(cudnn.cudart_version)):
        yield make_finding(
            "cudnn-known-bad",
            Severity.WARNING,
            "cudnn",
            f"{bad.summary} [{bad.code}]",
            (cudnn_evidence(cudnn), gpu_text(gpu), cite(bad.source)),
            bad.remedy,
            (cudnn.path,),
        )


def _same_cuda(a: str, b: str) -> bool:
    """cuDNN builds for CUDA 11+ serve the whole major; before 11 each build served one major.minor."""
    if (major(a) or 0) >= 11 or (major(b) or 0) >= 11:
        return major(a) == major(b)
    return major_minor(a) == major_minor(b)
