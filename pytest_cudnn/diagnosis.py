"""Findings: what is wrong with an environment, where, why, and what to do.

Pure module: an :class:`~pytest_cudnn.environment.Environment` plus the sourced knowledge in
:mod:`pytest_cudnn.compat` give a list of :class:`Finding`. Each rule is a small generator; codes are stable
kebab-case strings for grep and JSON, all listed in :data:`CODES`.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from . import phrases
from .compat import cuda as cuda_facts
from .compat import cudnn as cudnn_facts
from .compat import tensorflow as tf_facts
from .compat.libraries import provider
from .compat.sources import SOURCES
from .devices import parse_visible_devices
from .environment import (
    INSTALL_VARIABLES,
    Candidate,
    CudaRuntime,
    Cudnn,
    Environment,
    Failure,
    Gpu,
    Resolution,
    State,
    TensorFlow,
    Via,
)
from .text import clip
from .versions import InvalidVersionValue, cuda_version_from_int

__all__ = [
    "CODES",
    "STOPS_ITS_COPY",
    "Finding",
    "Severity",
    "Verdict",
    "diagnose",
    "selected_cudnn",
    "selected_runtime",
    "stack_cudnn",
    "stack_runtime",
    "verdict",
    "visible_gpus",
]


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True)
class Finding:
    code: str  # stable, kebab-case, one of CODES
    severity: Severity
    component: str  # "driver", "gpu", "cuda-runtime", "cudnn", "tensorflow", "loader", "environment"
    summary: str  # one line
    evidence: tuple[str, ...]  # found versions, paths and how they were found; what was expected and by whom
    fix: str
    # The library copies (their paths) this finding is about: a requirement on a copy fails on its errors only.
    subjects: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    ok: bool
    summary: str


CODES: dict[str, str] = {
    "no-driver": "no NVIDIA driver library at all",
    "driver-module-mismatch": "kernel module and user-space driver differ (upgrade without reboot)",
    "driver-not-loaded": "driver installed, kernel module not loaded",
    "driver-error": "NVML failed for another reason",
    "no-gpu": "the driver runs but reports no GPU",
    "gpu-probe-partial": "some facts of a GPU could not be read",
    "gpu-memory-low": "a GPU has little free memory left",
    "no-cuda-runtime": "no CUDA runtime anywhere",
    "cuda-runtime-probe-failed": "a CUDA runtime copy could not be loaded or probed",
    "cuda-runtime-cannot-run": "a CUDA runtime's own answer says it cannot use the driver or the GPUs",
    "driver-too-old-for-cuda": "the driver is older than the CUDA runtime needs",
    "gpu-unsupported-by-cuda": "the CUDA runtime's toolkit cannot target this GPU",
    "tensorflow-cudart-not-found": "the CUDA runtime TensorFlow loads is not on the loader path",
    "tensorflow-cudnn-not-found": "the cuDNN TensorFlow loads is not on the loader path",
    "tensorflow-cudnn-too-old": "the cuDNN TensorFlow loads is older than the one it was compiled with",
    "tensorflow-library-shadowed": "a copy on LD_LIBRARY_PATH wins over the wheel beside TensorFlow",
    "tensorflow-build-unrecorded": "the build info records no CUDA version; the tested table stands in",
    "tensorflow-cpu-only": "TensorFlow is a CPU-only build",
    "tensorflow-no-kernels-for-gpu": "the TensorFlow build has no kernels for the GPU",
    "tensorflow-ptx-only": "the GPU runs TensorFlow only through PTX JIT compilation",
    "tensorflow-wheel-pins": "the nvidia wheels beside TensorFlow do not meet its and-cuda pins",
    "cudnn-incomplete": "cuDNN front library without its sub-libraries",
    "cudnn-not-loadable": "a cuDNN copy cannot be loaded (damaged, unreadable, a link loop, a missing dependency)",
    "cudnn-dependency-missing": "cuDNN loads, but a library it needs at run time is missing: it aborts",
    "cudnn-probe-failed": "a cuDNN copy crashed or hung when probed",
    "cudnn-cuda-mismatch": "cuDNN was built for another CUDA than the runtime in use",
    "cudnn-create-failed": "cudnnCreate fails on a host with GPUs",
    "cudnn-gpu-unsupported": "the cuDNN release does not support this GPU",
    "cudnn-known-bad": "a published bad combination of cuDNN and GPU or CUDA",
    "library-shadowed": "several copies of one library name; the loader's pick is explained",
    "loader-disagrees": "the real loader picked another copy than the search rules predict",
    "ld-library-path-relative": "LD_LIBRARY_PATH has relative or empty entries",
    "path-variable-missing": "CUDA_HOME / CUDA_PATH / CUDNN_PATH / CONDA_PREFIX names no folder",
    "path-variable-unused": "an install-location variable holds libraries the loader never looks at",
    "cuda-visible-devices-hides-all": "CUDA_VISIBLE_DEVICES leaves no GPU visible",
    "cuda-visible-devices-invalid": "CUDA_VISIBLE_DEVICES names devices that do not exist",
    "cuda-visible-devices-mig": "CUDA_VISIBLE_DEVICES names MIG instances, which are not judged yet",
    "library-folder-unreadable": "a folder the loader searches could not be listed",
    "cuda-device-order": "CUDA numbers these GPUs differently from nvidia-smi",
    "windows-tensorflow-no-gpu": "native Windows TensorFlow after 2.10 has no GPU support",
    "windows-dll-path-only": "DLLs found only through PATH, which Python 3.8+ extension loading ignores",
}

# Findings that say their subject copy cannot run at all, whatever their severity for the host as a whole (a
# runtime the driver is too old for is a warning while another runtime works, but a test that needs that very
# copy cannot run).
STOPS_ITS_COPY = frozenset(
    {
        "driver-too-old-for-cuda",
        "gpu-unsupported-by-cuda",
        "cuda-runtime-cannot-run",
        "cuda-runtime-probe-failed",
        "cudnn-incomplete",
        "cudnn-not-loadable",
        "cudnn-dependency-missing",
        "cudnn-probe-failed",
        "cudnn-create-failed",
        "cudnn-gpu-unsupported",
    }
)

Rule = Callable[[Environment], Iterator[Finding]]

_LOADER_VIAS = {
    Via.LD_LIBRARY_PATH,
    Via.RUNPATH,
    Via.LDCONFIG,
    Via.SYSTEM_DEFAULT,
    Via.APP_DIR,
    Via.DLL_DIRECTORY,
    Via.SYSTEM32,
    Via.PATH,
    Via.LOADER,
}


def _finding(
    code: str,
    severity: Severity,
    component: str,
    summary: str,
    evidence: Iterable[str],
    fix: str,
    subjects: Iterable[str] = (),
) -> Finding:
    assert code in CODES, code
    return Finding(code, severity, component, summary, tuple(e for e in evidence if e), fix, tuple(subjects))


def _cite(key: str) -> str:
    return f"source: {SOURCES[key]}"


def _via(vias: Iterable[Via]) -> str:
    return ", ".join(v.value for v in vias)


def _version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None


# Digit runs are bounded (and must end where the run ends): int() refuses over 4300 digits, and a "major" of a
# thousand digits is no version at all.
def _major(text: str | None) -> int | None:
    match = re.match(r"(\d{1,9})(?!\d)", text or "")
    return int(match.group(1)) if match else None


def _major_minor(text: str | None) -> str | None:
    match = re.match(r"(\d{1,9})(?!\d)(?:\.(\d{1,9})(?!\d))?", text or "")
    return f"{match.group(1)}.{match.group(2) or 0}" if match else None


# What the stack uses -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _TensorFlowNeeds:
    cudart: str | None
    cudnn: str | None
    cuda: str | None  # the CUDA it was built for (build info, else the tested table)
    cudnn_compiled: str | None  # the cuDNN it was compiled with, as precise as known
    tested: tf_facts.TestedBuild | None
    owner: str  # "TensorFlow 2.3.1 (built for CUDA 10.1, cuDNN 7.6)"


def _tensorflow_needs(env: Environment) -> _TensorFlowNeeds | None:
    tf = env.tensorflow
    if tf.state is not State.FOUND or tf.is_cuda_build is False or tf.version is None:
        return None
    tested = tf_facts.tested_build(tf.version, env.host.system)
    cuda = tf.cuda_version or (tested.cuda if tested else None)
    # The tested table gives the compiled minor (7.6) where build info gives only the major (7).
    compiled = tf.cudnn_version
    if tested and (compiled is None or _major(tested.cudnn) == _major(compiled)):
        compiled = tested.cudnn if compiled is None or "." not in compiled else compiled
    cudart, cudnn = tf.cudart_name, tf.cudnn_name
    if (cudart is None or cudnn is None) and tested:
        derived = tf_facts.library_names(env.host.system, tested.cuda, tested.cudnn)
        cudart, cudnn = cudart or derived[0], cudnn or derived[1]
    return _TensorFlowNeeds(cudart, cudnn, cuda, compiled, tested, _owner(tf.version, tf, cuda, compiled))


def _owner(version: str, tf: TensorFlow, cuda: str | None, compiled: str | None) -> str:
    """'TensorFlow 2.18.0 (built for CUDA 12.5.1 and cuDNN 9; tested with cuDNN 9.3)': what the build info says
    is a build fact; what only the docs' tested configuration adds is said as such."""
    built = [
        f"CUDA {tf.cuda_version}" if tf.cuda_version else "",
        f"cuDNN {tf.cudnn_version}" if tf.cudnn_version else "",
    ]
    tested = [
        f"CUDA {cuda}" if cuda and cuda != tf.cuda_version else "",
        f"cuDNN {compiled}" if compiled and compiled != tf.cudnn_version else "",
    ]
    said = [
        f"built for {' and '.join(p for p in built if p)}" if any(built) else "",
        f"tested with {' and '.join(p for p in tested if p)}" if any(tested) else "",
    ]
    detail = "; ".join(part for part in said if part)
    return f"TensorFlow {version}" + (f" ({detail})" if detail else "")


def _resolution(env: Environment, name: str) -> Resolution | None:
    return env.resolution(name, "tensorflow") or env.resolution(name, "process")


def _winner(resolution: Resolution | None) -> Candidate | None:
    if resolution is None:
        return None
    path = resolution.loaded or resolution.predicted
    return next((c for c in resolution.candidates if c.path == path), None) if path else None


_Copy = CudaRuntime | Cudnn


def _copy_of(copies: Iterable[_Copy], candidate: Candidate | None) -> _Copy | None:
    if candidate is None:
        return None
    return next(
        (c for c in copies if c.path == candidate.path or (c.real_path and c.real_path == candidate.real_path)), None
    )


def _loader_visible(vias: Iterable[Via]) -> bool:
    return any(v in _LOADER_VIAS for v in vias)


def stack_runtime(env: Environment) -> CudaRuntime | None:
    """The CUDA runtime the stack uses: the one TensorFlow's loader picks. None without a framework."""
    needs = _tensorflow_needs(env)
    if needs and needs.cudart:
        found = _copy_of(env.cuda_runtimes, _winner(_resolution(env, needs.cudart)))
        return found if isinstance(found, CudaRuntime) else None
    return None


def _runtimes_in_use(env: Environment) -> tuple[list[CudaRuntime], bool]:
    """The runtimes to judge, and whether the stack is known to use them.

    With a framework: its runtime. Without: every runtime the loader can see; the host can run GPU work if any of
    them can, so each failing one is an error only when they all fail.
    """
    stack = stack_runtime(env)
    if stack is not None:
        return [stack], True
    if _tensorflow_needs(env) is not None:
        return [], True
    return [r for r in env.cuda_runtimes if r.version and _loader_visible(r.via)], False


def _stack_cudnns(env: Environment) -> list[Cudnn]:
    needs = _tensorflow_needs(env)
    if needs and needs.cudnn:
        found = _copy_of(env.cudnns, _winner(_resolution(env, needs.cudnn)))
        return [found] if isinstance(found, Cudnn) else []
    return [c for c in env.cudnns if _loader_visible(c.via)]


def visible_gpus(env: Environment) -> tuple[Gpu, ...]:
    """The GPUs CUDA will see, in CUDA's numbering."""
    return parse_visible_devices(env.variables.get("CUDA_VISIBLE_DEVICES"), env.driver.gpus).gpus


def _loader_winners(env: Environment, copies: Sequence[_Copy]) -> list[_Copy]:
    """Copies that win the plain-dlopen search for their own soname."""
    winners: list[_Copy] = []
    for resolution in env.resolutions:
        if resolution.context != "process":
            continue
        found = _copy_of(copies, _winner(resolution))
        if found is not None and found not in winners:
            winners.append(found)
    return winners


def _pick(copies: Sequence[_Copy], spec: SpecifierSet | None, avoid: Collection[str] = ()) -> _Copy | None:
    """The newest copy matching ``spec``, preferring those that can run (not in ``avoid``); without a match, the
    newest of all, so that a failed requirement can say what there is."""

    def key(copy: _Copy) -> tuple[bool, Version]:
        return copy.path not in avoid, _version(copy.version) or Version("0")

    matching = [c for c in copies if spec is None or (_version(c.version) is not None and key(c)[1] in spec)]
    return max(matching or copies, key=key, default=None)


def stack_cudnn(env: Environment) -> Cudnn | None:
    """The cuDNN the framework's loader picks. None without a framework, or when it finds none."""
    needs = _tensorflow_needs(env)
    if needs is None or not needs.cudnn:
        return None
    found = _copy_of(env.cudnns, _winner(_resolution(env, needs.cudnn)))
    return found if isinstance(found, Cudnn) else None


def selected_cudnn(env: Environment, spec: SpecifierSet | None = None, avoid: Collection[str] = ()) -> Cudnn | None:
    """The cuDNN a test gets: TensorFlow's, else the newest loader-winning copy (matching ``spec`` if any does,
    one that can run before one that cannot: ``avoid`` holds the paths of copies that cannot)."""
    needs = _tensorflow_needs(env)
    # When TensorFlow's own cuDNN is missing, the copies a plain dlopen finds are what there is to report.
    copies = (_stack_cudnns(env) if needs and needs.cudnn else []) or _loader_winners(env, env.cudnns)
    found = _pick(copies, spec, avoid)
    return found if isinstance(found, Cudnn) else None


def selected_runtime(
    env: Environment, spec: SpecifierSet | None = None, avoid: Collection[str] = ()
) -> CudaRuntime | None:
    """The CUDA runtime a test gets: TensorFlow's, else the newest loader-winning copy (as selected_cudnn)."""
    stack = stack_runtime(env)
    copies: list[_Copy] = [stack] if stack else _loader_winners(env, env.cuda_runtimes)
    found = _pick(copies, spec, avoid)
    return found if isinstance(found, CudaRuntime) else None


def _gpus(env: Environment) -> list[Gpu]:
    return [gpu for gpu in env.driver.gpus if _version(gpu.compute_capability) is not None]


def _runtime_evidence(runtime: CudaRuntime) -> str:
    return phrases.copy(runtime)


def _cudnn_evidence(cudnn: Cudnn) -> str:
    return phrases.copy(cudnn, *([f"built for CUDA {cudnn.cudart_version}"] if cudnn.cudart_version else []))


def _gpu_text(gpu: Gpu) -> str:
    return phrases.gpu(gpu, free=False)


def _in_use(env: Environment, copy: _Copy) -> bool:
    """Whether the stack uses this copy: the framework's own copy, or, without a framework, any copy a plain
    dlopen can reach. A failure of a copy in use stops GPU work; one of a copy nobody loads is a warning."""
    if isinstance(copy, CudaRuntime):
        stack = stack_runtime(env)
        if stack is not None or _tensorflow_needs(env) is not None:
            return stack is not None and stack.path == copy.path
    else:
        needs = _tensorflow_needs(env)
        if needs is not None and needs.cudnn:
            return any(c.path == copy.path for c in _stack_cudnns(env))
    return _loader_visible(copy.via)


# Driver and GPUs -----------------------------------------------------------------------------------


def _driver_rules(env: Environment) -> Iterator[Finding]:
    driver = env.driver
    said = f"NVML said: {driver.reason}" if driver.reason else ""
    where = f"NVML library: {driver.path}" if driver.path else ""
    if driver.state is State.FOUND:
        if not driver.gpus:
            yield _finding(
                "no-gpu",
                Severity.ERROR,
                "driver",
                "the NVIDIA driver is running but reports no GPU",
                (f"driver {driver.version} via {driver.path}",),
                "check that the GPU is attached to this machine or container (nvidia-smi -L; docker run --gpus all)",
            )
        return
    if driver.nvml_error == 18:
        yield _finding(
            "driver-module-mismatch",
            Severity.ERROR,
            "driver",
            "the NVIDIA kernel module and the user-space driver differ (driver upgraded without a reboot)",
            (said, where),
            "reboot, or unload and reload the nvidia kernel modules",
        )
    elif driver.nvml_error == 9:
        yield _finding(
            "driver-not-loaded",
            Severity.ERROR,
            "driver",
            "the NVIDIA driver is installed but its kernel module is not loaded",
            (said, where),
            "load the kernel module (modprobe nvidia) or reboot; dmesg says why it failed",
        )
    elif driver.state is State.ABSENT:
        runtimes = [r for r in env.cuda_runtimes if r.driver_version_raw == 0 and r.device_count_status == 35]
        yield _finding(
            "no-driver",
            Severity.ERROR,
            "driver",
            f"no NVIDIA driver: {phrases.nvml_library(env.host.system)} is not on the loader path",
            (
                said,
                f"libcuda: {env.cuda_driver.reason}" if env.cuda_driver.state is not State.FOUND else "",
                f"{_runtime_evidence(runtimes[0])} reports driver version 0 and status 35: no driver at all, "
                "not an old one"
                if runtimes
                else "",
            ),
            "install the NVIDIA driver; in a container, start it with the NVIDIA container toolkit (--gpus all)",
        )
    else:
        yield _finding(
            "driver-error",
            Severity.ERROR,
            "driver",
            "NVML could not report on the driver",
            (said, where),
            "run nvidia-smi to see the same failure; check dmesg",
        )


def _gpu_rules(env: Environment) -> Iterator[Finding]:
    for gpu in env.driver.gpus:
        if gpu.error:
            yield _finding(
                "gpu-probe-partial",
                Severity.WARNING,
                "gpu",
                f"GPU {gpu.index}: some facts could not be read",
                (f"NVML: {gpu.error}",),
                f"run nvidia-smi -q -i {gpu.index}; 'GPU is lost' means the device fell off the bus (reset or reboot)",
            )
        if gpu.memory_total and gpu.memory_free is not None and gpu.memory_free < gpu.memory_total * 0.1:
            yield _finding(
                "gpu-memory-low",
                Severity.WARNING,
                "gpu",
                f"GPU {gpu.index} has {gpu.memory_free / 2**30:.1f} GiB free of {gpu.memory_total / 2**30:.1f} GiB",
                (_gpu_text(gpu),),
                "another process holds the memory (nvidia-smi lists it); TensorFlow grabs all memory by default: "
                "tf.config.experimental.set_memory_growth or TF_FORCE_GPU_ALLOW_GROWTH=true",
            )


# CUDA runtime --------------------------------------------------------------------------------------


def _runtime_rules(env: Environment) -> Iterator[Finding]:
    if not env.cuda_runtimes:
        yield _finding(
            "no-cuda-runtime",
            Severity.ERROR,
            "cuda-runtime",
            f"no CUDA runtime ({phrases.cudart_library(env.host.system)}) found anywhere",
            (),
            "install one, e.g. pip install nvidia-cuda-runtime-cu12, or the CUDA toolkit",
        )
    for runtime in env.cuda_runtimes:
        if runtime.state is State.ERROR:
            yield _finding(
                "cuda-runtime-probe-failed",
                Severity.ERROR if _in_use(env, runtime) else Severity.WARNING,
                "cuda-runtime",
                f"the CUDA runtime at {runtime.path} {_failed(runtime.failure)}",
                (runtime.reason or "",),
                _failure_fix(runtime.failure, runtime.reason, "the CUDA runtime"),
                (runtime.path,),
            )
    runtimes, in_use = _runtimes_in_use(env)
    failing = [finding for runtime in runtimes for finding in _runtime_cannot_run(env, runtime)]
    all_fail = in_use or len({f.subjects for f in failing}) == len(runtimes)
    for finding in failing:
        yield finding if all_fail else dataclasses.replace(finding, severity=Severity.WARNING)


def _failed(failure: Failure | None) -> str:
    """What happened to a copy whose probe failed, in words."""
    return {
        Failure.UNLOADABLE: "cannot be loaded",
        Failure.CRASHED: "crashed when probed",
        Failure.HUNG: "hung when probed",
        Failure.NOT_THE_LIBRARY: "is not the library its name says",
        Failure.NO_ANSWER: "could not be probed",
    }.get(failure or Failure.NO_ANSWER, "could not be probed")


def _failure_fix(failure: Failure | None, reason: str | None, what: str) -> str:
    said = (reason or "").lower()
    if "permission denied" in said:
        return f"make {what} readable by this user (check the file's and its folders' permissions)"
    if "too many levels of symbolic links" in said:
        return "fix the symbolic link loop: each link must end at a real file"
    if failure is Failure.HUNG:
        return f"{what} did not answer: run nvidia-smi and check dmesg for a hung driver or GPU"
    if failure is Failure.NOT_THE_LIBRARY:
        return f"remove the file, or reinstall {what}: this file lacks its entry points"
    return f"reinstall {what}: the file is damaged, truncated or built for another architecture"


def _runtime_cannot_run(env: Environment, runtime: CudaRuntime) -> Iterator[Finding]:
    """The runtime's own answer is evidence: a driver too old for it (by NVML's version or, without NVML, by
    what the runtime itself says), or a runtime that cannot reach the driver NVML reports."""
    if runtime.state is not State.FOUND:
        return
    too_old = list(_driver_for(env, runtime))
    yield from too_old
    status = runtime.device_count_status
    if too_old or env.driver.state is not State.FOUND or status in (None, 0):
        return
    if status == 100 and not visible_gpus(env):
        return  # CUDA_VISIBLE_DEVICES hides every GPU: its own finding says so
    said = f"cudaGetDeviceCount returned {status}" + (
        f" ({runtime.device_count_error})" if runtime.device_count_error else ""
    )
    evidence = [_runtime_evidence(runtime), said, f"NVML reports driver {env.driver.version or '?'}"]
    libcuda = env.cuda_driver
    evidence.append(
        f"libcuda: {libcuda.path or '?'} (CUDA {libcuda.version or '?'})"
        if libcuda.state is State.FOUND
        else f"libcuda: {libcuda.reason or libcuda.state.value}"
    )
    if runtime.driver_version_raw == 0:
        summary = (
            f"CUDA runtime {runtime.version} at {runtime.path} finds no usable driver (cudaDriverGetVersion says 0), "
            f"although NVML reports driver {env.driver.version or '?'}"
        )
        fix = (
            "make the driver's own libcuda.so.1 reachable: install the driver's user-space libraries matching "
            "its kernel module; in a container, start it with the NVIDIA container toolkit (--gpus all); remove "
            "a cuda-compat libcuda from the loader path if it does not fit this driver"
        )
    else:
        summary = f"CUDA runtime {runtime.version} at {runtime.path} cannot use the GPUs: {said}"
        fix = "run nvidia-smi and a CUDA sample (deviceQuery) to see the same failure; check dmesg and /dev/nvidia*"
    yield _finding("cuda-runtime-cannot-run", Severity.ERROR, "cuda-runtime", summary, evidence, fix, (runtime.path,))


def _driver_for(env: Environment, runtime: CudaRuntime) -> Iterator[Finding]:
    if not runtime.version:
        return
    floor = cuda_facts.minimum_driver(runtime.version, env.host.system)
    driver = env.driver.version
    evidence = [_runtime_evidence(runtime)]
    if driver and floor:
        have, need = cuda_facts.driver_tuple(driver), cuda_facts.driver_tuple(floor[0])
        if not (have and need and have < need):
            return
        evidence += [f"driver {driver} is below {floor[0]}, {floor[1].rule}", _cite(floor[1].source)]
    elif runtime.driver_version_raw:
        # Without NVML, the runtime's own cudaDriverGetVersion says which CUDA the driver supports.
        driver_cuda = _cuda_text(runtime.driver_version_raw)
        if driver_cuda is None or not _driver_cuda_too_old(driver_cuda, runtime.version):
            return
        evidence.append(f"cudaDriverGetVersion: the driver supports CUDA up to {driver_cuda}")
    else:
        return
    if runtime.device_count_status == 35:
        evidence.append(f"cudaGetDeviceCount said 35: {runtime.device_count_error}")
    yield _finding(
        "driver-too-old-for-cuda",
        Severity.ERROR,
        "driver",
        f"the NVIDIA driver{' ' + driver if driver else ''} is too old for CUDA {runtime.version}",
        evidence,
        f"install a driver >= {floor[0]}" if floor else "upgrade the NVIDIA driver",
        (runtime.path,),
    )


def _cuda_text(value: int) -> str | None:
    try:
        return cuda_version_from_int(value)
    except InvalidVersionValue:
        return None


def _driver_cuda_too_old(driver_cuda: str, runtime_cuda: str) -> bool:
    """From CUDA 11 a driver of the same major runs every minor; before, it must be at least the runtime."""
    have, need = _version(driver_cuda), _version(runtime_cuda)
    if have is None or need is None:
        return False
    if need.release[0] >= 11:
        return have.release[0] < need.release[0]
    return have < need


def _gpu_arch_rules(env: Environment) -> Iterator[Finding]:
    runtimes, in_use = _runtimes_in_use(env)
    for gpu in _gpus(env):
        cc = _version(gpu.compute_capability)
        failing = []
        for runtime in runtimes:
            targets = cuda_facts.supported_capabilities(runtime.version or "")
            if cc is not None and targets is not None and cc < Version(targets.oldest):
                failing.append(
                    _finding(
                        "gpu-unsupported-by-cuda",
                        Severity.ERROR,
                        "gpu",
                        f"CUDA {runtime.version} cannot run on {_gpu_text(gpu)}: its oldest target is {targets.oldest}",
                        (_runtime_evidence(runtime), _cite(targets.source)),
                        "use a CUDA release that still supports this GPU, or a newer GPU",
                        (runtime.path,),
                    )
                )
        all_fail = in_use or len(failing) == len(runtimes)
        for finding in failing:
            yield finding if all_fail else dataclasses.replace(finding, severity=Severity.WARNING)


# TensorFlow ---------------------------------------------------------------------------------------


def _tensorflow_rules(env: Environment) -> Iterator[Finding]:
    tf = env.tensorflow
    if tf.state is not State.FOUND:
        return
    if tf.is_cuda_build is False:
        last, source = tf_facts.WINDOWS_LAST_GPU_RELEASE
        version = _version(tf.version)
        if env.host.system == "Windows" and version and version >= Version(last) and version.release[:2] > (2, 10):
            yield _finding(
                "windows-tensorflow-no-gpu",
                Severity.WARNING,
                "tensorflow",
                f"TensorFlow {tf.version} has no GPU support on native Windows (the last was {last})",
                (f"TensorFlow {tf.version} at {tf.location}: a CPU-only build", _cite(source)),
                "run TensorFlow in WSL2, or pin tensorflow<2.11 with CUDA 11.2 and cuDNN 8.1",
            )
        else:
            yield _finding(
                "tensorflow-cpu-only",
                Severity.WARNING,
                "tensorflow",
                f"TensorFlow {tf.version} ({tf.distribution}) is a CPU-only build: it will not use the GPU",
                (f"{tf.build_info_path}: is_cuda_build = False",),
                "install the GPU build: pip install 'tensorflow[and-cuda]' (Linux)",
            )
        return
    needs = _tensorflow_needs(env)
    if needs is None:
        return
    if not tf.cuda_version and needs.tested:
        yield _finding(
            "tensorflow-build-unrecorded",
            Severity.INFO,
            "tensorflow",
            f"TensorFlow {tf.version}'s build info records no CUDA version; its tested configuration stands in",
            (
                f"{tf.build_info_path}: {tf.reason}",
                f"tested build {needs.tested.tensorflow}: CUDA {needs.tested.cuda}, cuDNN {needs.tested.cudnn}",
                _cite(needs.tested.source),
            ),
            "nothing to do; the checks below use the tested configuration",
        )
    elif tf.cuda_version and tf.cudart_name is None and needs.tested:
        yield _finding(
            "tensorflow-build-unrecorded",
            Severity.INFO,
            "tensorflow",
            f"TensorFlow {tf.version}'s build info records only CUDA {tf.cuda_version_raw!r}; the tested configuration "
            f"gives CUDA {needs.tested.cuda}",
            (f"{tf.build_info_path}", _cite(needs.tested.source)),
            "nothing to do; the checks below use the tested configuration",
        )
    yield from _tensorflow_library(env, needs, "cudart")
    yield from _tensorflow_library(env, needs, "cudnn")
    yield from _tensorflow_cudnn_version(env, needs)
    yield from _tensorflow_kernels(env)
    yield from _tensorflow_wheels(env)


def _install_hint(env: Environment, needs: _TensorFlowNeeds, kind: str) -> str:
    """What to install: the tensorflow[and-cuda] extra where it installs on this Python, its nvidia pins one by
    one where it does not (TensorFlow 2.14's tensorrt pin has no wheel for Python 3.11), else the library itself."""
    tf = env.tensorflow
    remedy = tf_facts.and_cuda_remedy(tf.version or "", env.host.python) if env.host.system == "Linux" else None
    if remedy is not None:
        if remedy.uses_extra:
            return f"{remedy.command} (it installs the matching nvidia wheels)"
        skipped = ", ".join(remedy.left_out)
        return (
            f"{remedy.command} (the nvidia wheels of tensorflow[and-cuda]=={tf.version}; the extra itself does not "
            f"install on Python {env.host.python}" + (f": {skipped} has no wheel there)" if skipped else ")")
        )
    if kind == "cudnn":
        cuda = needs.cuda or "?"
        return (
            f"install cuDNN {needs.cudnn_compiled or '?'} for CUDA {cuda} and put its library folder on the loader path"
        )
    return f"install the CUDA {needs.cuda or '?'} runtime and put its library folder on the loader path"


def _tensorflow_library(env: Environment, needs: _TensorFlowNeeds, kind: str) -> Iterator[Finding]:
    name = needs.cudart if kind == "cudart" else needs.cudnn
    if name is None:
        return
    resolution = _resolution(env, name)
    if _winner(resolution) is not None:
        if resolution is not None and resolution.context == "tensorflow":
            yield from _tensorflow_shadowing(env, needs, resolution)
        return
    copies: list[CudaRuntime | Cudnn] = list(env.cuda_runtimes if kind == "cudart" else env.cudnns)
    evidence = [f"{needs.owner} loads {name}"]
    unseen = [c for c in (resolution.candidates if resolution else ()) if c.loader_rank is None]
    for candidate in unseen:
        evidence.append(f"{name} exists at {candidate.path} (via {_via(candidate.via)}), where the loader never looks")
    for copy in copies:
        evidence.append(
            (_runtime_evidence(copy) if isinstance(copy, CudaRuntime) else _cudnn_evidence(copy)) + f": not {name}"
        )
    if needs.tested:
        evidence.append(_cite(needs.tested.source))
    label = "CUDA runtime" if kind == "cudart" else "cuDNN"
    if unseen:
        folder = unseen[0].path.rsplit("/", 1)[0] if "/" in unseen[0].path else unseen[0].path.rsplit("\\", 1)[0]
        fix = (
            f"add {folder} to PATH, or call os.add_dll_directory({folder!r}) before TensorFlow is imported"
            if env.host.system == "Windows"
            else f"add {folder} to LD_LIBRARY_PATH"
        )
    else:
        fix = _install_hint(env, needs, kind)
    yield _finding(
        f"tensorflow-{kind}-not-found",
        Severity.ERROR,
        "tensorflow",
        f"{needs.owner} loads {name}, and the loader finds no copy of it: no {label} for TensorFlow",
        evidence,
        fix,
    )


def _tensorflow_shadowing(env: Environment, needs: _TensorFlowNeeds, resolution: Resolution) -> Iterator[Finding]:
    winner = _winner(resolution)
    if winner is None or Via.LD_LIBRARY_PATH not in winner.via:
        return
    wheel = next((c for c in resolution.candidates if Via.RUNPATH in c.via and c.real_path != winner.real_path), None)
    if wheel is None:
        return
    copies = list(env.cudnns) + list(env.cuda_runtimes)
    won, lost = _copy_of(copies, winner), _copy_of(copies, wheel)
    won_v = won.version if won else "?"
    lost_v = lost.version if lost else "?"
    yield _finding(
        "tensorflow-library-shadowed",
        Severity.WARNING,
        "loader",
        f"{resolution.name} {won_v} from LD_LIBRARY_PATH wins over the {lost_v} wheel beside TensorFlow",
        (
            f"loaded: {winner.path} (via {_via(winner.via)})",
            f"shadowed: {wheel.path} (via {_via(wheel.via)})",
            "the loader searches LD_LIBRARY_PATH before TensorFlow's RUNPATH (ld.so(8)); pytorch/pytorch#80637",
        ),
        f"remove {winner.path.rsplit('/', 1)[0]} from LD_LIBRARY_PATH for this environment",
    )


def _tensorflow_cudnn_version(env: Environment, needs: _TensorFlowNeeds) -> Iterator[Finding]:
    if not needs.cudnn or not needs.cudnn_compiled:
        return
    cudnn = _copy_of(env.cudnns, _winner(_resolution(env, needs.cudnn)))
    if not isinstance(cudnn, Cudnn) or _version(cudnn.version) is None or _version(needs.cudnn_compiled) is None:
        return
    assert cudnn.version is not None
    if not tf_facts.accepts_cudnn(needs.cudnn_compiled, cudnn.version):
        yield _finding(
            "tensorflow-cudnn-too-old",
            Severity.ERROR,
            "tensorflow",
            f"{needs.owner} needs cuDNN {needs.cudnn_compiled} or a newer {_major(needs.cudnn_compiled)}.x; "
            f"the loader gives it {cudnn.version}",
            (
                _cudnn_evidence(cudnn),
                f"TensorFlow will log 'Loaded runtime CuDNN library: {cudnn.version} but source was compiled with: "
                f"{needs.cudnn_compiled}'",
                _cite("tf-cudnn-rule"),
            ),
            _install_hint(env, needs, "cudnn"),
            (cudnn.path,),
        )


def _same_cuda(a: str, b: str) -> bool:
    """cuDNN builds for CUDA 11+ serve the whole major; before 11 each build served one major.minor."""
    if (_major(a) or 0) >= 11 or (_major(b) or 0) >= 11:
        return _major(a) == _major(b)
    return _major_minor(a) == _major_minor(b)


def _capability_parts(text: str) -> tuple[str, int, int] | None:
    match = re.fullmatch(r"(sm|compute)_(\d{1,8})(\d)[a-z]?", text)
    if not match:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


def _tensorflow_kernels(env: Environment) -> Iterator[Finding]:
    tf = env.tensorflow
    targets = [parts for parts in (_capability_parts(c) for c in tf.compute_capabilities) if parts]
    if not targets:
        return
    for gpu in _gpus(env):
        cc = _version(gpu.compute_capability)
        if cc is None:
            continue
        major, minor = cc.release[0], cc.release[1] if len(cc.release) > 1 else 0
        # SASS runs on the same major at an equal or higher minor; PTX is JIT-compiled for any newer GPU
        # (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility").
        sass = any(kind == "sm" and m == major and n <= minor for kind, m, n in targets)
        ptx = any(kind == "compute" and (m, n) <= (major, minor) for kind, m, n in targets)
        listed = ", ".join(tf.compute_capabilities)
        if not sass and not ptx:
            yield _finding(
                "tensorflow-no-kernels-for-gpu",
                Severity.ERROR,
                "tensorflow",
                f"TensorFlow {tf.version} has no kernels for {_gpu_text(gpu)}",
                (f"{tf.build_info_path}: cuda_compute_capabilities = {listed}",),
                "use a TensorFlow release built for this GPU's architecture, or build TensorFlow from source for it",
            )
        elif not sass:
            yield _finding(
                "tensorflow-ptx-only",
                Severity.INFO,
                "tensorflow",
                f"TensorFlow {tf.version} runs on {_gpu_text(gpu)} only through PTX JIT (slow first start)",
                (f"{tf.build_info_path}: cuda_compute_capabilities = {listed}",),
                "expect minutes of JIT compilation on first use; set CUDA_CACHE_MAXSIZE so the cache keeps it",
            )


def _tensorflow_wheels(env: Environment) -> Iterator[Finding]:
    """The nvidia wheels beside TensorFlow against its ``[and-cuda]`` pins, by the installed distributions'
    own versions (nvidia-cudnn-cu12 9.3.0.75): the library reports only three parts (9.3.0)."""
    tf = env.tensorflow
    pins = tf_facts.and_cuda_pins(tf.version or "")
    if pins is None or not tf.location:
        return
    site = _parent(tf.location)
    for package, spec in ((pins.cudnn_package, pins.cudnn), (pins.runtime_package, pins.runtime)):
        installed = next(
            (d for d in env.distributions if _same_name(d.name, package) and _same_folder(d.location, site)), None
        )
        if installed is None or tf_facts.in_pins(spec, installed.version):
            continue
        yield _finding(
            "tensorflow-wheel-pins",
            Severity.WARNING,
            "tensorflow",
            f"{installed.name} {installed.version} is installed beside TensorFlow {tf.version}; tensorflow[and-cuda] "
            f"requires {package}{spec}",
            (f"{installed.name} {installed.version} in {installed.location}", _cite(pins.source)),
            f"pip install '{package}{spec}'",
        )


def _parent(path: str) -> str:
    return path.rstrip("/\\").rsplit("/" if "/" in path else "\\", 1)[0]


def _same_name(a: str, b: str) -> bool:
    """Distribution names compare after PEP 503 normalisation: nvidia_cudnn_cu12 is nvidia-cudnn-cu12."""
    return canonicalize_name(a) == canonicalize_name(b)


def _same_folder(a: str, b: str) -> bool:
    return a.rstrip("/\\") == b.rstrip("/\\")


# cuDNN --------------------------------------------------------------------------------------------


def _cudnn_rules(env: Environment) -> Iterator[Finding]:
    for cudnn in env.cudnns:
        yield from _cudnn_copy(env, cudnn)
    runtime = stack_runtime(env)
    gpus = _gpus(env)
    for cudnn in _stack_cudnns(env):
        if (
            runtime
            and runtime.version
            and cudnn.cudart_version
            and not _same_cuda(cudnn.cudart_version, runtime.version)
        ):
            yield _finding(
                "cudnn-cuda-mismatch",
                Severity.ERROR,
                "cudnn",
                f"cuDNN {cudnn.version} was built for CUDA {cudnn.cudart_version}, but the stack uses CUDA "
                f"{runtime.version}",
                (_cudnn_evidence(cudnn), _runtime_evidence(runtime), "cudnnGetCudartVersion reports the build's CUDA"),
                f"install the cuDNN {cudnn.version} build for CUDA {_major_minor(runtime.version)}",
                (cudnn.path,),
            )
        elif (
            runtime is None
            and cudnn.cudart_version
            and not any(
                r.version and _loader_visible(r.via) and _same_cuda(cudnn.cudart_version, r.version)
                for r in env.cuda_runtimes
            )
        ):
            yield _finding(
                "cudnn-cuda-mismatch",
                Severity.WARNING,
                "cudnn",
                f"cuDNN {cudnn.version} was built for CUDA {cudnn.cudart_version}, and no CUDA runtime of that "
                "release is on the loader path",
                [_cudnn_evidence(cudnn)] + [_runtime_evidence(r) for r in env.cuda_runtimes if _loader_visible(r.via)],
                f"install the CUDA {_major_minor(cudnn.cudart_version)} runtime, or the cuDNN build for your CUDA",
                (cudnn.path,),
            )
        if gpus and cudnn.create_status not in (None, 0):
            last = f"; cuDNN says: {cudnn.last_error}" if cudnn.last_error else ""
            yield _finding(
                "cudnn-create-failed",
                Severity.ERROR,
                "cudnn",
                f"cudnnCreate fails with {cudnn.create_status} ({cudnn.create_error}) although the driver sees GPUs",
                (_cudnn_evidence(cudnn), f"cudnnCreate: {cudnn.create_status} {cudnn.create_error}{last}"),
                "run with CUDNN_LOGERR_DBG=1 (cuDNN 8) or CUDNN_LOGLEVEL_DBG=2 (cuDNN 9) and CUDNN_LOGDEST_DBG=stderr "
                "for the reason; check the driver and CUDA findings above",
                (cudnn.path,),
            )
        for gpu in gpus:
            yield from _cudnn_gpu(cudnn, gpu)


def _cudnn_copy(env: Environment, cudnn: Cudnn) -> Iterator[Finding]:
    """A copy that cannot serve, named for what happened to it: it cannot be loaded, a library it needs is
    missing, its sub-libraries are missing, it crashed or hung. Severity follows who uses the copy."""
    severity = Severity.ERROR if _in_use(env, cudnn) else Severity.WARNING
    evidence = [_cudnn_evidence(cudnn), cudnn.reason or ""]
    if cudnn.siblings_missing:
        evidence.append("missing beside it: " + ", ".join(cudnn.siblings_missing))
    if cudnn.missing_dependencies:
        missing = ", ".join(cudnn.missing_dependencies)
        fix, source = _dependency_fix(cudnn)
        yield _finding(
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
        yield _finding(
            "cudnn-incomplete",
            severity,
            "cudnn",
            f"cuDNN at {cudnn.path} is missing its sub-libraries; any call into it aborts the process",
            evidence,
            "reinstall cuDNN completely: every libcudnn_* file of one release in one folder",
            (cudnn.path,),
        )
    elif cudnn.state is State.ERROR:
        yield _finding(
            "cudnn-not-loadable" if cudnn.failure is Failure.UNLOADABLE else "cudnn-probe-failed",
            severity,
            "cudnn",
            f"cuDNN at {cudnn.path} {_failed(cudnn.failure)}",
            evidence,
            _failure_fix(cudnn.failure, cudnn.reason, "cuDNN"),
            (cudnn.path,),
        )


def _cudnn_label(cudnn: Cudnn) -> str:
    return f"cuDNN {cudnn.version}" if cudnn.version else "cuDNN"


def _dependency_fix(cudnn: Cudnn) -> tuple[str, str]:
    """Install what provides the missing library (its pip wheel, and what the wheel really ships when that is
    not the very name cuDNN asks for), and the source that says so; or, untabled, a plain instruction."""
    missing = cudnn.missing_dependencies[0]
    found = provider(missing, _major(cudnn.cudart_version))
    if found is None:
        folder = cudnn.path.rsplit("/", 1)[0] if "/" in cudnn.path else cudnn.path.rsplit("\\", 1)[0]
        return f"install the library that provides {missing} where the loader finds it (beside {folder})", ""
    if found.package is None:
        return f"install {missing}: {found.note}", _cite(found.source)
    shipped = f"; {found.note}" if not found.exact and found.note else ""
    return f"pip install '{found.requirement}' (it ships {found.file} in {found.folder}){shipped}", _cite(found.source)


def _cudnn_gpu(cudnn: Cudnn, gpu: Gpu) -> Iterator[Finding]:
    if not cudnn.version:
        return
    floor = cudnn_facts.oldest_capability(cudnn.version, _major(cudnn.cudart_version))
    cc = _version(gpu.compute_capability)
    if floor and cc is not None and cc < Version(floor.oldest):
        yield _finding(
            "cudnn-gpu-unsupported",
            Severity.ERROR,
            "cudnn",
            f"cuDNN {cudnn.version} does not support {_gpu_text(gpu)}: its oldest is {floor.oldest}",
            (_cudnn_evidence(cudnn), _cite(floor.source)),
            "use a cuDNN release that still supports this GPU (see the support matrix), or a newer GPU",
            (cudnn.path,),
        )
    for bad in cudnn_facts.known_bad(cudnn.version, gpu.compute_capability, _major_minor(cudnn.cudart_version)):
        yield _finding(
            "cudnn-known-bad",
            Severity.WARNING,
            "cudnn",
            f"{bad.summary} [{bad.code}]",
            (_cudnn_evidence(cudnn), _gpu_text(gpu), _cite(bad.source)),
            bad.remedy,
            (cudnn.path,),
        )


# Loader -------------------------------------------------------------------------------------------


def _loader_rules(env: Environment) -> Iterator[Finding]:
    versions: dict[str, str] = {}
    for copy in list(env.cuda_runtimes) + list(env.cudnns):
        if copy.version:
            versions[copy.path] = copy.version
            if copy.real_path:
                versions[copy.real_path] = copy.version
    for resolution in env.resolutions:
        winner = _winner(resolution)
        if resolution.loaded and resolution.predicted and resolution.loaded != resolution.predicted:
            yield _finding(
                "loader-disagrees",
                Severity.WARNING,
                "loader",
                f"for {resolution.name} the loader loaded {resolution.loaded}, not {resolution.predicted}",
                ("the search rules (LD_LIBRARY_PATH, ldconfig cache, default folders) predicted the other copy",),
                "check /etc/ld.so.conf and run ldconfig; a stale cache or an RPATH can cause this",
            )
        if winner is None or resolution.context != "process":
            continue
        ranked = [c for c in resolution.candidates if c.loader_rank is not None and c.real_path != winner.real_path]
        winner_version = versions.get(winner.path) or versions.get(winner.real_path)
        others = [
            (c, versions.get(c.path) or versions.get(c.real_path))
            for c in ranked
            if (versions.get(c.path) or versions.get(c.real_path)) not in (None, winner_version)
        ]
        if others:
            yield _finding(
                "library-shadowed",
                Severity.WARNING,
                "loader",
                f"{len(others) + 1} versions of {resolution.name} are on the loader path; "
                f"{winner_version} at {winner.path} wins",
                [f"wins: {winner.path} (via {_via(winner.via)}), searched first"]
                + [f"shadowed: {c.path} {v} (via {_via(c.via)})" for c, v in others],
                "remove the copies you do not want from the loader path, so one version remains",
            )
    for note in env.notes:
        if note.startswith("LD_LIBRARY_PATH entry"):
            yield _finding(
                "ld-library-path-relative",
                Severity.WARNING,
                "environment",
                "LD_LIBRARY_PATH has relative or empty entries: the loader searches them from the current folder",
                (note, f"LD_LIBRARY_PATH={env.variables.get('LD_LIBRARY_PATH', '')}"),
                "remove empty entries (a leading, trailing or doubled ':') and make every entry absolute",
            )
            break


# Environment variables ----------------------------------------------------------------------------


def _path_rules(env: Environment) -> Iterator[Finding]:
    for folder in env.unreadable:
        yield _finding(
            "library-folder-unreadable",
            Severity.WARNING,
            "loader",
            f"{folder.path} could not be searched ({folder.reason}): copies there are unknown, not absent",
            (f"listing {folder.path}: {folder.reason}",),
            f"make {folder.path} readable by this user, or take it off the search path",
        )
    for check in env.paths:
        if not check.is_dir:
            yield _finding(
                "path-variable-missing",
                Severity.WARNING,
                "environment",
                f"{check.variable} points at {check.value}, which is not a folder",
                (f"{check.variable}={check.value}",),
                f"fix or unset {check.variable}; build scripts and some frameworks read it",
            )
            continue
        via = INSTALL_VARIABLES.get(check.variable)
        unseen = [
            copy.path
            for copy in list(env.cuda_runtimes) + list(env.cudnns)
            if via in copy.via and not _loader_visible(copy.via)
        ]
        if unseen:
            variable = "PATH" if env.host.system == "Windows" else "LD_LIBRARY_PATH"
            yield _finding(
                "path-variable-unused",
                Severity.INFO,
                "environment",
                f"{check.variable} holds libraries the loader never looks at: "
                f"the loader does not read {check.variable}",
                tuple(f"found only through {check.variable}: {path}" for path in unseen),
                f"add the folder to {variable} if these are the copies you mean to use",
            )


def _device_rules(env: Environment) -> Iterator[Finding]:
    gpus = env.driver.gpus
    value = env.variables.get("CUDA_VISIBLE_DEVICES")
    if value is not None and gpus:
        visible = parse_visible_devices(value, gpus)
        evidence = (
            f"CUDA_VISIBLE_DEVICES={clip(value, 200)!r}",
            f"NVML sees {len(gpus)} GPU(s)",
            _cite("cuda-env-vars"),
        )
        if not visible.gpus and visible.mig and visible.invalid is None:
            yield _finding(
                "cuda-visible-devices-mig",
                Severity.WARNING,
                "environment",
                f"CUDA_VISIBLE_DEVICES names MIG instances ({visible.mig[0]}"
                f"{', ...' if len(visible.mig) > 1 else ''}), which pytest-cudnn does not enumerate yet: tests "
                "that need a GPU skip, as no GPU can be judged",
                evidence,
                "name whole GPUs (indices or GPU- UUIDs) in CUDA_VISIBLE_DEVICES to run the GPU tests here",
            )
        elif not visible.gpus and not visible.mig:
            yield _finding(
                "cuda-visible-devices-hides-all",
                Severity.ERROR,
                "environment",
                "CUDA_VISIBLE_DEVICES leaves no GPU visible to CUDA",
                evidence,
                f"set CUDA_VISIBLE_DEVICES to indices below {len(gpus)} or to GPU UUIDs, or unset it",
            )
        elif visible.invalid is not None:
            yield _finding(
                "cuda-visible-devices-invalid",
                Severity.WARNING,
                "environment",
                f"CUDA_VISIBLE_DEVICES names {clip(visible.invalid, 60)!r}, which is no device here: it and every "
                "entry after "
                "it are ignored",
                evidence,
                "remove the entry; CUDA stops reading the list at the first invalid one",
            )
    order = env.variables.get("CUDA_DEVICE_ORDER", "FASTEST_FIRST")
    kinds = {(gpu.name, gpu.compute_capability, gpu.memory_total) for gpu in gpus}
    if len(gpus) > 1 and len(kinds) > 1 and order != "PCI_BUS_ID":
        yield _finding(
            "cuda-device-order",
            Severity.INFO,
            "environment",
            "these GPUs differ, and CUDA numbers them fastest first while nvidia-smi and NVML use PCI bus order",
            [*(_gpu_text(gpu) for gpu in gpus), _cite("cuda-env-vars")],
            "set CUDA_DEVICE_ORDER=PCI_BUS_ID so CUDA device N is nvidia-smi's GPU N",
        )


def _windows_rules(env: Environment) -> Iterator[Finding]:
    if env.host.system != "Windows":
        return
    python = _version(env.host.python)
    if python is None or python < Version("3.8"):
        return
    for copy in list(env.cuda_runtimes) + list(env.cudnns):
        loader = [v for v in copy.via if v in _LOADER_VIAS]
        if loader and set(loader) == {Via.PATH}:
            folder = copy.path.rsplit("\\", 1)[0]
            yield _finding(
                "windows-dll-path-only",
                Severity.INFO,
                "loader",
                f"{copy.path} is reachable only through PATH, which Python {env.host.python} extension modules and "
                "ctypes no longer search",
                (f"found via {_via(copy.via)}", _cite("python-38-dll")),
                f"call os.add_dll_directory({folder!r}) before loading it from Python code",
            )


RULES: tuple[Rule, ...] = (
    _driver_rules,
    _gpu_rules,
    _runtime_rules,
    _gpu_arch_rules,
    _tensorflow_rules,
    _cudnn_rules,
    _loader_rules,
    _path_rules,
    _device_rules,
    _windows_rules,
)


def diagnose(env: Environment, rules: tuple[Rule, ...] = RULES) -> list[Finding]:
    """All findings, errors first, each once, in a stable order."""
    seen: set[tuple[str, str]] = set()
    findings = []
    for rule in rules:
        for finding in rule(env):
            key = (finding.code, finding.summary)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    return sorted(findings, key=lambda f: _ORDER[f.severity])


def verdict(findings: list[Finding]) -> Verdict:
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        more = f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        return Verdict(False, f"cannot run GPU work: {errors[0].summary}{more}")
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    if warnings:
        return Verdict(True, f"the GPU stack holds together ({warnings} warning{'s' if warnings > 1 else ''})")
    return Verdict(True, "the GPU stack holds together")
