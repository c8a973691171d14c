"""The doctor's default view, for people: what is wrong first, with its fix; then one line per component with a
status mark; then the verdict and where to read more. ``doctor -v`` prints everything read
(:func:`pytest_cudnn.report.doctor_text`); ``--json`` holds it all for machines.

Pure module: a :class:`~pytest_cudnn.diagnosis.Diagnosis` and a :class:`~pytest_cudnn.style.Style` in, text out.
A component's mark follows the findings about it: an error ✗, a warning !, neither ✓ (and - for a component that
is not there when nothing says that matters). The same marks start the session header's lines (report.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from . import phrases
from .compat.cuda import architecture_name
from .diagnosis import Finding, Severity, Verdict
from .diagnosis.frameworks import concerns
from .diagnosis.result import Diagnosis, FrameworkJudgement
from .environment import CudaRuntime, Cudnn, Gpu, State
from .style import PLAIN, Status, Style
from .text import line, listing, summarised

__all__ = [
    "cause_order",
    "copy_status",
    "doctor_summary",
    "driver_status",
    "framework_status",
    "gpu_statuses",
    "mig_note",
    "status_of",
    "verdict_status",
    "worst",
]

HINT = "-v for everything read; pytest-cudnn explain CODE for what a finding means"
_LABEL = 14  # the component's name, before what was read of it
_PROBLEMS = 30  # errors and warnings the view lists; -v and --json list them all
_GPU_KINDS = 8  # lines of GPUs (identical GPUs share one)
_FRAMEWORKS = 16
_INDEXES = 6  # runs of GPU indexes named in one label
_REFERENCES = 4  # codes a component's line points to
_USERS = 6  # frameworks named as loading one copy
_DEPTH = 4  # steps of "because" shown as indentation; deeper ones stay at this step
_WHOLE = "-v lists them all"


def cause_order(findings: Sequence[Finding]) -> list[tuple[Finding, int]]:
    """``findings`` in the diagnosis' own order (diagnose() lists each cause right before what follows from it), each
    with how many steps of ``because`` lead to it: one more than the nearest finding above of its cause's code; 0
    for a finding of its own, or whose cause is not among ``findings`` (a note the default view leaves out)."""
    ordered: list[tuple[Finding, int]] = []
    last_depth: dict[str, int] = {}  # code -> the depth of the nearest finding of that code so far
    for finding in findings:
        cause = finding.because
        depth = last_depth[cause] + 1 if cause is not None and cause != finding.code and cause in last_depth else 0
        ordered.append((finding, depth))
        last_depth[finding.code] = depth
    return ordered


def status_of(findings: Iterable[Finding]) -> Status:
    """An error ✗, else a warning !, else ✓: what ``findings`` (those about one thing) make of its mark."""
    severities = {finding.severity for finding in findings}
    if Severity.ERROR in severities:
        return Status.ERROR
    if Severity.WARNING in severities:
        return Status.WARNING
    return Status.OK


_RANK = {Status.ABSENT: 0, Status.OK: 1, Status.WARNING: 2, Status.ERROR: 3}


def worst(statuses: Iterable[Status]) -> Status:
    """The mark of a line about several things: the worst of theirs (- for none)."""
    return max(statuses, key=_RANK.__getitem__, default=Status.ABSENT)


def _serious(findings: Iterable[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.severity is not Severity.INFO]


def _driver_findings(diagnosis: Diagnosis) -> list[Finding]:
    return [finding for finding in diagnosis.findings if finding.component == "driver"]


def driver_status(diagnosis: Diagnosis) -> Status:
    """The driver's mark: its findings; no driver read is an error whatever else is said."""
    if diagnosis.env.driver.state is not State.FOUND:
        return Status.ERROR
    return status_of(_driver_findings(diagnosis))


_GPU_NAMED = re.compile(r"\bGPU (\d{1,9})\b")


def _gpu_findings(diagnosis: Diagnosis) -> dict[int | None, list[Finding]]:
    """The GPU findings by the GPU (its NVML index) each is about, as its summary names it ("GPU 3 has MIG
    enabled but no MIG devices"); under None those that name none, which are about every GPU."""
    found: dict[int | None, list[Finding]] = {}
    for finding in diagnosis.findings:
        if finding.component != "gpu":
            continue
        named: list[int | None] = [*sorted({int(index) for index in _GPU_NAMED.findall(finding.summary)})]
        for index in named or [None]:
            found.setdefault(index, []).append(finding)
    return found


def _about_gpu(found: dict[int | None, list[Finding]], gpu: Gpu) -> list[Finding]:
    return [*found.get(gpu.index, ()), *found.get(None, ())]


def gpu_statuses(diagnosis: Diagnosis) -> dict[int, Status]:
    """Each GPU's mark (by its index): the GPU findings about it."""
    found = _gpu_findings(diagnosis)
    return {gpu.index: status_of(_about_gpu(found, gpu)) for gpu in diagnosis.env.driver.gpus}


_COMPONENT = {CudaRuntime: "cuda-runtime", Cudnn: "cudnn"}


def _copy_findings(diagnosis: Diagnosis, kind: type[CudaRuntime] | type[Cudnn], path: str | None) -> list[Finding]:
    """The findings about the copy at ``path``: those naming it, and those of its kind that name no copy ("no
    CUDA runtime anywhere"). ``path`` None: only the latter."""
    component = _COMPONENT[kind]
    return [
        finding
        for finding in diagnosis.findings
        if (path is not None and path in finding.subjects) or (finding.component == component and not finding.subjects)
    ]


def copy_status(
    diagnosis: Diagnosis, kind: type[CudaRuntime] | type[Cudnn], copy: CudaRuntime | Cudnn | None
) -> Status:
    """A CUDA runtime's (or cuDNN's) mark; for none in use, what the findings about its kind say, else -."""
    findings = _copy_findings(diagnosis, kind, copy.path if copy is not None else None)
    if copy is None and not _serious(findings):
        return Status.ABSENT
    return status_of(findings)


def _framework_findings(diagnosis: Diagnosis, judged: FrameworkJudgement) -> list[Finding]:
    """The findings about this framework itself: its folder, the copies it loads, its own rules; not the host's
    (the driver's and the GPUs' lines carry those). Errors only when it cannot run: whether an error stops it is
    its judgement's to say."""
    copies = [copy.path for copy in (judged.runtime, judged.cudnn) if copy is not None]
    severities = {Severity.WARNING} if judged.ok else {Severity.ERROR, Severity.WARNING}
    return [
        finding
        for finding in diagnosis.findings
        if finding.severity in severities
        and concerns(judged.build, finding, copies)
        and (finding.subjects or finding.component not in ("driver", "gpu", "environment"))
    ]


def framework_status(diagnosis: Diagnosis, judged: FrameworkJudgement) -> Status:
    """A framework's mark: ✗ when it cannot run GPU work here (its verdict), else ! for a warning about it."""
    if not judged.ok:
        return Status.ERROR
    return status_of(_framework_findings(diagnosis, judged))


def verdict_status(diagnosis: Diagnosis, verdict: Verdict | None = None) -> Status:
    """The verdict's mark: ✗ when it fails; the diagnosis' own verdict (``verdict`` None) ! with warnings."""
    if verdict is not None and verdict != diagnosis.verdict:
        return Status.OK if verdict.ok else Status.ERROR
    if not diagnosis.verdict.ok:
        return Status.ERROR
    return Status.WARNING if any(f.severity is Severity.WARNING for f in diagnosis.findings) else Status.OK


def mig_note(gpu: Gpu) -> str:
    """' [MIG: 1g.10gb, 3g.40gb]' after a partitioned GPU; '' for one without MIG."""
    if not gpu.mig_mode:
        return ""
    names = [(mig.name or "?").rpartition(" MIG ")[2] for mig in gpu.mig]
    return f" [MIG: {listing(names, 4) if names else 'no MIG devices'}]"


def _row(style: Style, status: Status, label: str, text: str, indent: str = "") -> str:
    """One line: the mark, then the label in its column and the text, made printable (the mark's colour is
    added after: it is the one escape a line may hold)."""
    shown = label.ljust(_LABEL - 1) + " " + text if label else text
    return f"{indent}{style.mark(status)} {line(shown)}"


def _plain(text: str, indent: str = "") -> str:
    return indent + line(text)


def _references(findings: Iterable[Finding], shown: set[str], but: str = "") -> str:
    """' (see [a], [b] above)': the listed findings a component's mark comes from."""
    codes = list(dict.fromkeys(f.code for f in findings if f.code in shown and f.code != but))
    if not codes:
        return ""
    return f" (see {listing([f'[{code}]' for code in codes], _REFERENCES)} above)"


def _problem_lines(style: Style, finding: Finding, depth: int) -> list[str]:
    indent = "  " * min(depth, _DEPTH)
    status = Status.ERROR if finding.severity is Severity.ERROR else Status.WARNING
    because = f" because [{finding.because}]:" if finding.because else ""
    return [
        f"{indent}{style.mark(status)} {line(f'[{finding.code}]{because} {finding.summary}')}",
        _plain(f"    fix: {finding.fix}", indent),
    ]


def _problems(style: Style, diagnosis: Diagnosis) -> tuple[list[str], set[str]]:
    """Each error and warning in the diagnosis' order (errors and what they follow from first, a finding that follows
    from another right after it), with its fix; then how many notes -v shows. The codes of the findings listed."""
    ordered = cause_order(_serious(diagnosis.findings))  # as the diagnosis ranked them: errors and their causes first
    listed = ordered if len(ordered) <= _PROBLEMS + 1 else ordered[:_PROBLEMS]  # as summarised() cuts
    shown = {finding.code for finding, _ in listed}
    lines = summarised(ordered, _PROBLEMS, lambda item: _problem_lines(style, *item), "problems", _WHOLE)
    notes = sum(f.severity is Severity.INFO for f in diagnosis.findings)
    if notes:
        lines.append(f"{notes:,} note{'s' if notes > 1 else ''}: -v shows {'them' if notes > 1 else 'it'}")
    return lines, shown


def _driver_line(style: Style, diagnosis: Diagnosis, shown: set[str]) -> str:
    env = diagnosis.env
    driver, libcuda = env.driver, env.cuda_driver
    if driver.state is State.FOUND:
        text = driver.version or "(version unknown)"
        if driver.cuda_version:
            text += f", supports CUDA up to {driver.cuda_version}"
        if libcuda.state is State.FOUND and libcuda.version and libcuda.version != driver.cuda_version:
            text += f"; libcuda {libcuda.version} at {libcuda.path}"  # another libcuda answers (cuda-compat)
    else:
        text = f"{driver.state.value}: {driver.reason or 'no answer'}"
    findings = _serious(_driver_findings(diagnosis))
    return _row(style, driver_status(diagnosis), "Driver", text + _references(findings, shown))


def _index_runs(indexes: Sequence[int]) -> list[str]:
    """[0, 1, 2, 5, 7, 8] -> ['0-2', '5', '7-8']."""
    runs: list[list[int]] = []
    for index in indexes:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return [f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs]


def _gpu_kind(gpu: Gpu) -> str:
    """'NVIDIA H100 80GB HBM3 (9.0, Hopper)': what makes GPUs alike in this view."""
    facts = [gpu.compute_capability or ""]
    arch = architecture_name(gpu.compute_capability) if gpu.compute_capability else None
    facts.append(arch or "")
    said = ", ".join(fact for fact in facts if fact)
    return f"{gpu.name or '(name unknown)'}{f' ({said})' if said else ''}{mig_note(gpu)}"


def _gpu_lines(style: Style, diagnosis: Diagnosis, shown: set[str]) -> list[str]:
    """One line per kind of GPU, identical GPUs (name, compute capability, MIG devices, mark) on one."""
    gpus = diagnosis.env.driver.gpus
    if not gpus:
        unnamed = _serious(_gpu_findings(diagnosis).get(None, ()))
        return [_row(style, status_of(unnamed) if unnamed else Status.ABSENT, "GPUs", "none seen")]
    found = _gpu_findings(diagnosis)
    kinds: dict[tuple[str, Status], list[Gpu]] = {}
    for gpu in gpus:
        status = status_of(_about_gpu(found, gpu))
        kinds.setdefault((_gpu_kind(gpu), status), []).append(gpu)

    def kind_line(item: tuple[tuple[str, Status], list[Gpu]]) -> list[str]:
        (kind, status), alike = item
        runs = _index_runs([gpu.index for gpu in alike])
        label = f"GPU {runs[0]}" if len(alike) == 1 else f"GPUs {listing(runs, _INDEXES)}"
        count = f"{len(alike):,} x " if len(alike) > 1 else ""
        about = [finding for gpu in alike for finding in _serious(_about_gpu(found, gpu))]
        return [_row(style, status, label, f"{count}{kind}{_references(about, shown)}")]

    return summarised(list(kinds.items()), _GPU_KINDS, kind_line, "kinds of GPU", _WHOLE)


def _copies_in_use(
    diagnosis: Diagnosis, kind: type[CudaRuntime] | type[Cudnn]
) -> list[tuple[CudaRuntime | Cudnn, list[str]]]:
    """The copies of ``kind`` in use, each with the frameworks that load it: each framework's, then the one the
    diagnosis names in use (a plain dlopen's, without frameworks)."""
    found: dict[str, tuple[CudaRuntime | Cudnn, list[str]]] = {}
    for judged in diagnosis.frameworks:
        copy = judged.runtime if kind is CudaRuntime else judged.cudnn
        if copy is not None:
            found.setdefault(copy.path, (copy, []))[1].append(phrases.framework(judged.name))
    selected = diagnosis.runtime if kind is CudaRuntime else diagnosis.cudnn
    if selected is not None:
        found.setdefault(selected.path, (selected, []))
    return list(found.values())


def _copy_lines(
    style: Style, diagnosis: Diagnosis, kind: type[CudaRuntime] | type[Cudnn], shown: set[str]
) -> list[str]:
    name = "CUDA runtime" if kind is CudaRuntime else "cuDNN"
    in_use = _copies_in_use(diagnosis, kind)
    if not in_use:
        present = diagnosis.env.cuda_runtimes if kind is CudaRuntime else diagnosis.env.cudnns
        text = f"none in use ({len(present):,} found: -v shows them)" if present else "none found"
        about = _serious(_copy_findings(diagnosis, kind, None))
        return [_row(style, copy_status(diagnosis, kind, None), name, text + _references(about, shown))]
    lines = []
    for copy, users in in_use:
        loaded = f"; loaded by {listing(users, _USERS)}" if users else ""
        about = _serious(_copy_findings(diagnosis, kind, copy.path))
        text = f"{copy.version or '(version unknown)'}  {copy.path}  (via {phrases.via(copy.via)}{loaded})"
        lines.append(_row(style, copy_status(diagnosis, kind, copy), name, text + _references(about, shown)))
    return lines


def _framework_line(style: Style, diagnosis: Diagnosis, judged: FrameworkJudgement, shown: set[str]) -> list[str]:
    about = _framework_findings(diagnosis, judged)
    said, cause = judged.summary, judged.finding
    if cause is not None and cause.code in shown and said == f"cannot run: {cause.summary}":
        said = "cannot run"  # the finding is listed above, whole: the line points to it
        about = [cause, *about]
    elif cause is not None and not judged.ok:
        about = [cause, *about]
    version = judged.version or "(version unknown)"
    text = f"{version}: {said}{_references(about, shown)}"
    return [_row(style, framework_status(diagnosis, judged), phrases.framework(judged.name), text)]


def doctor_summary(
    diagnosis: Diagnosis, verdict: Verdict | None = None, *, source: str | None = None, style: Style = PLAIN
) -> str:
    """The doctor's default view (``verdict``: the diagnosis' own unless given, as for ``doctor_text``; ``source``:
    the snapshot replayed). Every line is made printable and bounded; the only escapes are ``style``'s colours."""
    env = diagnosis.env
    host = env.host
    origin = f"replayed from {source}, probed {env.probed_at}" if source else f"probed in {env.probe_seconds:.2f} s"
    lines = [line(f"pytest-cudnn doctor: {host.system} {host.machine}, Python {host.python}, {origin}"), ""]
    problems, shown = _problems(style, diagnosis)
    if problems:
        lines += [*problems, ""]
    lines.append(_driver_line(style, diagnosis, shown))
    lines += _gpu_lines(style, diagnosis, shown)
    lines += _copy_lines(style, diagnosis, CudaRuntime, shown)
    lines += _copy_lines(style, diagnosis, Cudnn, shown)
    lines += summarised(
        diagnosis.frameworks,
        _FRAMEWORKS,
        lambda judged: _framework_line(style, diagnosis, judged, shown),
        "frameworks",
        _WHOLE,
    )
    result = verdict or diagnosis.verdict
    lines += ["", f"{style.mark(verdict_status(diagnosis, verdict))} {line(f'Verdict: {result.summary}')}", HINT]
    return "\n".join(lines) + "\n"
