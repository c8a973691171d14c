"""Render an environment and its findings for people (the doctor's text) and machines (JSON).

Pure module: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import phrases
from ._base.style import PLAIN, Status, Style
from ._base.text import PYTEST_LINE, REPORT_WHOLE, clip, line, listing, markdown_cell, markdown_rows, summarised
from ._base.versions import canonical_name
from .compat.catalog import JUDGED
from .diagnosis import Finding, Severity, Verdict
from .diagnosis.frameworks import copies_text, gpu_code, how_found, label
from .diagnosis.libraries import label as library_label
from .diagnosis.result import Diagnosis, FrameworkJudgement
from .diagnosis.stack import visible_gpus
from .document import (
    REPORT_SCHEMA,
    REPORT_SCHEMA_VERSION,
    AfterPreload,
    CopyInUse,
    FrameworkEntry,
    InUse,
    Report,
    report_json,
)
from .environment import (
    ALLOWED_VARIABLES,
    CHECK_SWITCHES,
    CONTAINER_VARIABLES,
    Candidate,
    CudaRuntime,
    Cudnn,
    Environment,
    FrameworkBuild,
    Gpu,
    LibraryCopy,
    LinkedObject,
    LoadedLibrary,
    MigDevice,
    Pin,
    Resolution,
    State,
    WheelCheck,
    by_file,
)
from .frameworks.base import own_rules
from .overview import (
    VERBOSE_FINDINGS,
    VERBOSE_PARTS,
    cause_indent,
    cause_order,
    copy_status,
    doctor_summary,
    driver_status,
    framework_status,
    gpu_statuses,
    mig_note,
    verdict_status,
    worst,
)

__all__ = ["doctor_json", "doctor_report", "doctor_summary", "doctor_text", "header_lines", "markdown_summary"]

_LABEL = 16
_HEADER_GPUS = 4  # GPUs named in the header; the doctor and the JSON list them all
_SUMMARY_ROWS = 16  # rows of one kind in the step summary
_VALUE = 300  # characters of one variable's value in the doctor's text
# How many of each kind of thing the doctor's text shows; --json lists them all. Real hosts stay well within:
# 8 GPUs of 7 MIG devices, a few copies of each library, a few findings, the 11 libraries JAX loads. A snapshot
# from elsewhere is data, and may list 100,000 GPUs or notes (field test of 2026-11-24, S6).
_GPUS = 32
_PARTS = VERBOSE_PARTS  # MIG devices of a GPU, copies of a library, a framework's objects and pins, notes, folders
_LOADS = 32  # libraries a framework loads, names the loader resolves
_FINDINGS = VERBOSE_FINDINGS  # the default view (overview.py) says what -v shows by these two
_EVIDENCE = 16  # evidence of one finding
_NAMES = 16  # names said in one line (libraries needed, GPU code, folders)


def _line(label: str, text: str) -> str:
    return f"{label:<{_LABEL}}{text}"


def _under(text: str) -> str:
    """A line under the labelled one above it."""
    return _line("", text)


def _indented(text: str) -> str:
    return "  " + text


def _via(vias: Iterable[Any]) -> str:
    return ", ".join(v.value for v in vias)


def _driver_lines(env: Environment) -> list[str]:
    driver = env.driver
    if driver.state is State.FOUND:
        cuda = f", supports CUDA up to {driver.cuda_version}" if driver.cuda_version else ""
        lines = [
            _line("Driver", f"{driver.version or '?'}{cuda}  (NVML {driver.nvml_version or '?'}, {driver.path or '?'})")
        ]
        if driver.reason:
            lines.append(_line("", f"partial: {driver.reason}"))
    else:
        where = f" ({driver.path})" if driver.path else ""
        lines = [_line("Driver", f"{driver.state.value}: {driver.reason or 'no answer'}{where}")]
    libcuda = env.cuda_driver
    if libcuda.state is State.FOUND:
        init = "" if libcuda.init_status in (None, 0) else f", cuInit returned {libcuda.init_status}"
        count = f", {libcuda.device_count} device(s)" if libcuda.device_count is not None else ""
        real = f" -> {libcuda.real_path}" if libcuda.real_path and libcuda.real_path != libcuda.path else ""
        lines.append(_line("libcuda", f"CUDA {libcuda.version or '?'} at {libcuda.path}{real}{init}{count}"))
    else:
        lines.append(_line("libcuda", f"{libcuda.state.value}: {libcuda.reason or 'no answer'}"))
    if env.kernel is not None:
        kernel = env.kernel
        module = f"module {kernel.module_version}" if kernel.module_version else kernel.module_reason or "module ?"
        nodes = kernel.device_nodes
        shown = "not listed" if nodes is None else ", ".join(nodes[:6]) + (" ..." if len(nodes) > 6 else "") or "none"
        lines.append(_line("Kernel", f"{module}; /dev/nvidia*: {shown}"))
    if not driver.gpus:
        lines.append(_line("GPUs", "none seen"))
    lines += summarised(list(enumerate(driver.gpus)), _GPUS, _gpu_lines, "GPUs", said=_under)
    return lines


def _gpu_lines(numbered: tuple[int, Gpu]) -> list[str]:
    position, gpu = numbered
    facts = [
        phrases.gpu(gpu, free=False),
        f"{phrases.size(gpu.memory_free)} free of {phrases.size(gpu.memory_total)}",
        gpu.pci_bus_id or "",
        gpu.uuid or "",
    ]
    text = ", ".join(fact for fact in facts if fact)
    if gpu.error:
        text += f"  [failed: {gpu.error}]"
    return [_line("GPUs" if position == 0 else "", text), *(_line("", f"  {text}") for text in _mig_lines(gpu))]


def _mig_lines(gpu: Gpu) -> list[str]:
    """A GPU's MIG mode and MIG devices, one line each; nothing for a GPU without MIG."""
    if gpu.mig_mode is None:
        return []
    pending = ""
    if gpu.mig_pending is not None and gpu.mig_pending != gpu.mig_mode:
        pending = f" ({'enabled' if gpu.mig_pending else 'disabled'} after the next reset)"
    if not gpu.mig_mode:
        return [f"MIG disabled{pending}"] if pending else []
    return [
        f"MIG enabled{pending}: {len(gpu.mig)} MIG device(s)",
        *summarised(gpu.mig, _PARTS, _mig_line, "MIG devices"),
    ]


def _mig_line(mig: MigDevice) -> list[str]:
    ids = f"GPU instance {_known(mig.gpu_instance_id)}, compute instance {_known(mig.compute_instance_id)}"
    facts = [
        f"MIG {mig.index} {mig.name or '(name unknown)'}",
        ids,
        f"{mig.multiprocessors} SMs" if mig.multiprocessors is not None else "",
        f"{phrases.size(mig.memory_free)} free of {phrases.size(mig.memory_total)}",
        mig.uuid or "",
    ]
    text = ", ".join(fact for fact in facts if fact)
    return [text + (f"  [failed: {mig.error}]" if mig.error else "")]


def _known(value: int | None) -> str:
    """An ID NVML did not give (the snapshot's null) says so, not Python's None."""
    return "unknown" if value is None else str(value)


def _runtime_line(runtime: CudaRuntime) -> list[str]:
    head = f"{runtime.version or '?':<7} {runtime.path}  (via {_via(runtime.via)})"
    if runtime.state is State.ERROR:
        return [head, f"        probe failed: {runtime.reason}"]
    detail = []
    if runtime.device_count is not None:
        detail.append(f"sees {runtime.device_count} device(s)")
    elif runtime.device_count_status is not None:
        status = f"cudaGetDeviceCount: {runtime.device_count_status} {runtime.device_count_error or ''}".strip()
        if runtime.driver_version_raw == 0:
            status += " -> driver version 0: it found no usable driver"
        detail.append(status)
    return [head] + [f"        {text}" for text in detail]


def _cudnn_line(cudnn: Cudnn) -> list[str]:
    source = f", version from {cudnn.version_source}" if cudnn.version_source not in (None, "cudnnGetProperty") else ""
    head = f"{cudnn.version or '?':<7} {cudnn.path}  (via {_via(cudnn.via)}{source})"
    lines = [head]
    if cudnn.cudart_version:
        lines.append(f"        built for CUDA {cudnn.cudart_version}")
    if cudnn.siblings_missing:
        lines.append(f"        INCOMPLETE: missing {listing(cudnn.siblings_missing, _NAMES)}")
    if cudnn.missing_dependencies:
        lines.append(f"        cannot load: {listing(cudnn.missing_dependencies, _NAMES)}")
    if cudnn.state is State.ERROR:
        lines.append(f"        probe failed: {cudnn.reason}")
    elif cudnn.create_status not in (None, 0):
        last = f" ({cudnn.last_error})" if cudnn.last_error else ""
        lines.append(f"        cudnnCreate: {cudnn.create_status} {cudnn.create_error or ''}{last}".rstrip())
    return lines


def _library_line(copy: LibraryCopy) -> list[str]:
    lines = [f"{copy.version or '?':<7} {copy.path}  (via {_via(copy.via)})"]
    if copy.built_for is not None:
        lines.append(f"        built for CUDA {copy.built_for.value} ({copy.built_for.how})")
    if copy.state is State.ERROR:
        lines.append(f"        probe failed: {copy.reason}")
    return lines


def _copies_block(label: str, lines_per_copy: Sequence[list[str]], empty: str) -> list[str]:
    if not lines_per_copy:
        return [_line(label, empty)]

    def copy_lines(numbered: tuple[int, list[str]]) -> list[str]:
        index, lines = numbered
        return [_line(label if index == 0 else "", lines[0]), *(" " * _LABEL + extra for extra in lines[1:])]

    return summarised(list(enumerate(lines_per_copy)), _PARTS, copy_lines, "copies", said=_under)


def _tensorflow_lines(env: Environment) -> list[str]:
    tf = env.tensorflow
    if tf.state is State.ABSENT and tf.location is None:
        return [_line("TensorFlow", "not installed")]
    head = f"{tf.version or '?'} ({tf.distribution or 'unknown distribution'}) at {tf.location}"
    lines = [_line("TensorFlow", head)]
    if tf.state is State.ERROR:
        lines.append(_line("", f"build info unreadable: {tf.reason}"))
        return lines
    if tf.is_cuda_build is False:
        lines.append(_line("", "CPU-only build"))
    else:
        cuda = tf.cuda_version or "not recorded"
        cudnn = tf.cudnn_version or "not recorded"
        lines.append(_line("", f"built for CUDA {cuda}, cuDNN {cudnn}  ({tf.build_info_format}, {tf.build_info_path})"))
        loads = [name for name in (tf.cudart_name, tf.cudnn_name) if name]
        if loads:
            lines.append(_line("", f"loads {', '.join(loads)}"))
        if tf.compute_capabilities:
            lines.append(_line("", f"kernels for {listing(tf.compute_capabilities, _NAMES)}"))
        if tf.reason:
            lines.append(_line("", tf.reason))
    shown = tf.library_dirs[:_FOLDERS]
    for folder in shown:
        lines.append(_line("", f"searches first: {folder}"))
    if len(tf.library_dirs) > len(shown):
        lines.append(_line("", f"  and {len(tf.library_dirs) - len(shown)} more folders (the JSON lists them)"))
    return lines


_FOLDERS = 8  # folders of a RUNPATH said in the text (TensorFlow 2.21's has 668 entries, about 30 folders)


def _framework_lines(diagnosis: Diagnosis, build: FrameworkBuild) -> list[str]:
    """A framework as its files describe it (what it was built for, where each fact was read), the copies its
    own search loads, and whether it can run GPU work here."""
    label = phrases.framework(build.name)
    head = f"{build.version or '?'} ({build.distribution or 'unknown distribution'}) at {build.location}"
    # TensorFlow's version and build are said in its own block above: this one goes on from it.
    own = own_rules(build.name)
    lines = [] if own else [_line(label, head)]
    if build.is_cuda_build is False and not own:
        lines.append(_line("", "CPU-only build"))
    for what, fact in (("CUDA", build.cuda), ("cuDNN", build.cudnn)):
        if fact is not None and not own:
            lines.append(_line("", f"built for {what} {fact.value}  ({fact.how}, {fact.source})"))
    if build.arch_list is not None:
        arch = build.arch_list
        lines.append(_line("", f"built for {listing(arch.value.split(), _NAMES)}  ({arch.how}, {arch.source})"))
    lines += summarised(build.objects, _PARTS, _object_lines, "objects", said=_under)
    checks = {canonical_name(check.distribution): check for check in diagnosis.env.wheel_checks}
    lines += summarised(build.pins, _PARTS, lambda pin: _pin_line(pin, checks), "pins", said=_under)
    lines += summarised(build.loads, _LOADS, _load_line, "libraries loaded", said=_under)
    if build.reason:
        lines.append(_line("", build.reason))
    if build.state is State.FOUND:
        judged = _judgement(diagnosis, build)
        lines.append(_line("", f"verdict: {judged.summary}{judged.after_preload}"))
    return lines


def _object_lines(item: LinkedObject) -> list[str]:
    how = f"DT_RPATH {item.rpath}" if item.rpath else f"DT_RUNPATH {item.runpath}" if item.runpath else "no RPATH"
    lines = [_line("", f"{item.path}: {clip(how, 300)}")]
    if item.needed:
        lines.append(_line("", f"  needs {listing(item.needed, _NAMES)}"))
    code = [*item.sass, *item.ptx]
    lines.append(_line("", f"  GPU code: {listing(code, _NAMES) if code else 'none found'}"))
    if item.reason:
        lines.append(_line("", f"  unread: {item.reason}"))
    return lines


def _pin_line(pin: Pin, checks: Mapping[str, WheelCheck]) -> list[str]:
    """The pin, the version installed and, where the disk says otherwise, how many of its files are not its own."""
    installed = f"installed {pin.installed}" if pin.installed else "not installed beside it"
    check = checks.get(canonical_name(pin.package))
    if pin.installed and check is not None and check.differing:
        installed += f", but {len(check.differing)} of its {check.files} files on disk differ from its RECORD"
    return [_line("", f"pins {pin.package}{pin.specifier}  ({installed})")]


def _load_line(load: LoadedLibrary) -> list[str]:
    if load.path is None:
        optional = "" if load.required else " (optional)"
        return [_line("", f"loads {load.name}: NOT FOUND{optional}, searched {len(load.searched)} folders")]
    return [_line("", f"loads {load.name} from {load.path}  ({how_found(load)})")]


def _found_by_framework(env: Environment, resolution: Resolution) -> str | None:
    """Where a framework's own search finds a name a plain dlopen cannot: TensorFlow's RUNPATH folders, or the
    DT_RPATH (or preload) through which another framework's objects get it: 'TensorFlow finds /x through its
    RUNPATH', 'PyTorch finds /x through DT_RPATH of libtorch_cuda.so'."""
    if resolution.context != "process":
        return None
    own = env.resolution(resolution.name, "tensorflow")
    if own is not None and (own.loaded or own.predicted):
        return f"TensorFlow finds {own.loaded or own.predicted} through its RUNPATH"
    for build in env.frameworks:
        for load in build.loads:
            if load.name == resolution.name and load.path:
                return f"{phrases.framework(build.name)} finds {load.path} ({how_found(load)})"
    return None


def _resolution_lines(env: Environment, resolution: Resolution) -> list[str]:
    who = "" if resolution.context == "process" else f" (as {resolution.context} loads it)"
    if resolution.predicted is None and resolution.loaded is None:
        framework = _found_by_framework(env, resolution)
        if framework:
            return [f"{resolution.name}: a plain dlopen finds no copy; {framework}"]
        unseen = [group[0].path for group in by_file(resolution.candidates)]
        lines = [f"{resolution.name}{who}: the loader finds no copy"]
        if unseen:
            lines.append(f"  present where the loader does not look: {listing(unseen, _NAMES)}")
        return lines
    winner = resolution.loaded or resolution.predicted
    groups = by_file(resolution.candidates)
    winner_group = next((g for g in groups if any(c.path == winner for c in g)), None)
    how = _via(winner_group[0].via) if winner_group else "loader"
    check = ""
    if resolution.loaded and resolution.predicted and resolution.loaded != resolution.predicted:
        check = f"  [dlopen loaded {resolution.loaded}; the search rules predicted {resolution.predicted}]"
    elif resolution.loaded:
        check = "  [confirmed by dlopen]"
    others = [group for group in groups if group is not winner_group]
    return [
        f"{resolution.name}{who} -> {winner} ({how}){check}",
        *summarised(others, _PARTS, _other_copy, "copies", said=_indented),
    ]


def _other_copy(group: list[Candidate]) -> list[str]:
    first = group[0]
    state = "shadowed" if first.loader_rank is not None else "not on the loader path"
    return [f"  {state}: {first.path} ({_via(first.via)})"]


def _finding_lines(finding: Finding, indent: str = "  ") -> list[str]:
    because = f" because [{finding.because}]:" if finding.because else ""
    lines = [f"{indent}{finding.severity.value.upper()} [{finding.code}]{because} {finding.summary}"]
    evidence = [item for item in finding.evidence if item]
    lines += summarised(
        evidence,
        _EVIDENCE,
        lambda item: [f"{indent}    {item}"],
        "items of evidence",
        said=lambda text: f"{indent}    {text}",
    )
    lines.append(f"{indent}    fix: {finding.fix}")
    return lines


def doctor_text(
    diagnosis: Diagnosis, verdict: Verdict | None = None, *, source: str | None = None, probe: str | None = None
) -> str:
    """The doctor's report: everything read, every finding with its evidence and fix, and ``verdict`` (the
    diagnosis' own unless given: ``--framework`` gives that framework's). ``probe``: what the probe took from the
    cache of file facts. Each line is made printable: a snapshot or a library may hold escape sequences."""
    env, findings, verdict = diagnosis.env, diagnosis.findings, verdict or diagnosis.verdict
    host = env.host
    origin = f"replayed from {source}, probed {env.probed_at}" if source else probed_line(env, probe)
    lines = [f"pytest-cudnn doctor: {host.system} {host.machine}, Python {host.python}, {origin}", ""]
    lines += _driver_lines(env)
    lines.append("")
    lines += _copies_block("CUDA runtime", [_runtime_line(r) for r in env.cuda_runtimes], "none found")
    lines += _copies_block("cuDNN", [_cudnn_line(c) for c in env.cudnns], "none found")
    for kind in JUDGED:  # the catalog's further kinds (NCCL), where any copy was found
        found = [_library_line(c) for c in env.libraries if c.kind == kind.key]
        lines += _copies_block(kind.display, found, "none found") if found else []
    lines += _tensorflow_lines(env)
    for build in sorted((judged.build for judged in diagnosis.frameworks), key=lambda b: not own_rules(b.name)):
        lines += _framework_lines(diagnosis, build)
    if env.resolutions:
        lines += ["", "Loader resolution"]
        lines += summarised(
            env.resolutions,
            _LOADS,
            lambda resolution: ["  " + text for text in _resolution_lines(env, resolution)],
            "library names",
            said=_indented,
        )
    lines += ["", "Environment"]
    shown = dict(env.variables)
    for name in ALLOWED_VARIABLES:
        if name in CONTAINER_VARIABLES + CHECK_SWITCHES and name not in shown:
            continue  # a container's, or a framework's switch for its own check: said where set
        lines.append(f"  {name:<20} {clip(shown.pop(name, '(unset)'), _VALUE)}")
    for name, value in shown.items():
        lines.append(f"  {name:<20} {clip(value, _VALUE)}")
    lines += summarised(
        env.unreadable, _PARTS, lambda f: [f"  could not search: {f.path} ({f.reason})"], "folders", said=_indented
    )
    lines += summarised(env.notes, _PARTS, lambda note: [f"  note: {note}"], "notes", said=_indented)
    if findings:
        lines += [
            "",
            "Findings",
            *summarised(
                cause_order(findings),
                _FINDINGS,
                lambda item: _finding_lines(item[0], "  " + cause_indent(item[1])),
                "findings",
                said=_indented,
            ),
        ]
    lines += ["", f"Verdict: {verdict.summary}"]
    return "\n".join(line(text) for text in lines) + "\n"


def doctor_report(diagnosis: Diagnosis, verdict: Verdict | None = None) -> Report:
    """The report document of ``diagnosis`` (:mod:`pytest_cudnn.document`): ``doctor --json``'s, and the start of
    ``--gpu-report``'s. ``verdict`` as for :func:`doctor_text`."""
    return Report(
        REPORT_SCHEMA,
        REPORT_SCHEMA_VERSION,
        diagnosis.env,
        diagnosis.findings,
        verdict or diagnosis.verdict,
        framework_entries(diagnosis),
        in_use(diagnosis),
    )


def doctor_json(diagnosis: Diagnosis, verdict: Verdict | None = None) -> dict[str, Any]:
    """Everything, uncut: JSON escapes what a terminal would act on. ``verdict`` as for :func:`doctor_text`."""
    return report_json(doctor_report(diagnosis, verdict))


def in_use(diagnosis: Diagnosis) -> InUse:
    """What the diagnosis decided the stack uses, so that a reader (the fleet) shows it rather than working it out:
    the CUDA runtime and cuDNN in use (as the header names them) and how many GPUs CUDA sees."""

    def copy(found: CudaRuntime | Cudnn | None) -> CopyInUse | None:
        return CopyInUse(found.version, found.path) if found is not None else None

    return InUse(copy(diagnosis.runtime), copy(diagnosis.cudnn), len(visible_gpus(diagnosis.env)))


def framework_entries(diagnosis: Diagnosis) -> tuple[FrameworkEntry, ...]:
    """Each framework found, whether it can run GPU work here and, when not, the cause (a finding's code); its
    verdict after its own preload call where that changes it (requires_onnxruntime's preload_dlls=True reads it);
    the copy of each further catalog kind it loads. For CI, without parsing the text."""
    return tuple(
        FrameworkEntry(
            judged.name,
            judged.version,
            judged.ok,
            judged.summary,
            judged.cause or None,
            _after_preload(judged),
            {c.kind: CopyInUse(c.version, c.path) for c in judged.libraries},
        )
        for judged in diagnosis.frameworks
    )


def _after_preload(judged: FrameworkJudgement) -> AfterPreload | None:
    after = judged.preloaded
    if after is None or judged.preload is None:
        return None
    return AfterPreload(judged.preload, after.ok, after.summary, after.cause or None)


def _judgement(diagnosis: Diagnosis, build: FrameworkBuild) -> FrameworkJudgement:
    judged = diagnosis.framework(build.name)
    assert judged is not None  # the diagnosis judges every build of its environment
    return judged


def _driver_headline(env: Environment, findings: Sequence[Finding]) -> str:
    driver = env.driver
    if driver.state is State.FOUND:
        gpus = listing([phrases.gpu(g) + mig_note(g) for g in driver.gpus], _HEADER_GPUS) or "none"
        return f"driver {driver.version} (CUDA {driver.cuda_version or '?'}), GPUs: {gpus}"
    said = next((f.summary for f in findings if f.component == "driver" and f.severity is Severity.ERROR), None)
    return said or f"no usable NVIDIA driver ({driver.reason or driver.state.value})"


def _framework_headline(diagnosis: Diagnosis, build: FrameworkBuild) -> str:
    """'PyTorch 2.15.0+cu132: CUDA 13.2, cuDNN 9.26.0 (wheels, DT_RPATH), kernels sm_75-sm_120: cannot run: ...'."""
    env, judged = diagnosis.env, diagnosis.framework(build.name)
    runtime, cudnn = (judged.runtime, judged.cudnn) if judged is not None else (None, None)  # the copies it judged
    cuda_text = runtime.version if runtime and runtime.version else build.cuda.value if build.cuda else None
    cudnn_text = cudnn.version if cudnn and cudnn.version else build.cudnn.value if build.cudnn else None
    runtime_how, cudnn_how = copies_text(env, build, CudaRuntime), copies_text(env, build, Cudnn)
    facts = [
        (f"CUDA {cuda_text}" if cuda_text else "") + (f" ({runtime_how})" if runtime_how and cuda_text else ""),
        (f"cuDNN {cudnn_text}" if cudnn_text else "") + (f" ({cudnn_how})" if cudnn_how and cudnn_text else ""),
        *(library_label(copy) for copy in (judged.libraries if judged is not None else ())),
    ]
    code, _ = gpu_code(build)
    if code:
        facts.append(f"kernels {code[0]}" + (f"-{code[-1]}" if len(code) > 1 else ""))
    if build.is_cuda_build is False:
        facts.append("CPU-only build")
    detail = ", ".join(fact for fact in facts if fact)
    judgement = _judgement(diagnosis, build)
    return label(build) + (f": {detail}" if detail else "") + f": {judgement.summary}{judgement.after_preload}"


def probed_line(env: Environment, probe: str | None) -> str:
    """How long the probe took, and what it took from the cache of file facts where that is said."""
    return f"probed in {env.probe_seconds:.2f} s" + (f" ({probe})" if probe else "")


def header_lines(
    diagnosis: Diagnosis,
    *,
    runtime: CudaRuntime | None,
    cudnn: Cudnn | None,
    verbose: bool = False,
    source: str | None = None,
    style: Style = PLAIN,
    probe: str | None = None,
) -> list[str]:
    """pytest's session header: driver and GPUs, the libraries in use, each framework, the verdict, each line
    after the mark of its status in ``style`` (pytest writes header lines as they are: a style with colour is
    not for them); findings with -v. Long lists are summarised (the JSON report keeps them whole) and every line
    is printable."""
    env, findings, verdict = diagnosis.env, diagnosis.findings, diagnosis.verdict
    parts = [
        phrases.copy(runtime) if runtime else "no CUDA runtime in use",
        phrases.copy(cudnn) if cudnn else "no cuDNN in use",
    ]
    tf = env.tensorflow
    if tf.state is not State.ABSENT:
        parts.append(f"TensorFlow {tf.version or '?'}")
    origin = f" [replayed from {source}]" if source else ""
    host = worst([driver_status(diagnosis), *gpu_statuses(diagnosis).values()])
    copies = worst([copy_status(diagnosis, CudaRuntime, runtime), copy_status(diagnosis, Cudnn, cudnn)])

    def marked(status: Status, text: str) -> str:
        return f"pytest-cudnn: {style.mark(status)} {text}"

    lines = [
        marked(host, f"{_driver_headline(env, findings)}{origin}"),
        marked(copies, ", ".join(parts)),
        *summarised(
            diagnosis.frameworks,
            _HEADER_ROWS,
            lambda judged: [marked(framework_status(diagnosis, judged), _framework_headline(diagnosis, judged.build))],
            "frameworks",
            _HEADER_WHOLE,
            _headed,
        ),
        marked(verdict_status(diagnosis), verdict.summary),
    ]
    if verbose:
        lines += summarised(
            cause_order(findings),
            _HEADER_ROWS,
            lambda item: [f"pytest-cudnn: {cause_indent(item[1])}{_headline(item[0])}"],
            "findings",
            _HEADER_WHOLE,
            _headed,
        )
    if verbose and probe and not source:
        lines.append(f"pytest-cudnn: {probed_line(env, probe)}")
    return [line(text, PYTEST_LINE) for text in lines]


def _headline(finding: Finding) -> str:
    because = f" because [{finding.because}]:" if finding.because else ""
    return f"{finding.severity.value.upper()} [{finding.code}]{because} {finding.summary}"


_HEADER_ROWS = 16  # frameworks, findings (with -v), xdist hosts in the session header
_HEADER_WHOLE = "pytest-cudnn doctor --json lists them all"


def _headed(text: str) -> str:
    return f"pytest-cudnn: {text}"


def markdown_summary(diagnosis: Diagnosis, skips: Sequence[tuple[str, int, str]]) -> str:
    """A GitHub step summary block: the verdict, the stack, the findings, the environment skips by cause. Every
    cell is escaped for Markdown and HTML; the block begins and ends with a blank line, so that it stands apart
    from what other steps wrote to the same file."""
    env, findings, verdict = diagnosis.env, diagnosis.findings, diagnosis.verdict
    driver = env.driver
    components = [["driver", driver.version or driver.state.value, driver.path or driver.reason or ""]]
    for gpu in driver.gpus:
        components.append(["GPU", phrases.gpu(gpu), gpu.pci_bus_id or ""])
        components += [["MIG device", f"MIG {m.index} {m.name or '?'}", m.uuid or ""] for m in gpu.mig]
    components += [["CUDA runtime", r.version or "?", f"{r.path} (via {_via(r.via)})"] for r in env.cuda_runtimes]
    components += [["cuDNN", c.version or "?", f"{c.path} (via {_via(c.via)})"] for c in env.cudnns]
    if env.tensorflow.state is not State.ABSENT:
        components.append(["TensorFlow", env.tensorflow.version or "?", env.tensorflow.location or ""])
    lines = ["", "### pytest-cudnn", "", f"**{markdown_cell(verdict.summary)}**", ""]
    lines += ["| component | found | where |", "| --- | --- | --- |"]
    lines += markdown_rows(components, _SUMMARY_ROWS * 3, "components", REPORT_WHOLE)
    if findings:
        lines += ["", "| severity | code | finding | fix |", "| --- | --- | --- | --- |"]
        rows = [[f.severity.value, f.code, f.summary, f.fix] for f in findings]
        lines += markdown_rows(rows, _SUMMARY_ROWS, "findings", REPORT_WHOLE)
    if skips:
        lines += ["", "| environment skips | cause | first reason |", "| --- | --- | --- |"]
        rows = [[str(count), cause, reason] for cause, count, reason in skips]
        lines += markdown_rows(rows, _SUMMARY_ROWS, "causes", REPORT_WHOLE)
    return "\n".join(lines) + "\n\n"
