"""What each finding code means, read by ``pytest-cudnn explain CODE`` and the documentation site's page per code.

Pure data keyed by :data:`~pytest_cudnn.diagnosis.model.CODES`: for every code, what the finding means, how to
confirm it by hand (commands a user can paste, on the host itself), the fix, and the public sources the facts behind
it come from. ``tests/test_explanations.py`` holds every code to an entry.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Explanation:
    meaning: str  # a paragraph: what was found, and what it does to a test
    confirm: tuple[str, ...]  # steps or shell commands that show the same by hand
    fix: str  # what to do, in general (the finding's own ``fix`` says it for the host at hand)
    sources: tuple[str, ...]  # public sources: "what it says: URL"


# Sources several entries cite.
_NVML_H = (
    "nvml.h (NVML_API_VERSION 12): the enums and calls named here, as NVIDIA ships the header with CUDA "
    "(nvidia-ml-py's pynvml.py carries the same values): https://docs.nvidia.com/deploy/nvml-api/index.html"
)
_NVIDIA_SMI = (
    "nvidia-smi(1): '-c, --compute-mode', '-pm, --persistence-mode', '-r, --gpu-reset', '-q -d ECC, "
    "ROW_REMAPPER, PAGE_RETIREMENT, PERFORMANCE, PCIE': https://docs.nvidia.com/deploy/nvidia-smi/index.html"
)
_DCGM_DIAG = (
    "NVIDIA DCGM diagnostics, 'dcgmi diag -r 1' deployment checks (persistence mode, page retirement, "
    "inforom, environment): https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html"
)


# The driver, the GPUs, containers, MIG and the variables that pick devices.
_HOST: dict[str, Explanation] = {
    "no-driver": Explanation(
        meaning=(
            "NVML's library (libnvidia-ml.so.1 on Linux, nvml.dll on Windows), which comes with the NVIDIA driver, "
            "could not be loaded from the loader path: no NVIDIA driver is installed here, or its user-space "
            "libraries are out of reach. Nothing that needs a GPU can run. A CUDA runtime on such a host reports "
            "driver version 0 and its cudaGetDeviceCount returns 35 (cudaErrorInsufficientDriver): the text of 35 "
            "speaks of a driver too old, but with version 0 it means no driver at all. The evidence says what else "
            "was looked at: libcuda.so.1, the kernel module (/proc/driver/nvidia/version) and the /dev/nvidia* "
            "device nodes. Tests that need a GPU skip with this finding as their reason (with --require-gpu they "
            "fail). In a container the driver is the host's: the NVIDIA container toolkit mounts its libraries, so "
            "a container started without the toolkit has none (a container finding then names that cause)."
        ),
        confirm=(
            "$ nvidia-smi  # fails, or is not installed, where there is no driver",
            "$ ldconfig -p | grep -E 'libnvidia-ml.so|libcuda.so'  # the driver's libraries the loader knows; none "
            "listed: none installed",
            "$ python3 -c \"import ctypes; ctypes.CDLL('libnvidia-ml.so.1')\"  # OSError: the loader cannot find "
            "NVML, as pytest-cudnn found",
            "$ cat /proc/driver/nvidia/version  # the kernel module's version; no such file: no NVIDIA module loaded",
            "$ ls -l /dev/nvidia*  # the device nodes; none: no GPU was given to this machine or container",
            "$ pytest-cudnn doctor  # the finding with the evidence it rests on",
        ),
        fix=(
            "Install the NVIDIA driver for the GPU (the distribution's driver package or NVIDIA's installer), "
            "reboot, and check that nvidia-smi lists the GPU. In a container, install no driver inside it: install "
            "the driver and the NVIDIA container toolkit on the host and start the container with the GPUs "
            "(docker run --gpus all ...). On a machine without an NVIDIA GPU there is nothing to install: run the "
            "GPU tests on a machine that has one."
        ),
        sources=(
            "NVIDIA CUDA Compatibility guide, 'Why CUDA Compatibility': 'In order to run a CUDA application, the "
            "system should have a CUDA enabled GPU and an NVIDIA driver that is compatible with the CUDA Toolkit "
            "that was used to build the application itself': "
            "https://docs.nvidia.com/deploy/cuda-compatibility/why-cuda-compatibility.html",
            "nvml.h (NVML 13.3.29, as NVIDIA/go-nvml vendors it): 'NVML_ERROR_LIBRARY_NOT_FOUND = 12, NVML Shared "
            "Library couldn't be found or loaded': "
            "https://github.com/NVIDIA/go-nvml/blob/2f9e261fe40a7a1c54783d66805e8920564763b4/pkg/nvml/nvml.h",
            "CUDA Runtime API, enum cudaError: cudaErrorInsufficientDriver = 35, 'the installed NVIDIA CUDA driver "
            "is older than the CUDA runtime library': "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
            "PyTorch c10/cuda/CUDAFunctions.cpp reads the same answer: cudaErrorInsufficientDriver with "
            "cudaDriverGetVersion <= 0 is 'Found no NVIDIA driver on your system': "
            "https://github.com/pytorch/pytorch/blob/01a6a16d9bb6424c034f5623c46bfd08ec21613b/c10/cuda/"
            "CUDAFunctions.cpp",
            "NVIDIA Container Toolkit, 'Running a Sample Workload': with the toolkit installed and configured and a "
            "driver on the host, 'sudo docker run --rm --runtime=nvidia --gpus all ubuntu nvidia-smi' shows the "
            "GPUs: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/sample-workload.html",
        ),
    ),
    "driver-module-mismatch": Explanation(
        meaning=(
            "NVML answered NVML_ERROR_LIB_RM_VERSION_MISMATCH (18): the NVIDIA kernel module that is loaded and "
            "the user-space driver libraries on disk (libnvidia-ml, libcuda) are of different driver versions. "
            "This is what a driver upgrade leaves until the next reboot: the package manager replaced the "
            "libraries, the old module still runs. nvidia-smi fails the same way ('Failed to initialize NVML: "
            "Driver/library version mismatch'), and CUDA programs cannot use the GPU either until the two match "
            "again. (A newer libcuda from a cuda-compat folder over an older module is forward compatibility, "
            "judged by the forward-compat-* findings instead.)"
        ),
        confirm=(
            "$ nvidia-smi  # 'Failed to initialize NVML: Driver/library version mismatch'",
            "$ cat /proc/driver/nvidia/version  # the version of the kernel module that runs (NVRM version)",
            "$ readlink -f $(ldconfig -p | awk '/libnvidia-ml.so.1 /{print $NF; exit}')  # the user-space "
            "library: its file name ends in its driver version",
            "$ sudo dmesg | grep NVRM  # the kernel module's own complaint about a client of another version",
        ),
        fix=(
            "Reboot: the module that matches the installed libraries loads. Without a reboot, stop every process "
            "that uses the GPU, unload the nvidia modules (nvidia_uvm, nvidia_drm, nvidia_modeset, then nvidia) "
            "and load them again (modprobe nvidia). Where unattended upgrades replace the driver, hold its packages "
            "and upgrade them with a planned reboot."
        ),
        sources=(
            "nvml.h (NVML 13.3.29, as NVIDIA/go-nvml vendors it): 'NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18, RM "
            "detects a driver/library version mismatch': "
            "https://github.com/NVIDIA/go-nvml/blob/2f9e261fe40a7a1c54783d66805e8920564763b4/pkg/nvml/nvml.h",
            "A report of the case: nvidia-smi says 'Failed to initialize NVML: Driver/library version mismatch', "
            "'NVML library version: 580.178', while /proc/driver/nvidia/version shows 'Kernel Module 580.173.02': "
            "https://github.com/zzzhouuu/truenas-nvidia-drivers/issues/19",
            "nvidia-smi(1): nvidia-smi is built on NVML, and fails where NVML fails: "
            "https://docs.nvidia.com/deploy/nvidia-smi/index.html",
        ),
    ),
    "driver-not-loaded": Explanation(
        meaning=(
            "NVML's library is here, but nvmlInit answered NVML_ERROR_DRIVER_NOT_LOADED (9): no NVIDIA kernel "
            "module answers it. On a host, the driver's files are installed but its kernel module is not loaded: "
            "it failed to load (the kernel log says why) or was never built for the kernel that runs. In a "
            "container (NVIDIA_VISIBLE_DEVICES is set), a driver library was mounted or copied into the image on a "
            "machine that runs no NVIDIA module: a driver library in an image does not bring a kernel module. "
            "Nothing can use the GPU until the module runs."
        ),
        confirm=(
            "$ lsmod | grep nvidia  # nothing listed: no NVIDIA kernel module is loaded",
            "$ cat /proc/driver/nvidia/version  # no such file without the module",
            "$ python3 -c \"import ctypes; print(ctypes.CDLL('libnvidia-ml.so.1').nvmlInit_v2())\"  # 9: "
            "NVML_ERROR_DRIVER_NOT_LOADED, as pytest-cudnn read it",
            "$ sudo modprobe nvidia  # loads the module, or says why it cannot",
            "$ sudo dmesg | grep -i -E 'nvidia|nvrm'  # the kernel's reason",
        ),
        fix=(
            "Load the module (sudo modprobe nvidia) or reboot; if it cannot load, reinstall the driver for the "
            "kernel that runs and read the kernel log for the reason. In a container, the kernel module belongs to "
            "the host: install the driver there, remove any driver libraries baked into the image, and start the "
            "container with the NVIDIA container toolkit (docker run --gpus all ...)."
        ),
        sources=(
            "nvml.h (NVML 13.3.29, as NVIDIA/go-nvml vendors it): 'NVML_ERROR_DRIVER_NOT_LOADED = 9, NVIDIA driver "
            "is not loaded'; nvmlInit_v2 returns it 'if NVIDIA driver is not running': "
            "https://github.com/NVIDIA/go-nvml/blob/2f9e261fe40a7a1c54783d66805e8920564763b4/pkg/nvml/nvml.h",
            "NVIDIA Container Toolkit, 'Installing the NVIDIA Container Toolkit', prerequisites: 'Install the NVIDIA "
            "GPU driver for your Linux distribution' (on the host): "
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
        ),
    ),
    "driver-error": Explanation(
        meaning=(
            "NVML's library loaded, but NVML could not report on the driver for a reason other than a missing "
            "library, a kernel module that is not loaded or a version mismatch (those have codes of their own). "
            "The finding quotes NVML's answer. Among NVML's codes: NVML_ERROR_NO_PERMISSION (4), this user may not "
            "talk to the driver; NVML_ERROR_OPERATING_SYSTEM (17), the GPU's control device is blocked by the "
            "operating system or cgroups; NVML_ERROR_UNKNOWN (999), an internal driver error. Until NVML answers, "
            "nothing is known of the GPUs, and tests that need one skip."
        ),
        confirm=(
            "$ nvidia-smi  # the same failure, in NVML's words",
            "$ ls -l /dev/nvidia*  # whether this user may open the device nodes",
            "$ python3 -c \"import ctypes; print(ctypes.CDLL('libnvidia-ml.so.1').nvmlInit_v2())\"  # NVML's return "
            "code (nvml.h lists them)",
            "$ sudo dmesg | grep -i nvrm  # what the kernel driver reported",
            "$ pytest-cudnn doctor  # 'NVML said: ...' in the finding's evidence",
        ),
        fix=(
            "Act on NVML's answer: without permission, run as a user allowed to open /dev/nvidia* (or give the "
            "container those devices through the NVIDIA container toolkit); an operating system or cgroup block "
            "means the container or service was not granted the GPU; an unknown error, check the kernel log and "
            "reinstall or reload the driver."
        ),
        sources=(
            "nvml.h (NVML 13.3.29, as NVIDIA/go-nvml vendors it), nvmlReturn_t: 'NVML_ERROR_NO_PERMISSION = 4, The "
            "current user does not have permission for operation', 'NVML_ERROR_OPERATING_SYSTEM = 17, The GPU "
            "control device has been blocked by the operating system/cgroups', 'NVML_ERROR_UNKNOWN = 999': "
            "https://github.com/NVIDIA/go-nvml/blob/2f9e261fe40a7a1c54783d66805e8920564763b4/pkg/nvml/nvml.h",
            "nvidia-smi(1): 'much of the functionality of NVSMI is provided by the underlying NVML C-based "
            "library': https://docs.nvidia.com/deploy/nvidia-smi/index.html",
        ),
    ),
    "driver-dropped-gpu": Explanation(
        meaning=(
            "An NVIDIA GPU is on the PCI bus (/sys/bus/pci/devices lists NVIDIA's vendor id 0x10de with the class of "
            "a display or 3D controller) but the installed driver, of branch R590 or newer, does not list it. From "
            "R590 NVIDIA's driver ignores Maxwell, Pascal and Volta GPUs (GTX 9xx and 10xx, P100, P40, V100): their "
            "last driver branch is R580. Where it dropped every GPU the kernel module does not load at all ('NVRM: "
            "No NVIDIA GPU found'); where others remain, NVML lists only those. Tests that need the dropped GPU "
            "cannot have it. The doctor names each GPU the driver does not list, by the driver's /proc file or the "
            "host's pci.ids where they name it."
        ),
        confirm=(
            "$ sudo dmesg | grep NVRM  # 'supported through the NVIDIA 580.xx Legacy drivers ... will ignore this GPU'",
            "$ lspci -nn -d 10de:  # the NVIDIA devices on the PCI bus, with their names",
            "$ cat /proc/driver/nvidia/version  # the driver's version; 590 or newer drops these GPUs",
            "$ nvidia-smi -L  # the GPUs the driver lists",
        ),
        fix=(
            "Install the R580 driver branch (NVIDIA's 580.xx legacy driver; most distributions package it as "
            "nvidia-driver-580 or similar) and reboot, or run the GPU tests on a Turing or newer GPU. CUDA 13 builds "
            "of the frameworks do not run on these GPUs either: keep their CUDA 12 builds."
        ),
        sources=(
            "NVIDIA, CUDA Toolkit, Driver, and Architecture Matrix: 'Volta | 7.0 | CUDA 9.0 | CUDA 12.x | R580' "
            "(Pascal and Maxwell the same, Last Driver R580): "
            "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html",
            "The kernel log of a 595 driver on a GTX 1050: 'supported through the NVIDIA 580.xx Legacy drivers ... "
            "The 595.71.05 NVIDIA driver will ignore this GPU': https://github.com/NixOS/nixos-hardware/issues/1880",
        ),
    ),
    "wsl-no-gpu": Explanation(
        meaning=(
            "This Linux runs in WSL, and WSL gives it no GPU. In WSL 2 the GPU comes from the Windows NVIDIA driver "
            "through the paravirtualisation device /dev/dxg, and the driver's user-mode libraries (libcuda.so.1, "
            "libnvidia-ml.so.1) are mapped into /usr/lib/wsl/lib; there is no NVIDIA kernel module and no "
            "/dev/nvidia* node by design. WSL 1 has no GPU at all. Without /dev/dxg, or without libcuda.so.1 in "
            "/usr/lib/wsl/lib (no Windows NVIDIA driver, or one that predates WSL support), CUDA finds no device."
        ),
        confirm=(
            "$ cat /proc/sys/kernel/osrelease  # '...-microsoft-standard-WSL2' on WSL 2; '...-Microsoft' on WSL 1",
            "$ ls -l /dev/dxg  # the GPU paravirtualisation device of WSL 2",
            "$ ls /usr/lib/wsl/lib  # the Windows driver's libraries: libcuda.so.1, libnvidia-ml.so.1, ...",
            "> wsl -l -v  # in Windows: each distribution's WSL version",
        ),
        fix=(
            "On WSL 1, convert the distribution (wsl --set-version <distribution> 2). On WSL 2, install or update "
            "the NVIDIA driver on Windows (the only driver WSL uses), run wsl --update and wsl --shutdown, and start "
            "the distribution again."
        ),
        sources=(
            "NVIDIA, CUDA on WSL User Guide: 'The CUDA driver installed on Windows host will be stubbed inside the "
            "WSL 2 as libcuda.so, therefore users must not install any NVIDIA GPU Linux driver within WSL 2' (as "
            "copied in public repositories): https://docs.nvidia.com/cuda/wsl-user-guide/index.html",
            "Microsoft, 'DirectX heart Linux': 'Dxgkrnl is a brand-new kernel driver for Linux that exposes the "
            "/dev/dxg device to user mode Linux': https://devblogs.microsoft.com/directx/directx-heart-linux/",
        ),
    ),
    "wsl-libraries-not-on-loader-path": Explanation(
        meaning=(
            "On WSL 2 the Windows NVIDIA driver's libcuda.so.1 and libnvidia-ml.so.1 are in /usr/lib/wsl/lib, and "
            "the loader finds them only through the ldconfig entry WSL writes (/etc/ld.so.conf.d/ld.wsl.conf) or "
            "LD_LIBRARY_PATH. Here they are in that folder but the loader does not find them, so CUDA and NVML "
            "report no driver. Installing a Linux driver is the wrong fix: inside WSL 2 it cannot work."
        ),
        confirm=(
            "$ ls /usr/lib/wsl/lib  # libcuda.so.1 and libnvidia-ml.so.1 are here",
            "$ ldconfig -p | grep libcuda  # nothing: the folder is not in the loader's cache",
            "$ cat /etc/ld.so.conf.d/ld.wsl.conf  # WSL's own entry: /usr/lib/wsl/lib",
        ),
        fix=(
            "echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig, or for one shell "
            "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH. ldconfig's warning that libcuda.so.1 'is not "
            "a symbolic link' there is harmless."
        ),
        sources=(
            "microsoft/WSL#8587, 'libcuda.so is not in found but libcuda.so.1 is.' (ldconfig -p lists 'libcuda.so.1 "
            "=> /usr/lib/wsl/lib/libcuda.so.1'; loading works with LD_LIBRARY_PATH=/usr/lib/wsl/lib/): "
            "https://github.com/microsoft/WSL/issues/8587",
            "microsoft/WSL#11229, 'ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link': "
            "https://github.com/microsoft/WSL/issues/11229",
        ),
    ),
    "wsl-linux-driver-installed": Explanation(
        meaning=(
            "A Linux NVIDIA driver's libraries were installed inside WSL 2 (a distribution's nvidia-driver or "
            "libnvidia-compute package, or a CUDA installer that brought a driver), and the loader finds its "
            "libcuda.so.1 or libnvidia-ml.so.1 before the Windows driver's copies in /usr/lib/wsl/lib. A Linux "
            "driver has no kernel module and no /dev/nvidia* here, so CUDA fails; NVIDIA says never to install one "
            "in WSL 2."
        ),
        confirm=(
            "$ ldconfig -p | grep -E 'libcuda.so.1|libnvidia-ml.so.1'  # copies outside /usr/lib/wsl/lib",
            "$ dpkg -S libcuda.so.1  # the package that brought the Linux copy (Debian, Ubuntu)",
        ),
        fix=(
            "Remove the Linux driver's packages from the distribution (sudo apt-get remove --purge '^libnvidia-.*' "
            "'^nvidia-driver-.*' on Ubuntu; keep the CUDA toolkit, whose WSL-Ubuntu installer brings no driver), "
            "then sudo ldconfig."
        ),
        sources=(
            "NVIDIA, CUDA on WSL User Guide: 'The CUDA driver installed on Windows host will be stubbed inside the "
            "WSL 2 as libcuda.so, therefore users must not install any NVIDIA GPU Linux driver within WSL 2' (as "
            "copied in public repositories): https://docs.nvidia.com/cuda/wsl-user-guide/index.html",
        ),
    ),
    "tegra-host": Explanation(
        meaning=(
            "A Jetson (Tegra) host: /etc/nv_tegra_release names its L4T release. Its GPU is integrated and its "
            "driver comes with L4T, and NVML does not describe it (it fails or is absent there), so the GPU list, "
            "memory and device checks that rest on NVML say nothing. CUDA's own libcuda.so.1 is the driver here: "
            "the CUDA, cuDNN and framework checks still apply."
        ),
        confirm=(
            "$ head -1 /etc/nv_tegra_release  # '# R36 (release), REVISION: 4.0, ...'",
            "$ tegrastats  # the GPU's load and memory, where nvidia-smi cannot say",
        ),
        fix="Nothing to fix; read the GPU's state with tegrastats or jtop (jetson-stats).",
        sources=(
            "rbonghi/jetson_stats jtop/core/jetson_l4t.py reads /etc/nv_tegra_release ('# R36 (release), REVISION: "
            "4.0, ...') into '36.4.0': https://github.com/rbonghi/jetson_stats",
            "triton-inference-server/server#714: 'NVML is not supported on Jetson': "
            "https://github.com/triton-inference-server/server/issues/714",
        ),
    ),
    "gpu-ecc-uncorrectable": Explanation(
        meaning=(
            "NVML counts uncorrectable (double-bit) ECC errors in the GPU's memory since the driver loaded (the "
            "volatile counter) and over the device's life (aggregate). A volatile count above zero means data the "
            "GPU computed since then may be wrong, and the driver may have stopped processes on it (Xid 48); a test "
            "passing on it proves nothing and a test failing on it may be the GPU's fault. The doctor reads the "
            "counts with nvmlDeviceGetTotalEccErrors; a GPU without ECC has no such counters."
            " Beside GPUs without such a fault it is a warning: the run goes on, --gpu-health=fail stops it before "
            "its tests, and requires_gpu(healthy=True) keeps a test off this GPU."
        ),
        confirm=(
            "$ nvidia-smi -q -d ECC -i 0  # 'Volatile' and 'Aggregate' uncorrectable counts",
            "$ dmesg | grep -i xid  # the driver's Xid messages (48: double bit ECC error)",
        ),
        fix=(
            "Take the GPU out of the runner's pool, reset it (nvidia-smi -r -i N with nothing running on it) or "
            "reboot, and send it for repair if the errors come back."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
            _DCGM_DIAG,
        ),
    ),
    "gpu-row-remap-failure": Explanation(
        meaning=(
            "On Ampere and newer GPUs the driver repairs failing memory by remapping its rows. NVML's "
            "failureOccurred says a remapping failed: the memory has an error the GPU can no longer repair, and "
            "NVIDIA's guidance is to return it."
            " Beside GPUs without such a fault it is a warning: the run goes on, --gpu-health=fail stops it before "
            "its tests, and requires_gpu(healthy=True) keeps a test off this GPU."
        ),
        confirm=("$ nvidia-smi -q -d ROW_REMAPPER -i 0  # 'Remapping Failure Occurred: Yes'",),
        fix=("Take the GPU out of service and return it to the vendor (RMA)."),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
        ),
    ),
    "gpu-memory-repair-pending": Explanation(
        meaning=(
            "The GPU found memory it must repair: rows to remap (Ampere and newer, applied at the next GPU reset) or "
            "pages to retire (before Ampere, applied at the next reboot). Until then the faulty memory stays in use; "
            "DCGM's deployment checks fail such a GPU."
            " Beside GPUs without such a fault it is a warning: the run goes on, --gpu-health=fail stops it before "
            "its tests, and requires_gpu(healthy=True) keeps a test off this GPU."
        ),
        confirm=("$ nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT -i 0  # 'Pending: Yes'",),
        fix=(
            "Reset the GPU (nvidia-smi -r -i N, nothing running on it) for rows, reboot for pages, then run the "
            "tests again."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
            _DCGM_DIAG,
        ),
    ),
    "gpu-compute-prohibited": Explanation(
        meaning=(
            "The GPU's compute mode is PROHIBITED: the driver lets no process create a CUDA context on it, so every "
            "test that uses it fails with 'all CUDA-capable devices are busy or unavailable' "
            "(cudaErrorDevicesUnavailable, 46)."
            " Beside GPUs without such a fault it is a warning: the run goes on, --gpu-health=fail stops it before "
            "its tests, and requires_gpu(healthy=True) keeps a test off this GPU."
        ),
        confirm=("$ nvidia-smi --query-gpu=index,compute_mode --format=csv  # 'Prohibited'",),
        fix=(
            "sudo nvidia-smi -c DEFAULT -i N (it lasts until the driver reloads; make it part of the runner's setup)."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
        ),
    ),
    "gpu-exclusive-process": Explanation(
        meaning=(
            "The GPU's compute mode is EXCLUSIVE_PROCESS: one process at a time may hold a CUDA context on it. A "
            "test run with pytest-xdist workers sharing the GPU, or a test that starts a second process, gets 'all "
            "CUDA-capable devices are busy or unavailable' in every process after the first."
        ),
        confirm=("$ nvidia-smi --query-gpu=index,compute_mode --format=csv  # 'Exclusive_Process'",),
        fix=(
            "sudo nvidia-smi -c DEFAULT -i N, or give each pytest-xdist worker a GPU of its own (pytest-cudnn "
            "assigns one GPU per worker)."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
        ),
    ),
    "gpu-throttled": Explanation(
        meaning=(
            "NVML says what holds the GPU's clocks below their target: power caps, thermal slowdowns, hardware "
            "slowdown or the power brake. On an idle GPU these say nothing (its clocks drop anyway), so the doctor "
            "judges them only while the GPU is busy, and also when the GPU is at its slowdown temperature. Timing "
            "tests and benchmarks on a throttled GPU are flaky."
        ),
        confirm=(
            "$ nvidia-smi -q -d PERFORMANCE -i 0  # 'Clocks Event Reasons': which are Active",
            "$ nvidia-smi -q -d TEMPERATURE -i 0  # 'GPU Current Temp' against 'GPU Slowdown Temp'",
        ),
        fix=(
            "Check the GPU's cooling (fans, airflow, a blocked heatsink) and power (cables, the power limit: "
            "nvidia-smi -q -d POWER); keep timing tests off the GPU until it runs at its clocks."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
        ),
    ),
    "gpu-pcie-degraded": Explanation(
        meaning=(
            "The GPU's PCIe link trained narrower than it can (x1 or x8 where it supports x16), or, while busy, at "
            "an older generation than its maximum. Transfers between host and GPU are that much slower, and tests "
            "that time them, or that time out, fail. An idle GPU lowers its link generation to save power, so the "
            "generation is judged only while it is busy."
        ),
        confirm=("$ nvidia-smi -q -d PCIE -i 0  # 'Link Width' and 'PCIe Generation': Max against Current",),
        fix=(
            "Reseat the GPU, or its riser cable; check in the board's manual that the slot is wired x16; update the "
            "BIOS."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
        ),
    ),
    "gpu-persistence-off": Explanation(
        meaning=(
            "With persistence mode off the driver tears the GPU's state down when the last process using it exits, "
            "and the next process waits for it to initialise again: seconds per process on a machine with many GPUs, "
            "for every pytest run and every xdist worker. DCGM's deployment checks flag it."
        ),
        confirm=("$ nvidia-smi --query-gpu=index,persistence_mode --format=csv  # 'Disabled'",),
        fix=(
            "Run the nvidia-persistenced daemon on the runner (or sudo nvidia-smi -pm 1, which lasts until the "
            "driver reloads)."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
            _DCGM_DIAG,
        ),
    ),
    "gpu-no-peer-access": Explanation(
        meaning=(
            "NVML's P2P status says these pairs of GPUs cannot read or write each other's memory directly: the "
            "chipset, the topology or a setting forbids it. Tests of peer-to-peer copies fail or silently go through "
            "the host, and NCCL between them falls back to slower paths."
        ),
        confirm=(
            "$ nvidia-smi topo -m  # how each pair is connected",
            "$ nvidia-smi topo -p2p rw  # the P2P read and write matrix",
        ),
        fix=(
            "Keep peer-to-peer tests off these pairs; on one host bridge the BIOS's ACS and IOMMU settings are the "
            "usual cause."
        ),
        sources=(
            _NVML_H,
            _NVIDIA_SMI,
        ),
    ),
    "no-gpu": Explanation(
        meaning=(
            "The NVIDIA driver runs (NVML initialised) but lists no GPU: no NVIDIA GPU is attached to this machine, "
            "virtual machine or container. A container started with NVIDIA_VISIBLE_DEVICES=none gets the driver's "
            "libraries and no GPU; a virtual machine needs the GPU passed through to it. CUDA sees no device, so "
            "every test that needs a GPU skips with this finding as its reason (with --require-gpu they fail)."
        ),
        confirm=(
            "$ nvidia-smi -L  # lists each GPU; nothing listed here",
            '$ echo "NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES"  # inside a container: which GPUs it asked for',
            "$ ls -l /dev/nvidia*  # the device nodes of the GPUs given (nvidia0, nvidia1, ...)",
            "$ lspci | grep -i nvidia  # on the host or VM: whether an NVIDIA device is on the PCI bus at all",
        ),
        fix=(
            "Give the machine a GPU: start the container with the GPUs it needs (docker run --gpus all, or "
            "NVIDIA_VISIBLE_DEVICES=all with the NVIDIA runtime), pass the GPU through to the virtual machine, or "
            "run the GPU tests on a runner that has one."
        ),
        sources=(
            "NVIDIA Container Toolkit, 'Specialized Configurations with Docker': NVIDIA_VISIBLE_DEVICES 'none: No "
            "GPU is accessible, but driver capabilities are enabled', and GPUs are given 'using either the --gpus "
            "option starting with Docker 19.03 or the environment variable NVIDIA_VISIBLE_DEVICES': "
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
            "nvidia-smi(1): '-L, --list-gpus: List each of the NVIDIA GPUs in the system, along with their UUIDs': "
            "https://docs.nvidia.com/deploy/nvidia-smi/index.html",
        ),
    ),
    "forward-compat-in-use": Explanation(
        meaning=(
            "The libcuda.so.1 that answers is newer than the kernel driver: it supports a newer CUDA than NVML "
            "reports for the kernel driver, or its file carries a newer driver branch (libcuda.so.580.65.06 over "
            "kernel module 535). That is CUDA forward compatibility: a cuda-compat-X-Y package (installed into "
            "/usr/local/cuda-X.Y/compat) brings the user-mode driver of a newer branch, which runs newer CUDA on an "
            "older kernel driver. Here a CUDA runtime's cudaGetDeviceCount succeeded through it, so it works; the "
            "driver floor of that CUDA is not the kernel driver's to meet. Information only: this is how the "
            "host is set up, and the forward-compatibility rules (data center GPUs, supported driver branches) "
            "hold as long as it stays so."
        ),
        confirm=(
            "$ cat /proc/driver/nvidia/version  # the kernel driver's version",
            "$ readlink -f $(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')  # the libcuda the loader gives "
            "by default: a compat folder, or the driver's own",
            '$ echo "$LD_LIBRARY_PATH"  # a /usr/local/cuda-X.Y/compat entry puts the compat libcuda first',
            "$ python3 -c \"import ctypes; cu = ctypes.CDLL('libcuda.so.1'); v = ctypes.c_int(); print('cuInit', "
            "cu.cuInit(0), 'CUDA', cu.cuDriverGetVersion(ctypes.byref(v)), v.value)\"  # cuInit 0 and the CUDA "
            "version the answering libcuda supports (13000: 13.0)",
        ),
        fix=(
            "Nothing to do. Keep the compat libcuda and the kernel driver as they are; a kernel driver upgraded "
            "within its branch may need the cuda-compat package updated too. Upgrading the host driver to the "
            "compat package's branch or newer makes the package unneeded."
        ),
        sources=(
            "NVIDIA CUDA Compatibility guide, 'Forward Compatibility': the cuda-compat-<major>-<minor> package is "
            "'generated from the NVIDIA driver that matches with the CUDA release for which the compatibility is "
            "requested'; it applies 'only for systems with: NVIDIA Data Center GPUs. Select NGC Server Ready SKUs "
            "of RTX cards. Jetson boards.': "
            "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
            "Its FAQ: 'Users can upgrade the kernel mode driver within the same branch. Sometimes this may require "
            "updating the cuda-compat-* package': "
            "https://docs.nvidia.com/deploy/cuda-compatibility/frequently-asked-questions.html",
        ),
    ),
    "forward-compat-unsupported-gpu": Explanation(
        meaning=(
            "A newer libcuda (CUDA forward compatibility, usually a cuda-compat folder) runs over an older kernel "
            "driver, and the GPU does not support that: CUDA's own answer is 804, cudaErrorCompatNotSupportedOnDevice "
            "(from cudaGetDeviceCount or cuInit), or, where no runtime answered, NVML names a consumer GPU "
            "(GeForce, TITAN). NVIDIA supports forward compatibility only on data center GPUs, select NGC Server "
            "Ready RTX SKUs and Jetson boards. While that libcuda answers, no CUDA program runs on this GPU, "
            "whatever its CUDA version."
        ),
        confirm=(
            "$ nvidia-smi -L  # the GPU's name: GeForce and TITAN cards are not data center GPUs",
            "$ python3 -c \"import ctypes; print(ctypes.CDLL('libcuda.so.1').cuInit(0))\"  # 804: "
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "$ readlink -f $(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')  # which libcuda the loader gives",
            '$ echo "$LD_LIBRARY_PATH"  # a cuda-X.Y/compat entry here puts the compat libcuda first',
            "$ cat /proc/driver/nvidia/version  # the kernel driver the compat libcuda runs over",
        ),
        fix=(
            "Take the compat libcuda off the loader path (remove the cuda-X.Y/compat folder from LD_LIBRARY_PATH or "
            "/etc/ld.so.conf.d, or uninstall the cuda-compat package) so that the kernel driver's own libcuda "
            "answers, and use a framework build for a CUDA that driver supports; or upgrade the host's driver to "
            "one that runs the newer CUDA by itself (the finding names the version)."
        ),
        sources=(
            "NVIDIA CUDA Compatibility guide, 'Forward Compatibility': 'Forward Compatibility is applicable only "
            "for systems with: NVIDIA Data Center GPUs. Select NGC Server Ready SKUs of RTX cards. Jetson boards.': "
            "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
            "CUDA Runtime API, enum cudaError: 'cudaErrorCompatNotSupportedOnDevice = 804: This error indicates "
            "that the system was upgraded to run with forward compatibility but the visible hardware detected by "
            "CUDA does not support this configuration': "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        ),
    ),
    "forward-compat-unsupported-branch": Explanation(
        meaning=(
            "A newer libcuda (CUDA forward compatibility) runs over a kernel driver whose branch had reached its end "
            "of life on the day the host was probed, and no CUDA runtime could use the GPU through it. NVIDIA's "
            "data center driver table gives each branch it lists an end of life (R535 June 2026, R570 February "
            "2026, R610 August 2026, R595 March 2027, R580 June 2028, R620 September 2029) and ends every older "
            "branch it does not list (R550, R470, ...). The day judged is the snapshot's own probe time, so a "
            "replayed snapshot is judged as of when it was taken; where that time cannot be read, the newest "
            "table as it stands decides (R580, R595 and R620). NVIDIA supports forward compatibility on its "
            "supported branches only: on an ended branch the compat package is not supported."
        ),
        confirm=(
            "$ cat /proc/driver/nvidia/version  # the kernel driver's version: its first number is the branch (R550)",
            "$ python3 -c \"import ctypes; cu = ctypes.CDLL('libcuda.so.1'); v = ctypes.c_int(); print('cuInit', "
            "cu.cuInit(0), 'CUDA', cu.cuDriverGetVersion(ctypes.byref(v)), v.value)\"  # the compat libcuda's answer",
            "$ pytest-cudnn doctor  # the cudaGetDeviceCount status each runtime returned",
        ),
        fix=(
            "Move the host's kernel driver to a supported Long Term Support or Production Branch (the finding names "
            "those supported on the day the host was probed: R580, R595 or R620 in November 2026) and "
            "use the compat package there, or upgrade the driver to one that runs the needed CUDA by itself; or take "
            "the compat folder off the loader path and use a framework build for the CUDA the kernel driver supports."
        ),
        sources=(
            "NVIDIA Data Center GPU Driver documentation, 'Supported Drivers and CUDA Toolkit Versions', 620 "
            "edition, Table 2: 'R580 | R595 | R620', 'End of Life | June 2028 | March 2027 | September 2029', 'Only "
            "Long Term Support and Production branches are listed. New Feature Branches are short-lived and do not "
            "have an end-of-life date.': "
            "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html",
            "The same page, 615 edition, Table 2: 'R535 | R580 | R595 | R610', 'End of Life | June 2026 | June 2028 | "
            "March 2027 | August 2026' (R570 no longer listed): "
            "https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html",
            "The unversioned page (the R580-era edition): 'R535 | R570 | R580', 'End of Life | June 2026 | February "
            "2026 | August 2028', and 'All other previous driver branches not listed in the table above (such as "
            "R575, R565, R560, R550, R525, ...) are end of life': "
            "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html",
            "NVIDIA CUDA Compatibility guide, FAQ: upgrading the kernel mode driver under forward compatibility 'is "
            "supported only for drivers on LLB and LTS branches of driver for select GPUs': "
            "https://docs.nvidia.com/deploy/cuda-compatibility/frequently-asked-questions.html",
        ),
    ),
    "container-capabilities-missing": Explanation(
        meaning=(
            "This is a container whose NVIDIA_DRIVER_CAPABILITIES leaves out what CUDA needs, and the library that "
            "capability brings is missing: without 'compute' the NVIDIA container toolkit mounts no libcuda.so.1 "
            "(CUDA cannot run), without 'utility' no libnvidia-ml.so.1 (NVML and nvidia-smi). An empty or unset "
            "variable means the toolkit's default, 'utility,compute' (since toolkit 1.4.0; 'utility' alone before); "
            "'all' brings everything. The GPUs may be there: the driver libraries to use them "
            "were not mounted."
        ),
        confirm=(
            '$ echo "NVIDIA_DRIVER_CAPABILITIES=$NVIDIA_DRIVER_CAPABILITIES"  # compute, utility or all must be in it',
            "$ ldconfig -p | grep -E 'libcuda.so.1|libnvidia-ml.so.1'  # the libraries the toolkit mounted",
            "$ docker inspect --format '{{json .Config.Env}}' CONTAINER  # on the host: the variables the container "
            "was started with",
        ),
        fix=(
            "Start the container with NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all), for example docker run "
            "--gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ...; or remove the variable from the image "
            "or job definition that narrows it."
        ),
        sources=(
            "NVIDIA Container Toolkit changelog, v1.4.0: 'Add 'compute' capability to list of defaults' (an empty "
            "or unset NVIDIA_DRIVER_CAPABILITIES means utility,compute since): "
            "https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/CHANGELOG.md",
            "NVIDIA Container Toolkit, 'Specialized Configurations with Docker', 'Environment Variables (OCI "
            "Spec)': https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
        ),
    ),
    "container-gpus-hidden": Explanation(
        meaning=(
            "NVIDIA_VISIBLE_DEVICES asks the NVIDIA container toolkit for no GPU. With the value 'void' or empty the "
            "toolkit does nothing at all: no GPU and no driver library is mounted (as under plain runc). With "
            "'none' it mounts the driver's libraries but no GPU, so NVML answers and lists none. Either way CUDA "
            "sees no device and tests that need a GPU skip. The value usually comes from an image, a compose file "
            "or a CI job that set it to keep GPUs out."
        ),
        confirm=(
            '$ echo "NVIDIA_VISIBLE_DEVICES=[$NVIDIA_VISIBLE_DEVICES]"  # void, none or nothing between the brackets',
            "$ nvidia-smi -L  # with 'none': runs and lists no GPU; with 'void' or empty: not mounted at all",
            "$ docker inspect --format '{{json .Config.Env}}' CONTAINER  # on the host: where the value came from",
        ),
        fix=(
            "Start the container with the GPUs it needs: docker run --gpus all (or --runtime=nvidia with "
            "NVIDIA_VISIBLE_DEVICES=all, or the CDI device nvidia.com/gpu=all), and remove the hiding value from "
            "the image or job definition."
        ),
        sources=(
            "NVIDIA Container Toolkit, 'Specialized Configurations with Docker': NVIDIA_VISIBLE_DEVICES 'none: No "
            "GPU is accessible, but driver capabilities are enabled', 'void or empty or unset: "
            "nvidia-container-runtime has the same behavior as runc (that is, neither GPUs nor capabilities are "
            "exposed)': https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/"
            "docker-specialized.html",
            "NVIDIA/nvidia-container-toolkit internal/config/image/cuda_image.go: a legacy image ('CUDA_VERSION "
            "environment variable defined and no NVIDIA_REQUIRE_CUDA') with the variable unset gets all GPUs: "
            "'// Environment variable unset with legacy image: default to \"all\".': "
            "https://github.com/NVIDIA/nvidia-container-toolkit/blob/d34b3046758cb1a5db606b2a39519c731bbf9f56/"
            "internal/config/image/cuda_image.go",
            "NVIDIA Container Toolkit, 'Support for Container Device Interface': CDI device names such as "
            "nvidia.com/gpu=all: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/"
            "cdi-support.html",
        ),
    ),
    "container-toolkit-not-used": Explanation(
        meaning=(
            "NVIDIA_VISIBLE_DEVICES is set (CUDA base images set it to 'all'), so this container asks for GPUs, yet "
            "neither libnvidia-ml.so.1 nor libcuda.so.1 is here: the NVIDIA container toolkit, which mounts the "
            "host driver's libraries and the GPU devices, did not run. The container was started without it "
            "(docker run without --gpus, or a runtime not configured for NVIDIA). Nothing inside can use a GPU, "
            "and installing a driver inside the container does not help."
        ),
        confirm=(
            '$ echo "NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES"  # set: the image asks for GPUs',
            "$ ldconfig -p | grep -E 'libcuda.so.1|libnvidia-ml.so.1'  # nothing: no driver library was mounted",
            "$ ls -l /dev/nvidia*  # nothing: no GPU device was given",
            "$ docker inspect --format '{{.HostConfig.Runtime}} {{json .HostConfig.DeviceRequests}}' CONTAINER  # "
            "on the host: runc and null mean no GPU was requested",
            "$ docker info | grep -i runtimes  # on the host: whether the nvidia runtime is registered",
        ),
        fix=(
            "Install the NVIDIA container toolkit on the host, register it with the engine (sudo nvidia-ctk runtime "
            "configure --runtime=docker, then restart Docker) and start the container with the GPUs: docker run "
            "--gpus all ... (or --runtime=nvidia with NVIDIA_VISIBLE_DEVICES=all, or the CDI device "
            "nvidia.com/gpu=all)."
        ),
        sources=(
            "NVIDIA Container Toolkit, 'Specialized Configurations with Docker': NVIDIA_VISIBLE_DEVICES 'all' is "
            "'the default value in base CUDA container images'; 'void or empty or unset: nvidia-container-runtime "
            "has the same behavior as runc': "
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
            "NVIDIA Container Toolkit, 'Installing the NVIDIA Container Toolkit': install the driver on the host, "
            "the toolkit, then 'nvidia-ctk runtime configure --runtime=docker' and restart Docker: "
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
            "NVIDIA Container Toolkit, 'Running a Sample Workload': 'sudo docker run --rm --runtime=nvidia --gpus "
            "all ubuntu nvidia-smi': "
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/sample-workload.html",
        ),
    ),
    "gpu-probe-partial": Explanation(
        meaning=(
            "NVML listed the GPU but some of its questions about it failed; the finding quotes NVML's error. The "
            "facts not read (its name, compute capability, memory, MIG mode) are unknown, not absent, so what "
            "depends on them is judged with less. Most such errors are harmless (NVML_ERROR_NOT_SUPPORTED: the "
            "GPU does not offer that query), but 'GPU is lost' (NVML_ERROR_GPU_IS_LOST) means the GPU fell off the "
            "bus or became inaccessible, and NVML_ERROR_RESET_REQUIRED that it must be reset: then it runs nothing "
            "until it is."
        ),
        confirm=(
            "$ nvidia-smi -q -i 0  # every fact NVML has of GPU 0 (the finding names the index); N/A or errors where "
            "it failed",
            "$ sudo dmesg | grep -i -E 'nvrm|xid'  # the kernel driver's reports about the GPU",
        ),
        fix=(
            "Read NVML's error in the finding. 'GPU is lost' or 'requires a reset': stop the processes using it and "
            "reset the GPU (sudo nvidia-smi -r -i N), or reboot; if it recurs, the GPU or its slot needs service. "
            "'Not supported' on an older or consumer GPU: nothing to do."
        ),
        sources=(
            "nvml.h (NVML 13.3.29, as NVIDIA/go-nvml vendors it): 'NVML_ERROR_NOT_SUPPORTED = 3, The requested "
            "operation is not available on target device', 'NVML_ERROR_GPU_IS_LOST = 15, The GPU has fallen off "
            "the bus or has otherwise become inaccessible', 'NVML_ERROR_RESET_REQUIRED = 16, The GPU requires a "
            "reset before it can be used again': "
            "https://github.com/NVIDIA/go-nvml/blob/2f9e261fe40a7a1c54783d66805e8920564763b4/pkg/nvml/nvml.h",
            "nvidia-smi(1): -q, --query and -r, --gpu-reset: https://docs.nvidia.com/deploy/nvidia-smi/index.html",
        ),
    ),
    "gpu-memory-low": Explanation(
        meaning=(
            "NVML reports less than 10% of a GPU's memory free: other processes (another test run, a notebook, a "
            "service) hold the rest. A test that allocates more than is free fails with an out-of-memory error "
            "that says nothing about the code under test. TensorFlow in particular maps nearly all of a GPU's "
            "memory when it starts unless memory growth is on, so one TensorFlow process, or several pytest-xdist "
            "workers on one GPU, can fill it. pytest-cudnn judges free memory again, live, when a test that asks "
            "for memory is set up."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=index,memory.used,memory.free,memory.total --format=csv  # each GPU's memory",
            "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv  # which processes hold it",
        ),
        fix=(
            "Stop or wait for the processes that hold the memory (nvidia-smi lists them). For TensorFlow, turn on "
            "memory growth: tf.config.experimental.set_memory_growth(gpu, True) before first use, or "
            "TF_FORCE_GPU_ALLOW_GROWTH=true in the environment. Under pytest-xdist, give each worker its own GPU "
            "(pytest -n auto --gpu-workers)."
        ),
        sources=(
            "nvml.h (NVML 13.3.29, as NVIDIA/go-nvml vendors it), nvmlMemory_t: 'free: Unallocated device memory "
            "(in bytes)': "
            "https://github.com/NVIDIA/go-nvml/blob/2f9e261fe40a7a1c54783d66805e8920564763b4/pkg/nvml/nvml.h",
            "TensorFlow, tf.config.experimental.set_memory_growth: 'If memory growth is enabled for a "
            "PhysicalDevice, the runtime initialization will not allocate all memory on the device': "
            "https://www.tensorflow.org/api_docs/python/tf/config/experimental/set_memory_growth",
            "TensorFlow, gpu_bfc_allocator.cc, GetAllowGrowthValue: the environment variable "
            "TF_FORCE_GPU_ALLOW_GROWTH ('true' or 'false') overrides the allow_growth option: "
            "https://github.com/tensorflow/tensorflow/blob/e9ab4106db56d4767dff5e25600a1bd5ff1520bf/tensorflow/core/"
            "common_runtime/gpu/gpu_bfc_allocator.cc",
        ),
    ),
    "driver-too-old-for-cuda": Explanation(
        meaning=(
            "A CUDA runtime here (the finding names its path) needs a newer NVIDIA driver than the one installed. "
            "The floor comes from NVIDIA's release notes: each toolkit's minimum driver, and, from CUDA 11, the "
            "minor-version rule that a driver of the major's family runs every minor (CUDA 12.x: 525 or newer, "
            "CUDA 13.x: 580 or newer; 12.0 itself names 525.60.13 on Linux). Without NVML the runtime's own "
            "cudaDriverGetVersion "
            "says which CUDA the driver supports. Such a runtime cannot start: cudaGetDeviceCount returns 35 "
            "(cudaErrorInsufficientDriver). A newer driver is never too new. (A copy that PyTorch, JAX, CuPy or "
            "ONNX Runtime loads is reported as framework-driver-too-old, naming the framework; a "
            "forward-compatibility libcuda that "
            "covers this CUDA is judged by the forward-compat-* findings instead.)"
        ),
        confirm=(
            "$ nvidia-smi  # 'Driver Version' and 'CUDA Version', the newest CUDA the driver supports (not a "
            "toolkit installed)",
            "$ python3 -c \"import ctypes; rt = ctypes.CDLL('libcudart.so.12'); r = ctypes.c_int(); d = "
            "ctypes.c_int(); n = ctypes.c_int(); rt.cudaRuntimeGetVersion(ctypes.byref(r)); "
            "rt.cudaDriverGetVersion(ctypes.byref(d)); print('runtime', r.value, 'driver', d.value, "
            "'cudaGetDeviceCount', rt.cudaGetDeviceCount(ctypes.byref(n)))\"  # name the copy the finding names "
            "(its path); 35: the driver is too old for it",
        ),
        fix=(
            "Install a driver at or above the floor the finding names. Where the driver cannot change, use a "
            "build of the framework for an older CUDA that this driver supports (nvidia-smi's 'CUDA Version' is "
            "the newest), or, on data center GPUs, CUDA forward compatibility (a cuda-compat package)."
        ),
        sources=(
            "NVIDIA CUDA Toolkit Release Notes, Table 3 'CUDA Toolkit and Corresponding Driver Versions' (for "
            "example 'CUDA 12.0 GA >=525.60.13', 'CUDA 13.0 GA >=580.65.06') and Table 2, the minimum drivers for "
            "minor version compatibility: "
            "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html",
            "NVIDIA CUDA Compatibility guide: 'Minor Version Compatibility (CUDA 11+), where applications built "
            "within the same major CUDA family can run on a sufficiently new driver, with some feature "
            "limitations': https://docs.nvidia.com/deploy/cuda-compatibility",
            "CUDA Runtime API, enum cudaError: 'cudaErrorInsufficientDriver = 35: This indicates that the installed "
            "NVIDIA CUDA driver is older than the CUDA runtime library': "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        ),
    ),
    "gpu-unsupported-by-cuda": Explanation(
        meaning=(
            "The GPU's compute capability is below the oldest one the CUDA runtime's toolkit can target: CUDA 13.0 "
            "dropped Maxwell, Pascal and Volta (compute capability below 7.5), CUDA 12.0 the last Kepler targets "
            "(3.5 and 3.7). Libraries built with that toolkit carry no code for this GPU, so their kernels cannot "
            "launch on it (209, cudaErrorNoKernelImageForDevice). The runtime may still load and count the GPU: the "
            "failure comes at the first kernel."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=index,name,compute_cap --format=csv  # each GPU's compute capability",
            "$ pytest-cudnn doctor  # the CUDA runtime's version and the oldest compute capability it targets",
        ),
        fix=(
            "Use a CUDA runtime that still targets the GPU (the finding names the last such CUDA), which usually "
            "means the framework build for that CUDA major; or run on a GPU of the compute capability the "
            "runtime targets or newer."
        ),
        sources=(
            "CUDA 13.0 release notes, 'Deprecated Architectures': 'Offline compilation and library support for these "
            "architectures [Maxwell, Pascal, and Volta] have been removed in CUDA Toolkit 13.0 major version "
            "release': https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html",
            "LLVM's NVPTX target table, the first and last CUDA release of each sm_XX: "
            "https://github.com/llvm/llvm-project/blob/337115da00c4ac712704d49ff734e3968ab80c2d/llvm/include/llvm/"
            "TargetParser/NVPTXTargetParser.def",
            "NVIDIA, 'CUDA GPU Compute Capability': each GPU's compute capability: "
            "https://developer.nvidia.com/cuda-gpus",
            "CUDA Runtime API, enum cudaError: 'cudaErrorNoKernelImageForDevice = 209: This indicates that there is "
            "no kernel image available that is suitable for the device': "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        ),
    ),
    "cuda-runtime-cannot-run": Explanation(
        meaning=(
            "A CUDA runtime loaded and answered, and its answer says it cannot use the driver or the GPUs although "
            "NVML reports a working driver. With cudaDriverGetVersion 0 it finds no usable libcuda.so.1: the "
            "driver's own libcuda is missing or unloadable (a container started without the 'compute' capability, "
            "a driver installed without its CUDA library), or a cuda-compat libcuda that does not fit this driver "
            "answers. With another status, cudaGetDeviceCount failed with the error the finding quotes. Tests that "
            "need this copy cannot run: an error when it is the runtime in use or every runtime fails, else a "
            "warning."
        ),
        confirm=(
            "$ python3 -c \"import ctypes; rt = ctypes.CDLL('libcudart.so.12'); d = ctypes.c_int(); n = "
            "ctypes.c_int(); rt.cudaDriverGetVersion(ctypes.byref(d)); print('driver', d.value, "
            "'cudaGetDeviceCount', rt.cudaGetDeviceCount(ctypes.byref(n)), n.value)\"  # name the copy the finding "
            "names (its path): the same status",
            "$ ldconfig -p | grep libcuda.so.1  # the driver's CUDA library the runtime loads",
            "$ nvidia-smi  # NVML's view, which works here",
            "$ ls -l /dev/nvidia*  # the device nodes CUDA opens",
            "$ sudo dmesg | grep -i nvrm  # the kernel driver's reports",
        ),
        fix=(
            "With driver version 0: make the driver's own libcuda.so.1 reachable (install the driver's user-space "
            "libraries matching its kernel module; in a container, start it with the NVIDIA container toolkit and "
            "the 'compute' capability), and remove a cuda-compat libcuda from the loader path if it does not fit "
            "this driver. Otherwise look up the status in CUDA's error list and check the kernel log and "
            "/dev/nvidia*."
        ),
        sources=(
            "CUDA Runtime API, enum cudaError (the statuses cudaGetDeviceCount returns, such as 100 "
            "cudaErrorNoDevice, 'no CUDA-capable devices were detected by the installed CUDA driver'): "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
            "NVIDIA CUDA Compatibility guide, 'Why CUDA Compatibility': 'The driver package includes both the user "
            "mode CUDA driver (libcuda.so) and kernel mode components necessary to run the application': "
            "https://docs.nvidia.com/deploy/cuda-compatibility/why-cuda-compatibility.html",
            "NVIDIA Container Toolkit, 'Specialized Configurations with Docker', driver capabilities: 'compute: "
            "required for CUDA and OpenCL applications': "
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
        ),
    ),
    "cuda-visible-devices-hides-all": Explanation(
        meaning=(
            "CUDA_VISIBLE_DEVICES is set and leaves CUDA no device although NVML lists GPUs: it is empty, names "
            "only indices or UUIDs that are not here, or starts with an invalid entry (CUDA stops reading at the "
            "first one). CUDA programs then see no GPU (cudaGetDeviceCount returns 100, cudaErrorNoDevice) and "
            "tests that need a GPU skip. Where pytest-cudnn itself set the variable for a pytest-xdist worker, the "
            "finding says so: then it is pytest-cudnn's own error to report."
        ),
        confirm=(
            '$ echo "CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES]"  # the value, brackets showing an empty one',
            "$ nvidia-smi -L  # the GPUs there are, with their indices and UUIDs",
            "$ python3 -c \"import ctypes; n = ctypes.c_int(); print(ctypes.CDLL('libcudart.so.12')"
            '.cudaGetDeviceCount(ctypes.byref(n)), n.value)"  # 100 0 under this value; unset it and run again '
            "(libcudart.so.13 for CUDA 13)",
        ),
        fix=(
            "Set CUDA_VISIBLE_DEVICES to indices below the number of GPUs or to their GPU- UUIDs (MIG- UUIDs for "
            "MIG devices), or unset it. If pytest-cudnn set it for an xdist worker, run with --no-gpu-assign and "
            "report the doctor's output to pytest-cudnn."
        ),
        sources=(
            "CUDA C++ Programming Guide, 'CUDA Environment Variables': CUDA_VISIBLE_DEVICES takes indices, UUIDs "
            "and MIG ids; devices after the first invalid entry are hidden: "
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
            "CUDA Runtime API, enum cudaError: 'cudaErrorNoDevice = 100: This indicates that no CUDA-capable "
            "devices were detected by the installed CUDA driver': "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        ),
    ),
    "cuda-visible-devices-invalid": Explanation(
        meaning=(
            "An entry of CUDA_VISIBLE_DEVICES names no device here (an index past the last GPU, a UUID of another "
            "machine, a misspelling). CUDA reads the list only up to the first invalid entry: that entry and every "
            "one after it are ignored, silently. The devices before it stay visible, so tests run, on fewer GPUs "
            "than the value seems to ask for."
        ),
        confirm=(
            '$ echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"  # the entries, in order',
            "$ nvidia-smi -L  # the indices and UUIDs that exist",
            "$ python3 -c \"import ctypes; n = ctypes.c_int(); print(ctypes.CDLL('libcudart.so.12')"
            '.cudaGetDeviceCount(ctypes.byref(n)), n.value)"  # the count CUDA sees: the entries before the invalid '
            "one",
        ),
        fix=(
            "Remove the invalid entry or correct it (nvidia-smi -L shows the indices and UUIDs); CUDA stops "
            "reading the list at the first invalid one."
        ),
        sources=(
            "CUDA C++ Programming Guide, 'CUDA Environment Variables': CUDA_VISIBLE_DEVICES, 'If one of the indices "
            "is invalid, only the devices whose index precedes the invalid index are visible': "
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
        ),
    ),
    "cuda-visible-devices-mig": Explanation(
        meaning=(
            "CUDA_VISIBLE_DEVICES names MIG devices (MIG-... entries), and NVML lists no MIG device to check them "
            "against: either the driver is older than R470, before which MIG devices had no UUIDs of their own "
            "and were named MIG-<GPU-UUID>/<GPU instance>/<compute instance>, or NVML answered none of the MIG "
            "questions about these GPUs. pytest-cudnn cannot tell which device CUDA will use, so no GPU can be "
            "judged and tests that need one skip."
        ),
        confirm=(
            "$ nvidia-smi -L  # each GPU and, under it, its MIG devices with their MIG- UUIDs",
            "$ nvidia-smi --query-gpu=index,name,mig.mode.current --format=csv  # which GPUs have MIG on",
            "$ cat /proc/driver/nvidia/version  # the driver version: R470 or newer lists MIG devices through NVML",
            '$ echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"  # the MIG entries named',
        ),
        fix=(
            "Check that nvidia-smi -L lists the MIG device the variable names; update the driver if it is older "
            "than R470; or name whole GPUs (indices or GPU- UUIDs) in CUDA_VISIBLE_DEVICES."
        ),
        sources=(
            "NVIDIA Multi-Instance GPU User Guide, 'MIG Device Names', 'CUDA Device Enumeration': a MIG device is "
            "MIG-<UUID> in CUDA_VISIBLE_DEVICES from driver R470, MIG-<GPU-UUID>/<GPU instance ID>/<compute instance "
            "ID> before: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/mig-device-names.html",
            "CUDA C++ Programming Guide, 'CUDA Environment Variables': CUDA_VISIBLE_DEVICES takes MIG ids: "
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
        ),
    ),
    "mig-no-devices": Explanation(
        meaning=(
            "A GPU has MIG (Multi-Instance GPU) mode enabled but no MIG devices: no GPU instance with a compute "
            "instance was created on it. With MIG on, CUDA runs only on MIG devices, never on the whole GPU, so "
            "this GPU can run nothing. It is an error when it is why CUDA sees no device at all (tests that need a "
            "GPU skip), else a warning (other devices remain)."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=index,name,mig.mode.current,mig.mode.pending --format=csv  # MIG Enabled here",
            "$ nvidia-smi mig -lgi  # the GPU instances; none on this GPU",
            "$ nvidia-smi -L  # no MIG devices listed under the GPU",
        ),
        fix=(
            "Create GPU and compute instances (sudo nvidia-smi mig -i N -lgip lists the profiles; sudo nvidia-smi "
            "mig -i N -cgi <profile> -C creates one with its compute instance), or disable MIG (sudo nvidia-smi -i "
            "N -mig 0, then reset the GPU)."
        ),
        sources=(
            "NVIDIA Multi-Instance GPU User Guide, 'Getting Started with MIG': enable MIG mode, list the GPU "
            "instance profiles, create GPU instances and their compute instances (nvidia-smi mig -cgi ... -C): "
            "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/getting-started-with-mig.html",
            "NVIDIA Multi-Instance GPU User Guide, 'MIG Device Names', 'CUDA Device Enumeration': what CUDA "
            "enumerates on MIG-enabled GPUs: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"
            "mig-device-names.html",
        ),
    ),
    "mig-mode-pending": Explanation(
        meaning=(
            "A GPU's MIG mode was changed (nvidia-smi -mig 1 or 0) but the change has not taken effect: NVML "
            "reports a current and a different pending mode. The pending mode applies at the GPU's next reset "
            "(or, where a reset is not exposed, such as GPU pass-through to a virtual machine, the next reboot). "
            "Until then the GPU behaves by its current mode, which is what pytest-cudnn judged. Information only."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=index,mig.mode.current,mig.mode.pending --format=csv  # the two modes differ",
        ),
        fix=(
            "Reset the GPU once nothing uses it (sudo nvidia-smi -i N -r) or reboot for the pending MIG mode to take "
            "effect; or set the mode back to the current one if the change was not meant."
        ),
        sources=(
            "nvml.h (NVML 13.3.29, as NVIDIA/go-nvml vendors it), nvmlDeviceGetMigMode: 'Changing MIG modes may "
            'require device unbind or reset. The "pending" MIG mode refers to the target mode following the next '
            "activation trigger'; nvmlDeviceSetMigMode: 'On certain platforms like pass-through virtualization, "
            "where reset functionality may not be exposed directly, VM reboot is required': "
            "https://github.com/NVIDIA/go-nvml/blob/2f9e261fe40a7a1c54783d66805e8920564763b4/pkg/nvml/nvml.h",
            "NVIDIA DGX A100 User Guide, 'Multi-Instance GPU': 'Enablement of MIG requires a GPU reset': "
            "https://docs.nvidia.com/dgx/dgxa100-user-guide/using-mig.html",
        ),
    ),
    "mig-devices-unused": Explanation(
        meaning=(
            "One CUDA process here sees fewer devices than the GPUs and MIG devices named (or present), because "
            "of CUDA's MIG enumeration rules. With drivers before R570, CUDA enumerates a single MIG device, and "
            "then no GPU without MIG; from R570, one compute instance per GPU instance, and GPUs without MIG "
            "beside them (at most 64 MIG devices). The finding lists the devices left out. Information only: a "
            "test that wants several devices in one process gets fewer; to use them all, run one process per MIG "
            "device."
        ),
        confirm=(
            "$ nvidia-smi -L  # every GPU and MIG device, with UUIDs",
            "$ cat /proc/driver/nvidia/version  # the driver version: before or from R570",
            "$ python3 -c \"import ctypes; n = ctypes.c_int(); print(ctypes.CDLL('libcudart.so.12')"
            '.cudaGetDeviceCount(ctypes.byref(n)), n.value)"  # how many devices one process sees',
        ),
        fix=(
            "Give each process its own MIG device with CUDA_VISIBLE_DEVICES=MIG-<UUID>; pytest-cudnn does this for "
            "each pytest-xdist worker (pytest -n auto --gpu-workers)."
        ),
        sources=(
            "NVIDIA Multi-Instance GPU User Guide, 'MIG Device Names', 'CUDA Device Enumeration': driver < 570: "
            "'CUDA can only enumerate a single compute instance; CUDA will not enumerate non-MIG GPU if any compute "
            "instance is enumerated on any other GPU'; driver >= 570: 'enumeration of a single compute instance "
            "(CI) per GPU instance (GI) is supported', 'CUDA supports at most 64 MIG instances across all GPUs': "
            "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/mig-device-names.html",
        ),
    ),
    "cuda-device-order": Explanation(
        meaning=(
            "This machine has GPUs of different kinds, and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA then numbers "
            "the GPUs fastest first, while nvidia-smi and NVML number them in PCI bus order. CUDA device 0 may be "
            "another GPU than nvidia-smi's GPU 0, so an index taken from nvidia-smi (in a device number a test "
            "uses, or in CUDA_VISIBLE_DEVICES) can pick the wrong GPU. Information only."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=index,pci.bus_id,name --format=csv  # nvidia-smi's numbering",
            "$ python3 -c \"import ctypes; rt = ctypes.CDLL('libcudart.so.12'); n = ctypes.c_int(); "
            "rt.cudaGetDeviceCount(ctypes.byref(n)); b = ctypes.create_string_buffer(64); [print(i, "
            "rt.cudaDeviceGetPCIBusId(b, 64, i) or b.value.decode()) for i in range(n.value)]\"  # CUDA's "
            "numbering: device index and PCI bus ID; run it again with CUDA_DEVICE_ORDER=PCI_BUS_ID",
        ),
        fix=(
            "Set CUDA_DEVICE_ORDER=PCI_BUS_ID in the environment the tests run in, so that CUDA device N is "
            "nvidia-smi's GPU N; or name GPUs by UUID (GPU-...) rather than by index."
        ),
        sources=(
            "CUDA C++ Programming Guide, 'CUDA Environment Variables': CUDA_DEVICE_ORDER, FASTEST_FIRST (the "
            "default) or PCI_BUS_ID: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
            "nvidia-smi(1), -i: 'It is recommended that users desiring consistency use either UUID or PCI bus ID, "
            "since device enumeration ordering is not guaranteed to be consistent between reboots': "
            "https://docs.nvidia.com/deploy/nvidia-smi/index.html",
        ),
    ),
}


# The libraries: CUDA runtimes, cuDNN, the frameworks, the loader, wheels and Windows.
_LIBRARIES: dict[str, Explanation] = {
    # CUDA runtimes --------------------------------------------------------------------------------------------
    "no-cuda-runtime": Explanation(
        meaning=(
            "No copy of the CUDA runtime library (libcudart.so.N on Linux, cudart64_*.dll on Windows) was found "
            "anywhere the probe looks: the loader's search path (LD_LIBRARY_PATH, the ldconfig cache, the default "
            "folders), the nvidia-* pip wheels, conda, and the folders CUDA_HOME, CUDA_PATH and CONDA_PREFIX name. "
            "It is not raised when every GPU framework installed carries its runtime linked in (CuPy 14). Without a "
            "runtime no CUDA program starts, so every test that needs the GPU skips with this reason. Where the only "
            "frameworks here are CPU-only builds, this finding follows from theirs, which is listed first."
        ),
        confirm=(
            "$ ldconfig -p | grep libcudart",
            "$ find / -name 'libcudart.so*' -not -path '/proc/*' 2>/dev/null",
            "$ pip list 2>/dev/null | grep -i -E 'cuda-runtime|cuda_runtime'",
            "$ pytest-cudnn doctor",
        ),
        fix=(
            "Install the GPU build of the framework the tests use (it brings its CUDA runtime as an nvidia-* wheel: "
            "tensorflow[and-cuda], jax[cuda12], the CUDA wheels of torch), or a runtime on its own "
            "(pip install nvidia-cuda-runtime-cu12, or the CUDA toolkit with its lib folder on the loader path)."
        ),
        sources=(
            "CUDA Compatibility, 'Why CUDA Compatibility': 'If the application relies on dynamic linking for "
            "libraries, then the system should have the right version of such libraries as well': "
            "https://docs.nvidia.com/deploy/cuda-compatibility/why-cuda-compatibility.html",
            "ld.so(8): the folders a library name without a slash is searched in (DT_RPATH, LD_LIBRARY_PATH, "
            "DT_RUNPATH, /etc/ld.so.cache, /lib and /usr/lib): https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "TensorFlow, 'Install TensorFlow with pip': on Linux 'python3 -m pip install tensorflow[and-cuda]' "
            "installs the CUDA libraries as pip packages: https://www.tensorflow.org/install/pip",
        ),
    ),
    "cuda-runtime-probe-failed": Explanation(
        meaning=(
            "A libcudart copy was found, but the probe's child process could not load it or get an answer from it: "
            "it cannot be loaded (damaged, truncated, built for another architecture, unreadable by this user, a "
            "symbolic link loop, a missing dependency), it crashed or hung when asked its version, or it lacks the "
            "entry points of the library its name says. The child's failure costs only its own answer; a test "
            "process that loads the same copy fails the same way. It is an error when the stack or a framework uses "
            "this copy (the tests that need it cannot run), a warning when nothing here loads it."
        ),
        confirm=(
            "$ ls -lL <path>  # the path the finding names: size and permissions of the file the link ends at",
            "$ namei -l <path>  # each folder and link on the way, with its permissions",
            "$ file -L <path>  # 'ELF 64-bit LSB shared object, x86-64' for a usable copy",
            "$ ldd <path>  # a line 'not found' names a missing dependency",
            "$ python -c \"import ctypes; print(ctypes.CDLL('<path>').cudaRuntimeGetVersion)\"  # the loader's error",
        ),
        fix=(
            "Reinstall the runtime the copy belongs to (pip install --force-reinstall of its nvidia-cuda-runtime "
            "wheel, or the CUDA toolkit package), make the file and its folders readable, or repair the link so it "
            "ends at a real file; for a copy that hung, look for a hung driver or GPU with nvidia-smi and dmesg. A "
            "copy nothing uses can also simply be removed."
        ),
        sources=(
            "ld.so(8): how the dynamic loader finds and maps a shared object and what LD_DEBUG shows of it: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "CUDA Compatibility, 'Why CUDA Compatibility': a CUDA application needs the runtime libraries it links "
            "dynamically to be present in the right version: "
            "https://docs.nvidia.com/deploy/cuda-compatibility/why-cuda-compatibility.html",
        ),
    ),
    # TensorFlow -----------------------------------------------------------------------------------------------
    "tensorflow-cudart-not-found": Explanation(
        meaning=(
            "A GPU build of TensorFlow loads the CUDA runtime by a name it makes from the CUDA version in its build "
            "info (libcudart.so.11.0 for any CUDA 11, libcudart.so.12 from CUDA 12; cudart64_110.dll on Windows), "
            "and the loader's search for that name (LD_LIBRARY_PATH, the RUNPATH of libtensorflow_framework.so.2 "
            "into the nvidia wheels of its own site-packages, the ldconfig cache, the default folders) finds no "
            "file of it. TensorFlow then logs 'Could not load dynamic library' and 'Cannot dlopen some GPU "
            "libraries ... Skipping registering GPU devices', and runs on the CPU: "
            "tf.config.list_physical_devices('GPU') is empty and TensorFlow's GPU tests skip. The evidence names "
            "copies of that name the loader never looks at, and runtimes found under another name."
        ),
        confirm=(
            '$ python -c "import tensorflow as tf; print(tf.sysconfig.get_build_info())"  # cuda_version',
            "$ python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"  "
            "# logs the failed load",
            "$ readelf -d \"$(python -c 'import os, tensorflow; print(os.path.dirname(tensorflow.__file__))')"
            '/libtensorflow_framework.so.2" | grep -i runpath',
            "$ ldconfig -p | grep libcudart",
        ),
        fix=(
            "On Linux install the nvidia wheels TensorFlow was built with beside it: "
            "pip install 'tensorflow[and-cuda]==<its version>'. Otherwise install the CUDA runtime of its tested "
            "configuration and put its folder on LD_LIBRARY_PATH (on Windows on PATH, or os.add_dll_directory "
            "before TensorFlow is imported)."
        ),
        sources=(
            "TensorFlow, 'Tested build configurations': the CUDA and cuDNN each release was built with: "
            "https://www.tensorflow.org/install/source#gpu",
            "TensorFlow, 'Install TensorFlow with pip': 'python3 -m pip install tensorflow[and-cuda]' on Linux: "
            "https://www.tensorflow.org/install/pip",
            "tf.sysconfig.get_build_info(): keys such as cuda_version, cudnn_version, is_cuda_build: "
            "https://tensorflow.org/api_docs/python/tf/sysconfig/get_build_info",
            "ld.so(8): LD_LIBRARY_PATH is searched before an object's DT_RUNPATH: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "tensorflow-cudnn-not-found": Explanation(
        meaning=(
            "A GPU build of TensorFlow loads cuDNN by the name libcudnn.so.<major> (cudnn64_<major>.dll on "
            "Windows), the major from its build info, and the loader's search for that name (LD_LIBRARY_PATH, the "
            "RUNPATH of libtensorflow_framework.so.2 into the nvidia wheels of its own site-packages, the ldconfig "
            "cache, the default folders) finds no file of it. TensorFlow checks its GPU libraries before it "
            "registers a GPU: it logs 'Cannot dlopen some GPU libraries ... Skipping registering GPU devices' and "
            "runs on the CPU, so its GPU tests skip. The evidence names copies the loader never looks at and cuDNN "
            "copies of another major."
        ),
        confirm=(
            '$ python -c "import tensorflow as tf; print(tf.sysconfig.get_build_info())"  # cudnn_version',
            "$ python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"  "
            "# logs the failed load",
            "$ pip show nvidia-cudnn-cu12  # Location: is it the site-packages that holds tensorflow?",
            "$ ldconfig -p | grep libcudnn",
        ),
        fix=(
            "On Linux pip install 'tensorflow[and-cuda]==<its version>', which installs the cuDNN wheel it pins "
            "beside it; otherwise install the cuDNN of its tested configuration and put its library folder on "
            "LD_LIBRARY_PATH (on Windows on PATH, or os.add_dll_directory before TensorFlow is imported)."
        ),
        sources=(
            "TensorFlow, 'Tested build configurations': the cuDNN each release was built with: "
            "https://www.tensorflow.org/install/source#gpu",
            "TensorFlow, 'Install TensorFlow with pip': 'python3 -m pip install tensorflow[and-cuda]' on Linux: "
            "https://www.tensorflow.org/install/pip",
            "tf.sysconfig.get_build_info(): cudnn_version among its keys: "
            "https://tensorflow.org/api_docs/python/tf/sysconfig/get_build_info",
            "ld.so(8): the search a library name without a slash goes through: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "tensorflow-cudnn-too-old": Explanation(
        meaning=(
            "The cuDNN the loader gives TensorFlow fails TensorFlow's own rule (XLA's "
            "IsSourceCompatibleWithCudnnLibrary): the loaded cuDNN must have the major TensorFlow was compiled with "
            "and a minor at least as new; the patch level does not matter. The compiled version is the build "
            "info's (the major only) made precise by TensorFlow's tested configuration. TensorFlow logs 'Loaded "
            "runtime CuDNN library: X but source was compiled with: Y' and every cuDNN operation (convolutions, "
            "RNNs) fails with 'DNN library is not found' or 'DNN library initialization failed'. When the wheel "
            "beside TensorFlow would do but a copy on LD_LIBRARY_PATH wins, the fix says to remove that folder."
        ),
        confirm=(
            '$ python -c "import tensorflow as tf; print(tf.sysconfig.get_build_info())"  '
            "# cudnn_version: what it was built with",
            "$ pip show nvidia-cudnn-cu12  # the wheel beside it",
            "$ LD_DEBUG=libs python -c \"import tensorflow as tf; tf.config.list_physical_devices('GPU')\" 2>&1 "
            "| grep -E 'find library=libcudnn|trying file=.*libcudnn'",
            '$ echo "$LD_LIBRARY_PATH"',
        ),
        fix=(
            "Give TensorFlow the cuDNN it was built with: pip install the nvidia-cudnn wheel release "
            "tensorflow[and-cuda] pins for this TensorFlow (the finding names it when it resolves), or install a "
            "cuDNN of the same major and at least the compiled minor where the loader finds it first; remove an "
            "older copy's folder from LD_LIBRARY_PATH when it shadows the wheel."
        ),
        sources=(
            "TensorFlow, 'Tested build configurations': the cuDNN each release was built with: "
            "https://www.tensorflow.org/install/source#gpu",
            "jax-ml/jax#15268, XLA's cuDNN check as it logs it: 'Loaded runtime CuDNN library: 8.5.0 but source was "
            "compiled with: 8.6.0. CuDNN library needs to have matching major version and equal or higher minor "
            "version': https://github.com/jax-ml/jax/issues/15268",
            "ld.so(8): LD_LIBRARY_PATH is searched before an object's DT_RUNPATH: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "tensorflow-library-shadowed": Explanation(
        meaning=(
            "TensorFlow's cuDNN or CUDA runtime resolves to a copy in a folder on LD_LIBRARY_PATH, while another "
            "file of the same name sits in the nvidia wheel folder its RUNPATH points at. The loader searches "
            "LD_LIBRARY_PATH before a DT_RUNPATH, so the LD_LIBRARY_PATH copy wins and the wheel pip installed for "
            "TensorFlow is never used. Tests run with the winning copy: nothing fails while TensorFlow accepts it "
            "(tensorflow-cudnn-too-old says when it does not), but an upgrade of either copy changes what "
            "TensorFlow gets without any install of TensorFlow's own."
        ),
        confirm=(
            '$ echo "$LD_LIBRARY_PATH"',
            "$ LD_DEBUG=libs python -c \"import tensorflow as tf; tf.config.list_physical_devices('GPU')\" 2>&1 "
            "| grep -E 'trying file=.*(libcudnn|libcudart)'",
            "$ env -u LD_LIBRARY_PATH pytest-cudnn doctor  # the same host without the variable",
        ),
        fix=(
            "Remove the folder from LD_LIBRARY_PATH for the environment TensorFlow runs in: the wheels beside "
            "TensorFlow are found through its RUNPATH without it."
        ),
        sources=(
            "ld.so(8): the search order, LD_LIBRARY_PATH before DT_RUNPATH: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "pytorch/pytorch#80637: a cuDNN 8.0.3 on LD_LIBRARY_PATH loaded instead of the one the wheel was built "
            "with ('PyTorch was compiled against (8, 3, 2) but linked against (8, 0, 3)'): "
            "https://github.com/pytorch/pytorch/issues/80637",
            "jax-ml/jax#17497: JAX used the first CUDA libraries found in LD_LIBRARY_PATH instead of the ones pip "
            "installed for it: https://github.com/jax-ml/jax/issues/17497",
        ),
    ),
    "tensorflow-build-unrecorded": Explanation(
        meaning=(
            "TensorFlow's build info (tensorflow/python/platform/build_info.py) records no CUDA version, or only a "
            "Windows DLL-style value (such as '64_101') from which no library name follows. pytest-cudnn then takes "
            "the CUDA and cuDNN versions, and the library names, from TensorFlow's published tested configuration "
            "for this release, and the TensorFlow checks that follow use those. Nothing fails because of this; it "
            "says where the expected versions came from."
        ),
        confirm=(
            '$ python -c "import tensorflow as tf; print(tf.__version__, tf.sysconfig.get_build_info())"',
            "$ pytest-cudnn doctor --json  # the finding's evidence names the tested configuration used",
        ),
        fix="Nothing to do; compare the versions the doctor used with TensorFlow's tested configurations if in doubt.",
        sources=(
            "tf.sysconfig.get_build_info(): 'the actual keys and values returned by this function is subject to "
            "change across different versions of TensorFlow or across platforms': "
            "https://tensorflow.org/api_docs/python/tf/sysconfig/get_build_info",
            "TensorFlow, 'Tested build configurations', Linux GPU: https://www.tensorflow.org/install/source#gpu",
            "TensorFlow, 'Tested build configurations', Windows GPU: "
            "https://www.tensorflow.org/install/source_windows#gpu",
        ),
    ),
    "tensorflow-cpu-only": Explanation(
        meaning=(
            "TensorFlow's build info says is_cuda_build = False: the installed distribution (tensorflow-cpu, or "
            "tensorflow where no GPU wheel exists) is a CPU-only build and will not use the GPU. Tests that need "
            "TensorFlow on the GPU skip. It is an error when no other framework here is a GPU build (nothing will "
            "use the GPU; a missing CUDA runtime follows from it and is listed after it), a warning otherwise."
        ),
        confirm=(
            '$ python -c "import tensorflow as tf; print(tf.__version__, tf.test.is_built_with_cuda())"',
            "$ pip list 2>/dev/null | grep -i tensorflow",
        ),
        fix=(
            "Replace it with the GPU build of the same release: pip uninstall -y tensorflow-cpu (both install the "
            "one tensorflow package folder), then pip install 'tensorflow[and-cuda]==<version>' on Linux or WSL2. "
            "Native Windows has no GPU build after TensorFlow 2.10."
        ),
        sources=(
            "TensorFlow, 'Install TensorFlow with pip': 'For the CPU-only build, use the pip package named "
            "tensorflow-cpu'; Linux GPU: 'python3 -m pip install tensorflow[and-cuda]': "
            "https://www.tensorflow.org/install/pip",
            "tf.sysconfig.get_build_info(): is_cuda_build among its keys: "
            "https://tensorflow.org/api_docs/python/tf/sysconfig/get_build_info",
        ),
    ),
    "tensorflow-no-kernels-for-gpu": Explanation(
        meaning=(
            "TensorFlow's build info lists the GPU code it carries (cuda_compute_capabilities, for example sm_60, "
            "sm_70, sm_80, sm_89, compute_90), and none of it runs on this GPU: there is no SASS of the GPU's major "
            "at or below its minor (sm_90a-style code runs on exactly its own capability), and no PTX at or below "
            "its capability for the driver to compile. TensorFlow cannot launch its kernels there ('no kernel image "
            "is available for execution on the device'), so its GPU tests on this GPU fail."
        ),
        confirm=(
            '$ python -c "import tensorflow as tf; '
            "print(tf.sysconfig.get_build_info()['cuda_compute_capabilities'])\"",
            "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
            "$ cuobjdump --list-elf \"$(python -c 'import os, tensorflow; print(os.path.dirname(tensorflow.__file__))')"
            '/libtensorflow_cc.so.2" | head',
        ),
        fix=(
            "Use a TensorFlow release built for this GPU's architecture (older releases carry older "
            "architectures), or build TensorFlow from source for its compute capability."
        ),
        sources=(
            "NVIDIA, 'CUDA Pro Tip: Understand Fat Binaries and JIT Caching': the runtime runs SASS built for the "
            "GPU's architecture, else compiles embedded PTX just in time: "
            "https://developer.nvidia.com/blog/cuda-pro-tip-understand-fat-binaries-jit-caching",
            "TensorFlow GPU guide, hardware requirements (Portuguese edition): the packages hold PTX only for the "
            "newest supported architecture; for other architectures build TensorFlow from source: "
            "https://tensorflow.org/install/gpu?hl=pt",
            "CUDA Runtime API, cudaError: cudaErrorNoKernelImageForDevice (209), no kernel image suitable for the "
            "device: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
            "CUDA Binary Utilities: cuobjdump lists the cubins and PTX embedded in a binary: "
            "https://docs.nvidia.com/cuda/cuda-binary-utilities/index.html",
        ),
    ),
    "tensorflow-ptx-only": Explanation(
        meaning=(
            "No SASS in TensorFlow's build fits this GPU, but PTX for an older or equal compute capability does: "
            "the driver compiles it just in time when TensorFlow first uses the GPU. The tests pass, but the first "
            "GPU work of a process can take minutes (a test with a timeout may exceed it) until the compiled code "
            "is in the driver's JIT cache; a cache too small to hold it makes every process pay again."
        ),
        confirm=(
            '$ python -c "import tensorflow as tf; '
            "print(tf.sysconfig.get_build_info()['cuda_compute_capabilities'])\"",
            "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
            "$ ls -la ~/.nv/ComputeCache  # the JIT cache grows on the first run",
        ),
        fix=(
            "Expect a slow first start; raise CUDA_CACHE_MAXSIZE so the JIT cache keeps TensorFlow's compiled "
            "kernels between runs (and keep CUDA_CACHE_PATH on a persistent disk in CI), or use a TensorFlow build "
            "with SASS for this GPU."
        ),
        sources=(
            "NVIDIA, 'CUDA Pro Tip: Understand Fat Binaries and JIT Caching': JIT compilation of PTX at context "
            "creation and its cache: https://developer.nvidia.com/blog/cuda-pro-tip-understand-fat-binaries-jit-caching",
            "CUDA C++ Programming Guide, 'CUDA Environment Variables' (CUDA_CACHE_MAXSIZE, CUDA_CACHE_PATH): "
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
            "TensorFlow GPU guide, hardware requirements (Portuguese edition): to avoid JIT compilation from PTX, "
            "build TensorFlow from source: https://tensorflow.org/install/gpu?hl=pt",
        ),
    ),
    "tensorflow-wheel-pins": Explanation(
        meaning=(
            "From TensorFlow 2.14 the tensorflow[and-cuda] extra pins the nvidia wheels TensorFlow is built and "
            "tested with (exact releases up to 2.19, ranges from 2.20). An nvidia-cudnn or nvidia-cuda-runtime "
            "wheel installed in TensorFlow's own site-packages is outside that pin, by the distribution's own "
            "version (9.3.0.75; the library reports only 9.3.0). Often another framework's install moved it. "
            "TensorFlow may still run (tensorflow-cudnn-too-old says when its cuDNN rule fails), but the "
            "combination is not the one TensorFlow was tested with."
        ),
        confirm=(
            "$ pip show tensorflow nvidia-cudnn-cu12 nvidia-cuda-runtime-cu12",
            "$ pip check",
            "$ pip install --dry-run 'tensorflow[and-cuda]==<version>'  # what pip would change to meet the pins",
        ),
        fix=(
            "pip install the requirement the finding names (the pinned wheel release, checked against the other "
            "frameworks' needs); where another framework needs a release outside TensorFlow's pin, give each its "
            "own virtual environment."
        ),
        sources=(
            "TensorFlow, 'Install TensorFlow with pip': 'python3 -m pip install tensorflow[and-cuda]' installs "
            "the pinned nvidia packages: https://www.tensorflow.org/install/pip",
            "TensorFlow, 'Tested build configurations': https://www.tensorflow.org/install/source#gpu",
            "pip check: 'Verify installed packages have compatible dependencies': "
            "https://pip.pypa.io/en/stable/cli/pip_check/",
        ),
    ),
    # cuDNN ----------------------------------------------------------------------------------------------------
    "cudnn-incomplete": Explanation(
        meaning=(
            "The front library libcudnn.so.N is there, but the sub-libraries it loads the code from are missing "
            "beside it (cuDNN 9: libcudnn_graph, _ops, _cnn, _adv, _engines_precompiled, _engines_runtime_compiled, "
            "_heuristic; cuDNN 8: _ops_infer, _ops_train, _cnn_infer, _cnn_train, _adv_infer, _adv_train). Any "
            "call into it, even cudnnGetVersion, prints 'Invalid handle. Cannot load symbol ...' (9) or 'Could not "
            "load library libcudnn_ops_infer.so.8' (8) and aborts the process with SIGABRT, which Python cannot "
            "catch. The probe asks in a child process; a test calling cuDNN would kill the pytest process. An "
            "error when a framework or the stack uses this copy."
        ),
        confirm=(
            '$ ls -l "$(dirname <path>)"/libcudnn*  # the path the finding names: every sub-library of one release?',
            "$ pip show -f nvidia-cudnn-cu12 | grep libcudnn",
            "$ python -c \"import ctypes; print(ctypes.CDLL('<path>').cudnnGetVersion())\"  # aborts when incomplete",
        ),
        fix=(
            "Reinstall cuDNN completely, every libcudnn_* file of one release in one folder: "
            "pip install --force-reinstall --no-deps nvidia-cudnn-cu12==<version> for a wheel, or the cuDNN "
            "package or archive again for a system copy; remove a stray lone libcudnn.so.N."
        ),
        sources=(
            "cuDNN backend API overview: 'The cuDNN version 9 library is reorganized into several sub-libraries' "
            "(the shim libcudnn.so, libcudnn_graph, the legacy and engine libraries): "
            "https://docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html",
            "paninski-lab/lightning-pose#460: 'Cannot load symbol cudnnGetVersion' from pip-installed cuDNN: "
            "https://github.com/paninski-lab/lightning-pose/issues/460",
        ),
    ),
    "cudnn-not-loadable": Explanation(
        meaning=(
            "A cuDNN copy cannot be loaded at all: the dynamic loader refuses it because the file is damaged or "
            "truncated, built for another architecture, unreadable by this user, a symbolic link loop, or a "
            "library in its DT_NEEDED is missing. The evidence quotes the loader's error. A framework or stack that "
            "uses this copy gets no cuDNN (an error); a copy nothing loads is a warning."
        ),
        confirm=(
            "$ ls -lL <path>; namei -l <path>  # the path the finding names: the file, its links and permissions",
            "$ file -L <path>",
            "$ ldd <path> | grep 'not found'",
            "$ python -c \"import ctypes; ctypes.CDLL('<path>')\"  # prints the loader's error",
        ),
        fix=(
            "Reinstall cuDNN (pip install --force-reinstall of its nvidia-cudnn wheel, or the system package), "
            "make the file and its folders readable, repair the link, or install the missing dependency ldd names."
        ),
        sources=(
            "ld.so(8): how a shared object and its DT_NEEDED dependencies are found and loaded: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "cuDNN support matrix (which cuDNN package builds exist for which CUDA and platform): "
            "https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html",
        ),
    ),
    "cudnn-dependency-missing": Explanation(
        meaning=(
            "The cuDNN copy loads, but a library it needs at run time is not found where its sub-libraries look: "
            "libnvrtc (cuDNN 9 opens NVRTC at run time without declaring it; cuDNN 8.7's cnn_infer asks for "
            "libnvrtc.so), libcublasLt (cuDNN 9) or libcublas (8), zlib (libz.so.1; zlibwapi.dll on Windows for "
            "8.3 and later). The sub-library that needs it fails to load when first used, and cuDNN aborts the "
            "whole process (SIGABRT), so a test that reaches it kills pytest. The fix names the pip wheel that "
            "ships the library, and the link to make where the wheel ships another name."
        ),
        confirm=(
            "$ ldd \"$(dirname <path>)\"/libcudnn_graph.so.9 | grep 'not found'  # cuDNN 9; the path the finding names",
            '$ strings "$(dirname <path>)"/libcudnn_graph.so.9 | grep libnvrtc  # the name it opens at run time',
            "$ readelf -d \"$(dirname <path>)\"/libcudnn_graph.so.9 | grep -i -E 'needed|runpath'",
            "$ ldconfig -p | grep -E 'libnvrtc|libcublasLt|libz.so'",
        ),
        fix=(
            "pip install the wheel that provides the missing library (the finding names it: nvidia-cuda-nvrtc-cu12, "
            "nvidia-cublas-cu12, ...) in the same site-packages as the cuDNN wheel, or install it system-wide "
            "where the loader finds it; where the wheel ships another file name, link it under the name cuDNN asks "
            "for and put that folder on LD_LIBRARY_PATH."
        ),
        sources=(
            "jax-ml/jax#29462: 'Works around a bug in CUDNN where it does not declare or locate its own NVRTC "
            "dependency': https://github.com/jax-ml/jax/pull/29462",
            "pytorch/pytorch#99451, 'Workaround for CuDNN-8.7+ load bug': 'prevent spurious call to abort() from "
            "libcudnn.so.8, if libnvrtc.so is missing on the system': https://github.com/pytorch/pytorch/pull/99451",
            "cuDNN release notes (9.0.0): cuDNN depends on cuBLASLt instead of cuBLAS: "
            "https://docs.nvidia.com/deeplearning/cudnn/release-notes.html",
            "cupy/cupy#6226: 'cuDNN 8.3.0+ requires zlib as a dependency', by hand on Windows: "
            "https://github.com/cupy/cupy/issues/6226",
        ),
    ),
    "cudnn-probe-failed": Explanation(
        meaning=(
            "A cuDNN copy loaded, but asking it for its version in the probe's child process crashed the child, "
            "hung until the probe's timeout, or found the file lacks cuDNN's entry points. The same call in a test "
            "process would crash or hang pytest. An error when a framework or the stack uses this copy, a warning "
            "otherwise."
        ),
        confirm=(
            "$ python -c \"import ctypes; print(ctypes.CDLL('<path>').cudnnGetVersion())\"  # the path "
            "the finding names",
            "$ nm -D <path> | grep -c ' T cudnn'  # cuDNN's exported functions; 0 for a file that is not cuDNN",
            "$ sudo dmesg | tail  # a hung or crashed GPU call leaves a line here",
            "$ nvidia-smi",
        ),
        fix=(
            "Reinstall cuDNN (the file is damaged, or not the library its name says); for a hang, check the driver "
            "and GPU (nvidia-smi, dmesg) before anything else."
        ),
        sources=(
            "cuDNN troubleshooting, 'Error Reporting And API Logging' (CUDNN_LOGDEST_DBG, CUDNN_LOGLEVEL_DBG show "
            "what the failing call did): https://docs.nvidia.com/deeplearning/cudnn/latest/reference/troubleshooting.html",
            "ld.so(8): LD_DEBUG shows what the loader did before the crash: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "cudnn-cuda-mismatch": Explanation(
        meaning=(
            "cudnnGetCudartVersion says which CUDA runtime the cuDNN copy was built for, and a framework uses it "
            "with a runtime of another release: each framework is judged by its own pair, the cuDNN and the CUDA "
            "runtime its own search loads (TensorFlow's, the pair its loader picks), never by another framework's "
            "runtime, and the finding names the frameworks it is about. From CUDA 11 a cuDNN build serves the whole "
            "CUDA major (a cuDNN for CUDA 12 does not serve a CUDA 11 runtime), before 11 one major.minor. Before "
            "cuDNN 9 it is an error: such a build runs against libraries of the wrong CUDA or fails to initialise. "
            "From cuDNN 9 it is a warning: the libraries carry their own CUDA runtime and find cuBLAS and NVRTC by "
            "their own RUNPATH (measured on the PyPI wheels), so the pairing loads where the driver serves the "
            "cuDNN's CUDA, but NVIDIA supports each build with its own CUDA major only. Without a framework: a "
            "warning when no runtime of the cuDNN's release is on the loader path."
        ),
        confirm=(
            "$ python -c \"import ctypes; l = ctypes.CDLL('libcudnn.so.9'); print(l.cudnnGetVersion(), "
            'l.cudnnGetCudartVersion())"  # 91000 12090: cuDNN 9.10.0 built for CUDA 12.9',
            "$ pip list 2>/dev/null | grep -i -E 'nvidia-cudnn|cuda-runtime'  # the -cuNN suffix is the CUDA major",
            "$ pytest-cudnn doctor",
        ),
        fix=(
            "Install the cuDNN build for the CUDA major the runtime in use has (nvidia-cudnn-cu12 for CUDA 12, "
            "nvidia-cudnn-cu13 for CUDA 13), or the runtime the cuDNN was built for."
        ),
        sources=(
            "cuDNN support matrix: each cuDNN release has a package per CUDA major (cuDNN 9.x for CUDA 12.x, for "
            "CUDA 11.x): https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html",
            "CUDA Compatibility, 'Minor Version Compatibility': from CUDA 11, builds within one major release "
            "family interoperate: https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
        ),
    ),
    "cudnn-create-failed": Explanation(
        meaning=(
            "cudnnCreate, the call that makes the handle every cuDNN operation needs, returned an error status on a "
            "host where the driver sees GPUs. It is judged for every copy, a framework's own included: tests that "
            "use cuDNN through that copy (convolutions, the cudnn_handle fixture) fail. When CUDA sees no device at "
            "all (CUDA_VISIBLE_DEVICES hides every GPU, MIG without instances), that finding is the cause, listed "
            "first, and this one names it."
        ),
        confirm=(
            '$ nvidia-smi -L && echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"'
            "  # the GPUs the driver lists, and what CUDA is told to see",
            '$ CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr python -c "import ctypes; '
            "l = ctypes.CDLL('libcudnn.so.9'); h = ctypes.c_void_p(); print(l.cudnnCreate(ctypes.byref(h)))\"  "
            "# cuDNN 9; CUDNN_LOGERR_DBG=1 for cuDNN 8",
            "$ pytest-cudnn doctor  # the findings above this one",
        ),
        fix=(
            "Fix the cause the doctor lists first (a device CUDA can use, a driver new enough for the runtime); "
            "else run with cuDNN's logging (CUDNN_LOGLEVEL_DBG=2, CUDNN_LOGDEST_DBG=stderr) for its reason."
        ),
        sources=(
            "cuDNN troubleshooting, 'Error Reporting And API Logging': CUDNN_LOGDEST_DBG and CUDNN_LOGLEVEL_DBG "
            "(legacy CUDNN_LOGERR_DBG): https://docs.nvidia.com/deeplearning/cudnn/latest/reference/troubleshooting.html",
            "cuDNN support matrix (driver and GPU requirements per release): "
            "https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html",
        ),
    ),
    "cudnn-gpu-unsupported": Explanation(
        meaning=(
            "The cuDNN release in use does not support this GPU's compute capability: cuDNN 9 supports 5.0 "
            "(Maxwell) and newer, and from 9.11 only 7.5 (Turing) and newer; older releases had other floors. Every "
            "copy the stack or a framework loads is judged against every GPU. On an unsupported GPU cuDNN has no "
            "kernels to run (PyTorch 2.10 and later refuse cuDNN 9.11+ on devices below 7.5 outright), so tests "
            "using cuDNN there fail. The fix keeps the cuDNN wheel below the release where support ends, checked "
            "against what the frameworks here pin."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
            "$ pip show nvidia-cudnn-cu12 | grep -i version",
            '$ python -c "import torch; print(torch.backends.cudnn.version(), torch.cuda.get_device_capability())"',
        ),
        fix=(
            "pip install the cuDNN wheel requirement the finding names (a release that still supports this GPU), "
            "or a framework build for an older CUDA major whose cuDNN still does, or a newer GPU."
        ),
        sources=(
            "cuDNN support matrix: the compute capabilities each release supports: "
            "https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html",
            "cuDNN 9.5.1 support matrix (compute capability 5.0 to 9.0 for CUDA 12.x): "
            "https://docs.nvidia.com/deeplearning/cudnn/backend/v9.5.1/reference/support-matrix.html",
            "NVIDIA, 'CUDA GPU Compute Capability' (each GPU's capability): https://developer.nvidia.com/cuda-gpus",
        ),
    ),
    "cudnn-known-bad": Explanation(
        meaning=(
            "The cuDNN release in use, on this GPU or built for this CUDA, is a combination NVIDIA's release notes "
            "list as giving wrong or nondeterministic results: cuDNN 8.9.0 and 8.9.1 with fused convolution+bias+"
            "ReLU on Pascal, 8.9.0 to 8.9.2 with a fused convolution engine on Maxwell, cuDNN 7.6.5 for CUDA 10.2 "
            "with nondeterministic RNN and multi-head attention. Tests still run, and may pass or fail on wrong "
            "numbers. The summary names the row ([cudnn-pascal-fused-conv], ...)."
        ),
        confirm=(
            '$ python -c "import torch; print(torch.backends.cudnn.version())"  # or: pip show nvidia-cudnn-cu12',
            "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
        ),
        fix=(
            "Move to the cuDNN release that fixed it (the finding's pip requirement, checked against the frameworks' "
            "pins), or follow the row's remedy (for 7.6.5 with CUDA 10.2, CUBLAS_WORKSPACE_CONFIG=:16:8)."
        ),
        sources=(
            "cuDNN 8.9.2 release notes, quoted in nvidia/container-images/cuda#217: fused convolutions with bias and "
            "ReLU 'could generate incorrect results on the Pascal GPU architectures for cuDNN 8.9 releases. This "
            "issue is now fixed in 8.9.2': https://gitlab.com/nvidia/container-images/cuda/-/issues/217",
            "cuDNN 7.6.5 release notes, known issues (RNN and multi-head attention with CUDA 10.2): "
            "https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-801-preview/cudnn-release-notes/rel_7xx.html",
        ),
    ),
    # The loader -----------------------------------------------------------------------------------------------
    "library-shadowed": Explanation(
        meaning=(
            "Several copies of one CUDA library name (libcudart.so.12, libcudnn.so.9, ...) of different versions are "
            "on the loader's search path, and the first in search order wins for a program that loads it by name: "
            "LD_LIBRARY_PATH folders in order, then the ldconfig cache, then the default folders. The finding says "
            "which copy wins and which are shadowed. Nothing fails by itself, but a program gets one version while "
            "another is installed, and reordering LD_LIBRARY_PATH or running ldconfig changes which one. (The "
            "frameworks' own searches are judged separately, in their own findings.)"
        ),
        confirm=(
            '$ echo "$LD_LIBRARY_PATH"',
            "$ ldconfig -p | grep -E 'libcudart|libcudnn'",
            "$ LD_DEBUG=libs python -c \"import ctypes; ctypes.CDLL('libcudnn.so.9')\" 2>&1 "
            "| grep -E 'trying file|calling init'",
        ),
        fix=(
            "Remove the copies you do not want from the loader path (their folder from LD_LIBRARY_PATH, their "
            "package, or their ldconfig entry), so that one version remains."
        ),
        sources=(
            "ld.so(8): the search order of a library name without a slash: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "ldconfig(8): the cache the run-time linker uses, printed by ldconfig -p: "
            "https://manpages.ubuntu.com/manpages/oracular/en/man8/ldconfig.8.html",
        ),
    ),
    "loader-disagrees": Explanation(
        meaning=(
            "The probe predicts from the search rules (LD_LIBRARY_PATH, the ldconfig cache, the default folders) "
            "which copy a name resolves to, and its child process also really loads the name and reads which file "
            "was mapped. Here the two differ. Usual causes: an /etc/ld.so.cache not rebuilt after a library was "
            "installed or removed, an LD_PRELOAD, a glibc-hwcaps subfolder, or an RPATH. The findings that depend "
            "on the copy use the one really loaded."
        ),
        confirm=(
            "$ LD_DEBUG=libs python -c \"import ctypes; ctypes.CDLL('<name>')\" 2>&1 "
            "| grep -E 'find library|trying file|calling init'",
            "$ ldconfig -p | grep <name>",
            '$ echo "LD_PRELOAD=$LD_PRELOAD"; cat /etc/ld.so.conf /etc/ld.so.conf.d/*',
        ),
        fix=(
            "Rebuild the loader cache (sudo ldconfig) and check /etc/ld.so.conf, LD_PRELOAD and the RPATH of the "
            "program; then run pytest-cudnn doctor again."
        ),
        sources=(
            "ld.so(8): the search order, LD_PRELOAD and LD_DEBUG: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "ldconfig(8): 'The cache is used by the run-time linker, ld.so or ld-linux.so': "
            "https://manpages.ubuntu.com/manpages/oracular/en/man8/ldconfig.8.html",
        ),
    ),
    "ld-library-path-relative": Explanation(
        meaning=(
            "LD_LIBRARY_PATH has a relative entry, or an empty one (a leading, trailing or doubled ':'), which the "
            "loader takes as the current folder. Which libraries a process gets then depends on the folder it was "
            "started in: a test run from another folder, or a subprocess that changes folder, can load other "
            "copies. pytest-cudnn does not search these entries (and never loads from the current folder), so "
            "what it reports can differ from what a test started in a folder that holds libraries gets."
        ),
        confirm=("$ echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -n -v '^/'  # each relative or empty entry",),
        fix=(
            "Remove the empty entries and make every entry absolute; append to the variable without leaving a "
            "trailing ':' when it was unset: export LD_LIBRARY_PATH=\"/opt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"."
        ),
        sources=(
            "ld.so(8): LD_LIBRARY_PATH, the list of folders searched at execution time: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "'Wrong usage of LD_LIBRARY_PATH': an empty entry makes the loader search the current working "
            "directory; use ${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}: https://rusnak.io/wrong-usage-of-ld_library_path/",
        ),
    ),
    "path-variable-missing": Explanation(
        meaning=(
            "CUDA_HOME, CUDA_PATH, CUDNN_PATH or CONDA_PREFIX is set but names no folder (a typo, a toolkit since "
            "removed, a file). The dynamic loader never reads these variables, but build scripts and some "
            "frameworks do (PyTorch's C++ extension builder takes CUDA_HOME or CUDA_PATH as the toolkit; CuPy's "
            "library finder looks in CONDA_PREFIX, CUDA_PATH and CUDA_HOME), and they will look in the wrong place."
        ),
        confirm=(
            '$ for v in CUDA_HOME CUDA_PATH CUDNN_PATH CONDA_PREFIX; do printenv "$v" >/dev/null && ls -ld '
            '"$(printenv "$v")"; done',
        ),
        fix="Point the variable at the install it means, or unset it.",
        sources=(
            "torch.utils.cpp_extension, _find_cuda_home: \"cuda_home = os.environ.get('CUDA_HOME') or "
            "os.environ.get('CUDA_PATH')\": https://pytorch.org/docs/1.7.0/_modules/torch/utils/cpp_extension.html",
            "ld.so(8): the environment the loader reads (LD_LIBRARY_PATH, LD_PRELOAD, ...; no CUDA variable): "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "path-variable-unused": Explanation(
        meaning=(
            "The folder an install-location variable names (CUDA_HOME, CUDA_PATH, CUDNN_PATH, CONDA_PREFIX) holds "
            "CUDA runtime or cuDNN copies that are found only through that variable: the loader never looks there, "
            "because it does not read these variables. A program that loads the library by name will not get "
            "these copies; only tools that read the variable do. Informational: it matters when these are the "
            "copies you mean the tests to use."
        ),
        confirm=(
            '$ ls "$CUDA_HOME"/lib64/libcudart* "$CUDA_HOME"/lib/libcudart* 2>/dev/null',
            "$ ldconfig -p | grep -E 'libcudart|libcudnn'",
            '$ echo "$LD_LIBRARY_PATH"',
        ),
        fix=(
            "If these are the copies to use, add their folder to LD_LIBRARY_PATH (PATH on Windows, or "
            "os.add_dll_directory), or register it with ldconfig; otherwise nothing to do."
        ),
        sources=(
            "ld.so(8): the folders and variables the loader searches: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "ldconfig(8): adding a folder to /etc/ld.so.conf and rebuilding the cache: "
            "https://manpages.ubuntu.com/manpages/oracular/en/man8/ldconfig.8.html",
        ),
    ),
    "library-folder-unreadable": Explanation(
        meaning=(
            "A folder the loader searches (an LD_LIBRARY_PATH entry, an ldconfig folder, a wheel's library folder) "
            "could not be listed: permission denied, an I/O error, a stale network mount. Copies there are unknown, "
            "not absent: the doctor may report a library as missing that a process running as another user finds, "
            "and the loader may still open a file there by name if the folder is searchable but not readable."
        ),
        confirm=("$ ls -ld <folder>; namei -l <folder>  # the folder the finding names", "$ id  # who is asking"),
        fix="Make the folder readable by the user that runs the tests, or take it off the search path.",
        sources=(
            "ld.so(8): the folders the loader searches, LD_LIBRARY_PATH among them: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
            "ldconfig(8): the folders the cache is built from (/etc/ld.so.conf and the trusted folders): "
            "https://manpages.ubuntu.com/manpages/oracular/en/man8/ldconfig.8.html",
        ),
    ),
    # The frameworks -------------------------------------------------------------------------------------------
    "framework-cpu-only": Explanation(
        meaning=(
            "A framework other than TensorFlow (which has its own code) is a CPU-only build: a torch whose "
            "torch.version.cuda is None (a '+cpu' wheel from PyTorch's CPU index), JAX without its CUDA plugin, "
            "the CPU 'onnxruntime' package. It will not use the GPU, and the tests that need it on the GPU skip. It "
            "is an error when no other framework here is a GPU build (nothing will use the GPU; a missing CUDA "
            "runtime follows from it), a warning otherwise."
        ),
        confirm=(
            '$ python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"',
            '$ python -c "import jax; print(jax.devices())"',
            "$ pip list 2>/dev/null | grep -i -E 'torch|jax|cupy|onnxruntime'",
        ),
        fix=(
            "Install the framework's CUDA build (the finding says how: pip install torch from PyPI or PyTorch's CUDA "
            "index, pip install 'jax[cuda12]', pip install onnxruntime-gpu); uninstall a '+cpu' build first, or "
            "pip considers the requirement met and changes nothing."
        ),
        sources=(
            "PyTorch, 'Start Locally': the compute platform (a CUDA version, or CPU) picks the wheel index: "
            "https://pytorch.org/get-started",
            "JAX installation: CPU-only 'pip install -U jax', NVIDIA GPU 'pip install -U \"jax[cuda13]\"': "
            "https://docs.jax.dev/en/latest/installation.html",
        ),
    ),
    "framework-driver-too-old": Explanation(
        meaning=(
            "The NVIDIA driver is older than the CUDA a framework needs: the CUDA runtime it loads (or, where that "
            "was not read, the CUDA it was built for) needs at least the lower of its toolkit's release driver and "
            "its major's minor-version-compatibility floor (any CUDA 12.x: 525.60.13 on Linux; before CUDA 11, "
            "the toolkit's own release driver). Without NVML, the runtime's own "
            "cudaGetDeviceCount answer 35 ('insufficient driver') says the same. A cuda-compat forward-"
            "compatibility libcuda that covers the CUDA is judged by the forward-compatibility rules instead. "
            "PyTorch then warns 'The NVIDIA driver on your system is too old' and torch.cuda.is_available() is "
            "False; JAX falls back to the CPU; the framework's GPU tests skip."
        ),
        confirm=(
            "$ nvidia-smi  # Driver Version, and CUDA Version: the newest CUDA this driver runs",
            '$ python -c "import torch; print(torch.version.cuda, torch.cuda.is_available())"',
            "$ pytest-cudnn doctor --framework torch",
        ),
        fix=(
            "Install a driver at least the floor the finding names, or a build of the framework for an older CUDA "
            "(PyTorch's cu118/cu126 indexes, jax[cuda12] rather than jax[cuda13])."
        ),
        sources=(
            "CUDA Compatibility, 'Minor Version Compatibility': minimum drivers per CUDA major (11.x >= 450, "
            "12.x >= 525, 13.x >= 580): https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
            "CUDA Toolkit release notes, Table 3 'CUDA Toolkit and Corresponding Driver Versions': "
            "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html",
            "PyTorch, 'Start Locally': one wheel per CUDA version to choose from: https://pytorch.org/get-started",
        ),
    ),
    "framework-import-object-missing": Explanation(
        meaning=(
            "A shared object the framework's own import loads is missing from its package folder: "
            "torch/lib/libtorch_global_deps.so or torch/lib/libtorch_cuda.so for a CUDA build of PyTorch, "
            "libtensorflow_framework.so.2 for TensorFlow. The install is broken or half removed (an interrupted "
            "pip, a cleanup that deleted large files), and 'import <framework>' itself fails with an OSError or "
            "ImportError: every test module that imports it errors at collection."
        ),
        confirm=(
            '$ python -c "import torch"  # or: python -c "import tensorflow"',
            "$ pip show -f torch | grep -E 'libtorch_global_deps|libtorch_cuda'  # what the install recorded",
            "$ ls \"$(pip show torch | sed -n 's/^Location: //p')\"/torch/lib/  # what is on disk",
        ),
        fix=(
            "Reinstall the framework's own files: pip install --force-reinstall --no-deps <distribution>==<version> "
            "(the finding names both)."
        ),
        sources=(
            "pytorch/pytorch#104259: 'import torch' failing with 'from torch._C import *' -> 'ImportError: "
            "libcudnn.so.8: cannot open shared object file': https://github.com/pytorch/pytorch/issues/104259",
            "PyPA, 'Recording installed projects': the RECORD of each installed distribution lists its files "
            "(pip show -f prints them): https://packaging.python.org/specifications/recording-installed-packages/",
        ),
    ),
    "framework-import-library-missing": Explanation(
        meaning=(
            "An object the framework's import loads names a library in its DT_NEEDED (libtorch_cuda.so needs "
            "libcudnn.so.9, libcublas.so.13, ...) that the loader finds nowhere in its search (the object's RPATH "
            "into the nvidia wheels, LD_LIBRARY_PATH, the ldconfig cache, the default folders). The import itself "
            "fails: 'ImportError: libcudnn.so.9: cannot open shared object file'. The evidence lists the folders "
            "searched and copies of the library where the search never looks (a wheel in lib64 instead of lib, "
            "another venv)."
        ),
        confirm=(
            "$ ldd \"$(pip show torch | sed -n 's/^Location: //p')\"/torch/lib/libtorch_cuda.so | grep 'not found'",
            "$ readelf -d \"$(pip show torch | sed -n 's/^Location: //p')\"/torch/lib/libtorch_cuda.so "
            "| grep -i -E 'rpath|runpath'",
            "$ pip check  # a pinned nvidia wheel missing or of another version",
        ),
        fix=(
            "Install the wheel that ships the library at the release the framework pins (the finding's pip "
            "requirement), or reinstall the framework with its dependencies (pip install --force-reinstall "
            "<distribution>==<version>), or add the folder that holds the library to LD_LIBRARY_PATH."
        ),
        sources=(
            "pytorch/pytorch#165812: 'ImportError: libcudnn.so.9: cannot open shared object file' when the nvidia "
            "wheels were installed where torch's RPATH does not look (lib vs lib64): "
            "https://github.com/pytorch/pytorch/issues/165812",
            "ld.so(8): DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, the cache and the default folders, in that order: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "framework-library-missing": Explanation(
        meaning=(
            "A CUDA library the framework cannot do without is not found by the framework's own search: the "
            "DT_NEEDED of a CUDA object it loads later, or its Python-side loading (PyTorch's preload of the "
            "nvidia wheels, JAX's plugin loading its wheels, CuPy's cuda.pathfinder, TensorFlow's dlopen list). The "
            "framework imports, but cannot use the GPU: JAX says 'CUDA backend failed to initialize' and falls "
            "back to the CPU, TensorFlow logs 'Cannot dlopen some GPU libraries' and registers no GPU, CuPy raises "
            "on first use. Its GPU tests skip or fail. The evidence lists what was searched and copies installed "
            "where the search never looks."
        ),
        confirm=(
            '$ python -c "import jax; print(jax.devices())"  # or the framework\'s own GPU check',
            "$ python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"",
            "$ pip list 2>/dev/null | grep -i nvidia  # the CUDA library wheels installed",
            "$ pytest-cudnn doctor --json  # the finding's evidence: the folders searched",
        ),
        fix=(
            "Install the wheel that provides the library where the framework's search looks (the finding's pip "
            "requirement; for CuPy the [ctk] extra), or add the folder that holds it to LD_LIBRARY_PATH."
        ),
        sources=(
            "jax-ml/jax#19604 (JAX FAQ, 'Why do some CUDA libraries fail to load/initialize?'): JAX relies on "
            "dlopen and prefers the pip-installed libraries: https://github.com/jax-ml/jax/pull/19604",
            "CuPy installation: the CUDA components from PyPI with the [ctk] extra: "
            "https://docs.cupy.dev/en/stable/install.html",
            "tensorflow/tensorflow#62194: TensorFlow installed with tensorflow[and-cuda] failing on "
            "'libnvrtc.so: cannot open shared object file': https://github.com/tensorflow/tensorflow/issues/62194",
        ),
    ),
    "framework-cudnn-mismatch": Explanation(
        meaning=(
            "The cuDNN a framework loads fails that framework's own cuDNN rule. PyTorch "
            "(torch/backends/cudnn/__init__.py): same major, a minor at least the one it was compiled with, and "
            "from PyTorch 2.10 no cuDNN 9.11+ on a device below compute capability 7.5; it raises 'cuDNN version "
            "incompatibility'. JAX: XLA's rule (same major, minor at least the compiled one) and its own list of "
            "refused releases; it logs 'DNN library initialization failed' or falls back to the CPU. ONNX Runtime: "
            "a build for cuDNN 8 does not take cuDNN 9, and the other way round. The framework's cuDNN work fails."
        ),
        confirm=(
            '$ python -c "import torch; print(torch.backends.cudnn.version())"  # raises on a mismatch',
            '$ python -c "import jax; jax.print_environment_info()"',
            "$ LD_DEBUG=libs python -c \"import torch\" 2>&1 | grep -E 'trying file=.*libcudnn'",
            "$ pip show nvidia-cudnn-cu12 nvidia-cudnn-cu13 2>/dev/null | grep -E '^(Name|Version)'",
        ),
        fix=(
            "Install the cuDNN wheel release the framework pins (the finding's requirement, checked against the "
            "other frameworks here), or remove the copy that wins from the framework's search; where two "
            "frameworks need cuDNN releases no single wheel satisfies, use separate virtual environments."
        ),
        sources=(
            "pytorch/pytorch#80637: 'RuntimeError: cuDNN version incompatibility: PyTorch was compiled against "
            "(8, 3, 2) but linked against (8, 0, 3)': https://github.com/pytorch/pytorch/issues/80637",
            "jax-ml/jax#15268, XLA's rule: 'CuDNN library needs to have matching major version and equal or higher "
            "minor version': https://github.com/jax-ml/jax/issues/15268",
            "ONNX Runtime, CUDA Execution Provider requirements: 'ONNX Runtime built with cuDNN 8.x is not "
            "compatible with cuDNN 9.x, and vice versa': "
            "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html",
        ),
    ),
    "framework-copies-differ": Explanation(
        meaning=(
            "Two GPU frameworks installed here load different files for one library name (for example PyTorch's "
            "cuDNN wheel and a system cuDNN JAX finds, or two CUDA runtime builds). In one process the first "
            "framework imported maps its copy, and the dynamic loader hands that already-loaded copy to every later "
            "request by that name: the second framework runs on the first one's copy. Each works alone; whether "
            "the pair breaks in one process is what framework-import-order-conflict and "
            "framework-needs-import-order say."
        ),
        confirm=(
            "$ python -c \"import torch, jax; jax.devices(); print(''.join(l for l in open('/proc/self/maps') "
            "if 'libcudnn' in l))\"  # then swap the imports",
            "$ pytest-cudnn doctor --json  # each framework's loads, and the copies they name",
        ),
        fix=(
            "Install one set of nvidia wheels both frameworks accept, or do not import both in one test process "
            "(run their tests in separate processes or virtual environments)."
        ),
        sources=(
            "jax-ml/jax#18032: with torch imported first, 'Found cuDNN version 8700, but JAX was built against "
            "version 8800'; imported after JAX initialised, both work: https://github.com/jax-ml/jax/issues/18032",
            "ld.so(8): how the loader resolves a library name (an object already loaded under that name is used): "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "framework-needs-import-order": Explanation(
        meaning=(
            "A framework's own search does not give it every library it needs (one is found nowhere, or its copy is "
            "one it refuses), but another framework imported before it in the same process maps a copy it can use, "
            "and the loader hands it that copy: for example TensorFlow 2.21 finds libcusolver.so.11 only after "
            "PyTorch's preload mapped it. It works by accident of import order: a test process that imports it "
            "first, or alone, fails as its own finding says."
        ),
        confirm=(
            "$ python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"  # alone",
            "$ python -c \"import torch, tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"  "
            "# after torch",
        ),
        fix=(
            "Make the framework's own search find what it needs (the finding says how); until then import the "
            "helping framework first in every test process, at the top of conftest.py."
        ),
        sources=(
            "jax-ml/jax#18032: which copy a framework gets depends on which framework was imported first: "
            "https://github.com/jax-ml/jax/issues/18032",
            "ld.so(8): the loader's resolution of a library name: "
            "https://man7.org/linux/man-pages/man8/ld-linux.so.8.html",
        ),
    ),
    "framework-import-order-conflict": Explanation(
        meaning=(
            "A framework that works alone gets, when another framework was imported first in the same process, "
            "that framework's copy of a shared library name (cuDNN), and refuses it by its own rule: PyTorch built "
            "with cuDNN 9.26 after JAX mapped cuDNN 9.8. The finding says which import order works for both, if "
            "any. Test sessions that import both (a conftest importing one, a test the other) fail or pass by "
            "import order."
        ),
        confirm=(
            '$ python -c "import jax; jax.devices(); import torch; print(torch.backends.cudnn.version())"',
            '$ python -c "import torch; print(torch.backends.cudnn.version()); import jax; print(jax.devices())"',
        ),
        fix=(
            "Import the framework first whose copy both accept (the finding names the order), or install one copy "
            "of the library both accept; if none exists, keep the two in separate test processes."
        ),
        sources=(
            "jax-ml/jax#19004: 'CUDA error when importing torch before creating any jax.numpy.array' (cuDNN 8500 "
            "found, 8600 needed), and no error the other way round: https://github.com/jax-ml/jax/issues/19004",
            "jax-ml/jax#18032: torch imported first hands JAX its cuDNN 8.7 where JAX needs 8.8: "
            "https://github.com/jax-ml/jax/issues/18032",
        ),
    ),
    "framework-gpu-below-floor": Explanation(
        meaning=(
            "The GPU is older than the oldest its framework's build supports, by that framework's own documentation. "
            "JAX documents it per CUDA major: on CUDA 12, compute capability 5.2 (Maxwell) and newer; on CUDA 13, "
            "7.5 (Turing) and newer, since NVIDIA dropped the older GPUs in CUDA 13. A jax[cuda13] install on a P100 "
            "(6.0) or a V100 (7.0) imports, but the GPU is not one its CUDA 13 plugin runs on: GPU tests fail or JAX "
            "falls back to the CPU. The finding names each such GPU; the framework is stopped only where it has no "
            "GPU it supports."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
            "$ pip list 2>/dev/null | grep -i jax  # jax-cuda12-plugin or jax-cuda13-plugin",
        ),
        fix=(
            "Install the framework's build for the older CUDA major where it still supports the GPU (for JAX: "
            "pip install -U 'jax[cuda12]', which supports compute capability 5.2 and newer), or run the tests on a "
            "newer GPU."
        ),
        sources=(
            "JAX installation docs, 'NVIDIA GPU': 'On CUDA 12, JAX supports NVIDIA GPUs that have SM version 5.2 "
            "(Maxwell) or newer ... On CUDA 13, JAX supports NVIDIA GPUs that have SM version 7.5 or newer.': "
            "https://docs.jax.dev/en/latest/installation.html#nvidia-gpu",
        ),
    ),
    "framework-no-kernels-for-gpu": Explanation(
        meaning=(
            "The GPU code a PyTorch build carries (its arch list, torch.cuda.get_arch_list(), else the fatbins of "
            "its libraries) has no SASS for this GPU's major at or below its minor and no PTX at or below its "
            "compute capability. PyTorch warns that the GPU 'is not compatible with the current PyTorch "
            "installation', and its kernels fail with 'CUDA error: no kernel image is available for execution on "
            "the device'."
        ),
        confirm=(
            '$ python -c "import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())"',
            "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
            "$ cuobjdump --list-elf \"$(pip show torch | sed -n 's/^Location: "
            "//p')\"/torch/lib/libtorch_cuda.so | head",
        ),
        fix=(
            "Where the tables know the newest PyPI release whose GPU code runs on the GPU, the finding carries the "
            "requirement that keeps pip on it, the first release without it as the bound: PyPI's builds from 2.11 "
            'start at sm_75, so a V100 (sm_70) gets pip install "torch<2.11" (2.10.0, cu128), a P100 or GTX 10xx '
            '(sm_60) "torch<2.8" (2.7.1, cu126). It carries none where the installed release already meets the '
            "bound, where another framework's pins forbid it, or where no tabled build runs on the GPU: then install "
            "a PyTorch build whose architectures include this GPU's (another CUDA variant from PyTorch's index; an "
            "older CUDA for an older GPU), or build PyTorch with TORCH_CUDA_ARCH_LIST naming it."
        ),
        sources=(
            "torch.cuda.get_arch_list(): 'Return list CUDA architectures this library was compiled for': "
            "https://pytorch.org/docs/stable/generated/torch.cuda.get_arch_list",
            "NVIDIA, 'CUDA Pro Tip: Understand Fat Binaries and JIT Caching': SASS for the GPU's architecture, else "
            "PTX compiled just in time: https://developer.nvidia.com/blog/cuda-pro-tip-understand-fat-binaries-jit-caching",
            "CUDA Runtime API, cudaError: cudaErrorNoKernelImageForDevice (209): "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
            "PyTorch, 'Start Locally': the CUDA variants to choose from: https://pytorch.org/get-started",
            "The torch wheels on PyPI, their CUDAConfig.h NVCC_FLAGS_EXTRA: sm_50 to sm_90 in 2.1.0 to 2.7.1, sm_70 "
            "to sm_120 in 2.8.0 to 2.10.0 (cu128), sm_75 to sm_120 from 2.11.0 (cu130) (read into each wheel, "
            "'torch-pypi-wheels'): https://pypi.org/project/torch/#files",
        ),
    ),
    "framework-check-skipped": Explanation(
        meaning=(
            "The framework would refuse the cuDNN (or CUDA library) it loads by its own version check, and runs "
            "only because an environment variable it documents switches that check off: "
            "PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1 for PyTorch's cuDNN check (which also skips its compute "
            "capability check when the versions disagree), JAX_SKIP_CUDA_CONSTRAINTS_CHECK (any non-empty value) "
            "for JAX's _check_cuda_versions. The import then succeeds, but what the check guards against is still "
            "there: JAX's documentation says older versions 'may lead to errors, or incorrect results'. XLA's own "
            "cuDNN rule is not switched off by JAX's variable, and stays an error."
        ),
        confirm=(
            "$ env | grep -E 'PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK|JAX_SKIP_CUDA_CONSTRAINTS_CHECK'  # the switch",
            "$ pytest-cudnn doctor -v  # the cuDNN copy the framework loads and its build's version",
        ),
        fix=(
            "Unset the variable and give the framework the libraries its check accepts (the pins of its wheel); "
            "keep the switch only for an experiment whose results are not trusted."
        ),
        sources=(
            "JAX installation guide: 'Setting the JAX_SKIP_CUDA_CONSTRAINTS_CHECK environment variable will disable "
            "the check, but using older versions of CUDA may lead to errors, or incorrect results': "
            "https://docs.jax.dev/en/latest/installation.html",
            'torch/backends/cudnn/__init__.py: \'if os.environ.get("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK", "0") '
            '== "1": return True\': https://github.com/pytorch/pytorch/blob/main/torch/backends/cudnn/__init__.py',
        ),
    ),
    "framework-ptx-newer-than-driver": Explanation(
        meaning=(
            "The framework's build has no SASS for this GPU, only PTX, and that PTX was made by a CUDA toolkit newer "
            "than the newest CUDA the driver supports. Minor-version compatibility lets a CUDA 13.5 runtime load on "
            "an R580 driver (CUDA 13.0), but it does not cover PTX: the driver's JIT compiler cannot compile PTX "
            "from a newer toolkit, and the first kernel launch fails with cudaErrorUnsupportedPtxVersion (222, 'the "
            "PTX was generated by a compiler newer than what is supported by the CUDA driver and PTX JIT "
            "compiler'). The doctor compares the CUDA the framework was built with to the driver's "
            "(cuDriverGetVersion, or NVML's)."
        ),
        confirm=(
            "$ nvidia-smi  # 'CUDA Version' in the header: the newest CUDA the driver supports",
            '$ python -c "import torch; print(torch.version.cuda, torch.cuda.get_arch_list())"  # the build\'s CUDA '
            "and its GPU code: compute_XY entries only, none sm_XY of this GPU",
            "$ cuobjdump --list-ptx LIBRARY.so  # the PTX a library carries",
        ),
        fix=(
            "Upgrade the driver to one that supports the framework's CUDA (nvidia-smi's 'CUDA Version' at least the "
            "build's), or install a build that carries SASS for this GPU's compute capability."
        ),
        sources=(
            "NVIDIA CUDA Compatibility guide, 'Minor Version Compatibility', 'Application Considerations': "
            "'Applications that compile device code to PTX will not work on older drivers. If the application "
            "requires PTX then administrators have to upgrade the installed driver' (as copied in public "
            "repositories): https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
            "CUDA Runtime API, enum cudaError: cudaErrorUnsupportedPtxVersion = 222: "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        ),
    ),
    "framework-ptx-only": Explanation(
        meaning=(
            "No SASS in the PyTorch build fits this GPU, but PTX for an older or equal compute capability does: the "
            "driver compiles PyTorch's kernels just in time when they are first used. Tests pass, but the first "
            "GPU work of a process can take minutes (tests with timeouts may exceed them) until the compiled code "
            "is in the driver's JIT cache."
        ),
        confirm=(
            '$ python -c "import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())"',
            "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
        ),
        fix=(
            "Expect a slow first start; raise CUDA_CACHE_MAXSIZE so the JIT cache keeps the compiled kernels (and "
            "keep CUDA_CACHE_PATH on a persistent disk in CI), or install a build with SASS for this GPU."
        ),
        sources=(
            "NVIDIA, 'CUDA Pro Tip: Understand Fat Binaries and JIT Caching': "
            "https://developer.nvidia.com/blog/cuda-pro-tip-understand-fat-binaries-jit-caching",
            "CUDA C++ Programming Guide, 'CUDA Environment Variables' (CUDA_CACHE_MAXSIZE, CUDA_CACHE_PATH): "
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
            "torch.cuda.get_arch_list(): https://pytorch.org/docs/stable/generated/torch.cuda.get_arch_list",
        ),
    ),
    # Wheels ---------------------------------------------------------------------------------------------------
    "wheel-files-overwritten": Explanation(
        meaning=(
            "A file a framework loads from an nvidia-* wheel folder is not the file the RECORD of the distribution "
            "that installed it lists (its size or sha256 differ): another wheel that writes the same paths was "
            "installed after it. nvidia-cudnn-cu12 and nvidia-cudnn-cu13 both write nvidia/cudnn/lib (as NCCL, "
            "cuSPARSE, cuRAND ... wheels do), and pip lets the last one win without a word. 'pip show' still "
            "reports the first distribution's version and 'pip check' compares versions only, so neither shows it; "
            "the framework loads the other build (the evidence names its version and CUDA), which the cuDNN and "
            "runtime findings judge."
        ),
        confirm=(
            "$ pip show -f nvidia-cudnn-cu12 nvidia-cudnn-cu13 2>/dev/null | grep -E '^(Name|Version)|libcudnn.so'",
            "$ grep libcudnn.so.9 \"$(pip show nvidia-cudnn-cu13 | sed -n 's/^Location: //p')\""
            "/nvidia_cudnn_cu13-*.dist-info/RECORD",
            '$ python -c "import base64, hashlib, sys; print(base64.urlsafe_b64encode(hashlib.sha256(open(sys.argv[1], '
            "'rb').read()).digest()).rstrip(b'=').decode())\" <file>  # compare with the RECORD's sha256=",
            "$ pip check  # passes all the same",
        ),
        fix=(
            "Reinstall the overwritten distribution last: pip uninstall the wheel that wrote over it, then pip "
            "install --force-reinstall --no-deps <distribution>==<version>. Where two installed frameworks pin the "
            "two builds of the same files, they cannot share an environment: give each its own virtual environment."
        ),
        sources=(
            "pypa/pip#4625: pip silently overwrites files another installed distribution wrote at the same path; "
            "the result depends on install order: https://github.com/pypa/pip/issues/4625",
            "PyPA, 'Recording installed projects': RECORD lists each installed file with its hash and size: "
            "https://packaging.python.org/specifications/recording-installed-packages/",
            "pip check: 'Verify installed packages have compatible dependencies' (requirements, not files): "
            "https://pip.pypa.io/en/stable/cli/pip_check/",
        ),
    ),
    # The catalog's further libraries (compat/catalog.py: NCCL) ---------------------------------------------------
    "library-probe-failed": Explanation(
        meaning=(
            "A copy of a library of the catalog (NCCL) could not be asked its version: loading it by absolute path "
            "in the probe's child process failed (a damaged file, a missing dependency), or its version call "
            "crashed or hung and the child was killed. The copy is still listed, with the CUDA its file says it "
            "was built for where that could be read. A requirement on it (requires_nccl) fails, since its version "
            "is unknown; the frameworks are judged as before, since nothing but their collectives uses it."
        ),
        confirm=(
            "$ ldd <path>  # a 'not found' names the missing dependency",
            '$ python -c "import ctypes, sys; v = ctypes.c_int(); lib = ctypes.CDLL(sys.argv[1]); '
            'print(lib.ncclGetVersion(ctypes.byref(v)), v.value)" <path>',
            "$ pytest-cudnn doctor -v  # the copy, and what the probe said",
        ),
        fix=(
            "Reinstall the library: pip install --force-reinstall --no-deps nvidia-nccl-cu12 (or -cu13, the one "
            "your framework pins), or remove the broken copy from the folders the loader searches."
        ),
        sources=(
            "NVIDIA/nccl src/nccl.h.in: 'ncclResult_t ncclGetVersion(int *version)' returns NCCL_VERSION_CODE: "
            "https://github.com/NVIDIA/nccl/blob/master/src/nccl.h.in",
        ),
    ),
    "library-pin-not-met": Explanation(
        meaning=(
            "A framework's METADATA pins a version of a library's wheel (torch 2.14.1: nvidia-nccl-cu13==2.30.7), "
            "and the copy its own search loads answers another version. The usual cause: the wheels of one library "
            "for CUDA 12 and CUDA 13 (nvidia-nccl-cu12, nvidia-nccl-cu13) write the same file, nvidia/nccl/lib/"
            "libnccl.so.2, and the one installed last wins; 'pip check' compares versions, not files, and passes. "
            "A copy older than the pin lacks symbols the framework links: PyTorch, which links NCCL, then fails at "
            "import with 'undefined symbol: ncclCommRegister' (or ncclCommResume); JAX and others, which load it "
            "only for collectives, fail there. That is an error, and stops a framework that links it. A copy newer "
            "than an exact pin is a warning: it is not the build the framework was tested with."
        ),
        confirm=(
            "$ pip list 2>/dev/null | grep -i nccl  # two CUDA majors of one library",
            "$ strings \"$(python -c 'import nvidia.nccl; print(nvidia.nccl.__path__[0])')/lib/libnccl.so.2\" "
            "| grep 'NCCL version'",
            "$ pip show torch | grep -i requires; grep -i nccl $(pip show -f torch | sed -n 's/^Location: //p')"
            "/torch-*.dist-info/METADATA",
        ),
        fix=(
            "Reinstall the wheel the framework pins last: pip install --force-reinstall --no-deps "
            "'nvidia-nccl-cu13==<pinned>' (the finding's fix names it). Frameworks that pin the two CUDA majors of one "
            "library cannot share an environment: give each its own virtual environment."
        ),
        sources=(
            "pytorch/pytorch#186591 'undefined symbol: ncclCommResume': 'You are mixing various libraries including: "
            "nvidia-nccl-cu12==2.29.3, nvidia-nccl-cu13==2.29.7': https://github.com/pytorch/pytorch/issues/186591",
            "pytorch/pytorch#119932 'undefined symbol: ncclCommRegister': 'you have another package that also "
            "provides the NCCL library, but the versions are incompatible': "
            "https://github.com/pytorch/pytorch/issues/119932",
        ),
    ),
    "library-cuda-mismatch": Explanation(
        meaning=(
            "The copy of a library a framework loads was built for another CUDA major than the framework: NCCL's "
            "build writes 'NCCL version 2.32.3+cuda12.9' into the library, and a framework built for CUDA 13 loads "
            "it. The wheels of both CUDA majors write one file, so installing a second framework (or its extra) "
            "silently swaps the first one's copy. NCCL links its own CUDA runtime, so the copy still runs where "
            "the driver supports its CUDA; but it is not the build the framework pins, and its version follows "
            "whichever wheel was installed last (see library-pin-not-met)."
        ),
        confirm=(
            "$ strings <path> | grep 'NCCL version'  # +cudaX.Y: the CUDA it was built for",
            "$ pip list 2>/dev/null | grep -i nccl",
        ),
        fix=(
            "Keep one CUDA major's wheel of the library per environment: reinstall the one the framework pins "
            "last (pip install --force-reinstall --no-deps), or put frameworks of different CUDA majors in separate "
            "virtual environments."
        ),
        sources=(
            'NVIDIA/nccl src/init.cc: \'#define VERSION_STRING "NCCL version " ... "+cuda" STR(CUDA_MAJOR) "." '
            "STR(CUDA_MINOR)', written so that 'strings' on the library reveals it: "
            "https://github.com/NVIDIA/nccl/blob/master/src/init.cc",
            "pytorch/pytorch#186591: nvidia-nccl-cu12 and nvidia-nccl-cu13 installed together: "
            "https://github.com/pytorch/pytorch/issues/186591",
        ),
    ),
    "library-driver-too-old": Explanation(
        meaning=(
            "A library of the catalog (NCCL) was built for a CUDA release the installed driver does not support: "
            "its file says 'NCCL version 2.21.5+cuda12.4', and the driver is older than the oldest that runs CUDA "
            "12 applications (525.60.13 for CUDA 12, 580.65.06 for CUDA 13, by minor-version compatibility). NCCL "
            "links its own CUDA runtime, which then fails with cudaErrorInsufficientDriver (35) at the first "
            "communicator: every collective fails, while single-GPU work of the frameworks may still run. So it "
            "stops no framework, and fails requires_nccl."
        ),
        confirm=(
            "$ nvidia-smi --query-gpu=driver_version --format=csv,noheader",
            "$ strings <path> | grep 'NCCL version'",
            "$ NCCL_DEBUG=INFO python -c 'import torch.distributed'  # NCCL's own log names the CUDA error",
        ),
        fix=(
            "Upgrade the driver to at least the floor the finding names, or install the library built for the CUDA "
            "the driver supports (nvidia-nccl-cu12 rather than -cu13 on an R5xx driver below 580)."
        ),
        sources=(
            "NVIDIA CUDA Compatibility, 'Minor Version Compatibility': applications built with any minor release "
            "of a major run on a driver of that major's floor: "
            "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
            "NVIDIA/nccl src/init.cc (VERSION_STRING, the CUDA release the build was made with): "
            "https://github.com/NVIDIA/nccl/blob/master/src/init.cc",
        ),
    ),
    "library-release-mismatch": Explanation(
        meaning=(
            "A framework loads two libraries that must be of one release, and they are not: cuBLAS calls into the "
            "cuBLASLt of its own release (libcublas.so.12 lists libcublasLt.so.12 in its DT_NEEDED and finds it by "
            "its RUNPATH $ORIGIN, which LD_LIBRARY_PATH and an earlier load beat). With another release's cuBLASLt "
            "the import fails with 'undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11', or a "
            "GEMM fails with CUBLAS_STATUS_INVALID_VALUE. Each version here is the library's own answer "
            "(cublasGetProperty, cublasLtGetProperty), asked in the probe's child."
        ),
        confirm=(
            "$ pytest-cudnn doctor -v  # each copy, its version and the CUDA it was built with",
            '$ python -c "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); v = ctypes.c_int(); '
            'print([lib.cublasLtGetProperty(t, ctypes.byref(v)) or v.value for t in (0, 1, 2)])" <libcublasLt path>',
            "$ echo $LD_LIBRARY_PATH; ldconfig -p | grep cublasLt",
        ),
        fix=(
            "Give the framework both libraries from one release: reinstall the wheel that ships both "
            "(nvidia-cublas-cu12, nvidia-cublas), and take any other copy of either off LD_LIBRARY_PATH and out of the "
            "ldconfig cache."
        ),
        sources=(
            "pytorch/pytorch#174320 '[CUDA] Fix cuBLAS/cuBLASLt library version mismatch': the system libcublasLt.so "
            "used by the pip-installed libcublas.so gives 'undefined symbol ... version libcublasLt.so.11' or "
            "CUBLAS_STATUS_INVALID_VALUE: https://github.com/pytorch/pytorch/pull/174320",
            "pytorch/pytorch#91067: https://github.com/pytorch/pytorch/issues/91067",
            "cuBLAS Library, cublasGetProperty and cublasLtGetProperty: https://docs.nvidia.com/cuda/cublas/index.html",
        ),
    ),
    # Windows --------------------------------------------------------------------------------------------------
    "windows-tensorflow-no-gpu": Explanation(
        meaning=(
            "TensorFlow on native Windows is a CPU-only build from release 2.11: GPU support on native Windows "
            "ended with 2.10. The installed TensorFlow is such a release, so it will not use the GPU and its GPU "
            "tests skip."
        ),
        confirm=('$ python -c "import tensorflow as tf; print(tf.__version__, tf.test.is_built_with_cuda())"',),
        fix=(
            "Run TensorFlow in WSL2 (pip install 'tensorflow[and-cuda]' there), or pin tensorflow<2.11 with the "
            "CUDA 11.2 and cuDNN 8.1 it was built with."
        ),
        sources=(
            "TensorFlow, 'Build from source on Windows': 'GPU support on native-Windows is only available for 2.10 "
            "or earlier versions, starting in TF 2.11, CUDA build is not supported for Windows': "
            "https://www.tensorflow.org/install/source_windows#gpu",
            "TensorFlow, 'Install TensorFlow with pip', Windows Native: 'Anything above 2.10 is not supported on "
            "the GPU on Windows Native': https://www.tensorflow.org/install/pip",
        ),
    ),
    "windows-dll-path-only": Explanation(
        meaning=(
            "A CUDA runtime or cuDNN DLL is reachable only through PATH: it is not in the application's folder, "
            "System32, or a folder added with os.add_dll_directory. From Python 3.8, the DLL dependencies of "
            "extension modules and DLLs loaded with ctypes are no longer searched on PATH, so Python code that loads "
            "it by name fails ('Could not load dynamic library', FileNotFoundError), although a command-line "
            "program started from the same shell finds it."
        ),
        confirm=(
            "$ where cudart64_12.dll  # cmd.exe: the folders on PATH that hold it (cudnn64_9.dll for cuDNN)",
            "$ python -c \"import ctypes; ctypes.CDLL('cudart64_12.dll')\"  # fails when only PATH holds it",
        ),
        fix=(
            "Call os.add_dll_directory(<the folder>) before the library (or the framework that loads it) is "
            "loaded, or install the DLLs where Python searches (the framework's own package folder)."
        ),
        sources=(
            "Python, os.add_dll_directory: 'Add a path to the DLL search path. This search path is used when "
            "resolving dependencies for imported extension modules ... and also by ctypes': "
            "https://docs.python.org/3/library/os.html#os.add_dll_directory",
            "python/cpython#80266 (bpo-36085, 'Enable better DLL resolution'), the Python 3.8 change to DLL "
            "search: https://github.com/python/cpython/issues/80266",
            "tensorflow/tensorflow#48868: 'Could not load dynamic library cudart64_110.dll' with the folder on "
            "PATH, solved by os.add_dll_directory before importing TensorFlow: "
            "https://github.com/tensorflow/tensorflow/issues/48868",
        ),
    ),
}


EXPLANATIONS: dict[str, Explanation] = {**_HOST, **_LIBRARIES}


def explanation(code: str) -> Explanation | None:
    """The explanation of ``code``; None for a code that is not one of CODES."""
    return EXPLANATIONS.get(code)
