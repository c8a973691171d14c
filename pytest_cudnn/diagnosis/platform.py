"""The host's platform as a cause: WSL2 (the Windows driver's libraries in /usr/lib/wsl/lib, the GPU through
/dev/dxg), a Jetson (Tegra, whose GPU NVML does not describe), and NVIDIA GPUs on the PCI bus that the driver does
not list (from R590 it ignores Maxwell, Pascal and Volta GPUs).

Each rule reads :attr:`Environment.platform`, which the probe fills from the host's own files (probe/platform.py);
a snapshot without it says nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..compat.cuda import DROPPED_FROM, driver_branch
from ..environment import Environment, PciGpu, Platform, State
from .model import Finding, Severity, cite, make_finding

__all__ = ["installed_driver", "platform_evidence", "platform_rules", "unlisted_gpus"]

WSL_LIB = "/usr/lib/wsl/lib"
_LIBCUDA_VERSION = re.compile(r"libcuda\.so\.(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)$", re.ASCII)


def _wsl(env: Environment) -> tuple[Platform, int] | None:
    platform = env.platform
    if platform is None or platform.wsl is None:
        return None
    return platform, platform.wsl


def installed_driver(env: Environment) -> tuple[str, str] | None:
    """The installed driver's version and where it was read: NVML's answer, else the loaded kernel module's, else
    the version libcuda.so.1's file is named for (a driver's libcuda links to libcuda.so.<version>)."""
    if env.driver.version:
        return env.driver.version, "NVML"
    if env.kernel is not None and env.kernel.module_version:
        return env.kernel.module_version, "/proc/driver/nvidia/version"
    name = (env.cuda_driver.real_path or "").rsplit("/", 1)[-1]
    match = _LIBCUDA_VERSION.match(name)
    return (match.group(1), f"the name of {env.cuda_driver.real_path}") if match else None


def _bus(text: str | None) -> str:
    """A PCI address in one spelling: NVML writes a domain of eight digits ("00000000:18:00.0"), /sys four."""
    parts = (text or "").lower().split(":")
    if len(parts) != 3:
        return ""
    try:
        return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
    except ValueError:
        return ""


def unlisted_gpus(env: Environment) -> tuple[PciGpu, ...]:
    """The NVIDIA GPUs on the PCI bus that NVML does not list (all of them where NVML lists none or failed)."""
    platform = env.platform
    if platform is None or not platform.pci_gpus:
        return ()
    listed = {_bus(gpu.pci_bus_id) for gpu in env.driver.gpus}
    return tuple(gpu for gpu in platform.pci_gpus if _bus(gpu.bus_id) not in listed)


def _pci_text(gpus: tuple[PciGpu, ...]) -> str:
    shown = [f"{gpu.bus_id} (10de:{gpu.device_id}{': ' + gpu.model if gpu.model else ''})" for gpu in gpus[:8]]
    more = f" and {len(gpus) - 8} more" if len(gpus) > 8 else ""
    return ", ".join(shown) + more


def platform_evidence(env: Environment) -> tuple[str, ...]:
    """What the platform says about a driver or GPU that is missing: WSL2's driver evidence, the L4T release, the
    GPUs on the PCI bus that NVML does not list."""
    said = []
    wsl = _wsl(env)
    if wsl is not None:
        platform, version = wsl
        dxg = "not read" if platform.dxg is None else "present" if platform.dxg else "absent"
        said.append(
            f"WSL{version if version == 2 else ' 1'} (kernel {platform.kernel_release}): the Windows driver serves "
            f"CUDA through /dev/dxg ({dxg}) and the libraries in {WSL_LIB} ("
            + (", ".join(platform.wsl_libraries) if platform.wsl_libraries else "none")
            + "); no NVIDIA kernel module or /dev/nvidia* node is expected there"
        )
    if env.platform is not None and env.platform.tegra_release:
        said.append(f"a Jetson/Tegra host: L4T R{env.platform.tegra_release} (/etc/nv_tegra_release)")
    unlisted = unlisted_gpus(env)
    if unlisted:
        said.append(f"NVIDIA GPUs on the PCI bus that NVML does not list: {_pci_text(unlisted)}")
    return tuple(said)


def platform_rules(env: Environment) -> Iterator[Finding]:
    yield from _wsl_rules(env)
    yield from _dropped_rules(env)
    yield from _tegra_rules(env)


def _wsl_rules(env: Environment) -> Iterator[Finding]:
    wsl = _wsl(env)
    if wsl is None:
        return
    platform, version = wsl
    evidence = (*platform_evidence(env), cite("cuda-on-wsl"))
    libcuda = "libcuda.so.1" in (platform.wsl_libraries or ())
    if version == 1 or platform.dxg is False or not libcuda:
        summary = (
            "WSL 1 gives Linux no GPU: CUDA runs in WSL 2 only"
            if version == 1
            else "WSL2 without /dev/dxg: Windows gives this Linux no GPU"
            if platform.dxg is False
            else f"WSL2 without the Windows driver's libcuda.so.1 in {WSL_LIB}: no Windows NVIDIA driver serves it"
        )
        yield make_finding(
            "wsl-no-gpu",
            Severity.ERROR,
            "driver",
            summary,
            evidence,
            "in Windows PowerShell: wsl --set-version <distribution> 2"
            if version == 1
            else "install or update the NVIDIA driver on Windows (it alone serves CUDA in WSL2), run wsl --update "
            "and wsl --shutdown, and start the distribution again; in a container, pass --gpus all",
        )
        return
    found = [(what, path) for what, path in _driver_libraries(env) if not path.startswith(WSL_LIB + "/")]
    if found:
        yield make_finding(
            "wsl-linux-driver-installed",
            Severity.ERROR,
            "driver",
            "a Linux NVIDIA driver installed inside WSL2 shadows the Windows driver's libraries: "
            + ", ".join(f"{what} from {path}" for what, path in found),
            (*evidence, f"the Windows driver's copies in {WSL_LIB}: {', '.join(platform.wsl_libraries or ())}"),
            "remove the Linux driver's packages from the distribution (apt: sudo apt-get remove --purge "
            "'^libnvidia-.*' '^nvidia-driver-.*'; keep the CUDA toolkit), then sudo ldconfig; in WSL2 only the "
            "Windows driver serves CUDA",
        )
    missing = [what for what, state in _driver_states(env) if state is not State.FOUND]
    if missing and not found:
        yield make_finding(
            "wsl-libraries-not-on-loader-path",
            Severity.ERROR,
            "driver",
            f"{' and '.join(missing)} not found, though {WSL_LIB} holds the Windows driver's copies: that folder is "
            "not on the loader's path",
            evidence,
            f"echo {WSL_LIB} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig (or export "
            f"LD_LIBRARY_PATH={WSL_LIB}:$LD_LIBRARY_PATH); do not install a Linux driver to get them",
        )


def _driver_states(env: Environment) -> tuple[tuple[str, State], ...]:
    return (("libnvidia-ml.so.1", env.driver.state), ("libcuda.so.1", env.cuda_driver.state))


def _driver_libraries(env: Environment) -> tuple[tuple[str, str], ...]:
    """The driver's libraries as found: NVML's and libcuda's files, links resolved where known."""
    found = []
    if env.driver.state is State.FOUND and env.driver.path:
        found.append(("libnvidia-ml.so.1", env.driver.path))
    if env.cuda_driver.state is State.FOUND and env.cuda_driver.path:
        found.append(("libcuda.so.1", env.cuda_driver.real_path or env.cuda_driver.path))
    return tuple(found)


def _dropping(env: Environment) -> tuple[tuple[PciGpu, ...], str, str] | None:
    """The GPUs on the PCI bus an R590+ driver does not list, with that driver's version and where it was read;
    None where there are none or the driver is older."""
    unlisted = unlisted_gpus(env)
    installed = installed_driver(env)
    if not unlisted or installed is None or (driver_branch(installed[0]) or 0) < DROPPED_FROM:
        return None
    return unlisted, *installed


def _dropped_rules(env: Environment) -> Iterator[Finding]:
    dropping = _dropping(env)
    if dropping is None:
        return
    unlisted, version, where = dropping
    listed = len(env.driver.gpus) if env.driver.state is State.FOUND else 0
    which = (
        f"the GPU at {_pci_text(unlisted)}"
        if len(unlisted) == 1
        else f"{len(unlisted)} GPUs on the PCI bus ({', '.join(gpu.bus_id for gpu in unlisted[:4])}"
        + (", ...)" if len(unlisted) > 4 else ")")
    )
    yield make_finding(
        "driver-dropped-gpu",
        Severity.WARNING if listed else Severity.ERROR,
        "driver",
        f"the NVIDIA driver {version} does not drive {which}: from R590 the driver ignores Maxwell, Pascal and "
        "Volta GPUs",
        (
            f"driver {version}, read from {where}",
            f"NVML lists {listed} GPU{'' if listed == 1 else 's'}"
            if env.driver.state is State.FOUND
            else f"NVML lists no GPU: {env.driver.reason}",
            f"NVIDIA GPUs on the PCI bus that NVML does not list: {_pci_text(unlisted)}",
            cite("driver-architecture-matrix"),
        ),
        "for a Maxwell, Pascal or Volta GPU install the R580 driver branch (NVIDIA's 580.xx legacy driver, the "
        "last that drives them; e.g. the distribution's nvidia-driver-580 package) and reboot; sudo dmesg | grep NVRM "
        "shows 'will ignore this GPU' for each one dropped",
    )


def dropped(env: Environment) -> bool:
    """Whether :func:`_dropped_rules` explains why NVML lists no GPU (the no-gpu and driver-not-loaded findings
    then say nothing more)."""
    return _dropping(env) is not None


def _tegra_rules(env: Environment) -> Iterator[Finding]:
    platform = env.platform
    if platform is None or not platform.tegra_release:
        return
    libcuda = env.cuda_driver
    yield make_finding(
        "tegra-host",
        Severity.INFO,
        "driver",
        f"a Jetson/Tegra host (L4T R{platform.tegra_release}, from /etc/nv_tegra_release): NVML does not describe "
        "its GPU; judged by libcuda",
        (
            f"libcuda: {libcuda.path} (CUDA {libcuda.version}, {libcuda.device_count} device(s))"
            if libcuda.state is State.FOUND
            else f"libcuda: {libcuda.reason}",
            f"NVML: {env.driver.reason}" if env.driver.state is not State.FOUND else "",
            cite("jetson-l4t"),
        ),
        "nothing to do for NVML; the CUDA, cuDNN and framework checks still apply; tegrastats or jtop show the GPU",
    )
