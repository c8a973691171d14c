"""The fast lane: which tests are end to end (marker ``e2e``) or slow (``slow``), and the guard that keeps the others
honest. A plugin: tests/conftest.py loads it.

A test is end to end when it starts a child process: it compiles a stand-in library (``compiler``), runs the
product on a simulated host (``host``, which needs the compiler), runs pytest inside pytest (``pytester``), or runs
the CLI, a fork or a helper process itself. The fixtures are seen at collection: ``item.fixturenames`` is the
closure of what a test requests, so a fixture built on ``host`` counts too. A test that starts a process without
one of them carries ``pytest.mark.e2e`` (or its module's ``pytestmark``). ``pytest -m "not e2e"`` then runs the
tests that start nothing.

Of those, some take seconds of CPU each (``slow``): the property tests (Hypothesis runs each 100 to 300 times;
marked here, found by the attribute Hypothesis sets on the tests it wraps) and, marked by hand, the tests that
measure growth or bounds over thousands of entries or wait out a real timeout. The fast lane is
``pytest -n0 -m "not e2e and not slow"`` (``tox -e fast``): the pure tests of the dev loop, in seconds.

Every test not marked e2e runs under ``no_children``: each way Python starts a process raises an audit event
(PEP 578; the Python docs' "Audit events table": ``subprocess.Popen``, ``os.fork``, ``os.forkpty``,
``os.posix_spawn``, ``os.system``, ``os.exec``; ``os.spawn*`` forks), a hook refuses it, and the test fails naming
what it started, even where the code under test swallows the refusal. The one way past it: multiprocessing's
"spawn" and "forkserver" start methods call ``_posixsubprocess.fork_exec`` directly, which raises no event; neither
the product nor the tests use multiprocessing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager

import pytest

__all__ = ["END_TO_END_FIXTURES", "MARKERS", "StartedAChild", "mark_lanes", "no_children"]

# The fixtures whose use makes a test end to end: each compiles, or runs the product or pytest in a child process
# (pytester's in-process runs are pytest inside pytest: slow, and counted here with its subprocess runs).
END_TO_END_FIXTURES = frozenset({"compiler", "host", "pytester"})

MARKERS = {
    "e2e": "starts a child process: a compiler, a simulated host, pytest in pytest, the CLI (set from the fixtures"
    " a test uses, or by hand; tests/lanes.py)",
    "slow": "starts nothing but takes seconds: a property test (set by tests/lanes.py), a growth or bound measure"
    " over thousands of entries, a real timeout (by hand). The fast lane: pytest -n0 -m 'not e2e and not slow'",
}

_STARTS_A_PROCESS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.system", "os.exec"})


class StartedAChild(BaseException):
    """Raised where a test not marked e2e starts a process. A BaseException: the product catches Exception around
    its child processes (it never raises into pytest), which would turn the refusal into a finding."""


class _Guard:
    """The audit hook's state: a hook cannot be removed once added (sys.addaudithook), so it is added once per
    process and switched on around each guarded phase of a test."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.test: str | None = None
        self.started: list[str] = []
        self.installed = False

    def audit(self, event: str, args: tuple[object, ...]) -> None:
        if event not in _STARTS_A_PROCESS or self.test is None:
            return
        what = f"{event}{_shown(args)}"
        with self.lock:
            self.started.append(what)
        raise StartedAChild(f"{self.test} started a child process ({what}) but is not marked e2e ({__name__})")


def _shown(args: Sequence[object]) -> str:
    """The command of an audited call, cut short: ``subprocess.Popen``'s first argument is the executable, its
    second the arguments."""
    if len(args) >= 2 and isinstance(args[1], (list, tuple)):
        return f": {' '.join(map(str, args[1]))[:200]}"
    if args and isinstance(args[0], (str, bytes)):
        return f": {args[0]!s:.200}"
    return ""


_GUARD = _Guard()


def mark_lanes(items: Sequence[pytest.Item]) -> None:
    """Mark e2e each test that requests one of ``END_TO_END_FIXTURES``, itself or through another fixture, and slow
    each property test."""
    for item in items:
        if END_TO_END_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.slow)


@contextmanager
def no_children(item: pytest.Item) -> Iterator[None]:
    """Around a phase of a test not marked e2e: a process it starts is refused, and the test fails."""
    if not _GUARD.installed:
        sys.addaudithook(_GUARD.audit)
        _GUARD.installed = True
    _GUARD.test, _GUARD.started = item.nodeid, []
    try:
        yield
    finally:
        _GUARD.test = None
    if _GUARD.started:
        pytest.fail(
            f"{item.nodeid} started a child process but is not marked e2e: mark it with pytest.mark.e2e"
            f" (tests/lanes.py). It started: {'; '.join(_GUARD.started)}",
            pytrace=False,
        )


def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


# Before pytest's own -m selection (a plain hook of a plugin loaded earlier), which is to see these marks.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_lanes(items)


# A test not marked e2e fails if it starts a process in its setup, its call or its teardown.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    return (yield) if item.get_closest_marker("e2e") else (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    return (yield) if item.get_closest_marker("e2e") else (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    return (yield) if item.get_closest_marker("e2e") else (yield from _guarded(item))


def _guarded(item: pytest.Item) -> Generator[None, None, None]:
    with no_children(item):
        return (yield)
