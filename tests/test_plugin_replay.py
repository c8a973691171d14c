"""Replay (--gpu-env) never loads a library a snapshot names: a snapshot from elsewhere would otherwise run its
code in the pytest process. The libraries here are real: compiled in the session, with a constructor that leaves
a mark when anything loads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_cudnn.environment import Environment, Via

from .envbuilder import EnvBuilder
from .simhost import Compiler
from .test_plugin import snapshot

PLANTED = r"""
#include <stdio.h>

__attribute__((constructor)) static void planted(void) {
    FILE *mark = fopen(MARK, "a");
    if (mark) { fputs("loaded\n", mark); fclose(mark); }
}

int cudaSetDevice(int device) { return 0; }
int cudnnCreate(void **handle) { *handle = (void *)1; return 0; }
int cudnnDestroy(void *handle) { return 0; }
const char *cudnnGetErrorString(int status) { return "CUDNN_STATUS_SUCCESS"; }
"""


pytestmark = pytest.mark.usefixtures("no_probing")


@pytest.fixture
def planted(compiler: Compiler, tmp_path: Path) -> tuple[Environment, Path]:
    """A snapshot whose CUDA runtime and cuDNN are real files on this machine that write ``mark`` when loaded."""
    mark = tmp_path / "loaded.mark"
    source = f"#define MARK {json.dumps(str(mark))}\n{PLANTED}"
    lib = tmp_path / "lib"
    cudart = compiler.shared_library(source, "libcudart.so.12", lib / "libcudart.so.12")
    cudnn = compiler.shared_library(source, "libcudnn.so.9", lib / "libcudnn.so.9")
    builder = EnvBuilder()
    builder.runtime(str(cudart), 12050, (Via.LD_LIBRARY_PATH,))
    builder.cudnn(str(cudnn), "9.3.0", 12050, (Via.LD_LIBRARY_PATH,))
    return builder.build(), mark


HANDLE_TESTS = """
def test_function_handle(cudnn_handle):
    pass

def test_session_handle(cudnn_handle_session):
    pass
"""


def test_the_handle_fixtures_skip_under_replay_and_load_nothing(
    pytester: pytest.Pytester, planted: tuple[Environment, Path]
) -> None:
    env, mark = planted
    path = snapshot(pytester, env)
    pytester.makepyfile(HANDLE_TESTS)
    result = pytester.runpytest("-rs", f"--gpu-env={path}")
    result.assert_outcomes(skipped=2)
    for fixture in ("cudnn_handle", "cudnn_handle_session"):
        result.stdout.fnmatch_lines(
            [
                f"SKIPPED [[]1[]] *: {fixture} needs a live cuDNN, and this run replays the snapshot {path} "
                "(--gpu-env): pytest-cudnn never loads a library named in a snapshot"
            ]
        )
    assert not mark.exists(), "a library named in the snapshot was loaded"


def test_the_handle_fixtures_fail_under_replay_with_require_gpu_and_load_nothing(
    pytester: pytest.Pytester, planted: tuple[Environment, Path]
) -> None:
    env, mark = planted
    pytester.makepyfile(HANDLE_TESTS)
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, env)}", "--require-gpu")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*needs a live cuDNN, * [[]--require-gpu[]]"])
    assert not mark.exists(), "a library named in the snapshot was loaded"


def test_xdist_workers_replay_too(pytester: pytest.Pytester, planted: tuple[Environment, Path]) -> None:
    """Workers take the controller's copy of the snapshot, and replay it the same way."""
    env, mark = planted
    pytester.makepyfile(
        HANDLE_TESTS
        + """
import pynvml

def test_free(gpu, monkeypatch):
    def refuse(*args):
        raise AssertionError("NVML was called under --gpu-env")

    monkeypatch.setattr(pynvml, "nvmlInit", refuse)
    assert gpu.memory_free == gpu.memory_total - 1024**3
"""
    )
    result = pytester.runpytest("-p", "xdist", "-n", "2", "-rs", f"--gpu-env={snapshot(pytester, env)}")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*needs a live cuDNN, and this run replays the snapshot*"])
    assert not mark.exists(), "a library named in the snapshot was loaded"
