"""What pytest-cudnn knows about one framework, behind one shape: :class:`Framework`.

An entry holds the framework's names (import name, the name its users write, its distributions, its marker), how
to get a CUDA build of it, and its rules as functions: how its build is read from its files, which CUDA libraries
it loads and how (predicted, never loaded), and whether it accepts the cuDNN it loads. The probe, the diagnosis,
the markers, the CLI and the report iterate :data:`pytest_cudnn.frameworks.REGISTRY` instead of naming frameworks.

Importing this module costs next to nothing: every type it names is imported for type checking only, each entry's
functions import what they need when called (the plugin registers the markers on every run from these entries), and
the shapes are named tuples (a frozen dataclass costs about 0.5 ms to make, four of them 1.7 ms of every run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from packaging.version import Version

    from ..environment import Cudnn, Distribution, Environment, FrameworkBuild, LoadedLibrary, TensorFlow
    from ..probe.loads import Search

__all__ = ["CudnnProblem", "Framework", "Reading", "Unloadable"]


class Reading(NamedTuple):
    """What a framework's reader is given: the Python path, the distributions installed on it, and TensorFlow's
    build info as the probe read it (TensorFlow's reader goes on from it; the others ignore it)."""

    site_path: Sequence[str]
    distributions: Sequence[Distribution]
    tensorflow: TensorFlow


class CudnnProblem(NamedTuple):
    """Why a framework refuses the cuDNN it loads, and the key of :mod:`pytest_cudnn.compat.sources` that says so."""

    problem: str
    source: str


class Unloadable(NamedTuple):
    """What a framework's own words add when it cannot load a library: ``said`` ends the finding's summary, ``fix``
    replaces the generic fix."""

    said: str
    fix: str


class Framework(NamedTuple):
    """One framework. Adding one is a module with its ``FRAMEWORK`` entry, its compat table, and a line in
    :data:`pytest_cudnn.frameworks.REGISTRY` (docs/frameworks.md, "Adding a framework")."""

    name: str  # the import name: "torch"
    display: str  # as its users write it: "PyTorch"
    distributions: str  # a regular expression for its distributions' canonical names: "torch", "cupy-cuda.*"
    marker_help: str  # requires_<name>'s signature and help, as `pytest --markers` shows them
    install_hint: str | None  # how to get a CUDA build of it; None: "install a CUDA build of <display>"
    read: Callable[[Reading], FrameworkBuild]  # its build from its files (absent: FrameworkBuild.absent(name))
    loads: Callable[[FrameworkBuild, Search], tuple[LoadedLibrary, ...]] | None = None  # None: not modelled
    # Whether it refuses the cuDNN it loads: (build, the copy, the lowest compute capability of the GPUs or None,
    # the number of GPUs) -> why, or None when it accepts it. None: it has no cuDNN rule of its own.
    cudnn_problem: Callable[[FrameworkBuild, Cudnn, Version | None, int], CudnnProblem | None] | None = None
    # What it says of a library its search cannot find (e.g. a way its own API loads it); None: the generic words.
    unloadable: Callable[[Environment, FrameworkBuild, LoadedLibrary], Unloadable | None] | None = None
    kernels_in_fatbin: bool = False  # its own fatbins hold its kernels: judge the GPUs against them
    # Whether what it loads is in the process once it is imported (torch's preloads, JAX's): another framework
    # imported after it gets those copies. CuPy loads each library on first use, so it hands over nothing at import.
    loads_at_import: bool = True
    own_rules: bool = False  # TensorFlow: its CPU build, driver, cuDNN and kernels are judged by its own module
    # The shared objects of a CUDA build that `import <name>` itself loads, relative to its package folder: one
    # missing, or a library in their DT_NEEDED that the loader cannot find, and the import fails.
    import_objects: tuple[str, ...] = ()
    # Its own call that loads libraries into the process before use (ONNX Runtime's "onnxruntime.preload_dlls()"),
    # and its build as that call leaves it: the loads the call supplies, or None where it changes nothing. Judged
    # as a second verdict, which requires_<name>(preload_dlls=True) reads.
    preload: tuple[str, Callable[[FrameworkBuild], FrameworkBuild | None]] | None = None

    @property
    def marker(self) -> str:
        return f"requires_{self.name}"
