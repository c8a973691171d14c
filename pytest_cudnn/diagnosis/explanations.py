"""What each finding code means, read by ``pytest-cudnn explain CODE`` and the documentation site's page per code.

Pure data keyed by :data:`~pytest_cudnn.diagnosis.model.CODES`: for every code, what the finding means, how to
confirm it by hand (commands a user can paste, on the host itself), the fix, and the public sources the facts behind
it come from. ``tests/test_explanations.py`` holds every code to an entry.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Explanation:
    meaning: str  # a paragraph: what was found, and what it does to a test
    confirm: tuple[str, ...]  # steps or shell commands that show the same by hand
    fix: str  # what to do, in general (the finding's own ``fix`` says it for the host at hand)
    sources: tuple[str, ...]  # public sources: "what it says: URL"


# The driver, the GPUs, containers, MIG and the variables that pick devices.
_HOST: dict[str, Explanation] = {}


# The libraries: CUDA runtimes, cuDNN, the frameworks, the loader, wheels and Windows.
_LIBRARIES: dict[str, Explanation] = {}


EXPLANATIONS: dict[str, Explanation] = {**_HOST, **_LIBRARIES}


def explanation(code: str) -> Explanation | None:
    """The explanation of ``code``; None for a code that is not one of CODES."""
    return EXPLANATIONS.get(code)
