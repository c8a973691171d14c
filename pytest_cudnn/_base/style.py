"""How the text views mark a status: ✓ ! ✗ (or ASCII where the output cannot encode them), coloured or not.

Pure module. Whether a stream is a terminal, its encoding and the environment are read by the caller (the command
line tool, pytest's run) and handed to :func:`choose_style` once; the renderers take the :class:`Style` it gives
and never read ``os.environ`` themselves.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ASCII", "PLAIN", "Status", "Style", "choose_style", "encodes", "plain_style"]


class Status(enum.Enum):
    """What a line of a view says about its subject: fine, a warning, an error, or not there (and nothing says
    that matters)."""

    OK = "ok"
    WARNING = "warning"
    ERROR = "error"
    ABSENT = "absent"


_UNICODE = {Status.OK: "✓", Status.WARNING: "!", Status.ERROR: "✗", Status.ABSENT: "-"}
# As wide as each other, so that the lines under one another still align on a terminal without Unicode.
_ASCII = {Status.OK: "[ok]", Status.WARNING: "[!!]", Status.ERROR: "[XX]", Status.ABSENT: "[--]"}
# SGR colours of ECMA-48 (8.3.117): 31 red, 32 green, 33 yellow; 0 resets.
_COLOUR = {Status.OK: "\x1b[32m", Status.WARNING: "\x1b[33m", Status.ERROR: "\x1b[31m"}
_RESET = "\x1b[0m"


@dataclass(frozen=True)
class Style:
    """``unicode``: the marks ✓ ! ✗ -, else [ok] [!!] [XX] [--]; ``colour``: ANSI colour around each mark."""

    unicode: bool = True
    colour: bool = False

    def mark(self, status: Status) -> str:
        """The mark of ``status``, coloured when the style says so (the escapes are ASCII: any stream takes them).

        >>> Style().mark(Status.OK), Style(unicode=False).mark(Status.ERROR)
        ('✓', '[XX]')
        >>> Style(colour=True).mark(Status.WARNING)
        '\\x1b[33m!\\x1b[0m'
        """
        mark = (_UNICODE if self.unicode else _ASCII)[status]
        colour = _COLOUR.get(status) if self.colour else None
        return f"{colour}{mark}{_RESET}" if colour else mark


PLAIN = Style()  # Unicode marks, no colour: what a file written as UTF-8 gets, and the views' default
ASCII = Style(unicode=False)


def encodes(encoding: str | None, text: str) -> bool:
    """Whether a stream of ``encoding`` can write ``text``; an unknown or missing encoding cannot.

    >>> encodes("utf-8", "✓"), encodes("ascii", "✓"), encodes(None, "✓"), encodes("no-such-codec", "✓")
    (True, False, False, False)
    """
    if not encoding:
        return False
    try:
        text.encode(encoding)
    except (UnicodeError, LookupError):
        return False
    return True


def choose_style(isatty: bool, environ: Mapping[str, str], encoding: str | None) -> Style:
    """The style for a stream: Unicode marks where its ``encoding`` takes them; colour as pytest decides it for its
    own output (_pytest/_io/terminalwriter.py, should_do_markup, pytest 9.2; docs.pytest.org reference,
    "Environment variables"): PY_COLORS=1 on and PY_COLORS=0 off before all else, then NO_COLOR set and not empty
    off, then FORCE_COLOR set and not empty on (so NO_COLOR wins over FORCE_COLOR, as no-color.org asks), else
    only on a terminal whose TERM is not "dumb".

    >>> choose_style(True, {}, "utf-8")
    Style(unicode=True, colour=True)
    >>> choose_style(False, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, "ascii")
    Style(unicode=False, colour=False)
    """
    return Style(unicode=plain_style(encoding).unicode, colour=_colour(isatty, environ))


def plain_style(encoding: str | None) -> Style:
    """The style of text written as it is, with no colour (pytest's header lines): only the marks follow the
    stream's ``encoding``.

    >>> plain_style("ascii"), plain_style("utf-8") == PLAIN
    (Style(unicode=False, colour=False), True)
    """
    return Style(unicode=encodes(encoding, "".join(_UNICODE.values())))


def _colour(isatty: bool, environ: Mapping[str, str]) -> bool:
    py_colors = environ.get("PY_COLORS")
    if py_colors in ("0", "1"):
        return py_colors == "1"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return isatty and environ.get("TERM") != "dumb"
