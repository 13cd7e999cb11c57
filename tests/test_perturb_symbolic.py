"""Symbolic templating and instantiation on real GSM8K items, checked by hand."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from contam.data import Item, load_benchmark
from contam.perturb import audit_instance, draw, instances, lift, make_variant_set
from contam.perturb.arith import ArithError, evaluate
from contam.perturb.mentions import find_mentions
from contam.perturb.records import Rejection, Template


def _numbers(text: str) -> list[str]:
    return re.findall(r"(?<![\d.])\d+(?:\.\d+)?(?![\d])", text.replace(",", ""))


@pytest.fixture(scope="module")
def test_items() -> list[Item]:
    return load_benchmark("gsm8k")


@pytest.fixture(scope="module")
def natalia() -> Item:
    return load_benchmark("gsm8k-train")[0]


def test_arith_is_exact_and_safe() -> None:
    assert evaluate("48/2") == 24
    assert evaluate("0.1+0.2") == Fraction(3, 10)  # exact, unlike floats
    assert evaluate("3 x 4") == 12 and evaluate("$1,200/4") == 300
    for bad in ("__import__('os')", "(1).real", "2**100000", "[1]", "a if b else c", "1/0"):
        with pytest.raises(ArithError):
            evaluate(bad)


def test_mentions_typed() -> None:
    got = [
        (m.text, m.value, m.kind, m.perturbable)
        for m in find_mentions("Tom paid $1.50 for a dozen eggs, 20% off, at 3:00 pm on his 2nd try; he had twelve.")
    ]
    assert got == [
        ("1.50", "3/2", "money", True),
        ("dozen", "12", "multiplier", False),
        ("20", "20", "percent", True),
        ("3", "3", "time", False),
        ("2", "2", "ordinal", False),
        ("twelve", "12", "word", True),
    ]


def test_natalia_template_and_instance(natalia: Item) -> None:
    t = lift(natalia)
    assert isinstance(t, Template)
    moving = [s for s in t.slots if s.role != "frozen"]
    assert [(s.value, s.role) for s in moving] == [("48", "free")]
    # step 0 is 48/2 (half is a constant), step 1 is 48 + step 0
    assert [(lf.kind, lf.ref) for lf in t.steps[1].leaves] == [("slot", "s0"), ("step", "0")]
    d = draw(t, seed=0, index=0)
    assert d is not None
    v = d.values["s0"]
    # hand check: April v clips, May half as many, altogether 3v/2
    assert v != 48 and v.denominator == 1 and v % 2 == 0
    assert d.answer == str(v * 3 / 2)
    assert f"to {v} of her friends" in d.question and "48" not in _numbers(d.question)
    assert f"<<{v}/2={v // 2}>>" in d.solution and f"<<{v}+{v // 2}={d.answer}>>" in d.solution
    assert d.solution.endswith(f"#### {d.answer}")
    assert audit_instance(t, d, seed=0, index=0) == []


def test_percent_problem(test_items: list[Item]) -> None:
    josh = test_items[2]  # house $80,000 + $50,000 repairs, value up 150%: profit = 80,000*1.5 + 80,000 - 130,000
    t = lift(josh)
    assert isinstance(t, Template)
    pct = next(s for s in t.slots if s.kind == "percent")
    house = next(s for s in t.slots if s.value == "80000")
    repairs = next(s for s in t.slots if s.value == "50000")
    assert pct.role == house.role == repairs.role == "free"
    for index in range(5):
        d = draw(t, seed=1, index=index)
        assert d is not None
        a, b, p = d.values[house.id], d.values[repairs.id], d.values[pct.id]
        assert Fraction(d.answer) == a * p / 100 + a - (a + b)  # hand-derived formula
        assert f"{p}%" in d.question and "150%" not in d.question
        assert f"${int(a):,}" in d.question and "80,000" not in d.question  # thousands commas kept
        assert audit_instance(t, d, seed=1, index=index) == []


def test_money_problem_keeps_cents(test_items: list[Item]) -> None:
    mishka = test_items[26]  # 3 * (16.50 + 22.50 + 42)
    t = lift(mishka)
    assert isinstance(t, Template)
    d = draw(t, seed=0, index=0)
    assert d is not None
    prices = re.findall(r"\$(\d+\.\d\d)", d.question)
    assert len(prices) == 2 and "16.50" not in prices and "22.50" not in prices  # two decimals kept, values changed
    n = next(v for s, v in d.values.items() if next(x for x in t.slots if x.id == s).value == "3")
    total = n * (
        Fraction(prices[0])
        + Fraction(prices[1])
        + next(v for s, v in d.values.items() if next(x for x in t.slots if x.id == s).value == "42")
    )
    assert Fraction(d.answer) == total


def test_rejected_items_say_why(test_items: list[Item]) -> None:
    kyle = lift(test_items[24])  # algebra in prose, no annotation computes the answer
    assert isinstance(kyle, Rejection) and kyle.reason in (
        "no_annotations",
        "untraced_operand",
        "answer_not_computed",
        "algebra_in_solution",
    )
    # An operand that is in neither the question nor an earlier result: cannot be traced.
    odd = Item(
        id="x/1",
        question="Sam has 5 apples and buys 3 more. How many apples?",
        solution="He has 5+3+7=<<5+3+7=15>>15 apples.\n#### 15",
        answer="15",
    )
    r = lift(odd)
    assert isinstance(r, Rejection) and r.reason == "untraced_operand" and "7" in r.detail
    # Two earlier results share a value and neither is free: the literal is ambiguous, so the
    # equality becomes a constraint every instance must keep (or the item yields nothing).
    amb = Item(
        id="x/2",
        question="Ann has 3 boxes of 4 pens and 2 bags of 6 pens. How many pens?",
        solution="3*4=<<3*4=12>>12 and 2*6=<<2*6=12>>12, so 12+12=<<12+12=24>>24.\n#### 24",
        answer="24",
    )
    t = lift(amb)
    assert isinstance(t, Template) and any(c.kind == "eqstep" for c in t.constraints)
    for v in instances(t, 3, seed=0):
        assert Fraction(v.answer) == 2 * Fraction(v.values["s0"]) * Fraction(v.values["s1"])


def test_same_value_mentions_move_together() -> None:
    it = Item(
        id="x/3",
        question="James runs 3 sprints 3 times a week. He runs 60 meters each sprint. How many meters a week?",
        solution="He sprints 3*3=<<3*3=9>>9 times\nSo he runs 9*60=<<9*60=540>>540 meters\n#### 540",
        answer="540",
    )
    t = lift(it)
    assert isinstance(t, Template)
    d = draw(t, seed=3)
    assert d is not None
    n = re.findall(r"runs (\d+) sprints (\d+) times", d.question)[0]
    m = int(re.findall(r"runs (\d+) meters", d.question)[0])
    assert n[0] == n[1] and int(d.answer) == int(n[0]) ** 2 * m


def test_reference_set_api(test_items: list[Item]) -> None:
    ref = make_variant_set(test_items[:30], variants=2, seed=0)
    assert len(ref) >= 30  # issue 16: ambiguous numbers are frozen or rejected, so fewer items yield variants
    for v in ref:
        assert v.kind == "symbolic" and v.answer != v.original_answer and len(v.audit_hash) == 64
    again = make_variant_set(test_items[:30], variants=2, seed=0)
    assert [v.audit_hash for v in again] == [v.audit_hash for v in ref]
    other = make_variant_set(test_items[:30], variants=2, seed=1)
    assert {v.audit_hash for v in other}.isdisjoint({v.audit_hash for v in ref})


def test_coverage_48_in_148_is_not_a_survivor(natalia: Item) -> None:
    t = lift(natalia)
    assert isinstance(t, Template)
    from contam.perturb.audit import audit_instance as audit
    from contam.perturb.instantiate import Draw, compiled, render_question, render_solution

    for new, ok in ((Fraction(148), True), (Fraction(48), False)):
        values, results = compiled(t).run({"s0": new})
        q = render_question(t, values)
        sol, ans = render_solution(t, values, results)
        fails = audit(t, Draw(values, results, q, sol, ans, 1), seed=0, index=0, check_determinism=False)
        assert ("coverage" in fails) is (not ok)


def test_unread_totals_and_restated_numbers_are_rejected(test_items: list[Item]) -> None:
    billy = next(x for x in test_items if x.question.startswith("Billy sells DVDs. He has 8 customers"))
    r = lift(billy)  # 8 customers = 3 + 2 + 3: moving the parts would contradict the total
    assert isinstance(r, Rejection) and r.reason in ("unused_number_is_a_total", "fixed_term_sum", "answer_independent")
    drink = test_items[20]  # "the remaining 24 liters": read by the solution, computed by no step
    r = lift(drink)
    # Rejected either for the 24 the solution reads outside any step, or (the partition guard:
    # "the remaining 24 liters" fixes the liters it is made of) because nothing is left to move.
    assert isinstance(r, Rejection) and r.reason in ("unused_number_in_solution", "answer_independent")


def test_prose_arithmetic_becomes_a_step(test_items: list[Item]) -> None:
    cynthia = test_items[27]  # "60/15 = 4 containers" has no annotation, then <<4*4=16.00>>
    t = lift(cynthia)
    assert isinstance(t, Template)
    assert t.steps[0].prose and t.steps[0].expr == "60/15"
    # "4*4": one 4 is the $4.00 price, the other the 60/15 = 4 containers, and neither 4 is read
    # anywhere else. Which factor is which does not change the product, so one is the result and
    # the other the price, which moves on its own (before, it was frozen and tied to the
    # containers, and no instance was emitted).
    price = next(s for s in t.slots if s.value == "4")
    assert price.role == "free"
    d = draw(t, seed=0)
    assert d is not None and audit_instance(t, d, seed=0, index=0) == []
    m = re.search(r"with (\d+) servings .* \$([\d.]+) per carton.*After (\d+) days", d.question)
    assert m and Fraction(d.answer) == Fraction(m.group(3)) / int(m.group(1)) * Fraction(m.group(2))
    jack = Item(
        id="other/2",
        question="Jack had 8 pens and bought 3 boxes of 6 pens. How many pens does he have?",
        solution="The boxes hold 3*6 = 18 pens, so he has 8+18=<<8+18=26>>26 pens.\n#### 26",
        answer="26",
    )
    t = lift(jack)
    assert isinstance(t, Template) and t.steps[0].prose and t.steps[0].expr == "3*6"
    d = draw(t, seed=0)
    assert d is not None and audit_instance(t, d, seed=0, index=0) == []
    m = re.search(r"The boxes hold (\d+)\*(\d+) = (\d+) pens", d.solution)
    assert m and int(m.group(1)) * int(m.group(2)) == int(m.group(3))


def test_name_swap_changes_context_not_numbers(natalia: Item) -> None:
    plain = make_variant_set([natalia], variants=2, seed=0)
    swapped = make_variant_set([natalia], variants=2, seed=0, names=True)
    for a, b in zip(plain, swapped, strict=True):
        assert "Natalia" not in b.question and "Natalia" not in b.solution
        new = b.metadata["names"]["Natalia"]
        assert b.question == a.question.replace("Natalia", new) and b.answer == a.answer
        assert _numbers(b.question) == _numbers(a.question) and b.audit_hash != a.audit_hash


def test_item_with_answer_field_and_prose_only_solution() -> None:
    # Other GSM-style sets: no calculator annotations, the answer in its own field.
    it = Item(
        id="other/1",
        question="Jack had 8 pens and Mary had 5 pens. Jack gave 3 pens to Mary. How many pens does Jack have now?",
        solution="Jack has 8 - 3 = 5 pens left.",
        answer="5",
    )
    t = lift(it)
    assert isinstance(t, Template) and t.steps[0].prose
    for v in make_variant_set([it], variants=3, seed=2):
        a, b = (int(x) for x in re.findall(r"Jack had (\d+) pens.*Jack gave (\d+) pens", v.question)[0])
        assert int(v.answer) == a - b >= 0 and "Mary had 5 pens" in v.question
        assert v.solution.endswith(f"#### {v.answer}") and f"{a} - {b} = {v.answer}" in v.solution
