"""Whatever an environment holds, the diagnosis and every rendering of it answer: they never raise.

An :class:`Environment` comes from a probe of a machine nobody controls, or from a snapshot file somebody wrote.
Any field may be absent, odd or hostile, so these properties generate environments field by field from the
model's own type hints, mixing realistic values (so the rules get past their first checks) with garbage and
control characters, and require that ``diagnose``, the verdict, the doctor's text and JSON, the session header,
the Markdown summary and every marker's judgement return, and that what they return for a terminal is printable.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn.diagnosis import diagnose, judge_environment, selected_cudnn, selected_runtime, verdict
from pytest_cudnn.environment import Environment
from pytest_cudnn.markers import MARKERS, parse_marker
from pytest_cudnn.report import doctor_json, doctor_summary, doctor_text, header_lines, markdown_summary

# Values that real environments hold, so that rules reach their later branches: versions in every encoding the
# vendors use, paths that several copies and resolutions share, sonames, architectures, hosts.
REALISTIC = (
    "",
    "0",
    "8.0",
    "7.5",
    "3.5",
    "9.0",
    "10.1",
    "11.0",
    "11.8",
    "12.4",
    "12.9",
    "13.0",
    "13.2",
    "7.6.5",
    "8.9.7",
    "9.1.0",
    "9.3.0",
    "9.10.0",
    "9.x",
    "2.3.1",
    "2.14.1",
    "2.18.0",
    "535.104.05",
    "450.51.05",
    "418.87.01",
    "580.65.06",
    "64_101",
    "64_8",
    "sm_80",
    "compute_90",
    "sm_90a",
    "Linux",
    "Windows",
    "3.11.7",
    "3.7",
    "libcudart.so.12",
    "libcudart.so.10.1",
    "libcudnn.so.8",
    "libcudnn.so.9",
    "cudart64_101.dll",
    "cudnn64_7.dll",
    "/usr/local/cuda/lib64/libcudart.so.12",
    "/usr/local/cuda/lib64/libcudnn.so.8",
    "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
    "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib",
    "C:\\CUDA\\bin\\cudnn64_8.dll",
    "GPU-00000000-aaaa-bbbb-cccc-000000000000",
    "MIG-11111111-2222-3333-4444-555555555555",
    "0,1",
    "PCI_BUS_ID",
    "tensorflow",
    "nvidia-cudnn-cu12",
    "9.3.0.75",
    "\x1b[31mred\x1b[0m",
    "line\nbreak",
    "a|b<c>",
    "\x07\x08\r",
    # Beyond int()'s 4300-digit limit: packaging raises a plain ValueError for these, not InvalidVersion.
    "9" * 5000,
    "1." + "9" * 5000,
    "64_" + "1" * 5000,
)
VARIABLES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH", "CUDA_HOME", "CONDA_PREFIX", "PATH")

texts = st.one_of(st.sampled_from(REALISTIC), st.text(max_size=12))
integers = st.one_of(
    st.sampled_from([0, 1, 2, 9, 12, 18, 35, 36, 100, 1001, 7605, 8907, 90100, 11080, 12040, 12090, 13000]),
    st.integers(min_value=-(2**40), max_value=2**70),
)
floats = st.floats(allow_nan=True, allow_infinity=True)


def _strategy(tp: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """A strategy for a value of type ``tp`` as the environment model annotates it."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        return st.one_of(*(_strategy(option, depth) for option in get_args(tp)))
    if tp is type(None):
        return st.none()
    if tp is str:
        return texts
    if tp is bool:
        return st.booleans()
    if tp is int:
        return integers
    if tp is float:
        return floats
    if tp is Any:
        return texts
    if origin is tuple:
        return st.lists(_strategy(get_args(tp)[0], depth + 1), max_size=3 if depth < 2 else 1).map(tuple)
    if origin in (Mapping, dict):
        return st.dictionaries(st.one_of(st.sampled_from(VARIABLES), texts), texts, max_size=4)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from(list(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = get_type_hints(tp)
        fields = {field.name: _strategy(hints[field.name], depth + 1) for field in dataclasses.fields(tp)}
        return st.fixed_dictionaries(fields).map(lambda values: tp(**values))
    raise TypeError(f"no strategy for {tp!r}")  # pragma: no cover - a new model type needs one


environments = typing.cast("st.SearchStrategy[Environment]", _strategy(Environment))

MARKER_CASES: tuple[tuple[str, tuple[Any, ...], dict[str, Any]], ...] = (
    ("requires_cudnn", (">=8.9,<10",), {}),
    ("requires_cudnn", ("9",), {}),
    ("requires_cuda", (">=12",), {}),
    ("requires_driver", (">=535",), {}),
    ("requires_gpu", (), {}),
    ("requires_gpu", (2,), {"memory": "16GiB", "compute_capability": ">=8.0", "name": "*A100*"}),
    ("requires_tensorflow", (), {}),
    ("requires_tensorflow", ("~=2.18",), {"gpu": False}),
    ("requires_torch", (), {}),
    ("requires_torch", (">=2.5",), {"gpu": False}),
    ("requires_jax", (">=0.4",), {}),
    ("requires_cupy", (), {}),
    ("requires_onnxruntime", (">=1.20",), {}),
    ("requires_cudnn", (">=9",), {"framework": "torch"}),
    ("requires_cuda", (">=12",), {"framework": "jax"}),
    ("requires_nccl", (">=2.21",), {}),
    ("requires_nccl", (), {"framework": "torch"}),
    ("requires_cublas", (">=12",), {"framework": "jax"}),
)
REQUIREMENTS = [parse_marker(name, args, kwargs) for name, args, kwargs in MARKER_CASES]
assert {requirement.marker for requirement in REQUIREMENTS} == set(MARKERS)


def _printable(text: str, allowed: str = "") -> bool:
    return all(char.isprintable() or char in allowed for char in text)


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(env=environments)
def test_the_diagnosis_and_every_rendering_answer_for_any_environment(env: Environment) -> None:
    findings = diagnose(env)
    result = verdict(findings)
    text = doctor_text(judge_environment(env, tuple(findings)), result, source="snap.json")
    assert _printable(text, "\n"), text
    summary = doctor_summary(judge_environment(env, tuple(findings)), result, source="snap.json")
    assert _printable(summary, "\n"), summary
    document = json.dumps(doctor_json(judge_environment(env, tuple(findings)), result))
    assert json.loads(document)["verdict"]["ok"] is result.ok
    for verbose in (False, True):
        for line in header_lines(
            judge_environment(env, tuple(findings)),
            runtime=selected_runtime(env),
            cudnn=selected_cudnn(env),
            verbose=verbose,
            source="snap.json",
        ):
            assert _printable(line), line
    summary = markdown_summary(
        judge_environment(env, tuple(findings)), [("cudnn-version", 2, "requires cuDNN >=9; found \x1b[0m|")]
    )
    assert _printable(summary, "\n"), summary


@SETTINGS
@given(env=environments)
def test_every_marker_is_judged_for_any_environment(env: Environment) -> None:
    from pytest_cudnn.markers import judge

    findings = diagnose(env)
    for requirement in REQUIREMENTS:
        outcome = judge(requirement, judge_environment(env, tuple(findings)))
        assert _printable(outcome.message), outcome.message
        assert outcome.ok or outcome.cause


HOSTILE = ("9" * 5000, "1." + "9" * 5000, "\x1b[2J\r", "", "9.x")


def _string_fields(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path (field names and tuple positions) of every string in a model value."""
    if isinstance(value, enum.Enum):
        return []  # State and Via are str enums: their members are the model's own, not text from elsewhere
    if isinstance(value, str):
        return [path]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [p for f in dataclasses.fields(value) for p in _string_fields(getattr(value, f.name), (*path, f.name))]
    if isinstance(value, tuple):
        return [p for index, item in enumerate(value) for p in _string_fields(item, (*path, index))]
    return []


def _replaced(value: Any, path: tuple[Any, ...], new: str) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, tuple):
        return (*value[:head], _replaced(value[head], rest, new), *value[head + 1 :])
    return dataclasses.replace(value, **{head: _replaced(getattr(value, head), rest, new)})


def _rich() -> Environment:
    """Every component present: TensorFlow with its wheels, a second cuDNN that aborts on a missing library, a
    runtime that finds no driver, a distribution, an unreadable folder."""
    from pytest_cudnn.environment import Failure, Unreadable

    from .envbuilder import EnvBuilder

    b = EnvBuilder.healthy().distribution("nvidia-cudnn-cu12", "9.1.0.70")
    b.runtime("/opt/cuda/lib64/libcudart.so.13", 13000, driver_raw=0, status=35)
    b.cudnn("/opt/cudnn/lib/libcudnn.so.8", "8.7.0", 11080, siblings_missing=("libcudnn_ops_infer.so.8",))
    b.change(3, failure=Failure.CRASHED, missing_dependencies=("libnvrtc.so",))
    b.unreadable = [Unreadable("/opt/locked", "Permission denied")]
    b.variables["CUDA_VISIBLE_DEVICES"] = "0"
    return b.build()


@pytest.mark.slow  # every hostile value in each of 80+ fields, rendered every way
def test_a_hostile_value_in_any_one_field_is_answered() -> None:
    rich = _rich()
    paths = _string_fields(rich)
    assert len(paths) > 80
    for path in paths:
        for value in HOSTILE:
            env = _replaced(rich, path, value)
            findings = diagnose(env)
            result = verdict(findings)
            assert _printable(doctor_text(judge_environment(env, tuple(findings)), result), "\n"), path
            assert _printable(doctor_summary(judge_environment(env, tuple(findings)), result), "\n"), path
            json.dumps(doctor_json(judge_environment(env, tuple(findings)), result))
            header_lines(
                judge_environment(env, tuple(findings)), runtime=selected_runtime(env), cudnn=selected_cudnn(env)
            )
            markdown_summary(judge_environment(env, tuple(findings)), [])
            for requirement in REQUIREMENTS:
                from pytest_cudnn.markers import judge

                assert _printable(judge(requirement, judge_environment(env, tuple(findings))).message), path
