"""``pytest-cudnn snapshot --redact``: a snapshot that can be attached to a public bug report.

Pure: a snapshot's JSON in, the same JSON out with every string rewritten the same way, so that what refers to one
path still refers to one path and the redacted file replays to the same verdict:

- GPU and MIG UUIDs become numbered ones (``GPU-00000000-0000-0000-0000-000000000001``; the same UUID, the same
  number), still valid UUIDs;
- the home folder of the user who probed (``/home/alice``) becomes ``/home/user`` (``C:\\Users\\alice`` becomes
  ``C:\\Users\\user``), and so does any other ``/home/<name>``, ``/Users/<name>`` or ``C:\\Users\\<name>`` prefix;
- the user's name and the host's name, wherever else they appear as a whole word, become ``user`` and ``host``.

What it cannot know (a user's name that is also a common word of a path, a secret inside a file name) it leaves: the
doctor's allowlist already keeps every environment variable but a few CUDA ones out of a snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["Redaction", "redact"]

_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HOMES = re.compile(r"(?P<root>/home/|/Users/|[A-Za-z]:\\Users\\)(?P<name>[^/\\\s\"':;]+)")
# Names too short or too common to replace wherever they stand as a word (they would rewrite library names).
_TOO_COMMON = {"", "root", "user", "host", "lib", "usr", "nvidia", "cuda", "runner", "localhost"}


class Redaction:
    """One snapshot's placeholders: the same value gets the same placeholder in every field."""

    def __init__(self, user: str | None = None, host: str | None = None) -> None:
        self.uuids: dict[str, str] = {}
        self.words = {
            word: placeholder
            for word, placeholder in ((user, "user"), (host, "host"))
            if word and word.lower() not in _TOO_COMMON and len(word) > 2
        }

    def text(self, value: str) -> str:
        value = _UUID.sub(self._uuid, value)
        value = _HOMES.sub(lambda found: found.group("root") + "user", value)
        for word, placeholder in self.words.items():
            value = re.sub(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", placeholder, value)
        return value

    def _uuid(self, found: re.Match[str]) -> str:
        number = self.uuids.setdefault(found.group(0).lower(), f"{len(self.uuids) + 1:012d}")
        return f"{found.group(1)}-00000000-0000-0000-0000-{number}"


def redact(data: Any, user: str | None = None, host: str | None = None) -> Any:
    """``data`` (a snapshot's JSON) with every string, keys included, redacted by one :class:`Redaction`."""
    redaction = Redaction(user, host)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return redaction.text(value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, Mapping):
            return {walk(key): walk(item) for key, item in value.items()}
        return value

    return walk(data)
