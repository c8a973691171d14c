"""Probe the live host into an :class:`~pytest_cudnn.environment.Environment`.

What can be read from files (library locations, the ldconfig cache, TensorFlow's build info, cuDNN headers)
is read here, through the readers of :mod:`pytest_cudnn.probe` and each framework's registry entry; everything
that loads a vendor library runs in a child process (:mod:`pytest_cudnn.native.isolation`), asked and answered
through :mod:`pytest_cudnn.probe.answers`. Probing imports no framework and creates no CUDA context in the calling
process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import glob
import os
import platform
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter  # bound now: a test patching time.* later changes nothing here
from typing import TYPE_CHECKING, Any

from .._base.versions import (
    InvalidVersionValue,
    cuda_version_from_int,
    cudnn_version_from_int,
    is_pep440,
)
from ..compat.catalog import JUDGED, LibraryKind
from ..compat.cuda import DROPPED_FROM, driver_branch
from ..environment import (
    ALLOWED_VARIABLES,
    INSTALL_VARIABLES,
    SCHEMA,
    SCHEMA_VERSION,
    WINDOWS_ONLY_VARIABLES,
    BuildFact,
    Candidate,
    CudaDriver,
    CudaRuntime,
    Cudnn,
    Distribution,
    Driver,
    Environment,
    Failure,
    FrameworkBuild,
    Gpu,
    GpuHealth,
    GpuPair,
    Host,
    LibraryCopy,
    LoadedLibrary,
    MigDevice,
    PathCheck,
    Platform,
    Resolution,
    State,
    TensorFlow,
    Unreadable,
    Via,
    WheelCheck,
    WheelFile,
    by_file,
    soname_order,
)
from ..files import FileRefused, read_regular
from ..frameworks import REGISTRY, Reading, framework, relevant
from ..frameworks.tensorflow.reading import probe_tensorflow
from ..native import bounded
from ..native.isolation import Child, ProbeFailure, start_child
from ..probe.answers import Answers, Asked, Batch, library_answer
from ..probe.discovery import (
    FAMILIES,
    FileSystem,
    Layout,
    RealFileSystem,
    find_candidates,
    parse_ldconfig,
    relative_path_entries,
)
from ..probe.distributions import installed_distributions
from ..probe.facts import FileFacts, Looked, kept, looked, remembered, using
from ..probe.kernel import read_kernel_driver
from ..probe.platform import read_pci_gpus, read_platform

if TYPE_CHECKING:
    from ..native.protocol import (
        CudaAnswer,
        CudartAnswer,
        CudnnAnswer,
        GpuAnswer,
        HealthAnswer,
        LibraryAnswer,
        MigAnswer,
        NvmlAnswer,
        Outcome,
        ResolveAnswer,
    )
    from ..probe.loads import Search

__all__ = ["ProbeOptions", "cudnn_siblings_missing", "gather_layout", "probe_environment"]


# ldconfig's tag for this ABI in `ldconfig -p` (glibc elf/cache.c, print_entry flag names).
_LDCONFIG_ARCH = {"x86_64": "x86-64", "aarch64": "AArch64", "ppc64le": "64bit", "s390x": "64bit"}

# The sub-libraries a split cuDNN loads from its own folder. cuDNN 8.0 split the library in six
# (cuDNN 8 API docs, "cuDNN Library Dependencies"); cuDNN 9 regrouped it around the graph library
# (cuDNN 9 docs, "API Overview": cudnn_graph, cudnn_engines_precompiled, cudnn_engines_runtime_compiled,
# cudnn_heuristic, cudnn_ops, cudnn_cnn, cudnn_adv). cuDNN 7 and older were one library.
_CUDNN_SUBLIBRARIES = {
    8: ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"),
    9: ("graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"),
}


@dataclass(frozen=True)
class ProbeOptions:
    job_timeout: float = 10.0  # one library call may take this long before it counts as hung
    total_timeout: float = 60.0  # the whole child process
    python: str | None = None  # the interpreter for the child; default sys.executable


def probe_environment(
    options: ProbeOptions | None = None,
    environ: Mapping[str, str] | None = None,
    child: Child | ProbeFailure | None = None,
    facts: FileFacts | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> Environment:
    """Probe this host. Never raises for anything a library or the host does.

    ``facts``: what this host's files said in earlier runs (:mod:`.facts`), used where each file is as it was then,
    and written back with what this probe read; None reads every file. ``meanwhile``: the caller's work to do
    while the child answers (the imports that judging the answers needs), not after it.

    ``child``: the probe's child interpreter (or why it could not start), started by a caller that had other work
    to do meanwhile (importing this module) with the same ``environ`` and ``options.python``; closed here either
    way. Without one, it starts now, while discovery below reads the file system."""
    with using(facts):
        env = _probe_environment(options, environ, child, meanwhile)
    if facts is not None:
        facts.note = facts.save() or facts.note
    return env


def _probe_environment(
    options: ProbeOptions | None,
    environ: Mapping[str, str] | None,
    child: Child | ProbeFailure | None,
    meanwhile: Callable[[], object] | None,
) -> Environment:
    options = options or ProbeOptions()
    environ = os.environ if environ is None else environ
    started = perf_counter()
    windows = platform.system() == "Windows"
    if child is None:
        child = start_child(environ, options.python)
    start_failure = str(child) if isinstance(child, ProbeFailure) else ""
    child = child if isinstance(child, Child) else None
    try:
        layout = gather_layout(environ)
        fs = RealFileSystem()
        site_path = [p for p in sys.path if os.path.isabs(p)]
        tensorflow = probe_tensorflow(layout, site_path, fs)
        distributions = installed_distributions(site_path, fs, wanted=relevant)
        frameworks, tensorflow = _frameworks(layout, site_path, tensorflow, distributions)
        extra = _framework_folders(frameworks)
        cudart_candidates = find_candidates(layout, FAMILIES["cudart"], fs, extra=extra)
        cudnn_candidates = find_candidates(layout, FAMILIES["cudnn"], fs, extra=extra)
        cudart_copies = by_file(cudart_candidates)
        cudnn_copies = by_file(cudnn_candidates)
        # The catalog's further kinds (NCCL): every copy, asked its version by its own call.
        kind_candidates = [(kind, find_candidates(layout, FAMILIES[kind.key], fs, extra=extra)) for kind in JUDGED]
        kind_copies = [(kind, copy) for kind, found in kind_candidates for copy in by_file(found)]
        names = _loader_names(cudart_copies + cudnn_copies + [copy for _, copy in kind_copies], tensorflow)
        batch = Batch()
        asked_driver = batch.nvml()
        asked_cuda = batch.cuda("nvcuda.dll" if windows else "libcuda.so.1")
        asked_runtimes = [(copy, batch.cudart(copy[0].path)) for copy in cudart_copies]
        asked_cudnns = [(copy, batch.cudnn(copy[0].path)) for copy in cudnn_copies]
        # Their version calls answer constants compiled into the file and touch no GPU: kept under the identity of
        # the file and of its folder (where the libraries it needs lie: libcublasLt beside libcublas), asked again
        # only when either changes. Loading cuBLAS and cuBLASLt costs 55-115 ms each (measured on the wheels).
        kept_kinds = [(kind, copy, _kept_answer(kind, copy)) for kind, copy in kind_copies]
        asked_kinds = [
            (kind, copy, found, None if found is not None and found.hit else _ask_kind(batch, kind, copy))
            for kind, copy, found in kept_kinds
        ]
        asked_loaded = {name: batch.resolve(name) for name in names} if not windows else {}
        # Each framework's own questions for the child (JAX's _versions module, CuPy's locator), from its entry.
        questions = [
            (i, question, question.ask(batch))
            for i, build in enumerate(frameworks)
            for entry in [framework(build.name)]
            if entry is not None and entry.questions is not None
            for question in entry.questions(build, site_path)
        ]
        if child is None:
            answers = batch.unanswered(start_failure)
        else:
            answers = batch.answered(child.run(batch.jobs, options.job_timeout, options.total_timeout, meanwhile))
    finally:
        if child is not None:
            child.close()
    driver = _driver(answers[asked_driver])
    cuda_driver = _cuda_driver(answers[asked_cuda])
    runtimes = tuple(_runtime(copy, answers[asked]) for copy, asked in asked_runtimes)
    cudnns = tuple(_cudnn(layout, fs, copy, answers[asked]) for copy, asked in asked_cudnns)
    libraries = tuple(
        _library(kind, copy, _kind_answer(found, asked, answers)) for kind, copy, found, asked in asked_kinds
    )
    loaded = {name: answers[asked] for name, asked in asked_loaded.items()}
    if questions:
        updated = list(frameworks)
        for i, question, asked in questions:
            updated[i] = question.answer(updated[i], answers[asked])
        frameworks = tuple(updated)

    wheel_files: tuple[WheelFile, ...] = ()
    wheel_checks: tuple[WheelCheck, ...] = ()
    wheel_notes: tuple[str, ...] = ()
    if any("/nvidia/" in (load.path or "") for build in frameworks for load in build.loads):
        from ..probe.wheels import read_wheels, record_notes  # only where a framework loads a wheel's file

        wheel_files, wheel_checks = read_wheels(frameworks, distributions)
        wheel_notes = record_notes(frameworks, distributions)
    searched = cudart_candidates + cudnn_candidates + [c for _, found in kind_candidates for c in found]
    resolutions = [_resolution(name, "process", searched, loaded.get(name)) for name in names]
    if tensorflow.library_dirs:
        for name in (tensorflow.cudart_name, tensorflow.cudnn_name):
            if name:
                family = FAMILIES["cudart" if name == tensorflow.cudart_name else "cudnn"]
                candidates = find_candidates(layout, family, fs, tensorflow.library_dirs)
                resolutions.append(_resolution(name, "tensorflow", candidates, None))
    notes = (
        tuple(
            f"LD_LIBRARY_PATH entry {entry!r} is relative or empty: the loader would search it from the current "
            "folder; pytest-cudnn ignores it and never loads from the current folder"
            for entry in relative_path_entries(layout)
        )
        + wheel_notes
    )
    return Environment(
        schema=SCHEMA,
        schema_version=SCHEMA_VERSION,
        host=Host(
            system=layout.system,
            machine=platform.machine(),
            python=platform.python_version(),
            platform=platform.platform(),
        ),
        probed_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        probe_seconds=round(perf_counter() - started, 4),
        variables=dict(layout.variables),
        driver=driver,
        cuda_driver=cuda_driver,
        cuda_runtimes=runtimes,
        cudnns=cudnns,
        resolutions=tuple(resolutions),
        notes=notes,
        paths=tuple(
            PathCheck(name, value, os.path.isdir(value))
            for name, value in layout.variables.items()
            if name in INSTALL_VARIABLES
        ),
        unreadable=tuple(Unreadable(path, reason) for path, reason in fs.unreadable.items()),
        distributions=distributions,
        frameworks=frameworks,
        wheel_files=wheel_files,
        wheel_checks=wheel_checks,
        kernel=read_kernel_driver() if not windows else None,
        libraries=libraries,
        platform=_platform(driver) if not windows else None,
    )


def _platform(driver: Driver) -> Platform:
    """The host's platform; the GPUs on its PCI bus only where NVML lists none, or the driver is of a branch that
    drops older GPUs (R590+: a Pascal beside a Turing is then missing from NVML's list). 92 us for six PCI functions
    here, about 15 us a function: a few ms on a large server, paid only there."""
    found = read_platform()
    if driver.state is State.FOUND and driver.gpus and (driver_branch(driver.version) or 0) < DROPPED_FROM:
        return found
    return dataclasses.replace(found, pci_gpus=read_pci_gpus())


def _frameworks(
    layout: Layout, site_path: Sequence[str], tensorflow: TensorFlow, distributions: Sequence[Distribution]
) -> tuple[tuple[FrameworkBuild, ...], TensorFlow]:
    """Every framework found on ``site_path``, each with the copies its own rules load (Linux: ELF only)."""
    reading = Reading(site_path, distributions, tensorflow)
    builds = tuple(_versioned(entry.read(reading)) for entry in REGISTRY)
    found = [build for build in builds if build.state is not State.ABSENT]
    if layout.system == "Windows" or not found:
        return tuple(found), tensorflow
    # Here, not at the top: only a host with a framework pays for the loader model and the ELF reader.
    from .._base import loader
    from ..probe.loads import Search

    search = Search(
        loader.Process(
            ld_library_path=layout.variables.get("LD_LIBRARY_PATH"),
            ldconfig=layout.ldconfig,
            default_dirs=layout.default_dirs,
        ),
        site_path,
        variables=layout.variables,
    )
    found = [dataclasses.replace(build, loads=_framework_loads(build, search)) for build in found]
    for i, build in enumerate(found):
        entry = framework(build.name)
        folders = entry.search_folders(build) if entry is not None and entry.search_folders is not None else ()
        if folders and build.build_info is not None:  # the search of its own context (TensorFlow's dlopen's folders,
            # not every wheel beside it)
            tensorflow = dataclasses.replace(build.build_info, library_dirs=folders)
            found[i] = dataclasses.replace(build, build_info=tensorflow)
    return tuple(found), tensorflow


def _framework_loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    """The CUDA libraries ``build`` loads and the copy each gets, by its entry's rules; () for a build that loads
    none."""
    if build.is_cuda_build is False:
        return ()
    entry = framework(build.name)
    return entry.loads(build, search) if entry is not None and entry.loads is not None else ()


def _versioned(build: FrameworkBuild) -> FrameworkBuild:
    """``build`` with a version only where its METADATA's is one by PEP 440, as pip reads it: any other text is no
    version to compare (and no snapshot could replay it), so it is said in the build's reason instead."""
    if build.version is None or is_pep440(build.version):
        return build
    said = f"its metadata gives version {build.version[:64]!r}, which is not a PEP 440 version"
    return dataclasses.replace(build, version=None, reason="; ".join(filter(None, (build.reason, said))))


def _framework_folders(frameworks: Iterable[FrameworkBuild]) -> list[tuple[str, Via]]:
    """The folders of the copies frameworks load: probed like any other copy, wherever the framework lives."""
    folders = {os.path.dirname(load.path) for build in frameworks for load in build.loads if load.path}
    return [(folder, Via.FRAMEWORK) for folder in sorted(folders)]


def gather_layout(environ: Mapping[str, str], system: str | None = None) -> Layout:
    """Read the host facts discovery needs: allowlisted variables, the ldconfig cache, standard folders."""
    system = system or platform.system()
    allowed = ALLOWED_VARIABLES + (WINDOWS_ONLY_VARIABLES if system == "Windows" else ())
    variables = {name: environ[name] for name in allowed if name in environ}
    site_dirs = tuple(
        p for p in sys.path if os.path.isabs(p) and os.path.basename(p) in ("site-packages", "dist-packages")
    )
    if system == "Windows":  # pragma: no cover - gathered on Windows only; the search itself is tested
        root = environ.get("SystemRoot", r"C:\Windows")
        toolkits = glob.glob(r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v*\bin")
        cudnn = glob.glob(r"C:\Program Files\NVIDIA\CUDNN\v*\bin")
        return Layout(
            system=system,
            variables=variables,
            default_dirs=(os.path.join(root, "System32"), root),
            app_dir=os.path.dirname(sys.executable),
            site_dirs=site_dirs,
            common_dirs=tuple(sorted(toolkits + cudnn)),
        )
    machine = platform.machine()
    multiarch = f"{machine}-linux-gnu"
    defaults = (f"/lib/{multiarch}", f"/usr/lib/{multiarch}", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
    common = [
        folder
        for pattern in ("/usr/local/cuda*/lib64", "/usr/local/cuda*/lib", "/usr/local/cuda*/targets/*/lib")
        for folder in sorted(glob.glob(pattern))
    ]
    return Layout(
        system=system,
        variables=variables,
        ldconfig=_ldconfig(_LDCONFIG_ARCH.get(machine, "")),
        default_dirs=tuple(folder for folder in defaults if os.path.isdir(folder)),
        site_dirs=site_dirs,
        common_dirs=tuple(common),
    )


# The file `ldconfig -p` lists (glibc elf/ldconfig.c, LD_SO_CACHE "/etc/ld.so.cache").
LD_SO_CACHE = "/etc/ld.so.cache"


def _ldconfig(arch_tag: str) -> tuple[tuple[str, str], ...]:
    """The loader's cache as ``ldconfig -p`` lists it, kept between runs under the identity of the program and of
    the cache file it lists (a process of its own saved on every warm run)."""
    binary = shutil.which("ldconfig") or next(
        (path for path in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(path, os.X_OK)), None
    )
    if binary is None:
        return ()

    def listed() -> tuple[tuple[str, str], ...]:
        try:  # not subprocess.run(timeout=...): its wait polls time.sleep through the time module (native/bounded.py)
            listing = bounded.run([binary, "-p"], timeout=10, env={"LC_ALL": "C"})
        except OSError:
            return ()
        return parse_ldconfig(listing.stdout.decode("utf-8", "replace"), arch_tag)

    key = f"{binary}\0{arch_tag}"
    return remembered("ldconfig", key, [binary, LD_SO_CACHE], listed, _encoded_pairs, _decoded_pairs)


def _encoded_pairs(pairs: tuple[tuple[str, str], ...]) -> list[list[str]]:
    return [list(pair) for pair in pairs]


def _decoded_pairs(raw: Any) -> tuple[tuple[str, str], ...]:
    pairs = tuple((name, path) for name, path in raw)
    if not all(isinstance(name, str) and isinstance(path, str) and path.startswith("/") for name, path in pairs):
        raise TypeError("not ldconfig's names and paths")
    return pairs


def _soname(copy: Sequence[Candidate]) -> str:
    return min((c.name for c in copy), key=soname_order)


def _loader_names(copies: Iterable[Sequence[Candidate]], tensorflow: TensorFlow) -> list[str]:
    names = {_soname(copy) for copy in copies}
    names.update(name for name in (tensorflow.cudart_name, tensorflow.cudnn_name) if name)
    return sorted(names)


def _resolution(name: str, context: str, candidates: Sequence[Candidate], answer: ResolveAnswer | None) -> Resolution:
    own = [c for c in candidates if c.name == name]
    ranked = sorted((c for c in own if c.loader_rank is not None), key=lambda c: c.loader_rank or 0)
    unseen = [c for c in own if c.loader_rank is None]
    answer = answer or {}
    return Resolution(
        name=name,
        context=context,
        candidates=tuple(ranked + unseen),
        predicted=ranked[0].path if ranked else None,
        loaded=answer.get("loaded"),
        error=answer.get("error"),
    )


def _free(answer: GpuAnswer | MigAnswer) -> int | None:
    """NVML's free memory; unknown when it says more is free than the device holds, which a snapshot may not say
    (environment._check_devices refuses it) and which no judgement can use."""
    total, free = answer.get("memory_total"), answer.get("memory_free")
    return None if total is not None and free is not None and free > total else free


def _cuda(value: int | None) -> str | None:
    if value is None:
        return None
    try:
        return cuda_version_from_int(value)
    except InvalidVersionValue:
        return None


def _failure(answer: Outcome) -> str | None:
    error = answer.get("error")
    if error and answer.get("output"):
        return f"{error}; it printed: {answer.get('output')}"
    return error


def _failure_kind(answer: Outcome) -> Failure | None:
    """How the probe of one copy failed, as the child classified it (native/isolation.py)."""
    failure = answer.get("failure")
    return Failure(failure) if answer.get("error") and failure else None


def _state(value: str | None) -> State | None:
    return State(value) if value in ("found", "absent", "error") else None


def _mig_devices(answers: Sequence[MigAnswer]) -> tuple[MigDevice, ...]:
    return tuple(
        MigDevice(
            index=mig.get("index") or 0,
            uuid=mig.get("uuid"),
            name=mig.get("name"),
            gpu_instance_id=mig.get("gpu_instance_id"),
            compute_instance_id=mig.get("compute_instance_id"),
            gpu_slices=mig.get("gpu_slices"),
            compute_slices=mig.get("compute_slices"),
            multiprocessors=mig.get("multiprocessors"),
            memory_total=mig.get("memory_total"),
            memory_free=_free(mig),
            error=mig.get("error"),
        )
        for mig in answers
    )


def _driver(answer: NvmlAnswer) -> Driver:
    error = _failure(answer)
    gpus = tuple(
        Gpu(
            index=gpu.get("index") or 0,
            name=gpu.get("name"),
            uuid=gpu.get("uuid"),
            pci_bus_id=gpu.get("pci_bus_id"),
            compute_capability=gpu.get("compute_capability"),
            memory_total=gpu.get("memory_total"),
            memory_free=_free(gpu),
            error=gpu.get("error"),
            mig_mode=gpu.get("mig_mode"),
            mig_pending=gpu.get("mig_pending"),
            mig=_mig_devices(gpu.get("mig") or ()),
            health=_health(gpu.get("health")),
        )
        for gpu in answer.get("gpus") or ()
    )
    known = {gpu.index for gpu in gpus}
    pairs = tuple(
        GpuPair(
            first=first,
            second=second,
            topology=pair.get("topology"),
            p2p_read=pair.get("p2p_read"),
            p2p_write=pair.get("p2p_write"),
            p2p_nvlink=pair.get("p2p_nvlink"),
        )
        for pair in answer.get("pairs") or ()
        if (first := pair.get("first")) in known and (second := pair.get("second")) in known and first < second
    )
    cuda_raw = answer.get("cuda_version_raw")
    return Driver(
        state=_state(answer.get("state")) or State.ERROR,
        path=answer.get("path"),
        reason=error or answer.get("reason"),
        nvml_error=answer.get("nvml_error"),
        version=answer.get("version"),
        cuda_version_raw=cuda_raw,
        cuda_version=_cuda(cuda_raw),
        nvml_version=answer.get("nvml_version"),
        gpus=gpus,
        pairs=pairs,
    )


def _health(answer: HealthAnswer | None) -> GpuHealth | None:
    if answer is None:
        return None
    return GpuHealth(
        compute_mode=answer.get("compute_mode"),
        persistence=answer.get("persistence"),
        ecc=answer.get("ecc"),
        ecc_uncorrected_volatile=answer.get("ecc_uncorrected_volatile"),
        ecc_uncorrected_aggregate=answer.get("ecc_uncorrected_aggregate"),
        retired_pages_pending=answer.get("retired_pages_pending"),
        remap_pending=answer.get("remap_pending"),
        remap_failure=answer.get("remap_failure"),
        clocks_event_reasons=answer.get("clocks_event_reasons"),
        temperature=answer.get("temperature"),
        slowdown_temperature=answer.get("slowdown_temperature"),
        pcie_generation=answer.get("pcie_generation"),
        pcie_generation_max=answer.get("pcie_generation_max"),
        pcie_width=answer.get("pcie_width"),
        pcie_width_max=answer.get("pcie_width_max"),
        nvlinks_active=answer.get("nvlinks_active"),
        unsupported=tuple(answer.get("unsupported") or ()),
    )


def _cuda_driver(answer: CudaAnswer) -> CudaDriver:
    error = _failure(answer)
    raw = answer.get("version_raw")
    state = _state(answer.get("state"))
    return CudaDriver(
        state=state if state is not None and not error else State.ERROR,
        path=answer.get("path"),
        reason=error or answer.get("reason"),
        version_raw=raw,
        version=_cuda(raw),
        init_status=answer.get("init_status"),
        device_count=answer.get("device_count"),
        real_path=_real_path(answer.get("path")),
    )


def _real_path(path: str | None) -> str:
    """Where a loaded library's links end ("" when unknown): the file name a driver or compat package gives it."""
    if not path or not os.path.isabs(path):
        return ""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return ""


def _runtime(copy: Sequence[Candidate], answer: CudartAnswer) -> CudaRuntime:
    error = _failure(answer)
    raw = answer.get("version_raw")
    return CudaRuntime(
        state=State.ERROR if error else State.FOUND,
        **_where(copy),
        reason=error,
        version_raw=raw,
        version=_cuda(raw),
        driver_version_raw=answer.get("driver_version_raw"),
        device_count_status=answer.get("device_count_status"),
        device_count_error=answer.get("device_count_error"),
        device_count=answer.get("device_count"),
        failure=_failure_kind(answer),
    )


def _where(copy: Sequence[Candidate]) -> dict[str, Any]:
    """Where a copy is, as every copy model says it: the first name's path, every name, how each was found, and the
    file it really is."""
    first = copy[0]
    names = tuple(sorted({c.name for c in copy}, key=soname_order))
    return {"path": first.path, "names": names, "via": _merged_via(copy), "real_path": first.real_path}


def _kept_answer(kind: LibraryKind, copy: Sequence[Candidate]) -> Looked[LibraryAnswer] | None:
    path = copy[0].path
    return looked(f"answer-{kind.key}", path, [path, os.path.dirname(path)], library_answer)


def _ask_kind(batch: Batch, kind: LibraryKind, copy: Sequence[Candidate]) -> Asked[LibraryAnswer]:
    return batch.library(copy[0].path, kind.version_call, kind.shape, kind.cuda_call)


def _kind_answer(
    found: Looked[LibraryAnswer] | None, asked: Asked[LibraryAnswer] | None, answers: Answers
) -> LibraryAnswer:
    """The kept answer, or the child's, kept where it is a whole answer (a failure is asked again next run)."""
    if asked is None:  # asked only where nothing was kept
        return found.value if found is not None and found.value is not None else {}
    answer = answers[asked]
    kept(found, None if answer.get("error") or answer.get("failure") else dict(answer))
    return answer


def _library(kind: LibraryKind, copy: Sequence[Candidate], answer: LibraryAnswer) -> LibraryCopy:
    """A copy of a catalog kind: its version as its own call answered, the CUDA it was built for as its file says
    (NCCL's version string) or its own call answers (cublasGetCudartVersion)."""
    from ..probe.library_build import library_build  # here: only a host with such a copy pays for the ELF reader

    first = copy[0]
    error = _failure(answer)
    raw, parts = answer.get("version_raw"), answer.get("parts")
    version = ".".join(str(part) for part in parts) if parts else None
    if raw is not None:
        try:
            version = kind.decode(raw)
        except InvalidVersionValue:
            error = error or f"{kind.version_call} answered {raw} for {first.path}, which is no {kind.display} version"
    if not error and version is None:
        error = f"{kind.version_call} answered {answer.get('status')} for {first.path}, not a version"
    cuda_raw = answer.get("cuda_raw")
    cuda = _cuda(cuda_raw) if cuda_raw is not None else None
    built_for = (
        BuildFact(cuda, first.path, f"{kind.cuda_call}() = {cuda_raw}") if cuda else library_build(kind, first.path)
    )
    return LibraryCopy(
        kind=kind.key,
        state=State.ERROR if error else State.FOUND,
        **_where(copy),
        reason=error,
        version_raw=raw,
        version=version,
        built_for=built_for,
        failure=_failure_kind(answer),
    )


def _merged_via(copy: Sequence[Candidate]) -> tuple[Any, ...]:
    merged: list[Any] = []
    for candidate in copy:
        merged.extend(v for v in candidate.via if v not in merged)
    return tuple(merged)


def cudnn_siblings_missing(system: str, front_name: str, folder_names: Iterable[str]) -> tuple[str, ...]:
    """The sub-library files a split cuDNN (8, 9) needs beside its front library but that are not there."""
    if system == "Windows":
        match = re.fullmatch(r"cudnn64_(\d+)\.dll", front_name, re.I)
    else:
        match = re.fullmatch(r"libcudnn\.so\.(\d+)(?:\.\d+)*", front_name)
    if not match:
        return ()
    major = int(match.group(1))
    present = {name.lower() for name in folder_names}
    wanted = [
        f"cudnn_{part}64_{major}.dll" if system == "Windows" else f"libcudnn_{part}.so.{major}"
        for part in _CUDNN_SUBLIBRARIES.get(major, ())
    ]
    return tuple(name for name in wanted if name.lower() not in present)


_HEADER_DEFINE = re.compile(r"^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)", re.M)


def _header_version(folder: str) -> tuple[str, str] | None:
    """cuDNN's own header beside the library (wheels ship nvidia/cudnn/include; toolkits ../include)."""
    parent = os.path.dirname(folder)
    for header in (
        os.path.join(parent, "include", "cudnn_version.h"),
        os.path.join(parent, "include", "cudnn.h"),
        os.path.join(folder, "cudnn_version.h"),
    ):
        try:
            text = read_regular(header, 65536, whole=False).decode("utf-8", "replace")
        except (OSError, FileRefused):
            continue
        parts = dict(_HEADER_DEFINE.findall(text))
        if {"MAJOR", "MINOR", "PATCHLEVEL"} <= parts.keys():
            return f"{int(parts['MAJOR'])}.{int(parts['MINOR'])}.{int(parts['PATCHLEVEL'])}", header
    return None


def _cudnn(layout: Layout, fs: FileSystem, copy: Sequence[Candidate], answer: CudnnAnswer) -> Cudnn:
    where = _where(copy)
    folder = os.path.dirname(where["path"])
    missing = cudnn_siblings_missing(layout.system, where["names"][0], fs.listdir(folder) or ())
    error = _failure(answer)
    raw = answer.get("version_raw")
    version = source = None
    prop = answer.get("property_version")  # three parts, or None (probe/answers.py)
    if prop is not None:
        version, source = ".".join(str(p) for p in prop), "cudnnGetProperty"
    elif raw is not None:
        with contextlib.suppress(InvalidVersionValue):
            version, source = ".".join(str(p) for p in cudnn_version_from_int(raw)), "cudnnGetVersion"
    if version is None:
        header = _header_version(folder)
        if header:
            version, source = header
    cudart_raw = answer.get("cudart_version_raw")
    if error and missing:
        error = f"{error} (its sub-libraries are missing from {folder}: {', '.join(missing)})"
    return Cudnn(
        state=State.ERROR if error else State.FOUND,
        **where,
        reason=error,
        version_raw=raw,
        version=version,
        version_source=source,
        cudart_version_raw=cudart_raw,
        cudart_version=_cuda(cudart_raw),
        siblings_missing=missing,
        create_status=answer.get("create_status"),
        create_error=answer.get("create_error"),
        last_error=answer.get("last_error"),
        failure=_failure_kind(answer),
        # Its own sub-libraries, absent from its folder, are siblings_missing: one cause, one field.
        missing_dependencies=tuple(name for name in answer.get("missing") or () if name not in missing),
    )
