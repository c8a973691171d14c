from __future__ import annotations

import os
from pathlib import Path

import pytest

# Imported before pytester takes its snapshot of sys.modules: a module first imported during a test is dropped
# at its end, and the probe no_probing replaces would then be imported afresh, unreplaced.
import pytest_cudnn.probing.host
from pytest_cudnn.environment import Environment

from .simhost import Compiler, SimHost

# tests/lanes.py: the e2e and slow marks, and the guard that keeps a test not marked e2e from starting a process.
pytest_plugins = ["pytester", "tests.lanes"]


@pytest.fixture(scope="session")
def compiler(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Compiler:
    """The stand-ins' build cache, one per run: under pytest-xdist the workers share it (it lies in the run's
    temporary folder, above each worker's own), so each stand-in is compiled once, not once per worker."""
    base = tmp_path_factory.getbasetemp()
    return Compiler((base.parent if hasattr(request.config, "workerinput") else base) / "stand-ins")


@pytest.fixture
def host(tmp_path: Path, compiler: Compiler) -> SimHost:
    """An empty simulated machine: plant the components a test needs."""
    return SimHost(tmp_path / "host", compiler)


@pytest.fixture
def no_probing(monkeypatch: pytest.MonkeyPatch) -> None:
    """For in-process runs that replay snapshots: probing the machine running the tests would be a bug."""

    def refuse(*args: object, **kwargs: object) -> Environment:
        raise AssertionError("pytest-cudnn probed the host")

    monkeypatch.setattr(pytest_cudnn.probing.host, "probe_environment", refuse)
    # Hypothesis' own plugin imports much of hypothesis at every inner run's summary: 2 s a run.
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    monkeypatch.delenv("PYTEST_CUDNN_REQUIRE_GPU", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


# Before pytest-xdist's own pytest_cmdline_main (also tryfirst; a conftest's hooks are registered after it, so
# they are called first).
@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The whole suite (``pytest`` with no path: its testpaths) runs under pytest-xdist, one worker per CPU
    (``--dist loadgroup``: tests marked with one ``xdist_group`` share a worker); most of its time is spent in child
    processes, each a single thread. Named files and tests run in this process, where starting workers would cost
    more than they save. ``-n N`` or ``--dist`` chooses for itself; ``-n0`` or ``-p no:xdist`` runs it all here."""
    # The probe's cache of file facts (pytest_cudnn/probe/facts.py) of this suite's own runs, the outer session and
    # in-process pytester runs, goes under the checkout, never into the home folder of whoever runs the tests;
    # simulated hosts keep theirs under their own HOME. The workers inherit it.
    if "workerinput" not in vars(config):
        os.environ["XDG_CACHE_HOME"] = str(config.rootpath / ".pytest_cache" / "xdg")
    option = config.option
    if (
        not hasattr(config, "workerinput")  # a worker: its command line is the controller's, and it must not fork
        and config.pluginmanager.has_plugin("xdist")
        and config.args_source is pytest.Config.ArgsSource.TESTPATHS
        and getattr(option, "numprocesses", None) is None
        and getattr(option, "dist", "no") == "no"
        and not getattr(option, "tx", None)
        and not option.usepdb
        and not option.collectonly
    ):
        option.numprocesses = "auto"
        option.dist = "loadgroup"


# pytest-timeout (a test extra): a test that hangs fails alone after 5 minutes (the slowest takes 20-40 s on a loaded
# 2-core box; the opt-in tiers set their own). Set here, not in pyproject's ini: other pytest runs in a checkout (the
# README's example suite, with the package alone installed and --strict-config) must not need the plugin. "signal"
# (SIGALRM, then pytest.fail in the test) ends that one test and the run goes on, in an xdist worker as in one
# process: tests run in the worker's main thread. "thread" would os._exit the whole process, losing teardown and the
# JUnit XML (pytest-timeout's README, "Timeout Methods"). The suite's child processes do not inherit the timer
# (setitimer(2): "A child created via fork(2) does not inherit its parent's interval timers"), subprocess.run kills
# its child when the test is interrupted, and pytest_cudnn/_base/deadline.py blocks SIGALRM in its worker threads, so
# the alarm reaches the test's own thread.
SUITE_TIMEOUT = 300.0


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before pytest-timeout reads its settings: the suite's bound, unless the command line gives one."""
    if not config.pluginmanager.has_plugin("timeout"):
        return
    if getattr(config.option, "timeout", None) is None:
        config.option.timeout = SUITE_TIMEOUT
    if getattr(config.option, "timeout_method", None) is None:
        config.option.timeout_method = "signal"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cudnn-wheel",
        action="store_true",
        help="run the tests against the real nvidia-cudnn-cu12 wheel (~700 MB; tox -e cudnn-wheel installs it)",
    )
    parser.addoption(
        "--framework-wheels",
        action="store_true",
        help="run the tests against real CUDA builds of torch, JAX and TensorFlow (~12 GB; tox -e frameworks)",
    )
    parser.addoption(
        "--cuobjdump",
        action="store_true",
        help="cross-check the fatbin reader with cuobjdump (pip install nvidia-cuda-cuobjdump; tox -e cuobjdump)",
    )
    parser.addoption(
        "--real-gpu",
        action="store_true",
        help="run the real-GPU tier (tests/test_real_gpu.py) on this machine's GPU, not on a stand-in host",
    )


# Each opt-in option and the marker of the tests it selects.
_OPT_INS = {
    "--cudnn-wheel": "cudnn_wheel",
    "--framework-wheels": "framework_wheels",
    "--real-gpu": "real_gpu",
    "--cuobjdump": "cuobjdump",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests of real wheels are deselected (not skipped) unless asked for: the wheels are too big for every run."""
    markers = [marker for option, marker in _OPT_INS.items() if not config.getoption(option)]
    if not markers:
        return
    selected = [item for item in items if not any(item.get_closest_marker(marker) for marker in markers)]
    deselected = [item for item in items if any(item.get_closest_marker(marker) for marker in markers)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
