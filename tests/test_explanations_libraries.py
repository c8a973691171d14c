"""What ``pytest-cudnn explain CODE`` says for the library codes: the CUDA runtimes, cuDNN, the frameworks, the
loader, wheels and Windows. Every such code has its explanation, each part of it said, its facts sourced, and the
pytest-cudnn commands it asks a user to run are ones the command has. (``tests/test_explanations.py`` holds every
code to an entry; this file holds the library half to its content.)"""

from __future__ import annotations

import re

import pytest

from pytest_cudnn.cli import main
from pytest_cudnn.diagnosis.explanations import explanation
from pytest_cudnn.diagnosis.model import CODES

# The host's codes, explained in the other half of the table: the driver, the GPUs, forward compatibility,
# containers, MIG and the variables that pick devices. Every other code is a library code, so a new one is held
# to an explanation here without this list changing.
HOST_PREFIXES = ("driver-", "forward-compat-", "container-", "cuda-visible-devices-", "mig-")
HOST_CODES = {
    "no-driver",
    "no-gpu",
    "gpu-probe-partial",
    "gpu-memory-low",
    "gpu-unsupported-by-cuda",
    "cuda-runtime-cannot-run",
    "cuda-device-order",
}
LIBRARY_CODES = sorted(code for code in CODES if code not in HOST_CODES and not code.startswith(HOST_PREFIXES))

SUBCOMMANDS = {"doctor", "snapshot", "fleet", "explain"}
# "pytest-cudnn doctor --json": the command, and its words up to the end of that shell command or a comment.
COMMAND = re.compile(r"pytest-cudnn\s+(\S+)([^|;&`)#]*)")


def test_the_library_half_is_the_codes_the_host_half_leaves() -> None:
    assert "cudnn-known-bad" in LIBRARY_CODES
    assert "windows-dll-path-only" in LIBRARY_CODES
    assert not {"no-driver", "mig-no-devices", "driver-too-old-for-cuda"} & set(LIBRARY_CODES)


@pytest.mark.parametrize("code", LIBRARY_CODES)
def test_a_library_code_is_explained_with_every_part_said(code: str) -> None:
    entry = explanation(code)
    assert entry is not None, f"{code} has no explanation"
    assert entry.meaning.strip()
    assert entry.fix.strip()
    assert entry.confirm
    assert all(step.strip() for step in entry.confirm)
    assert entry.sources, f"{code} cites no source"
    for source in entry.sources:
        # "what it says: URL"; the URL is a public https page, never a bare name.
        assert re.search(r"\S: .*https://\S+", source), f"{code}: {source!r} names no https URL"


@pytest.mark.parametrize("code", LIBRARY_CODES)
def test_the_commands_an_explanation_gives_exist(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    entry = explanation(code)
    assert entry is not None
    for step in entry.confirm:
        for command, rest in COMMAND.findall(step):
            assert command in SUBCOMMANDS, f"{code}: {step!r} names no pytest-cudnn command"
            options = re.findall(r"(?<!\S)(--?[a-z][\w-]*)", rest)
            if command == "explain" or not options:
                continue  # explain's options are its own helper's; it has none to hold here
            with pytest.raises(SystemExit):
                main([command, "--help"])
            usage = capsys.readouterr().out
            for option in options:
                assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", usage), (
                    f"{code}: pytest-cudnn {command} has no {option}"
                )
