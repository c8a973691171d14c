"""The doctor's default view, for people: what is wrong first, with its fix; then one line per component with a
status mark; then the verdict and where to read more. ``doctor -v`` prints everything read
(:func:`pytest_cudnn.report.doctor_text`); ``--json`` holds it all for machines.

Pure module: a :class:`~pytest_cudnn.diagnosis.Diagnosis` and a :class:`~pytest_cudnn._base.style.Style` in, text out.
A component's mark follows the findings about it: an error ✗, a warning !, neither ✓ (and - for a component that
is not there when nothing says that matters). The same marks start the session header's lines (report.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import phrases
from ._base.style import PLAIN, Status, Style
from ._base.text import line, listing, shows_all, summarised
from .compat.catalog import JUDGED, LibraryKind
from .compat.cuda import architecture_name
from .diagnosis import Finding, Severity, Verdict
from .diagnosis.frameworks import concerns, uses
from .diagnosis.model import cause_links
from .diagnosis.result import Diagnosis, FrameworkJudgement
from .environment import CudaRuntime, Cudnn, Gpu, LibraryCopy, State
from .frameworks.base import own_rules

__all__ = [
    "VERBOSE_FINDINGS",
    "VERBOSE_PARTS",
    "cause_indent",
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
_PROBLEMS = 30  # errors and warnings the view lists; -v lists VERBOSE_FINDINGS findings, --json all
_GPU_KINDS = 8  # lines of GPUs (identical GPUs share one)
_FRAMEWORKS = 16
_COPIES = 8  # lines of CUDA runtime (or cuDNN) copies in use
_INDEXES = 6  # runs of GPU indexes named in one label
_REFERENCES = 4  # codes a component's line points to
_USERS = 6  # frameworks named as loading one copy
_DEPTH = 4  # steps of "because" shown as indentation; deeper ones stay at this step
# What doctor -v (report.py) lists of each, before a line saying how many more --json holds: this view's notes
# and copies found say "-v shows them" only where -v does.
VERBOSE_FINDINGS = 50
VERBOSE_PARTS = 16  # copies of a library, MIG devices of a GPU, a framework's objects and pins, notes, folders


def cause_order(findings: Sequence[Finding]) -> list[tuple[Finding, int]]:
    """``findings`` in the diagnosis' own order (diagnose() lists each cause right before what follows from it), each
    with how many steps of ``because`` lead to it: one more than the nearest finding above of its cause's code; 0
    for a finding of its own, or whose cause is not among ``findings`` (a note the default view leaves out)."""
    depths: list[int] = []
    for cause in cause_links(findings):  # each points up: its depth is known
        depths.append(0 if cause is None else depths[cause] + 1)
    return list(zip(findings, depths, strict=True))


def cause_indent(depth: int) -> str:
    """The indentation of a finding ``depth`` steps of ``because`` from its root, in every view that lists findings:
    two spaces a step, deeper ones at the last step shown."""
    return "  " * min(depth, _DEPTH)


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
    env = diagnosis.env
    tegra = env.platform is not None and env.platform.tegra_release and env.cuda_driver.state is State.FOUND
    if env.driver.state is not State.FOUND and not tegra:  # on Tegra NVML never answers: libcuda is the driver
        return Status.ERROR
    return status_of(_driver_findings(diagnosis))


@dataclass
class _Index:
    """The findings of one diagnosis by what each is about, walked once for a whole view (a snapshot can hold
    hundreds of copies and findings; looking each copy's up in every finding made the view quadratic).

    Each list keeps the diagnosis' order."""

    gpus: dict[int | None, list[Finding]] = field(default_factory=dict)  # GPU findings by GPU; None: every GPU
    subjects: dict[str, list[Finding]] = field(default_factory=dict)  # by the copy or folder each is about
    unnamed: dict[str, list[Finding]] = field(default_factory=dict)  # by component, those about no copy
    components: dict[str, list[Finding]] = field(default_factory=dict)  # by component, all
    position: dict[int, int] = field(default_factory=dict)  # id(finding) -> its place in the diagnosis


def _index(diagnosis: Diagnosis) -> _Index:
    index = _Index()
    for place, finding in enumerate(diagnosis.findings):
        index.position[id(finding)] = place
        if finding.component == "gpu":
            for gpu in finding.gpus or (None,):  # the finding's own link, never its text (a GPU's name is read)
                index.gpus.setdefault(gpu, []).append(finding)
        for subject in dict.fromkeys(finding.subjects):
            index.subjects.setdefault(subject, []).append(finding)
        if not finding.subjects:
            index.unnamed.setdefault(finding.component, []).append(finding)
        index.components.setdefault(finding.component, []).append(finding)
    return index


def _in_order(index: _Index, *groups: Iterable[Finding]) -> list[Finding]:
    """The findings of ``groups``, each once, in the diagnosis' order."""
    found = {id(finding): finding for group in groups for finding in group}
    return [found[key] for key in sorted(found, key=index.position.__getitem__)]


def _about_gpu(found: dict[int | None, list[Finding]], gpu: Gpu) -> list[Finding]:
    return [*found.get(gpu.index, ()), *found.get(None, ())]


def gpu_statuses(diagnosis: Diagnosis) -> dict[int, Status]:
    """Each GPU's mark (by its index): the GPU findings about it."""
    found = _index(diagnosis).gpus
    return {gpu.index: status_of(_about_gpu(found, gpu)) for gpu in diagnosis.env.driver.gpus}


_COMPONENT = {CudaRuntime: "cuda-runtime", Cudnn: "cudnn"}


def _copy_findings(index: _Index, kind: type[CudaRuntime] | type[Cudnn], path: str | None) -> list[Finding]:
    """The findings about the copy at ``path``: those naming it, and those of its kind that name no copy ("no
    CUDA runtime anywhere"). ``path`` None: only the latter."""
    named = index.subjects.get(path, ()) if path is not None else ()
    return _in_order(index, named, index.unnamed.get(_COMPONENT[kind], ()))


def _copy_status(findings: Sequence[Finding], copy: CudaRuntime | Cudnn | None) -> Status:
    if copy is None and not _serious(findings):
        return Status.ABSENT
    return status_of(findings)


def copy_status(
    diagnosis: Diagnosis, kind: type[CudaRuntime] | type[Cudnn], copy: CudaRuntime | Cudnn | None
) -> Status:
    """A CUDA runtime's (or cuDNN's) mark; for none in use, what the findings about its kind say, else -."""
    return _copy_status(_copy_findings(_index(diagnosis), kind, copy.path if copy is not None else None), copy)


def _framework_findings(index: _Index, judged: FrameworkJudgement) -> list[Finding]:
    """The findings about this framework itself: its folder, the copies it loads, its own rules; not the host's
    (the driver's and the GPUs' lines carry those). Errors only when it cannot run: whether an error stops it is
    its judgement's to say. :func:`concerns` says which; the index narrows whom it asks to those that can be: the
    findings about its folder and copies, and TensorFlow's own (a host-wide finding about no copy is not its)."""
    copies = [copy.path for copy in (judged.runtime, judged.cudnn) if copy is not None]
    severities = {Severity.WARNING} if judged.ok else {Severity.ERROR, Severity.WARNING}
    candidates = _in_order(
        index,
        *(index.subjects.get(subject, ()) for subject in uses(judged.build) | set(copies)),
        index.components.get(judged.name, ()) if own_rules(judged.name) else (),
    )
    return [
        finding
        for finding in candidates
        if finding.severity in severities
        and concerns(judged.build, finding, copies)
        and (finding.subjects or finding.component not in ("driver", "gpu", "environment"))
    ]


def _framework_status(judged: FrameworkJudgement, about: Iterable[Finding]) -> Status:
    return Status.ERROR if not judged.ok else status_of(about)


def framework_status(diagnosis: Diagnosis, judged: FrameworkJudgement) -> Status:
    """A framework's mark: ✗ when it cannot run GPU work here (its verdict), else ! for a warning about it."""
    return _framework_status(judged, _framework_findings(_index(diagnosis), judged) if judged.ok else ())


def verdict_status(
    diagnosis: Diagnosis, verdict: Verdict | None = None, framework: str | None = None, *, index: _Index | None = None
) -> Status:
    """The verdict's mark: ✗ when it fails; the diagnosis' own verdict (``verdict`` None) ! with warnings; a
    framework's (``--framework``: ``verdict`` is that ``framework``'s) the mark of that framework's own line."""
    judged = diagnosis.framework(framework) if framework is not None else None
    if judged is not None:
        return _framework_status(judged, _framework_findings(index or _index(diagnosis), judged) if judged.ok else ())
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
    indent = cause_indent(depth)
    status = Status.ERROR if finding.severity is Severity.ERROR else Status.WARNING
    because = f" because [{finding.because}]:" if finding.because else ""
    return [
        f"{indent}{style.mark(status)} {line(f'[{finding.code}]{because} {finding.summary}')}",
        _plain(f"    fix: {finding.fix}", indent),
    ]


def _problems(style: Style, diagnosis: Diagnosis, framework: str | None = None) -> tuple[list[str], set[str]]:
    """Each error and warning in the diagnosis' order (errors and what they follow from first, a finding that follows
    from another right after it), with its fix; then how many notes -v shows. The codes of the findings listed.
    ``framework`` (``--framework``): only what concerns that framework (its copies, its rules, the host), and how
    many problems concern the others."""
    ordered = cause_order(_serious(diagnosis.findings))  # as the diagnosis ranked them: errors and their causes first
    judged = diagnosis.framework(framework) if framework else None
    others = 0
    if judged is not None:
        copies = {copy.path for copy in (judged.runtime, judged.cudnn) if copy is not None}
        mine = [(f, depth) for f, depth in ordered if concerns(judged.build, f, copies, judged.copies_read)]
        others, ordered = len(ordered) - len(mine), mine
    listed = ordered if shows_all(len(ordered), _PROBLEMS) else ordered[:_PROBLEMS]
    shown = {finding.code for finding, _ in listed}
    lines = summarised(ordered, _PROBLEMS, lambda item: _problem_lines(style, *item), "problems")
    if others:
        about = "concerns" if others == 1 else "concern"
        more = f"{others:,} more problem{'s' if others > 1 else ''}"
        lines.append(f"{more} {about} other frameworks: without --framework, the doctor lists them")
    notes = sum(f.severity is Severity.INFO for f in diagnosis.findings)
    if notes:
        them = "them" if notes > 1 else "it"
        # -v lists the first VERBOSE_FINDINGS findings, notes last
        where = f"-v shows {them}" if shows_all(len(diagnosis.findings), VERBOSE_FINDINGS) else f"--json lists {them}"
        lines.append(f"{notes:,} note{'s' if notes > 1 else ''}: {where}")
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
    platform = env.platform
    if platform is not None and platform.tegra_release:
        said = f"CUDA {libcuda.version} at {libcuda.path}" if libcuda.state is State.FOUND else "no libcuda"
        text = f"Jetson/Tegra, L4T R{platform.tegra_release}: judged by libcuda ({said}); NVML: {text}"
    elif platform is not None and platform.wsl == 2 and driver.state is State.FOUND:
        text += f" (the Windows driver, through WSL2: {driver.path})"
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


def _gpu_lines(style: Style, diagnosis: Diagnosis, index: _Index, shown: set[str]) -> list[str]:
    """One line per kind of GPU, identical GPUs (name, compute capability, MIG devices, mark) on one."""
    gpus = diagnosis.env.driver.gpus
    found = index.gpus
    if not gpus:
        unnamed = _serious(found.get(None, ()))
        return [_row(style, status_of(unnamed) if unnamed else Status.ABSENT, "GPUs", "none seen")]
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

    return summarised(list(kinds.items()), _GPU_KINDS, kind_line, "kinds of GPU")


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
    style: Style, diagnosis: Diagnosis, index: _Index, kind: type[CudaRuntime] | type[Cudnn], shown: set[str]
) -> list[str]:
    name = "CUDA runtime" if kind is CudaRuntime else "cuDNN"
    in_use = _copies_in_use(diagnosis, kind)
    if not in_use:
        present = diagnosis.env.cuda_runtimes if kind is CudaRuntime else diagnosis.env.cudnns
        where = "-v shows them" if shows_all(len(present), VERBOSE_PARTS) else "--json lists them"
        text = f"none in use ({len(present):,} found: {where})" if present else "none found"
        static = [judged for judged in diagnosis.frameworks if kind is CudaRuntime and judged.static_runtime]
        if static:  # CuPy links its runtime into its own objects: none on disk is not none at all
            names = listing([phrases.framework(judged.name) for judged in static], _USERS)
            one = len(static) == 1
            text += f"; {names} {'links its' if one else 'link their'} own CUDA runtime into {'it' if one else 'them'}"
        found = _copy_findings(index, kind, None)
        return [_row(style, _copy_status(found, None), name, text + _references(_serious(found), shown))]

    def copy_line(item: tuple[CudaRuntime | Cudnn, list[str]]) -> list[str]:
        copy, users = item
        loaded = f"; loaded by {listing(users, _USERS)}" if users else ""
        found = _copy_findings(index, kind, copy.path)
        text = f"{copy.version or '(version unknown)'}  {copy.path}  (via {phrases.via(copy.via)}{loaded})"
        return [_row(style, _copy_status(found, copy), name, text + _references(_serious(found), shown))]

    return summarised(in_use, _COPIES, copy_line, f"{name} copies in use")


def _library_lines(style: Style, diagnosis: Diagnosis, index: _Index, kind: LibraryKind, shown: set[str]) -> list[str]:
    """The copies of a further catalog kind (NCCL) the frameworks load, each with who loads it; none: how many were
    found, and no line at all where none was (a host without NCCL is not told about it)."""
    in_use: dict[str, tuple[LibraryCopy, list[str]]] = {}
    for judged in diagnosis.frameworks:
        copy = judged.library(kind.key)
        if copy is not None:
            in_use.setdefault(copy.path, (copy, []))[1].append(phrases.framework(judged.name))
    present = [copy for copy in diagnosis.env.libraries if copy.kind == kind.key]
    if not in_use:
        if not present:
            return []
        found = _in_order(index, *(index.subjects.get(copy.path, ()) for copy in present))
        text = f"none loaded by a framework ({len(present):,} found: --json lists them)"
        return [_row(style, Status.ABSENT, kind.display, text + _references(_serious(found), shown))]

    def copy_line(item: tuple[LibraryCopy, list[str]]) -> list[str]:
        copy, users = item
        found = _in_order(index, index.subjects.get(copy.path, ()))
        built = f"built for CUDA {copy.built_for.value}; " if copy.built_for is not None else ""
        text = f"{copy.version or '(version unknown)'}  {copy.path}  ({built}via {phrases.via(copy.via)}; "
        text += f"loaded by {listing(users, _USERS)})"
        return [_row(style, status_of(found), kind.display, text + _references(_serious(found), shown))]

    return summarised(list(in_use.values()), _COPIES, copy_line, f"{kind.display} copies in use")


def _framework_line(style: Style, index: _Index, judged: FrameworkJudgement, shown: set[str]) -> list[str]:
    about = _framework_findings(index, judged)
    status = _framework_status(judged, about)
    said, cause = judged.summary, judged.finding
    if cause is not None and cause.code in shown and said == f"cannot run: {cause.summary}":
        said = "cannot run"  # the finding is listed above, whole: the line points to it
        about = [cause, *about]
    elif cause is not None and not judged.ok:
        about = [cause, *about]
    version = judged.version or "(version unknown)"
    text = f"{version}: {said}{_references(about, shown)}{judged.after_preload}"
    return [_row(style, status, phrases.framework(judged.name), text)]


def doctor_summary(
    diagnosis: Diagnosis,
    verdict: Verdict | None = None,
    *,
    source: str | None = None,
    style: Style = PLAIN,
    framework: str | None = None,
) -> str:
    """The doctor's default view (``verdict``: the diagnosis' own unless given, as for ``doctor_text``: under
    ``--framework``, ``framework``'s, whose line's mark the verdict's then takes; ``source``: the snapshot replayed).
    Every line is made printable and bounded; the only escapes are ``style``'s colours."""
    env = diagnosis.env
    host = env.host
    origin = f"replayed from {source}, probed {env.probed_at}" if source else f"probed in {env.probe_seconds:.2f} s"
    lines = [line(f"pytest-cudnn doctor: {host.system} {host.machine}, Python {host.python}, {origin}"), ""]
    problems, shown = _problems(style, diagnosis, framework)
    if problems:
        lines += [*problems, ""]
    index = _index(diagnosis)
    lines.append(_driver_line(style, diagnosis, shown))
    lines += _gpu_lines(style, diagnosis, index, shown)
    lines += _copy_lines(style, diagnosis, index, CudaRuntime, shown)
    lines += _copy_lines(style, diagnosis, index, Cudnn, shown)
    for kind in JUDGED:
        lines += _library_lines(style, diagnosis, index, kind, shown)
    lines += summarised(
        diagnosis.frameworks, _FRAMEWORKS, lambda judged: _framework_line(style, index, judged, shown), "frameworks"
    )
    result = verdict or diagnosis.verdict
    mark = style.mark(verdict_status(diagnosis, verdict, framework, index=index))
    lines += ["", f"{mark} {line(f'Verdict: {result.summary}')}", HINT]
    return "\n".join(lines) + "\n"
