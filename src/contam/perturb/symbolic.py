"""Automatic templating of GSM8K-style word problems (paper 004, Section 3.5).

A GSM8K solution is a chain of calculator annotations (``<<48/2=24>>``). :func:`lift` turns
that chain into a program: every number literal of every annotation is traced to a number
stated in the question (digits, money, percents, number words, "half", "twice", "a dozen"),
to the result of an earlier step, or to a known constant (60 minutes, 7 days, 100 percent,
12 per dozen ...). The template is the question with the traced numbers as typed slots, the
program, and the constraints the original satisfies. Items that cannot be traced
unambiguously are rejected with a reason.

Ambiguity is resolved so that *every* reading stays correct, never by guessing:

* two mentions with the same value become one slot (they move together, so whichever one the
  solution meant, the program reads the right value);
* a literal that equals both a question number and an earlier result ties them: the question
  number is derived from that result (or, when that would be circular, the equality becomes a
  constraint every instance must satisfy);
* a literal that equals both a question number and a licensed constant or a frozen word
  ("twice") freezes that slot;
* a number in the solution's prose that nothing explains rejects the item (an un-annotated
  computation the program would miss).

>>> from contam.data import Item
>>> t = lift(Item(id="gsm8k/train/0", question="Natalia sold clips to 48 of her friends in April, and then she sold "
...   "half as many clips in May. How many clips did Natalia sell altogether in April and May?",
...   answer="72", solution="Natalia sold 48/2 = <<48/2=24>>24 clips in May.\\nNatalia sold 48+24 = <<48+24=72>>72 "
...   "clips altogether in April and May.\\n#### 72"))
>>> [(s.value, s.role) for s in t.slots], [[(leaf.kind, leaf.ref) for leaf in s.leaves] for s in t.steps]
([('48', 'free')], [[('slot', 's0'), ('const', '')], [('slot', 's0'), ('step', '0')]])
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from fractions import Fraction

from contam.data.items import Item
from contam.perturb import arith, guards
from contam.perturb.chain import Rejected, collect_steps, final_unit_equation, unit_equations
from contam.perturb.chain import number as _number
from contam.perturb.mentions import find_mentions, licensed_constants
from contam.perturb.records import CalcStep, Leaf, Rejection, Slot, Template, TemplateConstraint
from contam.perturb.symbolic_bounds import (
    _ALGEBRA,
    _COMPARE_Q,
    _COMPARE_S,
    _HIDDEN,
    _PROSE_CONVERSION,
    _answer_bounds,
    _budget_bounds,
    _counts_other,
    _height_caps,
    _partition_bounds,
    _result_caps,
    _result_unit,
    _same_unit,
)
from contam.perturb.symbolic_bounds import _result_key as _result_key
from contam.perturb.symbolic_config import SymbolicConfig as SymbolicConfig
from contam.perturb.symbolic_config import _AmbiguousProse, _Untraced
from contam.perturb.symbolic_guards import _guards, _nature_counts, _only_ops, _scale_free
from contam.perturb.symbolic_prose import _prose
from contam.perturb.symbolic_prose import restated_readings as restated_readings
from contam.perturb.symbolic_prose import restated_value as restated_value
from contam.perturb.symbolic_slots import (
    _PERIOD_FACTORS,
    _bare_from_prose,
    _constraints,
    _percent_affine,
    _resolve_slots,
    _restates_given,
    _settle,
    _slot_deps,
    _unused_total_parts,
)
from contam.perturb.symbolic_slots import seen_before as seen_before


def template_id(item: Item) -> str:
    """Stable id of an item's template: the item id plus a digest of its text."""
    digest = hashlib.sha256((item.question + "\x00" + item.solution).encode()).hexdigest()[:10]
    return f"{item.id}@{digest}"


def lift(item: Item, config: SymbolicConfig | None = None) -> Template | Rejection:
    """Template ``item`` or say why not (a :class:`Rejection` with a short reason)."""
    pins: frozenset[Fraction] = frozenset()
    wanted: frozenset[tuple[Fraction, int]] = frozenset()
    while True:
        try:
            return _lift(item, config or SymbolicConfig(), pins, wanted)
        except _Untraced as r:
            # A literal nothing explains may be the result of a prose line with unit words
            # ("7 players + 13 players = 20 players"): lift again with that line as a step, once.
            if (r.value, r.start) in wanted or len(wanted) >= 3:
                return Rejection(item.id, r.reason, r.detail)
            wanted = wanted | {(r.value, r.start)}
        except _AmbiguousProse as r:
            # A number in the prose that may be a label or a moving number: lift again with every
            # number of that value pinned (it then reads the same in every instance), once per value.
            if r.value in pins or len(pins) >= 3:
                return Rejection(item.id, r.reason, r.detail)
            pins = pins | {r.value}
        except Rejected as r:
            return Rejection(item.id, r.reason, r.detail)


def _lift(
    item: Item,
    cfg: SymbolicConfig,
    pin_values: frozenset[Fraction] = frozenset(),
    wanted: frozenset[tuple[Fraction, int]] = frozenset(),
) -> Template:
    question, solution = item.question, item.solution
    if "####" not in solution:
        # Other GSM-style sets keep the final answer in its own field: write it GSM8K's way.
        if not item.answer.strip() or not solution.strip():
            raise Rejected("no_final_answer", "solution has no '#### answer' line and the item no answer")
        solution = solution.rstrip() + f"\n#### {item.answer.strip()}"
    try:
        answer = _number(solution.rsplit("####", 1)[1])
    except (ValueError, ZeroDivisionError):
        raise Rejected("no_final_answer", "final answer is not a number") from None
    mentions = find_mentions(question)
    body = solution.rsplit("####", 1)[0]
    constants = licensed_constants(question + " " + body)
    # "5 dogs * 4 legs/dog", "the two long sides of the park": a count of nature the solution
    # states is a constant, as if the question had said it (a question number of that value
    # counting something else is frozen by the solution_fact guard).
    constants = [*constants, *(Fraction(k) for k in _nature_counts(body))]
    # Counts the question states by naming what it counts ("Nick, Richard, Jason and DJ" are 4,
    # "Saturday and Sunday" 2 days): no instance renames or adds one, so such a count is a constant.
    story_counts = {Fraction(k) for k in guards.phrase_counts(question) + guards.enumerations(question) if k > 1}

    # Slot groups: perturbable mentions by value; frozen mentions act as constants.
    groups: dict[Fraction, list[int]] = {}
    for i, m in enumerate(mentions):
        if m.perturbable:
            groups.setdefault(Fraction(m.value), []).append(i)
    group_values = list(groups)
    gid = {v: f"s{k}" for k, v in enumerate(group_values)}
    group_scales = {v: sorted({Fraction(s) for i in groups[v] for s in mentions[i].scales}) for v in group_values}
    frozen_values = {Fraction(m.value) * Fraction(s) for m in mentions if not m.perturbable for s in m.scales}
    # What the question's mentions of each value count ("apple", "$"), for the unit readings below.
    group_nouns = {v: {guards.head_noun(question, mentions[i]) for i in ix} for v, ix in groups.items()}

    for hm in _HIDDEN.finditer(body):
        a, b, c = (_number(hm.group(k)) for k in (1, 3, 4))
        op = hm.group(2)
        if (op == "+" and a + b == c) or (op in "*x×" and a * b == c) or (op in "-−" and a - b == c):
            # "2 hours + 1 hour for a total of 3 hours": a computation outside the annotations that a
            # later literal may read; the program would read a question number in its place.
            raise Rejected("hidden_computation", f"{hm.group(0).strip()!r} is computed in the prose without an annotation")
    if _COMPARE_Q.search(question) or _COMPARE_S.search(re.sub(r"<<[^<>]*>>", " ", body)):
        # "maximize profit ... since $52 > $78": a choice the program does not make again on new numbers.
        raise Rejected("comparison", "the answer depends on a comparison the program does not carry")
    if _ALGEBRA.search(solution.rsplit("####", 1)[0]):
        # "Let x be ...", "2*x + x = 45": the solution reasons with an unknown the program cannot follow.
        raise Rejected("algebra_in_solution", "the solution solves for an unknown outside the annotations")
    parsed = _bare_from_prose(solution, collect_steps(solution))
    if not parsed:
        raise Rejected("no_annotations", "solution has no <<expr=result>> annotations")
    if all(p.value != answer for p in parsed):
        # "7 puppies / 20 puppies * 100% = 35%" after the last annotation: the answer is computed in
        # the prose with unit words between the numbers; that line becomes the last step (its
        # literals are traced like any other; otherwise the item stays answer_not_computed).
        last = final_unit_equation(solution, answer)
        if last is not None and not any(p.start < last.end and last.start < p.end for p in parsed):
            parsed = sorted([*parsed, last], key=lambda p: p.start)
    for value, start in sorted(wanted):
        # The last unit-word prose line before the step that reads ``value`` and gives it.
        found = [
            q
            for q in unit_equations(solution)
            if q.value == value and q.end <= start and not any(p.start < q.end and q.start < p.end for p in parsed)
        ]
        if found:
            parsed = sorted([*parsed, found[-1]], key=lambda p: p.start)
    # How often each value is read before any step produces it: when a value is read more often
    # than the question states it, some reads come from a constant ("2/2" for "2 bolts ... half").
    reads: dict[Fraction, int] = {}
    seen_results: set[Fraction] = set()
    for p in parsed:
        for lit in arith.literals(p.tree):
            if lit.value not in seen_results:
                reads[lit.value] = reads.get(lit.value, 0) + 1
        seen_results.add(p.value)
    worded = guards.constant_values(question, body, world=False)  # stated by a word: "twice", "Monday to Friday"
    world = worded | guards.world_facts(question, body)
    strong = worded
    stated_constants = world | {int(c) for c in constants if c.denominator == 1 and c not in guards.TIME_FACTS}
    if re.search(r"%|\bpercent", question, re.IGNORECASE):
        # "100-60 = 40%" after a step that gave 100: the whole of a percent is a constant too.
        strong = strong | {100}
    results: list[Fraction] = []
    steps: list[CalcStep] = []
    # Ties collected while tracing, resolved after.
    slot_links: dict[str, tuple[str, Fraction]] = {}  # slot -> (root slot, ratio): value(slot) = value(root) * ratio
    step_ties: list[tuple[str, int, Fraction]] = []  # (slot, step, ratio): value(slot) * ratio == result(step)
    step_eqs: list[tuple[int, int]] = []  # two earlier results a literal could be: they must stay equal
    freeze: set[str] = set()
    bound: dict[str, list[int]] = {}  # slot -> steps whose leaves read it directly
    consumed: set[int] = set()  # steps whose result a later literal already reads
    # Partial lifting: a literal with two readings (an earlier result and a constant, or a question
    # number and an earlier result in percent) no longer rejects the item. The steps it could read
    # are pinned (every free slot they depend on is frozen) and so are the question numbers it
    # could read: in every instance both readings then have the original value, so whichever one
    # the solution meant, the program computes the same number.
    pinned: set[int] = set()
    pin_slots: set[str] = set()
    # "2 inches ... twice that" solved as 2*2: the question's 2 and the constant of "twice" are
    # both read, in one product. Which factor is which does not matter, so one is the slot and
    # the other the constant, and the 2 may move (gsm8k/test/1224). Read alone in another step it
    # is the question's 2: a multiplier word multiplies ("2 + 4" after "2 x 2" for "twice as much").
    split: set[Fraction] = set()
    # Results read on by a sum of terms in their own unit ("6+4 = 10 times" for "2+4 = 6 times").
    confirmed: set[int] = set()
    story_nouns = {guards.head_noun(question, m) for m in mentions} | {
        guards.singular(w.group(0).lower()) for m in mentions if (w := re.match(r"\s*[A-Za-z]+", question[m.end : m.end + 20]))
    }
    story_nouns = {n.strip() for n in story_nouns} - {"", "%"}
    step_units: list[str] = []  # the unit each step's result is stated in (see _result_unit)

    def unit_of_step(j: int) -> str:
        """A step's unit, if it is a thing the question counts ("times", "scoops"; not "remained")."""
        return step_units[j] if step_units[j] in story_nouns else ""

    def unit_of(value: Fraction) -> str:
        """What a literal of this value counts: an earlier result's unit, or the one noun of the
        question's mentions of it; "" when unknown or ambiguous."""
        if value in results:
            return unit_of_step(results.index(value)) if results.count(value) == 1 and value not in groups else ""
        nouns = group_nouns.get(value, set())
        return next(iter(nouns)) if len(nouns) == 1 and "" not in nouns else ""

    # How often each step writes each value, and how often the whole solution does.
    lit_counts = [Counter(lit.value for lit in arith.literals(q.tree)) for q in parsed]
    total_counts = sum(lit_counts, Counter[Fraction]())

    for i, p in enumerate(parsed):
        # Values written exactly twice in a product step, stated once in the question.
        doubled = (
            {v for v, k in lit_counts[i].items() if k == 2 and len(groups.get(v, ())) == 1 and v not in (0, 1)}
            if _only_ops(p.tree, "*")
            else set()
        )
        twins = {
            v
            for v in doubled
            if sum(c[v] > 1 for c in lit_counts) == 1
            and sum(not m.perturbable and m.kind == "multiplier" and Fraction(m.value) == v for m in mentions) == 1
            and sum(not m.perturbable and Fraction(m.value) * Fraction(x) == v for m in mentions for x in m.scales) == 1
            and v not in results
        }
        twin_seen: set[Fraction] = set()
        # "60/15 = 4 containers ... 4*4" with "$4.00 per carton": a product of a result and the
        # question's equal number, read nowhere else. Whichever factor is which, the product is
        # the same, so one is the result and the other the number, and no tie pins them together.
        pairs = {
            v
            for v in doubled
            if total_counts[v] == 2
            and sum(r == v for r in results) == 1
            and v not in frozen_values
            and v not in constants
            and v not in story_counts
        }
        pair_seen: set[Fraction] = set()
        sums = _only_ops(p.tree, "+-")
        # The unit this annotation's result is stated in, if the question counts it; for a sum
        # (``here``) its terms count that too.
        unit_p = _result_unit(solution, p)
        story_unit = unit_p if unit_p in story_nouns else ""
        here = story_unit if sums else ""
        unit_here = story_unit if story_unit != "$" else ""
        if (
            isinstance(p.tree, arith.Num)
            and p.value not in seen_before(parsed, i)
            and not _restates_given(solution, p, set(groups) | frozen_values)
        ):
            # "<<15=15>>": a result stated, not computed; the program would read a question number as it.
            raise Rejected("bare_annotation", f"step {i}: <<{p.expr}={p.value}>> computes nothing")
        leaves: list[Leaf] = []
        for lit in arith.literals(p.tree):
            v = lit.value
            from_steps = [j for j in range(i - 1, -1, -1) if results[j] == v]
            if len(from_steps) > 1:
                # Several earlier results share this value. A chain feeds each result forward, so
                # when exactly one of them is not read yet it is the one meant; otherwise the
                # equality becomes a constraint (every reading then stays correct).
                fresh = [j for j in from_steps if j not in consumed]
                if len(fresh) == 1:
                    from_steps = fresh
            from_groups = [(g, v / g) for g in group_values if g != 0 and v / g in group_scales[g]]
            if v in pairs:
                if v in pair_seen:
                    from_steps = []  # the second factor: the question's number
                else:
                    pair_seen.add(v)
                    from_groups = []  # the first: the result
            if len(from_steps) == 1 and len(from_groups) == 1 and from_groups[0][1] == 1:
                there = unit_of_step(from_steps[0])
                nouns = group_nouns[from_groups[0][0]]
                if from_steps[0] in confirmed and there and _counts_other(nouns, there):
                    # "2+4 = 6 times ... 6+4 = 10 times ... 10x6" with "each ride cost 6 tickets":
                    # the 6 times were read on by a sum of times; a second read, where an equal
                    # number counts tickets, is that number (gsm8k/test/132).
                    from_steps = []
                elif sums and there and here and here != there and here in nouns:
                    # "6-3 = 3 potatoes ... 3-1 = 2 scoops" with "1 less than 3 scoops": a sum of
                    # scoops reads the question's 3 scoops, not the 3 potatoes (gsm8k/test/1140).
                    from_steps = []
            from_const = v in frozen_values or (v in constants and v != 1) or v in story_counts
            # "4+1 = 5 points" after "4*.25 = 1 point", "$2 - $1" after "$4/2 = $2": a term of a sum
            # stated in the unit of the result it equals is that result; a multiplier, a percent
            # base or a denominator is no term of a sum of points or dollars. (A fact of time, "60
            # minutes", may be one, so it still pins.)
            counted = bool(from_steps) and bool(here) and here == unit_of_step(from_steps[0]) and v not in guards.TIME_FACTS
            if from_steps and from_const and not from_groups and _scale_free(p.tree, lit, unit_of, unit_of_step(from_steps[0]), unit_here):
                # "12/3 = 4 sandwiches ... 12/4 = 3 sandwiches" for "a quarter of the sandwiches":
                # sandwiches over 4 sandwiches would be no sandwiches, so the 4 is the quarter's.
                from_steps = []
            if (
                not counted
                and from_steps
                and v.denominator == 1
                and int(v) in strong
                and v not in (0, 1)
                and (v not in groups or v in frozen_values)
            ):
                # "7 * 10" for 7 dimes after a step that happened to give 10: the literal is the dime's
                # 10 or that result, and no draw keeps both readings unless the result never moves:
                # so it never moves (pinned); the item is rejected later if nothing else can move.
                pinned.update(from_steps)
                # The constant itself may come from a stated period ("a 40-hour workweek" is 2,400
                # minutes): the number that states the period is pinned too, or that reading moves.
                pin_slots.update(gid[g] for g in group_values if g != 0 and v / g in _PERIOD_FACTORS)
            if from_steps and v == 1 and v in frozen_values and not counted:
                # "1 * 7" for "1 pound of coffee per day" after 5 * .2 = 1: the question's frozen 1 or
                # that result (gsm8k/test/661 read the result and stated 401 for 107). Pinned as above,
                # so both readings are 1 in every instance.
                pinned.update(from_steps)
            if (
                from_steps
                and not counted
                and v not in (0, 1)
                and v not in groups
                and any(
                    not m.perturbable and m.kind == "fraction" and v in {Fraction(m.value) * Fraction(x) for x in m.scales[1:]}
                    for m in mentions
                )
            ):
                # "12 * 2/3" after 12 * 1/6 = 2: the 2 is the numerator the question states ("2/3
                # left") or that result; the program read the result, and 24 sticks became "4/3 left".
                # Pinned as above.
                pinned.update(from_steps)
            if from_steps:
                j = from_steps[0]
                leaves.append(Leaf("step", str(j), "1", str(v), lit.text))
                # A question number already read elsewhere against a result nothing has read yet:
                # the result is meant (a chain reads each result onward). Otherwise tie them.
                if not (j not in consumed and all(gid[g] in bound for g, _ in from_groups)):
                    # A fresh result added to or taken from what counts the same thing ("6+4 = 10
                    # times" after "2+4 = 6 times", with "6 tickets" per ride): the result is
                    # meant, and no tie pins the tickets to the rides. A product mixes units, so
                    # there the tie stays ("40/100*40": 40 students or the 40 %).
                    same = j not in consumed and bool(here) and here == unit_of_step(j)
                    step_ties.extend(
                        (gid[g], j, scale) for g, scale in from_groups if not (same and scale == 1 and _counts_other(group_nouns[g], here))
                    )
                consumed.add(j)
                if here and here == unit_of_step(j):
                    confirmed.add(j)  # read on by a sum of the same unit: the result is meant there
                step_eqs.extend((j, k) for k in from_steps[1:])
            elif v in twins and v in twin_seen:
                leaves.append(Leaf("const", "", "1", str(v), lit.text))
            elif from_groups:
                if v in twins:
                    twin_seen.add(v)
                    split.add(v)
                if any(r * k == v for r in results for k in (Fraction(1, 100), Fraction(100))):
                    # ".5" for the 100% - 50% = 50% of a step, or for the 50% the question states: which
                    # one the solution meant cannot be told, so neither may move (both pinned).
                    pinned.update(j for j, r in enumerate(results) if r * 100 == v or r / 100 == v)
                    pin_slots.update(gid[h] for h, _ in from_groups)
                g, scale = from_groups[0]
                leaves.append(Leaf("slot", gid[g], str(scale), str(v), lit.text))
                bound.setdefault(gid[g], []).append(i)
                for h, hscale in from_groups[1:]:
                    slot_links.setdefault(gid[h], (gid[g], scale / hscale))
                stated = sum(len(groups[h]) for h, _ in from_groups)
                # Read more often than stated, and a constant could explain the extra reads: which
                # read is which is unknown, so the number stays. A fact of time counts only where
                # both its units are named (guards.WORLD_FACTS): "12 homes" read twice in "three
                # years" is no 12 months (gsm8k/test/854).
                explained = v in frozen_values or v in story_counts or (v.denominator == 1 and int(v) in stated_constants)
                if explained and reads.get(v, 0) > stated and v not in split:
                    freeze.update(gid[h] for h, _ in from_groups)
            elif len(affine := _percent_affine(v, group_values, groups, mentions)) == 1:
                # "25% more" written as 1.25, "20% off" as 0.8: 1 +/- p/100 of a percent slot.
                g, scale = affine[0]
                leaves.append(Leaf("slot", gid[g], str(scale), str(v), lit.text, "1"))
                bound.setdefault(gid[g], []).append(i)
            elif from_const or v == 1 or v == 0:
                leaves.append(Leaf("const", "", "1", str(v), lit.text))
            else:
                raise _Untraced(
                    v, p.start, f"step {i}: {lit.text} in {p.expr} is not in the question, an earlier result, or a known constant"
                )
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
        steps.append(CalcStep(p.expr, str(p.value), tuple(leaves), p.start, p.end, p.echo_start, p.echo_end, p.prose))
        results.append(p.value)
        step_units.append(unit_p)

    for cm in _PROSE_CONVERSION.finditer(body):  # raw text: "x minutes = <<...>>y" is an annotation's echo
        if _number(cm.group(1)) in results:
            # "Since 100 cents = $1 she spends $1": a result converted in the prose; the later
            # "$5 - $1" reads a 1 the program takes for a constant, and 12 lollipops at 66 cents
            # still cost $1.
            raise Rejected("hidden_computation", f"{cm.group(0).strip()!r} converts a result outside the annotations")
    answer_step = max((i for i, r in enumerate(results) if r == answer), default=-1)
    if answer_step < 0:
        raise Rejected("answer_not_computed", f"final answer {answer} is not the result of any annotation")

    guard_freeze, guard_constraints = _guards(
        question, solution, mentions, groups, gid, reads, steps, freeze, frozen_values, split, consts=world, worded=worded
    )
    freeze |= set(guard_freeze)
    slots = _resolve_slots(mentions, groups, gid, bound, slot_links, step_ties, freeze)
    # A question number derived from a step result must count what that result counts ("four packs"
    # is not the $4 a subtraction left); otherwise it is frozen, and the tie becomes a constraint.
    unit_clash = {
        s.id: "result_unit"
        for s in slots
        if s.role == "derived" and s.source.startswith("step:") and not _same_unit(question, mentions, s, step_units[int(s.source[5:])])
    }
    if unit_clash:
        guard_freeze.update(unit_clash)
        freeze |= set(unit_clash)
        slots = _resolve_slots(mentions, groups, gid, bound, slot_links, step_ties, freeze)

    def rebuild() -> tuple[list[Slot], list[set[str]]]:
        out = _resolve_slots(mentions, groups, gid, bound, slot_links, step_ties, freeze)
        out = [
            dataclasses.replace(s, source=f"guard:{guard_freeze[s.id]}")
            if s.id in guard_freeze and s.role == "frozen" and s.source == "constant"
            else s
            for s in out
        ]
        return _settle(out, steps)

    def freeze_more(ids: set[str], why: str) -> None:
        for sid in ids:
            guard_freeze.setdefault(sid, why)
        freeze.update(ids)

    def freeze_unused_total_parts() -> tuple[list[Slot], list[set[str]]]:
        # A number the program never reads that is a sum or product of numbers that move ("8
        # customers: the first 3 ..., the next 2 ..., the last 3 ..."): the parts are frozen (a part
        # derived from a result freezes what that result depends on), so the stated total stays right.
        slots, deps = rebuild()
        while parts := _unused_total_parts(question, mentions, slots):
            by_id = {s.id: s for s in slots}
            more = set()
            for s in slots:
                if s.role in ("free", "derived") and any(i in parts for i in s.mentions):
                    more |= {s.id} | _slot_deps(s.id, by_id, deps)
            if not more - freeze:  # nothing left to freeze, yet a part still moves: reject as before
                raise Rejected("unused_number_is_a_total", "a number never read is a sum or product of numbers that change")
            freeze_more(more - freeze, "unused_total_part")
            slots, deps = rebuild()
        return slots, deps

    # A result the solution computes and never uses ("30 - 12 - 8 = 10 neutral days", before the
    # story names "eight neutral days") checks the story; a draw that changes it may contradict
    # what the story says next (15 good days left 7 neutral days for eight: gsm8k/test/672). It
    # stays, as a pinned result does.
    read_steps = {int(leaf.ref) for st in steps for leaf in st.leaves if leaf.kind == "step"}
    pinned.update(j for j in range(len(steps)) if j not in read_steps and j != answer_step)
    for v in pin_values:  # numbers of the prose that may be labels (see lift)
        if v in gid:
            pin_slots.add(gid[v])
        pinned.update(j for j, r in enumerate(results) if r == v)
    freeze_more(pin_slots - freeze, "pinned")
    slots, deps = rebuild()
    while pinned and (more := set().union(*(deps[j] for j in pinned)) - freeze):
        freeze_more(more, "pinned")  # the free numbers a pinned result depends on
        slots, deps = rebuild()
    slots, deps = freeze_unused_total_parts()
    if not deps[answer_step]:
        raise Rejected("answer_independent", "the answer does not depend on any number that can change")
    by_id = {s.id: s for s in slots}
    money = {j for j, u in enumerate(step_units) if u == "$"}
    constraints = _constraints(slots, mentions, results, step_ties, by_id, question, money)
    constraints += [TemplateConstraint("eqstep", str(j), str(k)) for j, k in sorted(set(step_eqs))]
    moving_ids = {s.id for s in slots if s.role == "free"}
    constraints += [c for c in guard_constraints if c.target in moving_ids]
    constraints += _answer_bounds(question, mentions, slots, answer, answer_step)
    constraints += _budget_bounds(question, mentions, slots, results)
    constraints += _result_caps(question, solution, steps, results, step_units)
    constraints += _height_caps(solution, steps, results)
    for j, (st, r) in enumerate(zip(steps, results, strict=True)):
        if st.prose and 0 < r < 100 and "%" in solution[st.echo_start : st.echo_end + 1]:
            # "40 + 24 + 38 = 102%" for the charge of a power bank that "wasn't fully charged"
            # (gsm8k/test/1012): a share the prose states below the whole stays below it.
            constraints.append(TemplateConstraint("stmax", str(j), "9999/100"))
    constraints += _partition_bounds(question, mentions, slots)
    # Ages stay human (at most 100 where the original's were) and angles stay angles (at most 90
    # degrees from the ground): "Bill saw the comet at 200", "227 degrees from the ground".
    low_q = question.lower()
    for cap, on in ((100, "years old" in low_q or "how old" in low_q or "age" in low_q), (90, "degree" in low_q and "angle" in low_q)):
        if on:
            constraints += [TemplateConstraint("stmax", str(j), str(cap)) for j, r in enumerate(results) if 0 < r <= cap]
    if not any(s.role == "free" for s in slots):
        raise Rejected("nothing_to_perturb", "no question number the program reads can be changed")
    moving_results = {r for r, d in zip(results, deps, strict=True) if d}
    slot_nouns = {gid[v]: nouns for v, nouns in group_nouns.items()}
    prose = _prose(
        solution, steps, slots, group_values, group_scales, gid, results, frozen_values | set(constants), cfg, moving_results, slot_nouns
    )
    notes = tuple(f"slot {gid[v]} merges {len(ix)} mentions" for v, ix in groups.items() if len(ix) > 1 and gid[v] in bound)
    if notes and not cfg.merge_repeated:
        raise Rejected("repeated_value", notes[0])
    return Template(
        id=template_id(item),
        item_id=item.id,
        question=question,
        solution=solution,
        answer=str(answer),
        mentions=tuple(mentions),
        slots=tuple(slots),
        steps=tuple(steps),
        answer_step=answer_step,
        prose=tuple(prose),
        constraints=tuple(constraints),
        notes=notes,
    )
