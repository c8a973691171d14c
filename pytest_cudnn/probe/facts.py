"""What a host's files say, kept between runs: each fact read from a file's bytes under the identity of that file.

The probe runs on every ``pytest`` invocation of a GPU host, and most of what it reads does not change between two
runs: the sha256 of an nvidia wheel's libraries, the dynamic section and GPU code of a framework's objects, the
lines of RECORD files, the loader's cache as ``ldconfig -p`` lists it. Each such fact is kept here under the
identity of every file it was read from (``st_dev``, ``st_ino``, ``st_size``, ``st_mtime_ns``, ``st_ctime_ns``: a
file rewritten in place with its size and mtime put back still has a new ctime, which no user can set), and used
again only while each of those files still has that identity. The facts are pure functions of the files' bytes:
what decides a search (``LD_LIBRARY_PATH``, ``sys.path``, the ldconfig cache as listed) is worked out anew each run
from them, so no variable needs to be part of a key.

Never kept: anything a vendor library answers (the driver, the GPUs, MIG, free memory, ``cudaGetDeviceCount``,
``cudnnCreate``), the kernel module, the variables: live facts are read live, every run.

Where: ``$XDG_CACHE_HOME/pytest-cudnn`` (else ``~/.cache/pytest-cudnn``), one file per Python environment
(``sys.prefix``: a venv, whichever of its python links runs) and version, mode 0600 in a 0700 folder, written
through :func:`~pytest_cudnn.files.write_atomically`. A file that is not the user's own, that others may write, that
is over :data:`LIMIT`, of another schema or plugin version, or damaged is ignored (said in :attr:`FileFacts.note`),
never trusted and never an error; a value that does not decode is read again from its file.
``PYTEST_CUDNN_CACHE=off`` (and the plugin's ``--gpu-cache=off``, the doctor's ``--no-cache``) turns it off.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import stat
import sys
import time
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ..environment import BuildFact

__all__ = [
    "ENV_CACHE",
    "LIMIT",
    "FileFacts",
    "cache_file",
    "cache_wanted",
    "decoded_fact",
    "encoded_fact",
    "identity",
    "kept",
    "looked",
    "maybe",
    "maybe_decoded",
    "optional_text",
    "remembered",
    "texts",
    "using",
]

SCHEMA = "pytest-cudnn/file-facts"
SCHEMA_VERSION = 1
LIMIT = 16 << 20  # bytes: a host with every framework keeps a few hundred KB
MAX_ENTRIES = 20_000  # facts kept in all: those used by the last run first, then the newest others
ENV_CACHE = "PYTEST_CUDNN_CACHE"
RACY = 100_000_000  # ns: a fact of a file changed less than this long ago is not kept (see _settled)
_OFF = frozenset({"0", "off", "false", "no", ""})
_ON = frozenset({"1", "on", "true", "yes"})

T = TypeVar("T")
_MISSING = object()

_CURRENT: contextvars.ContextVar[FileFacts | None] = contextvars.ContextVar("pytest_cudnn_file_facts", default=None)


def identity(path: str) -> list[int] | None:
    """What identifies the file (or folder) at ``path``, links followed, as it is now; None where it cannot be
    looked at."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def cache_wanted(environ: Mapping[str, str]) -> bool:
    """Whether ``PYTEST_CUDNN_CACHE`` leaves the cache on (unset: on). Raises ValueError, naming the variable and
    its value, for anything but 1/0, true/false, yes/no and on/off (as the plugin's own switches read)."""
    raw = environ.get(ENV_CACHE)
    if raw is None:
        return True
    value = raw.strip().lower()
    if value in _OFF or value in _ON:
        return value in _ON
    raise ValueError(f"the environment variable {ENV_CACHE}={raw!r}: expected 1/0, true/false, yes/no or on/off")


def cache_file(environ: Mapping[str, str]) -> str | None:
    """This interpreter's cache file: under ``$XDG_CACHE_HOME`` when that is an absolute path (the XDG Base
    Directory Specification ignores a relative one), else ``$HOME/.cache``; None without either."""
    base = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    from .. import __version__

    tag = hashlib.sha256(f"{sys.prefix}\0{sys.version}\0{__version__}".encode("utf-8", "replace")).hexdigest()
    return os.path.join(base, "pytest-cudnn", f"facts-{tag[:16]}.json")


class Looked(Generic[T]):
    """What :meth:`FileFacts.look` found: the value where ``hit``, and the identities of the files it is keyed on.
    A plain class: Python 3.10 has no generic named tuple, and a dataclass costs more to make."""

    __slots__ = ("before", "hit", "name", "paths", "value")

    def __init__(
        self, name: str, paths: tuple[str, ...], before: list[list[int] | None], hit: bool, value: T | None
    ) -> None:
        self.name, self.paths, self.before, self.hit, self.value = name, paths, before, hit, value


class FileFacts:
    """The facts of one run: those read back from the cache file, and those used or read by this run (``hits``
    and ``reads`` count them). ``note`` says why the file was not used, where it was not."""

    def __init__(self, path: str | None, old: dict[str, list[Any]] | None = None, note: str | None = None) -> None:
        self.path = path
        self.old = old or {}
        self.new: dict[str, list[Any]] = {}
        self.hits = 0
        self.reads = 0
        self.note = note

    @classmethod
    def load(cls, environ: Mapping[str, str], wanted: bool | None = None) -> FileFacts:
        """The cache of this interpreter, or an empty one (off, missing, or refused with a note); never raises.
        ``wanted``: whether it is on (the plugin's settings decide); None: as ``PYTEST_CUDNN_CACHE`` says."""
        try:
            on = cache_wanted(environ) if wanted is None else wanted
        except ValueError as error:
            return cls(None, note=f"no cache: {error}")
        if not on:
            return cls(None, note="no cache: turned off")
        path = cache_file(environ)
        if path is None:
            return cls(None, note="no cache: neither XDG_CACHE_HOME nor HOME is an absolute path")
        try:
            return cls(path, _read(path))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as error:
            return cls(path, note=f"cache {path} ignored: {error}")

    def recall(
        self,
        kind: str,
        key: str,
        paths: Sequence[str],
        compute: Callable[[], T],
        encode: Callable[[T], Any],
        decode: Callable[[Any], T],
    ) -> T:
        """``compute()``'s value, read back where every one of ``paths`` is as it was when it was last computed."""
        before = [identity(path) for path in paths]
        if None in before:  # nothing to key it on: read, never kept
            self.reads += 1
            return compute()
        name = f"{kind}\0{key}"
        entry = self.old.get(name)
        if entry is not None and entry[0] == before:
            value = _decoded(decode, entry[1])
            if value is not _MISSING:
                self.new[name] = entry
                self.hits += 1
                return value  # type: ignore[return-value]
        value = compute()
        self.reads += 1
        encoded = encode(value)
        if encoded is not None and _settled(before) and [identity(path) for path in paths] == before:
            self.new[name] = [before, encoded]  # None: a value not to keep; a file changed while read is not kept
        return value

    def look(self, kind: str, key: str, paths: Sequence[str], decode: Callable[[Any], T]) -> Looked[T]:
        """:meth:`recall` in two steps, for a value computed elsewhere (in the probe's child): the value kept for
        ``paths`` as they are now, if any, and what :meth:`keep` needs to keep a newly computed one."""
        before = [identity(path) for path in paths]
        name = f"{kind}\0{key}"
        entry = self.old.get(name) if None not in before else None
        if entry is not None and entry[0] == before:
            value = _decoded(decode, entry[1])
            if value is not _MISSING:
                self.new[name] = entry
                self.hits += 1
                return Looked(name, tuple(paths), before, True, typing.cast("T", value))
        return Looked(name, tuple(paths), before, False, None)

    def keep(self, looked: Looked[Any], encoded: Any) -> None:
        """Keep a value computed after :meth:`look` missed (``encoded`` None: not to keep, such as a failure)."""
        self.reads += 1
        before = looked.before
        if encoded is None or None in before or not _settled(before):
            return
        if [identity(path) for path in looked.paths] == before:
            self.new[looked.name] = [before, encoded]

    @property
    def changed(self) -> bool:
        return any(self.old.get(name) is not entry for name, entry in self.new.items())

    def save(self) -> str | None:
        """Write the facts back when this run read any; None, or what stopped the write (never raised)."""
        if self.path is None or not self.changed:
            return None
        kept = dict(self.new)
        for name, entry in reversed(list(self.old.items())):  # the newest others, while there is room
            if len(kept) >= MAX_ENTRIES:
                break
            kept.setdefault(name, entry)
        document = {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "plugin": _plugin_version(),
            "facts": kept,
        }
        text = json.dumps(document, separators=(",", ":"), ensure_ascii=True)
        if len(text) > LIMIT:
            text = json.dumps({**document, "facts": self.new}, separators=(",", ":"), ensure_ascii=True)
            if len(text) > LIMIT:
                return f"cache not written: this run's facts take {len(text)} bytes, more than {LIMIT}"
        from ..files import FileRefused, write_atomically

        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            write_atomically(self.path, text, mode=0o600)
        except (OSError, FileRefused) as error:
            return f"cache {self.path} not written: {error}"
        return None

    def summary(self) -> str:
        """What came from the cache, for the header and ``doctor -v``."""
        if self.path is None:
            return self.note or "no cache"
        said = f"{self.hits:,} file facts from the cache, {self.reads:,} read"
        return f"{said}; {self.note}" if self.note else said


def _settled(identities: Sequence[list[int] | None]) -> bool:
    """Whether every file last changed more than :data:`RACY` ago. File times come from the kernel's coarse clock
    (one tick is 1 to 10 ms): a file changed again within the tick of its last change, with its size and mtime put
    back, would keep its ctime too. A fact of a file changed that recently is read again next time (as git treats
    its "racily clean" entries: git/git Documentation/technical/racy-git.adoc)."""
    now = time.time_ns()
    return all(ids is not None and now - ids[4] > RACY for ids in identities)


def _plugin_version() -> str:
    from .. import __version__

    return __version__


def _read(path: str) -> dict[str, list[Any]]:
    """The facts of the cache file ``path``; raises ValueError (or OSError) saying why it is not to be used."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise ValueError(f"owned by user {info.st_uid}, not by this one")
        if info.st_mode & 0o022:
            raise ValueError(f"others may write it (mode {stat.S_IMODE(info.st_mode):o})")
        if info.st_size > LIMIT:
            raise ValueError(f"{info.st_size} bytes, more than {LIMIT}")
        raw = os.read(fd, LIMIT + 1)
    finally:
        os.close(fd)
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError("damaged: not JSON") from None
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise ValueError("not a pytest-cudnn cache")
    if document.get("schema_version") != SCHEMA_VERSION or document.get("plugin") != _plugin_version():
        raise ValueError("written by another version of pytest-cudnn")
    facts = document.get("facts")
    if not isinstance(facts, dict):
        raise ValueError("damaged: no facts")
    return {
        name: entry
        for name, entry in facts.items()
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list)
    }


def _decoded(decode: Callable[[Any], T], raw: Any) -> T | object:
    try:
        return decode(raw)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return _MISSING  # a damaged value: read again


@contextlib.contextmanager
def using(facts: FileFacts | None) -> Iterator[None]:
    """Within the block, :func:`remembered` reads through ``facts`` (None: reads every file)."""
    token = _CURRENT.set(facts)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def remembered(
    kind: str,
    key: str,
    paths: Sequence[str],
    compute: Callable[[], T],
    encode: Callable[[T], Any],
    decode: Callable[[Any], T],
) -> T:
    """``compute()``, through the facts of the probe running now (:func:`using`), if any. ``encode`` turns the value
    into JSON's types (None: a value not to keep, such as a failure that must be noted again); ``decode`` turns that
    back, raising TypeError or ValueError for what it does not accept."""
    facts = _CURRENT.get()
    if facts is None:
        return compute()
    return facts.recall(kind, key, paths, compute, encode, decode)


def looked(kind: str, key: str, paths: Sequence[str], decode: Callable[[Any], T]) -> Looked[T] | None:
    """:meth:`FileFacts.look` in the facts of the probe running now; None without a cache."""
    facts = _CURRENT.get()
    return facts.look(kind, key, paths, decode) if facts is not None else None


def kept(found: Looked[Any] | None, encoded: Any) -> None:
    """:meth:`FileFacts.keep` in the facts of the probe running now (nothing without a cache)."""
    facts = _CURRENT.get()
    if facts is not None and found is not None:
        facts.keep(found, encoded)


def maybe(encode: Callable[[T], Any]) -> Callable[[T | None], list[Any]]:
    """An encoder for a value that may be None, which is kept too (a file that holds no such fact): ``[None]`` or
    ``[encode(value)]`` (the list tells a kept None from a value :func:`remembered` must not keep)."""
    return lambda value: [None if value is None else encode(value)]


def maybe_decoded(decode: Callable[[Any], T]) -> Callable[[Any], T | None]:
    """The decoder of what :func:`maybe` encoded."""

    def decoded(raw: Any) -> T | None:
        (value,) = raw
        return None if value is None else decode(value)

    return decoded


def optional_text(raw: Any) -> str | None:
    """A decoder's check: ``raw`` when it is a string or None; TypeError otherwise."""
    if raw is not None and not isinstance(raw, str):
        raise TypeError(f"not text: {type(raw).__name__}")
    return raw


def texts(raw: Any) -> tuple[str, ...]:
    """A decoder's check: ``raw`` as a tuple of strings; TypeError for anything else."""
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise TypeError("not a list of text")
    return tuple(raw)


def encoded_fact(fact: BuildFact) -> list[str]:
    """A build fact as the cache keeps it."""
    return [fact.value, fact.source, fact.how]


def decoded_fact(raw: Any) -> BuildFact:
    """The build fact :func:`encoded_fact` kept; TypeError for anything else."""
    from ..environment import BuildFact  # the model, once a fact is read back

    value, source, how = raw
    if not all(isinstance(part, str) for part in (value, source, how)):
        raise TypeError("not a build fact")
    return BuildFact(value, source, how)
