"""Render an environment and its findings for people (the doctor's text) and machines (JSON).

Pure module: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .diagnosis import Finding, Verdict
from .environment import ALLOWED_VARIABLES, CudaRuntime, Cudnn, Environment, Resolution, State, by_file
from .serde import to_json

__all__ = ["doctor_json", "doctor_text", "format_bytes", "header_lines", "markdown_summary"]

_LABEL = 16


def format_bytes(value: int | None) -> str:
    """Binary units, as nvidia-smi's MiB: 25769803776 -> '24.0 GiB'."""
    if value is None:
        return "?"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover - loop always returns


def _line(label: str, text: str) -> str:
    return f"{label:<{_LABEL}}{text}"


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
        lines.append(_line("libcuda", f"CUDA {libcuda.version or '?'} at {libcuda.path}{init}{count}"))
    else:
        lines.append(_line("libcuda", f"{libcuda.state.value}: {libcuda.reason or 'no answer'}"))
    if not driver.gpus:
        lines.append(_line("GPUs", "none seen"))
    for gpu in driver.gpus:
        facts = [
            gpu.name or "?",
            f"sm {gpu.compute_capability or '?'}",
            f"{format_bytes(gpu.memory_free)} free of {format_bytes(gpu.memory_total)}",
            gpu.pci_bus_id or "",
            gpu.uuid or "",
        ]
        text = ", ".join(fact for fact in facts if fact)
        if gpu.error:
            text += f"  [failed: {gpu.error}]"
        lines.append(_line("GPUs" if gpu.index == 0 else "", f"[{gpu.index}] {text}"))
    return lines


def _runtime_line(runtime: CudaRuntime) -> list[str]:
    head = f"{runtime.version or '?':<7} {runtime.path}  (via {_via(runtime.via)})"
    if runtime.state is State.ERROR:
        return [head, f"        probe failed: {runtime.reason}"]
    detail = []
    if runtime.device_count is not None:
        detail.append(f"sees {runtime.device_count} device(s)")
    elif runtime.device_count_status is not None:
        status = f"cudaGetDeviceCount: {runtime.device_count_status} {runtime.device_count_error or ''}".strip()
        if runtime.driver_version_raw == 0 and runtime.device_count_status == 35:
            status += " -> driver version 0: no driver at all, not an old one"
        detail.append(status)
    return [head] + [f"        {text}" for text in detail]


def _cudnn_line(cudnn: Cudnn) -> list[str]:
    source = f", version from {cudnn.version_source}" if cudnn.version_source not in (None, "cudnnGetProperty") else ""
    head = f"{cudnn.version or '?':<7} {cudnn.path}  (via {_via(cudnn.via)}{source})"
    lines = [head]
    if cudnn.cudart_version:
        lines.append(f"        built for CUDA {cudnn.cudart_version}")
    if cudnn.siblings_missing:
        lines.append(f"        INCOMPLETE: missing {', '.join(cudnn.siblings_missing)}")
    if cudnn.state is State.ERROR:
        lines.append(f"        probe failed: {cudnn.reason}")
    elif cudnn.create_status not in (None, 0):
        last = f" ({cudnn.last_error})" if cudnn.last_error else ""
        lines.append(f"        cudnnCreate: {cudnn.create_status} {cudnn.create_error or ''}{last}".rstrip())
    return lines


def _copies_block(label: str, lines_per_copy: Sequence[list[str]], empty: str) -> list[str]:
    if not lines_per_copy:
        return [_line(label, empty)]
    out = []
    for index, lines in enumerate(lines_per_copy):
        out.append(_line(label if index == 0 else "", lines[0]))
        out.extend(" " * _LABEL + extra for extra in lines[1:])
    return out


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
            lines.append(_line("", f"kernels for {', '.join(tf.compute_capabilities)}"))
        if tf.reason:
            lines.append(_line("", tf.reason))
    for folder in tf.library_dirs:
        lines.append(_line("", f"searches first: {folder}"))
    return lines


def _resolution_lines(resolution: Resolution) -> list[str]:
    who = "" if resolution.context == "process" else f" (as {resolution.context} loads it)"
    if resolution.predicted is None and resolution.loaded is None:
        unseen = [group[0].path for group in by_file(resolution.candidates)]
        text = f"{resolution.name}{who}: the loader finds no copy"
        lines = [text]
        if unseen:
            lines.append(f"  present where the loader does not look: {', '.join(unseen)}")
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
    lines = [f"{resolution.name}{who} -> {winner} ({how}){check}"]
    for group in groups:
        if group is winner_group:
            continue
        first = group[0]
        state = "shadowed" if first.loader_rank is not None else "not on the loader path"
        lines.append(f"  {state}: {first.path} ({_via(first.via)})")
    return lines


def doctor_text(env: Environment, findings: Sequence[Finding], verdict: Verdict, *, source: str | None = None) -> str:
    host = env.host
    origin = f"replayed from {source}, probed {env.probed_at}" if source else f"probed in {env.probe_seconds:.2f} s"
    lines = [f"pytest-cudnn doctor: {host.system} {host.machine}, Python {host.python}, {origin}", ""]
    lines += _driver_lines(env)
    lines.append("")
    lines += _copies_block("CUDA runtime", [_runtime_line(r) for r in env.cuda_runtimes], "none found")
    lines += _copies_block("cuDNN", [_cudnn_line(c) for c in env.cudnns], "none found")
    lines += _tensorflow_lines(env)
    if env.resolutions:
        lines += ["", "Loader resolution"]
        for resolution in env.resolutions:
            lines += ["  " + text for text in _resolution_lines(resolution)]
    lines += ["", "Environment"]
    shown = dict(env.variables)
    for name in ALLOWED_VARIABLES:
        lines.append(f"  {name:<21}{shown.pop(name, '(unset)')}")
    for name, value in shown.items():
        lines.append(f"  {name:<21}{value}")
    for note in env.notes:
        lines.append(f"  note: {note}")
    if findings:
        lines += ["", "Findings"]
        for finding in findings:
            lines.append(f"  {finding.severity.value.upper()} [{finding.code}] {finding.summary}")
            lines += [f"      {item}" for item in finding.evidence if item]
            lines.append(f"      fix: {finding.fix}")
    lines += ["", f"Verdict: {verdict.summary}"]
    return "\n".join(lines) + "\n"


def doctor_json(env: Environment, findings: Sequence[Finding], verdict: Verdict) -> dict[str, Any]:
    return {
        "environment": env.to_json(),
        "findings": [to_json(finding) for finding in findings],
        "verdict": to_json(verdict),
    }


def _where(path: str, vias: Iterable[Any]) -> str:
    return f"{path}, via {_via(vias)}"


def header_lines(
    env: Environment,
    findings: Sequence[Finding],
    verdict: Verdict,
    *,
    runtime: CudaRuntime | None,
    cudnn: Cudnn | None,
    verbose: bool = False,
    source: str | None = None,
) -> list[str]:
    """pytest's session header: driver and GPUs, the libraries in use, the verdict; findings with -v."""
    driver = env.driver
    if driver.state is State.FOUND:
        gpus = ", ".join(
            f"[{g.index}] {g.name} ({g.compute_capability}, {format_bytes(g.memory_free)} free)" for g in driver.gpus
        )
        first = f"driver {driver.version} (CUDA {driver.cuda_version or '?'}), GPUs: {gpus or 'none'}"
    else:
        first = f"no usable NVIDIA driver ({driver.reason or driver.state.value})"
    parts = [
        f"CUDA runtime {runtime.version} ({_where(runtime.path, runtime.via)})"
        if runtime
        else "no CUDA runtime in use",
        f"cuDNN {cudnn.version} ({_where(cudnn.path, cudnn.via)})" if cudnn else "no cuDNN in use",
    ]
    tf = env.tensorflow
    if tf.state is not State.ABSENT:
        parts.append(f"TensorFlow {tf.version or '?'}")
    origin = f" [replayed from {source}]" if source else ""
    lines = [f"pytest-cudnn: {first}{origin}", "pytest-cudnn: " + ", ".join(parts), f"pytest-cudnn: {verdict.summary}"]
    if verbose:
        for finding in findings:
            lines.append(f"pytest-cudnn:   {finding.severity.value.upper()} [{finding.code}] {finding.summary}")
    return lines


def markdown_summary(
    env: Environment,
    findings: Sequence[Finding],
    verdict: Verdict,
    skips: Sequence[tuple[str, int, str]],
) -> str:
    """A GitHub step summary: the stack, the findings, the environment skips by cause."""
    lines = [
        "### pytest-cudnn",
        "",
        f"**{verdict.summary}**",
        "",
        "| component | found | where |",
        "| --- | --- | --- |",
    ]
    driver = env.driver
    lines.append(
        f"| driver | {driver.version or driver.state.value} | {driver.path or driver.reason or ''} |".replace("\n", " ")
    )
    for gpu in driver.gpus:
        lines.append(
            f"| GPU {gpu.index} | {gpu.name} (compute capability {gpu.compute_capability}) | {gpu.pci_bus_id} |"
        )
    for runtime in env.cuda_runtimes:
        lines.append(f"| CUDA runtime | {runtime.version or '?'} | `{runtime.path}` ({_via(runtime.via)}) |")
    for cudnn in env.cudnns:
        lines.append(f"| cuDNN | {cudnn.version or '?'} | `{cudnn.path}` ({_via(cudnn.via)}) |")
    if env.tensorflow.state is not State.ABSENT:
        lines.append(f"| TensorFlow | {env.tensorflow.version} | `{env.tensorflow.location}` |")
    if findings:
        lines += ["", "| severity | code | finding | fix |", "| --- | --- | --- | --- |"]
        lines += [f"| {f.severity.value} | `{f.code}` | {f.summary} | {f.fix} |" for f in findings]
    if skips:
        lines += ["", "| environment skips | cause | first reason |", "| --- | --- | --- |"]
        lines += [f"| {count} | `{cause}` | {reason} |" for cause, count, reason in skips]
    return "\n".join(lines) + "\n"
