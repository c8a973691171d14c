"""The fast lane is honest: a test not marked e2e that starts a process fails, naming it, and the marks select what
they say (tests/lanes.py)."""

from __future__ import annotations

import pytest

SUITE = """
    import os, subprocess, sys
    import pytest
    from hypothesis import given, settings, strategies as st

    @pytest.fixture
    def compiler():
        return "stand-in"

    def test_runs_a_child():
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    def test_swallows_the_refusal():
        try:
            subprocess.run([sys.executable, "-c", "pass"], check=True)
        except BaseException:
            pass

    def test_forks():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    @pytest.fixture
    def child():
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    def test_through_a_fixture(child):
        pass

    @pytest.mark.e2e
    def test_marked_by_hand():
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    def test_marked_by_its_fixture(compiler):
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    def test_pure():
        assert sum([1, 2]) == 3

    @settings(max_examples=3)
    @given(st.integers())
    def test_a_property(n):
        assert n == n
"""

# The inner runs: this plugin alone, without Hypothesis' own plugin (2 s of imports a run).
INNER = ("-p", "tests.lanes", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")

REFUSED = ["test_runs_a_child", "test_swallows_the_refusal", "test_forks", "test_through_a_fixture"]


def test_a_test_not_marked_e2e_that_starts_a_process_fails_naming_what_it_started(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    recorded = pytester.inline_run(*INNER)
    reports = [r for r in recorded.getreports("pytest_runtest_logreport") if r.when == "call" or r.failed]
    outcomes = {r.nodeid.split("::")[-1]: r.outcome for r in reports}
    assert {name for name, outcome in outcomes.items() if outcome == "failed"} == set(REFUSED)
    assert outcomes["test_marked_by_hand"] == outcomes["test_marked_by_its_fixture"] == "passed"
    assert outcomes["test_pure"] == outcomes["test_a_property"] == "passed"
    said = {r.nodeid.split("::")[-1]: r.longreprtext for r in reports if r.failed}
    assert "started a child process but is not marked e2e" in said["test_swallows_the_refusal"]
    assert "subprocess.Popen: " in said["test_runs_a_child"]
    assert "-c pass" in said["test_runs_a_child"]
    assert "os.fork" in said["test_forks"]


@pytest.mark.parametrize(
    ("selection", "selected"),
    [
        ("e2e", {"test_marked_by_hand", "test_marked_by_its_fixture"}),
        ("not e2e and not slow", {*REFUSED, "test_pure"}),
        ("slow", {"test_a_property"}),
    ],
)
def test_the_marks_select_the_lanes(pytester: pytest.Pytester, selection: str, selected: set[str]) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(*INNER, "--co", "-q", "-m", selection)
    assert {line.split("::")[-1] for line in result.stdout.lines if "::" in line} == selected
