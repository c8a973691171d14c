from __future__ import annotations

from pathlib import Path

import pytest

from .simhost import Compiler, SimHost

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def compiler(tmp_path_factory: pytest.TempPathFactory) -> Compiler:
    return Compiler(tmp_path_factory.mktemp("stand-ins"))


@pytest.fixture
def host(tmp_path: Path, compiler: Compiler) -> SimHost:
    """An empty simulated machine: plant the components a test needs."""
    return SimHost(tmp_path / "host", compiler)
