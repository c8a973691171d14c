"""CuPy: read by :mod:`pytest_cudnn.probe.cupy`. Its loads (``cuda.pathfinder``'s search at run time) are not
modelled yet, so its build's CUDA is judged; no cuDNN since CuPy 14."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Framework, Reading

if TYPE_CHECKING:
    from ..environment import FrameworkBuild

__all__ = ["FRAMEWORK"]


def _read(reading: Reading) -> FrameworkBuild:
    from ..probe.cupy import probe_cupy

    return probe_cupy(reading.site_path, reading.distributions)


FRAMEWORK = Framework(
    name="cupy",
    display="CuPy",
    distributions="cupy-cuda.*",
    marker_help="requires_cupy(spec=None, *, gpu=True): skip unless CuPy is installed within spec and, with "
    "gpu=True, its CUDA build can run on this driver and GPU.",
    install_hint="pip install cupy-cuda12x (or cupy-cuda13x), the wheel for the CUDA major of this host's driver",
    read=_read,
)
