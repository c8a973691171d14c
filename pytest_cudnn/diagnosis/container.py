"""Container causes, named where the evidence shows them: what the NVIDIA container toolkit was asked for
(NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES), what it mounted (libnvidia-ml, libcuda, /dev/nvidia*), and a
driver library present without its kernel module.

The toolkit mounts the driver's libraries by capability: without ``compute`` no libcuda, without ``utility`` no
NVML (an empty or unset variable means ``utility,compute``, the toolkit's default since v1.4.0); with
NVIDIA_VISIBLE_DEVICES empty or ``void`` it does nothing at all, with ``none`` no GPU. Unset, it does nothing in
an image that declares its CUDA requirement (NVIDIA_REQUIRE_CUDA), but a legacy image (CUDA_VERSION set, no
NVIDIA_REQUIRE_CUDA) gets all GPUs and, with NVIDIA_DRIVER_CAPABILITIES unset too, all capabilities
(compat/sources.py "container-toolkit-variables"). The rules judge only a variable that is set, so an unset one
is never called the cause.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..environment import Environment, State
from .model import Finding, Severity, cite, make_finding

__all__ = ["container_rules", "kernel_evidence", "requested_devices"]

_SOURCE = "container-toolkit-variables"
_GPUS = (
    "docker run --gpus all (or --runtime=nvidia with NVIDIA_VISIBLE_DEVICES=all, or the CDI device nvidia.com/gpu=all)"
)


def kernel_evidence(env: Environment) -> tuple[str, ...]:
    """What the host's files say about the kernel driver, for a finding where the driver or CUDA failed."""
    kernel = env.kernel
    if kernel is None:
        return ()
    if env.platform is not None and env.platform.wsl is not None:
        return ()  # no module and no /dev/nvidia* by design: platform.platform_evidence says what WSL has instead
    said = []
    if kernel.module_version:
        said.append(f"kernel module {kernel.module_version} (/proc/driver/nvidia/version)")
    elif kernel.module_reason:
        said.append(kernel.module_reason)
    if kernel.device_nodes == ():
        said.append("no /dev/nvidia* device nodes: no GPU device was given to this machine or container")
    elif kernel.device_nodes:
        said.append(f"device nodes: {', '.join('/dev/' + name for name in kernel.device_nodes[:8])}")
    return tuple(said)


def _capabilities(value: str) -> set[str]:
    """The capabilities as the toolkit reads them: each comma-separated entry trimmed, compared as written (so
    "COMPUTE" is not "compute")."""
    named = {part.strip() for part in value.split(",") if part.strip()}
    return named or {"utility", "compute"}  # empty: the toolkit's default since v1.4.0 (compat/sources.py)


def requested_devices(value: str) -> str:
    """What NVIDIA_VISIBLE_DEVICES asks the toolkit for, matched as the toolkit matches it: "void" (nothing at all:
    empty, or a "void" entry), "none" (the driver's libraries, no GPU), "all", or "devices" (a list of IDs). Each
    comma-separated entry is trimmed, and the special values are exact and case-sensitive, with void before none
    before all: "ALL" or "None" is a device ID, not the special value.

    >>> [requested_devices(v) for v in ("", " void ", "none,0", "0,all", "ALL", "None", "GPU-1f0c8a2e")]
    ['void', 'void', 'none', 'all', 'devices', 'devices', 'devices']
    """
    entries = {part.strip() for part in value.split(",") if part.strip()}
    return next(
        (special for special in ("void", "none", "all") if special in entries), "devices" if entries else "void"
    )


def container_rules(env: Environment) -> Iterator[Finding]:
    visible = env.variables.get("NVIDIA_VISIBLE_DEVICES")
    capabilities = env.variables.get("NVIDIA_DRIVER_CAPABILITIES")
    no_nvml = env.driver.state is State.ABSENT
    no_libcuda = env.cuda_driver.state is State.ABSENT
    requested = requested_devices(visible) if visible is not None else None
    hidden = requested in ("void", "none")
    # "none" still mounts the driver's libraries (NVML answers, and lists no GPU): judged before that early return.
    no_gpu = env.driver.state is State.FOUND and not env.driver.gpus
    if not (no_nvml or no_libcuda or (hidden and no_gpu)):
        return
    shown = [f"{name}={value!r}" for name, value in (("NVIDIA_VISIBLE_DEVICES", visible),) if value is not None]
    if hidden and visible is not None:
        yield make_finding(
            "container-gpus-hidden",
            Severity.ERROR,
            "environment",
            f"NVIDIA_VISIBLE_DEVICES={visible!r} asks the NVIDIA container toolkit for no GPU"
            + (" and no driver library" if requested == "void" else ""),
            (*shown, *kernel_evidence(env), cite(_SOURCE)),
            f"start the container with the GPUs it needs: {_GPUS}",
        )
        return
    if capabilities is not None:
        named = _capabilities(capabilities)
        lacking = [
            (capability, library)
            for capability, library, missing in (
                ("compute", "libcuda.so.1", no_libcuda),
                ("utility", "libnvidia-ml.so.1 (NVML)", no_nvml),
            )
            if missing and capability not in named and "all" not in named
        ]
        if lacking:
            yield make_finding(
                "container-capabilities-missing",
                Severity.ERROR,
                "environment",
                f"NVIDIA_DRIVER_CAPABILITIES={capabilities!r} leaves out "
                f"{' and '.join(repr(c) for c, _ in lacking)}: the NVIDIA container toolkit mounts no "
                f"{' and no '.join(library for _, library in lacking)}",
                (
                    f"NVIDIA_DRIVER_CAPABILITIES={capabilities!r}",
                    *shown,
                    *(
                        f"{library}: not found ({reason})"
                        for _, library in lacking
                        for reason in [
                            (env.cuda_driver.reason if library == "libcuda.so.1" else env.driver.reason) or "absent"
                        ]
                    ),
                    cite(_SOURCE),
                ),
                "start the container with NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all), e.g. docker run "
                "--gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility",
            )
            return
    if visible is not None and no_nvml and no_libcuda:
        yield make_finding(
            "container-toolkit-not-used",
            Severity.ERROR,
            "environment",
            f"NVIDIA_VISIBLE_DEVICES={visible!r} asks for GPUs, but the NVIDIA container toolkit mounted no driver: "
            "the container was started without it",
            (
                *shown,
                "no libnvidia-ml.so.1 and no libcuda.so.1 on the loader path",
                *kernel_evidence(env),
                cite(_SOURCE),
            ),
            f"start the container with the NVIDIA container toolkit: {_GPUS}",
        )
