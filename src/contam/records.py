"""Typed result records that serialise to JSON and back.

Every public result is a frozen dataclass deriving from :class:`Record`. ``to_dict`` gives
plain JSON-ready data; ``from_dict`` rebuilds the record, nested records included, so runs
can be compared and resumed.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Hit(Record):
...     doc_id: str
...     score: float
>>> Hit.from_dict(Hit("d1", 0.5).to_dict())
Hit(doc_id='d1', score=0.5)
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

R = TypeVar("R", bound="Record")


#: Types returned as they are (exact types: subclasses, numpy scalars among them, take the
#: general path). Checked first because most values in a record are such leaves.
_LEAVES = frozenset({str, int, float, bool, type(None)})


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The names of ``dataclasses.fields(cls)``, cached: ``fields`` rebuilds its tuple on every
    call, and serialising a scan's results calls it for every record."""
    return tuple(f.name for f in dataclasses.fields(cls))


def _plain_fields(obj: Any) -> dict[str, Any]:
    """A dataclass instance's fields as plain data."""
    return {name: v if type(v := getattr(obj, name)) in _LEAVES else _to_plain(v) for name in _field_names(type(obj))}


def _to_plain(value: Any) -> Any:
    t = type(value)
    # Fast paths for the exact builtin types (same output as the general chain below).
    if t in _LEAVES:
        return value
    if t is tuple or t is list:
        return [v if type(v) in _LEAVES else _to_plain(v) for v in value]
    if t is dict:
        return {str(k): v if type(v) in _LEAVES else _to_plain(v) for k, v in value.items()}
    if isinstance(value, Record):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain_fields(value)
    if isinstance(value, dict):
        return {str(k): _to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    item = getattr(value, "item", None)
    if callable(item):  # numpy scalars
        return item()
    return value


def _from_plain(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            if arg is type(None):
                continue
            try:
                return _from_plain(arg, value)
            except (TypeError, ValueError, KeyError):
                continue
        return value
    if isinstance(tp, type) and issubclass(tp, Record) and isinstance(value, dict):
        return tp.from_dict(value)
    if origin in (list, tuple) and isinstance(value, (list, tuple)):
        args = typing.get_args(tp)
        inner = args[0] if args else Any
        items = [_from_plain(inner, v) for v in value]
        return tuple(items) if origin is tuple else items
    if origin is dict and isinstance(value, dict):
        args = typing.get_args(tp)
        inner = args[1] if len(args) == 2 else Any
        return {k: _from_plain(inner, v) for k, v in value.items()}
    return value


class Record:
    """Mixin for frozen dataclasses that cross module boundaries or are written to disk."""

    schema_version: ClassVar[int] = 1
    if TYPE_CHECKING:  # every Record is a dataclass (set by @dataclass on the subclass, never at run time here)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-serialisable data (nested records become dicts, tuples lists)."""
        return _plain_fields(self)

    @classmethod
    def from_dict(cls: type[R], data: dict[str, Any]) -> R:
        """Rebuild from :meth:`to_dict` output; unknown keys are ignored for forward compatibility."""
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                kwargs[f.name] = _from_plain(hints.get(f.name, Any), data[f.name])
        return cls(**kwargs)
