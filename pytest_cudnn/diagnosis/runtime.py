"""Rules about the CUDA runtimes: the driver each needs, its own answer, the GPUs its toolkit targets."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from packaging.version import Version

from .. import phrases
from .._base.versions import InvalidVersionValue, cuda_version_from_int
from ..compat import cuda as cuda_facts
from ..compat.cupy import STATIC_CUDA_RUNTIME
from ..environment import (
    CudaRuntime,
    Environment,
    Failure,
    State,
)
from .forward import explains, user_mode_covers
from .model import (
    Finding,
    Severity,
    cite,
    make_finding,
    parse_version,
)
from .stack import (
    any_gpu_framework,
    copy_in_use,
    gpu_frameworks,
    gpu_text,
    gpus_with_capability,
    loaded_by,
    runtime_evidence,
    runtimes_in_use,
    visible_gpus,
)


def _framework_judged() -> tuple[str, ...]:
    """Frameworks whose driver floor is judged by the framework rules, for the runtime copy they load: every
    registry entry that says what it loads and has no rules of its own (TensorFlow's are the stack's)."""
    from ..frameworks import REGISTRY

    return tuple(entry.name for entry in REGISTRY if entry.loads is not None and not entry.own_rules)


# CUDA runtime --------------------------------------------------------------------------------------


def runtime_rules(env: Environment) -> Iterator[Finding]:
    if not env.cuda_runtimes and not _static_runtimes_only(env):
        yield make_finding(
            "no-cuda-runtime",
            Severity.ERROR,
            "cuda-runtime",
            f"no CUDA runtime ({phrases.cudart_library(env.host.system)}) found anywhere",
            (),
            _no_runtime_fix(env),
        )
    for runtime in env.cuda_runtimes:
        if runtime.state is State.ERROR:
            yield make_finding(
                "cuda-runtime-probe-failed",
                Severity.ERROR if copy_in_use(env, runtime) else Severity.WARNING,
                "cuda-runtime",
                f"the CUDA runtime at {runtime.path} {failed_how(runtime.failure)}",
                (runtime.reason or "",),
                failure_fix(runtime.failure, runtime.reason, "the CUDA runtime"),
                (runtime.path,),
            )
    runtimes, in_use = runtimes_in_use(env)
    failing = [finding for runtime in runtimes for finding in _runtime_cannot_run(env, runtime)]
    all_fail = in_use or len({f.subjects for f in failing}) == len(runtimes)
    for finding in failing:
        yield finding if all_fail else dataclasses.replace(finding, severity=Severity.WARNING)


def _static_runtimes_only(env: Environment) -> bool:
    """Whether every GPU framework here carries its own CUDA runtime, linked in (CuPy): then no libcudart file is
    needed, and none is to be installed for them ("cupy-static-cudart")."""
    frameworks = gpu_frameworks(env)
    static = {name for name, _ in STATIC_CUDA_RUNTIME}
    return bool(frameworks) and all(build.name in static for build in frameworks)


def failed_how(failure: Failure | None) -> str:
    """What happened to a copy whose probe failed, in words."""
    return {
        Failure.UNLOADABLE: "cannot be loaded",
        Failure.CRASHED: "crashed when probed",
        Failure.HUNG: "hung when probed",
        Failure.NOT_THE_LIBRARY: "is not the library its name says",
        Failure.NO_ANSWER: "could not be probed",
    }.get(failure or Failure.NO_ANSWER, "could not be probed")


def failure_fix(failure: Failure | None, reason: str | None, what: str) -> str:
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
    if not loaded_by(env, runtime, _framework_judged()):
        yield from too_old  # a copy PyTorch or JAX loads: framework-driver-too-old says it, naming the framework
    status = runtime.device_count_status
    if too_old or env.driver.state is not State.FOUND or status in (None, 0) or explains(env, runtime):
        return
    if status == 100 and not visible_gpus(env):
        return  # CUDA_VISIBLE_DEVICES hides every GPU: its own finding says so
    said = f"cudaGetDeviceCount returned {status}" + (
        f" ({runtime.device_count_error})" if runtime.device_count_error else ""
    )
    evidence = [runtime_evidence(runtime), said, f"NVML reports driver {env.driver.version or '?'}"]
    libcuda = env.cuda_driver
    evidence.append(
        f"libcuda: {libcuda.path or '?'} (CUDA {libcuda.version or '?'})"
        if libcuda.state is State.FOUND
        else f"libcuda: {libcuda.reason or libcuda.state.value}"
    )
    if runtime.driver_version_raw == 0:
        summary = (
            f"{_runtime_label(runtime)} at {runtime.path} finds no usable driver (cudaDriverGetVersion says 0), "
            f"although NVML reports driver {env.driver.version or '?'}"
        )
        fix = (
            "make the driver's own libcuda.so.1 reachable: install the driver's user-space libraries matching "
            "its kernel module; in a container, start it with the NVIDIA container toolkit (--gpus all); remove "
            "a cuda-compat libcuda from the loader path if it does not fit this driver"
        )
    else:
        summary = f"{_runtime_label(runtime)} at {runtime.path} cannot use the GPUs: {said}"
        fix = "run nvidia-smi and a CUDA sample (deviceQuery) to see the same failure; check dmesg and /dev/nvidia*"
    yield make_finding(
        "cuda-runtime-cannot-run", Severity.ERROR, "cuda-runtime", summary, evidence, fix, (runtime.path,)
    )


def _older_cuda_fix(capability: str, oldest: str) -> str:
    """Which CUDA still targets the GPU: 'a CUDA runtime older than 13.0 (CUDA 13.0 targets compute capability 7.5
    and newer; 12.9 still targets 7.0)', from the toolkits' architecture table."""
    newer_gpu = f"a GPU of compute capability {oldest} or newer"
    end = cuda_facts.last_targeting(capability)
    if end is None:
        return f"use {newer_gpu}"
    kept, dropped = end
    return (
        f"use a CUDA runtime older than {dropped.since} (CUDA {dropped.since} targets compute capability "
        f"{dropped.oldest} and newer; {kept.since} still targets {capability}): the CUDA {kept.since.split('.')[0]} "
        f"build of the framework that loads it, or {newer_gpu}"
    )


def _no_runtime_fix(env: Environment) -> str:
    """Where the only frameworks installed are CPU-only builds, the runtime comes with their GPU build (their own
    finding, listed first, says how to get it); else the runtime itself."""
    cpu_only = [
        phrases.framework(b.name) for b in env.frameworks if b.state is State.FOUND and b.is_cuda_build is False
    ]
    tf = env.tensorflow
    if tf.state is State.FOUND and tf.is_cuda_build is False and "TensorFlow" not in cpu_only:
        cpu_only.append("TensorFlow")
    if cpu_only and not any_gpu_framework(env):
        return f"install the GPU build of {' and '.join(cpu_only)} (the CPU-only finding says how): it brings one"
    return "install one, e.g. pip install nvidia-cuda-runtime-cu12, or the CUDA toolkit"


def _runtime_label(runtime: CudaRuntime) -> str:
    """'CUDA runtime 12.5', or 'the CUDA runtime' where its version could not be read (the 11.8.89 wheel's
    cudaRuntimeGetVersion fails without a usable driver): never 'CUDA runtime None'."""
    return f"CUDA runtime {runtime.version}" if runtime.version else "the CUDA runtime"


def _driver_for(env: Environment, runtime: CudaRuntime) -> Iterator[Finding]:
    if not runtime.version or user_mode_covers(env, runtime.version):
        return  # a forward-compatibility libcuda answers for this CUDA: the forward rules judge it
    floor = cuda_facts.minimum_driver(runtime.version, env.host.system)
    driver = env.driver.version
    evidence = [runtime_evidence(runtime)]
    if driver and floor:
        have, need = cuda_facts.driver_tuple(driver), cuda_facts.driver_tuple(floor[0])
        if not (have and need and have < need):
            return
        evidence += [f"driver {driver} is below {floor[0]}, {floor[1].rule}", cite(floor[1].source)]
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
    yield make_finding(
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
    have, need = parse_version(driver_cuda), parse_version(runtime_cuda)
    if have is None or need is None:
        return False
    if need.release[0] >= 11:
        return have.release[0] < need.release[0]
    return have < need


def gpu_arch_rules(env: Environment) -> Iterator[Finding]:
    runtimes, in_use = runtimes_in_use(env)
    for gpu in gpus_with_capability(env):
        cc = parse_version(gpu.compute_capability)
        failing = []
        for runtime in runtimes:
            targets = cuda_facts.supported_capabilities(runtime.version or "")
            if cc is not None and targets is not None and cc < Version(targets.oldest):
                failing.append(
                    make_finding(
                        "gpu-unsupported-by-cuda",
                        Severity.ERROR,
                        "gpu",
                        f"CUDA {runtime.version} cannot run on {gpu_text(gpu)}: its oldest target is {targets.oldest}",
                        (runtime_evidence(runtime), cite(targets.source)),
                        _older_cuda_fix(gpu.compute_capability or "", targets.oldest),
                        (runtime.path,),
                        gpus=(gpu.index,),
                    )
                )
        all_fail = in_use or len(failing) == len(runtimes)
        for finding in failing:
            yield finding if all_fail else dataclasses.replace(finding, severity=Severity.WARNING)
