"""The probe child's protocol (pytest_cudnn/native/protocol.py): one spelling of each kind of job and of failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pytest_cudnn.environment import Failure
from pytest_cudnn.native import protocol
from pytest_cudnn.native.calls import JOBS

ROOT = Path(__file__).resolve().parent.parent


def test_the_failure_kinds_are_the_protocols() -> None:
    assert [failure.value for failure in Failure] == list(protocol.FAILURES)
    assert len(set(protocol.FAILURES)) == len(protocol.FAILURES)


def test_every_kind_of_job_has_its_function() -> None:
    # mypy holds JOBS to protocol.Runners; this holds the names the child dispatches on to the kinds the protocol
    # lists.
    assert sorted(JOBS) == sorted(protocol.KINDS)


# What the child imports. It starts as `python -I -S` (native/isolation.py) and imports isolation, then calls,
# before its jobs fork: each module it imports is paid once per probe. The protocol's types are for mypy only.
_CHILD = (
    "import sys; sys.path[:0] = sys.argv[1:2];"
    "from pytest_cudnn.native.isolation import child_main; from pytest_cudnn.native import calls;"
    "print(' '.join(sorted(sys.modules)))"
)
_NOT_IN_THE_CHILD = {"typing", "collections", "re", "json", "contextlib", "signal", "subprocess", "enum"}


def test_the_child_imports_no_typing_and_no_collections() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _CHILD, str(ROOT)], capture_output=True, text=True, check=True, timeout=60
    )
    modules = set(done.stdout.split())
    assert {"pytest_cudnn.native.protocol", "pytest_cudnn.native.calls", "ctypes"} <= modules
    assert sorted(modules & _NOT_IN_THE_CHILD) == []
