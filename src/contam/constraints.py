"""Declarative validation of config dataclasses: each range or choice is stated once.

A config class lists what each field accepts in a ``_constraints`` class variable and calls
:func:`validate` first thing in ``__post_init__`` (the idea of scikit-learn's
``_parameter_constraints``). Checks that relate two fields stay as code after it. A bad value
raises :class:`~contam.errors.ConfigError` with one line naming the class, the field, the
value and what is allowed:

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class MinKConfig:
...     k: float = 0.2
...     field: str = "text"
...     _constraints = {  # in a module: `_constraints: ClassVar[Constraints] = {`
...         "k": Interval(float, 0, 1, closed="right"),
...         "field": Options("text", "question"),
...     }
...     def __post_init__(self) -> None:
...         validate(self)
>>> MinKConfig(k=1.5)
Traceback (most recent call last):
...
contam.errors.ConfigError: MinKConfig.k: 1.5 is not in (0, 1]
>>> MinKConfig(field="all")
Traceback (most recent call last):
...
contam.errors.ConfigError: MinKConfig.field: 'all' is not one of 'text', 'question'

A class may name the command-line option of a field in ``_flags``, so the message says what
the user typed (``AuditConfig.variants (--k): 0 is not an integer in [1, inf)``). A class whose
checks were messages before they were constraints may keep those words in ``_messages``: a
template per field, formatted with the refused ``value`` (``"--engine {value!r}: choose local or ray"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal

from contam.errors import ConfigError

__all__ = ["Constraint", "Constraints", "Each", "Interval", "NoneOr", "Options", "validate"]


class Constraint:
    """What one field accepts: :meth:`accepts` tells, ``str()`` says it in words, and
    :meth:`bad_value` gives a value it refuses (the tests build their bad inputs from it)."""

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError

    def bad_value(self) -> Any:
        raise NotImplementedError

    def why(self, value: Any) -> str:
        """Why ``value`` is refused, e.g. ``"1.5 is not in (0, 1]"``."""
        return f"{value!r} is not {self}"


#: What a config class declares: field name -> constraint.
Constraints = Mapping[str, Constraint]

_Closed = Literal["both", "left", "right", "neither"]


def _num(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(int(x)) if float(x).is_integer() else repr(x)


@dataclass(frozen=True)
class Interval(Constraint):
    """A number of ``type`` (``int`` or ``float``) between ``low`` and ``high`` (``None``:
    unbounded, an open end); ``closed`` says which ends belong to it. A float interval takes
    ints too; booleans, NaN and infinities are refused.

    >>> Interval(int, 1, None).accepts(3), Interval(int, 1, None).accepts(0), Interval(int, 1, None).accepts(2.0)
    (True, False, False)
    >>> str(Interval(float, 0, 1, closed="neither")), Interval(float, 0, 1, closed="neither").accepts(1)
    ('in (0, 1)', False)
    >>> Interval(float, 0, None, closed="left").accepts(float("nan"))
    False
    """

    type: type[int] | type[float]
    low: float | None
    high: float | None
    closed: _Closed = "both"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, Integral if self.type is int else Real):
            return False
        v = float(value)
        if not math.isfinite(v):  # NaN is in no interval; an unbounded end is open, so no inf either
            return False
        if self.low is not None and (v < self.low or (v == self.low and self.closed in ("right", "neither"))):
            return False
        if self.high is not None and (v > self.high or (v == self.high and self.closed in ("left", "neither"))):
            return False
        return True

    def __str__(self) -> str:
        left = "[" if self.low is not None and self.closed in ("both", "left") else "("
        right = "]" if self.high is not None and self.closed in ("both", "right") else ")"
        low = _num(self.low) if self.low is not None else "-inf"
        high = _num(self.high) if self.high is not None else "inf"
        kind = "an integer " if self.type is int else ""
        return f"{kind}in {left}{low}, {high}{right}"

    def why(self, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, Integral if self.type is int else Real):
            return f"{value!r} is not {'an integer' if self.type is int else 'a number'}"
        return f"{value!r} is not {self}"

    def bad_value(self) -> Any:
        # Just outside the lower end (else the upper one): the nearest refused value.
        if self.low is not None:
            return self.type(self.low - 1) if self.closed in ("both", "left") or self.type is int else self.type(self.low)
        if self.high is not None:
            return self.type(self.high + 1) if self.closed in ("both", "right") or self.type is int else self.type(self.high)
        return "not a number"


@dataclass(frozen=True, init=False)
class Options(Constraint):
    """One of a fixed set of values.

    >>> Options("drop", "mask").accepts("mask"), str(Options("drop", "mask"))
    (True, "one of 'drop', 'mask'")
    """

    options: tuple[Any, ...]

    def __init__(self, *options: Any) -> None:
        object.__setattr__(self, "options", tuple(options))

    def accepts(self, value: Any) -> bool:
        try:
            return value in self.options
        except TypeError:  # an unhashable value cannot be one of them
            return False

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)

    def bad_value(self) -> Any:
        return "no-such-" + "-".join(str(o) for o in self.options)[:20]


@dataclass(frozen=True)
class NoneOr(Constraint):
    """``None`` or a value ``inner`` accepts (an optional setting).

    >>> NoneOr(Options("a")).accepts(None), str(NoneOr(Options("a")))
    (True, "None or one of 'a'")
    """

    inner: Constraint

    def accepts(self, value: Any) -> bool:
        return value is None or self.inner.accepts(value)

    def __str__(self) -> str:
        return f"None or {self.inner}"

    def why(self, value: Any) -> str:
        return self.inner.why(value)

    def bad_value(self) -> Any:
        return self.inner.bad_value()


@dataclass(frozen=True)
class Each(Constraint):
    """A sequence (tuple or list) whose every element ``inner`` accepts.

    >>> Each(Interval(float, 0, 1)).accepts((0.0, 0.5)), Each(Interval(float, 0, 1)).why((0.5, 2.0))
    (True, 'item 1: 2.0 is not in [0, 1]')
    """

    inner: Constraint

    def accepts(self, value: Any) -> bool:
        return isinstance(value, (tuple, list)) and all(self.inner.accepts(v) for v in value)

    def __str__(self) -> str:
        return f"a sequence whose every item is {self.inner}"

    def why(self, value: Any) -> str:
        if not isinstance(value, (tuple, list)):
            return f"{value!r} is not a sequence"
        i, bad = next((i, v) for i, v in enumerate(value) if not self.inner.accepts(v))
        return f"item {i}: {self.inner.why(bad)}"

    def bad_value(self) -> Any:
        return (self.inner.bad_value(),)


def validate(obj: Any) -> None:
    """Check every field of ``obj`` that its class's ``_constraints`` names; raise
    :class:`ConfigError` on the first refused value (in declaration order)."""
    cls = type(obj)
    constraints: Constraints = getattr(cls, "_constraints", {})
    flags: Mapping[str, str] = getattr(cls, "_flags", {})
    messages: Mapping[str, str] = getattr(cls, "_messages", {})
    for name, constraint in constraints.items():
        value = getattr(obj, name)
        if not constraint.accepts(value):
            if name in messages:
                raise ConfigError(messages[name].format(value=value))
            flag = f" ({flags[name]})" if name in flags else ""
            raise ConfigError(f"{cls.__name__}.{name}{flag}: {constraint.why(value)}")
