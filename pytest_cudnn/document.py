"""The report document, typed: what ``doctor --json`` writes, what ``--gpu-report`` writes (the same, with the run's
keys), what each remote xdist host adds, and what the fleet reads. Its keys are spelt here and nowhere else.

Written and read through :mod:`pytest_cudnn._base.serde`: a field whose metadata says :func:`omitted` is left out
where it holds its default (a framework's ``cause`` only where it is refused), as the document has always been
written. The JSON Schema of the document (:func:`json_schema`) is generated from these classes, committed as
``docs/reference/report.schema.json`` and checked current by the docs' tests. :func:`read_report` reads version 1
and 2 documents alike (version 1 had no ``schema`` and no ``in_use``), and drops keys this version does not know,
outside the environment (a newer writer may add some; the environment is a snapshot, read as strictly as one).
Pure: no pytest, no I/O.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._base.serde import RULE, DecodeError, from_json, omitted, to_json
from .diagnosis import Finding, Verdict
from .environment import Environment, InvalidSnapshot

__all__ = [
    "DOCUMENT_KEYS",
    "HOSTS_KEY",
    "LIST_KEYS",
    "READS",
    "REPORT_SCHEMA",
    "REPORT_SCHEMA_VERSION",
    "RUN_KEYS",
    "TESTS_KEY",
    "AfterPreload",
    "CopyInUse",
    "DeviceEntry",
    "FrameworkEntry",
    "HostEntry",
    "InUse",
    "Report",
    "ReportRefused",
    "TestEntry",
    "json_schema",
    "read_report",
    "report_json",
]

REPORT_SCHEMA = "pytest-cudnn/report"
# 2 added schema, schema_version, in_use and each refused framework's cause. The version changes only when a key
# changes meaning; a key added (a framework's libraries) is read as absent by older readers.
REPORT_SCHEMA_VERSION = 2
READS = (1, 2)
_FIELD_PATH = re.compile(r"[A-Za-z_][\w.\[\]]*: ")


@dataclass(frozen=True)
class CopyInUse:
    """A library copy the diagnosis decided is in use: its version and where it is."""

    version: str | None
    path: str


@dataclass(frozen=True)
class InUse:
    """What the diagnosis decided the stack uses, so that a reader shows it rather than working it out."""

    cuda_runtime: CopyInUse | None
    cudnn: CopyInUse | None
    visible_gpus: int


@dataclass(frozen=True)
class AfterPreload:
    """A framework's verdict once its own preload call has run (onnxruntime.preload_dlls())."""

    call: str
    ok: bool
    summary: str
    cause: str | None = field(default=None, metadata=omitted())


@dataclass(frozen=True)
class FrameworkEntry:
    """Whether one installed framework can run GPU work here, and when not the finding that stops it."""

    name: str
    version: str | None
    ok: bool
    summary: str
    cause: str | None = field(default=None, metadata=omitted())
    after_preload: AfterPreload | None = field(default=None, metadata=omitted())
    # The copy of each further catalog kind it loads (NCCL, cuBLAS): {"nccl": {"version", "path"}}.
    libraries: Mapping[str, CopyInUse] = field(default_factory=dict, metadata=omitted())


@dataclass(frozen=True)
class TestEntry:
    """One test the run recorded facts of: its requirements, its GPU, why the environment refused it, whether it
    used its GPU."""

    nodeid: str
    requirements: tuple[str, ...] = field(default=(), metadata=omitted())
    gpu: int | str | None = field(default=None, metadata=omitted())
    worker: str | None = field(default=None, metadata=omitted())
    gpu_used: str | None = field(default=None, metadata=omitted())
    gpu_use: str | None = field(default=None, metadata=omitted())
    reason: str | None = field(default=None, metadata=omitted())
    cause: str | None = field(default=None, metadata=omitted())
    outcome: str | None = field(default=None, metadata=omitted())
    host: str | None = field(default=None, metadata=omitted())


@dataclass(frozen=True)
class DeviceEntry:
    """A device given to an xdist worker: its label ("GPU 0", "MIG 1g.10gb on GPU 0") and UUID."""

    label: str
    uuid: str | None
    index: int | None = field(default=None, metadata=omitted())


@dataclass(frozen=True)
class HostEntry:
    """One remote xdist host: the controller's diagnosis of it (null where its workers probe for themselves)."""

    host: str
    workers: tuple[str, ...]
    probed_by: str  # "controller" or "workers"
    reason: str | None
    summary: str | None
    environment: Environment | None
    findings: tuple[Finding, ...]
    verdict: Verdict | None
    frameworks: tuple[FrameworkEntry, ...]
    devices: Mapping[str, tuple[DeviceEntry, ...]]
    note: str | None


@dataclass(frozen=True)
class Report:
    """The whole document. ``require_gpu`` to ``tests`` are the run's keys: absent from the doctor's."""

    schema: str
    schema_version: int
    environment: Environment
    findings: tuple[Finding, ...]
    verdict: Verdict
    frameworks: tuple[FrameworkEntry, ...]
    in_use: InUse | None = None  # None: a version 1 report, which did not record it
    require_gpu: bool | None = field(default=None, metadata=omitted())
    xdist: Mapping[str, tuple[int, ...]] | None = field(default=None, metadata=omitted())
    xdist_devices: Mapping[str, tuple[DeviceEntry, ...]] | None = field(default=None, metadata=omitted())
    xdist_note: str | None = field(default=None, metadata=omitted())
    hosts: tuple[HostEntry, ...] | None = field(default=None, metadata=omitted())
    tests: tuple[TestEntry, ...] | None = field(default=None, metadata=omitted())
    finished: bool | None = field(default=None, metadata=omitted())  # False: written while the run goes on


_FIELDS = [item.name for item in dataclasses.fields(Report)]
# The keys every report holds (the doctor's too), those only a run's report holds, and the lists among them: what a
# reader needs to tell a run's report from the doctor's JSON, and to say which key is wrong.
DOCUMENT_KEYS: tuple[str, ...] = tuple(_FIELDS[_FIELDS.index("environment") : _FIELDS.index("in_use")])
RUN_KEYS: tuple[str, ...] = tuple(_FIELDS[_FIELDS.index("require_gpu") :])
TESTS_KEY, HOSTS_KEY = "tests", "hosts"
LIST_KEYS: tuple[str, ...] = ("findings", "frameworks", TESTS_KEY)


def report_json(report: Report) -> dict[str, Any]:
    """The document as JSON's values, in the order of its fields."""
    data: dict[str, Any] = to_json(report)
    return data


class ReportRefused(ValueError):
    """A document that is not a report this version reads; the message names the key and the problem."""


def read_report(data: Any) -> Report:
    """A report of version 1 or 2 (ReportRefused says why not), keys this version does not know dropped."""
    if not isinstance(data, dict):
        raise ReportRefused("not a JSON object")
    version = data.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ReportRefused(f"schema_version: expected a whole number from 1, got {version!r:.40}")
    if version not in READS:
        raise ReportRefused(f"schema_version: {version}, newer than this pytest-cudnn reads (1 to {READS[-1]})")
    try:
        environment = Environment.from_json(data.get("environment"), "environment")
    except InvalidSnapshot as error:
        # "driver.version: expected ..." becomes "environment.driver.version: expected ...".
        joiner = "." if _FIELD_PATH.match(error.problem) else ": "
        raise ReportRefused(f"environment{joiner}{error.problem}") from None
    adapted = {**data, "schema": REPORT_SCHEMA, "schema_version": version}
    if isinstance(data.get("findings"), list):
        adapted["findings"] = [_finding(item) for item in data["findings"]]
    known = _known(Report, adapted)
    try:
        return _decoded(known, environment, with_hosts=True)
    except DecodeError as error:
        if not error.where.startswith("hosts"):
            raise ReportRefused(str(error)) from None
    # Remote hosts of another shape (an older writer's, or another tool's): not this version's entries, so left out
    # of the typed document; a reader that shows them whatever their shape reads them itself.
    try:
        return _decoded(known, environment, with_hosts=False)
    except DecodeError as error:
        raise ReportRefused(str(error)) from None


def _finding(raw: Any) -> Any:
    """A finding as the first writers wrote it: ``remedy`` before it was ``fix``; no ``component``, ``evidence`` or
    ``fix`` in reports trimmed by hand. What is absent reads as empty; a finding's code, severity and summary must be
    there."""
    if not isinstance(raw, dict):
        return raw
    fix = raw.get("fix", raw.get("remedy", ""))
    return {"component": "", "evidence": [], **raw, "fix": fix}


def _decoded(known: dict[str, Any], environment: Environment, *, with_hosts: bool) -> Report:
    """The report's fields decoded, the environment (decoded already, as a snapshot is) handed in whole."""
    values = {**known, "environment": environment}
    if not with_hosts:
        values.pop(HOSTS_KEY, None)
    return from_json(Report, values)


def _known(cls: type[Any], data: Any) -> Any:
    """``data`` with the keys ``cls`` does not declare dropped, at every level of the report classes (and of the
    findings and verdicts they hold) but the environment's, which is read as a snapshot is."""
    if not isinstance(data, dict):
        return data
    hints = _hints(cls)
    return {key: _lenient(hints[key], value) for key, value in data.items() if key in hints}


def _lenient(tp: Any, value: Any) -> Any:
    """``value`` read against annotation ``tp``, structurally: the dataclasses it names (through None, tuples and
    mappings) lose the keys they do not declare; the environment is left whole."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if value is None:
        return value
    if origin is typing.Union or origin is types.UnionType:
        chosen = next((arg for arg in args if arg is not type(None) and _fits(arg, value)), None)
        return value if chosen is None else _lenient(chosen, value)
    if origin is tuple and isinstance(value, list):
        return [_lenient(args[0], item) for item in value]
    if _is_mapping(origin) and isinstance(value, dict):
        return {key: _lenient(args[1], item) for key, item in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp is not Environment and isinstance(value, dict):
        return _known(tp, value)
    return value


def _fits(tp: Any, value: Any) -> bool:
    """Whether ``value``'s JSON shape is the one annotation ``tp`` reads (an object, a list, or a scalar)."""
    origin = typing.get_origin(tp)
    if isinstance(value, dict):
        return _is_mapping(origin) or (isinstance(tp, type) and dataclasses.is_dataclass(tp))
    if isinstance(value, list):
        return origin is tuple
    return True


def _is_mapping(origin: Any) -> bool:
    return isinstance(origin, type) and issubclass(origin, Mapping)


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    """The resolved annotations of a report class, once."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


# The JSON Schema ----------------------------------------------------------------------------------------------------
SCHEMA_ID = "https://pytest-cudnn.invalid/report.schema.json"  # no public home yet: an identifier, not a location


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the report document, made from the classes above and the environment
    model they hold: each class one definition, each field its type; a field with a default is not required. The
    value rules a snapshot's fields carry (a version's form, a non-negative count) are said in ``description``."""
    definitions: dict[str, Any] = {}
    root = _object_schema(Report, definitions)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "pytest-cudnn report",
        "description": (
            f"What pytest-cudnn doctor --json and pytest --gpu-report write: schema {REPORT_SCHEMA!r}, "
            f"schema_version {REPORT_SCHEMA_VERSION}. Generated from pytest_cudnn/document.py."
        ),
        **root,
        "$defs": dict(sorted(definitions.items())),
    }


def _schema_of(tp: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    """The schema of annotation ``tp``; a dataclass becomes a definition of its own, referred to."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        return {"anyOf": [_schema_of(arg, definitions) for arg in args]}
    if origin is tuple:
        return {"type": "array", "items": _schema_of(args[0], definitions)}
    if _is_mapping(origin):
        return {"type": "object", "additionalProperties": _schema_of(args[1], definitions)}
    if tp is type(None):
        return {"type": "null"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [member.value for member in tp]}
    if tp in _SCALAR_TYPES:
        return {"type": _SCALAR_TYPES[tp]}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in definitions:
            definitions[name] = {}  # a placeholder while its fields are made: a class may hold itself
            definitions[name] = _object_schema(tp, definitions)
        return {"$ref": f"#/$defs/{name}"}
    if tp is Any:
        return {}
    raise TypeError(f"no JSON Schema for {tp!r}")  # pragma: no cover - a new annotation needs a line above


def _object_schema(cls: type[Any], definitions: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    properties = {}
    required = []
    for item in dataclasses.fields(cls):
        schema = _schema_of(hints[item.name], definitions)
        declared = item.metadata.get(RULE)
        if declared is not None:
            schema = {**schema, "description": f"{declared.expected}"}
        properties[item.name] = schema
        if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING:
            required.append(item.name)
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return {
        "type": "object",
        **({"description": " ".join(doc.split())} if doc else {}),
        "properties": properties,
        "required": required,
    }


_SCALAR_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
