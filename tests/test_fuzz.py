"""Property-based tests for every parser: whatever the input, a value or a clear error, never a crash."""

from __future__ import annotations

import json
import string
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn._base.versions import InvalidVersionValue, cudnn_version_from_int, tensorflow_version_field
from pytest_cudnn.devices import assign_devices, parse_visible_devices
from pytest_cudnn.environment import Environment, Gpu, InvalidSnapshot
from pytest_cudnn.frameworks.tensorflow.reading import InvalidBuildInfo, parse_build_info
from pytest_cudnn.markers import InvalidMarker, parse_marker, parse_memory
from pytest_cudnn.probe.discovery import parse_ldconfig

from .test_environment_model import sample

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
spec_alphabet = st.text(alphabet="0123456789.,<>=!~* abx", max_size=20)


@FUZZ
@given(spec=st.one_of(spec_alphabet, st.text(max_size=20), st.integers(), st.none(), st.floats()))
def test_specifier_markers_parse_or_name_the_bad_value(spec: Any) -> None:
    for marker in ("requires_cudnn", "requires_cuda", "requires_driver"):
        try:
            requirement = parse_marker(marker, (spec,), {})
        except InvalidMarker as error:
            assert str(error)
        else:
            assert requirement.spec is not None


@FUZZ
@given(
    count=st.one_of(st.integers(-3, 10), st.text(max_size=3), st.booleans()),
    memory=st.one_of(st.none(), st.integers(-5, 2**50), st.text(max_size=12), st.floats()),
    cc=st.one_of(st.none(), spec_alphabet),
    name=st.one_of(st.none(), st.text(max_size=10), st.integers()),
)
def test_requires_gpu_parses_or_names_the_bad_value(count: Any, memory: Any, cc: Any, name: Any) -> None:
    try:
        requirement = parse_marker(
            "requires_gpu", (), {"count": count, "memory": memory, "compute_capability": cc, "name": name}
        )
    except InvalidMarker as error:
        assert str(error)
    else:
        assert requirement.count >= 1
        assert requirement.memory is None or requirement.memory >= 0


@FUZZ
@given(
    number=st.one_of(st.integers(0, 10**6), st.floats(0, 10**4, allow_nan=False).map(lambda f: round(f, 2))),
    unit=st.sampled_from(["", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "gib", " GiB"]),
)
def test_memory_sizes_scale_by_their_unit(number: float, unit: str) -> None:
    value = parse_memory(f"{number}{unit}")
    factor = {"k": 1000, "m": 1000**2, "g": 1000**3, "t": 1000**4}
    key = unit.strip().lower()
    scale = 1024 ** ("kmgt".index(key[0]) + 1) if key.endswith("ib") else factor.get(key[:1], 1)
    assert value == int(Fraction(str(number)) * scale)  # exact: floats are a byte off from 2**53 up


@FUZZ
@given(text=st.text(max_size=30))
def test_memory_garbage_is_refused_clearly(text: str) -> None:
    try:
        assert parse_memory(text) >= 0
    except InvalidMarker as error:
        assert repr(text) in str(error) or "memory" in str(error)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@FUZZ
@given(data=json_values)
def test_any_json_is_a_snapshot_or_a_clear_error(data: Any) -> None:
    try:
        Environment.from_json(data, "fuzz.json")
    except InvalidSnapshot as error:
        assert str(error).startswith("fuzz.json: ")


@FUZZ
@given(
    path=st.lists(st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12), min_size=1, max_size=3),
    value=json_values,
)
def test_a_mutated_snapshot_is_read_or_refused_naming_the_field(path: list[str], value: Any) -> None:
    data = json.loads(sample().dumps())
    target = data
    for key in path[:-1]:
        target = target.get(key) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return
    target[path[-1]] = value
    try:
        Environment.from_json(data, "mutated.json")
    except InvalidSnapshot as error:
        assert str(error).startswith("mutated.json: ")


@FUZZ
@given(text=st.text(max_size=300))
def test_build_info_text_parses_or_is_refused(text: str) -> None:
    try:
        info = parse_build_info(text, "fuzz/build_info.py")
    except InvalidBuildInfo as error:
        assert str(error).startswith("fuzz/build_info.py: ")
    else:
        assert info.fields


@FUZZ
@given(
    fields=st.dictionaries(
        st.sampled_from(["cuda_version", "cudnn_version", "cuda_version_number", "is_cuda_build", "other"]),
        st.one_of(st.text(max_size=8), st.booleans(), st.integers(), st.lists(st.text(max_size=5), max_size=3)),
        max_size=4,
    ),
    shape=st.sampled_from(["constants", "dict", "ordered"]),
)
def test_build_info_literal_shapes_round_trip(fields: dict[str, Any], shape: str) -> None:
    if shape == "constants":
        source = "".join(f"{key} = {value!r}\n" for key, value in fields.items())
    elif shape == "dict":
        source = f"build_info = {fields!r}\n"
    else:
        source = f"import collections\nbuild_info = collections.OrderedDict({list(fields.items())!r})\n"
    try:
        info = parse_build_info(source)
    except InvalidBuildInfo:
        assert not fields
        return
    normal = {"cuda_version" if k == "cuda_version_number" else k: v for k, v in fields.items()}
    assert dict(info.fields) == normal or shape == "constants"


ldconfig_line = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda name, tags, path: f"\t{name} ({tags}) => {path}",
        st.text(alphabet=string.ascii_letters + ".-_0123456789", min_size=1, max_size=20),
        st.text(alphabet="libc6,x86-64 AArch64OSABI:0123456789.", max_size=30),
        st.text(max_size=30),
    ),
)


@FUZZ
@given(lines=st.lists(ldconfig_line, max_size=20), arch=st.sampled_from(["x86-64", "AArch64", ""]))
def test_ldconfig_listings_never_crash_and_keep_absolute_paths(lines: list[str], arch: str) -> None:
    for name, path in parse_ldconfig("\n".join(lines), arch):
        assert name
        assert path.startswith("/")


def gpus(n: int) -> list[Gpu]:
    return [Gpu(i, "GPU", f"GPU-{i:04d}-uuid", None, "8.0", None, None, None) for i in range(n)]


visible_entry = st.one_of(
    st.integers(-2, 9).map(str),
    st.sampled_from(["GPU-0000", "GPU-0001-uuid", "GPU-9", "GPU-", "MIG-GPU-0000/1/0", "MIG-", "-1", "", " 1 "]),
    st.text(max_size=6),
)


@FUZZ
@given(
    entries=st.lists(visible_entry, max_size=6),
    n=st.integers(0, 5),
    workers=st.integers(0, 6),
    per_worker=st.integers(1, 3),
)
def test_cuda_visible_devices_forms(entries: list[str], n: int, workers: int, per_worker: int) -> None:
    devices = gpus(n)
    visible = parse_visible_devices(",".join(entries), devices)
    assert all(device.gpu in devices and device.mig is None for device in visible.devices)
    assert len(set(visible.devices)) == len(visible.devices)
    shares = assign_devices(visible.devices, workers, per_worker)
    assert len(shares) == workers
    assert all(gpu in visible.devices for share in shares for gpu in share)


@pytest.mark.parametrize(
    ("value", "visible", "invalid"),
    [
        (None, [0, 1, 2], None),
        ("", [], None),
        ("-1", [], "-1"),
        ("2,0", [2, 0], None),
        ("0,7,1", [0], "7"),
        ("GPU-0001", [1], None),
        ("GPU-000", [], "GPU-000"),  # a prefix matching several GPUs names none
        ("1,1", [1], None),
        ("MIG-GPU-0000/1/0", [], None),
    ],
)
def test_cuda_visible_devices_table(value: str | None, visible: list[int], invalid: str | None) -> None:
    result = parse_visible_devices(value, gpus(3))
    assert [gpu.index for gpu in result.devices] == visible
    assert result.invalid == invalid


@FUZZ
@given(value=st.integers(-10, 200000))
def test_cudnn_integers_decode_or_refuse(value: int) -> None:
    try:
        major, minor, patch = cudnn_version_from_int(value)
    except InvalidVersionValue:
        return
    assert major >= 1
    assert 0 <= minor < 100
    assert 0 <= patch < 100


@FUZZ
@given(text=st.text(max_size=12))
def test_tensorflow_version_fields_normalise_or_refuse(text: str) -> None:
    try:
        value = tensorflow_version_field(text)
    except InvalidVersionValue as error:
        assert repr(text) in str(error)
    else:
        assert all(part.isdigit() for part in value.split("."))


@pytest.mark.parametrize("entry", ["¹", "٣", "0,²"])
def test_digits_of_other_scripts_name_no_device(entry: str) -> None:
    # str.isdigit() accepts superscripts and Arabic-Indic digits, which int() refuses or CUDA never reads.
    gpus = [Gpu(0, "A100", "GPU-0", None, "8.0", None, None, None)]
    visible = parse_visible_devices(entry, gpus)
    assert visible.invalid == entry.rpartition(",")[2]


@pytest.mark.parametrize("raw", ["9" * 5000, "64_" + "1" * 5000, "1." + "2" * 5000])
def test_a_build_info_version_beyond_ints_digit_limit_is_refused_not_raised(raw: str) -> None:
    with pytest.raises(InvalidVersionValue):
        tensorflow_version_field(raw)
