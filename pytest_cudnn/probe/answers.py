"""The probe child's jobs and answers, on the caller's side: each job asked under an id, each answer decoded by
its job's kind, in this one place.

    batch = Batch()
    driver = batch.nvml()                        # an Asked[NvmlAnswer]: the job's id and its decoder
    runtimes = [batch.cudart(path) for path in paths]
    answers = batch.answered(child.run(batch.jobs, job_timeout, total_timeout))
    answers[driver]                              # an NvmlAnswer, every value checked

The child's answers are marshalled dicts (:mod:`pytest_cudnn.native.protocol`), read back from another process
that loaded vendor libraries: every value is checked here against its answer type, and one that is absent or not
of its type reads as None, so that what reads an answer relies on its type. An answer is found by its job's id,
never by its place among the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from ..native.protocol import CUDA, CUDART, CUDNN, FAILURES, LIBRARY, NO_ANSWER, NVML, RESOLVE, describe

if TYPE_CHECKING:
    from ..native.protocol import (
        CudaAnswer,
        CudaJob,
        CudartAnswer,
        CudartJob,
        CudnnAnswer,
        CudnnJob,
        GpuAnswer,
        HealthAnswer,
        JaxVersionsAnswer,
        JaxVersionsJob,
        Job,
        LibraryAnswer,
        LibraryJob,
        MigAnswer,
        NvmlAnswer,
        NvmlJob,
        Outcome,
        PairAnswer,
        PathfinderAnswer,
        PathfinderJob,
        PathfinderLibrary,
        ResolveAnswer,
        ResolveJob,
    )

__all__ = ["Answers", "Asked", "Batch"]

A = TypeVar("A")
Raw = Mapping[str, object]  # one answer as the child sent it


@dataclass(frozen=True)
class Asked(Generic[A]):
    """One job asked of the child: its id, and the decoder of its kind's answer."""

    id: int
    decode: Callable[[Raw], A]


class Batch:
    """The jobs of one probe, each under its own id. One method per kind of job: it builds the job (checked against
    the kind's job type) and names the decoder of the kind's answer."""

    def __init__(self) -> None:
        self.jobs: dict[int, Job] = {}

    def _ask(self, job: Job, decode: Callable[[Raw], A]) -> Asked[A]:
        asked = Asked(len(self.jobs), decode)
        self.jobs[asked.id] = job
        return asked

    def nvml(self) -> Asked[NvmlAnswer]:
        job: NvmlJob = {"kind": NVML}
        return self._ask(job, nvml_answer)

    def cuda(self, name: str) -> Asked[CudaAnswer]:
        job: CudaJob = {"kind": CUDA, "name": name}
        return self._ask(job, cuda_answer)

    def cudart(self, path: str) -> Asked[CudartAnswer]:
        job: CudartJob = {"kind": CUDART, "path": path}
        return self._ask(job, cudart_answer)

    def cudnn(self, path: str) -> Asked[CudnnAnswer]:
        job: CudnnJob = {"kind": CUDNN, "path": path}
        return self._ask(job, cudnn_answer)

    def library(self, path: str, call: str, shape: str = "code", cuda_call: str = "") -> Asked[LibraryAnswer]:
        job: LibraryJob = {"kind": LIBRARY, "path": path, "call": call, "shape": shape, "cuda_call": cuda_call}
        return self._ask(job, library_answer)

    def resolve(self, name: str) -> Asked[ResolveAnswer]:
        job: ResolveJob = {"kind": RESOLVE, "name": name}
        return self._ask(job, resolve_answer)

    def jax_versions(self, job: JaxVersionsJob) -> Asked[JaxVersionsAnswer]:
        return self._ask(job, jax_versions_answer)

    def pathfinder(self, job: PathfinderJob) -> Asked[PathfinderAnswer]:
        return self._ask(job, pathfinder_answer)

    def answered(self, replies: Mapping[int, Raw]) -> Answers:
        """The child's replies, by job id; a job without one has no answer, and says so."""
        return Answers({
            id_: replies[id_] if id_ in replies else _no_answer(job, "the probe process gave no answer for it")
            for id_, job in self.jobs.items()
        })  # fmt: skip

    def unanswered(self, problem: str) -> Answers:
        """Every job without an answer, for ``problem`` (the child could not start)."""
        return Answers({id_: _no_answer(job, problem) for id_, job in self.jobs.items()})


class Answers:
    """The answers to one :class:`Batch`: ``answers[asked]`` is the answer to that job, decoded by its kind."""

    def __init__(self, replies: Mapping[int, Raw]) -> None:
        self._replies = replies

    def __getitem__(self, asked: Asked[A]) -> A:
        return asked.decode(self._replies[asked.id])


def _no_answer(job: Job, problem: str) -> Raw:
    return {"error": f"{describe(job)}: {problem}", "failure": NO_ANSWER}


# The decoders: one per kind of answer. Each says every key of its type, so mypy holds it to that type. -------------


def nvml_answer(raw: Raw) -> NvmlAnswer:
    return {
        **_outcome(raw),
        "state": _str(raw.get("state")),
        "reason": _str(raw.get("reason")),
        "nvml_error": _int(raw.get("nvml_error")),
        "path": _str(raw.get("path")),
        "version": _str(raw.get("version")),
        "nvml_version": _str(raw.get("nvml_version")),
        "cuda_version_raw": _int(raw.get("cuda_version_raw")),
        "gpus": [_gpu(gpu, i) for i, gpu in enumerate(_list(raw.get("gpus"))) if isinstance(gpu, dict)],
        "pairs": [_pair(pair) for pair in _list(raw.get("pairs")) if isinstance(pair, dict)],
    }


def _pair(raw: Raw) -> PairAnswer:
    return {
        "first": _int(raw.get("first")),
        "second": _int(raw.get("second")),
        "topology": _int(raw.get("topology")),
        "p2p_read": _int(raw.get("p2p_read")),
        "p2p_write": _int(raw.get("p2p_write")),
        "p2p_nvlink": _int(raw.get("p2p_nvlink")),
    }


def _health(raw: object) -> HealthAnswer | None:
    if not isinstance(raw, dict):
        return None
    return {
        "compute_mode": _int(raw.get("compute_mode")),
        "persistence": _bool(raw.get("persistence")),
        "ecc": _bool(raw.get("ecc")),
        "ecc_uncorrected_volatile": _int(raw.get("ecc_uncorrected_volatile")),
        "ecc_uncorrected_aggregate": _int(raw.get("ecc_uncorrected_aggregate")),
        "retired_pages_pending": _bool(raw.get("retired_pages_pending")),
        "remap_pending": _bool(raw.get("remap_pending")),
        "remap_failure": _bool(raw.get("remap_failure")),
        "clocks_event_reasons": _int(raw.get("clocks_event_reasons")),
        "temperature": _int(raw.get("temperature")),
        "slowdown_temperature": _int(raw.get("slowdown_temperature")),
        "pcie_generation": _int(raw.get("pcie_generation")),
        "pcie_generation_max": _int(raw.get("pcie_generation_max")),
        "pcie_width": _int(raw.get("pcie_width")),
        "pcie_width_max": _int(raw.get("pcie_width_max")),
        "nvlinks_active": _int(raw.get("nvlinks_active")),
        "unsupported": [name for name in _list(raw.get("unsupported")) if isinstance(name, str)],
    }


def _gpu(raw: Raw, position: int) -> GpuAnswer:
    index = _int(raw.get("index"))
    return {
        "index": position if index is None else index,  # its place in NVML's list, when it did not say
        "name": _str(raw.get("name")),
        "uuid": _str(raw.get("uuid")),
        "pci_bus_id": _str(raw.get("pci_bus_id")),
        "compute_capability": _str(raw.get("compute_capability")),
        "memory_total": _int(raw.get("memory_total")),
        "memory_free": _int(raw.get("memory_free")),
        "mig_mode": _bool(raw.get("mig_mode")),
        "mig_pending": _bool(raw.get("mig_pending")),
        "mig": [_mig(mig, i) for i, mig in enumerate(_list(raw.get("mig"))) if isinstance(mig, dict)],
        "health": _health(raw.get("health")),
        "error": _str(raw.get("error")),
    }


def _mig(raw: Raw, position: int) -> MigAnswer:
    index = _int(raw.get("index"))
    return {
        "index": position if index is None else index,
        "uuid": _str(raw.get("uuid")),
        "name": _str(raw.get("name")),
        "gpu_instance_id": _int(raw.get("gpu_instance_id")),
        "compute_instance_id": _int(raw.get("compute_instance_id")),
        "gpu_slices": _int(raw.get("gpu_slices")),
        "compute_slices": _int(raw.get("compute_slices")),
        "multiprocessors": _int(raw.get("multiprocessors")),
        "memory_total": _int(raw.get("memory_total")),
        "memory_free": _int(raw.get("memory_free")),
        "error": _str(raw.get("error")),
    }


def cuda_answer(raw: Raw) -> CudaAnswer:
    return {
        **_outcome(raw),
        "state": _str(raw.get("state")),
        "reason": _str(raw.get("reason")),
        "path": _str(raw.get("path")),
        "version_raw": _int(raw.get("version_raw")),
        "init_status": _int(raw.get("init_status")),
        "device_count": _int(raw.get("device_count")),
    }


def cudart_answer(raw: Raw) -> CudartAnswer:
    return {
        **_outcome(raw),
        "loaded": _str(raw.get("loaded")),
        "version_raw": _int(raw.get("version_raw")),
        "driver_version_raw": _int(raw.get("driver_version_raw")),
        "device_count_status": _int(raw.get("device_count_status")),
        "device_count": _int(raw.get("device_count")),
        "device_count_error": _str(raw.get("device_count_error")),
    }


def cudnn_answer(raw: Raw) -> CudnnAnswer:
    return {
        **_outcome(raw),
        "loaded": _str(raw.get("loaded")),
        "version_raw": _int(raw.get("version_raw")),
        "property_version": _parts(raw.get("property_version")),
        "cudart_version_raw": _int(raw.get("cudart_version_raw")),
        "create_status": _int(raw.get("create_status")),
        "create_error": _str(raw.get("create_error")),
        "last_error": _str(raw.get("last_error")),
    }


def library_answer(raw: Raw) -> LibraryAnswer:
    return {
        **_outcome(raw),
        "loaded": _str(raw.get("loaded")),
        "status": _int(raw.get("status")),
        "version_raw": _int(raw.get("version_raw")),
        "parts": _parts(raw.get("parts")),
        "cuda_raw": _int(raw.get("cuda_raw")),
    }


def _parts(raw: object) -> list[int] | None:
    """Three non-negative integers (major, minor, patch), or None."""
    if isinstance(raw, list) and len(raw) == 3 and all(type(p) is int and 0 <= p < 10**6 for p in raw):
        return list(raw)
    return None


def resolve_answer(raw: Raw) -> ResolveAnswer:
    return {**_outcome(raw), "loaded": _str(raw.get("loaded"))}


def jax_versions_answer(raw: Raw) -> JaxVersionsAnswer:
    return {
        **_outcome(raw),
        "cuda_runtime_build_version": _int(raw.get("cuda_runtime_build_version")),
        "cudnn_build_version": _int(raw.get("cudnn_build_version")),
    }


def pathfinder_answer(raw: Raw) -> PathfinderAnswer:
    libraries = raw.get("libraries")
    return {
        **_outcome(raw),
        "version": _str(raw.get("version")),
        "libraries": {name: _pathfinder_library(said) for name, said in libraries.items() if isinstance(name, str)}
        if isinstance(libraries, dict)
        else None,
    }


def _pathfinder_library(raw: object) -> PathfinderLibrary:
    said: Raw = raw if isinstance(raw, dict) else {}
    return {
        "abs_path": _str(said.get("abs_path")),
        "found_via": _str(said.get("found_via")),
        "was_already_loaded_from_elsewhere": _bool(said.get("was_already_loaded_from_elsewhere")),
        "error": _str(said.get("error")),
    }


def _outcome(raw: Raw) -> Outcome:
    failure = raw.get("failure")
    return {
        "error": _str(raw.get("error")),
        "failure": failure if isinstance(failure, str) and failure in FAILURES else None,
        "output": _str(raw.get("output")),
        "missing": [name for name in _list(raw.get("missing")) if isinstance(name, str)],
    }


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
