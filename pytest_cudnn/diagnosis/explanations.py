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
            "'NVML library version: 580.159', while /proc/driver/nvidia/version shows kernel module 580.126.09: "
            "https://github.com/cpnr/computing/issues/109",
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
            "A newer libcuda (CUDA forward compatibility) runs over a kernel driver whose branch NVIDIA's data "
            "center driver table lists as end of life (R550, R470, ...: every branch below the newest it names that "
            "it does not list as supported), and no CUDA runtime could use the GPU through it. NVIDIA supports "
            "forward compatibility on its supported branches only (Long Term Support and Production Branches, such "
            "as R535, R570 and R580): on an ended branch the compat package is not supported."
        ),
        confirm=(
            "$ cat /proc/driver/nvidia/version  # the kernel driver's version: its first number is the branch (R550)",
            "$ python3 -c \"import ctypes; cu = ctypes.CDLL('libcuda.so.1'); v = ctypes.c_int(); print('cuInit', "
            "cu.cuInit(0), 'CUDA', cu.cuDriverGetVersion(ctypes.byref(v)), v.value)\"  # the compat libcuda's answer",
            "$ pytest-cudnn doctor  # the cudaGetDeviceCount status each runtime returned",
        ),
        fix=(
            "Move the host's kernel driver to a supported branch (R535, R570, R580 or newer) and use the compat "
            "package there, or upgrade the driver to one that runs the needed CUDA by itself; or take the compat "
            "folder off the loader path and use a framework build for the CUDA the kernel driver supports."
        ),
        sources=(
            "NVIDIA Data Center GPU Driver documentation, 'Supported Drivers and CUDA Toolkit Versions': R535 and "
            "R580 Long Term Support Branch, R570 Production Branch, 'All other previous driver branches not listed "
            "in the table above (such as R575, R565, R560, R550, R525, ...) are end of life': "
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
            "(CUDA cannot run), without 'utility' no libnvidia-ml.so.1 (NVML and nvidia-smi). An empty variable "
            "means 'utility' alone; 'all' brings everything. The GPUs may be there: the driver libraries to use them "
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
            "NVIDIA container runtime, NVIDIA_DRIVER_CAPABILITIES: 'controls which driver libraries/binaries will "
            "be mounted inside the container'; 'compute: required for CUDA and OpenCL applications', 'utility: "
            "required for using nvidia-smi and NVML', 'empty or unset: use default driver capability: utility': "
            "https://pkg.go.dev/github.com/ymaxgit/nvidia-container-runtime",
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
            "NVIDIA container runtime, NVIDIA_DRIVER_CAPABILITIES: 'compute: required for CUDA and OpenCL "
            "applications': https://pkg.go.dev/github.com/ymaxgit/nvidia-container-runtime",
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
_LIBRARIES: dict[str, Explanation] = {}


EXPLANATIONS: dict[str, Explanation] = {**_HOST, **_LIBRARIES}


def explanation(code: str) -> Explanation | None:
    """The explanation of ``code``; None for a code that is not one of CODES."""
    return EXPLANATIONS.get(code)
