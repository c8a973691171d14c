"""Read one runner's ``--gpu-report`` into a :class:`~pytest_cudnn.fleet.model.Runner`, or say why it cannot be.

A report comes from another machine: it is read as a regular file of bounded size (a FIFO or a device is refused
at once), parsed with bounded numbers, and every value used is checked, with the path to a bad one
(``tests[3].outcome: expected a string, got 5``); its environment is checked as a snapshot is. Nothing it names is
loaded. Keys this version does not know (``hosts``, ``xdist_devices``, later ones) are accepted. Pure module
apart from reading the file.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._base.text import clip, group_reason, listing
from ..diagnosis import selected_cudnn, selected_runtime, visible_gpus
from ..document import (
    DOCUMENT_KEYS,
    HOSTS_KEY,
    LIST_KEYS,
    READS,
    REPORT_SCHEMA,
    RUN_KEYS,
    TESTS_KEY,
    CopyInUse,
    InUse,
    ReportRefused,
    read_report,
)
from ..environment import SCHEMA as ENVIRONMENT_SCHEMA
from ..environment import Environment, State, shown_spec
from ..files import DocumentRefused, read_json_document
from .model import SCHEMA as FLEET_SCHEMA
from .model import FleetFinding, FrameworkVerdict, GpuModel, GpuTest, Problem, RefusalGroup, Runner, Stack

__all__ = [
    "MAX_REPORT_BYTES",
    "FleetUsageError",
    "ReportError",
    "name_runners",
    "read_runner",
    "refusal_cause",
    "refusal_groups",
]

# A report is a snapshot (at most 16 MiB, environment.MAX_SNAPSHOT_BYTES) and one entry per GPU test, about 400
# bytes each as --gpu-report writes them: 64 MiB leaves room for 100,000 tests and bounds what a wrong path costs.
MAX_REPORT_BYTES = 64 * 1024 * 1024
_REQUIRED = (*DOCUMENT_KEYS, TESTS_KEY)
_HOSTS = 64  # remote hosts listed per runner


class ReportError(ValueError):
    """A report that cannot be used; the message says why, with the path to the bad value."""


class FleetUsageError(ValueError):
    """Reports and runner names that do not name one runner each."""


def name_runners(reports: Sequence[str], named: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """Each report with its runner's name, reports first in the order given, then those named only by
    ``--name NAME=PATH`` (``named``: (name, path) pairs). An unnamed report is named by its file's stem
    (``a100.json``), or by its folder when the stems repeat (``reports/a100/gpu-report.json``, as
    actions/download-artifact lays them out), or else by its path. Raises FleetUsageError when a name would
    stand for two reports or a report would get two names.

    >>> name_runners(["reports/a100/gpu-report.json", "reports/t4/gpu-report.json"])
    [('a100', 'reports/a100/gpu-report.json'), ('t4', 'reports/t4/gpu-report.json')]
    """
    # One report in whatever spelling it was first given, reports before --name: a.json and ./a.json are one.
    spelling: dict[str, str] = {}
    for path in reports:
        spelling.setdefault(_same_path(path), path)
    given: dict[str, str] = {}
    for name, spelt in named:
        path = spelling.setdefault(_same_path(spelt), spelt)
        if given.get(path, name) != name:
            raise FleetUsageError(f"{path} is named twice: {given[path]!r} and {name!r}")
        given[path] = name
    paths = list(dict.fromkeys([*(spelling[_same_path(path)] for path in reports), *given]))
    defaults = dict(zip(paths, _default_names(paths), strict=True))
    taken = set(given.values())
    names: dict[str, str] = {}
    owners: dict[str, str] = {}  # name -> path
    for path in paths:
        name = given.get(path) or (defaults[path] if defaults[path] not in taken else path)
        if name in owners:
            raise FleetUsageError(
                f"runner name {name!r} stands for {owners[name]} and {path}: name them with --name NAME=PATH"
            )
        names[path] = name
        owners[name] = path
    return [(name, path) for path, name in names.items()]


def _same_path(path: str) -> str:
    """``path`` without its empty and ``.`` parts: ``./a.json``, ``a.json`` and ``r//a.json`` name one file for any
    folder layout. ``..`` stays, since ``link/..`` need not be where ``link`` is (a symbolic link's parent)."""
    return ("/" if path.startswith("/") else "") + "/".join(part for part in path.split("/") if part not in ("", "."))


def _default_names(paths: Sequence[str]) -> list[str]:
    """Each report's stem when no other report has it, else its folder's name when no other report's folder or
    stem is that, else its path. Counted once, so that many runners cost no more than linear work."""
    stems = [Path(path).stem or path for path in paths]
    folders = [Path(os.path.abspath(path)).parent.name or path for path in paths]
    stem_count, folder_count = Counter(stems), Counter(folders)
    names = []
    for stem, folder, path in zip(stems, folders, paths, strict=True):
        if stem_count[stem] == 1:
            names.append(stem)
        elif folder_count[folder] == 1 and folder not in stem_count:
            names.append(folder)
        else:
            names.append(path)
    return names


def read_runner(name: str, path: str) -> Runner | Problem:
    """The runner whose report is ``path``, or the Problem that says why it cannot be read."""
    try:
        data = read_json_document(path, MAX_REPORT_BYTES, "report")
    except DocumentRefused as refused:
        return Problem(name, path, str(refused))
    try:
        return _runner(name, path, data)
    except ReportError as error:
        return Problem(name, path, str(error))


def _check_kind(data: Any) -> dict[str, Any]:
    """The report's top-level object, or why this JSON is not a --gpu-report."""
    if not isinstance(data, dict):
        raise ReportError(f"is not a pytest-cudnn report: the JSON is {_kind(data)}, not an object")
    schema = data.get("schema")
    if schema == ENVIRONMENT_SCHEMA:
        raise ReportError("is a snapshot (pytest-cudnn snapshot), not a report: pytest --gpu-report PATH writes one")
    if schema == FLEET_SCHEMA:
        raise ReportError("is a fleet view (pytest-cudnn fleet --json), not a runner's report")
    if schema is not None and schema != REPORT_SCHEMA:
        raise ReportError(f"schema: {clip(repr(schema), 60)}, not a pytest-cudnn report ({REPORT_SCHEMA!r})")
    version = data.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ReportError(f"schema_version: expected a whole number from 1, got {clip(repr(version), 40)}")
    if version not in READS:
        raise ReportError(
            f"schema_version: {version}, newer than this pytest-cudnn reads (1 to {READS[-1]}): upgrade pytest-cudnn"
        )
    if "environment" not in data:
        raise ReportError("is not a pytest-cudnn report: it has no 'environment' (pytest --gpu-report PATH writes one)")
    if not set(RUN_KEYS) & set(data):  # an environment and none of a run's keys
        raise ReportError("is the doctor's JSON (pytest-cudnn doctor --json), not a report: it has no 'tests'")
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise ReportError(f"{missing[0]}: missing")
    return data


def _kind(data: Any) -> str:
    kinds = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "true or false",
        int: "a number",
        float: "a number",
    }
    return "null" if data is None else kinds.get(type(data), type(data).__name__)


def _runner(name: str, path: str, data: Any) -> Runner:
    _check_kind(data)
    for key in LIST_KEYS:
        if not isinstance(data[key], list):
            raise ReportError(f"{key}: expected a list, got {_kind(data[key])}")
    try:
        report = read_report(data)
    except ReportRefused as refused:
        raise ReportError(str(refused)) from None
    entries = tuple(GpuTest(t.nodeid, t.outcome, t.reason, t.cause) for t in report.tests or ())
    return Runner(
        name=name,
        path=path,
        ok=report.verdict.ok,
        verdict=report.verdict.summary,
        require_gpu=report.require_gpu,
        stack=_stack(
            report.environment,
            tuple(FrameworkVerdict(f.name, f.version, f.ok, f.summary, f.cause) for f in report.frameworks),
            report.in_use,
        ),
        findings=tuple(FleetFinding(f.code, f.severity.value, f.summary, f.gpus) for f in report.findings),
        tests=entries,
        refusals=refusal_groups(entries),
        outcomes=outcome_counts(t.outcome or "unknown" for t in entries),
        hosts=_hosts(data.get(HOSTS_KEY)),  # whatever their shape: a foreign report's too
        xdist_workers=len(report.xdist or {}),
        xdist_note=report.xdist_note,
    )


def _stack(env: Environment, frameworks: tuple[FrameworkVerdict, ...], recorded: InUse | None) -> Stack:
    """The runner's stack as its report says it decided (``in_use``, schema_version 2). A report of version 1 did
    not record it: the copies are then those its environment names in use, read by today's rules."""
    driver = env.driver
    models: dict[tuple[str | None, int | None], int] = {}
    for gpu in driver.gpus:
        models[(gpu.name, gpu.memory_total)] = models.get((gpu.name, gpu.memory_total), 0) + 1
    runtime: CopyInUse | None
    cudnn: CopyInUse | None
    if recorded is not None:
        runtime, cudnn, visible = recorded.cuda_runtime, recorded.cudnn, recorded.visible_gpus
    else:
        found = selected_runtime(env), selected_cudnn(env)
        runtime, cudnn = (CopyInUse(c.version, c.path) if c is not None else None for c in found)
        visible = len(visible_gpus(env))
    return Stack(
        python=env.host.python,
        driver=driver.version if driver.state is State.FOUND else None,
        driver_state=driver.state.value,
        driver_reason=None if driver.state is State.FOUND else driver.reason,
        cuda_driver=env.cuda_driver.version or driver.cuda_version,
        gpus=tuple(GpuModel(gpu_name, count, memory) for (gpu_name, memory), count in models.items()),
        visible_gpus=visible,
        cuda_runtime=runtime.version if runtime else None,
        cuda_runtime_path=runtime.path if runtime else None,
        cudnn=cudnn.version if cudnn else None,
        cudnn_path=cudnn.path if cudnn else None,
        frameworks=frameworks,
    )


def refusal_cause(test: GpuTest) -> str:
    """What refused a test: the report's cause when it records one, else the requirement its reason names
    (``requires cuDNN >=9`` of ``requires cuDNN >=9; found cuDNN 8.9.7 at ...``), else "other", as the plugin's
    own summary groups a refusal without a cause."""
    if test.cause:
        return test.cause
    head, separator, _ = (test.reason or "").partition("; ")
    return clip(head, 120) if separator and head else "other"


def refusal_groups(tests: Sequence[GpuTest]) -> tuple[RefusalGroup, ...]:
    """The tests the environment refused, grouped by cause, the largest group first."""
    groups: dict[str, list[GpuTest]] = {}
    for test in tests:
        if test.reason is not None:
            groups.setdefault(refusal_cause(test), []).append(test)
    made = [
        RefusalGroup(
            cause,
            outcome_counts(t.outcome or "unknown" for t in members),
            group_reason([t.reason or "" for t in members]),
            _nodeids(members),
        )
        for cause, members in groups.items()
    ]
    return tuple(sorted(made, key=lambda group: -group.count))


def _nodeids(tests: Sequence[GpuTest]) -> tuple[str, ...]:
    return tuple(test.nodeid for test in tests)


# The order every runner's counts are listed in, whatever order its tests ran in: runners read side by side.
OUTCOME_ORDER = ("passed", "failed", "skipped")


def outcome_counts(values: Any) -> dict[str, int]:
    """How many tests had each outcome, in :data:`OUTCOME_ORDER`, then any other outcome by name ("unknown" last).

    >>> outcome_counts(["skipped", "passed", "unknown", "skipped", "error"])
    {'passed': 1, 'skipped': 2, 'error': 1, 'unknown': 1}
    """
    counted: dict[str, int] = {}
    for value in values:
        counted[value] = counted.get(value, 0) + 1

    def rank(outcome: str) -> tuple[int, str]:
        known = OUTCOME_ORDER.index(outcome) if outcome in OUTCOME_ORDER else len(OUTCOME_ORDER)
        return (known + (outcome == "unknown"), outcome)

    return {outcome: counted[outcome] for outcome in sorted(counted, key=rank)}


def _hosts(value: Any) -> tuple[str, ...]:
    """Remote xdist hosts, one line each, whatever shape the report gives them: a list, or an object keyed by
    host or worker."""
    if value is None:
        return ()
    if isinstance(value, dict):
        lines = [f"{key}: {_host_line(item)}" for key, item in value.items()]
    elif isinstance(value, list):
        lines = [_host_line(item) for item in value]
    else:
        raise ReportError(f"hosts: expected a list or an object, got {_kind(value)}")
    shown = [clip(line, 200) for line in lines[:_HOSTS]]
    if len(lines) > _HOSTS:
        shown.append(f"and {len(lines) - _HOSTS:,} more")
    return tuple(shown)


def _host_line(item: Any) -> str:
    # A host's key hides env: values off the allowlist since they were found in reports; one written before
    # still holds them (environment.shown_spec).
    if isinstance(item, str):
        return shown_spec(item)
    if isinstance(item, dict) and isinstance(item.get("host"), str):
        # As the plugin writes a remote host: its key, its workers, and the stack summary or why it has none.
        workers = item.get("workers")
        names = [name for name in workers if isinstance(name, str)] if isinstance(workers, list) else []
        said = next((item[key] for key in ("summary", "reason") if isinstance(item.get(key), str)), None)
        return shown_spec(item["host"]) + (f" ({listing(names)})" if names else "") + (f": {said}" if said else "")
    if isinstance(item, dict):
        facts = [f"{key}={value}" for key, value in item.items() if isinstance(value, (str, int, float, bool))]
        return listing(facts, 8) or "(no facts)"
    if isinstance(item, list):
        return f"a list of {len(item)}"
    return str(item)
