"""``pytest-cudnn explain CODE``: every finding code explained (what it means, how to confirm it by hand, the fix, the
public sources), rendered as plain printable text or JSON, and the command's answers to a code it does not know."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from pytest_cudnn import cli
from pytest_cudnn.cli import main
from pytest_cudnn.diagnosis.explanations import _HOST, EXPLANATIONS, Explanation, explanation
from pytest_cudnn.diagnosis.model import CODES
from pytest_cudnn.explain import UnknownCode, code_list, explain_text, explanation_json, find_code

# The driver, the GPUs, containers, MIG and the variables that pick devices: the codes _HOST answers for.
HOST_CODES = (
    "no-driver",
    "driver-module-mismatch",
    "driver-not-loaded",
    "driver-error",
    "no-gpu",
    "driver-dropped-gpu",
    "wsl-no-gpu",
    "wsl-libraries-not-on-loader-path",
    "wsl-linux-driver-installed",
    "tegra-host",
    "forward-compat-in-use",
    "forward-compat-unsupported-gpu",
    "forward-compat-unsupported-branch",
    "container-capabilities-missing",
    "container-gpus-hidden",
    "container-toolkit-not-used",
    "gpu-probe-partial",
    "gpu-memory-low",
    "gpu-ecc-uncorrectable",
    "gpu-row-remap-failure",
    "gpu-memory-repair-pending",
    "gpu-compute-prohibited",
    "gpu-exclusive-process",
    "gpu-throttled",
    "gpu-pcie-degraded",
    "gpu-persistence-off",
    "gpu-no-peer-access",
    "driver-too-old-for-cuda",
    "gpu-unsupported-by-cuda",
    "cuda-runtime-cannot-run",
    "cuda-visible-devices-hides-all",
    "cuda-visible-devices-invalid",
    "cuda-visible-devices-mig",
    "mig-no-devices",
    "mig-mode-pending",
    "mig-devices-unused",
    "cuda-device-order",
)

# What a "$ " step may start with: the programs the steps name (a misspelt one, or one that does not exist, fails).
PROGRAMS = frozenset(
    {
        "cat",
        "cuobjdump",
        "docker",
        "dmesg",
        "dpkg",
        "echo",
        "env",
        "file",
        "find",
        "for",  # a shell loop over the variables
        "grep",
        "head",
        "id",
        "ldconfig",
        "ldd",
        "ls",
        "lsmod",
        "lspci",
        "modprobe",
        "namei",
        "nm",
        "nvidia-smi",
        "pip",
        "printenv",
        "tegrastats",
        "pytest",
        "pytest-cudnn",
        "python",
        "python3",
        "readelf",
        "readlink",
        "strings",
        "sudo",
        "where",  # Windows' cmd.exe
    }
)
_URL = re.compile(r"https://\S+")
_ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=\S*")


def _steps(found: Explanation) -> list[tuple[str, str]]:
    """Each "$ " step of ``found`` as (command, comment)."""
    out = []
    for step in found.confirm:
        if step.startswith("$ "):
            command, separator, comment = step[2:].rpartition("  # ")  # the last: a command may hold "  # "
            out.append((command, comment) if separator else (step[2:], ""))
    return out


# Every code -------------------------------------------------------------------------------------------------------
# Parametrized over CODES so each code answers for itself: the codes of the libraries (_LIBRARIES, written beside
# this) fail here, one by one, until their entries land.


@pytest.mark.parametrize("code", list(CODES))
def test_every_code_has_an_explanation(code: str) -> None:
    found = explanation(code)
    assert found is not None, f"{code} has no explanation"
    assert found.meaning.strip()
    assert found.fix.strip()
    assert found.confirm
    assert all(step.strip() for step in found.confirm)
    assert found.sources


@pytest.mark.parametrize("code", list(CODES))
def test_each_source_says_what_and_where(code: str) -> None:
    found = explanation(code)
    assert found is not None, f"{code} has no explanation"
    for source in found.sources:
        urls = _URL.findall(source)
        assert urls, f"{code}: no https URL in {source!r}"
        assert all(urlsplit(url).netloc for url in urls), source
        assert source.index(urls[0]) > 0, f"{code}: a source says what it says before its URL: {source!r}"


def test_no_explanation_for_a_code_that_is_not_one() -> None:
    assert sorted(set(EXPLANATIONS) - set(CODES)) == []
    assert explanation("no-such-code") is None
    assert explanation("NO-DRIVER") is None  # the data is keyed exactly; find_code folds case


def test_the_host_codes_are_those_written_here() -> None:
    assert sorted(_HOST) == sorted(HOST_CODES)
    assert set(HOST_CODES) <= set(CODES)


@pytest.mark.parametrize("code", sorted(EXPLANATIONS))
def test_each_command_step_names_a_real_program_on_one_line(code: str) -> None:
    for command, comment in _steps(EXPLANATIONS[code]):
        assert command, f"{code}: an empty command"
        assert command.strip() == command, f"{code}: {command!r}"
        assert "\n" not in command + comment
        words = command.split()
        while words and _ASSIGNMENT.fullmatch(words[0]):  # VAR=value before the program
            words.pop(0)
        assert words, f"{code}: {command!r} runs nothing"
        assert words[0] in PROGRAMS, f"{code}: {words[0]!r} is not a program the steps know"


@pytest.mark.parametrize("code", HOST_CODES)
def test_each_host_code_shows_a_command_to_paste(code: str) -> None:
    assert _steps(EXPLANATIONS[code]), f"{code}: no command to run by hand"


def test_the_meaning_says_what_the_rule_reads() -> None:
    # The texts name what their rule checks: NVML's code, CUDA's status, the variables and the MIG modes.
    said = {code: EXPLANATIONS[code].meaning for code in HOST_CODES}
    assert "NVML_ERROR_LIB_RM_VERSION_MISMATCH" in said["driver-module-mismatch"]
    assert "NVML_ERROR_DRIVER_NOT_LOADED" in said["driver-not-loaded"]
    assert "35" in said["no-driver"]
    assert "version 0" in said["no-driver"]
    assert "804" in said["forward-compat-unsupported-gpu"]
    assert "compute" in said["container-capabilities-missing"]
    assert "utility" in said["container-capabilities-missing"]
    assert "void" in said["container-gpus-hidden"]
    assert "none" in said["container-gpus-hidden"]
    assert "10%" in said["gpu-memory-low"]
    assert "PCI_BUS_ID" in said["cuda-device-order"]
    assert "570" in said["mig-devices-unused"]
    assert "R470" in said["cuda-visible-devices-mig"]


# The text ---------------------------------------------------------------------------------------------------------


def _sections(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(" ")]


@pytest.mark.parametrize("code", HOST_CODES)
def test_explain_text_has_its_sections_in_order(code: str) -> None:
    text = explain_text(code)
    assert _sections(text) == [f"{code}: {CODES[code]}", "Meaning", "Confirm by hand", "Fix", "Sources"]
    assert text.endswith("\n")
    assert not text.endswith("\n\n")


@pytest.mark.parametrize("code", HOST_CODES)
def test_explain_text_wraps_prose_and_keeps_commands_and_urls_whole(code: str) -> None:
    width = 80
    text = explain_text(code, width=width)
    for line in text.splitlines()[1:]:  # the first, the code and its summary, is a title: one line
        if len(line) > width:
            # Only a command (pasted whole) or a word longer than the line (a URL) may run past the width.
            assert line.lstrip().startswith("$ ") or max(map(len, line.split())) > width - 8, line
    for command, _ in _steps(EXPLANATIONS[code]):
        assert f"  $ {command}\n" in text
    for source in EXPLANATIONS[code].sources:
        for url in _URL.findall(source):
            assert url in text  # never broken across lines


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("$ nvidia-smi -L", ["  $ nvidia-smi -L"]),
        ("$ nvidia-smi -L  # lists each GPU", ["  $ nvidia-smi -L", "      # lists each GPU"]),
        ("$ echo 'a  # b'  # the last comment", ["  $ echo 'a  # b'", "      # the last comment"]),
        ("look at the first lines", ["  - look at the first lines"]),
    ],
)
def test_a_step_is_a_command_with_its_comment_or_prose(
    monkeypatch: pytest.MonkeyPatch, step: str, expected: list[str]
) -> None:
    monkeypatch.setitem(EXPLANATIONS, "no-gpu", Explanation("m", (step,), "f", ("s: https://example.org/a",)))
    lines = explain_text("no-gpu").splitlines()
    start = lines.index("Confirm by hand") + 1
    assert lines[start : start + len(expected)] == expected


def test_a_long_comment_wraps_under_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    step = "$ nvidia-smi  # " + " ".join(["word"] * 40)
    monkeypatch.setitem(EXPLANATIONS, "no-gpu", Explanation("m", (step,), "f", ("s: https://example.org/a",)))
    lines = explain_text("no-gpu", width=60).splitlines()
    start = lines.index("Confirm by hand") + 1
    comment = lines[start + 1 : lines.index("Fix") - 1]
    assert len(comment) > 1
    assert all(line.startswith("      # ") and len(line) <= 60 for line in comment)


def test_explain_text_makes_every_line_printable(monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = Explanation(
        "a \x1b[2Jcleared screen\u202e", ("$ echo \x1b]0;title\x07",), "fix\rit", ("s\x1b[31m: https://example.org/a",)
    )
    monkeypatch.setitem(EXPLANATIONS, "no-gpu", hostile)
    text = explain_text("no-gpu")
    assert all(line.isprintable() for line in text.splitlines())
    assert "\\x1b[2J" in text
    assert "\\u202e" in text
    assert "\\r" in text


def test_a_code_without_an_explanation_yet_still_shows_its_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(EXPLANATIONS, "no-gpu")
    text = explain_text("no-gpu")
    assert text.splitlines()[0] == f"no-gpu: {CODES['no-gpu']}"
    assert "no explanation" in text


@pytest.mark.parametrize(
    ("given", "code"),
    [
        ("no-driver", "no-driver"),
        ("NO-DRIVER", "no-driver"),
        ("  Mig-No-Devices\n", "mig-no-devices"),
    ],
)
def test_a_code_is_found_whatever_its_case(given: str, code: str) -> None:
    assert find_code(given) == code


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("no-drivr", "no-driver"),
        ("mig-no-device", "mig-no-devices"),
        ("cuda_visible_devices_mig", "cuda-visible-devices-mig"),
    ],
)
def test_an_unknown_code_suggests_the_closest(given: str, suggested: str) -> None:
    with pytest.raises(UnknownCode) as raised:
        find_code(given)
    assert raised.value.code == given
    assert suggested in raised.value.suggestions
    assert len(raised.value.suggestions) <= 3


def test_an_unknown_code_far_from_any_suggests_none() -> None:
    with pytest.raises(UnknownCode) as raised:
        find_code("zzzz")
    assert raised.value.suggestions == ()


def test_the_code_list_has_one_line_per_code_with_its_summary() -> None:
    lines = code_list().splitlines()
    assert len(lines) == len(CODES)
    for line, (code, summary) in zip(lines, CODES.items(), strict=True):
        assert line.startswith(code + " ")
        assert line.endswith(summary)
    # The summaries start in one column.
    assert len({line.index(summary) for line, summary in zip(lines, CODES.values(), strict=True)}) == 1


def test_the_json_is_the_explanation_as_a_dict() -> None:
    document = explanation_json("driver-not-loaded")
    found = EXPLANATIONS["driver-not-loaded"]
    assert document == {
        "schema": "pytest-cudnn/explanation",
        "schema_version": 1,
        "code": "driver-not-loaded",
        "summary": CODES["driver-not-loaded"],
        "meaning": found.meaning,
        "confirm": list(found.confirm),
        "fix": found.fix,
        "sources": list(found.sources),
    }
    assert json.loads(json.dumps(document)) == document


# The command, in this process -------------------------------------------------------------------------------------


def test_explain_prints_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "No-Driver"]) == 0
    out, err = capsys.readouterr()
    assert out == explain_text("no-driver")
    assert err == ""


def test_explain_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--json", "mig-mode-pending"]) == 0
    assert json.loads(capsys.readouterr().out) == explanation_json("mig-mode-pending")


def test_explain_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--list"]) == 0
    assert capsys.readouterr().out == code_list()


def test_explain_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--list", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "pytest-cudnn/codes"
    assert [entry["code"] for entry in document["codes"]] == list(CODES)
    assert all(entry["summary"] == CODES[entry["code"]] for entry in document["codes"])
    assert all(entry["explained"] is (entry["code"] in EXPLANATIONS) for entry in document["codes"])


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["explain", "no-drivr"], ["'no-drivr'", "did you mean no-driver?", "pytest-cudnn explain --list"]),
        (["explain", "zzzz"], ["'zzzz'", "known codes: no-driver, driver-module-mismatch", "explain --list"]),
        (["explain"], ["name a finding code", "explain --list"]),
        (["explain", "no-driver", "--list"], ["a CODE or --list, not both"]),
        (["explain", "\x1b[2Jx"], ["'\\x1b[2Jx'"]),
    ],
)
def test_explain_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], said: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: pytest-cudnn explain")
    for text in said:
        assert text in err
    assert "\x1b" not in err
    assert "Traceback" not in err


# The command, in a child process ----------------------------------------------------------------------------------


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_cudnn", *args], capture_output=True, text=True, check=False, timeout=60
    )


@pytest.mark.e2e
def test_the_command_explains_a_known_code() -> None:
    done = _run("explain", "no-driver")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert _sections(done.stdout) == [
        f"no-driver: {CODES['no-driver']}",
        "Meaning",
        "Confirm by hand",
        "Fix",
        "Sources",
    ]
    assert "$ nvidia-smi" in done.stdout


@pytest.mark.e2e
def test_the_command_refuses_an_unknown_code_naming_the_known_ones() -> None:
    done = _run("explain", "not-a-code")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "'not-a-code'" in done.stderr
    assert "known codes: no-driver" in done.stderr
    assert "pytest-cudnn explain --list" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.e2e
def test_the_command_lists_the_codes() -> None:
    done = _run("explain", "--list")
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == list(CODES)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("", "an empty finding code"),
        ("   ", "an empty finding code"),
        ("x" * 150, "unknown finding code '" + "x" * 100 + "' (its first 100 of 150 characters)"),
    ],
)
def test_an_empty_or_long_code_is_named_for_what_it_is(given: str, said: str) -> None:
    with pytest.raises(UnknownCode) as raised:
        find_code(given)
    assert str(raised.value).startswith(said)


# "pytest-cudnn doctor --json": the command, and its words up to the end of that shell command or a comment.
_PYTEST_CUDNN = re.compile(r"pytest-cudnn\s+(\S+)([^|;&`)#]*)")


@pytest.mark.parametrize("code", list(CODES))
def test_the_pytest_cudnn_commands_an_explanation_gives_exist(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Each pytest-cudnn command a step asks for is one the CLI has, with options that command takes.
    entry = explanation(code)
    assert entry is not None
    for shell, _ in _steps(entry):
        for command, rest in _PYTEST_CUDNN.findall(shell):
            assert command in cli._COMMANDS, f"{code}: {shell!r} names no pytest-cudnn command"
            options = re.findall(r"(?<!\S)(--?[a-z][\w-]*)", rest)
            if not options:
                continue
            with pytest.raises(SystemExit):
                main([command, "--help"])
            usage = capsys.readouterr().out
            for option in options:
                assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", usage), (
                    f"{code}: pytest-cudnn {command} has no {option}"
                )
