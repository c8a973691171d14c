"""What kind of Linux host this is, from its files: WSL2, a Jetson (Tegra), and the NVIDIA GPUs on the PCI bus.

Read, never opened as devices, each file through a bounded read; never from uname, so that a host simulated by
overlaying these files shows the same. Where each fact comes from:

- WSL2: a kernel release naming Microsoft (/proc/sys/kernel/osrelease, "5.15.153.1-microsoft-standard-WSL2"), the
  Windows driver's user-mode libraries in /usr/lib/wsl/lib, and the GPU paravirtualisation device /dev/dxg (there is
  no NVIDIA kernel module and no /dev/nvidia* there by design): compat/sources.py "cuda-on-wsl".
- Tegra: /etc/nv_tegra_release, the L4T release ("# R36 (release), REVISION: 4.0, ..."): "jetson-l4t".
- The PCI bus: /sys/bus/pci/devices/<address>/{vendor,class,device}, NVIDIA's vendor id 0x10de with the class of a
  VGA (0x0300) or 3D (0x0302) controller, named by the driver's /proc/driver/nvidia/gpus/<address>/information
  ("Model:") or the host's pci.ids: "pci-ids".
"""

from __future__ import annotations

import os
import re

from ..environment import PciGpu, Platform
from ..files import FileRefused, read_regular

__all__ = ["parse_tegra_release", "pci_ids_model", "read_pci_gpus", "read_platform"]

OSRELEASE = "/proc/sys/kernel/osrelease"
WSL_LIB = "/usr/lib/wsl/lib"
TEGRA_RELEASE = "/etc/nv_tegra_release"
PCI_DEVICES = "/sys/bus/pci/devices"
NVIDIA_PROC_GPUS = "/proc/driver/nvidia/gpus"
PCI_IDS = ("/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids", "/usr/share/pci.ids")

_SMALL = 4096
_PCI_IDS_LIMIT = 8 * 2**20  # pci.ids is about 1.4 MB
_MOST_NAMES = 32  # the names kept from /usr/lib/wsl/lib
_MOST_PCI = 1024  # the PCI functions looked at; a large server has a few hundred
_NVIDIA = "0x10de"
_DISPLAY_CLASSES = ("0x0300", "0x0302")  # VGA compatible controller, 3D controller
_DRIVER_LIBRARY = re.compile(r"lib(cuda|nvidia|dxcore|nvcuvid|nvoptix)[\w.+-]*\.so[\w.]*", re.ASCII)
_RELEASE = re.compile(r"[!-~]{1,128}", re.ASCII)
_TEGRA = re.compile(r"^#\s*R(\d{1,4})\s*\(release\),\s*REVISION:\s*(\d{1,4}(?:\.\d{1,4}){0,2})", re.M | re.ASCII)
_BUS = re.compile(r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", re.ASCII)
_HEX_ID = re.compile(r"0x([0-9a-fA-F]{4})", re.ASCII)
_MODEL = re.compile(r"^Model:[ \t]*([ -~]{1,96}?)[ \t]*$", re.M | re.ASCII)


def _small(path: str) -> str | None:
    try:
        return read_regular(path, _SMALL, whole=False).decode("ascii", "replace")
    except (OSError, FileRefused):
        return None


def parse_tegra_release(text: str) -> str | None:
    """The L4T release in /etc/nv_tegra_release's first line, as major.revision.

    >>> parse_tegra_release("# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64\\n")
    '36.4.0'
    >>> parse_tegra_release("R36") is None
    True
    """
    match = _TEGRA.search(text)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _wsl_libraries(folder: str) -> tuple[str, ...] | None:
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    return tuple(sorted(name for name in names if _DRIVER_LIBRARY.fullmatch(name)))[:_MOST_NAMES]


def _exists(path: str) -> bool | None:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    return True


def read_platform(osrelease: str = OSRELEASE, wsl_lib: str = WSL_LIB, tegra: str = TEGRA_RELEASE) -> Platform:
    """Never raises: what cannot be read is None."""
    release = (_small(osrelease) or "").strip()
    tegra_text = _small(tegra)
    return Platform(
        kernel_release=release if _RELEASE.fullmatch(release) else None,
        wsl_libraries=_wsl_libraries(wsl_lib),
        dxg=_exists("/dev/dxg"),
        tegra_release=parse_tegra_release(tegra_text) if tegra_text else None,
    )


def pci_ids_model(text: str, device: str) -> str | None:
    """The name pci.ids gives NVIDIA's device ``device`` ("1db4"): the line under vendor 10de.

    >>> pci_ids_model("10de  NVIDIA Corporation\\n\\t1db4  GV100GL [Tesla V100 PCIe 16GB]\\n10df  Emulex\\n", "1db4")
    'GV100GL [Tesla V100 PCIe 16GB]'
    """
    vendor = re.search(r"^10de\s", text, re.M)
    if vendor is None:
        return None
    section_end = re.search(r"^[0-9a-f]{4}\s", text[vendor.end() :], re.M)
    section = text[vendor.end() : vendor.end() + section_end.start() if section_end else len(text)]
    line = re.search(rf"^\t{re.escape(device)}\s+([ -~]{{1,96}})$", section, re.M | re.I)
    return line.group(1).strip() if line else None


def _pci_ids() -> tuple[str, str] | None:
    for path in PCI_IDS:
        try:
            return path, read_regular(path, _PCI_IDS_LIMIT).decode("utf-8", "replace")
        except (OSError, FileRefused):
            continue
    return None


def read_pci_gpus(devices: str = PCI_DEVICES, proc_gpus: str = NVIDIA_PROC_GPUS) -> tuple[PciGpu, ...] | None:
    """The NVIDIA display and 3D controllers on the PCI bus, in address order; None where /sys cannot be listed.
    Read only where NVML lists no GPU, so a working host never pays for it."""
    try:
        addresses = sorted(name for name in os.listdir(devices) if _BUS.fullmatch(name))[:_MOST_PCI]
    except OSError:
        return None
    found: list[tuple[str, str]] = []
    for address in addresses:
        folder = os.path.join(devices, address)
        if (_small(os.path.join(folder, "vendor")) or "").strip().lower() != _NVIDIA:
            continue
        if not (_small(os.path.join(folder, "class")) or "").strip().lower().startswith(_DISPLAY_CLASSES):
            continue
        number = _HEX_ID.fullmatch((_small(os.path.join(folder, "device")) or "").strip())
        if number is not None:
            found.append((address, number.group(1).lower()))
    ids: tuple[str, str] | bool | None = False  # read once, and only when the driver's /proc does not name one
    gpus = []
    for address, device in found:
        model, source = None, None
        information = os.path.join(proc_gpus, address, "information")
        named = _MODEL.search(_small(information) or "")
        if named:
            model, source = named.group(1), information
        else:
            if ids is False:
                ids = _pci_ids()
            if isinstance(ids, tuple) and (model := pci_ids_model(ids[1], device)) is not None:
                source = ids[0]
        gpus.append(PciGpu(address, device, model, source))
    return tuple(gpus)
