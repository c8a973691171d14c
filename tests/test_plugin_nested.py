"""A pytest session started inside another one in the same process (pytester's runpytest and inline_run): it
probes only when something needs the environment, and leaves the GitHub step summary to the outermost one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

# Imported before pytester takes its snapshot of sys.modules: a module first imported during a test is
# dropped at its end, and the probe the tests replace would then be imported afresh, unreplaced.
import pytest_cudnn.probing.host  # noqa: F401
from pytest_cudnn.environment import Environment

from .test_plugin import healthy, snapshot


class Probes:
    """Stands in for the probe: counts the calls and keeps what each was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, Mapping[str, str] | None]] = []
        self.children: list[Any] = []  # the child interpreter each call was handed

    def __call__(
        self, options: Any = None, environ: Mapping[str, str] | None = None, child: Any = None, **kwargs: Any
    ) -> Environment:
        self.calls.append((options, None if environ is None else dict(environ)))
        self.children.append(child)
        return healthy()


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> Probes:
    fake = Probes()
    monkeypatch.setattr("pytest_cudnn.probing.host.probe_environment", fake)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    monkeypatch.delenv("PYTEST_CUDNN_REQUIRE_GPU", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return fake


def test_a_nested_run_without_gpu_tests_probes_nothing_and_shows_nothing(
    pytester: pytest.Pytester, probes: Probes
) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert probes.calls == []
    assert "pytest-cudnn" not in result.stdout.str()


# Run in a fresh `pytest -q` (no header: the outer run imports none of the diagnosis, as in a plugin author's suite),
# each inner run given the plugin or not; pytester drops the modules an inner run imported, so whatever a nested
# run imports, every nested run imports again.
IMPORTS_OF_A_NESTED_RUN = """
import sys

import pytest

pytest_plugins = ["pytester"]


class Imported:
    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config):
        self.modules = set(sys.modules)


def imported_by(pytester, *flags):
    before, spy = set(sys.modules), Imported()
    pytester.runpytest("-p", "no:cacheprovider", *flags, plugins=[spy]).assert_outcomes(passed=1)
    return spy.modules - before


@pytest.mark.parametrize("flags", [[], ["--junitxml=junit.xml"]])
def test_inner(pytester, flags):
    pytester.makepyfile("def test_a(): pass\\n")
    plain = imported_by(pytester, *flags)
    plugin = imported_by(pytester, "-p", "pytest_cudnn.plugin", *flags)
    print("imported for the plugin:", sorted(plugin - plain))
"""


def test_a_nested_run_that_needs_nothing_imports_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_outer=IMPORTS_OF_A_NESTED_RUN)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-q", "-s", "-p", "pytest_cudnn.plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    lines = [line for line in result.outlines if line.startswith("imported for the plugin:")]
    assert lines == ["imported for the plugin: []"] * 2


def test_a_nested_run_probes_once_when_a_test_needs_the_environment(pytester: pytest.Pytester, probes: Probes) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.requires_cudnn(">=9")
        def test_marked():
            pass

        def test_fixture(gpu):
            assert gpu.name == "NVIDIA A100-SXM4-80GB"
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    assert len(probes.calls) == 1
    # The plugin started the probe's child before importing the probe, and closed it when the probe returned,
    # although this probe never used it: no process is left behind.
    [child] = probes.children
    assert child.process.returncode is not None
    assert "pytest-cudnn:" not in result.stdout.str()  # the header was written before anything needed it


@pytest.mark.parametrize("option", ["--require-gpu", "--gpu-report=gpu.json"])
def test_a_nested_run_probes_for_the_header_when_an_option_needs_the_environment(
    pytester: pytest.Pytester, probes: Probes, option: str
) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest(option)
    result.assert_outcomes(passed=1)
    assert len(probes.calls) == 1
    result.stdout.fnmatch_lines(["pytest-cudnn: ✓ driver 550.54.15 *"])


def test_a_nested_run_shows_a_replayed_snapshot(pytester: pytest.Pytester, probes: Probes) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    path = snapshot(pytester, healthy())
    result = pytester.runpytest(f"--gpu-env={path}")
    assert probes.calls == []
    result.stdout.fnmatch_lines([f"pytest-cudnn: * [[]replayed from {path}[]]"])


def test_a_nested_run_leaves_the_step_summary_to_the_outermost(
    pytester: pytest.Pytester, probes: Probes, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile("import pytest\n@pytest.mark.requires_gpu\ndef test_a(): pass\n")
    pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}").assert_outcomes(passed=1)
    assert not summary.exists()


def test_a_nested_run_records_junit_properties_only_when_it_needed_the_environment(
    pytester: pytest.Pytester, probes: Probes
) -> None:
    xml = pytester.path / "junit.xml"
    pytester.makepyfile(test_plain="def test_a(): pass\n")
    pytester.runpytest(f"--junitxml={xml}").assert_outcomes(passed=1)
    assert "gpu." not in xml.read_text()
    assert probes.calls == []
    pytester.makepyfile(test_plain="def test_a(gpu): pass\n")
    pytester.runpytest(f"--junitxml={xml}").assert_outcomes(passed=1)
    assert '<property name="gpu.cudnn" value="9.3.0"' in xml.read_text()


def test_a_late_probe_sees_the_sessions_environment_not_what_a_test_patched(
    pytester: pytest.Pytester, probes: Probes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a nested run the probe runs in the setup of the first test that needs it, after other fixtures may
    have patched the process: it reads what the session started with."""
    monkeypatch.setenv("LD_LIBRARY_PATH", "/session/lib")
    pytester.makeconftest(
        """
        import os, sys
        import pytest

        @pytest.fixture(autouse=True)
        def patch_the_process(monkeypatch):
            monkeypatch.setenv("LD_LIBRARY_PATH", "/patched/by/a/test")
            monkeypatch.setattr(sys, "executable", "/patched/python")
        """
    )
    pytester.makepyfile("def test_a(gpu): pass\n")
    pytester.runpytest().assert_outcomes(passed=1)
    [(options, environ)] = probes.calls
    assert environ is not None
    assert environ["LD_LIBRARY_PATH"] == "/session/lib"
    assert options.python == sys.executable


# The bookkeeping of nesting cannot leak out of a run that crashed.
CRASHES = {
    "sessionstart": "def pytest_sessionstart(session):\n    raise RuntimeError('crash')\n",
    "unconfigure": "def pytest_unconfigure(config):\n    raise RuntimeError('crash')\n",
    "configure": "def pytest_configure(config):\n    raise RuntimeError('crash')\n",
    "usage": "def pytest_configure(config):\n    import pytest\n    raise pytest.UsageError('crash')\n",
    "collection": "def pytest_collection_modifyitems(items):\n    raise RuntimeError('crash')\n",
}


@pytest.mark.parametrize("crash", sorted(CRASHES))
def test_a_run_after_a_crashed_one_in_the_same_process_is_the_outermost_again(
    pytester: pytest.Pytester, tmp_path: Path, crash: str
) -> None:
    crashing = tmp_path / "crashing"
    crashing.mkdir()
    (crashing / "conftest.py").write_text(CRASHES[crash])
    (crashing / "test_c.py").write_text("def test_c(): pass\n")
    fine = tmp_path / "fine"
    fine.mkdir()
    (fine / "test_f.py").write_text("def test_f(): pass\n")
    summary = tmp_path / "summary.md"
    env = snapshot(pytester, healthy())
    script = textwrap.dedent(
        f"""
        import os
        import pytest
        try:
            pytest.main(["-p", "no:cacheprovider", "--gpu-env={env}", "--rootdir={crashing}", "{crashing}"])
        except BaseException as error:
            print("crashed:", error)
        os.environ["GITHUB_STEP_SUMMARY"] = "{summary}"
        assert pytest.main(["-p", "no:cacheprovider", "--gpu-env={env}", "--rootdir={fine}", "{fine}"]) == 0
        """
    )
    environ = {key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"}
    environ["PYTEST_ADDOPTS"] = "-p no:hypothesispytest"
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environ, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # Only the outermost session in a process writes the step summary: the second run was one.
    assert summary.read_text().count("### pytest-cudnn") == 1
