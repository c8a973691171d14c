"""Work grows linearly with what a snapshot or a report lists: GPUs, MIG devices, copies, notes, runners.

A snapshot from elsewhere is data, and within the 16 MiB limit it can list 100,000 GPUs; with ``in`` over a tuple
of devices, 10,000 GPUs took the doctor 16 s and 100,000 more than 5 minutes (field test of 2026-11-24, N4).
These tests count calls (tests/scaled.py), never time: four times the input must cost well under sixteen times
the calls that quadratic work would make. benchmarks/bench_scale.py measures the seconds.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from pytest_cudnn.diagnosis import diagnose
from pytest_cudnn.fleet.compare import compare
from pytest_cudnn.fleet.model import Fleet, Runner
from pytest_cudnn.fleet.reading import read_runner
from pytest_cudnn.fleet.render import fleet_markdown, fleet_text
from tests.scaled import DIMENSIONS, calls, counted, doctor_work, fleet_reports, grown, growth, judge_work

pytestmark = pytest.mark.slow  # each measures the work over inputs grown to thousands of entries

LINEAR = 6.0  # the most calls may grow for four times the input: 4 when linear, 16 when quadratic


def assert_linear(small: int, large: int, what: str, named: list[tuple[str, int, int]]) -> None:
    assert large < LINEAR * small, f"{what}: {small:,} calls, then {large:,} for four times as much; grew most: {named}"


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_the_doctor_reads_diagnoses_and_renders_in_linear_work(dimension: str) -> None:
    small, large = (calls(partial(doctor_work, env)) for env in (grown(dimension, 300), grown(dimension, 1200)))
    assert_linear(small.total(), large.total(), f"the doctor over {dimension}", list(growth(small, large)))


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_each_tests_judgement_costs_the_same_however_many_devices(dimension: str) -> None:
    """The plugin judges each requirement once, and a memory requirement again at every test's setup: that one
    must not walk every GPU, copy or finding. Counted: the calls 50 more tests cost, on a host four times larger."""
    per_test = []
    for size in (100, 400):
        env = counted(grown(dimension, size))
        findings = diagnose(env)
        few, many = (calls(partial(judge_work, env, findings, tests)) for tests in (10, 60))
        per_test.append(many.total() - few.total())
    assert per_test[1] < 1.5 * per_test[0], f"50 tests' judgements: {per_test[0]:,} calls, then {per_test[1]:,}"


def _runners(folder: Path, **sizes: int) -> list[Runner]:
    folder.mkdir()
    read = [read_runner(name, path) for name, path in fleet_reports(folder, **sizes)]
    assert all(isinstance(runner, Runner) for runner in read)
    return counted(read)  # type: ignore[no-any-return]


def _views(fleet: Fleet) -> list[str]:
    return [fleet_text(fleet), fleet_markdown(fleet)]


@pytest.mark.parametrize(
    ("shape", "small", "large"),
    [
        ("runners", {"runners": 50}, {"runners": 200}),
        ("findings", {"runners": 2, "findings": 200}, {"runners": 2, "findings": 800}),
        ("tests", {"runners": 2, "tests": 200}, {"runners": 2, "tests": 800}),
    ],
)
def test_the_fleet_compares_and_renders_in_linear_work(
    tmp_path: Path, shape: str, small: dict[str, int], large: dict[str, int]
) -> None:
    compared, rendered = [], []
    for name, sizes in (("small", small), ("large", large)):
        runners = _runners(tmp_path / name, **sizes)
        compared.append(calls(partial(compare, runners)))
        fleet = compare(runners)
        rendered.append(calls(partial(_views, fleet)))
    for what, (before, after) in (("comparing", compared), ("rendering", rendered)):
        assert_linear(before.total(), after.total(), f"{what} the fleet over {shape}", list(growth(before, after)))
