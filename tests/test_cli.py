"""The ``pytest-cudnn`` command: exit codes, snapshots written and replayed, clear errors for bad input."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn import cli
from pytest_cudnn.cli import main
from pytest_cudnn.environment import Via, load_snapshot
from pytest_cudnn.signatures import FRAMEWORK_NAMES

from .envbuilder import EnvBuilder, tensorflow_json
from .interrupts import interruptible
from .simhost import SimGpu, SimHost
from .test_writing import REFUSED, state, target

EXAMPLES = Path(__file__).parent.parent / "examples" / "snapshots"


def test_snapshot_then_replay_reproduces_the_diagnosis(host: SimHost) -> None:
    host.add_driver([SimGpu()])
    host.add_cudnn(host.wheel_folder("cudnn"), (9, 3, 0), cudart_version=12050)
    snap = host.root / "snap.json"
    written = host.run("snapshot", "-o", str(snap))
    assert written.returncode == 0, written.stderr
    assert f"wrote {snap}" in written.stderr

    live_code, live = host.doctor_json()
    # Replayed on a bare host: nothing planted is on its loader path, the snapshot alone speaks.
    replay = subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--json", "--env", str(snap)],
        capture_output=True,
        text=True,
        check=False,
        cwd=host.root,
    )
    replayed = json.loads(replay.stdout)
    assert replay.returncode == live_code
    assert replayed["environment"] == json.loads(snap.read_text())
    assert replayed["findings"] == live["findings"]
    text = subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--env", str(snap)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert f"replayed from {snap}, probed " in text


def test_snapshot_never_overwrites_without_force(host: SimHost) -> None:
    snap = host.root / "mine.json"
    snap.write_text("my notes")
    refused = host.run("snapshot", "-o", str(snap))
    assert refused.returncode == 2
    assert f"{snap} exists; use --force to overwrite it" in refused.stderr
    assert snap.read_text() == "my notes"
    forced = host.run("snapshot", "-o", str(snap), "--force")
    assert forced.returncode == 0
    assert json.loads(snap.read_text())["schema"] == "pytest-cudnn/environment"


def test_snapshot_to_stdout_is_one_json_document(host: SimHost) -> None:
    completed = host.run("snapshot")
    assert completed.returncode == 0
    assert json.loads(completed.stdout)["schema_version"] == 4


def test_snapshot_into_a_missing_folder_is_a_clear_error(host: SimHost) -> None:
    target = host.root / "no" / "such" / "snap.json"
    completed = host.run("snapshot", "-o", str(target))
    assert completed.returncode == 2
    assert f"cannot write {target}" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_an_unreadable_snapshot_exits_2_naming_the_file(host: SimHost) -> None:
    bad = host.root / "bad.json"
    bad.write_text('{"schema": "pytest-cudnn/environment", "schema_version": 1, "host": 3}')
    completed = host.run("doctor", "--env", str(bad))
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.startswith(f"pytest-cudnn: error: snapshot {bad}: ")
    assert "Traceback" not in completed.stderr


def test_usage_errors_exit_2(host: SimHost) -> None:
    for args in (("doctor", "--timeout", "soon"), ("doctor", "--timeout", "0"), ("frobnicate",), ("doctor", "--nope")):
        completed = host.run(*args)
        assert completed.returncode == 2, args
        assert "usage: pytest-cudnn" in completed.stderr
        assert "Traceback" not in completed.stderr


def test_bare_command_runs_the_doctor(host: SimHost) -> None:
    completed = host.run()
    assert completed.stdout.startswith("pytest-cudnn doctor: ")
    assert completed.returncode in (0, 1)


def test_console_script_and_version(host: SimHost) -> None:
    script = Path(sys.executable).parent / "pytest-cudnn"
    completed = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False)
    assert completed.returncode == 0
    assert completed.stdout.startswith("pytest-cudnn ")


@pytest.mark.e2e
def test_the_doctor_imports_no_framework_and_not_pytest() -> None:
    code = (
        "import sys; from pytest_cudnn import cli; from pytest_cudnn.probing.host import probe_environment;"
        "probe_environment();"
        f"print(sorted(m for m in {('pytest', *FRAMEWORK_NAMES)!r} if m in sys.modules))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]"


def test_a_snapshot_value_that_would_crash_the_diagnosis_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((EXAMPLES / "healthy-tf2.18-a100.json").read_text())
    data["cudnns"][0]["version"] = "9.x"
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(data))
    assert main(["doctor", "--env", str(snap)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"pytest-cudnn: error: snapshot {snap}: cudnns[0].version: expected a version such as '9.1.0', got '9.x'\n"
    )


HEALTHY = EXAMPLES / "healthy-tf2.18-a100.json"


@pytest.fixture
def no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the command probes this host: a usage error must be found before any probing."""

    def probe(args: object) -> Any:
        raise AssertionError("the command probed the live host")

    monkeypatch.setattr(cli, "_probe", probe)


# Ctrl-C and a closed standard output --------------------------------------------------------------


def _interrupt(args: object) -> Any:
    raise KeyboardInterrupt


def _main(args: list[str]) -> int:
    """main(), where a KeyboardInterrupt escaping it fails the test instead of stopping the test session."""
    try:
        return main(args)
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped main()")


@pytest.mark.parametrize("args", [["doctor"], [], ["snapshot"], ["--json"]])
def test_ctrl_c_while_probing_exits_130_with_one_line(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "_probe", _interrupt)
    assert _main(args) == 130
    assert capsys.readouterr() == ("", "pytest-cudnn: interrupted\n")


@pytest.mark.parametrize("failure", [KeyboardInterrupt(), OSError(28, "No space left on device")])
def test_a_snapshot_cut_short_while_written_leaves_no_file_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failure: BaseException
) -> None:
    monkeypatch.setattr(cli, "_probe", lambda args: (load_snapshot(HEALTHY), None))

    def replace(source: Any, target: Any) -> None:
        raise failure

    # The file is put in place by link(2) (a new name, no --force) or rename(2) (--force): either is cut short.
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "link", replace)
    code = _main(["snapshot", "-o", str(tmp_path / "snap.json")])
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    if isinstance(failure, KeyboardInterrupt):
        assert (code, err) == (130, "pytest-cudnn: interrupted\n")
    else:
        assert (code, err) == (
            2,
            f"pytest-cudnn: error: cannot write {tmp_path / 'snap.json'}: No space left on device\n",
        )


@pytest.mark.parametrize("command", ["doctor", "snapshot"])
def test_ctrl_c_in_a_terminal_stops_a_hanging_probe_with_130_and_one_line(host: SimHost, command: str) -> None:
    host.add_cudart(host.folder("opt/hang"), 12020, behaviour="hang")
    host.ld_library_path.append(str(host.root / "opt" / "hang"))
    hung = host.root / "hang.log"  # the stand-in writes its process id there once it hangs
    # A terminal's Ctrl-C sends SIGINT to the whole foreground process group: the command and its probe processes.
    process = subprocess.Popen(
        interruptible([sys.executable, "-m", "pytest_cudnn", command, "--timeout", "60"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=host.environ({"SIMHOST_HANG_LOG": str(hung)}),
        cwd=host.root,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60  # a bound on the wait, not a measure of speed
        while not (hung.exists() and hung.read_text().strip()):
            assert process.poll() is None, f"the command ended before the probe hung: {process.communicate()}"
            assert time.monotonic() < deadline, "the probe never reached the library that hangs"
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the group's leftovers: a library stuck in a loop ignores SIGINT
            os.killpg(process.pid, signal.SIGKILL)
    assert (process.returncode, out, err) == (130, "", "pytest-cudnn: interrupted\n")


BUFFERING = [pytest.param("", id="buffered"), pytest.param("1", id="PYTHONUNBUFFERED")]


def _run_into(
    args: list[str], stdout: int, unbuffered: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``pytest-cudnn ARGS`` writing to the descriptor ``stdout``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": unbuffered},
    )


def _closed_pipe_run(args: list[str], unbuffered: str = "") -> subprocess.CompletedProcess[str]:
    """``pytest-cudnn ARGS | head -0``: standard output is a pipe whose reader has already gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        return _run_into(args, write, unbuffered)
    finally:
        os.close(write)


@pytest.mark.e2e
@pytest.mark.parametrize("unbuffered", BUFFERING)
@pytest.mark.parametrize("args", [["doctor", "--env", str(HEALTHY)], ["--json", "--env", str(HEALTHY)], ["snapshot"]])
def test_a_closed_standard_output_ends_quietly(args: list[str], unbuffered: str) -> None:
    completed = _closed_pipe_run(args, unbuffered)
    assert (completed.returncode, completed.stderr) == (141, "")


def _is_full_device() -> bool:
    """/dev/full as the kernel makes it (character device 1, 7): a regular file there is somebody's, and is never
    opened for writing here."""
    try:
        info = os.stat("/dev/full")
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and (os.major(info.st_rdev), os.minor(info.st_rdev)) == (1, 7)


@pytest.mark.e2e
@pytest.mark.skipif(not _is_full_device(), reason="needs /dev/full, a device whose every write fails")
@pytest.mark.parametrize("unbuffered", BUFFERING)
@pytest.mark.parametrize(
    "args",
    [
        ["doctor", "--env", str(HEALTHY)],
        ["--json", "--env", str(HEALTHY)],
        ["snapshot"],
        ["fleet", "missing.json"],
        ["--version"],
        ["--help"],
    ],
)
def test_a_full_standard_output_is_one_line_and_an_exit_code_of_its_own(
    args: list[str], unbuffered: str, tmp_path: Path
) -> None:
    # pytest-cudnn doctor > /dev/full: a full disk under doctor --json > report.json. Not 1, which says the stack
    # cannot run GPU work; not a traceback.
    full = os.open("/dev/full", os.O_WRONLY)  # no O_CREAT, no O_TRUNC
    try:
        completed = _run_into(args, full, unbuffered, cwd=tmp_path)
    finally:
        os.close(full)
    assert (completed.returncode, completed.stderr) == (
        cli.EXIT_OUTPUT_FAILED,
        "pytest-cudnn: error: cannot write to standard output: No space left on device\n",
    )
    assert cli.EXIT_OUTPUT_FAILED not in (cli.EXIT_OK, cli.EXIT_BROKEN, cli.EXIT_USAGE, cli.EXIT_CLOSED_OUTPUT)


@pytest.mark.e2e
@pytest.mark.parametrize("unbuffered", BUFFERING)
def test_a_reader_that_leaves_in_the_middle_ends_the_doctor_quietly(unbuffered: str, tmp_path: Path) -> None:
    """``pytest-cudnn doctor --json | head -1`` with more output than a pipe holds (64 KiB on Linux, pipe(7)): the
    doctor is still writing when head leaves. Unbuffered, Python's text layer dropped what the short write(2) left
    and the doctor exited 0 as if all had been read."""
    data = json.loads(HEALTHY.read_text())
    data["notes"] = [f"note {n}: {'x' * 60}" for n in range(4000)]  # about 300 KB of JSON
    big = tmp_path / "big.json"
    big.write_text(json.dumps(data))
    with subprocess.Popen(
        [sys.executable, "-m", "pytest_cudnn", "doctor", "--json", "--env", str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": unbuffered},
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.readline() == b"{\n"
        process.stdout.close()
        err = process.stderr.read()
        assert (process.wait(timeout=60), err) == (141, b"")


# The doctor is the default command ----------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "--env", str(HEALTHY)],
        ["--env", str(HEALTHY), "--json"],
        [f"--env={HEALTHY}", "--json"],
        ["--timeout", "5", "--json", "--env", str(HEALTHY)],
        ["doctor", "--json", "--env", str(HEALTHY)],
    ],
)
def test_the_doctors_options_work_without_the_word_doctor(
    args: list[str], capsys: pytest.CaptureFixture[str], no_probe: None
) -> None:
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["environment"] == load_snapshot(HEALTHY).to_json()


def test_env_alone_replays_as_text(capsys: pytest.CaptureFixture[str], no_probe: None) -> None:
    assert main(["--env", str(HEALTHY)]) == 0
    assert f"replayed from {HEALTHY}" in capsys.readouterr().out


def test_help_shows_both_commands_and_the_doctors_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for usage in (
        "usage: pytest-cudnn [doctor] [-v] [--json] [--env FILE] [--framework NAME] [--timeout SECONDS]",
        "pytest-cudnn snapshot [-o FILE] [--force] [--redact] [--timeout SECONDS]",
    ):
        assert usage in text
    assert "--env FILE" in text
    assert "130" in text  # the exit codes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'"),
        (["--nope"], "unrecognized arguments: --nope"),
        (["snapshot", "--json"], "unrecognized arguments: --json"),
        (["doctor", "--env", ""], "argument --env: an empty path names no snapshot file"),
        (["--env", ""], "argument --env: an empty path names no snapshot file"),
        (["--env="], "argument --env: an empty path names no snapshot file"),
        (["snapshot", "-o", ""], "argument -o/--output: an empty path names no file to write"),
        (["fleet"], "name at least one report (a file that pytest --gpu-report PATH wrote)"),
        (["fleet", ""], "an empty path names no report"),
        (["fleet", "--markdown", "--json", "a.json"], "argument --json: not allowed with argument --markdown"),
        (["fleet", "--name", "a", "a.json"], "argument --name: expected NAME=PATH"),
        (["fleet", "--name", "=a.json"], "argument --name: expected NAME=PATH"),
        (["fleet", "--name", "a=x.json", "--name", "b=x.json"], "x.json is named twice: 'a' and 'b'"),
        (["fleet", "a.json", "--nope"], "unrecognized arguments: --nope"),
    ],
)
def test_usage_errors_name_the_argument_and_never_probe(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], no_probe: None
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: pytest-cudnn")
    assert message in err.splitlines()[-1]


# Where a snapshot is written ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "force", "problem"),
    [
        (lambda p: p.mkdir(), False, "{p} is a folder: name the snapshot file to write"),
        (lambda p: p.mkdir(), True, "{p} is a folder: name the snapshot file to write"),
        (lambda p: None, False, "cannot write {p}/snap.json: {p} does not exist"),
        (lambda p: p.write_text("x"), False, "cannot write {p}/snap.json: {p} is not a folder"),
    ],
)
def test_a_snapshot_target_that_cannot_be_written_is_refused_before_probing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_probe: None,
    make: Callable[[Path], Any],
    force: bool,
    problem: str,
) -> None:
    target = tmp_path / "target"
    make(target)
    output = target / "snap.json" if "{p}/snap.json" in problem else target
    assert main(["snapshot", "-o", str(output), *(["--force"] if force else [])]) == 2
    assert capsys.readouterr() == ("", f"pytest-cudnn: error: {problem.format(p=target)}\n")


@pytest.mark.parametrize("force", [False, True], ids=["", "force"])
@pytest.mark.parametrize(("kind", "reason"), REFUSED)
def test_a_snapshot_target_that_is_no_regular_file_is_refused_before_probing_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_probe: None, kind: str, reason: str, force: bool
) -> None:
    # --force overwrites a regular file, and only a regular file: the writer judges the name itself, so a symbolic
    # link is not followed to the file it points to.
    with target(kind, tmp_path) as path:
        before = state(path)
        assert main(["snapshot", "-o", str(path), *(["--force"] if force else [])]) == 2
        assert state(path) == before
    if kind == "folder":
        problem = f"{path} is a folder: name the snapshot file to write"
    else:
        problem = f"{path} {reason.format(folder=tmp_path)}; leave out -o to write to standard output"
    assert capsys.readouterr() == ("", f"pytest-cudnn: error: {problem}\n")


def test_a_trailing_slash_names_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_probe: None) -> None:
    assert main(["snapshot", "-o", f"{tmp_path}/new/"]) == 2
    assert (
        capsys.readouterr().err
        == f"pytest-cudnn: error: {tmp_path}/new/ is a folder: name the snapshot file to write\n"
    )


def test_a_custom_tensorflow_version_is_snapshotted_so_that_it_replays(host: SimHost) -> None:
    # A locally built TensorFlow can carry a version that is not PEP 440: the probe says so and records none.
    host.add_tensorflow("2.15.0-custom", "tensorflow-2.15.0-linux.py")
    snap = host.root / "snap.json"
    completed = host.run("snapshot", "-o", str(snap))
    assert completed.returncode == 0
    assert completed.stderr.splitlines() == [f"pytest-cudnn: wrote {snap}"]
    tensorflow = load_snapshot(snap).tensorflow
    assert tensorflow.version is None
    assert "'2.15.0-custom', which is not a PEP 440 version" in (tensorflow.reason or "")


def test_a_snapshot_that_would_not_replay_is_written_with_a_warning_naming_the_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Should a probe ever record a value replay refuses, the snapshot is still written, and the value named.
    env = EnvBuilder.healthy().build()
    odd = dataclasses.replace(
        env,
        frameworks=tuple(
            dataclasses.replace(b, build_info=dataclasses.replace(env.tensorflow, version="2.15.0-custom"))
            if b.build_info is not None
            else b
            for b in env.frameworks
        ),
    )
    monkeypatch.setattr(cli, "_probe", lambda args: (odd, None))
    snap = tmp_path / "snap.json"
    assert main(["snapshot", "-o", str(snap)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "pytest-cudnn: warning: --env will refuse this snapshot until its value is fixed: "
        "frameworks[0].build_info.version: "
        "expected a PEP 440 version such as '2.18.0', got '2.15.0-custom'",
        f"pytest-cudnn: wrote {snap}",
    ]
    assert tensorflow_json(json.loads(snap.read_text()))["version"] == "2.15.0-custom"


def test_framework_asks_about_one_framework(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_probe: None) -> None:
    # A healthy TensorFlow 2.18 beside a CPU-only torch: the host as a whole can run GPU work (TensorFlow can).
    env = EnvBuilder.healthy().with_torch(version="2.15.0+cpu", cuda=None).build()
    snap = tmp_path / "snap.json"
    snap.write_text(env.dumps(), encoding="utf-8")
    assert main(["--env", str(snap)]) == 0
    assert main(["--env", str(snap), "--framework", "torch"]) == 1
    assert "Verdict: PyTorch 2.15.0+cpu: it will not use the GPU" in capsys.readouterr().out
    assert main(["--env", str(snap), "--framework", "jax", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == {
        "ok": False,
        "summary": "JAX (jax) is not installed on this Python path",
    }
    with pytest.raises(SystemExit) as exit_:
        main(["--env", str(snap), "--framework", "pytorch"])
    assert exit_.value.code == 2
    assert "invalid choice: 'pytorch'" in capsys.readouterr().err


def test_the_json_says_for_each_framework_whether_it_can_run(
    capsys: pytest.CaptureFixture[str], no_probe: None
) -> None:
    assert main(["--env", str(EXAMPLES / "mixed-torch-jax-tf.json"), "--json"]) == 1
    said = {
        entry["name"]: (entry["version"], entry["ok"]) for entry in json.loads(capsys.readouterr().out)["frameworks"]
    }
    assert said == {
        "torch": ("2.10.0+cu128", True),
        "jax": ("0.10.2", True),
        "tensorflow": ("2.21.0", False),
    }


def test_the_usage_names_every_option_of_every_command() -> None:
    # The hand-written usage lines (cli._USAGE, shown by --help and on the CLI page) drifted once: snapshot's line
    # lacked --redact. Each command's line names each of its options.
    import argparse

    parser = cli._parser()
    [commands] = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    usage = {line.split()[1] if line.split()[1] in commands.choices else "doctor": line
             for line in (text.strip() for text in cli._USAGE.splitlines()) if "--version" not in line}  # fmt: skip
    assert set(usage) == set(commands.choices)
    for name, sub in commands.choices.items():
        for action in sub._actions:
            if action.option_strings and "--help" not in action.option_strings:
                named = [
                    o for o in action.option_strings if re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", usage[name])
                ]
                assert named, f"{name}: {action.option_strings} not in its usage line {usage[name]!r}"


@pytest.mark.parametrize(
    ("given", "first"),
    [
        ("cudnn", "cudnn-incomplete"),  # a word of the codes: those codes, not the first of the catalogue
        ("tf", "tensorflow-cudart-not-found"),  # what users call TensorFlow
        ("no_drivr", "no-driver"),  # spelt alike
    ],
)
def test_explain_suggests_the_codes_a_word_or_a_prefix_names(
    given: str, first: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["explain", given])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"did you mean {first}" in err, err
    assert "known codes: no-driver, driver-module-mismatch" not in err


@pytest.mark.parametrize("command", ["explain no-driver", "doctor", "snapshot"])
def test_an_unknown_argument_is_said_with_the_commands_own_usage(
    command: str, capsys: pytest.CaptureFixture[str], no_probe: None
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([*command.split(), "extra-word" if command.startswith("explain") else "--bogus"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    name = command.split(maxsplit=1)[0]
    assert err.startswith(f"usage: pytest-cudnn {name}"), err
    assert f"pytest-cudnn {name}: error: unrecognized arguments:" in err


@pytest.mark.parametrize("command", ["doctor", "snapshot"])
def test_doctor_and_snapshot_help_say_what_they_do_and_their_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "exit codes: 0 " in out
    assert "130 interrupted" in out


def test_a_snapshot_written_meanwhile_at_the_name_is_never_overwritten_without_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As when three `snapshot -o race.json` run at once: the name was free when each looked, and another wrote it
    # while this one probed. Each used to say "wrote"; the last rename won.
    target = tmp_path / "race.json"

    def probe_then_another_writes(args: object) -> Any:
        target.write_text("the other snapshot\n")
        return load_snapshot(HEALTHY), None

    monkeypatch.setattr(cli, "_probe", probe_then_another_writes)
    assert main(["snapshot", "-o", str(target)]) == 2
    assert capsys.readouterr().err == f"pytest-cudnn: error: {target} exists; use --force to overwrite it\n"
    assert target.read_text() == "the other snapshot\n"
    assert [path.name for path in tmp_path.iterdir()] == ["race.json"]  # no temporary file left behind
    assert main(["snapshot", "-o", str(target), "--force"]) == 0
    assert "the other snapshot" not in target.read_text()


def test_a_redaction_that_would_change_the_findings_is_refused_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two users' homes become one /home/user: two copies of cuDNN would become one path, and the snapshot would
    # replay without the finding it was taken for (field test A2: check before writing).
    b = EnvBuilder.healthy()
    b.cudnn("/home/alice/cudnn/lib/libcudnn.so.9", "9.1.0", 12040, (Via.LD_LIBRARY_PATH,), rank=0)
    b.cudnn("/home/bob/cudnn/lib/libcudnn.so.9", "9.3.0", 12040, (Via.LD_LIBRARY_PATH,), rank=1)
    env = b.build()
    monkeypatch.setattr(cli, "_probe", lambda args: (env, None))
    target = tmp_path / "snap.json"
    assert main(["snapshot", "--redact", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pytest-cudnn: error: --redact: the redacted snapshot would replay to other findings (")
    assert "not library-shadowed" in err
    assert not target.exists()
