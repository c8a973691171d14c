"""Make text from elsewhere safe to show: on a terminal, in a Markdown table, within a sane length.

Everything pytest-cudnn shows may hold what a vendor library or a snapshot file wrote: GPU names, error
strings, paths, variables. A snapshot from elsewhere can carry escape sequences that recolour a terminal, set its
title or rewrite earlier lines, and ``|`` or HTML that breaks a step-summary table. Pure module.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["clip", "listing", "markdown_cell", "printable"]

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """Every character a terminal would act on, shown as an escape instead: control characters (C0, C1, DEL),
    and format characters such as bidirectional overrides that reorder what is shown.

    >>> printable("NVIDIA \\x1b[31mA100\\x1b[0m\\r\\n")
    'NVIDIA \\\\x1b[31mA100\\\\x1b[0m\\\\r\\\\n'
    >>> printable("GPU 0 A100")
    'GPU 0 A100'
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


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
