"""``pytest-cudnn snapshot --redact``: a snapshot that can be attached to a public bug report.

Pure: a snapshot's JSON in, the same JSON out with its values rewritten the same way, so that what refers to one
path still refers to one path and the redacted file replays to the same findings and verdict:

- GPU and MIG UUIDs become numbered ones (``GPU-00000000-0000-0000-0000-000000000001``; the same UUID, the same
  number), still valid UUIDs; a UUID prefix in ``CUDA_VISIBLE_DEVICES`` or ``NVIDIA_VISIBLE_DEVICES`` (CUDA takes
  ``GPU-1f0c8a2e``) becomes the whole placeholder of the GPU it names, or one that names none where it named none;
- the home folder of the user who probed (``$HOME``, wherever it is) and any ``/home/<name>``, ``/Users/<name>`` or
  ``C:\\Users\\<name>`` become ``/home/user`` (``C:\\Users\\user``);
- the user's name and the host's name, in any case, wherever else a value names them as a word of a path or text
  (``/data/jsmith-old/lib``, ``/opt/JSMITH``), become ``user`` and ``host``.

Never rewritten: a mapping's keys (the schema's own words and the allowlisted variables' names) and a value without
a path in it (a state, a mechanism, a framework's name, the system: a user named ``torch`` or ``Linux`` must not
change what the snapshot says). The caller checks that the result replays to the same findings before writing it.
What it cannot know (a secret inside a file name) it leaves: the doctor's allowlist already keeps every environment
variable but a few CUDA ones out of a snapshot.
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
# The variables whose entries may be UUID prefixes (CUDA's and the container toolkit's device lists).
_DEVICE_LISTS = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}
_NAMES_NO_DEVICE = "-xxxxxxxx-redacted"  # not hex: matches no UUID, as the prefix it replaces matched none


class Redaction:
    """One snapshot's placeholders: the same value gets the same placeholder in every field."""

    def __init__(self, user: str | None = None, host: str | None = None, home: str | None = None) -> None:
        self.uuids: dict[str, str] = {}
        self.words = [
            (re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", re.IGNORECASE), placeholder)
            for word, placeholder in ((user, "user"), (host, "host"))
            if word and word.lower() not in _TOO_COMMON and len(word) > 2
        ]
        home = (home or "").rstrip("/\\")
        self.home = home if len(home) > 1 and not _HOMES.match(home) else None  # /home/<name> is said below

    def text(self, value: str) -> str:
        value = _UUID.sub(self._uuid, value)
        if "/" not in value and "\\" not in value:
            return value  # no path, no place for a name: a state, a mechanism, a framework, the system
        if self.home is not None:
            value = re.sub(rf"{re.escape(self.home)}(?=[/\\]|$)", "/home/user", value)
        value = _HOMES.sub(lambda found: found.group("root") + "user", value)
        for pattern, placeholder in self.words:
            value = pattern.sub(placeholder, value)
        return value

    def devices(self, value: str) -> str:
        """A device list: each UUID or UUID prefix as the GPU it names, redacted; the rest as :meth:`text`."""
        entries = []
        for entry in value.split(","):
            kind = entry.strip()[:4].upper()
            if kind in ("GPU-", "MIG-") and not _UUID.fullmatch(entry.strip()):
                prefix = entry.strip().lower()
                named = [uuid for uuid in self.uuids if uuid.startswith(prefix)]
                entries.append(self._placeholder(named[0]) if len(named) == 1 else kind + _NAMES_NO_DEVICE[1:])
            else:
                entries.append(self.text(entry))
        return ",".join(entries)

    def number(self, uuid: str) -> None:
        """Give ``uuid`` its number now (a first pass over the snapshot, so that prefixes can be resolved)."""
        self.uuids.setdefault(uuid.lower(), f"{len(self.uuids) + 1:012d}")

    def _uuid(self, found: re.Match[str]) -> str:
        self.number(found.group(0))
        return self._placeholder(found.group(0).lower())

    def _placeholder(self, uuid: str) -> str:
        return f"{uuid[:3].upper()}-00000000-0000-0000-0000-{self.uuids[uuid]}"


def redact(data: Any, user: str | None = None, host: str | None = None, home: str | None = None) -> Any:
    """``data`` (a snapshot's JSON) with every value redacted by one :class:`Redaction`; keys are kept."""
    redaction = Redaction(user, host, home)

    def number(value: Any) -> None:
        if isinstance(value, str):
            for found in _UUID.finditer(value):
                redaction.number(found.group(0))
        elif isinstance(value, list):
            for item in value:
                number(item)
        elif isinstance(value, Mapping):
            for item in value.values():
                number(item)

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            return redaction.devices(value) if key in _DEVICE_LISTS else redaction.text(value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, Mapping):
            return {name: walk(item, name) for name, item in value.items()}
        return value

    number(data)
    return walk(data)
