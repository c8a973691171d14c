"""Rules about the driver and the GPUs NVML reports."""

from __future__ import annotations

from collections.abc import Iterator

from .. import phrases
from ..environment import (
    Environment,
    State,
)
from .container import kernel_evidence
from .model import (
    Finding,
    Severity,
    make_finding,
)
from .platform import dropped, platform_evidence
from .stack import (
    gpu_text,
    runtime_evidence,
)

# Driver and GPUs -----------------------------------------------------------------------------------


def driver_rules(env: Environment) -> Iterator[Finding]:
    driver = env.driver
    said = f"NVML said: {driver.reason}" if driver.reason else ""
    where = f"NVML library: {driver.path}" if driver.path else ""
    if driver.state is State.FOUND:
        if not driver.gpus and not dropped(env):
            yield make_finding(
                "no-gpu",
                Severity.ERROR,
                "driver",
                "the NVIDIA driver is running but reports no GPU",
                (f"driver {driver.version} via {driver.path}", *platform_evidence(env)),
                "check that the GPU is attached to this machine or container (nvidia-smi -L; docker run --gpus all)",
            )
        return
    if env.platform is not None and env.platform.tegra_release:
        # NVML never describes a Tegra GPU (it fails or is absent there): libcuda is the driver (platform.py).
        if env.cuda_driver.state is not State.FOUND:
            yield make_finding(
                "no-driver",
                Severity.ERROR,
                "driver",
                "no NVIDIA driver: libcuda.so.1 is not on the loader path of this Jetson/Tegra host",
                (f"libcuda: {env.cuda_driver.reason}", *platform_evidence(env)),
                "install the L4T CUDA driver (JetPack's nvidia-l4t-cuda package); its libcuda lives in "
                "/usr/lib/aarch64-linux-gnu/nvidia",
            )
        return
    if driver.nvml_error == 18:
        yield make_finding(
            "driver-module-mismatch",
            Severity.ERROR,
            "driver",
            "the NVIDIA kernel module and the user-space driver differ (driver upgraded without a reboot)",
            (said, where),
            "reboot, or unload and reload the nvidia kernel modules",
        )
    elif driver.nvml_error == 9:
        # NVML's library is here but no kernel module answers it: on a host, a module that failed to load; in a
        # container, a driver library mounted (or copied into the image) on a machine that runs no NVIDIA module.
        kernel = kernel_evidence(env)
        container = "NVIDIA_VISIBLE_DEVICES" in env.variables
        yield make_finding(
            "driver-not-loaded",
            Severity.ERROR,
            "driver",
            "the NVIDIA driver's library is here but no NVIDIA kernel module is loaded"
            + (" on the machine running this container" if container else ""),
            (said, where, *kernel, *platform_evidence(env)),
            "load the kernel module on the host (modprobe nvidia, or install the driver there), then restart the "
            "container with --gpus all; a driver library baked into the image does not bring a kernel module"
            if container
            else "load the kernel module (modprobe nvidia) or reboot; dmesg says why it failed",
        )
    elif driver.state is State.ABSENT:
        runtimes = [r for r in env.cuda_runtimes if r.driver_version_raw == 0 and r.device_count_status == 35]
        yield make_finding(
            "no-driver",
            Severity.ERROR,
            "driver",
            f"no NVIDIA driver: {phrases.nvml_library(env.host.system)} is not on the loader path",
            (
                said,
                f"libcuda: {env.cuda_driver.reason}" if env.cuda_driver.state is not State.FOUND else "",
                f"{runtime_evidence(runtimes[0])} reports driver version 0 and status 35: no driver at all, "
                "not an old one"
                if runtimes
                else "",
                *kernel_evidence(env),
                *platform_evidence(env),
            ),
            "install the NVIDIA driver; in a container, start it with the NVIDIA container toolkit (--gpus all)",
        )
    else:
        yield make_finding(
            "driver-error",
            Severity.ERROR,
            "driver",
            "NVML could not report on the driver",
            (said, where),
            "run nvidia-smi to see the same failure; check dmesg",
        )


def gpu_rules(env: Environment) -> Iterator[Finding]:
    for gpu in env.driver.gpus:
        if gpu.error:
            yield make_finding(
                "gpu-probe-partial",
                Severity.WARNING,
                "gpu",
                f"GPU {gpu.index}: some facts could not be read",
                (f"NVML: {gpu.error}",),
                f"run nvidia-smi -q -i {gpu.index}; 'GPU is lost' means the device fell off the bus (reset or reboot)",
                gpus=(gpu.index,),
            )
        if gpu.memory_total and gpu.memory_free is not None and gpu.memory_free < gpu.memory_total * 0.1:
            yield make_finding(
                "gpu-memory-low",
                Severity.WARNING,
                "gpu",
                f"GPU {gpu.index} has {gpu.memory_free / 2**30:.1f} GiB free of {gpu.memory_total / 2**30:.1f} GiB",
                (gpu_text(gpu),),
                "another process holds the memory (nvidia-smi lists it); TensorFlow grabs all memory by default: "
                "tf.config.experimental.set_memory_growth or TF_FORCE_GPU_ALLOW_GROWTH=true",
                gpus=(gpu.index,),
            )
