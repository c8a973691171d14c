"""The doctor's two views and its marks: the default view people read (problems first, one line per component),
``-v`` with everything read, ``--json`` unchanged; the marks ✓ ! ✗ with their ASCII fallback, colour only where
pytest would colour; a finding that follows from another right after it."""

from __future__ import annotations

import dataclasses
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_cudnn._base.style import ASCII, PLAIN, Status, Style, choose_style, plain_style
from pytest_cudnn.diagnosis import Diagnosis, Finding, Severity, judge_environment
from pytest_cudnn.diagnosis.model import make_finding
from pytest_cudnn.environment import BuildFact, FrameworkBuild, State
from pytest_cudnn.overview import HINT, cause_order, doctor_summary
from pytest_cudnn.report import doctor_json, doctor_text, header_lines

from .envbuilder import EnvBuilder, gpu
from .golden.regenerate import COMMAND, GOLDEN, ROOT, VIEWS, outputs, snapshot_names

SNAPSHOTS = snapshot_names()
ESCAPE = "\x1b["


# The golden files: every snapshot's three views, as committed ---------------------------------------------------


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_each_view_of_each_snapshot_is_the_committed_one(name: str) -> None:
    printed = outputs(name)
    for file, (_, text) in printed.items():
        committed = GOLDEN / file
        assert committed.is_file(), f"{committed.relative_to(ROOT)} is missing: run {COMMAND}"
        assert text == committed.read_text(encoding="utf-8"), f"{file} differs from what the doctor prints: {COMMAND}"
    codes = {code for code, _ in printed.values()}
    report = json.loads(printed[f"{name}.json"][1])
    assert codes == {0 if report["verdict"]["ok"] else 1}, "every view exits as the verdict says"


def test_the_golden_files_are_those_of_the_snapshots_there_are() -> None:
    assert len(SNAPSHOTS) >= 11
    expected = {f"{name}{suffix}" for name in SNAPSHOTS for suffix in VIEWS}
    assert {path.name for path in GOLDEN.iterdir()} == expected, f"stale or missing golden files: run {COMMAND}"


@pytest.mark.parametrize("name", ["healthy-tf2.18-a100", "jax0.10-cuda12-healthy"])
def test_a_healthy_one_framework_host_fits_in_twenty_lines(name: str) -> None:
    printed = outputs(name)
    (_, text), (_, verbose) = printed[f"{name}.txt"], printed[f"{name}.verbose.txt"]
    lines = text.splitlines()
    assert len(lines) <= 20, text
    assert len(verbose.splitlines()) > len(lines)
    assert lines[-2:] == ["✓ Verdict: the GPU stack holds together", HINT]


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_the_default_view_says_the_verdict_and_each_problem_with_its_fix(name: str) -> None:
    printed = outputs(name)
    text, report = printed[f"{name}.txt"][1], json.loads(printed[f"{name}.json"][1])
    assert f"Verdict: {report['verdict']['summary']}" in text
    for finding in report["findings"]:
        if finding["severity"] == "info":
            assert finding["summary"] not in text
        else:
            because = f" because [{finding['because']}]:" if finding.get("because") else ""
            assert f"[{finding['code']}]{because} {finding['summary']}" in text
            assert f"    fix: {finding['fix']}" in text
    for framework in report["frameworks"]:
        [said] = [line for line in text.splitlines() if line[2:].startswith(_display(framework["name"]) + " ")]
        assert said[:2] in (("✓ ", "! ") if framework["ok"] else ("✗ ",)), said
    assert report["in_use"]["cuda_runtime"] is None or report["in_use"]["cuda_runtime"]["path"] in text
    assert report["in_use"]["cudnn"] is None or report["in_use"]["cudnn"]["path"] in text
    assert "RUNPATH $ORIGIN" not in text  # never the raw RUNPATH


def _display(name: str) -> str:
    return {"torch": "PyTorch", "jax": "JAX", "tensorflow": "TensorFlow", "cupy": "CuPy"}.get(name, name)


def test_the_default_view_of_a_sick_multi_framework_host() -> None:
    _, text = outputs("mixed-torch-jax-tf")["mixed-torch-jax-tf.txt"]
    lines = text.splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("✗ [")]
    warnings = [i for i, line in enumerate(lines) if line.startswith("! [")]
    assert errors
    assert warnings
    # Errors first, then warnings; a warning an error follows from (here LD_LIBRARY_PATH's copy shadowing the wheel)
    # comes with it, right before it.
    causes = [i for i in warnings if i < max(errors)]
    assert [lines[i].split("]")[0] for i in causes] == ["! [tensorflow-library-shadowed"]
    assert lines[causes[0] + 2].startswith("  ✗ [tensorflow-cudnn-too-old] because [tensorflow-library-shadowed]:")
    assert "✗ TensorFlow    2.21.0: cannot run (see [tensorflow-cudnn-too-old], " in text
    assert "! PyTorch       2.10.0+cu128: can run GPU work here (see [framework-copies-differ]" in text
    # Each copy in use, with who loads it; TensorFlow's own cuDNN is the one the error is about.
    assert "✗ cuDNN         9.1.0  /opt/cudnn-9.1/lib/libcudnn.so.9  (via LD_LIBRARY_PATH" in text
    assert "loaded by PyTorch, JAX)" in text


# Identical GPUs share a line; a GPU with its own problem stands apart; bounded whatever a snapshot holds ----------


def test_identical_gpus_share_one_line_and_one_with_a_problem_stands_apart() -> None:
    h100 = "NVIDIA H100 80GB HBM3"
    gpus = [gpu(i, name=h100, cc="9.0") for i in range(8)]
    gpus[5] = gpu(5, name=h100, cc="9.0", free=1 * 2**30)  # little free memory: a warning about GPU 5 alone
    env = EnvBuilder.healthy().with_gpus(*gpus).build()
    text = doctor_summary(judge_environment(env))
    assert "✓ GPUs 0-4, 6-7 7 x NVIDIA H100 80GB HBM3 (9.0, Hopper)\n" in text
    assert "! GPU 5         NVIDIA H100 80GB HBM3 (9.0, Hopper) (see [gpu-memory-low] above)" in text
    alike = EnvBuilder.healthy().with_gpus(*(gpu(i, name=h100, cc="9.0") for i in range(8))).build()
    assert "✓ GPUs 0-7      8 x NVIDIA H100 80GB HBM3 (9.0, Hopper)\n" in doctor_summary(judge_environment(alike))


@pytest.mark.slow  # 10,000 GPUs
def test_ten_thousand_gpus_of_many_kinds_stay_a_few_short_lines() -> None:
    gpus = [gpu(i, name=f"GPU kind {i % 50}") for i in range(10_000)]
    text = doctor_summary(judge_environment(EnvBuilder.healthy().with_gpus(*gpus).build()))
    assert len(text.splitlines()) < 30
    assert max(len(line) for line in text.splitlines()) <= 1000
    assert "and 42 more kinds of GPU (--json lists them all)" in text
    assert "GPUs 0, 50, 100, 150, 200, 250 and 194 more " in text


class _Walked(tuple[Finding, ...]):
    """A diagnosis' findings that count how often a view walks them."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        type(self).walks += 1
        return super().__iter__()


def _many_copies(n: int) -> Diagnosis:
    """``n`` PyTorch installs, each loading its own CUDA runtime and cuDNN, with a warning about each cuDNN: the
    view's copy lines and their lookups grow with the copies (300 of them printed 686 lines in 6.6 s)."""
    base = judge_environment(EnvBuilder.healthy().with_torch(version="2.5.1+cu124", cuda="12.4").build())
    torch = base.framework("torch")
    assert torch is not None
    assert torch.runtime is not None
    assert torch.cudnn is not None
    frameworks, findings = [], list(base.findings)
    for i in range(n):
        runtime = dataclasses.replace(torch.runtime, path=f"/opt/torch{i}/lib/libcudart.so.12")
        cudnn = dataclasses.replace(torch.cudnn, path=f"/opt/torch{i}/lib/libcudnn.so.9")
        build = dataclasses.replace(torch.build, location=f"/opt/torch{i}")
        frameworks.append(dataclasses.replace(torch, build=build, runtime=runtime, cudnn=cudnn))
        findings.append(
            make_finding("library-shadowed", Severity.WARNING, "cudnn", f"copy {i}", (), "fix", (cudnn.path,))
        )
    return dataclasses.replace(base, findings=_Walked(findings), frameworks=tuple(frameworks))


def test_many_copies_in_use_stay_a_few_lines_each_cut_saying_where_the_rest_are() -> None:
    text = doctor_summary(_many_copies(300))
    lines = text.splitlines()
    # 30 problems with their fixes, 8 copies of each kind, 16 frameworks, each cut with its line: 104
    assert len(lines) <= 110, f"{len(lines)} lines"
    # 300 frameworks' copies and the loader's (the one in use without a framework)
    assert "\nand 293 more CUDA runtime copies in use (--json lists them all)\n" in text
    assert "\nand 293 more cuDNN copies in use (--json lists them all)\n" in text
    assert (
        "\n! cuDNN         9.3.0  /opt/torch0/lib/libcudnn.so.9  (via pip nvidia wheel; loaded by PyTorch) (see "
        in text
    )
    assert "\n! PyTorch       2.5.1+cu124: can run GPU work here (see [library-shadowed] above)\n" in text


def test_the_view_walks_the_findings_as_often_however_many_copies_and_frameworks() -> None:
    """Looked up by what each is about, once per view: not once per copy or framework (copies x findings)."""
    walks = []
    for n in (2, 6, 40):
        _Walked.walks = 0
        doctor_summary(_many_copies(n))
        walks.append(_Walked.walks)
    assert walks[0] == walks[1] == walks[2], walks


def test_each_cut_of_the_default_view_says_where_the_rest_are_and_minus_v_cuts_too() -> None:
    """-v cuts as well (32 GPUs, 16 copies, 50 findings): only --json lists them all."""
    kinds = [gpu(i, name=f"GPU kind {i}") for i in range(12)]
    env = EnvBuilder.healthy().with_gpus(*kinds)
    env.variables["LD_LIBRARY_PATH"] = ":".join(f"rel{i}" for i in range(3))
    diagnosis = judge_environment(env.build())
    notes = [make_finding("cuda-device-order", Severity.INFO, "environment", f"note {i}", (), "fix") for i in range(60)]
    problems = [
        make_finding("ld-library-path-relative", Severity.WARNING, "environment", f"warning {i}", (), "fix")
        for i in range(40)
    ]
    text = doctor_summary(dataclasses.replace(diagnosis, findings=(*problems, *notes)))
    assert "-v lists them all" not in text
    assert "and 4 more kinds of GPU (--json lists them all)" in text
    assert "and 10 more problems (--json lists them all)" in text
    assert "\n60 notes: --json lists them\n" in text  # -v lists 50 findings, warnings first
    few = doctor_summary(dataclasses.replace(diagnosis, findings=(*problems[:3], *notes[:2])))
    assert "\n2 notes: -v shows them\n" in few


def test_a_gpu_is_marked_by_the_gpus_a_finding_is_about_never_by_the_text_of_its_summary() -> None:
    """A GPU's name is read from the host: GPU 0 named "Tesla K80 GPU 1" made the healthy GPU 1 show x."""
    env = EnvBuilder.healthy().with_gpus(gpu(0, name="Tesla K80 GPU 1", cc="3.7"), gpu(1)).build()
    diagnosis = judge_environment(env)
    text = doctor_summary(diagnosis)
    assert "\n✗ GPU 0         Tesla K80 GPU 1 (3.7, Kepler) (see [gpu-unsupported-by-cuda] above)\n" in text
    assert "\n✓ GPU 1         NVIDIA A100-SXM4-80GB (8.0, Ampere)\n" in text
    (unsupported,) = [f for f in diagnosis.findings if f.code == "gpu-unsupported-by-cuda"]
    assert "GPU 1" in unsupported.summary
    assert unsupported.gpus == (0,)
    assert [f["gpus"] for f in doctor_json(diagnosis)["findings"] if f["code"] == "gpu-unsupported-by-cuda"] == [[0]]


def test_a_hostile_name_is_printable_in_the_default_view_and_the_colour_is_the_only_escape() -> None:
    env = EnvBuilder.healthy().with_gpus(gpu(name="A100\x1b[2J\r\u202e")).build()
    text = doctor_summary(judge_environment(env), style=Style(colour=True))
    assert "A100\\x1b[2J\\r\\u202e" in text
    assert "\r" not in text
    assert "\u202e" not in text
    assert set(re.findall(r"\x1b\[[0-9;]*m", text)) == {"\x1b[32m", "\x1b[0m"}
    assert text.count(ESCAPE) == 2 * sum(line.startswith("\x1b[32m✓\x1b[0m ") for line in text.splitlines())


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_the_ascii_style_prints_ascii_alone(name: str) -> None:
    from pytest_cudnn.environment import load_snapshot

    diagnosis = judge_environment(load_snapshot(ROOT / "examples" / "snapshots" / f"{name}.json"))
    assert doctor_summary(diagnosis, style=ASCII).isascii()
    assert all(line.isascii() for line in header_lines(diagnosis, runtime=None, cudnn=None, style=ASCII))


# The style: one pure decision, table-tested ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("isatty", "environ", "encoding", "expected"),
    [
        (True, {}, "utf-8", Style(unicode=True, colour=True)),
        (False, {}, "utf-8", Style(unicode=True, colour=False)),  # a pipe
        (True, {"TERM": "dumb"}, "utf-8", Style(unicode=True, colour=False)),
        (True, {"TERM": "xterm-256color"}, "utf-8", Style(unicode=True, colour=True)),
        (True, {"NO_COLOR": "1"}, "utf-8", Style(unicode=True, colour=False)),
        (True, {"NO_COLOR": ""}, "utf-8", Style(unicode=True, colour=True)),  # empty: as if unset (no-color.org)
        (False, {"FORCE_COLOR": "1"}, "utf-8", Style(unicode=True, colour=True)),
        (False, {"FORCE_COLOR": "0"}, "utf-8", Style(unicode=True, colour=True)),  # any value but empty
        (False, {"FORCE_COLOR": ""}, "utf-8", Style(unicode=True, colour=False)),
        (False, {"FORCE_COLOR": "1", "TERM": "dumb"}, "utf-8", Style(unicode=True, colour=True)),
        (True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, "utf-8", Style(unicode=True, colour=False)),  # NO_COLOR wins
        (False, {"PY_COLORS": "1", "NO_COLOR": "1"}, "utf-8", Style(unicode=True, colour=True)),  # pytest's order
        (True, {"PY_COLORS": "0", "FORCE_COLOR": "1"}, "utf-8", Style(unicode=True, colour=False)),
        (True, {"PY_COLORS": "yes"}, "utf-8", Style(unicode=True, colour=True)),  # neither 0 nor 1: not PY_COLORS'
        (True, {}, "ascii", Style(unicode=False, colour=True)),
        (False, {}, "ANSI_X3.4-1968", Style(unicode=False, colour=False)),  # LANG=C without UTF-8 mode
        (False, {}, "latin-1", Style(unicode=False, colour=False)),  # no ✓ in Latin-1
        (False, {}, "cp1252", Style(unicode=False, colour=False)),
        (False, {}, "utf-16", Style(unicode=True, colour=False)),
        (False, {}, None, Style(unicode=False, colour=False)),  # a stream that names no encoding
        (False, {}, "no-such-codec", Style(unicode=False, colour=False)),
    ],
)
def test_the_style_follows_the_stream_and_the_environment(
    isatty: bool, environ: dict[str, str], encoding: str | None, expected: Style
) -> None:
    assert choose_style(isatty, environ, encoding) == expected
    assert plain_style(encoding) == dataclasses.replace(expected, colour=False)


def test_each_mark_has_an_ascii_fallback_of_one_width() -> None:
    marks = {status: (PLAIN.mark(status), ASCII.mark(status)) for status in Status}
    assert marks == {
        Status.OK: ("✓", "[ok]"),
        Status.WARNING: ("!", "[!!]"),
        Status.ERROR: ("✗", "[XX]"),
        Status.ABSENT: ("-", "[--]"),
    }
    assert Style(unicode=False, colour=True).mark(Status.ERROR) == "\x1b[31m[XX]\x1b[0m"
    assert Style(colour=True).mark(Status.ABSENT) == "-"  # nothing to draw the eye to


# A finding that follows from another: right after it, one step in, "because [code]" ----------------------------


def _finding(code: str, severity: Severity = Severity.ERROR, because: str | None = None) -> Finding:
    return Finding(code, severity, "environment", f"summary of {code}", (f"evidence of {code}",), f"fix {code}",
                   because=because)  # fmt: skip


def test_cause_order_keeps_the_diagnosis_order_and_counts_the_steps() -> None:
    cause = _finding("framework-cpu-only", Severity.WARNING)
    a, b, c = _finding("no-cuda-runtime", because="framework-cpu-only"), _finding("no-gpu"), _finding("no-driver")
    deeper = _finding("cudnn-create-failed", because="no-cuda-runtime")
    assert cause_order([b, cause, a, deeper, c]) == [(b, 0), (cause, 0), (a, 1), (deeper, 2), (c, 0)]
    # Two causes of one code: each follower is one step below the nearest above it, not the first of that code.
    first, second = _finding("framework-copies-differ", Severity.WARNING), _finding("framework-copies-differ")
    x = _finding("framework-import-order-conflict", Severity.WARNING, because="framework-copies-differ")
    y = _finding("framework-import-order-conflict", Severity.WARNING, because="framework-copies-differ")
    assert cause_order([first, x, second, y]) == [(first, 0), (x, 1), (second, 0), (y, 1)]
    # Without because: all at depth 0. A cause that is not there (a note the view leaves out), or itself: depth 0.
    assert cause_order([b, c]) == [(b, 0), (c, 0)]
    orphan = _finding("no-cuda-runtime", because="mig-no-devices")
    assert cause_order([orphan, b]) == [(orphan, 0), (b, 0)]
    itself = _finding("no-gpu", because="no-gpu")
    assert cause_order([itself]) == [(itself, 0)]


def test_both_views_and_the_header_show_a_follower_after_its_cause() -> None:
    follower = _finding("no-cuda-runtime", because="framework-cpu-only")
    other = _finding("no-gpu")
    cause = _finding("framework-cpu-only")
    diagnosis = judge_environment(EnvBuilder.healthy().build(), (follower, other, cause))
    # The diagnosis puts the cause right before its follower (a CPU-only build alone: nothing brings a runtime).
    summary = doctor_summary(diagnosis).splitlines()
    start = summary.index("✗ [framework-cpu-only] summary of framework-cpu-only")
    assert summary[start : start + 6] == [
        "✗ [framework-cpu-only] summary of framework-cpu-only",
        "    fix: fix framework-cpu-only",
        "  ✗ [no-cuda-runtime] because [framework-cpu-only]: summary of no-cuda-runtime",
        "      fix: fix no-cuda-runtime",
        "✗ [no-gpu] summary of no-gpu",
        "    fix: fix no-gpu",
    ]
    verbose = doctor_text(diagnosis).splitlines()
    start = verbose.index("Findings")
    assert verbose[start + 1 : start + 10] == [
        "  ERROR [framework-cpu-only] summary of framework-cpu-only",
        "      evidence of framework-cpu-only",
        "      fix: fix framework-cpu-only",
        "    ERROR [no-cuda-runtime] because [framework-cpu-only]: summary of no-cuda-runtime",
        "        evidence of no-cuda-runtime",
        "        fix: fix no-cuda-runtime",
        "  ERROR [no-gpu] summary of no-gpu",
        "      evidence of no-gpu",
        "      fix: fix no-gpu",
    ]
    header = header_lines(diagnosis, runtime=None, cudnn=None, verbose=True)
    assert header[-3:] == [
        "pytest-cudnn: ERROR [framework-cpu-only] summary of framework-cpu-only",
        "pytest-cudnn:   ERROR [no-cuda-runtime] because [framework-cpu-only]: summary of no-cuda-runtime",
        "pytest-cudnn: ERROR [no-gpu] summary of no-gpu",
    ]
    assert [(f["code"], f["because"]) for f in doctor_json(diagnosis)["findings"]] == [
        ("framework-cpu-only", None),
        ("no-cuda-runtime", "framework-cpu-only"),
        ("no-gpu", None),
    ]
    assert diagnosis.verdict.summary == ("cannot run GPU work: summary of framework-cpu-only (and 2 more errors)")


def test_a_follower_of_a_note_is_listed_among_the_problems_saying_what_it_follows_from() -> None:
    note = _finding("mig-mode-pending", Severity.INFO)
    follower = _finding("mig-no-devices", Severity.WARNING, because="mig-mode-pending")
    text = doctor_summary(judge_environment(EnvBuilder.healthy().build(), (note, follower)))
    assert "\n! [mig-no-devices] because [mig-mode-pending]: summary of mig-no-devices\n" in text
    assert "[mig-mode-pending] summary" not in text
    assert "\n1 note: -v shows it\n" in text


# The pytest header: a mark at the start of each component's line, in the terminal's encoding --------------------


def test_the_header_marks_each_line_and_keeps_its_count() -> None:
    env = EnvBuilder.healthy().build()
    diagnosis = judge_environment(env)
    plain = header_lines(diagnosis, runtime=diagnosis.runtime, cudnn=diagnosis.cudnn)
    ascii_ = header_lines(diagnosis, runtime=diagnosis.runtime, cudnn=diagnosis.cudnn, style=ASCII)
    assert len(plain) == len(ascii_) == 4  # driver and GPUs, the copies in use, TensorFlow, the verdict
    assert [line.split(" ")[1] for line in plain] == ["✓"] * 4
    assert [line.split(" ")[1] for line in ascii_] == ["[ok]"] * 4
    assert plain[3] == "pytest-cudnn: ✓ the GPU stack holds together"


@pytest.mark.parametrize(("encoding", "mark"), [("utf-8", "✓"), ("ascii", "[ok]")])
def test_the_session_header_takes_its_marks_from_the_terminals_encoding(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, encoding: str, mark: str
) -> None:
    snapshot = pytester.path / "env.json"
    snapshot.write_text(EnvBuilder.healthy().build().dumps())
    pytester.makepyfile("def test_a():\n    pass\n")
    monkeypatch.setenv("PYTHONIOENCODING", encoding)
    monkeypatch.setenv("FORCE_COLOR", "1")  # pytest colours its own lines; the header's are written as they are
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--gpu-env={snapshot}")
    header = [line for line in result.outlines if line.startswith("pytest-cudnn: ")]
    assert [line.split(" ")[1] for line in header] == [mark] * 4, result.outlines
    assert not [line for line in header if ESCAPE in line]
    assert result.ret == 0


# The real command in a child process: a pipe, the colour variables, an ASCII stream, a terminal -----------------


def _doctor(*args: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PY_COLORS", "NO_COLOR", "FORCE_COLOR", "TERM")}
    environ.update(extra or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environ,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


MIXED = "examples/snapshots/mixed-torch-jax-tf.json"


@pytest.mark.e2e
def test_the_command_on_a_pipe_and_with_the_colour_variables() -> None:
    piped = _doctor("--env", MIXED)
    assert (piped.returncode, piped.stderr) == (1, "")
    assert ESCAPE not in piped.stdout
    assert piped.stdout == (GOLDEN / "mixed-torch-jax-tf.txt").read_text(encoding="utf-8")
    forced = _doctor("--env", MIXED, extra={"FORCE_COLOR": "1"})
    assert forced.returncode == 1
    assert "\x1b[31m✗\x1b[0m [tensorflow-cudnn-too-old]" in forced.stdout
    assert re.sub(r"\x1b\[[0-9;]*m", "", forced.stdout) == piped.stdout
    both = _doctor("--env", MIXED, extra={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert (both.returncode, both.stdout) == (1, piped.stdout)
    for args in (("-v",), ("--json",)):  # never colour: the full text and the JSON are what they were
        assert ESCAPE not in _doctor(*args, "--env", MIXED, extra={"FORCE_COLOR": "1"}).stdout


@pytest.mark.e2e
def test_an_ascii_stream_gets_ascii_marks_and_the_same_exit_status() -> None:
    for snapshot, code in (("healthy-tf2.18-a100", 0), ("mixed-torch-jax-tf", 1)):
        path = f"examples/snapshots/{snapshot}.json"
        done = _doctor("--env", path, extra={"PYTHONIOENCODING": "ascii"})
        assert (done.returncode, done.stderr) == (code, "")
        assert done.stdout.isascii()
        unicode = (GOLDEN / f"{snapshot}.txt").read_text(encoding="utf-8")
        assert done.stdout == _in_ascii(unicode)
        verbose = _doctor("-v", "--env", path, extra={"PYTHONIOENCODING": "ascii"})
        assert (verbose.returncode, verbose.stdout) == (code, (GOLDEN / f"{snapshot}.verbose.txt").read_text())


def _in_ascii(text: str) -> str:
    """The default view with each line's mark in ASCII."""
    marks = {"✓": "[ok]", "!": "[!!]", "✗": "[XX]", "-": "[--]"}
    return re.sub(r"(?m)^( *)([✓!✗-]) ", lambda m: f"{m.group(1)}{marks[m.group(2)]} ", text)


@pytest.mark.e2e
def test_a_name_beyond_ascii_on_an_ascii_stream_is_escaped_not_a_crash(tmp_path: Path) -> None:
    env = EnvBuilder.healthy().with_gpus(gpu(name="Tesla T4 für Köln")).build()
    snapshot = tmp_path / "snap.json"
    snapshot.write_text(env.dumps())
    for args in ((), ("-v",)):
        done = _doctor(*args, "--env", str(snapshot), extra={"PYTHONIOENCODING": "ascii"})
        assert (done.returncode, done.stderr) == (0, "")
        assert "Tesla T4 f\\xfcr K\\xf6ln" in done.stdout


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("extra", "coloured"),
    [({}, True), ({"TERM": "dumb"}, False), ({"NO_COLOR": "1"}, False), ({"PY_COLORS": "0"}, False)],
)
def test_a_terminal_gets_colour_unless_told_otherwise(extra: dict[str, str], coloured: bool) -> None:
    leader, follower = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("PY_COLORS", "NO_COLOR", "FORCE_COLOR", "TERM")}
    environ.update({"TERM": "xterm", "PYTHONIOENCODING": "utf-8", **extra})
    child = subprocess.Popen(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--env", MIXED],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=environ,
        cwd=ROOT,
    )
    os.close(follower)
    read = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal's last writer
            break
        if not chunk:
            break
        read += chunk
    os.close(leader)
    assert child.wait(timeout=120) == 1
    text = read.decode("utf-8")
    assert ("\x1b[31m✗\x1b[0m" in text) is coloured
    assert "Verdict: cannot run GPU work" in text


@pytest.mark.e2e
@pytest.mark.parametrize("view", [(), ("-v",)])
def test_framework_picks_the_verdict_in_both_views(view: tuple[str, ...]) -> None:
    torch = _doctor(*view, "--framework", "torch", "--env", MIXED)
    assert torch.returncode == 0
    assert "Verdict: PyTorch 2.10.0+cu128: can run GPU work here" in torch.stdout
    tensorflow = _doctor(*view, "--framework", "tensorflow", "--env", MIXED)
    assert tensorflow.returncode == 1
    assert "Verdict: TensorFlow 2.21.0: cannot run: " in tensorflow.stdout
    if not view:
        # PyTorch can run, with warnings about it (the copies it shares): its line's mark and its verdict's
        assert "\n! Verdict: PyTorch 2.10.0+cu128: can run GPU work here\n" in torch.stdout


@pytest.mark.e2e
def test_under_framework_the_verdict_takes_the_mark_of_that_frameworks_line() -> None:
    """A warning about PyTorch marks its line ! and so its verdict: not ✓ from the verdict's ok alone."""
    done = _doctor("--framework", "torch", "--env", "examples/snapshots/overwritten-wheels.json")
    assert (done.returncode, done.stderr) == (0, "")
    assert (
        "\n! PyTorch       2.15.0+cu132: can run GPU work here "
        "(see [wheel-files-overwritten], [cudnn-cuda-mismatch] above)\n" in done.stdout
    )
    assert "\n! Verdict: PyTorch 2.15.0+cu132: can run GPU work here\n" in done.stdout
    healthy = _doctor("--framework", "jax", "--env", "examples/snapshots/jax0.10-cuda12-healthy.json")
    assert "\n✓ JAX           0.10.2: can run GPU work here\n" in healthy.stdout
    assert "\n✓ Verdict: JAX 0.10.2: can run GPU work here\n" in healthy.stdout
    absent = _doctor("--framework", "jax", "--env", "examples/snapshots/healthy-tf2.18-a100.json")
    assert "\n✗ Verdict: JAX (jax) is not installed on this Python path\n" in absent.stdout


@pytest.mark.e2e
def test_every_line_keeps_its_bound_after_an_ascii_stream_escapes_it(tmp_path: Path) -> None:
    """名 is written \\u540d on an ASCII stream: six characters for one, after the line was bounded."""
    env = EnvBuilder.healthy().with_gpus(gpu(name="名" * 5000)).build()
    snapshot = tmp_path / "snap.json"
    snapshot.write_text(env.dumps(), encoding="utf-8")
    for args in ((), ("-v",)):
        done = _doctor(*args, "--env", str(snapshot), extra={"PYTHONIOENCODING": "ascii"})
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.isascii()
        assert max(len(line) for line in done.stdout.splitlines()) <= 1000
        assert "\\u540d\\u540d" in done.stdout


@pytest.mark.e2e
def test_under_framework_the_problems_are_those_of_that_framework_and_the_rest_are_counted() -> None:
    # Real-wheels report: doctor --framework torch printed ONNX Runtime's errors too.
    whole = _doctor("--env", "examples/snapshots/mixed-torch-jax-tf.json")
    torch = _doctor("--framework", "torch", "--env", "examples/snapshots/mixed-torch-jax-tf.json")
    assert "[tensorflow-cudnn-too-old]" in whole.stdout  # TensorFlow's own error
    problems = torch.stdout.split("\n\n")[1]
    assert "[tensorflow-cudnn-too-old]" not in problems
    assert "[framework-import-order-conflict]" in problems  # it is about torch: it gets TensorFlow's copy
    assert "6 more problems concern other frameworks: without --framework, the doctor lists them" in problems
    assert torch.returncode == 0


def test_a_framework_with_its_cuda_runtime_linked_in_is_said_on_the_runtime_line() -> None:
    # Real-wheels report, "Causes": CuPy's component line said "CUDA runtime none found" while its skip said the
    # runtime is linked into CuPy.
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000).with_gpus(gpu())
    location = "/venv/lib/python3.11/site-packages/cupy"
    b.frameworks.append(
        FrameworkBuild(
            "cupy",
            State.FOUND,
            None,
            "cupy-cuda13x",
            "14.2.0",
            location,
            True,
            BuildFact("13", location, "cupy-cuda13x"),
            None,
            (),
            (),
        )
    )
    text = doctor_summary(judge_environment(b.build()))
    runtime = next(row for row in text.splitlines() if "CUDA runtime" in row)
    assert runtime.endswith("none found; CuPy links its own CUDA runtime into it"), runtime


def test_a_literal_escape_in_a_name_cannot_pass_for_an_escaped_control_character() -> None:
    # Field test A8: a GPU named 'A100\\x1b[31mFAKE' (the text) printed exactly like one whose name holds an ESC.
    env = EnvBuilder.healthy().with_gpus(gpu(0, name="A100\\x1b[31mFAKE"), gpu(1, name="A100\x1b[31mFAKE")).build()
    text = doctor_summary(judge_environment(env))
    rows = [row for row in text.splitlines() if row.startswith("✓ GPU")]
    assert "A100\\\\x1b[31mFAKE" in rows[0], rows  # the text's backslash, doubled
    assert "A100\\x1b[31mFAKE" in rows[1], rows  # the control character, escaped
    assert rows[0] != rows[1]
    assert "\x1b" not in text
