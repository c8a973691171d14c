"""Typed JSON round trip for the frozen dataclasses of the environment model and the reports.

Decoding checks every value against the dataclass's annotations, and against the :class:`Rule` a field
declares beside itself (``version: str | None = field(metadata=rule("a version such as '9.1.0'", ...))``), and
says where a bad value sits (``driver.gpus[1].memory_total: expected an integer, got 'lots'``), so a hand-edited
or foreign snapshot gets a precise error instead of a traceback later. Nothing is ever evaluated: JSON in, plain
values out.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import reprlib
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = ["OMIT", "RULE", "DecodeError", "Rule", "from_json", "omitted", "rule", "to_json"]

T = TypeVar("T")


class DecodeError(ValueError):
    """A JSON value that does not fit the model; ``where`` is the dotted path to it."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where or '<top>'}: {problem}")
        self.where = where
        self.problem = problem


RULE = "pytest_cudnn.rule"  # the field metadata key a Rule is declared under
OMIT = "pytest_cudnn.omit"  # the field metadata key that leaves a field holding its default out of the JSON


@dataclass(frozen=True)
class Rule:
    """What a field's value must be beyond its type. It applies to the decoded value, to each item of a tuple,
    and never to None; ``accepts`` is called only with values of the field's type and never raises."""

    expected: str  # as the error says it: "a version such as '9.1.0'"
    accepts: Callable[[Any], bool]


def rule(expected: str, accepts: Callable[[Any], bool]) -> dict[str, Rule]:
    """Field metadata declaring a rule: ``field(metadata=rule("a non-negative integer", lambda n: n >= 0))``."""
    return {RULE: Rule(expected, accepts)}


def omitted() -> dict[str, bool]:
    """Field metadata: the field is left out of the JSON where it holds its default (and read as the default where
    it is absent): ``cause: str | None = field(default=None, metadata=omitted())``."""
    return {OMIT: True}


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def to_json(value: Any) -> Any:
    """Plain JSON-ready values (dict, list, str, int, float, bool, None) from a model object."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: to_json(getattr(value, field.name))
            for field in dataclasses.fields(value)
            if not (field.metadata.get(OMIT) and getattr(value, field.name) == _default(field))
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [to_json(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): to_json(item) for key, item in value.items()}
    return value


def from_json(cls: type[T], data: Any, where: str = "") -> T:
    """Build ``cls`` from JSON data, checking every field; raises DecodeError naming the bad field."""
    return typing.cast(T, _decode(cls, data, where))


_SCALARS: dict[type, str] = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


# Bounded in depth and length: a snapshot can nest lists as deep as the JSON parser allows, and repr() of that
# would itself recurse too deeply, or build megabytes to print 60 characters.
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 60, 60


def _describe(data: Any) -> str:
    try:
        text = _REPR.repr(data)
    except ValueError:  # an integer too long to print (sys.get_int_max_str_digits)
        text = f"an integer of {data.bit_length()} bits" if isinstance(data, int) else type(data).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _decode(tp: Any, data: Any, where: str) -> Any:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(data, tp):
        return data  # decoded already (a reader that decoded a part first hands it in); JSON never holds one
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        return _decode_union(get_args(tp), data, where)
    if tp is Any:
        return data
    if origin is tuple:
        item_type = get_args(tp)[0]
        if not isinstance(data, list):
            raise DecodeError(where, f"expected a list, got {_describe(data)}")
        return tuple(_decode(item_type, item, f"{where}[{index}]") for index, item in enumerate(data))
    if origin in (Mapping, dict):
        return _decode_mapping(get_args(tp), data, where)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError:
            allowed = ", ".join(repr(member.value) for member in tp)
            raise DecodeError(where, f"expected one of {allowed}, got {_describe(data)}") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data, where)
    if tp in _SCALARS:
        return _decode_scalar(tp, data, where)
    raise TypeError(f"pytest-cudnn model has an undecodable type at {where}: {tp!r}")


def _decode_union(options: tuple[Any, ...], data: Any, where: str) -> Any:
    """The first of ``options`` that takes ``data`` (None where the union allows it); each one's refusal said."""
    if data is None and type(None) in options:
        return None
    real = [option for option in options if option is not type(None)]
    if len(real) == 1:
        return _decode(real[0], data, where)
    errors = []
    for option in real:
        try:
            return _decode(option, data, where)
        except DecodeError as error:
            errors.append(error.problem)
    raise DecodeError(where, " or ".join(errors))


def _decode_mapping(types_: tuple[Any, ...], data: Any, where: str) -> dict[Any, Any]:
    key_type, value_type = types_
    if not isinstance(data, dict):
        raise DecodeError(where, f"expected an object, got {_describe(data)}")
    return {
        _decode(key_type, key, where): _decode(value_type, value, f"{where}.{key}" if where else key)
        for key, value in data.items()
    }


def _decode_scalar(tp: type, data: Any, where: str) -> Any:
    # bool is an int in Python, and an int is acceptable where a float is expected; nothing else mixes.
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if not isinstance(data, tp) or (tp is int and isinstance(data, bool)):
        raise DecodeError(where, f"expected {_SCALARS[tp]}, got {_describe(data)}")
    return data


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of a model class (evaluated once: they are this package's own strings)."""
    return get_type_hints(cls)


def _decode_dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(where, f"expected an object, got {_describe(data)}")
    hints = _hints(cls)
    fields = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise DecodeError(where, f"unknown field {_describe(unknown[0])}")
    values = {}
    for name, field in fields.items():
        path = f"{where}.{name}" if where else name
        if name not in data:
            if field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING:
                continue
            raise DecodeError(path, "missing")
        values[name] = _decode(hints[name], data[name], path)
        declared = field.metadata.get(RULE)
        if declared is not None:
            _check(declared, values[name], path)
    return cls(**values)


def _check(declared: Rule, value: Any, where: str) -> None:
    if value is None:
        return
    if isinstance(value, tuple):
        for index, item in enumerate(value):
            _check(declared, item, f"{where}[{index}]")
    elif not declared.accepts(value):
        raise DecodeError(where, f"expected {declared.expected}, got {_describe(value)}")
