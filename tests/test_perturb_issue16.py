"""Issue 16: variants a careful grader accepts. Regression tests on the real GSM8K test items the
issue names (each becomes correct or is rejected with a reason), the template-free readback
check, the stale-number check, and a property test that every number is accounted for.

Each regression test checks the emitted variants against a formula derived by hand from the
*question* (not from the template), so a lifter that ties a number to the wrong reading fails.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam.data import Item, load_benchmark
from contam.perturb import build_variant_set, draw, instances, lift
from contam.perturb.audit import audit_instance, unaccounted_numbers
from contam.perturb.instantiate import Draw
from contam.perturb.readback import check
from contam.perturb.records import Rejection, Template

GSM = load_benchmark("gsm8k")


def _item(start: str) -> Item:
    return next(x for x in GSM if x.question.startswith(start))


def _variants(item: Item, n: int = 6, seed: int = 11) -> list:
    t = lift(item)
    assert isinstance(t, Template), t
    got = instances(t, n, seed)
    assert got, "the item should still yield variants"
    return got


def _ints(pattern: str, text: str) -> tuple[int, ...]:
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return tuple(int(g.replace(",", "")) for g in m.groups())


def test_high_heels_twice_is_not_the_count_of_pairs() -> None:
    """Item 29: 'two pairs ... the other costs twice as much' once became 'four pairs', solved as 42*4."""
    item = GSM[29]
    assert "high heels" in item.question
    for v in _variants(item):
        assert "two pairs of high heels" in v.question and "twice as much" in v.question
        (price,) = _ints(r"costs \$(\d+) and the other", v.question)
        less = _WORDS[re.search(r"cost (\w+) dollars less", v.question).group(1)]
        assert Fraction(v.answer) == price + 2 * price + less


_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


def test_monday_to_friday_keeps_five_days() -> None:
    """Item 784: the 5 of 'Monday to Friday' was tied to '5 miles'."""
    for v in _variants(GSM[784]):
        mpg, price, miles = _ints(r"is (\d+) MPG.*\$(\d+)/gallon.*office is (\d+) miles", v.question)
        assert Fraction(v.answer) == Fraction(miles * 2 * 5, mpg) * price


def test_closed_two_days_is_not_two_weeks() -> None:
    """Item 1300: 'except Sunday and Wednesday' (2 days) was tied to '2 weeks'."""
    for v in _variants(GSM[1300]):
        cars, pay, weeks = _ints(r"services (\d+) cars.*paid \$(\d+) per car.*in (\d+) weeks", v.question)
        assert int(v.answer) == cars * 5 * pay * weeks


def test_average_of_the_two_keeps_two_people() -> None:
    """Item 983: 'the average size worn by the two' became 'by the four' with two people."""
    t = lift(GSM[983])
    if isinstance(t, Rejection):  # "size five" is a label that "five times" shares: nothing may move
        assert t.reason in ("nothing_to_perturb", "answer_independent")
        return
    for v in instances(t, 6, seed=11):
        assert v.question.rstrip().endswith("worn by the two?")
        k = _WORDS.get(re.search(r"are (\w+) times", v.question).group(1)) or int(re.search(r"are (\d+) times", v.question).group(1))
        size = _WORDS.get(re.search(r"size (\w+) boots", v.question).group(1))
        assert Fraction(v.answer) == Fraction(k * size + size, 2)


def test_one_of_each_flavor_keeps_three_flavors() -> None:
    """Item 1301: '3 cookies ..., one of each flavor' with three flavors."""
    for v in _variants(GSM[1301]):
        assert "ate 3 cookies for an early day snack, one of each flavor" in v.question
        o, c, s, lunch, gift, bake = _ints(
            r"has (\d+) oatmeal cookies, (\d+) chocolate chip cookies, and (\d+) sugar.*ate (\d+) oatmeal"
            r".*gives (\d+) sugar.*bakes (\d+) of each",
            v.question,
        )
        assert int(v.answer) == o + c + s - 3 - lunch - gift + 3 * bake


def test_three_cups_and_three_meals_are_two_things() -> None:
    """Item 4: 'three cups' and 'three separate meals' moved as one while three meals stay described."""
    for v in _variants(GSM[4]):
        assert "three cups" in v.question and "three separate meals" in v.question
        morning, afternoon, flock = _ints(r"chickens (\d+) cups.*another (\d+) cups.*flock is (\d+) chickens", v.question)
        assert int(v.answer) == 3 * flock - morning - afternoon


def test_ten_packs_and_a_ten_dollar_bill() -> None:
    """Item 152: 'ten packs' and a '$10 bill' became 35 packs and a $35 bill."""
    for v in _variants(GSM[152]):
        assert "ten packs" in v.question and "$10 bill" in v.question
        price = Fraction(re.search(r"cost \$(\d+\.\d+)", v.question).group(1))
        per = _WORDS[re.search(r"has (\w+) cookies inside", v.question).group(1)]
        assert Fraction(v.answer) == 10 - 10 * per * price


def test_a_stated_conversion_is_never_resampled() -> None:
    """Item 626: '1 Mb has 1000 kb' became '1 Mb has 3000 kb'."""
    for v in _variants(GSM[626]):
        assert "1 Mb has 1000 kb" in v.question
        (speed,) = _ints(r"speed of (\d+)kb per second", v.question)
        assert Fraction(v.answer) == Fraction(speed * 3600, 1000)


def test_party_in_four_days_keeps_the_fourth_day() -> None:
    """Item 1199: a party 'in four days' still happened 'on the fourth day' after four became six."""
    t = lift(GSM[1199])
    if isinstance(t, Rejection):  # the 4 party-goers (3 + 1) are also the "fourth" day's 4: rejected, with a reason
        assert t.reason in ("result_equals_constant", "answer_independent")
        return
    for v in instances(t, 3, seed=11):
        assert "in four days" in v.question and "On the fourth day" in v.question
        made, drank, spilled, ronnie, people = _ints(
            r"made (\d+) gallons.*drinking (\d+) of.*spilled (\d+) gallons.*by (\d+) gallons"
            r".*day, (\d+) people",
            v.question,
        )
        assert Fraction(v.answer) == Fraction(made - drank - spilled - ronnie, people + 1)
        assert "day two, Ronnie" not in v.solution  # the solution's label "day three" is not a count


def test_relay_of_four_keeps_four_legs() -> None:
    """Item 183: the relay grew from 4 to 7 runners while the solution still added four legs."""
    t = lift(GSM[183])
    if isinstance(t, Rejection):
        assert t.reason
        return
    for v in instances(t, 4, seed=11):
        assert "4 by 400 meter relay" in v.question and "four members" in v.question
        (pace,) = _ints(r"precisely (\d+) seconds", v.question)
        assert int(v.answer) == (60 + 57 + 54 + 51) - 4 * pace


def test_unit_of_a_tied_result() -> None:
    """Item 504: 'four packs' was derived from the $4 a subtraction left; six packs then had two undescribed."""
    t = lift(GSM[504])
    assert isinstance(t, Template)
    four = next(s for s in t.slots if s.value == "4")
    assert four.role == "frozen"
    # The tie stays a constraint ($4 left must still be "four"): few or no draws keep it, none is wrong.
    for v in instances(t, 3, seed=11):
        assert "bought four packs" in v.question
        grape, total = _ints(r"paid \$(\d+) for a pack of grape.*paid \$(\d+) in all", v.question)
        assert Fraction(v.answer) == Fraction(total - grape - Fraction(grape, 2), 2)


def test_constant_equal_to_an_earlier_result_rejects() -> None:
    """Item 1286: '7 * 10' for 7 dimes after 2 nickels gave 10 cents; the dime's 10 followed the nickels."""
    r = lift(GSM[1286])
    # Since partial lifting the result is pinned (frozen with what it depends on) instead, so the
    # 10 reads the same either way. The 7 dimes were frozen too, as the 7 days of a week; a week
    # needs days and weeks named now, so the dimes move, and the nickels' 10 cents stay.
    assert isinstance(r, Template)
    for v in instances(r, 4, seed=11):
        (dimes,) = _ints(r"two nickels, and (\d+) dimes", v.question)
        assert int(v.answer) == 25 + 10 + 10 * dimes


def test_period_caps_and_world_facts() -> None:
    """'N days a week' never exceeds 7 (the issue saw '10 days a week', '70 weeks a year')."""
    for it in (x for x in GSM[:600] if re.search(r"\d+ days a week|\d+ weeks a year", x.question)):
        t = lift(it)
        if isinstance(t, Rejection):
            continue
        for v in instances(t, 3, seed=2):
            for n in re.findall(r"(\d+) days a week", v.question):
                assert int(n) <= 7, v.question
            for n in re.findall(r"(\d+) weeks a year", v.question):
                assert int(n) <= 52, v.question


def test_readback_reads_the_question_alone() -> None:
    assert check("He works 5 days a week.", "He works 10 days a week.") == ["period"]
    assert check("a 5 day week", "a 9 day week") == ["period"]
    assert check("for 50 weeks a year", "for 70 weeks a year") == ["period"]
    assert check("1 Mb has 1000 kb", "1 Mb has 3000 kb") == ["conversion"]
    q = GSM[983].question
    assert check(q, q.replace("by the two", "by the four").replace("five", "seven")) == ["definite"]
    q = _item("Four children are playing together").question
    assert "enumeration" in check(q, q.replace("Four children", "Six children"))
    q = GSM[1301].question
    assert check(q, q.replace("ate 3 cookies", "ate 7 cookies")) == ["enumeration"]
    q = GSM[1199].question
    assert check(q, q.replace("in four days", "in six days")) == ["ordinal"]
    for it in GSM[:200]:
        assert check(it.question, it.question) == []  # an unchanged question always reads back


def test_stale_restated_expression_fails_the_audit() -> None:
    """'72/8 = <<72/6=12>>12' must be impossible: a restated expression is the annotation's own."""
    t = lift(GSM[0])
    assert isinstance(t, Template)
    d = draw(t, seed=0)
    assert d is not None and audit_instance(t, d, seed=0, index=0, check_determinism=False) == []
    m = re.search(r"<<(\d+)-(\d+)-(\d+)=", d.solution)
    assert m
    stale = d.solution.replace(m.group(0), f"{m.group(1)} - 3 - {m.group(3)} = " + m.group(0), 1)
    bad = Draw(d.values, d.results, d.question, stale, d.answer, d.attempts)
    assert unaccounted_numbers(t, bad)
    assert "stale_numbers" in audit_instance(t, bad, seed=0, index=0, check_determinism=False)


def test_summary_reports_guards_and_rejections() -> None:
    ref = build_variant_set(GSM[:80], variants=2, seed=3)
    rep = ref.report
    assert rep.frozen and all(n > 0 for n in rep.frozen.values())
    assert sum(rep.rejections.values()) == len(ref.rejections) and rep.items == 80
    assert {"readback", "stale_numbers"} <= set(rep.checks) and rep.failures.get("readback", 0) == 0


_TEMPLATES = [t for t in (lift(x) for x in GSM[:300]) if isinstance(t, Template)]
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(0, len(_TEMPLATES) - 1), seed=st.integers(0, 10**6), index=st.integers(0, 10))
def test_every_number_is_accounted_for(k: int, seed: int, index: int) -> None:
    """Every number of a variant's question and solution comes from the program (a slot value,
    a step result, a constant it reads) or is text the original had and that did not move."""
    t = _TEMPLATES[k]
    d = draw(t, seed, index)
    if d is None or audit_instance(t, d, seed=seed, index=index, check_determinism=False):
        return  # never emitted
    assert unaccounted_numbers(t, d) == []
    # An independent, cruder reading: every digit string of the variant either carries a value
    # the program produced (at a scale it reads) or was already in the original text.
    program = {abs(r) for r in d.results} | set(d.values.values())
    program |= {v / 100 for v in d.values.values()} | {v * 100 for v in d.values.values()}
    program |= {Fraction(lf.value) for s in t.steps for lf in s.leaves if lf.kind == "const"}
    program |= {d.values[lf.ref] * Fraction(lf.scale) + Fraction(lf.offset) for s in t.steps for lf in s.leaves if lf.kind == "slot"}
    moved = {Fraction(s.value) for s in t.slots if s.role != "frozen"}
    original = {Fraction(x.replace(",", "")) for x in _NUM.findall(t.question + " " + t.solution)} - moved
    for x in _NUM.findall(d.question + " " + d.solution.rsplit("####", 1)[0]):
        v = Fraction(x.replace(",", "").rstrip("."))
        assert v in program or v in original or v in (0, 1), (x, d.question, d.solution)


@pytest.mark.slow
def test_full_test_set_coverage_and_zero_readback_failures() -> None:
    ref = build_variant_set(GSM, variants=5, seed=0)
    assert ref.report.failures.get("readback", 0) <= 10
    assert ref.report.covered / ref.report.items >= 0.55  # measured 57.6% at a6323c3 (bench/RESULTS.md)


# Round 6 (build seed 77001, sample seed 88002, bench/data/perturb_grading_77001_88002.jsonl):
# the five ill-posed classes a careful reader found, each now correct or rejected.


def _num(word: str) -> int:
    return int(word) if word.isdigit() else _WORDS[word.lower()]


def test_first_two_kinds_of_beds_stay_two() -> None:
    """Item 362: 'the first two kinds of beds' shared the chihuahua's 2 pounds and became 'six kinds'."""
    item = GSM[362]
    assert "first two kinds" in item.question
    for v in _variants(item):
        assert "between the first two kinds of beds" in v.question
        rott, chi, n_chi, n_col = _ints(
            r"Rottweiler takes (\d+) pounds.*chihuahua takes (\d+) pounds.*make (\d+) chihuahua beds and (\d+) collie", v.question
        )
        assert Fraction(v.answer) == n_chi * chi + n_col * Fraction(rott + chi, 2)


def test_sister_age_stays_near_the_original() -> None:
    """Item 496: 'five times as old' made a sister of 79 for a brother of 17 (the original: 38 and 14)."""
    item = GSM[496]
    assert item.question.startswith("Brett is 14")
    t = lift(item)
    if isinstance(t, Rejection):
        return
    for v in instances(t, 8, seed=11):
        age = _ints(r"Brett is (\d+) years old", v.question)[0]
        years = _num(re.search(r"In (\w+) years", v.question).group(1))
        mult = _num(re.search(r"will be (\w+) times as old", v.question).group(1))
        assert int(v.answer) == mult * age - years
        assert Fraction(38 * 2, 3) <= int(v.answer) <= 57


def test_no_three_thousand_pound_person() -> None:
    """Item 82: 'Alex weighs 5 pounds less than 12 times what Grace weighs' gave Alex 3,499 pounds."""
    item = GSM[82]
    assert item.question.startswith("Grace weighs")
    for v in _variants(item, n=8):
        grace, less, times = _ints(r"Grace weighs (\d+) pounds\. Alex weighs (\d+) pounds less than (\d+) times", v.question)
        alex = times * grace - less
        assert int(v.answer) == grace + alex
        assert int(v.answer) <= 623 * 3 // 2


def test_parts_of_ten_packets_still_sum_to_ten() -> None:
    """Item 449: 'ten packets ... Seven of the packets ... the other four packets' (7 + 4 is not 10)."""
    item = GSM[449]
    assert "the other four packets" in item.question
    for v in _variants(item):
        m = re.search(
            r"bought (\w+) packets.*?(\w+) of the packets had (\w+) pieces.*the other (\w+) packets had ([\w-]+) pieces", v.question
        )
        assert m, v.question
        whole, part, per, other = (_num(m.group(k)) for k in (1, 2, 3, 4))
        assert part + other == whole
        assert int(v.answer) == part * per + other * _word_num(m.group(5))


def _word_num(text: str) -> int:
    tens = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
    teens = {"thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
    if text.isdigit():
        return int(text)
    parts = text.lower().split("-")
    if parts[0] in tens:
        return tens[parts[0]] + (_WORDS[parts[1]] if len(parts) > 1 else 0)
    return teens.get(parts[0], _WORDS.get(parts[0], -1))


def test_legs_of_an_animal_are_not_resampled() -> None:
    """Item 1267: '15 4-legged animals' became '26 12-legged animals' on a farm."""
    item = GSM[1267]
    assert "4-legged" in item.question
    t = lift(item)
    if isinstance(t, Rejection):
        return
    for v in instances(t, 6, seed=11):
        assert "2-legged" in v.question and "4-legged" in v.question


# Round 7 (build seed 77002, sample seed 99003, bench/data/perturb_grading_77002_99003.jsonl).


def test_racquet_parts_still_sum_to_the_whole() -> None:
    """Item 968: '12 racquets. 3 of them ..., 6 of them ..., and 2 of them' (11, not 12): a part the
    guards froze was left out of the unused-total check."""
    item = GSM[968]
    assert "racquets that need restringing" in item.question
    t = lift(item)
    if isinstance(t, Rejection):
        assert t.reason == "unused_number_is_a_total"
        return
    for v in instances(t, 6, seed=11):
        whole, a, b, c = _ints(r"has (\d+) racquets.*?(\d+) of them.*?(\d+) of them.*?(\d+) of them", v.question)
        assert a + b + c == whole


def test_no_more_slices_eaten_than_the_pizzas_hold() -> None:
    """Item 1060: 51 slices eaten from 4 pizzas of 8 slices."""
    item = GSM[1060]
    assert "shared 4 pizzas" in item.question
    for v in _variants(item):
        pizzas, slices, more, becky = _ints(
            r"shared (\d+) pizzas\. Each pizza had (\d+) slices\. Becky ate (\d+) more.*Becky ate (\d+) slices", v.question
        )
        jake = becky - more
        assert int(v.answer) == becky + jake + 2 * jake
        assert int(v.answer) <= pizzas * slices


def test_a_result_divided_by_itself_is_rejected() -> None:
    """Item 711: '3/3' read one step result twice (one 3 was the prose's 2 bought + 1 free), so
    'buy 4 get 1 free' was priced at $1 a scoop."""
    t = lift(GSM[711])
    assert isinstance(t, Rejection) and t.reason == "degenerate_step"


def test_half_off_is_not_resampled() -> None:
    """Item 1294: '50% off' read as 0.50 became '70% off' priced at 0.70 of the shirt."""
    item = GSM[1294]
    assert "50% off" in item.question
    t = lift(item)
    if isinstance(t, Rejection):
        return
    for v in instances(t, 6, seed=11):
        assert "one 50% off" in v.question


def test_hours_worked_in_one_day_stay_within_a_day() -> None:
    """Item 793: 'Last Tuesday, she worked 27 hours'."""
    item = GSM[793]
    for v in _variants(item, n=10):
        rate, regular, pct, worked = _ints(r"earns \$(\d+) per hour for (\d+) hours.*that is (\d+)% of.*worked (\d+) hours", v.question)
        assert worked <= 24
        assert Fraction(v.answer) == rate * regular + (worked - regular) * Fraction(rate * pct, 100)


def test_rectangle_sides_are_not_the_slats_per_foot() -> None:
    """Item 971: the solution's 'a rectangle has 2 long sides' was tied to '2 wood slats' and both became 9."""
    item = GSM[971]
    for v in _variants(item):
        length, width, per = _ints(r"(\d+) foot long, (\d+) foot wide.*needs (\d+) wood slats", v.question)
        assert int(v.answer) == 2 * (length + width) * per


# Round 8 (build seed 77003, sample seed 11004, bench/data/perturb_grading_77003_11004.jsonl).


def test_split_three_ways_with_two_parents_stays_three() -> None:
    """Item 247: 'split the cost evenly seven ways with her two parents'."""
    item = GSM[247]
    assert "three ways with her two parents" in item.question
    for v in _variants(item):
        assert "three ways with her two parents" in v.question
        costs = [int(x) for x in re.findall(r"\$(\d+)", v.question)]
        assert Fraction(v.answer) == Fraction(sum(costs), 3)


def test_days_that_make_a_week_are_not_resampled() -> None:
    """Item 782: 'thrice a day for 9 days; but on two other days ... a week' (11 days)."""
    item = GSM[782]
    t = lift(item)
    if isinstance(t, Rejection):
        return
    for v in instances(t, 6, seed=11):
        assert "for 5 days" in v.question and "two other days" in v.question


def test_whole_of_a_percent_is_not_a_step_result() -> None:
    """Item 870: '100-60 = 40%' after '400/4 = 100': the variant read the 100 as 600/5 = 120."""
    t = lift(GSM[870])
    if isinstance(t, Rejection):
        assert t.reason in ("result_equals_constant", "answer_independent")
        return
    # Partial lifting: the 100 is pinned (the $400 and the four weeks that make it stay), the share moves.
    for v in instances(t, 6, seed=11):
        assert "$400 per month" in v.question and "four-week month" in v.question
        (share,) = _ints(r"pays (\d+)% of the cost", v.question)
        assert Fraction(v.answer) == Fraction(400, 4) * (100 - share) / 100


# Round 9 (build seed 77004, sample seed 22005, bench/data/perturb_grading_77004_22005.jsonl).


def test_albums_of_each_kind_stay_within_the_albums() -> None:
    """Item 1017: 'into 6 albums. 5 of the albums ... and 4 of the albums' (9 of 6)."""
    item = GSM[1017]
    for v in _variants(item):
        pics, albums, selfies, portraits = _ints(
            r"uploaded (\d+) pictures.*into (\d+) albums\.\s+(\d+) of the albums.*?(\d+) of the albums", v.question
        )
        assert selfies + portraits <= albums
        assert Fraction(v.answer) == Fraction(pics, albums) * (selfies + portraits)


def test_cents_converted_in_the_prose_is_rejected() -> None:
    """Item 358: 'Since 100 cents = $1' kept $1 a day for 12 lollipops at 66 cents."""
    t = lift(GSM[358])
    assert isinstance(t, Rejection) and t.reason == "hidden_computation"


def test_share_and_its_stated_rest_move_together() -> None:
    """Item 89: '.75 gift bags per invited guest, because 1/4 of attendees don't show up' became .40."""
    item = GSM[89]
    for v in _variants(item):
        assert ".75 gift bags" in v.question and "1/4 of attendees" in v.question
        guests, price = _ints(r"invited (\d+) friends\. Gift bags are \$(\d+)", v.question)
        assert Fraction(v.answer) == Fraction(3, 4) * guests * price


# Round 10, the final sample (build seed 77006, sample seed 44007, 200 variants).


def test_pens_made_from_empties_are_not_a_constant_one() -> None:
    """Item 236: '5 / 1 = 5 ... 25 + 5 + 1' (5 empties make 1 more pen) gave 42 + 6 + 1 for 42 pens
    and 7 empties, where 6 new pens leave too few empties for another."""
    t = lift(GSM[236])
    assert isinstance(t, Rejection) and t.reason == "degenerate_step"


def test_working_days_stay_within_a_week() -> None:
    """Item 545: 'walks there and back each day he works ... work 11 times a week'."""
    item = GSM[545]
    for v in _variants(item):
        miles, times = _ints(r"work is (\d+) miles away.*work (\d+) times a week", v.question)
        assert times <= 7
        assert int(v.answer) == 2 * miles * times


# Round 11 (build seed 77007, sample seed 55008, 120 variants).


def test_a_dog_weighs_what_a_dog_weighs() -> None:
    """Item 591: the Affenpinscher at 30 pounds made a 540-pound Mastiff (the original: 10 and 220)."""
    item = GSM[591]
    for v in _variants(item):
        (affen,) = _ints(r"weighed only (\d+) pounds", v.question)
        assert Fraction(20, 3) <= affen <= 15
        assert int(v.answer) <= 330


# Round 12 (build seed 77008, sample seed 66009, 120 variants).


def test_numerator_of_a_stated_fraction_is_not_a_step_result() -> None:
    """Item 840: '12 * 2/3' after 12 * 1/6 = 2 read the 2 as that result: 24 mm sticks had '4/3 left'."""
    t = lift(GSM[840])
    assert isinstance(t, Rejection) and t.reason in ("result_equals_constant", "answer_independent")


# Round 13, the last sample (build seed 77009, sample seed 77010, 200 variants).


def test_nobody_is_nine_feet_tall() -> None:
    """Item 1157: 'If Isabel is 9 feet tall' (the original: 7 feet)."""
    item = GSM[1157]
    t = lift(item)
    if isinstance(t, Rejection):
        return
    for v in instances(t, 6, seed=11):
        (isabel,) = _ints(r"Isabel is (\d+) feet tall", v.question)
        assert isabel <= 7
        assert Fraction(v.answer) == Fraction(isabel - 2 + 1, 2)


def test_weeks_in_april_are_not_resampled() -> None:
    """Item 1192: 'there are exactly 4 weeks in April' became 5 and 7 weeks under a tried loosening."""
    item = GSM[1192]
    t = lift(item)
    if isinstance(t, Rejection):
        return
    for v in instances(t, 6, seed=11):
        assert "exactly 4 weeks in April" in v.question


def test_facts_of_the_solar_system_are_not_resampled() -> None:
    """Items 991 and 1126: 'Comet Halley orbits the sun every 29 years', 'the circumference of the
    earth is 15,000 kilometers' (implausible, not wrong; a reader notices)."""
    for k, text in ((991, "orbits the sun every 75 years"), (1126, "circumference of the earth is 40,000 kilometers")):
        t = lift(GSM[k])
        if isinstance(t, Rejection):
            continue
        for v in instances(t, 4, seed=11):
            assert text in v.question


# Round 16 (build seed 77013, sample seed 77014).


def test_a_price_and_a_count_sharing_a_value_do_not_move_as_one() -> None:
    """Item 227: '$2.00 for extra meat ... 2 sauces' moved as one slot: '$2.50 ... 2.5 sauces'."""
    item = GSM[227]
    t = lift(item)
    if isinstance(t, Rejection):
        return
    for v in instances(t, 6, seed=11):
        assert "and 2 sauces for" in v.question


def test_frozen_parts_of_an_unread_total_still_count() -> None:
    """Item 1041: 'invited 16 people. 10 people want ... and 6 people want ...': with the 6 frozen by
    a guard, the 10 must not move alone (70 + 6 people of 16)."""
    t = lift(GSM[1041])
    if isinstance(t, Rejection):
        assert t.reason == "unused_number_is_a_total"
        return
    for v in instances(t, 6, seed=11):
        total, a, b = _ints(r"invited (\d+) people\. (\d+) people.*?(\d+) people", v.question)
        assert a + b == total


# Round 17 (build seed 77015, sample seed 77016).


def test_nobody_spends_more_than_a_day_a_day() -> None:
    """Item 32: '45 dogs ... .6 hours a day each' made 27 hours a day (189 hours a week)."""
    for v in _variants(GSM[32]):
        dogs = _ints(r"care of (\d+) dogs", v.question)[0]
        per = Fraction(re.search(r"takes (\.\d+) hours", v.question).group(1))
        assert dogs * per <= 24 and Fraction(v.answer) == dogs * per * 7
