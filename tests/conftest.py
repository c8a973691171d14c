from __future__ import annotations

from pathlib import Path

import pytest

# Imported before pytester takes its snapshot of sys.modules: a module first imported during a test is dropped
# at its end, and the probe no_probing replaces would then be imported afresh, unreplaced.
import pytest_cudnn.probe
from pytest_cudnn.environment import Environment

from .simhost import Compiler, SimHost

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def compiler(tmp_path_factory: pytest.TempPathFactory) -> Compiler:
    return Compiler(tmp_path_factory.mktemp("stand-ins"))


@pytest.fixture
def host(tmp_path: Path, compiler: Compiler) -> SimHost:
    """An empty simulated machine: plant the components a test needs."""
    return SimHost(tmp_path / "host", compiler)


@pytest.fixture
def no_probing(monkeypatch: pytest.MonkeyPatch) -> None:
    """For in-process runs that replay snapshots: probing the machine running the tests would be a bug."""

    def refuse(*args: object, **kwargs: object) -> Environment:
        raise AssertionError("pytest-cudnn probed the host")

    monkeypatch.setattr(pytest_cudnn.probe, "probe_environment", refuse)
    # Hypothesis' own plugin imports much of hypothesis at every inner run's summary: 2 s a run.
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    monkeypatch.delenv("PYTEST_CUDNN_REQUIRE_GPU", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cudnn-wheel",
        action="store_true",
        help="run the tests against the real nvidia-cudnn-cu12 wheel (~700 MB; tox -e cudnn-wheel installs it)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The real-cuDNN tests are deselected (not skipped) unless asked for: the wheel is too big for every run."""
    if config.getoption("--cudnn-wheel"):
        return
    selected = [item for item in items if not item.get_closest_marker("cudnn_wheel")]
    deselected = [item for item in items if item.get_closest_marker("cudnn_wheel")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
