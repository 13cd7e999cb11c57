"""Tracing of the GSM8K templater (:mod:`contam.perturb.symbolic`): every literal of every calculation traced to where it comes from.

:func:`trace` traces each literal of the calculations :func:`~contam.perturb.symbolic_read.read_problem`
collected to a question number, an earlier result or a constant, and records the ties, freezes
and pins those readings imply, which :func:`~contam.perturb.symbolic_slots.choose_slots` resolves.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from contam.perturb import arith, guards
from contam.perturb.chain import Rejected, _Parsed
from contam.perturb.chain import number as _number
from contam.perturb.records import CalcStep, Leaf, Mention
from contam.perturb.symbolic_bounds import _counts_other, _result_unit
from contam.perturb.symbolic_config import _Untraced
from contam.perturb.symbolic_guards import _only_ops, _scale_free
from contam.perturb.symbolic_state import LiftProblem, LiftTrace

_PROSE_CONVERSION = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:cents?|minutes?|seconds?|inches|ounces|months|centimeters|cm|grams|ml)\s*(?:=|is|are|equals?|makes?)\s*"
    r"\$?\s*(\d+(?:\.\d+)?)\s*(?:dollars?|hours?|minutes?|feet|foot|pounds?|years?|meters?|m|kg|kilograms?|liters?|l)?\b",
    re.IGNORECASE,
)


def _restates_given(solution: str, p: object, given: set[Fraction]) -> bool:
    """A bare annotation that only restates a number of the question ("Chair = <<3=3>>3 feet",
    "Amber ran <<8=8>>8 miles."): its value is a number the question states, and its line before it
    holds no digit and no arithmetic, so nothing was computed in the head. The step then reads that
    question number (it moves with it), which is what the line says."""
    line_start = solution.rfind("\n", 0, p.start) + 1  # type: ignore[attr-defined]
    before = solution[line_start : p.start]  # type: ignore[attr-defined]
    return p.value in given and p.value > 1 and not re.search(r"[\d+*/×÷−–]|\s[-x]\s", before)  # type: ignore[attr-defined]


def seen_before(parsed: list, i: int) -> set[Fraction]:
    """Results of the steps before step ``i`` (a bare annotation may restate one of them)."""
    return {q.value for q in parsed[:i]}


#: Units per period that :func:`guards.constant_values` multiplies a stated period by ("two weeks": 14).
_PERIOD_FACTORS = frozenset({7, 12, 52, 365, 60, 24})


def _percent_affine(
    v: Fraction, group_values: list[Fraction], groups: dict[Fraction, list[int]], mentions: list[Mention]
) -> list[tuple[Fraction, Fraction]]:
    """The percent groups ``v`` is 1 plus or minus of ("25% more" as 1.25, "20% off" as 0.8), each with its scale (+-1/100)."""
    out: list[tuple[Fraction, Fraction]] = []
    for g in group_values:
        if any(mentions[i].kind == "percent" for i in groups[g]):
            if v == 1 + g / 100:
                out.append((g, Fraction(1, 100)))
            elif v == 1 - g / 100:
                out.append((g, Fraction(-1, 100)))
    return out


@dataclass
class _StepView:
    """One calculation as its literals are traced: the products and units that settle their readings."""

    index: int
    step: _Parsed
    #: Values written twice in this product, stated once in the question, and once by a multiplier
    #: word: one factor is the question's number, the other the word's constant.
    twins: set[Fraction]
    #: Values written twice in this product and once as an earlier result: one factor each.
    pairs: set[Fraction]
    #: The calculation is a sum (only ``+`` and ``-``).
    sums: bool
    #: The unit its result is stated in.
    unit: str
    #: For a sum, the question's noun its terms count ("" if none).
    here: str
    #: The question's noun its result counts, money aside.
    unit_here: str
    twin_seen: set[Fraction]
    pair_seen: set[Fraction]


@dataclass
class _Readings:
    """What one literal could read: earlier results, question numbers (group value, scale), a constant."""

    value: Fraction
    from_steps: list[int]
    from_groups: list[tuple[Fraction, Fraction]]
    from_const: bool
    #: A term of a sum in the unit of the result it equals: that result is meant.
    counted: bool


def trace(pb: LiftProblem) -> LiftTrace:
    """Trace every literal of every calculation to a question number, an earlier result or a
    constant: the program's steps, with the ties, freezes and pins the readings imply; rejects a
    literal nothing explains, a step that computes nothing, and an answer no step computes."""
    tr = LiftTrace()
    # How often each step writes each value, and how often the whole solution does.
    lit_counts = [Counter(lit.value for lit in arith.literals(q.tree)) for q in pb.parsed]
    total_counts = sum(lit_counts, Counter[Fraction]())
    for i, p in enumerate(pb.parsed):
        _trace_step(pb, tr, _step_view(pb, tr, i, p, lit_counts, total_counts))
    for cm in _PROSE_CONVERSION.finditer(pb.body):  # raw text: "x minutes = <<...>>y" is an annotation's echo
        if _number(cm.group(1)) in tr.results:
            # "Since 100 cents = $1 she spends $1": a result converted in the prose; the later
            # "$5 - $1" reads a 1 the program takes for a constant, and 12 lollipops at 66 cents
            # still cost $1.
            raise Rejected("hidden_computation", f"{cm.group(0).strip()!r} converts a result outside the annotations")
    tr.answer_step = max((i for i, r in enumerate(tr.results) if r == pb.answer), default=-1)
    if tr.answer_step < 0:
        raise Rejected("answer_not_computed", f"final answer {pb.answer} is not the result of any annotation")
    return tr


def _unit_of_step(pb: LiftProblem, tr: LiftTrace, j: int) -> str:
    """A step's unit, if it is a thing the question counts ("times", "scoops"; not "remained")."""
    return tr.step_units[j] if tr.step_units[j] in pb.story_nouns else ""


def _unit_of(pb: LiftProblem, tr: LiftTrace, value: Fraction) -> str:
    """What a literal of this value counts: an earlier result's unit, or the one noun of the
    question's mentions of it; "" when unknown or ambiguous."""
    if value in tr.results:
        return _unit_of_step(pb, tr, tr.results.index(value)) if tr.results.count(value) == 1 and value not in pb.groups else ""
    nouns = pb.group_nouns.get(value, set())
    return next(iter(nouns)) if len(nouns) == 1 and "" not in nouns else ""


def _step_view(
    pb: LiftProblem, tr: LiftTrace, i: int, p: _Parsed, lit_counts: list[Counter[Fraction]], total_counts: Counter[Fraction]
) -> _StepView:
    """Calculation ``i`` with its repeated factors and its units, before its literals are traced."""
    # Values written exactly twice in a product step, stated once in the question.
    doubled = (
        {v for v, k in lit_counts[i].items() if k == 2 and len(pb.groups.get(v, ())) == 1 and v not in (0, 1)}
        if _only_ops(p.tree, "*")
        else set()
    )
    mentions = pb.mentions
    twins = {
        v
        for v in doubled
        if sum(c[v] > 1 for c in lit_counts) == 1
        and sum(not m.perturbable and m.kind == "multiplier" and Fraction(m.value) == v for m in mentions) == 1
        and sum(not m.perturbable and Fraction(m.value) * Fraction(x) == v for m in mentions for x in m.scales) == 1
        and v not in tr.results
    }
    # "60/15 = 4 containers ... 4*4" with "$4.00 per carton": a product of a result and the
    # question's equal number, read nowhere else. Whichever factor is which, the product is
    # the same, so one is the result and the other the number, and no tie pins them together.
    pairs = {
        v
        for v in doubled
        if total_counts[v] == 2
        and sum(r == v for r in tr.results) == 1
        and v not in pb.frozen_values
        and v not in pb.constants
        and v not in pb.story_counts
    }
    sums = _only_ops(p.tree, "+-")
    # The unit this annotation's result is stated in, if the question counts it; for a sum
    # (``here``) its terms count that too.
    unit_p = _result_unit(pb.solution, p)
    story_unit = unit_p if unit_p in pb.story_nouns else ""
    here = story_unit if sums else ""
    unit_here = story_unit if story_unit != "$" else ""
    return _StepView(i, p, twins, pairs, sums, unit_p, here, unit_here, set(), set())


def _trace_step(pb: LiftProblem, tr: LiftTrace, sv: _StepView) -> None:
    """Trace one calculation's literals and append it as a step (rejecting one that computes nothing)."""
    i, p = sv.index, sv.step
    if (
        isinstance(p.tree, arith.Num)
        and p.value not in seen_before(pb.parsed, i)
        and not _restates_given(pb.solution, p, set(pb.groups) | pb.frozen_values)
    ):
        # "<<15=15>>": a result stated, not computed; the program would read a question number as it.
        raise Rejected("bare_annotation", f"step {i}: <<{p.expr}={p.value}>> computes nothing")
    leaves: list[Leaf] = []
    for lit in arith.literals(p.tree):
        r = _readings(pb, tr, sv, lit)
        _pin_double_readings(pb, tr, r)
        leaves.append(_leaf(pb, tr, sv, lit, r))
    if (
        isinstance(p.tree, arith.BinOp)
        and p.tree.op in "/-"
        and len(leaves) == 2
        and leaves[0].kind == "step"
        and (leaves[0].kind, leaves[0].ref, leaves[0].scale) == (leaves[1].kind, leaves[1].ref, leaves[1].scale)
    ):
        # "3/3" where both 3s read one earlier result: one of them is a count the prose made
        # ("buy 2, get one free ... 3 scoops"), and the program would divide a result by itself.
        raise Rejected("degenerate_step", f"step {i}: {p.expr} reads one value twice")
    if (
        isinstance(p.tree, arith.BinOp)
        and p.tree.op == "/"
        and isinstance(p.tree.right, arith.Num)
        and p.tree.right.value == 1
        and leaves[0].kind == "step"
    ):
        # "25/5 = 5 ... 5 / 1 = 5 ... 25 + 5 + 1": an earlier result divided by 1 computes
        # nothing; the 1 is a count the prose made (5 empties make 1 pen), which on new numbers
        # is not 1 any more (42 pens, 7 empties: 6 new pens and none after, not 42 + 6 + 1).
        raise Rejected("degenerate_step", f"step {i}: {p.expr} divides by 1")
    tr.steps.append(CalcStep(p.expr, str(p.value), tuple(leaves), p.start, p.end, p.echo_start, p.echo_end, p.prose))
    tr.results.append(p.value)
    tr.step_units.append(sv.unit)


def _readings(pb: LiftProblem, tr: LiftTrace, sv: _StepView, lit: arith.Num) -> _Readings:
    """Where a literal could come from, narrowed where the chain or the units tell which reading is meant."""
    i = sv.index
    v = lit.value
    from_steps = [j for j in range(i - 1, -1, -1) if tr.results[j] == v]
    if len(from_steps) > 1:
        # Several earlier results share this value. A chain feeds each result forward, so
        # when exactly one of them is not read yet it is the one meant; otherwise the
        # equality becomes a constraint (every reading then stays correct).
        fresh = [j for j in from_steps if j not in tr.consumed]
        if len(fresh) == 1:
            from_steps = fresh
    from_groups = [(g, v / g) for g in pb.group_values if g != 0 and v / g in pb.group_scales[g]]
    if v in sv.pairs:
        if v in sv.pair_seen:
            from_steps = []  # the second factor: the question's number
        else:
            sv.pair_seen.add(v)
            from_groups = []  # the first: the result
    if len(from_steps) == 1 and len(from_groups) == 1 and from_groups[0][1] == 1:
        there = _unit_of_step(pb, tr, from_steps[0])
        nouns = pb.group_nouns[from_groups[0][0]]
        if from_steps[0] in tr.confirmed and there and _counts_other(nouns, there):
            # "2+4 = 6 times ... 6+4 = 10 times ... 10x6" with "each ride cost 6 tickets":
            # the 6 times were read on by a sum of times; a second read, where an equal
            # number counts tickets, is that number (gsm8k/test/132).
            from_steps = []
        elif sv.sums and there and sv.here and sv.here != there and sv.here in nouns:
            # "6-3 = 3 potatoes ... 3-1 = 2 scoops" with "1 less than 3 scoops": a sum of
            # scoops reads the question's 3 scoops, not the 3 potatoes (gsm8k/test/1140).
            from_steps = []
    from_const = v in pb.frozen_values or (v in pb.constants and v != 1) or v in pb.story_counts
    # "4+1 = 5 points" after "4*.25 = 1 point", "$2 - $1" after "$4/2 = $2": a term of a sum
    # stated in the unit of the result it equals is that result; a multiplier, a percent
    # base or a denominator is no term of a sum of points or dollars. (A fact of time, "60
    # minutes", may be one, so it still pins.)
    counted = bool(from_steps) and bool(sv.here) and sv.here == _unit_of_step(pb, tr, from_steps[0]) and v not in guards.TIME_FACTS
    if (
        from_steps
        and from_const
        and not from_groups
        and _scale_free(sv.step.tree, lit, lambda value: _unit_of(pb, tr, value), _unit_of_step(pb, tr, from_steps[0]), sv.unit_here)
    ):
        # "12/3 = 4 sandwiches ... 12/4 = 3 sandwiches" for "a quarter of the sandwiches":
        # sandwiches over 4 sandwiches would be no sandwiches, so the 4 is the quarter's.
        from_steps = []
    return _Readings(v, from_steps, from_groups, from_const, counted)


def _pin_double_readings(pb: LiftProblem, tr: LiftTrace, r: _Readings) -> None:
    """Pin the results (and question numbers) a literal with two readings could read, so that
    in every instance both readings keep the original value."""
    v, from_steps = r.value, r.from_steps
    if (
        not r.counted
        and from_steps
        and v.denominator == 1
        and int(v) in pb.strong
        and v not in (0, 1)
        and (v not in pb.groups or v in pb.frozen_values)
    ):
        # "7 * 10" for 7 dimes after a step that happened to give 10: the literal is the dime's
        # 10 or that result, and no draw keeps both readings unless the result never moves:
        # so it never moves (pinned); the item is rejected later if nothing else can move.
        tr.pinned.update(from_steps)
        # The constant itself may come from a stated period ("a 40-hour workweek" is 2,400
        # minutes): the number that states the period is pinned too, or that reading moves.
        tr.pin_slots.update(pb.gid[g] for g in pb.group_values if g != 0 and v / g in _PERIOD_FACTORS)
    if from_steps and v == 1 and v in pb.frozen_values and not r.counted:
        # "1 * 7" for "1 pound of coffee per day" after 5 * .2 = 1: the question's frozen 1 or
        # that result (gsm8k/test/661 read the result and stated 401 for 107). Pinned as above,
        # so both readings are 1 in every instance.
        tr.pinned.update(from_steps)
    if (
        from_steps
        and not r.counted
        and v not in (0, 1)
        and v not in pb.groups
        and any(
            not m.perturbable and m.kind == "fraction" and v in {Fraction(m.value) * Fraction(x) for x in m.scales[1:]} for m in pb.mentions
        )
    ):
        # "12 * 2/3" after 12 * 1/6 = 2: the 2 is the numerator the question states ("2/3
        # left") or that result; the program read the result, and 24 sticks became "4/3 left".
        # Pinned as above.
        tr.pinned.update(from_steps)


def _leaf(pb: LiftProblem, tr: LiftTrace, sv: _StepView, lit: arith.Num, r: _Readings) -> Leaf:
    """The literal's leaf under the reading chosen, recording the ties, bindings and freezes it implies;
    raises :class:`_Untraced` for a literal nothing explains."""
    i, p, v = sv.index, sv.step, r.value
    gid = pb.gid
    if r.from_steps:
        j = r.from_steps[0]
        # A question number already read elsewhere against a result nothing has read yet:
        # the result is meant (a chain reads each result onward). Otherwise tie them.
        if not (j not in tr.consumed and all(gid[g] in tr.bound for g, _ in r.from_groups)):
            # A fresh result added to or taken from what counts the same thing ("6+4 = 10
            # times" after "2+4 = 6 times", with "6 tickets" per ride): the result is
            # meant, and no tie pins the tickets to the rides. A product mixes units, so
            # there the tie stays ("40/100*40": 40 students or the 40 %).
            same = j not in tr.consumed and bool(sv.here) and sv.here == _unit_of_step(pb, tr, j)
            tr.step_ties.extend(
                (gid[g], j, scale) for g, scale in r.from_groups if not (same and scale == 1 and _counts_other(pb.group_nouns[g], sv.here))
            )
        tr.consumed.add(j)
        if sv.here and sv.here == _unit_of_step(pb, tr, j):
            tr.confirmed.add(j)  # read on by a sum of the same unit: the result is meant there
        tr.step_eqs.extend((j, k) for k in r.from_steps[1:])
        return Leaf("step", str(j), "1", str(v), lit.text)
    if v in sv.twins and v in sv.twin_seen:
        return Leaf("const", "", "1", str(v), lit.text)
    if r.from_groups:
        if v in sv.twins:
            sv.twin_seen.add(v)
            tr.split.add(v)
        if any(res * k == v for res in tr.results for k in (Fraction(1, 100), Fraction(100))):
            # ".5" for the 100% - 50% = 50% of a step, or for the 50% the question states: which
            # one the solution meant cannot be told, so neither may move (both pinned).
            tr.pinned.update(j for j, res in enumerate(tr.results) if res * 100 == v or res / 100 == v)
            tr.pin_slots.update(gid[h] for h, _ in r.from_groups)
        g, scale = r.from_groups[0]
        tr.bound.setdefault(gid[g], []).append(i)
        for h, hscale in r.from_groups[1:]:
            tr.slot_links.setdefault(gid[h], (gid[g], scale / hscale))
        stated = sum(len(pb.groups[h]) for h, _ in r.from_groups)
        # Read more often than stated, and a constant could explain the extra reads: which
        # read is which is unknown, so the number stays. A fact of time counts only where
        # both its units are named (guards.WORLD_FACTS): "12 homes" read twice in "three
        # years" is no 12 months (gsm8k/test/854).
        explained = v in pb.frozen_values or v in pb.story_counts or (v.denominator == 1 and int(v) in pb.stated_constants)
        if explained and pb.reads.get(v, 0) > stated and v not in tr.split:
            tr.freeze.update(gid[h] for h, _ in r.from_groups)
        return Leaf("slot", gid[g], str(scale), str(v), lit.text)
    if len(affine := _percent_affine(v, pb.group_values, pb.groups, pb.mentions)) == 1:
        # "25% more" written as 1.25, "20% off" as 0.8: 1 +/- p/100 of a percent slot.
        g, scale = affine[0]
        tr.bound.setdefault(gid[g], []).append(i)
        return Leaf("slot", gid[g], str(scale), str(v), lit.text, "1")
    if r.from_const or v == 1 or v == 0:
        return Leaf("const", "", "1", str(v), lit.text)
    raise _Untraced(v, p.start, f"step {i}: {lit.text} in {p.expr} is not in the question, an earlier result, or a known constant")
