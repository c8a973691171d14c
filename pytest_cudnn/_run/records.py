"""Each test's GPU facts, and the run's refusals: what the summary, the skip groups and ``--gpu-report``'s ``tests``
are made of. The facts travel on each test's reports (:data:`REPORT_ATTRIBUTE`), so that they reach an xdist
controller; a fixture's refusal carries its facts on the exception it raises."""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from .._base.text import group_reason

if TYPE_CHECKING:
    from ..markers import Outcome

__all__ = ["FACTS", "REPORT_ATTRIBUTE", "Records"]

# The TestReport attribute a test's GPU facts travel under. Reports carry arbitrary extra attributes through
# pytest's own report serialisation (pytest_report_to_serializable, which pytest-xdist uses), so the facts reach
# the controller without touching item.user_properties, which junitxml writes into every <testcase>.
REPORT_ATTRIBUTE = "pytest_cudnn"
FACTS = pytest.StashKey[dict[str, Any]]()
_FACTS = FACTS


class Records:
    """The facts of one run's tests, where they are noted (each process) and where they arrive (the process that
    gathers reports: the xdist controller, or this one)."""

    def __init__(self, config: pytest.Config, require_gpu: bool, worker_id: str | None) -> None:
        self.config = config
        self.require_gpu = require_gpu
        self.worker_id = worker_id
        # (nodeid, xdist worker) -> the test's facts: under --dist each a test runs on every worker, and each run
        # is its own entry (its host, its outcome, its reason)
        self.tests: dict[tuple[str, str | None], dict[str, Any]] = {}
        self.skips: dict[str, list[str]] = {}
        # A fixture's refusal -> its facts; weak, so only the exceptions pytest still holds (a session-scoped
        # fixture's, raised again in each test that asks for it) stay.
        self._refusals: weakref.WeakKeyDictionary[BaseException, dict[str, Any]] = weakref.WeakKeyDictionary()
        # A marker's refusal raised here (under -p no:skipping), to be reported at the test's own line.
        self._raised_skips: weakref.WeakSet[BaseException] = weakref.WeakSet()
        self.facts_plugin: object | None = None  # registered on the first fact: unmarked suites never pay for it
        self._active = False

    def note(self, item: pytest.Item, **facts: Any) -> None:
        """Remember a fact of ``item``'s; it travels on the item's reports (see REPORT_ATTRIBUTE)."""
        if self.worker_id:
            facts["worker"] = self.worker_id
        item.stash.setdefault(_FACTS, {}).update(facts)
        if not self._active:
            self.activate()

    def activate(self) -> None:
        if not self._active and self.facts_plugin is not None:
            self._active = True
            self.config.pluginmanager.register(self.facts_plugin, "cudnn-facts")

    def refuse(self, item: pytest.Item, outcome: Outcome) -> None:
        """A requirement marker's environment skip, or a failure under --require-gpu."""
        self.note(item, reason=outcome.message, cause=outcome.cause)
        if self.require_gpu:
            pytest.fail(f"{outcome.message} [--require-gpu]", pytrace=False)
        if self.config.pluginmanager.has_plugin("skipping"):
            # A skip mark, evaluated by pytest's own skipping plugin right after this hook, reports the test's own
            # location rather than this file's.
            item.add_marker(pytest.mark.skip(reason=outcome.message))
            return
        # -p no:skipping: nothing evaluates skip marks, and the test would run on a stack that cannot run it. A
        # skip raised here is what pytest.skip() in the test is, which needs no plugin; its report is moved to
        # the test's line (relocate_skip).
        error = pytest.skip.Exception(outcome.message)
        self._raised_skips.add(error)
        raise error

    def relocate_skip(self, item: pytest.Item, error: BaseException | None, report: pytest.TestReport) -> None:
        """A marker's skip raised by :meth:`refuse` is reported at the test's line, as a skip mark's is, not at
        this file's."""
        # The type first: the test's own exception may not be hashable (a dataclass exception), and a WeakSet
        # lookup hashes it.
        if not isinstance(error, pytest.skip.Exception) or not isinstance(report.longrepr, tuple):
            return
        if error not in self._raised_skips:
            return
        path, line, _ = item.reportinfo()
        report.longrepr = (os.fspath(path), (line or 0) + 1, report.longrepr[2])

    def refuse_in_fixture(self, outcome: Outcome) -> NoReturn:
        """A fixture's environment skip, or a failure under --require-gpu. The facts go with the exception: a
        session-scoped fixture has no test of its own (its request.node is the Session), and pytest raises the
        same exception again in every test that asks for it."""
        error: BaseException
        if self.require_gpu:
            error = pytest.fail.Exception(f"{outcome.message} [--require-gpu]", pytrace=False)
        else:
            error = pytest.skip.Exception(outcome.message)
        self._refusals[error] = {"reason": outcome.message, "cause": outcome.cause}
        self.activate()
        raise error

    def facts_of(self, item: pytest.Item, error: BaseException | None) -> dict[str, Any] | None:
        facts = item.stash.get(_FACTS, None)
        # Only pytest's outcome exceptions can be refusals (and be looked up weakly: builtin ones cannot).
        if error is not None and self._refusals and isinstance(error, (pytest.skip.Exception, pytest.fail.Exception)):
            refused = self._refusals.get(error)
            if refused is not None:
                facts = {**(facts or {}), **refused}
                if self.worker_id:
                    facts["worker"] = self.worker_id
        return facts or None

    def record(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        """Gather what the (possibly remote) test recorded; runs where reports arrive: the controller. Other
        plugins send CollectReports through pytest_runtest_logreport too (pytest's own tests do)."""
        facts = getattr(report, REPORT_ATTRIBUTE, None)
        if not isinstance(report, pytest.TestReport) or not isinstance(facts, dict) or not facts:
            return
        worker = facts.get("worker")
        entry = self.tests.setdefault((report.nodeid, worker if isinstance(worker, str) else None), {})
        for key in ("requirements", "gpu", "worker", "gpu_used", "gpu_use"):
            if key in facts:
                entry[key] = facts[key]
        if "reason" in facts and "reason" not in entry:
            entry["reason"] = facts["reason"]
            entry["cause"] = facts.get("cause", "other")
            self.skips.setdefault(entry["cause"], []).append(facts["reason"])
        if report.when == "call" or report.outcome != "passed" or "outcome" not in entry:
            entry["outcome"] = report.outcome

    def gpu_use_counts(self) -> tuple[int, int]:
        """Of the tests checked for GPU use (uses_gpu, --assert-gpu-used): how many did not use their GPU, and how
        many could not be told (replayed)."""
        verdicts = [str(facts["gpu_used"]) for facts in self.tests.values() if "gpu_used" in facts]
        if not verdicts:  # nothing checked: the check's module (and ctypes) is never imported
            return 0, 0
        from .gpu_use import fell_back

        return fell_back(verdicts)

    def skip_groups(self) -> list[tuple[str, int, str]]:
        groups = [(cause, len(messages), group_reason(messages)) for cause, messages in self.skips.items()]
        return sorted(groups, key=lambda group: -group[1])
