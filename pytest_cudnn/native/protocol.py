"""What the caller and the probe's child say to each other: the jobs, their answers, and how a job failed.

The caller (:mod:`pytest_cudnn.probe`) sends the child ``{id: job}``; the child runs each job in its own process
(:mod:`.isolation`) with the function :data:`.calls.JOBS` holds for its kind and answers ``(id, answer)``, each
marshalled (dicts, lists, str, int, float, bool, None). The caller decodes each answer by the kind of the job it
asked (:mod:`pytest_cudnn.probe.answers`), matched to it by the id, never by position.

A kind of job is, in three places that mypy checks against each other:

* here: its job and answer (``TypedDict``), its name, and its line in :class:`Runners`;
* :mod:`.calls`: the function that runs it, in ``JOBS`` (typed :class:`Runners`: a kind without its function, or
  a function that takes another job or answers otherwise, is a type error);
* :mod:`pytest_cudnn.probe.answers`: its decoder, which turns what the child sent into its answer type, checking
  every value (a ``Batch`` method that builds the job and names the decoder).

Any answer may also say how the job failed (:class:`Outcome`): the isolation layer adds that when the job's
process crashed, hung or gave no answer, and a function adds it when its library cannot be loaded or is not the
library. Those kinds of failure are spelt here, once: :class:`pytest_cudnn.environment.Failure` takes its values
from them.

The child imports this module: it imports nothing at run time (the types exist for mypy only, as
``TYPE_CHECKING`` says; ``typing`` alone would cost the child more than all its jobs' Python).
"""

from __future__ import annotations

# As in isolation.py: mypy reads this name as typing.TYPE_CHECKING; the child never imports typing.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Final, Literal, TypedDict

__all__ = [
    "CRASHED",
    "CUDA",
    "CUDART",
    "CUDNN",
    "FAILURES",
    "HUNG",
    "JAX_VERSIONS",
    "KINDS",
    "LIBRARY",
    "NOT_THE_LIBRARY",
    "NO_ANSWER",
    "NVML",
    "PATHFINDER",
    "RESOLVE",
    "UNLOADABLE",
    "describe",
]

# The kinds of job. Each job's TypedDict below says its own kind as a Literal: the Batch method in
# probe/answers.py that builds the job from these names is where mypy holds the two to each other.
NVML: Final = "nvml"  # the driver and every GPU, through NVML
CUDA: Final = "cuda"  # libcuda as the loader finds it
CUDART: Final = "cudart"  # one CUDA runtime, by absolute path
CUDNN: Final = "cudnn"  # one cuDNN, by absolute path
RESOLVE: Final = "resolve"  # what a plain dlopen of a bare name loads
JAX_VERSIONS: Final = "jax_versions"  # the versions JAX's CUDA plugin records in its compiled _versions module
PATHFINDER: Final = "pathfinder"  # CuPy's locator, cuda.pathfinder, run as CuPy runs it
LIBRARY: Final = "library"  # one copy of a catalog kind (compat/catalog.py), by absolute path: its version call
KINDS: Final = (NVML, CUDA, CUDART, CUDNN, RESOLVE, JAX_VERSIONS, PATHFINDER, LIBRARY)

# How a job failed, in an answer's "failure" (environment.Failure takes its values from these).
UNLOADABLE: Final = "unloadable"  # dlopen refused the file (corrupt ELF, symlink loop, permission, missing dependency)
CRASHED: Final = "crashed"  # the process died on a signal inside the library (an abort, a segfault)
HUNG: Final = "hung"  # it did not answer within the timeout and was killed
NOT_THE_LIBRARY: Final = "not-the-library"  # it loaded, but lacks the library's entry points
NO_ANSWER: Final = "no-answer"  # the probe process gave no answer for it (it could not start, or died)
FAILURES: Final = (UNLOADABLE, CRASHED, HUNG, NOT_THE_LIBRARY, NO_ANSWER)


def describe(job: Mapping[str, object]) -> str:
    """How an error names a job: the library it loads, else its kind."""
    return str(job.get("path") or job.get("name") or job.get("kind"))


if TYPE_CHECKING:
    # The jobs ---------------------------------------------------------------------------------------------------

    class NvmlJob(TypedDict):
        kind: Literal["nvml"]

    class CudaJob(TypedDict):
        kind: Literal["cuda"]
        name: str  # a bare soname (libcuda.so.1) or nvcuda.dll

    class CudartJob(TypedDict):
        kind: Literal["cudart"]
        path: str  # absolute

    class CudnnJob(TypedDict):
        kind: Literal["cudnn"]
        path: str  # absolute

    class ResolveJob(TypedDict):
        kind: Literal["resolve"]
        name: str  # a bare soname

    class JaxVersionsJob(TypedDict):
        kind: Literal["jax_versions"]
        path: str  # the extension module's file
        module: str  # its dotted name, jax_cuda12_plugin._versions

    class PathfinderJob(TypedDict):
        kind: Literal["pathfinder"]
        names: list[str]  # pathfinder's library names (nvrtc, cublas, ...), in the order CuPy loads them
        site_dirs: list[str]  # what site.getsitepackages() answers in the caller, for the child run without site

    class LibraryJob(TypedDict):
        kind: Literal["library"]
        path: str  # absolute
        call: str  # its version call, answering 0 on success
        # "code": ``int call(int *version)`` (ncclGetVersion); "properties": ``int call(int type, int *value)`` asked
        # types 0, 1, 2: MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL (cublasGetProperty)
        shape: str
        cuda_call: str  # "" or ``size_t cuda_call(void)``: the CUDA runtime it was built with

    Job = NvmlJob | CudaJob | CudartJob | CudnnJob | ResolveJob | JaxVersionsJob | PathfinderJob | LibraryJob

    # The answers ------------------------------------------------------------------------------------------------
    # Every key may be absent (total=False), and each value may be None: the child leaves out what it could not
    # read, and the decoder answers None for a value that is absent or not of its type.

    class Outcome(TypedDict, total=False):
        """What any answer may say about how its job failed."""

        error: str | None  # why the job has no (full) answer, naming its library
        failure: str | None  # one of FAILURES
        output: str | None  # the tail of what the job's process printed
        missing: list[str] | None  # the libraries the loader or the library said it could not open

    class MigAnswer(TypedDict, total=False):
        index: int | None
        uuid: str | None
        name: str | None
        gpu_instance_id: int | None
        compute_instance_id: int | None
        gpu_slices: int | None
        compute_slices: int | None
        multiprocessors: int | None
        memory_total: int | None
        memory_free: int | None
        error: str | None  # the calls that failed for this device, "; "-joined

    class HealthAnswer(TypedDict, total=False):
        compute_mode: int | None
        persistence: bool | None
        ecc: bool | None
        ecc_uncorrected_volatile: int | None
        ecc_uncorrected_aggregate: int | None
        retired_pages_pending: bool | None
        remap_pending: bool | None
        remap_failure: bool | None
        clocks_event_reasons: int | None
        temperature: int | None
        slowdown_temperature: int | None
        pcie_generation: int | None
        pcie_generation_max: int | None
        pcie_width: int | None
        pcie_width_max: int | None
        nvlinks_active: int | None
        unsupported: list[str] | None  # the calls NVML answered NOT_SUPPORTED (3) or lacks (13)

    class PairAnswer(TypedDict, total=False):
        first: int | None
        second: int | None
        topology: int | None
        p2p_read: int | None
        p2p_write: int | None
        p2p_nvlink: int | None

    class GpuAnswer(TypedDict, total=False):
        index: int | None
        name: str | None
        uuid: str | None
        pci_bus_id: str | None
        compute_capability: str | None  # "8.0"
        memory_total: int | None
        memory_free: int | None
        mig_mode: bool | None
        mig_pending: bool | None  # only when the pending mode differs from the current one
        mig: list[MigAnswer] | None
        health: HealthAnswer | None
        error: str | None  # the calls that failed for this GPU, "; "-joined

    class NvmlAnswer(Outcome, total=False):
        state: str | None  # "found", "absent", "error"
        reason: str | None
        nvml_error: int | None  # nvmlReturn_t
        path: str | None
        version: str | None
        nvml_version: str | None
        cuda_version_raw: int | None
        gpus: list[GpuAnswer] | None
        pairs: list[PairAnswer] | None

    class CudaAnswer(Outcome, total=False):
        state: str | None  # "found", "absent", "error"
        reason: str | None
        path: str | None
        version_raw: int | None
        init_status: int | None
        device_count: int | None

    class CudartAnswer(Outcome, total=False):
        loaded: str | None
        version_raw: int | None
        driver_version_raw: int | None
        device_count_status: int | None
        device_count: int | None
        device_count_error: str | None

    class CudnnAnswer(Outcome, total=False):
        loaded: str | None
        version_raw: int | None
        property_version: list[int] | None  # major, minor, patch
        cudart_version_raw: int | None
        create_status: int | None
        create_error: str | None
        last_error: str | None

    class ResolveAnswer(Outcome, total=False):
        loaded: str | None

    class JaxVersionsAnswer(Outcome, total=False):
        cuda_runtime_build_version: int | None  # 12090
        cudnn_build_version: int | None  # 90800

    class PathfinderLibrary(TypedDict, total=False):
        abs_path: str | None
        found_via: str | None
        was_already_loaded_from_elsewhere: bool | None
        error: str | None  # the exception pathfinder raised, its class and the head of its words

    class PathfinderAnswer(Outcome, total=False):
        version: str | None
        libraries: dict[str, PathfinderLibrary] | None  # by pathfinder's library name

    class LibraryAnswer(Outcome, total=False):
        loaded: str | None
        status: int | None  # what the version call returned (the first that failed, for "properties")
        version_raw: int | None  # "code": the version it wrote, when it returned 0
        parts: list[int] | None  # "properties": major, minor, patch, when each call returned 0
        cuda_raw: int | None  # what cuda_call answered

    # The functions that run them (native/calls.py JOBS) -----------------------------------------------------------

    class Runners(TypedDict):
        nvml: Callable[[NvmlJob], NvmlAnswer]
        cuda: Callable[[CudaJob], CudaAnswer]
        cudart: Callable[[CudartJob], CudartAnswer]
        cudnn: Callable[[CudnnJob], CudnnAnswer]
        resolve: Callable[[ResolveJob], ResolveAnswer]
        jax_versions: Callable[[JaxVersionsJob], JaxVersionsAnswer]
        pathfinder: Callable[[PathfinderJob], PathfinderAnswer]
        library: Callable[[LibraryJob], LibraryAnswer]
