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
    import dataclasses

    from ...environment import State
    from .reading import tensorflow_build

    build = tensorflow_build(reading.tensorflow, reading.distributions)
    return build if build.state is State.ABSENT else dataclasses.replace(build, build_info=reading.tensorflow)


def _loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    from .loads import tensorflow_loads

    return tensorflow_loads(build, search)


def _search_folders(build: FrameworkBuild) -> tuple[str, ...]:
    from ...probe.loads import framework_object, own_folders

    found = framework_object(build, "libtensorflow_framework.so.2")
    return own_folders(found) if found is not None else ()


def _table_pins(version: str) -> list[tuple[str, str]]:
    from ...compat.tensorflow import and_cuda_pins

    pins = and_cuda_pins(version)
    return [] if pins is None else [(pins.cudnn_package, pins.cudnn), (pins.runtime_package, pins.runtime)]


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
    # The folders TensorFlow's dlopen searches are those of this object's DT_RUNPATH, not every wheel beside it.
    search_folders=_search_folders,
    table_pins=_table_pins,
    # tensorflow/__init__.py loads it (pywrap_tensorflow links it) before anything else: without it no import.
    import_objects=("libtensorflow_framework.so.2",),
)
