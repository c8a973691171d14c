"""How a probe failed, as a machine-readable kind: each answer from the isolation layer says whether the library
could not be loaded, crashed, hung, is not the library its name says, or gave no answer at all."""

from __future__ import annotations

import marshal
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_cudnn.environment import Failure, State
from pytest_cudnn.native.isolation import _MAX_OUTPUT, Child, ProbeFailure, _answer, _collect
from pytest_cudnn.probing.host import ProbeOptions, probe_environment

from .simhost import Compiler, cudart_source, cudnn_source

JOB = {"kind": "cudart", "path": "/opt/lib/libcudart.so.12"}


def exited(code: int) -> int:
    return code << 8  # a wait status as waitpid(2) gives it (WIFEXITED, WEXITSTATUS)


def killed(number: int) -> int:
    return number  # WIFSIGNALED, WTERMSIG


@pytest.mark.parametrize(
    ("status", "result", "timed_out", "failure"),
    [
        pytest.param(exited(0), marshal.dumps({"version_raw": 12020}), None, None, id="an answer"),
        pytest.param(
            exited(0), marshal.dumps({"error": "x", "failure": "unloadable"}), None, "unloadable", id="its own kind"
        ),
        pytest.param(killed(signal.SIGABRT), b"", None, "crashed", id="aborted"),
        pytest.param(killed(signal.SIGSEGV), b"", None, "crashed", id="segfault"),
        pytest.param(killed(signal.SIGKILL), b"", 2.0, "hung", id="killed at its timeout"),
        pytest.param(exited(0), b"", 2.0, "hung", id="timed out"),
        pytest.param(exited(0), b"", None, "no-answer", id="silent exit"),
        pytest.param(exited(3), b"", None, "no-answer", id="exit status without an answer"),
        pytest.param(exited(0), b"\x00garbage", None, "no-answer", id="unreadable answer"),
        pytest.param(exited(0), marshal.dumps([1, 2]), None, "no-answer", id="not a mapping"),
    ],
)
def test_a_grandchild_ending_is_classified(
    status: int, result: bytes, timed_out: float | None, failure: str | None
) -> None:
    answer = _answer(JOB, status, result, b"", timed_out)
    assert answer.get("failure") == failure
    assert ("error" in answer) == (failure is not None)


@pytest.mark.parametrize(
    ("problem", "failure", "timed_out"),
    [
        (None, "no-answer", False),
        ("the probe process exited with status 1: boom", "no-answer", False),
        ("the probe process took longer than 5 s and was stopped", "hung", True),
    ],
)
def test_a_job_the_child_never_answered_is_classified(problem: str | None, failure: str, timed_out: bool) -> None:
    answered = marshal.dumps((7, {"version_raw": 12020}))
    results = _collect({3: JOB, 7: JOB}, answered, problem, timed_out=timed_out)
    assert results[7] == {"version_raw": 12020}  # by the job's id, whatever its place
    assert results[3]["failure"] == failure
    assert results[3]["error"].startswith(f"{JOB['path']}: ")


# Each builder plants one file in a folder and returns (job kind, the path to probe).
Builder = Callable[[Path, Compiler], tuple[str, Path]]


def corrupt(folder: Path, compiler: Compiler) -> tuple[str, Path]:
    path = folder / "libcudart.so.12"
    path.write_bytes(b"\x7fELF" + os.urandom(4092))
    return "cudart", path


def truncated(folder: Path, compiler: Compiler) -> tuple[str, Path]:
    whole = compiler.shared_library(cudart_source(12020), "libcudart.so.12", folder / "whole.so")
    path = folder / "libcudart.so.12"
    path.write_bytes(whole.read_bytes()[:2000])
    return "cudart", path


def symlink_loop(folder: Path, compiler: Compiler) -> tuple[str, Path]:
    path = folder / "libcudnn.so.8"
    path.symlink_to(path)
    return "cudnn", path


def a_folder(folder: Path, compiler: Compiler) -> tuple[str, Path]:
    path = folder / "libcudart.so.12"
    path.mkdir()
    return "cudart", path


def another_library(folder: Path, compiler: Compiler) -> tuple[str, Path]:
    return "cudart", compiler.shared_library("int unrelated(void) { return 0; }\n", "x", folder / "libcudart.so.12")


def another_library_as_cudnn(folder: Path, compiler: Compiler) -> tuple[str, Path]:
    return "cudnn", compiler.shared_library("int unrelated(void) { return 0; }\n", "x", folder / "libcudnn.so.7")


def behaving(behaviour: str) -> Builder:
    def build(folder: Path, compiler: Compiler) -> tuple[str, Path]:
        path = folder / "libcudart.so.12"
        return "cudart", compiler.shared_library(cudart_source(12020, behaviour), path.name, path)

    return build


def whole_cudnn7(folder: Path, compiler: Compiler) -> tuple[str, Path]:
    path = folder / "libcudnn.so.7"
    return "cudnn", compiler.shared_library(cudnn_source((7, 6, 5), 10010), path.name, path)


@pytest.mark.parametrize(
    ("build", "failure"),
    [
        pytest.param(corrupt, Failure.UNLOADABLE, id="corrupt"),
        # The loader maps the segments the header promises, past the end of the file, and dies of SIGBUS.
        pytest.param(truncated, Failure.CRASHED, id="truncated"),
        pytest.param(symlink_loop, Failure.UNLOADABLE, id="symlink loop"),
        pytest.param(a_folder, Failure.UNLOADABLE, id="a folder"),
        pytest.param(another_library, Failure.NOT_THE_LIBRARY, id="not a runtime"),
        pytest.param(another_library_as_cudnn, Failure.NOT_THE_LIBRARY, id="not a cudnn"),
        pytest.param(behaving("hang"), Failure.HUNG, id="hang"),
        pytest.param(behaving("abort"), Failure.CRASHED, id="abort"),
        pytest.param(behaving("segfault"), Failure.CRASHED, id="segfault"),
        pytest.param(behaving("normal"), None, id="a runtime"),
        pytest.param(whole_cudnn7, None, id="a cudnn"),
    ],
)
def test_each_way_a_library_fails_has_its_kind(
    tmp_path: Path, compiler: Compiler, build: Builder, failure: Failure | None
) -> None:
    kind, path = build(tmp_path, compiler)
    child = Child(dict(os.environ))
    try:
        answer = child.run({0: {"kind": kind, "path": str(path)}}, job_timeout=1, total_timeout=60)[0]
    finally:
        child.close()
    assert answer.get("failure") == (failure.value if failure else None), answer
    if failure is Failure.UNLOADABLE:
        assert answer["error"].startswith(f"{path}: OSError: {path}")  # the loader's own words, naming the file


@pytest.mark.e2e
def test_a_child_that_cannot_start_gives_no_answer(tmp_path: Path) -> None:
    env = probe_environment(ProbeOptions(python=str(tmp_path / "no-python")))
    assert env.cuda_runtimes, "this machine has a CUDA runtime (field notes): its probe must say it got no answer"
    assert {(r.state, r.failure) for r in env.cuda_runtimes} == {(State.ERROR, Failure.NO_ANSWER)}


@pytest.mark.e2e
def test_a_child_started_by_the_caller_is_the_one_used_and_is_closed() -> None:
    # The plugin and the doctor start the child before importing the probe; the probe must use that one (its
    # interpreter, /bin/false here, is the one that answers) and leave no process behind.
    child = Child(dict(os.environ), python="/bin/false")
    env = probe_environment(ProbeOptions(), child=child)
    assert child.process.returncode is not None
    assert {(r.state, r.failure) for r in env.cuda_runtimes} == {(State.ERROR, Failure.NO_ANSWER)}


@pytest.mark.e2e
def test_a_child_that_could_not_start_is_reported_per_job() -> None:
    env = probe_environment(ProbeOptions(), child=ProbeFailure("cannot start /opt/python: No such file"))
    assert env.cuda_runtimes
    assert all(str(r.reason).endswith("cannot start /opt/python: No such file") for r in env.cuda_runtimes)


@pytest.mark.e2e
def test_a_child_that_exits_at_once_gives_no_answer() -> None:
    env = probe_environment(ProbeOptions(python="/bin/false"))
    assert {(r.state, r.failure) for r in env.cuda_runtimes} == {(State.ERROR, Failure.NO_ANSWER)}


def test_a_child_past_the_total_timeout_leaves_its_unanswered_jobs_hung(tmp_path: Path, compiler: Compiler) -> None:
    _, path = behaving("hang")(tmp_path, compiler)
    child = Child(dict(os.environ))
    try:
        answer = child.run({0: {"kind": "cudart", "path": str(path)}}, job_timeout=600, total_timeout=1)[0]
    finally:
        child.close()
    assert answer["failure"] == "hung"


def test_the_environment_carries_the_kind(tmp_path: Path, compiler: Compiler) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    corrupt(folder, compiler)
    env = probe_environment(environ={"LD_LIBRARY_PATH": str(folder)})
    [runtime] = [r for r in env.cuda_runtimes if r.path.startswith(str(folder))]
    assert (runtime.state, runtime.failure) == (State.ERROR, Failure.UNLOADABLE)
    healthy = [r for r in env.cuda_runtimes if not r.path.startswith(str(folder))]
    assert all(r.failure is None for r in healthy if r.state is State.FOUND)


@pytest.mark.parametrize(
    ("text", "own", "missing"),
    [
        pytest.param(
            "Could not load library libcudnn_ops_infer.so.8. Error: libnvrtc.so: cannot open shared object file: "
            "No such file or directory\n",
            (),
            ["libnvrtc.so"],
            id="cuDNN 8.7 names the dependency of its sub-library",
        ),
        pytest.param(
            "libcublasLt.so.11: cannot open shared object file: No such file or directory",
            ("libcudnn.so.8",),
            ["libcublasLt.so.11"],
            id="dlerror for a front library's own DT_NEEDED",
        ),
        pytest.param(
            "Could not load library libcudnn_graph.so.9. Error: /opt/lib/libcudnn_graph.so.9: cannot open shared "
            "object file: No such file or directory",
            (),
            ["libcudnn_graph.so.9"],
            id="a path is reduced to its file name",
        ),
        pytest.param(
            "/opt/my libs/libcudnn.so.8: cannot open shared object file: Too many levels of symbolic links",
            ("libcudnn.so.8",),
            [],
            id="the library itself is not its own dependency",
        ),
        pytest.param(
            "a.so.1: cannot open shared object file: No such file or directory\n"
            "b.so.2: cannot open shared object file: No such file or directory\n"
            "a.so.1: cannot open shared object file: No such file or directory",
            (),
            ["a.so.1", "b.so.2"],
            id="each once, in order",
        ),
        pytest.param("/opt/lib/libcudart.so.12: invalid ELF header", (), [], id="a damaged file names nothing"),
        pytest.param("Invalid handle. Cannot load symbol cudnnCreate", (), [], id="cuDNN 9's missing symbol"),
        pytest.param(": cannot open shared object file", (), [], id="no name at all"),
        pytest.param("", (), [], id="silence"),
    ],
)
def test_missing_libraries_are_read_from_what_the_loader_and_the_library_said(
    text: str, own: tuple[str, ...], missing: list[str]
) -> None:
    from pytest_cudnn.native.calls import missing_libraries

    assert missing_libraries(text, own) == missing


def test_a_crash_keeps_the_dependency_named_anywhere_in_what_was_printed() -> None:
    # The error keeps only the tail of the output; the name is read from all of it.
    output = b"Could not load library libcudnn_ops_infer.so.8. Error: libnvrtc.so: cannot open shared object file\n"
    answer = _answer(
        {"kind": "cudnn", "path": "/opt/libcudnn.so.8"}, killed(signal.SIGABRT), b"", output + b"x" * 5000, None
    )
    assert answer["missing"] == ["libnvrtc.so"]
    assert "libnvrtc.so" not in answer["output"]


def test_an_answer_cut_at_the_limit_says_so() -> None:
    """NVML's answer for a host of some 3,000 GPUs or more is longer than the probe reads: it was no silent exit."""
    gpus = [{"index": index, "uuid": f"GPU-{index:08d}-aaaa-bbbb-cccc-000000000000"} for index in range(50_000)]
    whole = marshal.dumps({"gpus": gpus})
    assert len(whole) > _MAX_OUTPUT
    cut = whole[:_MAX_OUTPUT]
    answer = _answer(JOB, exited(0), cut, b"", None)
    assert answer["failure"] == "no-answer"
    assert answer["error"] == f"{JOB['path']}: its answer is longer than the 1,048,576 bytes read"
