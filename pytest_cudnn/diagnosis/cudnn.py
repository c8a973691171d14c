"""Rules about every cuDNN copy: what happened to it, the CUDA it was built for, the GPUs it supports."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from .. import phrases
from .._base.text import listing
from .._base.versions import canonical_name
from ..compat import cudnn as cudnn_facts
from ..compat.libraries import provider
from ..environment import (
    CudaRuntime,
    Cudnn,
    Environment,
    Failure,
    Gpu,
    State,
)
from ..frameworks.base import own_rules
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
from .remedies import blocking_text, demands_on, owning_distribution, pip_fix
from .runtime import failed_how, failure_fix
from .stack import (
    copy_in_use,
    cudnn_evidence,
    framework_copies,
    gpu_frameworks,
    gpu_text,
    gpus_with_capability,
    load_copy,
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
    for cudnn, with_runtime, names in _pairs(env):
        yield from _pair_mismatch(cudnn, with_runtime, names)
    if runtime is None:
        for cudnn in stack_cudnns(env):
            if cudnn.cudart_version and not any(
                r.version and loader_visible(r.via) and _same_cuda(cudnn.cudart_version, r.version)
                for r in env.cuda_runtimes
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
    # Every copy the stack or a framework loads is judged against the GPUs: a copy jax[cuda12] or torch gets
    # through its own search is no less on the GPU than the one on the loader path.
    for cudnn in _used_cudnns(env):
        for gpu in gpus:
            yield from _cudnn_gpu(env, cudnn, gpu)


def _pairs(env: Environment) -> list[tuple[Cudnn, CudaRuntime, list[str]]]:
    """Each cuDNN copy with the CUDA runtime it is used with, and the frameworks that use the two together:
    TensorFlow's pair is the one its loader picks (the stack's); every other framework's, the copies its own search
    gives it. One pair is judged once, for all the frameworks that share it."""
    pairs: dict[tuple[str, str], tuple[Cudnn, CudaRuntime, list[str]]] = {}
    stack = stack_runtime(env)
    if stack is not None:
        for cudnn in stack_cudnns(env):
            pairs.setdefault((cudnn.path, stack.path), (cudnn, stack, []))[2].append("tensorflow")
    for build in gpu_frameworks(env):
        if own_rules(build.name):  # its cuDNN is judged by its own rules
            continue
        copies = framework_copies(env, build)
        runtimes = [c for c in copies if isinstance(c, CudaRuntime)]
        for cudnn in (c for c in copies if isinstance(c, Cudnn)):
            # Judged against the runtime of its own major where the framework loads several (torch's preloads).
            runtime = next((r for r in runtimes if _pairs_with(cudnn, r)), runtimes[0] if runtimes else None)
            if runtime is not None:
                names = pairs.setdefault((cudnn.path, runtime.path), (cudnn, runtime, []))[2]
                names.append(build.name)
    return list(pairs.values())


def _pairs_with(cudnn: Cudnn, runtime: CudaRuntime) -> bool:
    return not (runtime.version and cudnn.cudart_version) or _same_cuda(cudnn.cudart_version, runtime.version)


def _pair_mismatch(cudnn: Cudnn, runtime: CudaRuntime, names: list[str]) -> Iterator[Finding]:
    """One rule for every framework: a cuDNN built for another CUDA release than the runtime a framework uses it with.

    An error where the build cannot work: before cuDNN 9 each build is judged as NVIDIA's support matrices pair it
    (before CUDA 11, one major.minor, whose runtime it loads). From cuDNN 9 a warning: its libraries carry their
    own CUDA runtime (measured: libcudnn*.so.9 of nvidia-cudnn-cu12 9.28.0.42 and -cu13 9.24.0.43 need no
    libcudart; they find cuBLAS and NVRTC by their own RUNPATH), so it loads and runs where the driver serves its
    CUDA (cudnnCreate, probed, says so), while NVIDIA's support matrix pairs each build with one CUDA major
    ("cudnn-9-own-runtime")."""
    if _pairs_with(cudnn, runtime):
        return
    shared = names != ["tensorflow"]
    who = listing([phrases.framework(name) for name in names], separator=" and " if len(names) == 2 else ", ")
    severity = Severity.WARNING if (major(cudnn.version) or 0) >= 9 else Severity.ERROR
    used = f"but {who} {'use' if len(names) > 1 else 'uses'} it with CUDA {runtime.version}"
    yield make_finding(
        "cudnn-cuda-mismatch",
        severity,
        "cudnn",
        f"cuDNN {cudnn.version} was built for CUDA {cudnn.cudart_version}, "
        + (used if shared else f"but the stack uses CUDA {runtime.version}"),
        (
            cudnn_evidence(cudnn),
            runtime_evidence(runtime),
            "cudnnGetCudartVersion reports the build's CUDA",
            cite("cudnn-9-own-runtime") if severity is Severity.WARNING else "",
        ),
        f"install the cuDNN {cudnn.version} build for CUDA {major_minor(runtime.version)}",
        (cudnn.path,),
        frameworks=names if shared else (),
    )


def _used_cudnns(env: Environment) -> list[Cudnn]:
    used = list(stack_cudnns(env))
    for build in env.frameworks:
        for load in build.loads:
            copy = load_copy(env, load)
            if isinstance(copy, Cudnn) and copy not in used:
                used.append(copy)
    return used


def _cudnn_copy(env: Environment, cudnn: Cudnn) -> Iterator[Finding]:
    """A copy that cannot serve, named for what happened to it: it cannot be loaded, a library it needs is
    missing, its sub-libraries are missing, it crashed or hung. Severity follows who uses the copy."""
    severity = Severity.ERROR if copy_in_use(env, cudnn) else Severity.WARNING
    evidence = [cudnn_evidence(cudnn), cudnn.reason or ""]
    if cudnn.siblings_missing:
        evidence.append("missing beside it: " + ", ".join(cudnn.siblings_missing))
    if cudnn.missing_dependencies:
        missing = ", ".join(cudnn.missing_dependencies)
        fix, source = _dependency_fix(env, cudnn)
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
    elif cudnn.create_status not in (None, 0) and env.driver.gpus:
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
            because=cause,
        )


def _cudnn_label(cudnn: Cudnn) -> str:
    return f"cuDNN {cudnn.version}" if cudnn.version else "cuDNN"


def _dependency_fix(env: Environment, cudnn: Cudnn) -> tuple[str, str]:
    """Install what provides the missing library (its pip wheel, and what the wheel really ships when that is
    not the very name cuDNN asks for, with the step that makes the name resolve), and the source that says so; or,
    untabled, a plain instruction. The CUDA major that picks the wheel is the copy's own, else its wheel's
    (nvidia-cudnn-cu11: a cuDNN that aborts on its first call reports none)."""
    missing = cudnn.missing_dependencies[0]
    wheel = owning_distribution(env, cudnn)
    cuda = major(cudnn.cudart_version)
    if cuda is None and wheel is not None:
        cuda = major(canonical_name(wheel.name).removeprefix("nvidia-cudnn-cu"))
    found = provider(missing, cuda)
    if found is None:
        folder = folder_of(cudnn.path)
        return f"install the library that provides {missing} where the loader finds it (beside {folder})", ""
    if found.package is None:
        return f"install {missing}: {found.note}", cite(found.source)
    fix = f"pip install '{found.requirement}' (it ships {found.file} in {found.folder})"
    if not found.exact and found.note:
        site = wheel.location if wheel is not None else "<site-packages>"
        lib = f"{site}/{found.folder}"
        link = f"ln -s {found.file} {lib}/{missing}"
        fix += f"; {found.note}: link it as {missing} ({link}) and put {lib} on LD_LIBRARY_PATH"
    return fix, cite(found.source)


def _cudnn_gpu(env: Environment, cudnn: Cudnn, gpu: Gpu) -> Iterator[Finding]:
    if not cudnn.version:
        return
    floor = cudnn_facts.oldest_capability(cudnn.version, major(cudnn.cudart_version))
    cc = parse_version(gpu.compute_capability)
    if floor and cc is not None and cc < Version(floor.oldest):
        fix, requirement, source = _older_cudnn(env, cudnn, gpu.compute_capability or "", floor.oldest)
        yield make_finding(
            "cudnn-gpu-unsupported",
            Severity.ERROR,
            "cudnn",
            f"cuDNN {cudnn.version} does not support {gpu_text(gpu)}: its oldest is {floor.oldest}",
            (cudnn_evidence(cudnn), cite(floor.source), source),
            fix,
            (cudnn.path,),
            requirement,
            gpus=(gpu.index,),
        )
    for bad in cudnn_facts.known_bad(cudnn.version, gpu.compute_capability, major_minor(cudnn.cudart_version)):
        fix, requirement = _past_known_bad(env, cudnn, bad)
        yield make_finding(
            "cudnn-known-bad",
            Severity.WARNING,
            "cudnn",
            f"{bad.summary} [{bad.code}]",
            (cudnn_evidence(cudnn), gpu_text(gpu), cite(bad.source)),
            fix,
            (cudnn.path,),
            requirement,
            gpus=(gpu.index,),
        )


def _past_known_bad(env: Environment, cudnn: Cudnn, bad: cudnn_facts.KnownBad) -> tuple[str, str | None]:
    """A known-bad range that ends (``<8.9.2``) on a copy from a wheel: the wheel at a release past it, checked
    against the frameworks' demands; else the row's own remedy."""
    fixed = cudnn_facts.fixed_in(bad)
    wheel = owning_distribution(env, cudnn)
    if fixed is None or wheel is None:
        return bad.remedy, None
    remedy = pip_fix(env, canonical_name(wheel.name), f">={fixed}", cudnn=True)
    if remedy.resolves:
        return f'pip install "{remedy.requirement}" ({bad.remedy})', remedy.requirement
    return f"{bad.remedy}; no {canonical_name(wheel.name)} release does it here: {blocking_text(remedy)}", None


def _nvrtc_step(env: Environment, cudnn: Cudnn, below: str) -> str:
    """The step a cuDNN 9 wheel older than 9.11 needs for NVRTC: its RUNPATH looks in nvidia/nvrtc/lib, a folder no
    wheel creates ("cudnn-9-nvrtc"; compat audit D5), so its runtime-compiled engines find NVRTC only where the
    loader does or a framework loaded it first. Said for a host whose loader would not find it."""
    floor = parse_version(below)
    if floor is None or floor.major != 9 or floor > Version("9.11") or "/nvidia/cudnn/lib/" not in cudnn.path:
        return ""
    folder = cudnn.path.split("/nvidia/cudnn/lib/")[0] + "/nvidia/cuda_nvrtc/lib"
    if folder in (env.variables.get("LD_LIBRARY_PATH") or "").split(":"):
        return ""
    return (
        f"; cuDNN before 9.11 looks for NVRTC in nvidia/nvrtc/lib, which no wheel creates: add {folder} to "
        "LD_LIBRARY_PATH, unless a framework loads libnvrtc itself first (JAX does)"
    )


def _older_cudnn(env: Environment, cudnn: Cudnn, capability: str, oldest: str) -> tuple[str, str | None, str]:
    """The fix for a cuDNN too new for the GPU: the requirement on its wheel that keeps a release still supporting
    it (``nvidia-cudnn-cu12<9.11``), checked against the frameworks' pins and cuDNN rules; its requirement (None
    where it cannot resolve), and the source of where support ends."""
    end = cudnn_facts.last_supporting(capability, major(cudnn.cudart_version))
    newer_gpu = f"a GPU of compute capability {oldest} or newer"
    if end is None:
        return f"no cuDNN release in the tables supports compute capability {capability}: use {newer_gpu}", None, ""
    why = f"cuDNN {end.below} and later need compute capability {end.oldest_after} or newer"
    wheel = owning_distribution(env, cudnn)
    if wheel is None:
        return (
            f"install a cuDNN older than {end.below} where the loader finds it first ({why}), or use {newer_gpu}",
            None,
            cite(end.source),
        )
    first = cudnn_facts.below_first_release(canonical_name(wheel.name), end.below)
    if first is not None:
        return (
            f"{canonical_name(wheel.name)} has no release below {end.below} (its first is {first}; {why}): use a "
            f"framework build for an older CUDA major, whose cuDNN wheel still has one, or {newer_gpu}",
            None,
            f"{cite(end.source)}; {cite('cudnn-wheel-first-releases')}",
        )
    fix = pip_fix(env, canonical_name(wheel.name), f"<{end.below}", cudnn=True)
    if fix.resolves:
        met = sorted({d.who for d in demands_on(env, canonical_name(wheel.name), cudnn=True)})
        checked = f"; it meets what {', '.join(met)} need{'s' if len(met) == 1 else ''} of it" if met else ""
        return (
            f'pip install "{fix.requirement}" ({why}{checked}){_nvrtc_step(env, cudnn, end.below)}, or use {newer_gpu}',
            fix.requirement,
            cite(end.source),
        )
    return (
        f"no {canonical_name(wheel.name)} release below {end.below} ({why}) meets what the frameworks here need: "
        f"{blocking_text(fix)}; use a framework release that allows {fix.requirement}, or {newer_gpu}",
        None,
        cite(end.source),
    )


def _same_cuda(a: str, b: str) -> bool:
    """cuDNN builds for CUDA 11+ serve the whole major; before 11 each build served one major.minor."""
    if (major(a) or 0) >= 11 or (major(b) or 0) >= 11:
        return major(a) == major(b)
    return major_minor(a) == major_minor(b)
