"""TensorFlow: its build info read in :mod:`.reading` (into the shape every framework shares), what it loads in
:mod:`.loads` (libtensorflow_framework.so.2's dlopens); its CPU build, driver, cuDNN and kernels are judged by its
own rules (:mod:`pytest_cudnn.diagnosis.tensorflow`), and ``requires_tensorflow`` by its own judge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import Framework, Reading

if TYPE_CHECKING:
    from ...environment import FrameworkBuild, LoadedLibrary
    from ...probe.loads import Search

__all__ = ["FRAMEWORK"]


def _read(reading: Reading) -> FrameworkBuild:
    from .reading import tensorflow_build

    return tensorflow_build(reading.tensorflow, reading.distributions)


def _loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    from .loads import tensorflow_loads

    return tensorflow_loads(build, search)


FRAMEWORK = Framework(
    name="tensorflow",
    display="TensorFlow",
    distributions="tensorflow(?:-cpu|-gpu)?|tf-nightly",
    marker_help="requires_tensorflow(spec=None, *, gpu=True): skip unless TensorFlow is installed within spec and, "
    "with gpu=True, its build's CUDA and cuDNN are usable on this host.",
    install_hint=None,
    read=_read,
    loads=_loads,
    own_rules=True,
    # tensorflow/__init__.py loads it (pywrap_tensorflow links it) before anything else: without it no import.
    import_objects=("libtensorflow_framework.so.2",),
)
