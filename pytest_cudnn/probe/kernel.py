"""The NVIDIA kernel driver as the host's files show it: the module's version in /proc and the /dev/nvidia* device
nodes. Read, never opened as devices: the version file through a bounded read, /dev by listing its names.

The user-mode driver that answers CUDA (libcuda.so.1, probed in the child) may be another driver's: a cuda-compat
package's newer libcuda over an older kernel module is CUDA forward compatibility. These facts are the kernel's
side of that comparison, and a container's evidence: without the NVIDIA container toolkit a container has no
/dev/nvidia* nodes, and without a loaded kernel module /proc has no driver/nvidia folder.
"""

from __future__ import annotations

import os
import re

from ..environment import KernelDriver
from ..files import FileRefused, read_regular

__all__ = ["PROC_VERSION", "parse_module_version", "read_kernel_driver"]

PROC_VERSION = "/proc/driver/nvidia/version"
_PROC_LIMIT = 4096  # the file is two lines, about 200 bytes

# "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"; the open kernel modules
# say "NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build ...".
_MODULE = re.compile(r"^NVRM version:.*?Kernel Module\b.*?\s(\d{1,4}(?:\.\d{1,4}){1,3})(?=\s|$)", re.M | re.ASCII)


def parse_module_version(text: str) -> str | None:
    """The kernel module's version in the text of /proc/driver/nvidia/version, as it writes it.

    >>> parse_module_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 2023\\n")
    '535.104.05'
    """
    match = _MODULE.search(text)
    return match.group(1) if match else None


def read_kernel_driver(proc_version: str = PROC_VERSION, dev: str = "/dev") -> KernelDriver:
    """Never raises: each fact that cannot be read is None, with why where that matters."""
    version: str | None = None
    reason: str | None = None
    try:
        text = read_regular(proc_version, _PROC_LIMIT, whole=False).decode("utf-8", "replace")
    except FileNotFoundError:
        reason = f"{proc_version} does not exist: no NVIDIA kernel module is loaded where this runs"
    except (OSError, FileRefused) as error:
        reason = f"{proc_version}: {error.strerror if isinstance(error, OSError) and error.strerror else error}"
    else:
        version = parse_module_version(text)
        if version is None:
            reason = f"{proc_version} names no kernel module version"
    try:
        nodes: tuple[str, ...] | None = tuple(sorted(name for name in os.listdir(dev) if name.startswith("nvidia")))
    except OSError:
        nodes = None
    return KernelDriver(module_version=version, module_reason=reason, device_nodes=nodes)
