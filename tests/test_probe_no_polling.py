"""Probing waits on its processes without polling through module globals: a test that patches ``time.sleep`` or
``time.monotonic`` and runs pytest in-process (pytest-rerunfailures' own suite does) sees no call from the probe.

subprocess's ``communicate(timeout=...)`` and ``run(timeout=...)`` end in ``Popen._wait``, which calls
``time.sleep`` in a loop until the process is reaped."""

from __future__ import annotations

import time
from typing import Any

import pytest

from pytest_cudnn.environment import Environment
from pytest_cudnn.probing.host import probe_environment

from .simhost import SimGpu, SimHost


def comparable(env: Environment) -> dict[str, Any]:
    data = env.to_json()
    for key in ("probed_at", "probe_seconds"):
        data.pop(key)
    return data


@pytest.fixture
def stack(host: SimHost) -> dict[str, str]:
    """A host with a driver, a runtime and a cuDNN, so every kind of probe job runs."""
    host.add_driver([SimGpu()])
    host.add_stack("usr/local/cuda-12.2/lib64", 12020, (9, 1, 0))
    return host.environ()


def test_probing_calls_no_sleep(stack: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    expected = comparable(probe_environment(environ=stack))
    calls: list[float] = []
    monkeypatch.setattr(time, "sleep", calls.append)
    for _ in range(5):  # a wait that polls does so only when the process has not exited yet: give it chances
        assert comparable(probe_environment(environ=stack)) == expected
    assert calls == []


def test_probing_survives_a_clock_and_a_sleep_that_raise(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = comparable(probe_environment(environ=stack))

    def refuse(*args: object) -> float:
        raise AssertionError("the probe used a time function looked up through the time module")

    monkeypatch.setattr(time, "sleep", refuse)
    monkeypatch.setattr(time, "monotonic", refuse)
    for _ in range(5):
        assert comparable(probe_environment(environ=stack)) == expected
