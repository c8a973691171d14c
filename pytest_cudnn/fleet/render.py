"""The fleet view for people (terminal text, GitHub Markdown) and machines (JSON).

Everything shown came from other machines' reports: each text line is made printable, each Markdown cell is
escaped, long values are clipped and long lists summarised (the JSON keeps them whole; ``json.dumps`` escapes what
a terminal would act on). Pure module: a Fleet in, strings and plain values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import phrases
from .._base.serde import to_json
from .._base.text import clip, line, listing, markdown_cell, markdown_rows, printable, summarised
from .compare import gpu_models, unhealthy_gpus
from .model import (
    SCHEMA,
    SCHEMA_VERSION,
    FindingDifference,
    Fleet,
    FleetFinding,
    RefusalDifference,
    RefusalGroup,
    Runner,
)

__all__ = ["fleet_json", "fleet_markdown", "fleet_text", "verdict_line"]

_LABEL = 16
_VALUE = 48  # characters of one value in a side-by-side table
_REASON = 300  # characters of one reason or finding
_TESTS = 30  # tests shown among the differences
_ROWS = 16  # findings or refusal groups shown per runner, findings among the differences, unusable reports
_RUNNERS = 32  # runners shown each with their own section, and in the Markdown's summary table
_COLUMNS = 8  # runners side by side in a table of facts; with more, each fact's values are listed with their runners
_NAMES = 8  # runners named in one line


def verdict_line(fleet: Fleet) -> str:
    """'all 3 runners can run GPU work', or what stops the fleet: runners that cannot, reports that are unusable."""
    broken = [runner.name for runner in fleet.runners if not runner.ok]
    if fleet.ok:
        count = len(fleet.runners)
        return "the runner can run GPU work" if count == 1 else f"all {count} runners can run GPU work"
    parts = []
    if broken:
        parts.append(f"{listing(broken)} cannot run GPU work")
    if fleet.problems:
        unusable = listing([problem.runner for problem in fleet.problems])
        parts.append(f"no usable report from {unusable}")
    return "not ok: " + "; ".join(parts)


def _count_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{count} {outcome}" for outcome, count in counts.items()) or "none recorded"


def _driver_text(runner: Runner) -> str:
    stack = runner.stack
    if stack.driver is None:
        return f"{stack.driver_state}: {stack.driver_reason or 'no answer'}"
    return f"{stack.driver} (CUDA {stack.cuda_driver or '?'})"


def _copy_text(version: str | None, path: str | None) -> str:
    return f"{version or '?'}  {path}" if path else "none in use"


def _framework_text(runner: Runner) -> list[tuple[str, str]]:
    return [(phrases.framework(f.name), f"{f.version or '?'}: {f.summary}") for f in runner.stack.frameworks]


def _refusal_text(group: RefusalGroup) -> str:
    """'2 skipped, 1 failed: requires cuDNN >=9; found ...', the cause in brackets when the reason does not say it."""
    cause = "" if group.reason.startswith(group.cause) else f"[{group.cause}] "
    return f"{_count_text(group.outcomes)}: {cause}{clip(group.reason, _REASON)}"


# Text ---------------------------------------------------------------------------------------------------------


def _line(label: str, text: str) -> str:
    return f"{label:<{_LABEL}}{text}"


def _runner_lines(runner: Runner) -> list[str]:
    stack = runner.stack
    lines = [f"{runner.name}  {runner.path}"]
    body = [
        _line("Verdict", runner.verdict),
        _line("Python", stack.python),
        _line("Driver", _driver_text(runner)),
        _line("GPUs", gpu_models(runner.stack)),
        *([_line("Unhealthy", unhealthy)] if (unhealthy := unhealthy_gpus(runner)) != "none" else []),
        _line("CUDA runtime", _copy_text(stack.cuda_runtime, stack.cuda_runtime_path)),
        _line("cuDNN", _copy_text(stack.cudnn, stack.cudnn_path)),
        *(_line(label, clip(text, _REASON)) for label, text in _framework_text(runner)),
        _line("GPU tests", _count_text(runner.outcomes)),
    ]
    if runner.xdist_workers or runner.xdist_note:
        note = f" ({runner.xdist_note})" if runner.xdist_note else ""
        body.append(_line("xdist", f"{runner.xdist_workers} worker(s) with GPUs{note}"))
    body += [_line("Host" if index == 0 else "", host) for index, host in enumerate(runner.hosts)]
    if runner.refusals:
        body.append("Refused by the environment")
        body += summarised(
            runner.refusals, _ROWS, lambda group: [f"  {_refusal_text(group)}"], "causes", said=_indented
        )
    if runner.findings:
        body.append("Findings")
        body += summarised(runner.findings, _ROWS, _finding_line, "findings", said=_indented)
    return lines + [f"  {text}" for text in body]


def _finding_line(finding: FleetFinding) -> list[str]:
    return [f"  {finding.severity.upper()} [{finding.code}] {clip(finding.summary, _REASON)}"]


def _indented(text: str) -> str:
    return "  " + text


def _apart(text: str) -> str:
    """A line after a blank one: in Markdown, a line right after a table's rows would be one more row."""
    return "\n" + text


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns as wide as their widest cell (each cell clipped first)."""
    cells = [[clip(printable(cell), _VALUE) for cell in row] for row in [header, *rows]]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in cells]


def _ran_text(test: RefusalDifference) -> str:
    return listing([f"{name} ({outcome})" for name, outcome in test.ran_on.items()], _NAMES)


def _fact_rows(fleet: Fleet) -> tuple[list[str], list[list[str]]]:
    """The facts that differ as a table's header and rows: side by side, one column per runner, for a few runners;
    for more, a row per value a fact takes, with the runners that have it (300 columns made lines of 9,165
    characters, field test of 2026-11-24)."""
    names = [runner.name for runner in fleet.runners]
    if len(names) <= _COLUMNS:
        return ["", *names], [
            [fact.label, *(fact.values.get(name) or "none" for name in names)] for fact in fleet.facts
        ]
    rows = []
    for fact in fleet.facts:
        having: dict[str, list[str]] = {}
        for name in names:
            having.setdefault(fact.values.get(name) or "none", []).append(name)
        rows += [[fact.label, value, f"{len(on)}: {listing(on, _NAMES)}"] for value, on in having.items()]
    return ["", "value", "runners"], rows


def _difference_lines(fleet: Fleet) -> list[str]:
    lines: list[str] = []
    if fleet.facts:
        header, rows = _fact_rows(fleet)
        table = _table(header, rows)
        lines += summarised(table, _ROWS * 4, lambda row: ["  " + row], "rows", said=_indented)
    if fleet.findings:
        lines += ["", "  Findings on some runners only"]
        lines += summarised(fleet.findings, _ROWS, _finding_difference, "findings", said=lambda text: "    " + text)
    if fleet.tests:
        lines += ["", "  Tests refused on some runners, run on others"]
        lines += summarised(fleet.tests, _TESTS, _test_difference, "tests", said=lambda text: "    " + text)
    return lines


def _finding_difference(finding: FindingDifference) -> list[str]:
    return [
        f"    {finding.severity.upper()} [{finding.code}] on {listing(finding.on, _NAMES)}; "
        f"not on {listing(finding.not_on, _NAMES)}",
        f"        {clip(finding.summary, _REASON)}",
    ]


def _test_difference(test: RefusalDifference) -> list[str]:
    return [
        f"    {test.nodeid}",
        f"        ran on {_ran_text(test)}",
        *summarised(
            test.refused_on,
            _NAMES,
            lambda refusal: [
                f"        {refusal.outcome or 'refused'} on {refusal.runner}: {clip(refusal.reason, _REASON)}"
            ],
            "runners",
            said=lambda text: "        " + text,
        ),
    ]


def fleet_text(fleet: Fleet) -> str:
    """The terminal view: each runner, the differences, the reports that could not be read, the verdict."""
    names = [runner.name for runner in fleet.runners] + [problem.runner for problem in fleet.problems]
    lines = [f"pytest-cudnn fleet: {len(names)} runner{'s' if len(names) != 1 else ''}: {listing(names, 12)}"]
    lines += summarised(fleet.runners, _RUNNERS, lambda runner: ["", *_runner_lines(runner)], "runners")
    if len(fleet.runners) > 1:
        differences = _difference_lines(fleet)
        lines += ["", "Differences", *(differences or ["  none: every runner reports the same stack and tests"])]
    if fleet.problems:
        lines += ["", "Reports that could not be used"]
        lines += summarised(
            fleet.problems, _ROWS, lambda p: [f"  {p.runner}  {p.path}: {p.reason}"], "reports", said=_indented
        )
    lines += ["", f"Fleet: {verdict_line(fleet)}"]
    return "\n".join(line(text) for text in lines) + "\n"


# Markdown -----------------------------------------------------------------------------------------------------


def _head(*columns: str) -> list[str]:
    return [f"| {' | '.join(markdown_cell(column) for column in columns)} |", "|" + " --- |" * len(columns)]


def fleet_markdown(fleet: Fleet) -> str:
    """A GitHub step summary block: one row per runner, the differences, the unusable reports, then each runner's
    environment refusals and findings. Every cell is escaped; the block stands apart with blank lines."""
    lines = ["", "### pytest-cudnn fleet", "", f"**{markdown_cell(verdict_line(fleet))}**", ""]
    if fleet.runners:
        lines += _head("runner", "verdict", "driver", "GPUs", "CUDA runtime", "cuDNN", "frameworks", "GPU tests")
        lines += markdown_rows([_summary_row(runner) for runner in fleet.runners], _RUNNERS, "runners")
    if fleet.problems:
        lines += ["", *_head("runner", "report", "could not be used")]
        lines += markdown_rows([[p.runner, p.path, p.reason] for p in fleet.problems], _ROWS, "reports")
    if len(fleet.runners) > 1:
        lines += ["", "#### Differences"]
        if not (fleet.facts or fleet.findings or fleet.tests):
            lines += ["", "none: every runner reports the same stack and tests"]
    if len(fleet.runners) > 1 and fleet.facts:
        header, rows = _fact_rows(fleet)
        lines += ["", *_head(*header), *markdown_rows(rows, _ROWS * 4, "rows")]
    if fleet.findings:
        lines += ["", *_head("finding", "severity", "on", "not on", "says")]
        rows = [
            [f.code, f.severity, listing(f.on, _NAMES), listing(f.not_on, _NAMES), f.summary] for f in fleet.findings
        ]
        lines += markdown_rows(rows, _ROWS, "findings")
    if fleet.tests:
        lines += ["", *_head("test refused on some runners", "ran on", "refused on", "why")]
        # Only the rows shown are made: each names the runners its test ran on.
        refusals = [(test, refusal) for test in fleet.tests for refusal in test.refused_on]
        rows = [
            [test.nodeid, _ran_text(test), refusal.runner, refusal.reason] for test, refusal in refusals[: _TESTS + 1]
        ]
        lines += markdown_rows(rows, _TESTS, "refusals", total=len(refusals))
    lines += summarised(fleet.runners, _RUNNERS, _runner_markdown, "runners", said=_apart)
    return "\n".join(lines) + "\n\n"


def _runner_markdown(runner: Runner) -> list[str]:
    """A runner's remote hosts, environment refusals and findings, each a table."""
    lines = []
    if runner.refusals or runner.findings or runner.hosts:
        lines += ["", f"#### {markdown_cell(runner.name)}: {markdown_cell(runner.verdict)}"]
    if runner.hosts:
        lines += ["", *_head("remote host"), *markdown_rows([[host] for host in runner.hosts], _ROWS * 4, "hosts")]
    if runner.refusals:
        lines += ["", *_head("environment refusals", "cause", "first reason")]
        rows = [[_count_text(group.outcomes), group.cause, group.reason] for group in runner.refusals]
        lines += markdown_rows(rows, _ROWS, "causes")
    if runner.findings:
        lines += ["", *_head("severity", "code", "finding")]
        lines += markdown_rows([[f.severity, f.code, f.summary] for f in runner.findings], _ROWS, "findings")
    return lines


def _summary_row(runner: Runner) -> list[str]:
    stack = runner.stack
    frameworks = ", ".join(
        f"{phrases.framework(f.name)} {f.version or '?'} ({'can run' if f.ok else 'cannot run'})"
        for f in stack.frameworks
    )
    return [
        runner.name,
        "ok" if runner.ok else runner.verdict,
        _driver_text(runner),
        gpu_models(runner.stack),
        stack.cuda_runtime or "none",
        stack.cudnn or "none",
        frameworks or "none",
        _count_text(runner.outcomes),
    ]


# JSON ---------------------------------------------------------------------------------------------------------


def fleet_json(fleet: Fleet) -> dict[str, Any]:
    """Everything, uncut: ``{"schema": "pytest-cudnn/fleet", "schema_version": 1, "ok", "verdict", "runners",
    "differences", "problems"}``, each difference with its ``kind`` ("fact", "finding" or "test")."""
    differences: list[dict[str, Any]] = [{"kind": "fact", **to_json(fact)} for fact in fleet.facts]
    differences += [{"kind": "finding", **to_json(finding)} for finding in fleet.findings]
    differences += [{"kind": "test", **to_json(test)} for test in fleet.tests]
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "ok": fleet.ok,
        "verdict": verdict_line(fleet),
        "runners": [_runner_json(runner) for runner in fleet.runners],
        "differences": differences,
        "problems": [to_json(problem) for problem in fleet.problems],
    }


def _runner_json(runner: Runner) -> dict[str, Any]:
    data: dict[str, Any] = to_json(runner)
    data["refusals"] = [{**to_json(group), "count": group.count} for group in runner.refusals]
    return data
