"""Whether GPU code built for some targets runs on a GPU of a given compute capability.

Rules (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility"; the ``a`` and ``f`` suffixes
in the CUDA 12.9 and 13.0 nvcc documentation, "GPU Feature List"): SASS for sm_XY runs on the same major at
minor Y or newer; architecture-specific SASS (sm_90a) runs on exactly that capability; family-specific SASS
(sm_100f) runs on the same major at that minor or newer. PTX for compute_XY is compiled at run time for any GPU
of that capability or newer, except architecture-specific PTX (compute_90a), which serves only that capability.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

__all__ = ["runs_on"]

_TARGET = re.compile(r"(sm|compute)_(\d{1,8})(\d)([af]?)")


def runs_on(targets: Iterable[str], capability: str) -> Literal["sass", "ptx"] | None:
    """ "sass" when some target runs natively on ``capability`` ("8.6"), "ptx" when only through JIT, else None.

    >>> runs_on(["sm_80", "compute_90"], "8.6"), runs_on(["sm_80", "compute_90"], "9.0"), runs_on(["sm_90a"], "10.0")
    ('sass', 'ptx', None)
    """
    match = re.fullmatch(r"(\d{1,4})\.(\d{1,4})", capability.strip())
    if not match:
        return None
    major, minor = int(match.group(1)), int(match.group(2))
    ptx = False
    for target in targets:
        parsed = _TARGET.fullmatch(target.strip())
        if not parsed:
            continue
        kind, m, n, suffix = parsed.group(1), int(parsed.group(2)), int(parsed.group(3)), parsed.group(4)
        exact = (m, n) == (major, minor)
        if kind == "sm" and (exact if suffix == "a" else m == major and n <= minor):
            return "sass"
        if kind == "compute" and (exact if suffix == "a" else (m, n) <= (major, minor)):
            ptx = True
    return "ptx" if ptx else None
