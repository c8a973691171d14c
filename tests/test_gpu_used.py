"""Issue 22: ``@pytest.mark.uses_gpu`` and ``--assert-gpu-used``: a test that ran on the CPU fails, naming the GPU it
was given. Simulated hosts: the stand-in libcuda keeps each device's primary context per process (read by
cuDevicePrimaryCtxGetState) and logs every context to $SIMHOST_CONTEXT_LOG, which the stand-in NVML lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_cudnn._run.gpu_use import NOT_USED, UNKNOWN, USED, USED_EARLIER, ContextState, judge

from .envbuilder import EnvBuilder
from .simhost import SimGpu, SimHost
from .test_mig_hosts import BIG, H100

GPU0 = SimGpu("NVIDIA H100 80GB HBM3", "GPU-10000000-0000-0000-0000-000000000000", "00000000:18:00.0", (9, 0))
GPU1 = SimGpu("NVIDIA H100 80GB HBM3", "GPU-20000000-0000-0000-0000-000000000000", "00000000:2A:00.0", (9, 0))

# What the tests' own code does with the stand-in libcuda (found through LD_LIBRARY_PATH, as a framework finds it).
HELPERS = """
    import ctypes, os

    def maps():
        with open("/proc/self/maps") as f:
            return f.read()

    def driver(init=True):
        cuda = ctypes.CDLL("libcuda.so.1")
        if init:
            assert cuda.cuInit(0) == 0
        return cuda

    def context(ordinal=0):
        ctx = ctypes.c_void_p()
        assert driver().cuDevicePrimaryCtxRetain(ctypes.byref(ctx), ordinal) == 0
"""

SUITE = {
    "helpers.py": HELPERS,
    "test_use.py": """
        import pytest
        from helpers import context, driver, maps

        @pytest.mark.uses_gpu
        def test_a_cpu_only():
            assert sum(range(10)) == 45

        @pytest.mark.uses_gpu
        def test_b_loaded_not_initialised():
            # The check after test_a loaded nothing into this process.
            assert "libcuda" not in maps()
            driver(init=False)

        @pytest.mark.uses_gpu
        def test_c_initialised_no_context():
            driver()

        @pytest.mark.uses_gpu
        def test_d_makes_a_context(gpu):
            context(gpu.cuda_index)

        @pytest.mark.uses_gpu
        def test_e_after_the_context():
            pass

        def test_f_unchecked(gpu):
            pass
    """,
}


def _host(host: SimHost, gpus: tuple[SimGpu, ...] = (GPU0,)) -> SimHost:
    host.add_driver(list(gpus), version="550.54.15", cuda_version=12040)
    host.add_stack("opt/cuda/lib64", 12040)
    return host


def _contexts(log: Path) -> list[tuple[int, int]]:
    if not log.exists():
        return []
    return [(int(pid), int(dev)) for pid, dev in (line.split() for line in log.read_text().splitlines())]


def test_a_marked_test_fails_when_its_process_made_no_context_on_its_gpu(host: SimHost) -> None:
    _host(host)
    log, report, summary = host.root / "contexts.log", host.root / "report.json", host.root / "summary.md"
    completed = host.pytest(
        "-p",
        "no:xdist",
        "-v",
        f"--gpu-report={report}",
        files=SUITE,
        extra_env={"SIMHOST_CONTEXT_LOG": str(log), "GITHUB_STEP_SUMMARY": str(summary)},
    )
    out = completed.stdout + completed.stderr
    assert completed.returncode == 1, out
    assert "3 failed, 3 passed" in out, out
    gpu = f"GPU 0 NVIDIA H100 80GB HBM3 ({GPU0.uuid})"
    assert f"{gpu} was not used: libcuda.so.1 was never loaded in the test's process [uses_gpu]" in out
    assert f"{gpu} was not used: libcuda.so.1 is loaded but the CUDA driver was never initialised (cuInit)" in out
    assert f"{gpu} was not used: the test's process holds no active primary CUDA context on it" in out
    # The only context is test_d's: the plugin made none.
    assert len(_contexts(log)) == 1, _contexts(log)
    tests = {t["nodeid"].split("::")[-1]: t for t in json.loads(report.read_text())["tests"]}
    assert {name: t.get("gpu_used") for name, t in tests.items() if "gpu_used" in t} == {
        "test_a_cpu_only": NOT_USED,
        "test_b_loaded_not_initialised": NOT_USED,
        "test_c_initialised_no_context": NOT_USED,
        "test_d_makes_a_context": USED,
        "test_e_after_the_context": USED_EARLIER,
    }
    assert "used earlier in this process" in tests["test_e_after_the_context"]["gpu_use"]
    assert "pytest-cudnn: 3 tests did not use their GPU (fell back to the CPU)" in out
    assert "3 tests did not use their GPU (fell back to the CPU)" in summary.read_text()


def test_assert_gpu_used_checks_every_test_given_the_gpu_fixture(host: SimHost) -> None:
    _host(host)
    log = host.root / "contexts.log"
    files = {
        "helpers.py": HELPERS,
        "test_switch.py": """
            from helpers import context

            def test_gpu_on_the_cpu(gpu):
                pass

            def test_no_gpu_fixture():
                pass

            def test_gpu_used(gpu):
                context(gpu.cuda_index)
        """,
    }
    env = {"SIMHOST_CONTEXT_LOG": str(log)}
    completed = host.pytest("-p", "no:xdist", "--assert-gpu-used", files=files, extra_env=env)
    out = completed.stdout + completed.stderr
    assert "1 failed, 2 passed" in out, out
    assert " test_gpu_on_the_cpu _" in out
    assert " test_gpu_used _" not in out
    assert "GPU 0 NVIDIA H100 80GB HBM3" in out
    # Without the switch nothing is checked; the ini key turns it on as the option does.
    assert "3 passed" in host.pytest("-p", "no:xdist", files=files, extra_env=env).stdout
    (host.root / "suite" / "pytest.ini").write_text("[pytest]\nassert_gpu_used = true\n")
    assert "1 failed, 2 passed" in host.pytest("-p", "no:xdist", files=files, extra_env=env).stdout


def test_under_xdist_each_worker_is_judged_on_its_own_gpu(host: SimHost) -> None:
    _host(host, (GPU0, GPU1))
    log = host.root / "contexts.log"
    files = {
        "helpers.py": HELPERS,
        "test_workers.py": """
            import os
            import pytest
            from helpers import context

            @pytest.mark.uses_gpu
            def test_only_gw0_uses_its_gpu(gpu):
                if os.environ["PYTEST_XDIST_WORKER"] == "gw0":
                    context(gpu.cuda_index)
        """,
    }
    completed = host.pytest(
        "-p", "xdist", "-n", "2", "--dist", "each", files=files, extra_env={"SIMHOST_CONTEXT_LOG": str(log)}
    )
    out = completed.stdout + completed.stderr
    assert "1 failed, 1 passed" in out, out
    assert f"GPU 1 NVIDIA H100 80GB HBM3 ({GPU1.uuid}) was not used" in out
    assert f"({GPU0.uuid}) was not used" not in out
    assert "pytest-cudnn: 1 test did not use its GPU (fell back to the CPU)" in out  # counted by the controller
    assert [dev for _, dev in _contexts(log)] == [0]  # gw0's own, on its CUDA device 0; none by the plugin


def test_a_mig_device_is_judged_as_the_device_the_test_was_given(host: SimHost) -> None:
    host.add_driver([H100], version="550.54.15", cuda_version=12040)
    host.add_stack("opt/cuda/lib64", 12040)
    log = host.root / "contexts.log"
    files = {
        "helpers.py": HELPERS,
        "test_mig.py": """
            import pytest
            from helpers import context

            @pytest.mark.uses_gpu
            def test_a_on_the_cpu(gpu):
                assert gpu.mig is not None

            @pytest.mark.uses_gpu
            def test_b_on_the_mig_device(gpu):
                context(gpu.cuda_index)
        """,
    }
    env = {"SIMHOST_CONTEXT_LOG": str(log), "CUDA_VISIBLE_DEVICES": BIG.uuid}
    completed = host.pytest("-p", "no:xdist", files=files, extra_env=env)
    out = completed.stdout + completed.stderr
    assert "1 failed, 1 passed" in out, out
    assert f"GPU 0 MIG 1 {BIG.name} ({BIG.uuid}) was not used: libcuda.so.1 was never loaded" in out
    assert len(_contexts(log)) == 1


@pytest.mark.usefixtures("no_probing")
def test_a_replayed_environment_cannot_know_and_fails_under_require_gpu(pytester: pytest.Pytester) -> None:
    path = pytester.path / "env.json"
    path.write_text(EnvBuilder.healthy().build().dumps())
    pytester.makepyfile(
        test_r="""
            import pytest

            @pytest.mark.uses_gpu
            def test_replayed(gpu):
                pass
        """
    )
    report = pytester.path / "report.json"
    passed = pytester.runpytest("-p", "no:xdist", f"--gpu-env={path}", f"--gpu-report={report}")
    passed.assert_outcomes(passed=1)
    assert "1 could not be checked (replayed environment)" in passed.stdout.str()
    assert json.loads(report.read_text())["tests"][0]["gpu_used"] == UNKNOWN
    failed = pytester.runpytest("-p", "no:xdist", f"--gpu-env={path}", "--require-gpu")
    failed.assert_outcomes(failed=1)
    assert "the environment is replayed (--gpu-env): whether the test used it is unknown" in failed.stdout.str()


# The judgement, pure ----------------------------------------------------------------------------------------

NONE = ContextState(loaded=False, initialised=False, active=False)
IDLE = ContextState(loaded=True, initialised=True, active=False)
ACTIVE = ContextState(loaded=True, initialised=True, active=True)
BROKEN = ContextState(True, True, None, "cuDevicePrimaryCtxGetState(0) returned 999 in libcuda.so.1")
TF = ("tensorflow 2.21.0", False, "cannot run: it cannot load libcusolver.so.11")


@pytest.mark.parametrize(
    ("before", "after", "listed", "frameworks", "verdict", "words"),
    [
        (NONE, ACTIVE, None, (), USED, "made its primary CUDA context during the test"),
        (ACTIVE, ACTIVE, None, (), USED_EARLIER, "used earlier in this process"),
        (NONE, NONE, None, (), NOT_USED, "libcuda.so.1 was never loaded"),
        (IDLE, IDLE, True, (), USED, "NVML lists the test's process"),
        (IDLE, IDLE, False, (TF,), NOT_USED, "tensorflow 2.21.0: cannot run: it cannot load libcusolver.so.11"),
        (IDLE, IDLE, False, (("torch 2.9.0", True, "ok"),), NOT_USED, "torch 2.9.0 can use it here"),
        (NONE, BROKEN, None, (), UNKNOWN, "returned 999"),
        (BROKEN, ACTIVE, None, (), USED_EARLIER, "whether this test made it is not known"),
        (None, None, None, (), UNKNOWN, "replayed"),
    ],
)
def test_the_verdict_and_its_evidence(
    before: ContextState | None,
    after: ContextState | None,
    listed: bool | None,
    frameworks: tuple[tuple[str, bool, str], ...],
    verdict: str,
    words: str,
) -> None:
    use = judge("GPU 0", before, after, listed, None, frameworks)
    assert (use.verdict, words in use.evidence) == (verdict, True), use
    assert use.passes(require_gpu=False) is (verdict != NOT_USED)
    assert use.passes(require_gpu=True) is (verdict in (USED, USED_EARLIER))


def test_the_failure_says_why_from_the_verdict_on_a_framework_the_test_imported(host: SimHost) -> None:
    """TensorFlow 2.21 without its CUDA libraries registers no GPU and runs on the CPU: the failure carries the run's
    verdict on it, asked only because the test's process imported it (the planted package raises if imported, so
    the plugin importing it would end the run)."""
    _host(host)
    host.add_tensorflow("2.21.0", "tensorflow-2.21.0-linux.py")
    files = {
        "test_tf.py": """
            import sys, types
            import pytest

            @pytest.mark.uses_gpu
            def test_a_without_tensorflow():
                pass

            @pytest.mark.uses_gpu
            def test_b_in_tensorflow():
                sys.modules.setdefault("tensorflow", types.ModuleType("tensorflow"))  # as `import tensorflow` leaves it
        """,
    }
    completed = host.pytest("-p", "no:xdist", files=files)
    out = completed.stdout + completed.stderr
    assert "2 failed" in out, out
    without, within = out.split(" test_b_in_tensorflow _")
    assert "tensorflow" not in without.split(" test_a_without_tensorflow _")[1]
    assert "was not used: libcuda.so.1 was never loaded in the test's process; tensorflow 2.21.0: cannot run:" in within


def test_a_context_other_than_the_primary_one_is_found_in_nvmls_list(host: SimHost) -> None:
    """cuCtxCreate makes a context the primary context's state does not show; NVML lists the process on the
    device, and the test is judged on that."""
    _host(host)
    log, report = host.root / "contexts.log", host.root / "report.json"
    files = {
        "helpers.py": HELPERS,
        "test_own_context.py": """
            import ctypes
            import pytest
            from helpers import driver

            @pytest.mark.uses_gpu
            def test_own_context(gpu):
                ctx = ctypes.c_void_p()
                assert driver().cuCtxCreate_v2(ctypes.byref(ctx), 0, gpu.cuda_index) == 0
        """,
    }
    completed = host.pytest(
        "-p", "no:xdist", f"--gpu-report={report}", files=files, extra_env={"SIMHOST_CONTEXT_LOG": str(log)}
    )
    assert "1 passed" in completed.stdout, completed.stdout + completed.stderr
    [test] = json.loads(report.read_text())["tests"]
    assert test["gpu_used"] == USED
    assert "NVML lists the test's process" in test["gpu_use"]
    assert len(_contexts(log)) == 1


def test_a_driver_that_hangs_is_given_up_in_time_and_said(host: SimHost) -> None:
    """cuDevicePrimaryCtxGetState stuck: bounded by --gpu-probe-timeout, the verdict is unknown (a failure under
    --require-gpu), and the run ends."""
    _host(host)
    files = {
        "helpers.py": HELPERS,
        "test_hang.py": """
            import pytest
            from helpers import context

            @pytest.mark.uses_gpu
            def test_hang(gpu):
                context(gpu.cuda_index)
        """,
    }
    env = {"SIMHOST_PRIMARY_STATE_HANG": "1"}
    completed = host.pytest("-p", "no:xdist", "--gpu-probe-timeout=0.5", files=files, extra_env=env, timeout=30)
    assert "1 passed" in completed.stdout, completed.stdout + completed.stderr
    # A live run that could not read the context says so, not "replayed environment" (field test A4).
    assert "1 could not be checked (the driver could not be asked: a call failed or timed out)" in completed.stdout
    assert "replayed environment" not in completed.stdout
    failed = host.pytest(
        "-p", "no:xdist", "--gpu-probe-timeout=0.5", "--require-gpu", files=files, extra_env=env, timeout=30
    )
    out = failed.stdout + failed.stderr
    assert "1 failed" in out, out
    assert "cuDevicePrimaryCtxGetState did not return within 0.5 s (--gpu-probe-timeout) in libcuda.so.1" in out
