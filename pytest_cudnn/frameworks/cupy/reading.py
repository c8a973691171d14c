"""CuPy as its files describe it, never imported.

Where each fact lives (docs/build-facts.md, measured with cupy-cuda12x 14.2):
* the distribution's name says the CUDA major it was built for: ``cupy-cuda12x``, ``cupy-cuda11x``, ...;
* ``cupy/.data/_wheel.json`` says it too: ``{"cuda": "12.x", ...}``;
* no cuDNN since CuPy 14 (its cuDNN code was removed); the CUDA runtime is linked in statically, so its build's
  CUDA is what the driver is judged against. The other libraries (NVRTC, cuBLAS, ...) are found on first use by
  ``cuda.pathfinder``: :mod:`.pathfinder` gives CuPy's loads.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence

from ..._base.versions import is_pep440
from ...environment import BuildFact, Distribution, FrameworkBuild, State
from ...files import FileRefused, read_regular
from ...probe.distributions import metadata_fields, metadata_of, nvidia_pins, package_site

__all__ = ["probe_cupy"]

_WHEEL_CUDA = re.compile(r"([0-9]{1,3})(?:\.(?:x|[0-9]{1,3}))?")
_DISTRIBUTION_CUDA = re.compile(r"cupy-cuda([0-9]{2,3}?)(?:[0-9]|x)", re.I)


def probe_cupy(search_path: Sequence[str], installed: Sequence[Distribution] = ()) -> FrameworkBuild:
    """Locate ``cupy`` on ``search_path`` (normally sys.path) and read what its files say."""
    found = package_site("cupy", search_path)
    if found is None:
        return FrameworkBuild.absent("cupy")
    location, site = found
    here = [d for d in installed if d.location.rstrip("/") == site.rstrip("/") and d.name.lower().startswith("cupy")]
    distribution = here[0].name if here else None
    version = here[0].version if here and is_pep440(here[0].version) else None
    metadata = metadata_of(site, distribution) if distribution else None
    pins = nvidia_pins(metadata_fields(metadata).get("requires-dist", []), site, installed) if metadata else ()
    problems: list[str] = []
    cuda = _wheel_cuda(os.path.join(location, ".data", "_wheel.json"), problems)
    if cuda is None and distribution and (match := _DISTRIBUTION_CUDA.fullmatch(distribution)):
        cuda = BuildFact(match.group(1), metadata or site, f"its distribution's name, {distribution}")
    return FrameworkBuild(
        "cupy",
        State.FOUND,
        "; ".join(problems) or None,
        distribution,
        version,
        location,
        True if cuda else None,
        cuda,
        None,
        pins,
    )


def _wheel_cuda(path: str, problems: list[str]) -> BuildFact | None:
    """The CUDA major of ``cupy/.data/_wheel.json`` ("12.x" -> "12")."""
    try:
        data = json.loads(read_regular(path, 1 << 16))
    except FileNotFoundError:
        return None
    except (OSError, FileRefused, ValueError) as error:
        problems.append(f"{path} cannot be read: {error}")
        return None
    written = data.get("cuda") if isinstance(data, dict) else None
    match = _WHEEL_CUDA.fullmatch(written) if isinstance(written, str) else None
    if match is None:
        problems.append(f"{path} names no CUDA version such as '12.x'")
        return None
    return BuildFact(match.group(1), path, f"cuda = {written!r}")
