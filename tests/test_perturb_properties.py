"""Hypothesis property tests: for every generated instance the program and the audit agree,
and the same seed always gives the same instance."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam.data import load_benchmark
from contam.perturb import audit_instance, draw, lift
from contam.perturb.arith import evaluate
from contam.perturb.audit import instance_hash
from contam.perturb.instantiate import compiled
from contam.perturb.mentions import find_mentions
from contam.perturb.records import Template

_TEMPLATES = [t for t in (lift(x) for x in load_benchmark("gsm8k")[:150]) if isinstance(t, Template)]
_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(k=st.integers(0, len(_TEMPLATES) - 1), seed=st.integers(0, 10**6), index=st.integers(0, 20), wide=st.booleans())
def test_program_and_audit_agree(k: int, seed: int, index: int, wide: bool) -> None:
    t = _TEMPLATES[k]
    d = draw(t, seed, index, wide=wide)
    if d is None:  # a template may admit no draw for this seed; that is reported, never emitted
        return
    assert audit_instance(t, d, seed=seed, index=index, wide=wide) == []
    # Independent re-derivation: read the numbers back out of the question, run the program.
    found = find_mentions(d.question)
    read = {s.id: Fraction(found[s.mentions[0]].value) for s in t.slots if s.role == "free"}
    _, results = compiled(t).run(read)
    assert str(results[t.answer_step]) == d.answer or Fraction(d.answer) == results[t.answer_step]
    # Every calculator annotation of the new solution is exact arithmetic.
    for m in re.finditer(r"<<([^<>]*)=([^<>=]*)>>", d.solution):
        assert evaluate(m.group(1)) == Fraction(m.group(2))
    assert d.solution.rstrip().endswith(f"#### {d.answer}")


@_SETTINGS
@given(k=st.integers(0, len(_TEMPLATES) - 1), seed=st.integers(0, 10**6))
def test_determinism(k: int, seed: int) -> None:
    t = _TEMPLATES[k]
    a, b = draw(t, seed, 0), draw(t, seed, 0)
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        assert instance_hash(t, seed, 0, a) == instance_hash(t, seed, 0, b)
        assert (a.question, a.solution, a.answer) == (b.question, b.solution, b.answer)


def test_templates_roundtrip_json() -> None:
    t = _TEMPLATES[0]
    back = Template.from_dict(t.to_dict())
    assert back == t
    assert draw(back, 5, 1).question == draw(t, 5, 1).question


@pytest.mark.slow
def test_full_test_set_zero_audit_failures() -> None:
    from contam.perturb import build_variant_set

    ref = build_variant_set(load_benchmark("gsm8k"), variants=10, seed=0)
    # The program-side checks never fail; the two issue-16 checks (template-free readback, stale
    # numbers) catch a few draws, which are never emitted.
    assert set(ref.report.failures) <= {
        "stale_numbers",
        "readback",
        "readback:conversion",
        "readback:period",
        "readback:enumeration",
        "readback:ordinal",
        "readback:definite",
    }
    assert ref.report.templated / ref.report.items >= 0.6
