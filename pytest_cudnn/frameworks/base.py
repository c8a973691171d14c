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
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from packaging.version import Version

    from ..environment import Cudnn, Distribution, Environment, FrameworkBuild, LoadedLibrary, TensorFlow
    from ..probe.answers import Asked, Batch
    from ..probe.loads import Search

__all__ = [
    "ENTRIES",
    "BuildLine",
    "ChildQuestion",
    "CudnnProblem",
    "Framework",
    "GpuFloor",
    "KeptBuild",
    "Reading",
    "SkipCheck",
    "Unloadable",
    "display_of",
    "entry_of",
    "maps_at_import",
    "own_rules",
]


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


class SkipCheck(NamedTuple):
    """A framework's own switch for its version check: the variable, which values switch it off, and the source."""

    variable: str  # "JAX_SKIP_CUDA_CONSTRAINTS_CHECK"
    skips: Callable[[str], bool]  # whether a value switches the check off (JAX: any non-empty value)
    source: str


class ChildQuestion(NamedTuple):
    """A question a framework's build asks the probe's child process (JAX's compiled ``_versions`` module, CuPy's
    own locator): ``ask`` adds its job to the batch and gives back what was asked, ``answer`` the build as the
    child's answer leaves it. The probe loops over the entries' questions without knowing whose they are."""

    ask: Callable[[Batch], Asked[Any]]
    answer: Callable[[FrameworkBuild, Any], FrameworkBuild]


class BuildLine(NamedTuple):
    """The releases ``first`` to ``last`` of a framework's package on PyPI, built alike: for CUDA ``cuda``, with GPU
    code for ``targets`` (the sm_XX its build lists; empty: whatever its CUDA can target)."""

    first: str
    last: str
    cuda: str
    targets: tuple[str, ...] = ()

    @property
    def below(self) -> str:
        """The first minor release after ``last`` ("2.10.0" -> "2.11"): the bound that keeps pip on this line or
        older, also where a release after ``last`` was not read."""
        from .._base.versions import decimal

        parts = self.last.split(".")
        return f"{parts[0]}.{(decimal(parts[1], 9) or 0) + 1}" if len(parts) > 1 else self.last


class GpuFloor(NamedTuple):
    """The oldest compute capability a framework's build supports, by its documentation: ``capability`` ("7.5"),
    ``source`` (the key of :mod:`pytest_cudnn.compat.sources`), ``cuda`` (its build's CUDA major, as said), ``fix``
    (what to install for an older GPU, which serves GPUs from ``fix_from`` on; "" where nothing is)."""

    capability: str
    source: str
    cuda: int
    fix: str = ""
    fix_from: str = ""


class KeptBuild(NamedTuple):
    """The newest published build of a framework whose GPU code runs on a GPU, as pip's bound: ``package``
    ("torch"), ``specifier`` ("<2.11"), ``why`` ("the last PyPI build with sm_70 is 2.10.0, ..."), ``source`` (the
    key of :mod:`pytest_cudnn.compat.sources`)."""

    package: str
    specifier: str
    why: str
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
    # the number of GPUs, whether its own check is switched off by skip_check's variable) -> why, or None when it
    # accepts it. None: it has no cuDNN rule of its own.
    cudnn_problem: Callable[[FrameworkBuild, Cudnn, Version | None, int, bool], CudnnProblem | None] | None = None
    # The environment variable its users set to switch its own version check off, documented by it: a refusal
    # that only the check makes is then a warning (what the check guards against can still fail).
    skip_check: SkipCheck | None = None
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
    # Who loads its libraries from Python when no object asks for them by name (CuPy: its locator); None: "its
    # Python preload".
    preloader: str | None = None
    # One fix for all the libraries its search cannot find, given them (CuPy's [ctk] extra); None: a fix for each.
    missing_fix: Callable[[FrameworkBuild, Sequence[LoadedLibrary]], str] | None = None
    # The requirement that installs its CUDA build from PyPI, and its lines of builds there, newest first: a fix that
    # says what to install names the newest line that runs on the host (diagnosis/releases.py). None: not tabled.
    pypi: tuple[str, Callable[[], Sequence[BuildLine]]] | None = None
    # What its build asks the probe's child process, given the Python path (None: nothing to ask).
    questions: Callable[[FrameworkBuild, Sequence[str]], Sequence[ChildQuestion]] | None = None
    # The oldest GPU its build runs on by its own documentation, for its CUDA major: (compute capability, the key of
    # compat/sources.py that says so, what to install instead); None: not documented, or judged by its kernels.
    gpu_floor: Callable[[FrameworkBuild], GpuFloor | None] | None = None
    # The folders its own dlopen searches first, from its read objects (TensorFlow: libtensorflow_framework.so.2's
    # DT_RUNPATH); the loader's search of its own context (Resolution.context) uses them. None: it has no context.
    search_folders: Callable[[FrameworkBuild], tuple[str, ...]] | None = None
    # The wheels and specifiers its published table pins for a release, where its METADATA does not say them (an
    # older snapshot): TensorFlow's and-cuda extra. None: only its METADATA's pins count.
    table_pins: Callable[[str], Sequence[tuple[str, str]]] | None = None
    # The newest published build whose GPU code runs on a GPU of a compute capability ("7.0"), given the rule of
    # where GPU code runs (diagnosis/kernels.py's runs_on): what to install where its build has no kernels for the
    # GPU. None: not tabled (the fix says what to look for instead).
    kept_for_gpu: Callable[[str, Callable[[Sequence[str], str], str | None]], KeptBuild | None] | None = None

    @property
    def marker(self) -> str:
        return f"requires_{self.name}"


# The registry by import name, filled by pytest_cudnn.frameworks once its entries are built: an entry's rules that
# ask about another framework (ONNX Runtime: which one imported first hands it its libraries) look it up here, so
# that no entry imports the registry that imports it.
ENTRIES: dict[str, Framework] = {}


def entry_of(name: str) -> Framework | None:
    """The registry's entry for import name ``name``; None for a name it does not know."""
    return ENTRIES.get(name)


def display_of(name: str) -> str:
    """A framework's name as its users write it, from its import name ('torch' -> 'PyTorch'); the name itself for
    one the registry does not know."""
    found = ENTRIES.get(name)
    return found.display if found is not None else name


def own_rules(name: str) -> bool:
    """Whether framework ``name`` is judged by rules of its own (its entry's ``own_rules``: TensorFlow's CPU build,
    driver, cuDNN and kernels, in its own block of the doctor); False for a name the registry does not know."""
    found = ENTRIES.get(name)
    return found is not None and found.own_rules


def maps_at_import(name: str) -> bool:
    """Whether importing framework ``name`` maps what it loads (its entry's ``loads_at_import``; CuPy loads on first
    use). A name the registry does not know is taken to."""
    found = ENTRIES.get(name)
    return found is None or found.loads_at_import
