"""The plugin end to end on simulated hosts: pytest in a child process whose loader path holds stand-in
NVIDIA libraries, so the real probe, the real handle creation and the real teardown run."""

from __future__ import annotations

from pathlib import Path

from .simhost import SimGpu, SimHost

HANDLE_TESTS = {
    "test_handles.py": """
        import ctypes

        def test_first(cudnn_handle):
            assert isinstance(cudnn_handle.value, ctypes.c_void_p) and cudnn_handle.value.value
            assert cudnn_handle.version == "9.3.0"

        def test_second(cudnn_handle, cudnn_handle_session):
            assert cudnn_handle.value.value != cudnn_handle_session.value.value

        def test_gpu(gpu):
            assert (gpu.name, gpu.compute_capability) == ("NVIDIA A100-SXM4-40GB", "8.0")
            assert gpu.memory_free == 39 * 1024**3  # read live through the stand-in NVML
    """
}


def healthy(host: SimHost) -> Path:
    host.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
    lib = host.add_stack("opt/cuda-12.5/lib64", 12050, (9, 3, 0))
    return lib


def test_cudnn_handles_are_created_through_the_vouched_cudnn_and_all_destroyed(host: SimHost) -> None:
    lib = healthy(host)
    log = host.root / "handles.log"
    completed = host.pytest(files=HANDLE_TESTS, extra_env={"SIMHOST_CUDNN_LOG": str(log)})
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "3 passed" in completed.stdout
    header = next(line for line in completed.stdout.splitlines() if "CUDA runtime" in line)
    assert "cuDNN 9.3.0" in header
    assert f"{lib / 'libcudnn.so.9'}" in header
    events = log.read_text().split("\n")
    created = sorted(line.split()[1] for line in events if line.startswith("create"))
    destroyed = sorted(line.split()[1] for line in events if line.startswith("destroy"))
    # Three from the tests (two function-scoped, one session-scoped) and one from the probe's own child.
    assert len(created) == 4
    assert created == destroyed


def test_an_incomplete_cudnn_skips_the_handle_test_with_the_diagnosis(host: SimHost) -> None:
    host.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
    lib = host.folder("opt/cudnn/lib")
    host.add_cudart(lib, 12050)
    host.add_cudnn(lib, (9, 1, 0), cudart_version=12050, siblings=False)
    host.ld_library_path.append(str(lib))
    tests = {"test_h.py": "def test_handle(cudnn_handle):\n    pass\n"}
    skipped = host.pytest(files=tests)
    assert skipped.returncode == 0, skipped.stdout
    assert "1 skipped" in skipped.stdout
    assert f"cuDNN at {lib / 'libcudnn.so.9'} is missing its sub-libraries" in skipped.stdout
    failed = host.pytest("--require-gpu", files=tests)
    assert failed.returncode == 1
    assert "1 error" in failed.stdout
    assert "[--require-gpu]" in failed.stdout


def test_a_runner_without_its_gpu_skips_and_fails_under_require_gpu(host: SimHost) -> None:
    host.add_cudart(host.folder("opt/cuda/lib64"), 12040)
    tests = {"test_g.py": "import pytest\n\n@pytest.mark.requires_gpu\ndef test_gpu():\n    pass\n"}
    skipped = host.pytest(files=tests)
    assert skipped.returncode == 0
    assert "requires 1 GPU; found no NVIDIA driver: libnvidia-ml.so.1 is not on the loader path" in skipped.stdout
    env_switch = host.pytest(files=tests, extra_env={"PYTEST_CUDNN_REQUIRE_GPU": "1"})
    assert env_switch.returncode == 1
    assert "pytest-cudnn: --require-gpu: cannot run GPU work: no NVIDIA driver" in env_switch.stdout


def test_collect_only_does_not_probe_a_hanging_library(host: SimHost) -> None:
    hung = host.folder("opt/hung")
    host.add_cudart(hung, 12020, behaviour="hang")
    host.ld_library_path.append(str(hung))
    tests = {"test_c.py": "def test_a():\n    pass\n"}
    collected = host.pytest("--collect-only", "--gpu-probe-timeout", "30", files=tests, timeout=20)
    assert collected.returncode == 0
    assert "pytest-cudnn" not in collected.stdout
    probed = host.pytest("--gpu-probe-timeout", "1", files=tests, timeout=60)
    assert probed.returncode == 0
    assert "1 passed" in probed.stdout


def test_listing_fixtures_probes_nothing(host: SimHost) -> None:
    """--fixtures and --fixtures-per-test run no test: like --collect-only, they need no environment."""
    host.add_driver([SimGpu()], version="550.54.15", cuda_version=12040)
    log = host.root / "nvml.log"
    tests = {"test_f.py": "import pytest\n\n@pytest.mark.requires_gpu\ndef test_a(gpu):\n    pass\n"}
    for mode in ("--fixtures", "--fixtures-per-test"):
        listed = host.pytest(mode, files=tests, extra_env={"SIMHOST_NVML_LOG": str(log)})
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert "gpu" in listed.stdout
        assert "pytest-cudnn:" not in listed.stdout
        assert not log.exists(), f"{mode} probed"
    ran = host.pytest(files=tests, extra_env={"SIMHOST_NVML_LOG": str(log)})
    assert ran.returncode == 0, ran.stdout
    assert "init" in log.read_text()
