"""What a run says and writes: the session header, the JUnit testsuite properties, and at the end --require-gpu's
verdict, ``--gpu-report`` (the doctor's document with the run's keys) and the GitHub step summary. Each reads the
run's one :class:`~pytest_cudnn.diagnosis.Diagnosis`; a report that cannot be written is said in the terminal
summary (``run.problems``) and leaves the exit status alone."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .._base.text import PYTEST_LINE, line
from ..files import FileRefused, append_regular, write_atomically

if TYPE_CHECKING:
    from ..document import Report
    from .session import GpuRun

__all__ = [
    "document",
    "finish",
    "gpu_use_line",
    "header",
    "health_gate",
    "health_lines",
    "provisional",
    "suite_properties",
]


def header(run: GpuRun, verbose: bool) -> list[str]:
    """The session header. A nested run shows it only when it needs the environment from the start."""
    hosts = run.xdist.xdist_hosts()
    needed = run.replaying or run.require_gpu or run.report_path is not None or hosts
    if run.nested and not needed:
        return []
    # Imported only now: a nested run that shows nothing must not pay for the diagnosis (about 100 ms, again in
    # every pytester run, as pytester drops the modules a run imported).
    from .._base.style import plain_style
    from ..report import header_lines

    diagnosis = run.diagnosis
    lines = header_lines(
        diagnosis,
        runtime=diagnosis.runtime,
        cudnn=diagnosis.cudnn,
        verbose=verbose,
        source=run.snapshot,
        style=plain_style(_terminal_encoding()),
        probe=run.facts.summary() if run.facts is not None else None,
    )
    if hosts:
        lines += run.xdist.xdist_lines()
    return lines + health_lines(run)


def _faults(run: GpuRun) -> list[tuple[str, str]]:
    """(the GPU, what is wrong with it) for each visible GPU with a fault of its own state, as the diagnosis says,
    and each EXCLUSIVE_PROCESS GPU that this run's xdist workers share."""
    from ..devices import exclusive_process
    from ..diagnosis import visible_gpus
    from ..phrases import gpu as gpu_label

    diagnosis = run.diagnosis
    # Workers that share every GPU (--no-gpu-assign) meet a GPU that takes one process at a time: all but the first
    # to use it fail (issue 32; with the assignment on, no two workers are given it).
    local = next((host for host in run.xdist.xdist_hosts() if host.local), None)
    shared = local is not None and len(local.workers) > 1 and not run.assign
    seen: dict[int, tuple[str, str]] = {}
    for device in visible_gpus(diagnosis.env):
        said = [finding.summary for finding in diagnosis.gpu_faults(device.index)]
        if shared and exclusive_process(device) and local is not None:
            said.append(
                f"compute mode EXCLUSIVE_PROCESS, and {len(local.workers)} xdist workers share it (--no-gpu-assign): "
                "all but the first to use it fail"
            )
        if said and device.index not in seen:
            seen[device.index] = (gpu_label(device), "; ".join(said))
    return list(seen.values())


def health_gate(run: GpuRun) -> str | None:
    """Under --gpu-health=fail, the one line that stops the run before its tests: which GPU, and why."""
    if run.gpu_health != "fail":
        return None
    faults = _faults(run)
    if not faults:
        return None
    said = "; ".join(f"{label}: {why}" for label, why in faults[:4])
    more = f" (and {len(faults) - 4} more GPUs)" if len(faults) > 4 else ""
    return line(f"pytest-cudnn: --gpu-health=fail: {said}{more}; pytest-cudnn doctor says what to do", PYTEST_LINE)


def health_lines(run: GpuRun) -> list[str]:
    """Under --gpu-health=warn, a header line for each GPU with a fault of its own state."""
    if run.gpu_health != "warn":
        return []
    return [line(f"pytest-cudnn: unhealthy {label}: {why}") for label, why in _faults(run)]


def _terminal_encoding() -> str | None:
    """The encoding of the stream pytest's terminal reporter writes to: the sys.stdout of pytest_configure, where it
    was made, which is sys.stdout again whenever pytest's capture is suspended, as it is while the header is asked
    for (pytest gives no public way to the writer's own stream). The marks fall back to ASCII where it cannot
    encode them (pytest would write them as \\u escapes)."""
    return getattr(sys.stdout, "encoding", None)


def suite_properties(run: GpuRun) -> list[tuple[str, str]]:
    """The JUnit XML testsuite properties. A nested run that never needed the environment has none."""
    if run.nested and not run.probed:
        return []
    from ..diagnosis import visible_gpus

    diagnosis = run.diagnosis
    env, runtime, cudnn = diagnosis.env, diagnosis.runtime, diagnosis.cudnn
    properties = {
        "gpu.driver": env.driver.version,
        "gpu.count": str(len(visible_gpus(env))),
        "gpu.cuda_runtime": runtime.version if runtime else None,
        "gpu.cudnn": cudnn.version if cudnn else None,
        "gpu.tensorflow": env.tensorflow.version,
        "gpu.verdict": diagnosis.verdict.summary,
        # Only where a GPU's own state makes tests fail (issue 32): "GPU 1: gpu-ecc-uncorrectable".
        "gpu.unhealthy": "; ".join(
            f"GPU {device.index}: {', '.join(finding.code for finding in faults)}"
            for device in visible_gpus(env)
            if (faults := diagnosis.gpu_faults(device.index))
        )
        or None,
    }
    return [(name, value) for name, value in properties.items() if value is not None]


def finish(run: GpuRun, session: pytest.Session) -> None:
    """--require-gpu's verdict and the reports; in the process where reports arrive."""
    if run.require_gpu and not (run.verdict.ok and not run.xdist.broken_hosts()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if run.report_path is not None:
        _write_report(run, run.report_path, finished=True)
    if run.step_summary and not run.nested:
        from ..report import markdown_summary

        text = markdown_summary(run.diagnosis, run.records.skip_groups())
        not_used, unknown = run.records.gpu_use_counts()
        if not_used or unknown:
            text = f"{text.rstrip()}\n\n{gpu_use_line(not_used, unknown, run.replaying)}\n"
        try:
            # Exactly one blank line on each side: Markdown would otherwise join the block to what other steps
            # wrote around it.
            append_regular(run.step_summary, f"\n{text.strip()}\n\n")
        except (OSError, FileRefused) as error:
            reason = _reason(error, Path(run.step_summary))
            run.problems.append(f"could not append to GITHUB_STEP_SUMMARY {run.step_summary}: {reason}")


def provisional(run: GpuRun) -> None:
    """``--gpu-report`` as the run starts, marked not finished: a run that ends without a summary (a test, or a driver
    call of ``--assert-gpu-used``, that crashes or exits the process) leaves a report that says so instead of none;
    the end of the run writes it whole over this one."""
    if run.report_path is not None:
        _write_report(run, run.report_path, finished=False)


def _write_report(run: GpuRun, path: Path, finished: bool) -> None:
    try:
        from ..document import report_json

        made = report_json(dataclasses.replace(document(run), finished=finished))
        write_atomically(path, json.dumps(made, indent=2), make_folders=True)
    except (OSError, FileRefused) as error:
        problem = f"could not write --gpu-report {path}: {_reason(error, path)}"
        if problem not in run.problems:
            run.problems.append(problem)


def gpu_use_line(not_used: int, unknown: int, replaying: bool) -> str:
    """The run's count of tests that fell back to the CPU (uses_gpu, --assert-gpu-used), and of those that could not
    be told: a replayed environment has no process to ask; a live run could not read the context (the driver's call
    failed or timed out: each test's own reason is in --gpu-report)."""
    parts = []
    if not_used:
        tests = "1 test did not use its GPU" if not_used == 1 else f"{not_used} tests did not use their GPU"
        parts.append(f"{tests} (fell back to the CPU)")
    if unknown:
        why = "replayed environment" if replaying else "the driver could not be asked: a call failed or timed out"
        parts.append(f"{unknown} could not be checked ({why})")
    return "pytest-cudnn: " + "; ".join(parts) + "; --gpu-report lists each test's gpu_used and gpu_use"


def document(run: GpuRun) -> Report:
    """``--gpu-report``: the doctor's document (:func:`pytest_cudnn.report.doctor_report`), with the run's keys."""
    from .._base.serde import from_json
    from ..document import DeviceEntry, TestEntry
    from ..report import doctor_report

    xdist = run.xdist
    hosts = xdist.xdist_hosts()
    if hosts:
        xdist.plan()
    where: dict[str, str] = {}
    remote = any(not host.local for host in hosts)
    if remote:
        where = {worker: host.key for host in hosts for worker in host.workers}
    return dataclasses.replace(
        doctor_report(run.diagnosis),
        require_gpu=run.require_gpu,
        xdist={worker: tuple(device.index for device in devices) for worker, devices in xdist.assignment.items()},
        xdist_devices={
            worker: tuple(DeviceEntry(device.label, device.uuid) for device in devices)
            for worker, devices in xdist.assignment.items()
        },
        xdist_note=xdist.shortfall,
        hosts=tuple(xdist.host_entry(host) for host in hosts) if remote else None,
        tests=tuple(
            from_json(TestEntry, {"nodeid": nodeid, **facts, **({"host": where[worker]} if worker in where else {})})
            for (nodeid, worker), facts in run.records.tests.items()
        ),
    )


def _reason(error: OSError | FileRefused, path: Path) -> str:
    """The system's reason, and the folder it is about when that is not the file itself ('File exists' alone
    does not say that a file stands where a folder must be created); what stands at the path when it is refused."""
    if isinstance(error, FileRefused):
        return str(error)
    reason = error.strerror or str(error)
    if error.filename and Path(error.filename) in path.parents:
        reason += f": {error.filename}"
    return reason
