from __future__ import annotations

import pytest

from pytest_cudnn._base.versions import (
    InvalidVersionValue,
    cuda_version_from_int,
    cudnn_version_from_int,
    tensorflow_version_field,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(12090, "12.9"), (13000, "13.0"), (11080, "11.8"), (10010, "10.1"), (9020, "9.2"), (12040, "12.4")],
)
def test_cuda_integers_decode_to_major_minor(value: int, expected: str) -> None:
    assert cuda_version_from_int(value) == expected


@pytest.mark.parametrize("value", [0, -1, -12090])
def test_cuda_integer_zero_or_negative_is_refused(value: int) -> None:
    with pytest.raises(InvalidVersionValue, match=str(value)):
        cuda_version_from_int(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # Below 9: major*1000 + minor*100 + patch.
        (7605, (7, 6, 5)),
        (7104, (7, 1, 4)),
        (8005, (8, 0, 5)),
        (8906, (8, 9, 6)),
        (8907, (8, 9, 7)),
        # From 9: major*10000 + minor*100 + patch.
        (90000, (9, 0, 0)),
        (90100, (9, 1, 0)),
        (91001, (9, 10, 1)),
        (92800, (9, 28, 0)),
        (100000, (10, 0, 0)),
    ],
)
def test_cudnn_integers_decode_in_both_encodings(value: int, expected: tuple[int, int, int]) -> None:
    assert cudnn_version_from_int(value) == expected


def test_cudnn_nine_sorts_above_every_eight_after_decoding() -> None:
    # The trap of pytorch/pytorch#148940: 90100 vs 8907 as plain integers happens to order correctly,
    # but 9.1.0 decoded with the old rule would be "90.1.0".
    assert cudnn_version_from_int(90100) > cudnn_version_from_int(8907)


@pytest.mark.parametrize("value", [0, 999, 10000, 89999, -5])
def test_cudnn_integers_outside_both_encodings_are_refused(value: int) -> None:
    with pytest.raises(InvalidVersionValue):
        cudnn_version_from_int(value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("10.1", "10.1"),
        ("12.5.1", "12.5.1"),
        ("9", "9"),
        ("10", "10"),
        (" 11.2 ", "11.2"),
        ("64_101", "10.1"),
        ("64_100", "10.0"),
        ("64_110", "11.0"),
        ("64_112", "11.2"),
        ("64_90", "9.0"),
        ("64_7", "7"),
        ("64_8", "8"),
    ],
)
def test_tensorflow_fields_normalise_linux_and_windows_forms(raw: str, expected: str) -> None:
    assert tensorflow_version_field(raw) == expected


@pytest.mark.parametrize("raw", ["", "cuda", "64_", "10.x", "v10.1", "64_1a"])
def test_tensorflow_fields_that_no_release_wrote_are_refused_with_the_value(raw: str) -> None:
    with pytest.raises(InvalidVersionValue, match="not a TensorFlow build-info version"):
        tensorflow_version_field(raw)
