"""The exact scorer's and the records' fast paths against the plain versions they replace."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from contam.records import Record, _field_names
from contam.scan.flags import DocResult, Evidence, Flag
from contam.scan.hashing import text_words, word_spans
from contam.scan.ngram import _near_bound


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_word_spans_equal_regex_spans(text: str) -> None:
    starts, ends = word_spans(text)
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == text_words(text)


def test_word_spans_lone_surrogate_and_astral() -> None:
    text = "a\ud800b \U0001f600x\u2019y"
    assert list(zip(*(a.tolist() for a in word_spans(text)), strict=True)) == text_words(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abc xyz", max_size=60), st.text(alphabet="abc xyz", max_size=90))
def test_near_bound_bounds_partial_ratio(a: str, b: str) -> None:
    if a and b:
        assert fuzz.partial_ratio(a, b) <= _near_bound(a, b) + 1e-9


@dataclasses.dataclass(frozen=True)
class _Inner:
    x: np.float64
    y: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class _Outer(Record):
    inner: _Inner
    mapping: dict[int, object]
    flag: bool = True


def _reference(value: object) -> object:
    """The generic conversion before the fast paths (fields looked up on every call)."""
    if isinstance(value, Record) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        # Evidence outside a conversation record leaves out its (empty) turn fields.
        skip = ("turn", "role", "turn_span") if isinstance(value, Evidence) and value.turn is None else ()
        return {f.name: _reference(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name not in skip}  # type: ignore[arg-type]
    if isinstance(value, dict):
        return {str(k): _reference(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_reference(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


def _typed(value: object) -> object:
    if isinstance(value, dict):
        return [(type(k), k, _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value), value)


def test_to_dict_matches_generic_conversion() -> None:
    ev = Evidence(kind="ngram", text="a b", doc_span=(1, 4), part="question", weight=np.float64(0.25))
    flag = Flag(
        doc_id="d", item_id="i", level="token", score=1.0, threshold=0.5, scores={"coverage": 1.0, "n": np.int64(3)}, evidence=(ev,)
    )
    res = DocResult(doc_id="d", contaminated=True, level="token", flags=(flag,), scores={"max_coverage": 1.0, 7: [np.float32(0.5), None]})
    outer = _Outer(inner=_Inner(x=np.float64(2.5), y=(1, 2)), mapping={1: ev, 2: [True, "s"]})
    turned = dataclasses.replace(ev, turn=2, role="user", turn_span=(0, 3))
    for record in (ev, flag, res, outer, turned):
        assert _typed(record.to_dict()) == _typed(_reference(record))
    assert Evidence.from_dict(turned.to_dict()) == turned and "turn" not in ev.to_dict()
    assert list(res.to_dict()) == list(_field_names(DocResult))
    assert DocResult.from_dict(res.to_dict()).flags[0].evidence[0].doc_span == (1, 4)
