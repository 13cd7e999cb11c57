"""Every config dataclass states its ranges and choices once (``_constraints``) and enforces them.

The config classes are found by reading the sources (every ``@dataclass`` class named
``*Config`` under ``src/contam``), so a new config without constraints fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from contam.constraints import Constraint, Each, Interval, NoneOr, Options, validate
from contam.errors import ConfigError

SRC = Path(__file__).resolve().parents[1] / "src"

#: Numeric fields that take any value of their type, and why.
EXEMPT: dict[tuple[str, str], str] = {}

#: Classes that are not option records, and why.
NOT_CONFIGS: dict[str, str] = {}

#: Keyword arguments a default instance needs (fields with no usable default).
REQUIRED: dict[str, dict[str, Any]] = {
    "AuditConfig": {"benchmarks": ("gsm8k",), "dataset": "corpus.jsonl"},
}

_NUMERIC = re.compile(r"^(int|float)( \| None)?$|^tuple\[(int|float)(, (int|float))*(, \.\.\.)?\]$")


def _config_classes() -> list[type]:
    found = []
    for path in sorted((SRC / "contam").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not (isinstance(node, ast.ClassDef) and node.name.endswith("Config")) or node.name in NOT_CONFIGS:
                continue
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if not any(d.startswith(("dataclass", "dataclasses.dataclass")) for d in decorators):
                continue
            module = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
            found.append(getattr(importlib.import_module(module), node.name))
    return found


CONFIGS = _config_classes()


def _default(cls: type) -> Any:
    return cls(**REQUIRED.get(cls.__name__, {}))


def _ids(cls: type) -> str:
    return f"{cls.__module__}.{cls.__name__}"


def test_the_configs_are_found() -> None:
    names = {c.__name__ for c in CONFIGS}
    assert {"LogProbConfig", "ZeroCoTConfig", "NGramConfig", "AuditConfig", "ParaphraseConfig"} <= names
    assert len(CONFIGS) >= 20


@pytest.mark.parametrize("cls", CONFIGS, ids=_ids)
def test_every_numeric_field_is_constrained(cls: type) -> None:
    declared = getattr(cls, "_constraints", {})
    assert set(declared) <= {f.name for f in dataclasses.fields(cls)}, "a constraint names no field"
    missing = [
        f.name
        for f in dataclasses.fields(cls)
        if _NUMERIC.match(str(f.type)) and f.name not in declared and (cls.__name__, f.name) not in EXEMPT
    ]
    assert not missing, f"{cls.__name__}: no constraint for {missing}"


@pytest.mark.parametrize("cls", CONFIGS, ids=_ids)
def test_default_instance_validates(cls: type) -> None:
    obj = _default(cls)
    validate(obj)
    for name, constraint in getattr(cls, "_constraints", {}).items():
        assert constraint.accepts(getattr(obj, name)), f"{cls.__name__}.{name} default refused by {constraint}"


_CASES = [(cls, name) for cls in CONFIGS for name in getattr(cls, "_constraints", {})]


@pytest.mark.parametrize(("cls", "name"), _CASES, ids=[f"{c.__name__}.{n}" for c, n in _CASES])
def test_a_bad_value_names_the_field(cls: type, name: str) -> None:
    constraint: Constraint = cls._constraints[name]
    bad = constraint.bad_value()
    assert not constraint.accepts(bad)
    with pytest.raises(ConfigError, match=rf"^{cls.__name__}\.{name}\b.*: ") as e:
        dataclasses.replace(_default(cls), **{name: bad})
    assert "\n" not in str(e.value)


def test_interval_ends_and_messages() -> None:
    half_open = Interval(float, 0, 1, closed="right")
    assert [half_open.accepts(x) for x in (0, 1e-9, 1, 1.0000001)] == [False, True, True, False]
    assert str(half_open) == "in (0, 1]"
    assert Interval(int, 1, None).why(0) == "0 is not an integer in [1, inf)"
    assert Interval(int, 1, None).why(2.5) == "2.5 is not an integer"
    assert Interval(float, 0, None).why("x") == "'x' is not a number"
    assert not Interval(float, 0, None).accepts(float("inf"))
    assert not Interval(int, 0, None).accepts(True)
    assert NoneOr(Interval(int, 0, None)).accepts(None)
    assert Each(Options("a", "b")).why(("a", "c")) == "item 1: 'c' is not one of 'a', 'b'"
    for c in (Interval(float, 0, 1, closed="neither"), Interval(int, 2, 5), Options(1, 2), Each(Interval(float, 0, 1))):
        assert not c.accepts(c.bad_value())


def test_the_cli_option_is_named() -> None:
    from contam.audit.config import AuditConfig

    with pytest.raises(ConfigError, match=r"^AuditConfig\.per_item \(--per-item\): 0 is not an integer in \[1, inf\)$"):
        AuditConfig(benchmarks=("gsm8k",), dataset="c.jsonl", per_item=0)
