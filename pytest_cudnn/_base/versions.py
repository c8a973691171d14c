"""Decode the integers and strings that NVIDIA libraries and TensorFlow use for versions.

Pure functions: no I/O, no ctypes. Every decoder keeps to what the vendor documents, and refuses what it
cannot decode rather than guessing.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

__all__ = [
    "InvalidVersionValue",
    "cuda_version_from_int",
    "cudnn_version_from_int",
    "decimal",
    "is_pep440",
    "major_of",
    "nccl_version_from_int",
    "tensorflow_version_field",
]


def decimal(text: str, digits: int) -> int | None:
    """The integer that ``text`` spells in 1 to ``digits`` ASCII digits; None for anything else.

    Files on a host are read with this, never with ``int()`` after ``str.isdigit()``: ``isdigit()`` is true of ``²``
    and ``①``, which ``int()`` refuses, and ``int()`` takes other scripts' digits that no vendor's file writes.

    >>> decimal("107904", 18), decimal("\u00b2", 18), decimal("\u0661\u0662", 18), decimal("", 3), decimal("1234", 3)
    (107904, None, None, None, None)
    """
    return int(text) if 0 < len(text) <= digits and text.isascii() and text.isdigit() else None


def major_of(version: str | None) -> int | None:
    """The major of a dotted version read from a host (``"12.9"`` -> 12); None where it has no ASCII major of at most
    three digits.

    >>> major_of("12.9"), major_of("9"), major_of("\u00b3.1"), major_of(None), major_of("1000.0")
    (12, 9, None, None, None)
    """
    return decimal((version or "").split(".", maxsplit=1)[0], 3)


class InvalidVersionValue(ValueError):
    """A version value that no known encoding produces.

    >>> cuda_version_from_int(-1)
    Traceback (most recent call last):
        ...
    pytest_cudnn._base.versions.InvalidVersionValue: not a CUDA version integer: -1
    """


def cuda_version_from_int(value: int) -> str:
    """``cudaRuntimeGetVersion``/``cuDriverGetVersion`` encode ``1000 * major + 10 * minor``.

    Source: CUDA Runtime API, cudaRuntimeGetVersion ("returns ... 1000 * major + 10 * minor").

    >>> cuda_version_from_int(12090)
    '12.9'
    >>> cuda_version_from_int(10010)
    '10.1'
    """
    if value <= 0:
        raise InvalidVersionValue(f"not a CUDA version integer: {value!r}")
    return f"{value // 1000}.{(value % 1000) // 10}"


def cudnn_version_from_int(value: int) -> tuple[int, int, int]:
    """Decode ``cudnnGetVersion()``/``CUDNN_VERSION`` into (major, minor, patch).

    Below cuDNN 9 the encoding is ``major * 1000 + minor * 100 + patch`` (8.9.6 -> 8906, 7.6.5 -> 7605);
    from cuDNN 9 it is ``major * 10000 + minor * 100 + patch`` (9.1.0 -> 90100), see cudnn_version.h of
    each release. The two ranges do not overlap: 9.0.0 encodes as 90000, above any 8.x value (< 9000*10).

    >>> cudnn_version_from_int(7605)
    (7, 6, 5)
    >>> cudnn_version_from_int(8906)
    (8, 9, 6)
    >>> cudnn_version_from_int(92800)
    (9, 28, 0)
    """
    if value >= 90000:
        return value // 10000, (value % 10000) // 100, value % 100
    if 1000 <= value < 10000:
        return value // 1000, (value % 1000) // 100, value % 100
    raise InvalidVersionValue(f"not a cuDNN version integer: {value!r}")


def nccl_version_from_int(value: int) -> str:
    """Decode ``ncclGetVersion()``/``NCCL_VERSION_CODE`` into "major.minor.patch".

    nccl.h's ``NCCL_VERSION(X,Y,Z)`` is ``X * 1000 + Y * 100 + Z`` up to 2.8 and ``X * 10000 + Y * 100 + Z`` from
    2.9 (NVIDIA/nccl src/nccl.h.in; compat/sources.py "nccl-version-code"): 2.8.4 -> 2804, 2.21.5 -> 22105. The two
    ranges do not overlap: 2.9.0 encodes as 20900.

    >>> nccl_version_from_int(2708), nccl_version_from_int(22105), nccl_version_from_int(23203)
    ('2.7.8', '2.21.5', '2.32.3')
    """
    if value >= 20900:
        return f"{value // 10000}.{(value % 10000) // 100}.{value % 100}"
    if 1000 <= value < 2900:
        return f"{value // 1000}.{(value % 1000) // 100}.{value % 100}"
    raise InvalidVersionValue(f"not an NCCL version integer: {value!r}")


# Bounded digit runs: int() refuses more than 4300 digits, and no version part needs more than a few.
# ASCII digits only (re.ASCII): Python's \d also matches other scripts' digits ("\u0663" is Arabic-Indic three),
# which the snapshot's rules refuse and no build info writes.
_WINDOWS_FIELD = re.compile(r"^64_(\d{1,6})$", re.ASCII)
_DOTTED = re.compile(r"^\d{1,9}(\.\d{1,9})*$", re.ASCII)


def tensorflow_version_field(raw: str) -> str:
    """Normalise a CUDA or cuDNN version as TensorFlow's build info records it.

    Linux builds write dotted versions ('10.1', '12.5.1', '9'). Windows builds of 2.x wrote the DLL suffix
    ('64_101' for cudart64_101.dll, '64_110', '64_7' for cudnn64_7.dll): the last digit of a CUDA suffix is the
    minor version, a one-digit suffix is a cuDNN major.

    >>> tensorflow_version_field('10.1')
    '10.1'
    >>> tensorflow_version_field('64_101')
    '10.1'
    >>> tensorflow_version_field('64_8')
    '8'
    >>> tensorflow_version_field('\u06632.5.1')
    Traceback (most recent call last):
        ...
    pytest_cudnn._base.versions.InvalidVersionValue: not a TensorFlow build-info version: '\u06632.5.1'
    """
    text = raw.strip()
    if _DOTTED.match(text):
        return text
    match = _WINDOWS_FIELD.match(text)
    if match:
        digits = match.group(1)
        if len(digits) == 1:
            return digits
        return f"{int(digits[:-1])}.{digits[-1]}"
    raise InvalidVersionValue(f"not a TensorFlow build-info version: {raw!r}")


def is_pep440(text: str) -> bool:
    """Whether ``text`` is a PEP 440 version, as pip and packaging read one.

    >>> is_pep440("2.18.0"), is_pep440("2.15.0-custom"), is_pep440("9" * 5000)
    (True, False, False)
    """
    from packaging.version import Version  # here: the light helpers above are imported where packaging is not

    try:
        Version(text)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return False
    return True


@functools.lru_cache(maxsize=1024)
def specifier_set(text: str) -> SpecifierSet:
    """``SpecifierSet(text)``, importing it on first use: packaging.specifiers brings packaging.tags with it
    (subprocess, sysconfig, logging), about 30 ms that a run needing no specifier should not pay. Parsed once per
    text (the tables' rows are judged for every GPU: 11 parses a GPU made 10,000 GPUs cost seconds, field test A6);
    no caller changes the set it is given.

    >>> "9.1.0" in specifier_set(">=9,<10")
    True
    """
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text)


_SEPARATORS = re.compile(r"[-_.]+")


def canonical_name(name: str) -> str:
    """A distribution name in its PEP 503 normal form, as packaging.utils.canonicalize_name gives it (which
    imports packaging.tags, see :func:`specifier_set`).

    >>> canonical_name("Nvidia_CUDNN.cu12")
    'nvidia-cudnn-cu12'
    """
    return _SEPARATORS.sub("-", name).lower()
