"""The pytest plugin on replayed environments (pytester, in process): markers, fixtures, header, policy, reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_cudnn.environment import Environment, State, Via

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


pytestmark = pytest.mark.usefixtures("no_probing")


def test_markers_are_documented_with_their_signatures(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.requires_cudnn(spec='', *, framework=None): skip unless the cuDNN in use matches *",
            "@pytest.mark.requires_cuda(spec='', *, framework=None): *",
            "@pytest.mark.requires_driver(spec=''): *",
            "@pytest.mark.requires_gpu(count=1, memory=None, compute_capability=None, name=None, *, healthy=False, "
            "peer_access=False, interconnect=None): *",
            "@pytest.mark.requires_tensorflow(spec=None, *, gpu=True): *",
            "@pytest.mark.requires_torch(spec=None, *, gpu=True): *",
            "@pytest.mark.requires_jax(spec=None, *, gpu=True): *",
            "@pytest.mark.requires_cupy(spec=None, *, gpu=True): *",
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
            "pytest-cudnn: ✓ driver 550.54.15 (CUDA 12.4), GPUs: GPU 0 NVIDIA A100-SXM4-80GB (compute capability 8.0, "
            f"Ampere, 79.0 GiB free) [[]replayed from {path}[]]",
            "pytest-cudnn: ✓ CUDA runtime 12.5 at */nvidia/cuda_runtime/lib/libcudart.so.12 (via pip nvidia wheel), "
            "cuDNN 9.3.0 at */nvidia/cudnn/lib/libcudnn.so.9 (via pip nvidia wheel), TensorFlow 2.18.0",
            "pytest-cudnn: ✓ the GPU stack holds together",
        ]
    )
    assert result.ret == 0


def test_verbose_header_lists_the_findings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest("-v", "--gpu-env", snapshot(pytester, tf23_meets_cudnn8()))
    result.stdout.fnmatch_lines(["pytest-cudnn: ERROR [[]tensorflow-cudnn-not-found[]] TensorFlow 2.3.1 *"])


def test_skip_reason_says_required_found_where_why_and_fix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn(">=7.6,<8")
        def test_needs_cudnn7():
            pass

        @pytest.mark.requires_cudnn(">=8")
        def test_needs_cudnn8():
            pass
        """
    )
    b = EnvBuilder().with_gpus(gpu(name="Tesla T4", cc="7.5"))
    b.runtime("/usr/local/cuda-12.4/lib64/libcudart.so.12", 12040)
    b.cudnn("/opt/cudnn/lib/libcudnn.so.8", "8.9.7", 12040, siblings_missing=("libcudnn_ops_infer.so.8",))
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, b.change(1, state=State.ERROR).build()))
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(
        [
            # The version does not match: that is the cause, and nothing else is blamed.
            "SKIPPED [[]1[]] test_skip_reason_says_required_found_where_why_and_fix.py:3: requires cuDNN <8,>=7.6; "
            "found cuDNN 8.9.7 at /opt/cudnn/lib/libcudnn.so.8 (via LD_LIBRARY_PATH)",
            # The version matches, but this copy cannot run: why, and what to do.
            "SKIPPED [[]1[]] test_skip_reason_says_required_found_where_why_and_fix.py:7: requires cuDNN >=8; "
            "found cuDNN 8.9.7 at /opt/cudnn/lib/libcudnn.so.8 (via LD_LIBRARY_PATH); cuDNN at "
            "/opt/cudnn/lib/libcudnn.so.8 is missing its sub-libraries; any call into it aborts the process; "
            "fix: reinstall cuDNN completely: every libcudnn_* file of one release in one folder",
        ]
    )
    result.stdout.fnmatch_lines(["*1 x cudnn-version: *", "*1 x cudnn-incomplete: *"])


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


@pytest.mark.parametrize("report", [False, True])
def test_satisfied_markers_cost_no_report_hooks_unless_a_report_wants_them(
    pytester: pytest.Pytester, report: bool
) -> None:
    # Each test's requirements and GPU go only into --gpu-report: without one, a suite whose markers are all
    # satisfied registers nothing that runs on every report; a refusal still does (the summary groups it).
    pytester.makeconftest(
        """
        def pytest_sessionfinish(session):
            plugged = session.config.pluginmanager.has_plugin("cudnn-facts")
            print("facts hooks: " + ("registered" if plugged else "none"))
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn(">=9")
        def test_a():
            pass

        def test_b(gpu):
            pass
        """
    )
    env = snapshot(pytester, healthy())
    args = ["-s", "--gpu-env", env, *(["--gpu-report", "report.json"] if report else [])]
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"*facts hooks: {'registered' if report else 'none'}"])
    if report:
        tests = json.loads((pytester.path / "report.json").read_text())["tests"]
        assert [(t["nodeid"].split("::")[1], t.get("gpu")) for t in tests] == [("test_a", 0), ("test_b", 0)]
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn("<9")
        def test_a():
            pass
        """
    )
    refused = pytester.runpytest(*args)
    refused.stdout.fnmatch_lines(["*facts hooks: registered", "   1 x cudnn-version: requires cuDNN <9*"])


@pytest.mark.parametrize(
    ("mark", "found"),
    [
        ("requires_cudnn('<9')", "found cuDNN 9.3.0 at */nvidia/cudnn/lib/libcudnn.so.9 (via pip nvidia wheel)"),
        ("requires_cuda('>=13')", "found CUDA runtime 12.5 at */libcudart.so.12 (via pip nvidia wheel)"),
        ("requires_driver('>=560')", "found driver 550.54.15 (/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1)"),
        ("requires_gpu(count=2)", "found 1 visible GPU(s): [[]0[]] NVIDIA A100-SXM4-80GB"),
        (
            "requires_gpu(memory='100GiB')",
            "found GPU 0 NVIDIA A100-SXM4-80GB (compute capability 8.0, Ampere, 79.0 GiB free)",
        ),
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


@pytest.mark.parametrize("skipping", ["", "no:skipping"], ids=["skipping plugin", "-p no:skipping"])
def test_an_unsatisfied_marker_skips_at_the_tests_own_line_with_or_without_pytests_skipping_plugin(
    pytester: pytest.Pytester, skipping: str
) -> None:
    """Without pytest's skipping plugin nothing evaluates a skip mark: the test ran on the stack that cannot run it."""
    pytester.makepyfile(
        test_gpu="""
        import pytest

        @pytest.mark.requires_cudnn("<9")
        def test_a():
            raise AssertionError("ran")
        """
    )
    plugins = ["-p", skipping] if skipping else []
    result = pytester.runpytest(*plugins, "-rs", "--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_gpu.py:3: requires cuDNN <9; found cuDNN 9.3.0 at *"])


@pytest.mark.parametrize("skipping", ["", "no:skipping"], ids=["skipping plugin", "-p no:skipping"])
def test_a_test_raising_an_unhashable_exception_after_a_refusal_fails_as_itself(
    pytester: pytest.Pytester, skipping: str
) -> None:
    """After a refusal every report passes the plugin's makereport wrapper: an exception that defines __eq__ without
    __hash__ (any dataclass exception) is the test's own failure, never an INTERNALERROR of the session."""
    pytester.makepyfile(
        test_gpu="""
        from dataclasses import dataclass

        import pytest

        @dataclass
        class Unhashable(Exception):
            code: int

        @pytest.mark.requires_cudnn("<9")
        def test_a_refused():
            pass

        def test_b_raises():
            raise Unhashable(3)
        """
    )
    plugins = ["-p", skipping] if skipping else []
    result = pytester.runpytest(*plugins, "--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(skipped=1, failed=1)
    assert "INTERNALERROR" not in result.stdout.str()


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


def test_a_bare_version_marker_means_any_version_of_a_copy_that_is_there(pytester: pytest.Pytester) -> None:
    # Users write @requires_cudnn alone for "any cuDNN" (issue 29, section 4): as requires_tensorflow() takes it.
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn
        def test_cudnn():
            pass

        @pytest.mark.requires_cuda()
        def test_cuda():
            pass

        @pytest.mark.requires_driver
        def test_driver():
            pass
        """
    )
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(passed=3)
    result = pytester.runpytest("-rs", "--gpu-env", snapshot(pytester, no_driver()))
    result.assert_outcomes(skipped=3)
    result.stdout.fnmatch_lines(["*requires NVIDIA driver; found no NVIDIA driver*"])


@pytest.mark.parametrize(
    ("mark", "message"),
    [
        ("requires_cudnn('=>8')", "@pytest.mark.requires_cudnn('=>8'): spec '=>8' is not a PEP 440 specifier set*"),
        ("requires_cudnn(8)", "@pytest.mark.requires_cudnn(8): spec must be a version specifier string*"),
        (
            "requires_cudnn('>=8', '<10')",
            "@pytest.mark.requires_cudnn('>=8', '<10'): takes at most one specifier, got 2",
        ),
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
            "*requires 1 GPU; found no NVIDIA driver: libnvidia-ml.so.1 is not on the loader path; "
            "fix: install the NVIDIA driver*[[]--require-gpu[]]",
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
    # pytest 8.4 and later read the typed option themselves: their words, then the range.
    result.stderr.fnmatch_lines(["*the gpu_probe_timeout ini key in */tox.ini: *'soon'*number between 0.001 and 3600"])


TYPED_INI = pytest.mark.skipif(pytest.version_tuple[:2] < (8, 4), reason="pytest 8.4 added the float and int ini types")


@TYPED_INI
def test_numbers_in_native_toml_are_taken_and_help_says_their_type(pytester: pytest.Pytester) -> None:
    """A string option refused a TOML number ("config option 'gpu_probe_timeout' expects a string, got int: 30")."""
    pytester.makefile(".toml", pytest="[pytest]\ngpu_probe_timeout = 30\ngpus_per_worker = 2\n")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest("-p", "no:randomly", "--gpu-env", snapshot(pytester, healthy()))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    helped = pytester.runpytest("--help").stdout.str()
    assert "gpu_probe_timeout (float):" in helped
    assert "gpus_per_worker (int):" in helped


@TYPED_INI
@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('gpu_probe_timeout = "30"', "expects a float, got str: '30'; it takes a number between 0.001 and 3600"),
        ("gpus_per_worker = 2.5", "expects an int, got float: 2.5; it takes a whole number between 1 and 1024"),
        ("gpu_probe_timeout = 0", "0 is not a number between 0.001 and 3600"),
    ],
)
def test_a_typed_ini_value_refused_says_where_and_what_it_takes(
    pytester: pytest.Pytester, toml: str, said: str
) -> None:
    pytester.makefile(".toml", pytest=f"[pytest]\n{toml}\n")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest("--gpu-env", snapshot(pytester, healthy()))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    key = toml.split(maxsplit=1)[0]
    result.stderr.fnmatch_lines([f"ERROR: the {key} ini key in */pytest.toml: *{said}"])


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


def test_a_cause_whose_tests_ask_for_different_things_says_how_many_reasons_it_holds(
    pytester: pytest.Pytester,
) -> None:
    # Grouped by cause, the summary showed the first test's requirement alone (field test, leftovers).
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn(">=10")
        def test_new():
            pass

        @pytest.mark.requires_cudnn("<8")
        def test_old():
            pass
        """
    )
    result = pytester.runpytest("--gpu-env", snapshot(pytester, healthy()))
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["   2 x cudnn-version: requires cuDNN >=10; found * (and 1 other reason)"])


def test_a_report_path_that_is_the_replayed_snapshot_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    path = snapshot(pytester, healthy())
    before = Path(path).read_bytes()
    result = pytester.runpytest(f"--gpu-env={path}", f"--gpu-report={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --gpu-report {path}: is the snapshot --gpu-env replays; name another file"])
    assert Path(path).read_bytes() == before


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
    result.stdout.fnmatch_lines(["*requires 1 GPU; found no NVIDIA driver: *; fix: install the NVIDIA driver*"])


def test_cudnn_handle_from_a_replayed_snapshot_skips_plainly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_handle(cudnn_handle): pass\n")
    path = snapshot(pytester, healthy())
    result = pytester.runpytest("-rs", "--gpu-env", path)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            f"SKIPPED * cudnn_handle needs a live cuDNN, and this run replays the snapshot {path} (--gpu-env): "
            "pytest-cudnn never loads a library named in a snapshot"
        ]
    )


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
    # Said once, by the finding (the skip once said "(a CPU-only build); ... is a CPU-only build").
    result.stdout.fnmatch_lines(
        ["*found TensorFlow 2.15.0 (tensorflow) at *; TensorFlow 2.15.0 (tensorflow) is a CPU-only build*"]
    )


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
    # In a child process: only the outermost pytest session in a process writes the step summary.
    result = pytester.runpytest_subprocess("--gpu-env", snapshot(pytester, no_driver()))
    assert result.ret == 0
    text = summary.read_text()
    # A blank line before and after the block: Markdown would join it to its neighbours.
    assert text.startswith("earlier step\n\n### pytest-cudnn\n")
    assert text.endswith("|\n\n")
    assert "no-driver" in text
    assert "requires 1 GPU; found no NVIDIA driver" in text


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
    result = pytester.runpytest(f"--gpu-env={examples / 'healthy-tf2.18-a100.json'}")
    result.assert_outcomes(passed=1)


# Defects found by users ------------------------------------------------------------------------------


def test_a_collect_report_sent_through_runtest_logreport_is_ignored(pytester: pytest.Pytester) -> None:
    """testmon-like plugins (and pytest's own test_zero_tests_collected) send CollectReports through
    pytest_runtest_logreport: they have no user_properties and no GPU facts."""
    pytester.makeconftest(
        """
        import pytest

        def send(config):
            for node_id in ("nodeid1", "nodeid2"):
                report = pytest.CollectReport(node_id, "passed", None, [])
                report.when = "passed"
                report.duration = 0.1
                config.hook.pytest_runtest_logreport(report=report)

        def pytest_collection_modifyitems(items, config):
            send(config)

        def pytest_runtest_teardown(item):
            send(item.config)
        """
    )
    pytester.makepyfile("import pytest\n@pytest.mark.requires_gpu\ndef test_a(): pass\n")
    report = pytester.path / "gpu.json"
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", f"--gpu-report={report}")
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    assert result.ret == 0
    assert [test["nodeid"] for test in json.loads(report.read_text())["tests"]] == [
        "test_a_collect_report_sent_through_runtest_logreport_is_ignored.py::test_a"
    ]


def test_the_session_handle_skips_every_test_that_asks_for_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(cudnn_handle_session): pass\n\ndef test_b(cudnn_handle_session): pass\n")
    path, report = snapshot(pytester, no_driver()), pytester.path / "gpu.json"
    skipped = pytester.runpytest("-rs", f"--gpu-env={path}", f"--gpu-report={report}")
    skipped.assert_outcomes(skipped=2)
    skipped.stdout.fnmatch_lines(2 * ["SKIPPED [[]1[]] *: cudnn_handle_session needs a live cuDNN, *"])
    tests = json.loads(report.read_text())["tests"]
    assert [(t["outcome"], t["reason"].split(",")[0]) for t in tests] == 2 * [
        ("skipped", "cudnn_handle_session needs a live cuDNN")
    ]
    failed = pytester.runpytest(f"--gpu-env={path}", "--require-gpu")
    failed.assert_outcomes(errors=2)
    failed.stdout.fnmatch_lines(2 * ["cudnn_handle_session needs a live cuDNN, * [[]--require-gpu[]]"])
    failed.stdout.no_fnmatch_line("*user_properties*")


def test_the_gpu_fixture_never_reads_nvml_under_replay(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pynvml

        def test_free(gpu, monkeypatch):
            def refuse(*args):
                raise AssertionError("NVML was called under --gpu-env")

            monkeypatch.setattr(pynvml, "nvmlInit", refuse)
            monkeypatch.setattr(pynvml, "nvmlDeviceGetHandleByUUID", refuse)
            assert gpu.memory_free == 79 * 1024**3
        """
    )
    pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}").assert_outcomes(passed=1)


@pytest.mark.parametrize("warnings", [("-W", "error"), ("-o", "filterwarnings=error")])
def test_junit_properties_warn_of_nothing(pytester: pytest.Pytester, warnings: tuple[str, str]) -> None:
    """A session fixture bound to a plugin instance is deprecated from pytest 9.1 (PytestRemovedIn10Warning).
    In a child process: in this one the plugin is imported already, which pytest warns about."""
    pytester.makepyfile("def test_a(gpu): pass\n")
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        *warnings, "-p", "no:cacheprovider", f"--junitxml={xml}", f"--gpu-env={snapshot(pytester, healthy())}"
    )
    result.assert_outcomes(passed=1)
    assert '<property name="gpu.cudnn" value="9.3.0"' in xml.read_text()


@pytest.mark.parametrize(
    "mode", ["--fixtures", "--fixtures-per-test", "--setup-plan", "--cache-show", "--collect-only"]
)
def test_modes_that_run_no_test_probe_nothing(pytester: pytest.Pytester, mode: str) -> None:
    """--require-gpu would probe at the header and at the end of any run that needs the environment."""
    pytester.makepyfile("import pytest\n@pytest.mark.requires_cudnn('>=8')\ndef test_a(gpu): pass\n")
    report = pytester.path / "gpu.json"
    result = pytester.runpytest(mode, "--require-gpu", f"--gpu-report={report}")
    assert result.ret == 0, result.stdout.str()
    assert "pytest-cudnn" not in result.stdout.str()
    assert not report.exists()


# The rootdir and --gpu-env FILE as two words ----------------------------------------------------------


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot outside the project under test."""
    path = tmp_path_factory.mktemp("elsewhere") / "env.json"
    path.write_text(healthy().dumps())
    return path


def test_gpu_env_as_two_words_that_would_move_the_rootdir_is_a_usage_error(
    pytester: pytest.Pytester, elsewhere: Path
) -> None:
    """pytest determines the rootdir and the ini file before any plugin option is known, taking FILE for a test
    path: the project's ini file would be ignored without a word."""
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest("--gpu-env", str(elsewhere))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --gpu-env {elsewhere}: pytest chose the rootdir (*) and the configuration file before it knew "
            f"pytest-cudnn's options, so it took {elsewhere} for a test path: it used no configuration file "
            f"instead of the one in {pytester.path}. Write --gpu-env={elsewhere} (one word), or pass --rootdir."
        ]
    )
    assert pytester.runpytest(f"--gpu-env={elsewhere}").ret == 0
    assert pytester.runpytest("--gpu-env", str(elsewhere), "--rootdir", str(pytester.path)).ret == 0


def test_gpu_env_as_two_words_inside_the_project_is_fine(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    sub = pytester.mkdir("snapshots")
    path = snapshot(pytester, healthy(), "snapshots/env.json")
    pytester.makepyfile("def test_a(): pass\n")
    assert sub.is_dir()
    assert pytester.runpytest("--gpu-env", path).ret == 0
    tests = pytester.mkdir("tests")
    (tests / "test_b.py").write_text("def test_b(): pass\n")
    result = pytester.runpytest("tests", "--gpu-env", path)  # FILE outside the tests, the same ini file found
    result.assert_outcomes(passed=1)


def test_an_existing_gpu_report_as_two_words_is_checked_too(pytester: pytest.Pytester, elsewhere: Path) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    pytester.makepyfile("def test_a(): pass\n")
    env = snapshot(pytester, healthy())
    result = pytester.runpytest(f"--gpu-env={env}", "--gpu-report", str(elsewhere))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --gpu-report {elsewhere}: *Write --gpu-report={elsewhere} (one word)*"])
    missing = elsewhere.parent / "new.json"  # not a path yet: pytest cannot have taken it for one
    assert pytester.runpytest(f"--gpu-env={env}", "--gpu-report", str(missing)).ret == 0
    assert missing.exists()


# Settings -------------------------------------------------------------------------------------------


def test_a_malformed_marker_is_said_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad="import pytest\n@pytest.mark.requires_cudnn('=>8')\ndef test_a(): pass\n")
    result = pytester.runpytest("-rN", f"--gpu-env={snapshot(pytester, healthy())}")
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "During handling of the above exception" not in output
    assert output.count("is not a PEP 440 specifier set") == 1


@pytest.mark.parametrize(
    ("ini", "args", "message"),
    [
        ("require_gpu = maybe", (), "the require_gpu ini key in */tox.ini: invalid truth value 'maybe'; expected *"),
        ("gpu_assign = maybe", (), "the gpu_assign ini key in */tox.ini: invalid truth value 'maybe'; expected *"),
        (
            "gpus_per_worker = 1.5",
            (),
            "the gpus_per_worker ini key in */tox.ini: *'1.5'*whole number between 1 and 1024",
        ),
        ("", ("--gpus-per-worker", "1.5"), "--gpus-per-worker: '1.5' is not a whole number between 1 and 1024"),
        ("", ("--gpus-per-worker=0",), "--gpus-per-worker: '0' is not a whole number between 1 and 1024"),
        ("", ("--gpu-env=",), "--gpu-env: an empty value; write --gpu-env=FILE"),
        ("", ("--gpu-report=",), "--gpu-report: an empty value; write --gpu-report=PATH"),
    ],
)
def test_a_bad_setting_is_a_usage_error_naming_where_it_came_from(
    pytester: pytest.Pytester, ini: str, args: tuple[str, ...], message: str
) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
