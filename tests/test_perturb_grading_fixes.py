"""Issue 16, second grading (260 variants, 2026-11-26): regression tests for the classes it found.

Each test runs the real lifter, vetting and sampler on the real GSM8K test item the reader
flagged; the item is now either rejected with a named reason or every variant is checked against
a formula derived by hand from the variant *question* alone.
"""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction

from contam.data import load_benchmark
from contam.perturb import instances, lift
from contam.perturb.records import Rejection, Template
from contam.perturb.variantset import build_variant_set
from contam.perturb.vetting import original_defect, prose_results, vet

GSM = load_benchmark("gsm8k")


def _vetted(i: int) -> Template | Rejection:
    t = lift(GSM[i])
    assert isinstance(t, Template), t
    return vet(t)


def test_prose_result_equal_to_a_question_number_is_rejected() -> None:
    """Item 410: "$3/2 = $1.50+$3.00=$4.50" derives $1.50 in prose and the seashells cost $1.50:
    the variant read the taffy's half price as the seashell price (stated 2, correct 1)."""
    item = GSM[410]
    assert "seashells for $1.50" in item.question
    assert Fraction(3, 2) in prose_results(item.solution)
    ref = build_variant_set([item], variants=5, seed=0)
    assert not ref.variants
    assert [r.reason for r in ref.rejections] == ["prose_result_is_question_number"]
    assert ref.report.rejections == {"prose_result_is_question_number": 1}


def test_prose_chain_reading_a_question_number_is_rejected() -> None:
    """Item 884: "160-80 = 80 toys" in prose, then "80-30": the program reads Bonnie's 80 toys where
    the solution means what is left, so a variant giving Bonnie 70 would still subtract 70."""
    item = GSM[884]
    assert item.question.startswith("Argo has 200 toys. He gives 40 toys to Alyssa, 80 to Bonnie")
    got = _vetted(884)
    assert isinstance(got, Rejection) and got.reason == "prose_result_is_question_number"


def test_annotated_echo_is_not_prose() -> None:
    """An annotation with its echoed result ("4*.25=$<<4*0.25=1.00>>1.00") is not prose arithmetic."""
    assert prose_results("4 magnets is 4*.25=$<<4*0.25=1.00>>1.00\n#### 1") == []
    assert prose_results("so 7-3 = 4 days\n#### 4") == [Fraction(4)]


def test_unused_stock_bounds_what_is_eaten() -> None:
    """Item 712: "both start with 100 pieces ... Ginger eats 4 pieces a day ... after two weeks".
    The 100 is never read, but 11 pieces a day for 14 days is 154 > 100 (the variant graded
    ill-posed). Now what each girl eats in 14 days stays within the 100 pieces; with the 7 of a
    week, the original 4 and 3 and a changed answer excluded, no draw is left: rejected."""
    t = _vetted(712)
    assert isinstance(t, Template)
    assert ("prodle", "s1*#1", "100") in {(c.kind, c.target, c.arg) for c in t.constraints}
    ref = build_variant_set([GSM[712]], variants=5, seed=88001)
    for v in ref.variants:  # none expected; if the ranges ever widen, each must still be sound
        ginger, amy = (int(g) for g in re.search(r"Ginger eats (\d+) pieces a day and Amy eats (\d+)", v.question).groups())
        assert ginger * 14 <= 100 and amy * 14 <= 100, v.question
    assert not ref.variants
    assert [r.reason for r in ref.rejections] == ["sampling_exhausted"]


def test_unused_budget_bounds_the_spending() -> None:
    """Item 1034: "Ted starts with $200. He buys 3 books for 16 dollars each and 3 pencils for 6
    dollars each": the $200 is never read, yet no variant may spend more than it; the bounds keep
    this harmless case covered."""
    item = GSM[1034]
    assert item.question.startswith("Ted starts with $200.")
    t = _vetted(1034)
    assert isinstance(t, Template)
    # The answer was already bounded (ansle); the vetting adds the parts: neither purchase alone may
    # exceed the $200, and the budget case keeps its variants.
    kinds = {(c.kind, c.target) for c in t.constraints}
    assert {("stmax", "0"), ("stmax", "1")} <= kinds
    got = instances(t, 6, 0)
    assert len(got) >= 5
    for v in got:
        m = re.search(
            r"starts with \$(\d+)\. He buys (\d+) books for (\d+) dollars each and (\d+) pencils for (\d+) dollars each", v.question
        )
        assert m, v.question
        budget, books, price, pencils, pprice = (int(g) for g in m.groups())
        assert budget == 200
        assert Fraction(v.answer) == books * price + pencils * pprice <= budget, v.question


def test_unused_number_of_another_kind_adds_no_bound() -> None:
    """Item 823: "two practice games" is unused but counts games, not the points that move: no bound.
    (823 itself is a known-defective original; its template is vetted directly here.)"""
    t = _vetted(823)
    assert isinstance(t, Template)
    assert any(s.source == "unused" for s in t.slots)
    assert not [c for c in t.constraints if c.kind.startswith("prod")]


def test_known_defective_originals_get_no_instances() -> None:
    """Items 823 (wrong gold: 14, should be 18), 255 (ten vs twenty stalls), 144 (Kim vs Lucas) and
    991 (impossible ages) copy their defect into every faithful variant: rejected as original_defect."""
    items = [GSM[i] for i in (823, 255, 144, 991)]
    ref = build_variant_set(items, variants=5, seed=0)
    assert not ref.variants
    assert [r.reason for r in ref.rejections] == ["original_defect"] * 4
    assert ref.report.rejections == {"original_defect": 4}
    assert all("independent grading of contam variants, 2026-11-26" in r.detail for r in ref.rejections)
    assert "14 + 4 = 18" in ref.rejections[0].detail


def test_every_listed_defect_matches_its_packaged_original() -> None:
    """Each of the 32 entries (11 from variant gradings, 21 from reading the originals, 2 or 3 of 3
    readers agreeing) names a real GSM8K test item by id and question start, and rejects it."""
    from contam.perturb.vetting import known_defects

    listed = known_defects()
    assert len(listed) == 34
    for gid, (start, detail) in listed.items():
        item = GSM[int(gid.rsplit("/", 1)[1])]
        assert item.id == gid and item.question.startswith(start), gid
        rej = original_defect(item)
        assert (
            rej is not None
            and rej.reason == "original_defect"
            and detail.split(":", 1)[0] in ("wrong_gold", "ill_posed", "self_contradiction", "impossible_story", "ambiguous")
        )
    # 1309's wrong gold (Maryam's $400 margin summed in place of Sarah's $300) is one of them
    assert "2180" in listed["gsm8k/test/1309"][1] and "2 of 3 readers" in listed["gsm8k/test/1309"][1]


def test_defect_list_needs_the_recorded_question() -> None:
    """An entry applies to the id only with the question it was verified on (a renumbered copy is not rejected)."""
    item = GSM[823]
    assert original_defect(item) is not None
    assert original_defect(dataclasses.replace(item, question="Sasha scored 3 points. " + item.question)) is None
    assert original_defect(GSM[0]) is None


def test_a_one_the_question_states_is_not_read_as_an_earlier_result() -> None:
    """Item 661 (graded wrong, 2026-11-26): "he uses 1 pound of coffee per day" after 5 * .2 = 1;
    the program read the 1 of "1*7" as that result, so a 40 % markup on $10 made it "4*7 pounds"
    and stated 401 for 107. The result is now pinned: both readings are 1 in every instance."""
    from contam.perturb import make_variant_set

    ref = make_variant_set([GSM[661]], variants=5, seed=5)
    assert ref
    for v in ref:
        price, markup = (Fraction(x) for x in re.findall(r"\$?(\d+)(?:%| per pound)", v.question)[:2])
        donut = Fraction(re.search(r"donut for \$(\d+)", v.question).group(1))
        assert Fraction(v.answer) == price * (1 + markup / 100) * 7 + donut, v.question


def test_originals_found_defective_by_the_second_grading_get_no_instances() -> None:
    from contam.perturb import make_variant_set

    items = [GSM[i] for i in (119, 768, 649, 1059)]
    assert make_variant_set(items, variants=2, seed=0) == []


def test_a_period_keeps_dividing_what_it_divided() -> None:
    """Item 292 (graded ill-posed, 2026-11-26): "$4 every 40 minutes" for 150 minutes of work left
    3.75 pay blocks (pro rata or whole blocks?). "Every N minutes" is now a frozen period: the
    pay moves, the 10 minutes stay, and 150 / 10 is still a whole number of blocks."""
    ref = build_variant_set([GSM[292]], variants=5, seed=0)
    assert len(ref.variants) == 5
    for v in ref.variants:
        assert "every 10 minutes" in v.question
        assert not v.question.startswith("Susan earns $5 ")
    (t,) = ref.templates.values()
    assert [s.source for s in t.slots if s.value == "10"] == ["guard:period"]


def test_a_moving_number_keeps_its_order_with_a_frozen_one_of_its_kind() -> None:
    """Item 721 (graded ill-posed, 2026-11-26): 300 taps per minute is frozen, 250 and 200 taps
    per minute move, and "her tap rate slowed down to 200": a draw of 470 and 400 made the slow-down
    a speed-up. Numbers that count the same thing as a frozen one stay on its side of it."""
    ref = build_variant_set([GSM[721]], variants=5, seed=0)
    assert len(ref.variants) == 5
    for v in ref.variants:
        rates = [int(x) for x in re.findall(r"(\d+) taps per minute", v.question)]
        assert rates[0] == 300 and rates[2] < rates[1] < 300, rates
