"""Make text from elsewhere safe to show: on a terminal, in a Markdown table, within a sane length.

Everything pytest-cudnn shows may hold what a vendor library or a snapshot file wrote: GPU names, error
strings, paths, variables. A snapshot from elsewhere can carry escape sequences that recolour a terminal, set its
title or rewrite earlier lines, and ``|`` or HTML that breaks a step-summary table. Pure module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = [
    "LINE",
    "PYTEST_LINE",
    "REPORT_WHOLE",
    "WHOLE",
    "clip",
    "group_reason",
    "line",
    "listing",
    "markdown_cell",
    "markdown_rows",
    "printable",
    "shows_all",
    "summarised",
]

T = TypeVar("T")

LINE = 1000  # characters of one line of text output, at most: a value from elsewhere can be megabytes long
PYTEST_LINE = 2000  # a line pytest shows (its header, a skip reason, the terminal summary): it holds a whole reason
WHOLE = "--json lists them all"  # where the whole of a summarised list is, in the command-line tool's views
REPORT_WHOLE = "--gpu-report lists them all"  # and in pytest's

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """Every character a terminal would act on, shown as an escape instead: control characters (C0, C1, DEL),
    and format characters such as bidirectional overrides that reorder what is shown. A backslash that would read as
    one of those escapes is doubled, so that the text ``\\x1b`` cannot pass for an escaped ESC; any other backslash
    (``C:\\Users``) is left as written.

    >>> printable("NVIDIA \\x1b[31mA100\\x1b[0m\\r\\n")
    'NVIDIA \\\\x1b[31mA100\\\\x1b[0m\\\\r\\\\n'
    >>> printable("GPU 0 A100"), printable("A100\\\\x1b[31m"), printable("C:\\\\Users\\\\ci")
    ('GPU 0 A100', 'A100\\\\\\\\x1b[31m', 'C:\\\\Users\\\\ci')
    """
    if "\\" in text:
        text = _LOOKS_ESCAPED.sub(r"\\\\", text)
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


# A backslash that begins what _escape writes (\\xNN, \\uNNNN, \\UNNNNNNNN, \\n, \\r, \\t) or another backslash.
_LOOKS_ESCAPED = re.compile(r"\\(?=x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[nrt\\])")


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# Characters with a meaning in a GitHub-flavoured Markdown table cell: "|" ends the cell (also inside code
# spans, GFM spec 'Tables' extension), "<" and "&" start HTML, the others start emphasis, links or code.
_MARKDOWN = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "|": "\\|",
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
}


def markdown_cell(text: str, limit: int = 300) -> str:
    """Text for one cell of a Markdown table: printable, clipped, every Markdown and HTML character escaped.

    >>> markdown_cell("a|b <script> *x*")
    'a\\\\|b &lt;script&gt; \\\\*x\\\\*'
    """
    return "".join(_MARKDOWN.get(char, char) for char in clip(printable(text), limit))


def clip(text: str, limit: int) -> str:
    """At most about ``limit`` characters; a longer text says how long it was.

    >>> clip("0123456789" * 3, 12)
    '0123456789.. (30 characters)'
    """
    if len(text) <= limit:
        return text
    return f"{text[: limit - 2]}.. ({len(text):,} characters)"


def listing(items: Sequence[str], limit: int = 8, separator: str = ", ") -> str:
    """The first ``limit`` items and how many more there are.

    >>> listing(["a", "b", "c"], 2)
    'a, b and 1 more'
    """
    if len(items) <= limit:
        return separator.join(items)
    return f"{separator.join(items[:limit])} and {len(items) - limit:,} more"


def group_reason(reasons: Sequence[str]) -> str:
    """The reason a group of tests shares, said by its first test's, and how many other reasons the group holds
    (tests of one cause can ask for different things: one requires cuDNN >=8.9, another <8).

    >>> group_reason(["requires cuDNN >=8.9; found 7.6.5", "requires cuDNN <8,>=7.6; found 7.6.5"])
    'requires cuDNN >=8.9; found 7.6.5 (and 1 other reason)'
    >>> group_reason(["a", "a"])
    'a'
    """
    first = reasons[0] if reasons else ""
    others = len(set(reasons)) - 1
    return f"{first} (and {others:,} other reason{'s' if others > 1 else ''})" if others > 0 else first


def line(text: str, limit: int = LINE) -> str:
    """One line of text output, made printable (escapes lengthen what they replace), then at most ``limit``
    characters, the length said included.

    >>> line("\x1b[2J" + "A" * 50, 40)
    '\\\\x1b[2.. (57 characters)'
    """
    shown = printable(text)
    # clip() keeps limit - 2 characters and adds ".. (N characters)": 16 characters and N's digits and commas.
    return shown if len(shown) <= limit else clip(shown, limit - 32)


def shows_all(count: int, limit: int) -> bool:
    """Whether :func:`summarised` shows all ``count`` items whole at ``limit``: one more than ``limit`` is shown
    rather than a line saying so, which would take its place."""
    return count <= limit + 1


def summarised(
    items: Sequence[T],
    limit: int,
    render: Callable[[T], list[str]],
    what: str,
    where: str = WHOLE,
    said: Callable[[str], str] = str,
    total: int | None = None,
) -> list[str]:
    """The lines ``render`` gives for the first ``limit`` items, then one saying how many more there are and where
    they all are, shaped by ``said`` (an indent, a table row). One item more than ``limit`` is shown rather than
    summarised: the summary would take its place. ``total``: how many there are, when ``items`` holds only the
    first ``limit + 1`` (those that are costly to make).

    >>> summarised(["a", "b", "c", "d"], 2, lambda item: [f"  {item}"], "GPUs", said=lambda text: "  " + text)
    ['  a', '  b', '  and 2 more GPUs (--json lists them all)']
    """
    count = len(items) if total is None else total
    shown = items if shows_all(count, limit) else items[:limit]
    lines = [text for item in shown for text in render(item)]
    if len(shown) < count:
        lines.append(said(f"and {count - len(shown):,} more {what} ({where})"))
    return lines


def markdown_rows(
    cells: Sequence[Sequence[str]], limit: int, what: str, where: str = WHOLE, total: int | None = None
) -> list[str]:
    """Rows of a Markdown table, every cell escaped; past ``limit``, one row says how many more there are.

    >>> markdown_rows([["a", "1"], ["b", "2"], ["c", "3"]], 1, "rows")
    ['| a | 1 |', '| and 2 more rows (--json lists them all) | |']
    """
    if not cells:
        return []
    width = len(cells[0])
    return summarised(
        cells,
        limit,
        lambda row: [f"| {' | '.join(markdown_cell(cell) for cell in row)} |"],
        what,
        where,
        lambda text: f"| {markdown_cell(text)} |" + " |" * (width - 1),
        total,
    )
