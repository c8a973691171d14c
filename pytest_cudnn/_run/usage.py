"""The uses_gpu check in the run: the state read when a checked test's setup starts, read again after its call,
judged by :func:`pytest_cudnn._run.gpu_use.judge`, noted in the test's facts, and the test failed when the GPU was not
used. Registered only once a test needs it (``--assert-gpu-used``, or the first ``uses_gpu`` test)."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

from .gpu_use import ContextState, Use, judge, primary_context

if TYPE_CHECKING:
    from .gpu import GpuDevice
    from .session import GpuRun

__all__ = ["UsageCheck"]

# The test's device and the state read at the start of its setup (None when replayed: nothing is read).
_BEFORE = pytest.StashKey[tuple["GpuDevice", ContextState | None]]()


class UsageCheck:
    def __init__(self, run: GpuRun) -> None:
        self.run = run

    def before(self, item: pytest.Item, marked: bool) -> None:
        """At the start of setup (before any fixture): the test's device, and its context state now."""
        run = self.run
        device = run.device()
        if device is None:
            if marked:  # a test that must use a GPU needs one: skipped (failed under --require-gpu) as requires_gpu
                from ..markers import Requirement
                from ..markers import judge as judge_requirement

                run.records.refuse(item, judge_requirement(Requirement("requires_gpu"), run.diagnosis))
            return  # the gpu fixture refuses on its own
        item.stash[_BEFORE] = (device, None if device.replayed else primary_context(device.cuda_index, run.timeout))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        result = yield  # a test that failed keeps its own failure: nothing is checked
        entry = item.stash.get(_BEFORE, None)
        if entry is not None:
            self.check(item, *entry)
        return result

    def check(self, item: pytest.Item, device: GpuDevice, before: ContextState | None) -> None:
        run = self.run
        name = f"{device.label}{f' {device.name}' if device.name else ''} ({device.uuid or 'no UUID'})"
        after = None if device.replayed else primary_context(device.cuda_index, run.timeout)
        listed: bool | None = None
        nvml_error: str | None = None
        if after is not None and after.loaded and after.active is False:
            # A context other than the primary one (cuCtxCreate) shows only in NVML's list; never asked when
            # libcuda is not even loaded.
            reading = device.read(holders=True)
            if reading is not None and reading.error is None:
                listed = any(holder.pid == os.getpid() for holder in reading.holders)
            elif reading is not None:
                nvml_error = reading.error
        use = judge(name, before, after, listed, nvml_error, self._frameworks())
        run.records.note(item, gpu_used=use.verdict, gpu_use=use.evidence)
        if not use.passes(run.require_gpu):
            _fail(use, run.require_gpu)

    def _frameworks(self) -> tuple[tuple[str, bool, str], ...]:
        """The run's verdicts on the frameworks the test's process already imported (never imported here)."""
        if not any(name in sys.modules for name in _framework_names()):
            return ()
        diagnosis = self.run.diagnosis
        found = []
        for name in _framework_names():
            if name in sys.modules:
                judged = diagnosis.framework(name)
                if judged is not None:
                    version = f" {judged.build.version}" if judged.build.version else ""
                    found.append((f"{name}{version}", judged.ok, judged.summary))
        return tuple(found)


def _framework_names() -> tuple[str, ...]:
    from ..signatures import FRAMEWORK_NAMES

    return tuple(FRAMEWORK_NAMES)


def _fail(use: Use, require_gpu: bool) -> None:
    marker = " [--require-gpu]" if require_gpu and use.verdict != "not used" else ""
    pytest.fail(f"pytest-cudnn: {use.evidence} [uses_gpu]{marker}", pytrace=False)
