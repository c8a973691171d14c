"""What a finding code means, rendered for ``pytest-cudnn explain CODE``: the code and its one-line summary, then
what it means, how to confirm it by hand, the fix and the public sources (``diagnosis/explanations.py``), as plain
text or JSON; and the list of every code.

A step of "Confirm by hand" that starts with ``$ `` is a shell command, shown whole so that it pastes as it is; what
follows its last ``  # `` is a comment, shown wrapped on the lines under it (each a comment too). Any other step is
prose. Prose is wrapped, a URL or a command never broken; every line is made printable. Pure module.
"""

from __future__ import annotations

import difflib
import textwrap
from typing import Any

from ._base.text import line, listing, printable
from .diagnosis.explanations import EXPLANATIONS, Explanation
from .diagnosis.model import CODES

__all__ = [
    "LIST_HINT",
    "UnknownCode",
    "code_list",
    "codes_json",
    "explain_text",
    "explanation_json",
    "find_code",
    "unknown_message",
]

WIDTH = 100  # the width prose is wrapped to
LIST_HINT = "pytest-cudnn explain --list lists them all"
_INDENT = "  "
_COMMENT = "      # "


class UnknownCode(LookupError):
    """A code that is not one of CODES, with the closest codes there are (none when nothing is close).

    >>> UnknownCode("no-drivr", ("no-driver",))
    UnknownCode("unknown finding code 'no-drivr'; did you mean no-driver?")
    """

    def __init__(self, code: str, suggestions: tuple[str, ...]) -> None:
        self.code = code
        self.suggestions = suggestions
        # a long one is cut, and says so
        cut = f" (its first 100 of {len(code):,} characters)" if len(code) > 100 else ""
        shown = repr(code[:100]) + cut  # repr escapes every character that is not printable
        guess = f"; did you mean {' or '.join(suggestions)}?" if suggestions else ""
        said = "an empty finding code" if not code.strip() else f"unknown finding code {shown}"
        super().__init__(f"{said}{guess}")

    def __repr__(self) -> str:
        return f"UnknownCode({str(self)!r})"


def find_code(given: str) -> str:
    """The code ``given`` names: codes are lower-case, and a code given in any case, with spaces around it, is that
    code. Raises UnknownCode, with the closest codes, for one that is not a code.

    >>> find_code(" NO-DRIVER ")
    'no-driver'
    """
    code = given.strip().lower()
    if code in CODES:
        return code
    raise UnknownCode(given, closest(code))


# Words users type for a subject the codes spell otherwise.
_ALIASES = {"tf": "tensorflow", "cuda": "cuda", "mig": "mig", "runtime": "cuda-runtime", "wheel": "wheel"}


def closest(code: str, limit: int = 8) -> tuple[str, ...]:
    """The codes ``code`` most likely means: those that have it as a word (``cudnn`` -> ``cudnn-*``, ``tf`` ->
    ``tensorflow-*``), then those that start with it, then those spelt alike (difflib), at most ``limit``.

    >>> closest("cudnn", 3)
    ('cudnn-incomplete', 'cudnn-not-loadable', 'cudnn-dependency-missing')
    >>> closest("tf", 2), closest("no-drivr")
    (('tensorflow-cudart-not-found', 'tensorflow-cudnn-not-found'), ('no-driver',))
    """
    typed = code.replace("_", "-").strip("-")
    if not typed:
        return ()
    word = _ALIASES.get(typed, typed)
    parts = word.split("-")
    first = [c for c in CODES if c.split("-")[: len(parts)] == parts]
    by_word = [c for c in CODES if any(c.split("-")[i : i + len(parts)] == parts for i in range(len(c.split("-"))))]
    by_prefix = [c for c in CODES if c.startswith(typed)]
    alike = difflib.get_close_matches(typed, list(CODES), n=3, cutoff=0.6)
    return tuple(dict.fromkeys([*first, *by_word, *by_prefix, *alike]))[:limit]


def _wrapped(text: str, width: int, first: str, rest: str) -> list[str]:
    """``text`` wrapped to ``width`` after ``first`` (then ``rest``); a word longer than the line (a URL) whole."""
    return textwrap.wrap(
        printable(text),
        width=width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def _step_lines(step: str, width: int) -> list[str]:
    if not step.startswith("$ "):
        return _wrapped(step, width, _INDENT + "- ", _INDENT + "  ")
    command, separator, comment = step[2:].rpartition("  # ")
    if not separator:
        command, comment = step[2:], ""
    lines = [line(f"{_INDENT}$ {command.strip()}")]  # whole: it is pasted as it is
    if comment.strip():
        lines += _wrapped(comment.strip(), width, _COMMENT, _COMMENT)
    return lines


def _explanation_lines(found: Explanation, width: int) -> list[str]:
    lines = ["", "Meaning", *_wrapped(found.meaning, width, _INDENT, _INDENT), "", "Confirm by hand"]
    for step in found.confirm:
        lines += _step_lines(step, width)
    lines += ["", "Fix", *_wrapped(found.fix, width, _INDENT, _INDENT), "", "Sources"]
    for source in found.sources:
        lines += _wrapped(source, width, _INDENT + "- ", _INDENT + "  ")
    return lines


def explain_text(code: str, width: int = WIDTH) -> str:
    """The explanation of ``code`` (one of CODES, as :func:`find_code` gives it) as plain text."""
    lines = [f"{code}: {CODES[code]}"]
    found = EXPLANATIONS.get(code)
    if found is None:
        lines += ["", *_wrapped("There is no explanation of this code yet.", width, _INDENT, _INDENT)]
    else:
        lines += _explanation_lines(found, width)
    return "".join(line(text) + "\n" for text in lines)


def explanation_json(code: str) -> dict[str, Any]:
    """The explanation of ``code`` as a JSON document (schema ``pytest-cudnn/explanation``); its fields are null
    where the code has no explanation yet."""
    found = EXPLANATIONS.get(code)
    return {
        "schema": "pytest-cudnn/explanation",
        "schema_version": 1,
        "code": code,
        "summary": CODES[code],
        "meaning": found.meaning if found else None,
        "confirm": list(found.confirm) if found else None,
        "fix": found.fix if found else None,
        "sources": list(found.sources) if found else None,
    }


def code_list() -> str:
    """Every finding code with its one-line summary, one line each, the summaries in one column."""
    column = max(map(len, CODES)) + 2
    return "".join(line(f"{code:<{column}}{summary}") + "\n" for code, summary in CODES.items())


def codes_json() -> dict[str, Any]:
    """Every finding code, its summary and whether it is explained (schema ``pytest-cudnn/codes``)."""
    return {
        "schema": "pytest-cudnn/codes",
        "schema_version": 1,
        "codes": [
            {"code": code, "summary": summary, "explained": code in EXPLANATIONS} for code, summary in CODES.items()
        ],
    }


def unknown_message(unknown: UnknownCode) -> str:
    """The usage error for a code that is not one: the closest codes, else the first codes there are."""
    if unknown.suggestions:
        return f"{unknown} {LIST_HINT}"
    return f"{unknown}; known codes: {listing(list(CODES), 8)}; {LIST_HINT}"
