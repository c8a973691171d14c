"""A snapshot's values are checked when it is loaded, so that nothing after loading can trip on one: whatever
value a hand-edited snapshot puts in whatever field, loading refuses it naming the field, or the diagnosis, the
doctor's text and JSON, the pytest header and the markers all work on it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn.diagnosis import diagnose, judge_environment, selected_cudnn, selected_runtime, verdict
from pytest_cudnn.environment import Environment, InvalidSnapshot
from pytest_cudnn.markers import judge, parse_marker
from pytest_cudnn.report import doctor_json, doctor_summary, doctor_text, header_lines, markdown_summary

from .envbuilder import EnvBuilder

EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "snapshots").glob("*.json"))
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _base() -> dict[str, Any]:
    builder = EnvBuilder.healthy()
    builder.variables["CUDA_VISIBLE_DEVICES"] = "0"
    data: dict[str, Any] = builder.build().to_json()
    return data


BASES = [_base(), *(json.loads(path.read_text()) for path in EXAMPLES)]


def _leaves(data: Any, where: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, (*where, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _leaves(value, (*where, index))
    elif where[:1] not in (("schema",), ("schema_version",)):
        yield where


# Values of the shapes the parsers after loading read, and near misses of them.
version_like = st.one_of(
    st.from_regex(r"\A-?[0-9]{1,6}(\.[0-9x]{0,3}){0,4}\Z"),
    st.sampled_from(["", " ", "9.x", "x.9", ".", "1..2", "sm_80", "64_101", "\u0669.1.0", "1e3", "nan", "v9"]),
    st.text(max_size=8),
)
values = st.one_of(
    version_like,
    st.integers(-(2**65), 2**65),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(draw(st.sampled_from(BASES))))
    for _ in range(draw(st.integers(1, 3))):
        *parents, last = draw(st.sampled_from(sorted(_leaves(data), key=str)))
        target: Any = data
        for key in parents:
            target = target[key]
        target[last] = draw(values)
    return data


def _use(env: Environment) -> None:
    """Everything that reads an environment after it is loaded."""
    findings = diagnose(env)
    result = verdict(findings)
    doctor_text(judge_environment(env, tuple(findings)), result, source="fuzz.json")
    doctor_summary(judge_environment(env, tuple(findings)), result, source="fuzz.json")
    json.dumps(doctor_json(judge_environment(env, tuple(findings)), result))
    markdown_summary(judge_environment(env, tuple(findings)), [])
    header_lines(
        judge_environment(env, tuple(findings)),
        runtime=selected_runtime(env),
        cudnn=selected_cudnn(env),
        verbose=True,
        source="x",
    )
    for name, args, kwargs in (
        ("requires_cudnn", (">=8",), {}),
        ("requires_cuda", (">=11",), {}),
        ("requires_driver", (">=450",), {}),
        ("requires_tensorflow", (">=2",), {"gpu": True}),
        ("requires_gpu", (), {"count": 1, "memory": "1GiB", "compute_capability": ">=7.0", "name": "*A100*"}),
    ):
        judge(parse_marker(name, args, kwargs), judge_environment(env, tuple(findings)))


@FUZZ
@given(data=mutated())
def test_a_hand_edited_snapshot_is_refused_or_works_everywhere(data: dict[str, Any]) -> None:
    try:
        env = Environment.from_json(data, "fuzz.json")
    except InvalidSnapshot as error:
        problem = str(error)
    else:
        _use(env)
        assert Environment.from_json(env.to_json()) == env
        return
    assert problem.startswith("fuzz.json: ")
    assert "\n" not in problem


@pytest.mark.parametrize("data", BASES, ids=["envbuilder", *(path.stem for path in EXAMPLES)])
def test_the_bases_load_and_round_trip(data: dict[str, Any]) -> None:
    env = Environment.from_json(data)
    _use(env)
    assert Environment.from_json(env.to_json()) == env
