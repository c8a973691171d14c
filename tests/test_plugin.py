"""The pytest plugin on replayed environments (pytester, in process): markers, fixtures, header, policy, reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_cudnn.environment import Environment, Via

from .envbuilder import EnvBuilder, gpu


def snapshot(pytester: pytest.Pytester, env: Environment, name: str = "env.json") -> str:
    path = pytester.path / name
    path.write_text(env.dumps())
    return str(path)


def healthy() -> Environment:
    return EnvBuilder.healthy().build()


def no_driver() -> Environment:
    return EnvBuilder.healthy().without_driver().build()


def tf23_meets_cudnn8() -> Environment:
    b = EnvBuilder().with_driver(version="450.80.02", cuda_version_raw=11000).with_gpus(gpu(name="Tesla T4", cc="7.5"))
    b.with_tensorflow("2.3.1", "10.1", "7", capabilities=("sm_75",))
    b.runtime("/usr/local/cuda-10.1/lib64/libcudart.so.10.1", 10010, driver_raw=11000)
    b.cudnn("/usr/local/cuda-10.1/lib64/libcudnn.so.8", "8.0.5", 10010)
    return b.build()


@pytest.fixture(autouse=True)
def _no_probing(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> None:
    """These runs replay snapshots: probing the machine running the tests would be a bug."""

    def refuse(*args: object, **kwargs: object) -> Environment:
        raise AssertionError("pytest-cudnn probed the host")

    monkeypatch.setattr("pytest_cudnn.probe.probe_environment", refuse)
    # Hypothesis' own plugin imports much of hypothesis at every inner run's summary: 2 s a run.
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    monkeypatch.delenv("PYTEST_CUDNN_REQUIRE_GPU", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_markers_are_documented_with_their_signatures(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.requires_cudnn(spec): skip unless the cuDNN in use matches *",
            "@pytest.mark.requires_cuda(spec): *",
            "@pytest.mark.requires_driver(spec): *",
            "@pytest.mark.requires_gpu(count=1, memory=None, compute_capability=None, name=None): *",
            "@pytest.mark.requires_tensorflow(spec=None, *, gpu=True): *",
        ]
    )
    assert result.ret == 0


def test_help_and_collect_only_probe_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import pytest\n@pytest.mark.requires_cudnn('>=8')\ndef test_a(): pass\n")
    assert pytester.runpytest("--help").ret == 0
    result = pytester.runpytest("--collect-only")
    assert result.ret == 0
    assert "pytest-cudnn" not in result.stdout.str()


def test_header_from_a_replayed_snapshot(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    path = snapshot(pytester, healthy())
    result = pytester.runpytest("--gpu-env", path)
    result.stdout.fnmatch_lines(
        [
            f"pytest-cudnn: driver 550.54.15 (CUDA 12.4), GPUs: [[]0[]] NVIDIA A100-SXM4-80GB (8.0, 79.0 GiB free)"
            f" [[]replayed from {path}[]]",
            "pytest-cudnn: CUDA runtime 12.5 (*/nvidia/cuda_runtime/lib/libcudart.so.12, via pip nvidia wheel), "
            "cuDNN 9.3.0 (*/nvidia/cudnn/lib/libcudnn.so.9, via pip nvidia wheel), TensorFlow 2.18.0",
            "pytest-cudnn: the GPU stack holds together",
        ]
    )
    assert result.ret == 0


def test_verbose_header_lists_the_findings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest("-v", "--gpu-env", snapshot(pytester, tf23_meets_cudnn8()))
    result.stdout.fnmatch_lines(["pytest-cudnn:   ERROR [[]tensorflow-cudnn-not-found[]] TensorFlow 2.3.1 *"])


def test_skip_reason_says_required_found_where_why_and_fix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn(">=7.6,<8")
        def test_needs_cudnn7():
            pass
        """
    )
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, tf23_meets_cudnn8()))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_skip_reason_says_required_found_where_why_and_fix.py:3: requires cuDNN <8,>=7.6; "
            "found cuDNN 8.0.5 at /usr/local/cuda-10.1/lib64/libcudnn.so.8 (via LD_LIBRARY_PATH); "
            "TensorFlow 2.3.1 (built for CUDA 10.1, cuDNN 7.6) loads libcudnn.so.7, and the "
            "loader finds no copy of it: no cuDNN for TensorFlow: install cuDNN 7.6 for CUDA 10.1 and put its "
            "library folder on the loader path"
        ]
    )


def test_satisfied_markers_run_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn(">=9")
        @pytest.mark.requires_cuda("12")
        @pytest.mark.requires_driver(">=535")
        @pytest.mark.requires_gpu(count=1, memory="16GiB", compute_capability=">=8.0", name="*A100*")
        @pytest.mark.requires_tensorflow("~=2.18")
        def test_all():
            pass
        """
    )
    pytester.runpytest("--gpu-env", snapshot(pytester, healthy())).assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("mark", "found"),
    [
        ("requires_cudnn('<9')", "found cuDNN 9.3.0 at */nvidia/cudnn/lib/libcudnn.so.9 (via pip nvidia wheel)"),
        ("requires_cuda('>=13')", "found CUDA runtime 12.5 at */libcudart.so.12 (via pip nvidia wheel)"),
        ("requires_driver('>=560')", "found driver 550.54.15 (/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1)"),
        ("requires_gpu(count=2)", "found 1 visible GPU(s): [[]0[]] NVIDIA A100-SXM4-80GB"),
        ("requires_gpu(memory='100GiB')", "found GPU 0 NVIDIA A100-SXM4-80GB (compute capability 8.0, 79.0 GiB free)"),
        ("requires_gpu(compute_capability='>=9.0')", "found GPU 0 NVIDIA A100-SXM4-80GB (compute capability 8.0, *"),
        ("requires_gpu(name='*H100*')", "found GPU 0 NVIDIA A100-SXM4-80GB *"),
        ("requires_tensorflow('<2.18')", "found TensorFlow 2.18.0 (tensorflow) at *"),
    ],
)
def test_unsatisfied_markers_skip_with_what_was_found(pytester: pytest.Pytester, mark: str, found: str) -> None:
    pytester.makepyfile(f"import pytest\n@pytest.mark.{mark}\ndef test_a(): pass\n")
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([f"SKIPPED * requires *; {found}*"])


def test_marks_stack_and_apply_at_class_and_module_level(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.requires_driver(">=500")

        @pytest.mark.requires_gpu(memory="1GiB")
        class TestStacked:
            def test_inherits(self):
                pass

            @pytest.mark.requires_cudnn("<9")
            def test_one_fails(self):
                pass

        @pytest.mark.requires_driver("<500")
        def test_module_and_own_conflict():
            pass
        """
    )
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*requires cuDNN <9*", "*requires NVIDIA driver <500*"])


@pytest.mark.parametrize(
    ("mark", "message"),
    [
        ("requires_cudnn('=>8')", "@pytest.mark.requires_cudnn('=>8'): spec '=>8' is not a PEP 440 specifier set*"),
        ("requires_cudnn(8)", "@pytest.mark.requires_cudnn(8): spec must be a version specifier string*"),
        ("requires_cudnn()", "@pytest.mark.requires_cudnn(): takes exactly one specifier, got 0"),
        ("requires_gpu(memory='lots')", "*memory 'lots' is not a size such as '16GiB'*"),
        ("requires_gpu(count=0)", "*count must be a whole number of GPUs, at least 1, not 0"),
        ("requires_gpu(colour='green')", "*unknown argument 'colour'; the signature is requires_gpu(count=1, *"),
        ("requires_tensorflow(gpu='yes')", "*gpu must be True or False, not 'yes'"),
    ],
)
def test_a_malformed_marker_is_an_error_naming_test_marker_and_value(
    pytester: pytest.Pytester, mark: str, message: str
) -> None:
    pytester.makepyfile(test_bad=f"import pytest\n@pytest.mark.{mark}\ndef test_a(): pass\n")
    result = pytester.runpytest("--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*test_bad.py::test_a: {message}"])


def test_require_gpu_turns_environment_skips_into_failures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_gpu
        def test_gpu():
            pass

        def test_cpu():
            pass
        """
    )
    path = snapshot(pytester, no_driver())
    skipped = pytester.runpytest("--gpu-env", path)
    skipped.assert_outcomes(passed=1, skipped=1)
    assert skipped.ret == 0
    failed = pytester.runpytest("--gpu-env", path, "--require-gpu")
    failed.assert_outcomes(passed=1, errors=1)
    failed.stdout.fnmatch_lines(
        [
            "*requires 1 GPU; found no NVIDIA driver (NVML Shared Library Not Found); "
            "no NVIDIA driver: *[[]--require-gpu[]]",
            "pytest-cudnn: --require-gpu: cannot run GPU work: no NVIDIA driver*",
        ]
    )
    assert failed.ret == pytest.ExitCode.TESTS_FAILED


def test_require_gpu_fails_the_run_even_with_no_marked_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_cpu(): pass\n")
    result = pytester.runpytest("--gpu-env", snapshot(pytester, no_driver()), "--require-gpu")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize(
    ("ini", "env", "args", "fails"),
    [
        ("true", None, (), True),
        ("false", "1", (), True),
        ("true", "0", (), False),
        ("false", "0", ("--require-gpu",), True),
        ("true", "1", ("--no-require-gpu",), False),
        ("false", None, (), False),
    ],
)
def test_require_gpu_precedence_ini_then_environment_then_command_line(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    ini: str,
    env: str | None,
    args: tuple[str, ...],
    fails: bool,
) -> None:
    pytester.makeini(f"[pytest]\nrequire_gpu = {ini}\n")
    pytester.makepyfile("import pytest\n@pytest.mark.requires_gpu\ndef test_gpu(): pass\n")
    if env is not None:
        monkeypatch.setenv("PYTEST_CUDNN_REQUIRE_GPU", env)
    result = pytester.runpytest("--gpu-env", snapshot(pytester, no_driver()), *args)
    assert (result.ret == pytest.ExitCode.TESTS_FAILED) is fails


def test_a_bad_require_gpu_variable_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_CUDNN_REQUIRE_GPU", "sometimes")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest("--gpu-env", snapshot(pytester, healthy()))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*PYTEST_CUDNN_REQUIRE_GPU='sometimes': expected 1/0, true/false, yes/no or on/off"])


def test_a_bad_timeout_is_a_usage_error_naming_its_source(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ngpu_probe_timeout = soon\n")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the gpu_probe_timeout ini key: 'soon' is not a number between 0.001 and 3600"])


def test_an_unreadable_snapshot_is_a_usage_error_naming_the_file(pytester: pytest.Pytester) -> None:
    bad = pytester.path / "bad.json"
    bad.write_text("{")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest("--gpu-env", str(bad))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--gpu-env: {bad}: is not JSON*"])


def test_terminal_summary_groups_environment_skips_by_cause(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", range(3))
        @pytest.mark.requires_gpu
        def test_gpu(n):
            pass

        @pytest.mark.requires_tensorflow("<1")
        def test_old_tf():
            pass
        """
    )
    result = pytester.runpytest("--gpu-env", snapshot(pytester, no_driver()))
    result.stdout.fnmatch_lines(
        [
            "*pytest-cudnn: environment skips by cause*",
            "   3 x no-driver: requires 1 GPU; found no NVIDIA driver*",
            "   1 x tensorflow-version: requires TensorFlow <1 with a usable GPU build; "
            "found TensorFlow 2.18.0 (tensorflow) at *",
        ]
    )


def test_gpu_fixture_gives_the_device_facts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_gpu(gpu):
            assert (gpu.index, gpu.cuda_index, gpu.name) == (0, 0, "NVIDIA A100-SXM4-80GB")
            assert gpu.compute_capability == "8.0" and gpu.compute_capability_tuple == (8, 0)
            assert gpu.memory_total == 80 * 1024**3
            assert gpu.memory_free == 79 * 1024**3  # replayed: the snapshot's value
        """
    )
    pytester.runpytest("--gpu-env", snapshot(pytester, healthy())).assert_outcomes(passed=1)


def test_gpu_fixture_skips_with_the_diagnosis_without_a_gpu(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_gpu(gpu): pass\n")
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, no_driver()))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*requires 1 GPU; found no NVIDIA driver *: install the NVIDIA driver*"])


def test_cudnn_handle_from_a_replayed_snapshot_skips_plainly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_handle(cudnn_handle): pass\n")
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*cannot create a cuDNN handle: cuDNN */libcudnn.so.9 is not on this machine*"])


def test_requires_tensorflow_gpu_false_accepts_a_cpu_build(pytester: pytest.Pytester) -> None:
    b = EnvBuilder()
    b.with_tensorflow("2.15.0", None, None, is_cuda_build=False, capabilities=())
    b.runtime("/opt/cuda/libcudart.so.12", 12040, (Via.LDCONFIG,))
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_tensorflow(">=2.15", gpu=False)
        def test_cpu_ok():
            pass

        @pytest.mark.requires_tensorflow(">=2.15")
        def test_gpu_needed():
            pass
        """
    )
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, b.build()))
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*(a CPU-only build); TensorFlow 2.15.0 (tensorflow) is a CPU-only build*"])


def test_gpu_report_records_environment_findings_and_each_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn(">=9")
        def test_ok():
            pass

        @pytest.mark.requires_gpu(count=4)
        def test_many():
            pass
        """
    )
    report = pytester.path / "gpu.json"
    pytester.runpytest("--gpu-env", snapshot(pytester, healthy()), "--gpu-report", str(report))
    data = json.loads(report.read_text())
    assert data["environment"]["driver"]["version"] == "550.54.15"
    assert data["verdict"]["ok"] is True
    tests = {t["nodeid"].split("::")[-1]: t for t in data["tests"]}
    assert tests["test_ok"] == {
        "nodeid": tests["test_ok"]["nodeid"],
        "requirements": ["requires cuDNN >=9"],
        "gpu": 0,
        "outcome": "passed",
    }
    assert tests["test_many"]["outcome"] == "skipped"
    assert tests["test_many"]["reason"].startswith("requires 4 GPUs; found 1 visible GPU(s)")


def test_junit_xml_carries_the_key_versions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    xml = pytester.path / "junit.xml"
    pytester.runpytest("--gpu-env", snapshot(pytester, healthy()), f"--junitxml={xml}")
    text = xml.read_text()
    for name, value in (("gpu.driver", "550.54.15"), ("gpu.cudnn", "9.3.0"), ("gpu.cuda_runtime", "12.5")):
        assert f'<property name="{name}" value="{value}"' in text


def test_github_step_summary_is_appended_not_overwritten(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile("import pytest\n@pytest.mark.requires_gpu\ndef test_a(): pass\n")
    pytester.runpytest("--gpu-env", snapshot(pytester, no_driver()))
    text = summary.read_text()
    assert text.startswith("earlier step\n### pytest-cudnn\n")
    assert "| error | `no-driver` |" in text
    assert "| 1 | `no-driver` | requires 1 GPU; found no NVIDIA driver" in text


def test_disabling_the_plugin_leaves_no_trace(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import pytest\n@pytest.mark.requires_gpu\ndef test_a(): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cudnn", "--strict-markers")
    result.stdout.fnmatch_lines(["*'requires_gpu' not found in `markers` configuration*"])
    assert "pytest-cudnn" not in result.stdout.str()
    plain = pytester.runpytest("-p", "no:cudnn")
    plain.assert_outcomes(passed=1)


def test_the_example_snapshots_replay_in_a_run(pytester: pytest.Pytester) -> None:
    examples = Path(__file__).parent.parent / "examples" / "snapshots"
    pytester.makepyfile("import pytest\n@pytest.mark.requires_cudnn('>=9')\ndef test_a(): pass\n")
    result = pytester.runpytest("--gpu-env", str(examples / "healthy-tf2.18-a100.json"))
    result.assert_outcomes(passed=1)
