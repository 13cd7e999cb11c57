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
import itertools
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from contam.data.items import Item
from contam.perturb import arith, guards
from contam.perturb.chain import _PROSE_NUM, Rejected, collect_steps, final_unit_equation, unit_equations
from contam.perturb.chain import number as _number
from contam.perturb.mentions import CONSTANTS, ORDINALS, find_mentions, licensed_constants, word_for
from contam.perturb.records import Constraint, Leaf, Mention, ProseNumber, Rejection, Slot, Step, Template


@dataclass(frozen=True)
class SymbolicConfig:
    """Knobs of the templater.

    ``reject_unexplained``: reject an item whose solution prose holds a number that neither a
    slot, a step, nor a constant explains (it signals a computation outside the annotations).
    ``merge_repeated``: mentions sharing a value form one slot; when False, an operand whose
    value the question states twice is rejected as ambiguous instead.
    """

    reject_unexplained: bool = True
    merge_repeated: bool = True


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


class _Untraced(Rejected):
    """``untraced_operand`` with the literal's value and where its step starts."""

    def __init__(self, value: Fraction, start: int, detail: str) -> None:
        super().__init__("untraced_operand", detail)
        self.value = value
        self.start = start


class _AmbiguousProse(Rejected):
    """``ambiguous_solution_number`` with the value that could be pinned instead."""

    def __init__(self, value: Fraction, detail: str) -> None:
        super().__init__("ambiguous_solution_number", detail)
        self.value = value


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
    steps: list[Step] = []
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
        steps.append(Step(p.expr, str(p.value), tuple(leaves), p.start, p.end, p.echo_start, p.echo_end, p.prose))
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
    constraints += [Constraint("eqstep", str(j), str(k)) for j, k in sorted(set(step_eqs))]
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
            constraints.append(Constraint("stmax", str(j), "9999/100"))
    constraints += _partition_bounds(question, mentions, slots)
    # Ages stay human (at most 100 where the original's were) and angles stay angles (at most 90
    # degrees from the ground): "Bill saw the comet at 200", "227 degrees from the ground".
    low_q = question.lower()
    for cap, on in ((100, "years old" in low_q or "how old" in low_q or "age" in low_q), (90, "degree" in low_q and "angle" in low_q)):
        if on:
            constraints += [Constraint("stmax", str(j), str(cap)) for j, r in enumerate(results) if 0 < r <= cap]
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


def _restated_with_noun(body: str, v: Fraction, ms: list[Mention], nouns: list[str], reads: dict[Fraction, int]) -> bool:
    """Whether the solution reads ``v`` no more often than the question states it and restates it
    with the question's noun ("60 downloads", "$30 a month" is not): then a 60 the solution reads
    is the 60 downloads, not 60 minutes of an hour a word elsewhere makes a fact."""
    if reads.get(v, 0) > len(ms) or any(not n or n in ("$", "%") or len(n) < 3 for n in nouns):
        return False
    if any(value == v and pattern and re.search(pattern, n) for value, pattern in CONSTANTS for n in nouns):
        return False  # "7 days", "16 ounces": a fact of that very unit (a week, a pound) stays a fact
    prose = re.sub(r"<<[^<>]*>>", " ", body)
    text = str(v.numerator) if v.denominator == 1 else ""
    return bool(text) and all(
        re.search(rf"(?<![\d.,]){text}(?![\d.,]\d)\s+(?:[a-z]+\s+)?{re.escape(n[:-1] if len(n) > 3 else n)}", prose, re.IGNORECASE)
        for n in set(nouns)
    )


def _scale_free(tree: arith.Node, lit: arith.Num, unit_of: Callable[[Fraction], str], step_unit: str, unit: str) -> bool:
    """Whether ``lit`` is the divisor of "x / k", or a factor of "x * k", where x counts ``unit``
    and so does the whole step: then k has no unit, and cannot be an earlier result counting
    ``unit`` (``step_unit``)."""
    if not unit or step_unit != unit or not isinstance(tree, arith.BinOp):
        return False
    if tree.op == "/" and tree.right is lit:
        rest = [x for x in arith.literals(tree.left) if x.value != 1]
    elif tree.op == "*" and lit in (tree.left, tree.right):
        rest = [tree.right if tree.left is lit else tree.left]
    else:
        return False
    return len(rest) == 1 and isinstance(rest[0], arith.Num) and unit_of(rest[0].value) == unit


def _only_ops(node: arith.Node, ops: str) -> bool:
    """A tree of these operators alone: "+-" for a sum ("6+4", "7-2-1": its terms count one
    thing), "*" for a product ("2*2", "3*2*5": its factors can be read in any order)."""
    if isinstance(node, arith.BinOp):
        return node.op in ops and _only_ops(node.left, ops) and _only_ops(node.right, ops)
    return isinstance(node, arith.Num)


def _guards(
    question: str,
    solution: str,
    mentions: list[Mention],
    groups: dict[Fraction, list[int]],
    gid: dict[Fraction, str],
    reads: dict[Fraction, int],
    steps: list[Step],
    already: set[str],
    frozen_values: set[Fraction] | None = None,
    split: set[Fraction] | None = None,
    *,
    consts: set[int],
    worded: set[int],
) -> tuple[dict[str, str], list[Constraint]]:
    """Slots to freeze (slot id -> guard name) and range constraints, from what the text means
    (:mod:`contam.perturb.guards`); raises :class:`Rejected` where freezing cannot make it right."""
    body = solution.rsplit("####", 1)[0]
    ordinals = guards.ordinal_values(question) | guards.ordinal_values(body)
    freeze: dict[str, str] = {}
    extra: list[Constraint] = []
    for v, idx in groups.items():
        sid = gid[v]
        ms = [mentions[i] for i in idx]
        nouns = [guards.head_noun(question, m) for m in ms]
        why = ""
        if any(_LABEL.search(question[max(0, m.start - 12) : m.start]) for m in ms):
            why = "label"  # "Grade 5", "Room 12": a name, not a quantity
        elif (
            v.denominator == 1
            and int(v) in consts
            and reads.get(v, 0) >= 1
            and not (split and v in split)
            and not (int(v) not in worded and _restated_with_noun(body, v, ms, nouns, reads))
        ):
            why = "constant_word"  # "twice", "Monday to Friday", "Sunday and Wednesday", 7 days a week, 3 listed flavors
        elif frozen_values and v in frozen_values and reads.get(v, 0) >= 1 and not (split and v in split):
            why = "frozen_mention"  # the 5 of "2/5" read as "Grade 5": a frozen fraction explains it too
        elif len(ms) > 1 and len(set(nouns)) > 1 and (reads.get(v, 0) < len(ms) or len({m.kind for m in ms}) > 1):
            # "three cups ... three separate meals": which one the program reads is unknown; and a
            # price and a count that share a value ("$2.00 meat ... 2 sauces") cannot move as one
            # ($2.50 would make 2.5 sauces).
            why = "one_number_two_things"
        elif v.denominator == 1 and int(v) in ordinals:
            why = "ordinal"  # "in four days ... on the fourth day"
        elif _unanchored_definite(question, ms, nouns):
            why = "definite_count"  # "the average size worn by the two": the story fixed that count
        elif any(
            re.match(
                r"^\s*(?:weeks?|days?)\s+in\s+(?:a\s+month|the\s+month|a\s+year|" + "|".join(guards.MONTHS) + r")\b",
                question[m.end : m.end + 30],
                re.IGNORECASE,
            )
            for m in ms
        ):
            why = "world_fact"  # "there are exactly 4 weeks in April": how long a month is, as the story counts it
        elif any(
            re.match(
                r"^[- ](?:(?:days?|weeks?)[- ](?:weeks?|months?|years?)|months?[- ]years?)\b", question[m.end : m.end + 20], re.IGNORECASE
            )
            for m in ms
        ):
            why = "world_fact"  # "two 4-week months", "a 30-day month": how long a period is (gsm8k/test/750)
        elif any(
            re.search(
                r"(?:(?:circumference|diameter|radius)\s+of\s+(?:the\s+)?(?:earth|moon|sun)\s+is|orbits\s+the\s+sun\s+every)\s+$",
                question[max(0, m.start - 50) : m.start],
                re.IGNORECASE,
            )
            for m in ms
        ):
            why = "world_fact"  # "Comet Halley orbits the sun every 75 years", "the circumference of the earth is 40,000 km"
        elif any(
            re.search(r"\bevery\s+$", question[max(0, m.start - 8) : m.start], re.IGNORECASE)
            and re.match(r"^\s*(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b", question[m.end : m.end + 12], re.IGNORECASE)
            for m in ms
        ):
            # "earns $5 every 10 minutes" for 150 minutes of work: 15 whole blocks. "Every 40 minutes"
            # leaves 3.75 blocks, paid pro rata or not (graded ill-posed, gsm8k/test/292); "harvests
            # every 3 months" over a year likewise. The period keeps dividing what it divided.
            why = "period"
        elif any(guards.is_conversion(question, m) for m in ms):
            why = "conversion"  # "1 Mb has 1000 kb"
        elif any(guards.is_bill(question, m) for m in ms):
            why = "denomination"  # "$10 bill"
        elif any(n in guards.NATURE_NOUNS for n in nouns):
            why = "fact_of_nature"  # 4 legs of a table
        elif _complement_stated(v, ms, mentions):
            why = "complement"  # ".75 gift bags per guest, because 1/4 of attendees don't show up"
        elif v.denominator == 1 and 1 < v <= 12 and _nature_in_solution(body, int(v), nouns):
            why = "solution_fact"  # "A rectangle has 2 long sides" tied to "2 wood slats for every foot"
        elif v == 50 and any(m.kind == "percent" and guards.is_reduction(question, m) for m in ms) and reads.get(Fraction(1, 2), 0) >= 1:
            why = "half_off"  # "50% off" read as 0.5: the price paid or the amount taken off? 70% off then cost 0.7
        else:
            for m in ms:
                if re.match(r"^\s*times?\s+(?:a|per|each|every)\s+week\b", question[m.end : m.end + 20], re.IGNORECASE) and re.search(
                    r"\b(?:each|every|per|a)\s+day\b", question, re.IGNORECASE
                ):
                    extra.append(Constraint("le", sid, "7"))  # "walks there and back each day he works ... 11 times a week"
                tall = re.match(
                    r'^\s*[- ]?(?:(feet|foot|ft|inches|inch|in|cm|centimeters?)\s+|(?=")(")\s*)tall\b',
                    question[m.end : m.end + 25],
                    re.IGNORECASE,
                )
                if tall:
                    # "Isabel is 9 feet tall": nobody is; a height stays within a person's (or the original's).
                    limit = {"f": 7, "i": 84, "c": 213, '"': 84}[(tall.group(1) or tall.group(2))[0].lower()]  # 64" tall: inches
                    extra.append(Constraint("le", sid, str(max(Fraction(limit), v))))
                    extra.append(Constraint("ge", sid, str(v * 2 / 3)))  # nor a 30" cheerleader for a 60" one
                if guards.hours_in_one_day(question, m):
                    extra.append(Constraint("le", sid, "24"))  # "Last Tuesday, she worked 27 hours"
                cap = guards.period_cap(question, m)
                if cap is not None:
                    if cap[1]:
                        why = "world_fact"  # "7 days a week"
                    else:
                        extra.append(Constraint("le", sid, str(cap[0])))  # "5 days a week" never becomes 10
        if why:
            freeze[sid] = why
            continue
        for m in ms:
            cap = guards.plausible_cap(question, m)
            if cap is not None:
                extra.append(Constraint("le", sid, str(max(cap, v))))
            tight = guards.tight_range(question, m)
            if tight is not None:
                extra.append(Constraint("ge", sid, str(tight[0])))
                extra.append(Constraint("le", sid, str(tight[1])))
    # A sum written with a fixed number of terms over a count that would change ("60 + 57 + 54 + 51"
    # for a relay of four): the program cannot grow the sum with the count, so the count is frozen
    # (it then never changes, and the sum stays right).
    for v, idx in groups.items():
        sid = gid[v]
        if sid in freeze or sid in already or v.denominator != 1 or v < 3 or v > 12:
            continue
        if any(mentions[i].kind not in ("int", "word") for i in idx):
            continue
        for st in steps:
            if st.expr.count("+") == int(v) - 1 and not any(op in st.expr for op in "*/-") and len(st.leaves) == int(v):
                freeze[sid] = "fixed_term_sum"
                break
    # "ten packets ... Six of the packets ... the other four packets": the parts of a partition
    # sum to its whole. When "the other N" (or "the remaining N") cannot move, no other count of
    # the same noun may move either, or the parts no longer add up to the whole the story states.
    for v, idx in groups.items():
        if freeze.get(gid[v]) != "definite_count":
            continue
        rest = [
            i
            for i in idx
            if re.search(
                r"\bthe\s+(?:other|remaining|rest\s+of\s+the)\s+$",
                question[max(0, mentions[i].start - 25) : mentions[i].start],
                re.IGNORECASE,
            )
        ]
        if not rest:
            continue
        nouns = {guards.head_noun(question, mentions[i]) for i in rest} - {""}
        for w, jdx in groups.items():
            if gid[w] not in freeze and any(guards.head_noun(question, mentions[j]) in nouns for j in jdx):
                freeze[gid[w]] = "partition"
    # "split the cost three ways with her two parents": the ways are the people the story lists.
    for v, idx in groups.items():
        if gid[v] not in freeze and any(
            re.match(r"^\s*ways?\b", question[mentions[i].end : mentions[i].end + 8], re.IGNORECASE) for i in idx
        ):
            freeze[gid[v]] = "ways_count"
    # "thrice a day for 5 days; but on two other days ... a week": day counts that together make
    # the week (months the year) are a partition of a fixed whole; none of them may move.
    for noun, whole, period in (("day", 7, "week"), ("month", 12, "year")):
        if not re.search(rf"\b{period}\b", question, re.IGNORECASE):
            continue
        counted = [
            v for v, idx in groups.items() if v.denominator == 1 and any(guards.head_noun(question, mentions[i]) == noun for i in idx)
        ]
        fixed = [Fraction(m.value) for m in mentions if not m.perturbable and guards.head_noun(question, m) == noun]
        values = counted + fixed
        if any(a + b == whole for a, b in itertools.combinations(values, 2)):
            for v in counted:
                freeze.setdefault(gid[v], "period_partition")
    # A count of the noun an ordinal numbers ("for 11 months ... on the twelfth month", "5 days ...
    # the third day") is frozen: the ordinal may be within the count or the one after it.
    for om in re.finditer(r"\b(" + "|".join(ORDINALS) + r")\s+([a-z]+)", question, re.IGNORECASE):
        noun = guards.singular(om.group(2).lower())
        for v, idx in groups.items():
            if gid[v] not in freeze and any(guards.head_noun(question, mentions[i]) == noun for i in idx):
                freeze[gid[v]] = "ordinal"
    return freeze, extra


def _as_share(m: Mention) -> Fraction | None:
    """A mention as a share of a whole (75% -> 3/4, .75 -> 3/4, 1/4 -> 1/4); None if it is not one."""
    v = Fraction(m.value)
    if m.kind == "percent":
        return v / 100 if 0 < v < 100 else None
    return v if 0 < v < 1 else None


def _complement_stated(v: Fraction, ms: list[Mention], mentions: list[Mention]) -> bool:
    """Whether another question number is the rest of the whole this one is a share of: changing
    one leaves the other ("needs .75 ... because 1/4 don't show up" became ".40 ... 1/4")."""
    mine = [x for x in (_as_share(m) for m in ms) if x is not None]
    if not mine:
        return False
    own = {(m.start, m.end) for m in ms}
    others = [x for m in mentions if (m.start, m.end) not in own and (x := _as_share(m)) is not None]
    return any(a + b == 1 for a in mine for b in others)


def _nature_counts(body: str) -> set[int]:
    """Counts of nature the solution's prose states ("4 legs/dog", "has 4 legs", "the two long
    sides"), 2 to 12; not a result ("= 8 legs")."""
    prose = re.sub(r"<<[^<>]*>>", " ", body)
    words = "|".join(n for n in guards.NATURE_NOUNS if n.isalpha() and not n.endswith("ed"))
    spelled = {word_for(k): k for k in range(2, 13)}
    number = "|".join(["\\d+", *(w for w in spelled if w)])
    out = set()
    for m in re.finditer(
        rf"(?<![\d.])\b({number})(?![\d.])\s+(?:[a-z]+\s+){{0,2}}?(?:{words})s?\b(?P<per>\s*/\s*[a-z]|\s+(?:per|each|on\s+each|for\s+each)\b)?",
        prose,
        re.IGNORECASE,
    ):
        # "4 legs/dog", "the two long sides": a count per thing, not a result ("= 8 legs").
        if not (m.group("per") or re.search(r"\b(?:has|have|with|the|its)\s+$", prose[max(0, m.start() - 6) : m.start()], re.IGNORECASE)):
            continue
        tok = m.group(1).lower()
        k = int(tok) if tok.isdigit() else spelled.get(tok)
        if k is not None and 2 <= k <= 12:
            out.add(k)
    return out


def _nature_in_solution(body: str, v: int, nouns: list[str]) -> bool:
    """Whether the solution's prose states ``v`` as a count fixed by nature ("A rectangle has 2
    long sides", "a car has 4 wheels") of a noun the question's mentions of ``v`` do not count."""
    prose = re.sub(r"<<[^<>]*>>", " ", body)
    words = "|".join(n for n in guards.NATURE_NOUNS if n.isalpha() and not n.endswith("ed"))
    for m in re.finditer(rf"(?<![\d.]){v}(?![\d.])\s+(?:[a-z]+\s+){{0,2}}?({words})s?\b", prose, re.IGNORECASE):
        if guards.singular(m.group(1).lower()) not in nouns:
            return True
    return False


_BUDGET = re.compile(
    r"(?:\bhas|\bhad|\bgave\s+(?:him|her|them)|\bstarts?\s+(?:off\s+)?with|\bbudget\s+of|\bsaved|\bbrought|\bwith)\s+(?:only\s+|a\s+total\s+of\s+)?\$?\s*$",
    re.IGNORECASE,
)


def _budget_bounds(question: str, mentions: list[Mention], slots: list[Slot], results: list[Fraction]) -> list[Constraint]:
    """Money someone has ("Dean's mother gave him $64", "Ted starts with $200") bounds what the
    steps compute where it bounded them in the original: no variant spends $81 out of $64."""
    out: list[Constraint] = []
    for s in slots:
        if s.kind not in ("money", "cents"):
            continue
        if not any(_BUDGET.search(question[max(0, mentions[i].start - 30) : mentions[i].start]) for i in s.mentions):
            continue
        for j, r in enumerate(results):
            if 0 < r <= Fraction(s.value):
                out.append(Constraint("stle", str(j), s.id))
    return out


def _answer_bounds(question: str, mentions: list[Mention], slots: list[Slot], answer: Fraction, answer_step: int) -> list[Constraint]:
    """The answer stays at most every question number of the thing it counts that it was at most in
    the original: "how many guests did not get a second" never exceeds the guests, the questions
    still to answer never exceed the test's, the money spent never exceeds the money one has.
    Two fixed numbers whose product holds the thing counted bound it too: "4 pizzas. Each pizza
    had 8 slices" means no more than 32 slices are eaten."""
    noun = guards.asked_noun(question)
    if not noun:
        return []
    out: list[Constraint] = []
    for s in slots:
        if any(guards.head_noun(question, mentions[i]) == noun for i in s.mentions) and answer <= Fraction(s.value):
            out.append(Constraint("ansle", str(answer_step), s.id))
    fixed = [i for s in slots if s.role == "frozen" for i in s.mentions if mentions[i].kind in ("int", "word")]
    for a, b in itertools.combinations(fixed, 2):
        if noun in (guards.head_noun(question, mentions[a]), guards.head_noun(question, mentions[b])):
            cap = Fraction(mentions[a].value) * Fraction(mentions[b].value)
            if answer <= cap:
                out.append(Constraint("stmax", str(answer_step), str(cap)))
    return out


_PARTITIVE = re.compile(r"^\s+of\s+(?:the|them|these|those)\b", re.IGNORECASE)


def _partition_bounds(question: str, mentions: list[Mention], slots: list[Slot]) -> list[Constraint]:
    """ "into 8 albums. 3 of the albums ... and 2 of the albums ...": the parts ("N of the X",
    "N of them") stay within the whole ("M X" stated before them) as they were in the original,
    and equal to it where they were equal: 5 + 4 selfie and portrait albums out of 6 is what a
    free draw made."""
    ref = {i: s.id for s in slots for i in s.mentions}
    wholes: dict[str, int] = {}  # noun -> index of the last plain count of it
    last_noun = ""
    parts: dict[int, list[int]] = {}  # whole mention -> its part mentions
    for i, m in enumerate(mentions):
        if m.kind not in ("int", "word"):
            continue
        if _PARTITIVE.match(question[m.end : m.end + 20]):
            after = question[m.end : m.end + 40].lower()
            noun = last_noun if re.match(r"^\s+of\s+them\b", after) else guards.head_noun(question, m)
            if noun in wholes:
                parts.setdefault(wholes[noun], []).append(i)
            continue
        noun = guards.head_noun(question, m)
        if noun and noun not in ("$", "%"):
            wholes[noun] = i
            last_noun = noun
    out: list[Constraint] = []
    for w, ps in parts.items():
        total = sum(Fraction(mentions[i].value) for i in ps)
        whole = Fraction(mentions[w].value)
        if total > whole:
            continue  # not a partition in the original either
        kind = "sumeq" if total == whole else "sumle"
        refs = [ref.get(i, str(Fraction(mentions[i].value))) for i in ps]
        out.append(Constraint(kind, ref.get(w, str(whole)), "+".join(refs)))
    return out


class _Span(Protocol):
    """Where an annotation sits in the solution: a traced :class:`Step` or a parsed one."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def echo_end(self) -> int: ...


def _result_unit(solution: str, step: _Span) -> str:
    """The unit the solution states a step's result in ("498 pounds" -> "pound"; "$" for money)."""
    before = solution[max(0, step.start - 3) : step.start]
    end = step.echo_end if step.echo_end >= 0 else step.end
    words = re.findall(r"[A-Za-z$%]+", solution[end : end + 30])
    unit = "$" if "$" in before or (words[:1] == ["$"]) else (guards.singular(words[0].lower()) if words else "")
    return "$" if unit in ("dollar", "dollars") else unit


def _counts_other(nouns: set[str], unit: str) -> bool:
    """Whether the question's mentions of a value all name what they count (``nouns``), and none
    counts ``unit``."""
    return "" not in nouns and unit not in nouns


def _same_unit(question: str, mentions: list[Mention], slot: Slot, unit: str) -> bool:
    """Whether a step's result, stated in ``unit`` (:func:`_result_unit`), counts what its tied
    question number counts."""
    nouns = {guards.head_noun(question, mentions[i]) for i in slot.mentions}
    return bool(unit) and unit in nouns


#: Units in which a result is the size of one thing a reader can picture (a person's weight or
#: age, a height): "Alex weighs 12 times what Grace weighs" made a 3,499-pound person, "five
#: times as old" a sister 62 years older than her brother.
_PICTURED_UNITS = ("pound", "lb", "kg", "kilogram", "year", "inch", "foot", "feet")


def _result_caps(question: str, solution: str, steps: list[Step], results: list[Fraction], units: list[str]) -> list[Constraint]:
    """Results stated in a pictured unit stay within what the benchmark writes for that unit (the
    95th percentile of its question values, :func:`guards.unit_caps`) or 1.5 times the original
    result, whichever is larger; results stated as a rate, a price, a kind of percent or an age
    (:func:`guards.unit_key`) stay within that key's cap (:func:`guards.keyed_caps`) or the original
    result; the answer to "how old" stays within 1.5 times the original age."""
    caps = guards.unit_caps()
    out: list[Constraint] = []
    for j, (r, unit) in enumerate(zip(results, units, strict=True)):
        if r > 0 and unit in _PICTURED_UNITS and unit in caps:
            cap = max(caps[unit], r * 3 / 2)
            if unit in ("pound", "lb", "kg", "kilogram") and re.search(r"\bweigh", question, re.IGNORECASE):
                # What a person or an animal weighs stays within 1.5 times the original weight:
                # the benchmark's pounds are mostly goods, and a 540-pound Mastiff is no dog.
                cap = r * 3 / 2
            out.append(Constraint("stmax", str(j), str(cap)))
    keyed = guards.keyed_caps()
    for j, (st, r) in enumerate(zip(steps, results, strict=True)):
        # "He spends 10*.5 = 5 hours per day": a rate, price, percent or age the solution states
        # stays within what GSM8K states for it (its 99th percentile: 23 hours a day, not 24)
        # or within the original result.
        end = st.echo_end if st.echo_end >= 0 else st.end
        key = _result_key(solution, st)
        if r > 0 and guards.is_keyed(key) and key in keyed:
            out.append(Constraint("stmax", str(j), str(max(keyed[key], r))))
            continue
        per = re.match(r"^\s*(?:hours?|hrs?)\s+(?:a|per|each|every)\s+(day|week)\b", solution[end : end + 30], re.IGNORECASE)
        if per and r > 0:
            limit = 24 if per.group(1).lower() == "day" else 168
            if r <= limit:
                out.append(Constraint("stmax", str(j), str(limit)))
    if re.search(r"\bhow\s+old\b", question, re.IGNORECASE) and results:
        # The age asked for: the solution often writes it without a unit ("Angela is 42-4 = 38").
        j = len(results) - 1
        if results[j] > 0:
            out.append(Constraint("stmax", str(j), str(results[j] * 3 / 2)))
            out.append(Constraint("stmin", str(j), str(results[j] * 2 / 3)))
    return out


def _result_key(solution: str, step: Step) -> str:
    """The :func:`guards.unit_key` of a step's result where the solution states it ("5 hours per day")."""
    end = step.echo_end if step.echo_end >= 0 else step.end
    money = "$" in solution[max(0, step.start - 3) : step.start]
    percent = bool(re.match(r"^\s*(?:%|percent)", solution[end : end + 10]))
    key = guards.unit_key(solution, step.start, end, money=money, percent=percent)
    if guards.is_keyed(key):
        return key
    # "The 2nd fastest car can go 600 MPH because 5 x 120 = <<5*120=600>>600": the same line
    # states the result with its unit before the calculation.
    r = Fraction(step.result)
    if r.denominator != 1:
        return key
    line_start = solution.rfind("\n", 0, step.start) + 1
    for m in re.finditer(rf"(?<![\d.,]){int(r)}(?![\d,]|\.\d)", solution[line_start : step.start]):
        a, b = line_start + m.start(), line_start + m.end()
        k = guards.unit_key(solution, a, b, money=solution[max(0, a - 1) : a] == "$", percent=solution[b : b + 1] == "%")
        if guards.is_keyed(k):
            return k
    return key


_HIDDEN = re.compile(
    r"(?<![\w.,/])(\d+(?:\.\d+)?)\s*(?:[a-z]+\s*){0,2}([-+*x×−])\s*(\d+(?:\.\d+)?)\s*(?:[a-z]+\s*){0,2}"
    r"(?:for|is|makes|gives|equals|totals?|to\s+get|which\s+is)\s+(?:a\s+total\s+of\s+|an?\s+|of\s+)?\$?(\d+(?:\.\d+)?)(?![\d<])"
)
_PROSE_CONVERSION = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:cents?|minutes?|seconds?|inches|ounces|months|centimeters|cm|grams|ml)\s*(?:=|is|are|equals?|makes?)\s*"
    r"\$?\s*(\d+(?:\.\d+)?)\s*(?:dollars?|hours?|minutes?|feet|foot|pounds?|years?|meters?|m|kg|kilograms?|liters?|l)?\b",
    re.IGNORECASE,
)
_COMPARE_Q = re.compile(
    r"\b(?:maximi[sz]e|minimi[sz]e|whichever|which\s+(?:one|option|plan|offer|deal|is\s+(?:cheaper|better|more|less))|better\s+(?:deal|option|choice|offer)|choice\s+of\s+purchase)\b",
    re.IGNORECASE,
)
_COMPARE_S = re.compile(r"\d\s*[<>]\s*\$?\d|\bis\s+(?:greater|bigger|larger|smaller|less|more)\s+than\s+\$?\d", re.IGNORECASE)
_ALGEBRA = re.compile(r"\b[Ll]et\s+[a-zA-Z]\b|\b\d+\s*\*?\s*[a-zA-Z]\s*[-+=]|[-+=]\s*\d*\s*\*?\s*[xyXY]\b|\b[xyXY]\s*=")


_LABEL = re.compile(
    r"\b(?:grade|level|room|chapter|page|day|week|year|no\.|number|class|floor|gate|platform|route|bus|channel|lane|section|unit|apartment|apt\.?|size)\s+$",
    re.IGNORECASE,
)


def _unanchored_definite(question: str, ms: list[Mention], nouns: list[str]) -> bool:
    """A definite count ("the two", "all 10 tests") whose group is not introduced by a plain
    mention of the same noun in the question ("5 apples ... the 5 apples" moves together)."""
    definite = [guards.is_definite(question, m) for m in ms]
    if not any(definite):
        return False
    plain = {n for n, d in zip(nouns, definite, strict=True) if not d and n}
    return any(d and nouns[k] not in plain for k, d in enumerate(definite)) or not plain


_TALL_AFTER = re.compile(r'^\s*(?:(")|(inches|inch|in|feet|foot|ft|cm|centimeters?)\s)\s*tall\b', re.IGNORECASE)


def _height_caps(solution: str, steps: list[Step], results: list[Fraction]) -> list[Constraint]:
    """A result the solution states as a height ("Anne is 2*36 = <<2*36=72>>72" tall") stays within a
    person's (84 inches, 7 feet, 213 cm) or the original's, and at least two thirds of the original:
    twice a 76" Albert made a 152" Anne (gsm8k/test/1292)."""
    out: list[Constraint] = []
    for j, (st, r) in enumerate(zip(steps, results, strict=True)):
        end = st.echo_end if st.echo_end >= 0 else st.end
        m = _TALL_AFTER.match(solution[end : end + 20])
        if m and r > 0:
            limit = 84 if m.group(1) else {"i": 84, "f": 7, "c": 213}[m.group(2)[0].lower()]
            out.append(Constraint("stmax", str(j), str(max(Fraction(limit), r))))
            out.append(Constraint("stmin", str(j), str(r * 2 / 3)))  # nor shrinks to a baby's (a 14" Albert)
    return out


def _bare_from_prose(solution: str, parsed: list) -> list:
    """Bare annotations whose computation the prose writes right before them ("3 + 2 = <<5=5>>5",
    "2*36 = <<72=72>>72"): the annotation takes the prose's expression when that expression,
    words dropped, is plain arithmetic (no percent) whose exact value is the annotation's. The step
    then computes what the text says it computes, and every literal is traced as any annotation's
    is; a restatement that computes something else, or none, leaves the step bare (rejected)."""
    out = []
    for k, p in enumerate(parsed):
        if p.prose or not isinstance(p.tree, arith.Num):
            out.append(p)
            continue
        line_start = solution.rfind("\n", 0, p.start) + 1
        prev_end = max([q.end for q in parsed[:k] if q.end <= p.start] + [line_start])
        em = _RESTATED.search(solution[prev_end : p.start])
        if em is None or "%" in em.group(1):
            out.append(p)
            continue
        core = re.sub(r"(?<=[\d\s)])[xX](?=[\s\d$(.])", "*", em.group(1))
        core = re.sub(r"[A-Za-z'$]+", " ", core).replace("×", "*").replace("÷", "/").replace(",", "")
        core = re.sub(r"\s+", " ", core.replace("−", "-").replace("–", "-")).strip()
        try:
            tree = arith.parse(arith.normalize_expression(core))
            value = arith.eval_node(tree)
        except (arith.ArithError, ValueError, ZeroDivisionError):
            out.append(p)
            continue
        if value != p.value or isinstance(tree, arith.Num):
            out.append(p)
            continue
        out.append(dataclasses.replace(p, expr=arith.normalize_expression(core), tree=tree))
    return out


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


def _unused_total_parts(question: str, mentions: list[Mention], slots: list[Slot]) -> set[int]:
    """Mentions that move and, with others, sum (or multiply) to a number the program never reads
    ("8 customers: the first 3 ..., the next 2 ..., the last 3 ..."): moving them would leave the
    stated total contradicting them. Empty when there are none."""
    role = {i: s.role for s in slots for i in s.mentions}
    unused = {i for s in slots if s.role == "frozen" and (s.source == "unused" or s.source.startswith("guard:")) for i in s.mentions}
    # A part the guards froze is still a part: "12 racquets. 3 of them ..., 5 of them ..., 4 of
    # them ..." with the 3 frozen still sums to the 12 while the 5 and the 4 move; so is "6 people
    # want the pasta salad" of "16 people" when a guard froze the 6. A frozen number that is
    # neither partitive nor counts the total's noun ("2 times") is left out: summing with a moving
    # one to an unused total, it is mostly a coincidence.
    noun = {i: guards.head_noun(question, m) for i, m in enumerate(mentions)}
    every = [(i, Fraction(m.value)) for i, m in enumerate(mentions) if m.kind in _NUMERIC]
    found: set[int] = set()
    if not unused or not any(role.get(i) in ("free", "derived") for i, _ in every):
        return found
    for u in unused:
        target = Fraction(mentions[u].value)
        parts = [
            (i, v)
            for i, v in every
            if i != u
            and (i not in unused or _PARTITIVE.match(question[mentions[i].end : mentions[i].end + 20]) or (noun[i] and noun[i] == noun[u]))
        ][:12]
        for size in (2, 3, 4):
            for combo in itertools.combinations(parts, size):
                if not any(role.get(i) in ("free", "derived") for i, _ in combo):
                    continue
                if sum(v for _, v in combo) == target or (size == 2 and combo[0][1] * combo[1][1] == target):
                    found.update(i for i, _ in combo if role.get(i) in ("free", "derived"))
    return found


#: Units per period that :func:`guards.constant_values` multiplies a stated period by ("two weeks": 14).
_PERIOD_FACTORS = frozenset({7, 12, 52, 365, 60, 24})

_NUMERIC = ("int", "decimal", "money", "percent", "word", "cents")


def _percent_affine(
    v: Fraction, group_values: list[Fraction], groups: dict[Fraction, list[int]], mentions: list[Mention]
) -> list[tuple[Fraction, Fraction]]:
    out: list[tuple[Fraction, Fraction]] = []
    for g in group_values:
        if any(mentions[i].kind == "percent" for i in groups[g]):
            if v == 1 + g / 100:
                out.append((g, Fraction(1, 100)))
            elif v == 1 - g / 100:
                out.append((g, Fraction(-1, 100)))
    return out


def _slot_deps(sid: str, by_id: dict[str, Slot], deps: list[set[str]]) -> set[str]:
    s = by_id[sid]
    if s.role == "free":
        return {sid}
    if s.role == "derived" and s.source.startswith("slot:"):
        return _slot_deps(s.source[5:], by_id, deps)
    if s.role == "derived" and s.source.startswith("step:"):
        j = int(s.source[5:])
        return deps[j] if j < len(deps) else set()
    return set()


def _settle(slots: list[Slot], steps: list[Step]) -> tuple[list[Slot], list[set[str]]]:
    """Which free slots each step depends on; a slot derived from a step that depends on none is frozen
    (it can never move, so sampling it would only fail the coverage check)."""
    while True:
        by_id = {s.id: s for s in slots}
        deps: list[set[str]] = []

        for st in steps:
            d: set[str] = set()
            for lf in st.leaves:
                if lf.kind == "slot":
                    d |= _slot_deps(lf.ref, by_id, deps)
                elif lf.kind == "step":
                    d |= deps[int(lf.ref)]
            deps.append(d)
        stuck = [s for s in slots if s.role == "derived" and s.source.startswith("step:") and not deps[int(s.source[5:])]]
        if not stuck:
            return slots, deps
        ids = {s.id for s in stuck}
        slots = [dataclasses.replace(s, role="frozen", source="constant") if s.id in ids else s for s in slots]


def _resolve_slots(
    mentions: list[Mention],
    groups: dict[Fraction, list[int]],
    gid: dict[Fraction, str],
    bound: dict[str, list[int]],
    slot_links: dict[str, tuple[str, Fraction]],
    step_ties: list[tuple[str, int, Fraction]],
    freeze: set[str],
) -> list[Slot]:
    slots: list[Slot] = []
    derived_from_step: dict[str, tuple[int, Fraction]] = {}
    for sid, j, ratio in step_ties:
        # Derive the slot from the step when no step at or before j reads it directly (no cycle).
        if sid not in derived_from_step and sid not in slot_links and all(k > j for k in bound.get(sid, [])):
            derived_from_step[sid] = (j, ratio)
    frozen = set(freeze)
    changed = True
    while changed:  # freezing spreads along slot links both ways
        changed = False
        for a, (b, _) in slot_links.items():
            if (a in frozen) != (b in frozen):
                frozen.update((a, b))
                changed = True
    for v, idx in groups.items():
        sid = gid[v]
        kinds = [mentions[i].kind for i in idx]
        kind = next((k for k in ("percent", "money", "cents", "decimal", "int", "word") if k in kinds), kinds[0])
        decimals = max(_decimals(mentions[i].text) for i in idx)
        used = sid in bound or sid in slot_links or sid in derived_from_step or any(t[0] == sid for t in step_ties)
        if sid in frozen or not used:
            # A number the program never reads stays "unused" even when a guard froze it too: the checks
            # for unused numbers (restated in the solution, a total of moving parts) must still see it.
            slots.append(Slot(sid, str(v), kind, tuple(idx), "frozen", "constant" if used else "unused", "1", decimals))
        elif sid in slot_links:
            root, ratio = slot_links[sid]
            slots.append(Slot(sid, str(v), kind, tuple(idx), "derived", f"slot:{root}", str(ratio), decimals))
        elif sid in derived_from_step:
            j, ratio = derived_from_step[sid]
            slots.append(Slot(sid, str(v), kind, tuple(idx), "derived", f"step:{j}", str(1 / ratio), decimals))
        else:
            slots.append(Slot(sid, str(v), kind, tuple(idx), "free", "", "1", decimals))
    return slots


def _decimals(text: str) -> int:
    t = text.replace(",", "")
    return len(t.split(".", 1)[1]) if "." in t else 0


#: A question that says one quantity became another ("slowed down to", "rose to", "cut to"): a
#: reader checks the direction, so same-kind numbers keep their order (see :func:`_constraints`).
_CHANGE_WORD = re.compile(
    r"\b(?:slow(?:s|ed)?\s+down|sp(?:ed|eeds?)\s+up|(?:dropp?(?:s|ed)?|fell|falls?|rose|rises?|went\s+(?:up|down)|"
    r"increased|decreased|reduced|cut|raised|lowered|climbed|grew|shrank)\s+to)\b",
    re.IGNORECASE,
)


def _constraints(
    slots: list[Slot],
    mentions: list[Mention],
    results: list[Fraction],
    step_ties: list[tuple[str, int, Fraction]],
    by_id: dict[str, Slot],
    question: str = "",
    money: set[int] | None = None,
) -> list[Constraint]:
    out: list[Constraint] = []
    for i, r in enumerate(results):
        if r.denominator == 1:
            # A whole amount of money is marked: a fallback may let it have cents (see
            # contam.perturb.reference.cents_template).
            out.append(Constraint("int", str(i), "$" if money and i in money else ""))
        else:
            places = _places(r)
            out.append(Constraint("decimals", str(i), str(max(2, places if places is not None else 2))))
        if r > 0:
            out.append(Constraint("pos", str(i)))
        elif r == 0:
            out.append(Constraint("nonneg", str(i)))
        if 0 < r < 1:
            out.append(Constraint("lt1", str(i)))
    for sid, j, ratio in step_ties:
        s = by_id[sid]
        if s.role != "derived" or s.source != f"step:{j}":
            out.append(Constraint("tie", str(j), f"{sid}*{ratio}"))
    moving = [s for s in slots if s.role != "frozen"]
    for s in moving:
        if s.kind == "percent" and Fraction(s.value) <= 100:
            out.append(Constraint("le100", s.id))
    # Order among the numbers a reader compares: moving slots of the same family, and moving
    # slots against frozen numbers of that family ("the $5 one or the $7 one" stays decided).
    family = {"money": "money", "cents": "money", "percent": "percent"}
    for a in range(len(moving)):
        for b in range(len(moving)):
            sa, sb = moving[a], moving[b]
            if family.get(sa.kind, "n") == family.get(sb.kind, "n") and Fraction(sa.value) < Fraction(sb.value):
                out.append(Constraint("order", sa.id, sb.id))
    if question and _CHANGE_WORD.search(question):
        # A frozen number counts the same thing as a moving one ("300 taps per minute" frozen,
        # "250" and "200 taps per minute" moving, and "slowed down to 200"): they keep their order,
        # or "slowed down" becomes a speed-up (graded ill-posed, gsm8k/test/721).
        def nouns(sl: Slot) -> set[str]:
            return {guards.head_noun(question, mentions[i]) for i in sl.mentions} - {""}

        frozen = [s for s in slots if s.role == "frozen" and s.mentions]
        for sa in moving:
            na = nouns(sa)
            for sb in frozen:
                if family.get(sa.kind, "n") != family.get(sb.kind, "n") or not (na & nouns(sb)):
                    continue
                # Bounds, not "order": the sampler clamps a free slot's range to them; no moving
                # value may equal an original one, so the order stays strict.
                va, vb = Fraction(sa.value), Fraction(sb.value)
                if va < vb:
                    out.append(Constraint("le", sa.id, str(vb)))
                elif va > vb:
                    out.append(Constraint("ge", sa.id, str(vb)))
    return out


def _places(x: Fraction) -> int | None:
    d = x.denominator
    places = 0
    while d % 10 == 0 or d % 2 == 0 or d % 5 == 0:
        if places > 12:
            return None
        x *= 10
        d = x.denominator
        places += 1
    return places if x.denominator == 1 else None


_NUM_TXT = r"\$?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_UNIT_WORDS = r"(?:\s*(?!x\s*[\d$(.])[A-Za-z%']+){0,3}"
_RESTATED = re.compile(rf"((?:{_NUM_TXT}{_UNIT_WORDS}\s*[-+*/x×÷−–]\s*\(?\s*)+{_NUM_TXT}{_UNIT_WORDS}\s*\)?)\s*=\s*\$?\s*$")
_RESTATED_NUM = re.compile(r"(?:(?<![\w.,])|(?<=[0-9][xX]))\$?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")
_WORD_AS_LABEL = re.compile(
    r"\b(?:day|week|month|year|step|part|round|level|grade|page|number|no\.|game|lap|floor|stage|inning)\s+$", re.IGNORECASE
)


def restated_value(expr: str) -> Fraction | None:
    """Value of an expression restated in prose ("10 miles * 5 days", "15x6"), words dropped; None
    when it does not parse as plain arithmetic."""
    core = re.sub(r"(?<=[\d\s)])[xX](?=[\s\d$(.])", "*", expr)
    core = re.sub(r"[A-Za-z%'$]+", " ", core).replace("×", "*").replace("÷", "/").replace(",", "")
    core = core.replace("−", "-").replace("–", "-")
    try:
        return arith.evaluate(core)
    except (arith.ArithError, ValueError, ZeroDivisionError):
        return None


def restated_readings(expr: str) -> set[Fraction]:
    """Every value a prose restatement can mean: :func:`restated_value`, and, when it writes a
    percent, the same with each "N%" read as N/100 ("200 GB * 40%" is 80, the annotation
    ``<<200*40*.01=80>>``; "7 / 20 * 100%" is 35 with the % dropped). Empty when it does not parse.

    >>> sorted(restated_readings("200 GB * 40%"))
    [Fraction(80, 1), Fraction(8000, 1)]
    """
    out = {v for v in (restated_value(expr),) if v is not None}
    if "%" in expr:
        v = restated_value(re.sub(r"(\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+)\s*%", r"(\1/100)", expr))
        if v is not None:
            out.add(v)
    return out


def _prose(
    solution: str,
    steps: list[Step],
    slots: list[Slot],
    group_values: list[Fraction],
    group_scales: dict[Fraction, list[Fraction]],
    gid: dict[Fraction, str],
    results: list[Fraction],
    consts: set[Fraction],
    cfg: SymbolicConfig,
    moving_results: set[Fraction],
    slot_nouns: dict[str, set[str]] | None = None,
) -> list[ProseNumber]:
    """Bind every number of the solution's prose (outside annotations and echoes) to what rewrites it."""
    body_end = solution.rfind("####")
    skip = [(s.start, s.end) for s in steps] + [(s.echo_start, s.echo_end) for s in steps if s.echo_start >= 0]
    roles = {s.id: s.role for s in slots}
    unused = {s.id: s.source == "unused" for s in slots}
    moving = any(r != "frozen" for r in roles.values())
    out: list[ProseNumber] = []
    # "72/6 = <<72/6=12>>": an expression restated right before its annotation is bound literal by
    # literal, by position (binding by value cannot tell two equal literals apart, and a number after
    # "/" is not a prose number at all), so the restatement is rendered from the program too.
    restated: set[int] = set()  # steps whose restatement is bound literal by literal
    for st in steps:
        if st.prose:
            continue
        line_start = solution.rfind("\n", 0, st.start) + 1
        prev_end = max([s.end for s in steps if s.end <= st.start] + [line_start])
        seg = solution[prev_end : st.start]
        em = _RESTATED.search(seg)
        if not em:
            continue
        toks = list(_RESTATED_NUM.finditer(seg, em.start(1), em.end(1)))
        said = restated_readings(em.group(1))
        tail = [Fraction(lf.value) for lf in st.leaves][len(st.leaves) - len(toks) :] if len(toks) < len(st.leaves) else []
        if tail and [_number(t.group(1)) for t in toks] == tail and "%" not in em.group(1):
            # "250 of the original number of books - 135 sold books - 50 unsold books = <<250-135-50=65>>":
            # the words cut the restatement, and what is left is the annotation's last literals in
            # order: bound to those, by position (the earlier numbers are bound by value below).
            for t, lf in zip(toks, st.leaves[len(st.leaves) - len(toks) :], strict=True):
                a, b = prev_end + t.start(1), prev_end + t.end(1)
                out.append(ProseNumber(a, b, t.group(1), lf.kind, lf.ref, lf.scale, lf.offset))
                skip.append((a, b))
            continue
        if said and Fraction(st.result) not in said:
            # "7.5 / .5 = <<15=15>>": the prose computes something else than the annotation.
            raise Rejected("restated_mismatch", f"{em.group(1).strip()} = is not {st.result}")
        if [_number(t.group(1)) for t in toks] != [Fraction(lf.value) for lf in st.leaves]:
            continue
        for t, lf in zip(toks, st.leaves, strict=True):
            a, b = prev_end + t.start(1), prev_end + t.end(1)
            out.append(ProseNumber(a, b, t.group(1), lf.kind, lf.ref, lf.scale, lf.offset))
            skip.append((a, b))
        restated.add(steps.index(st))
    for m in _PROSE_NUM.finditer(solution, 0, body_end if body_end >= 0 else len(solution)):
        a, b = m.span(1)
        if any(s <= a < e for s, e in skip):
            continue
        v = _number(m.group(1))
        # A number just before an annotation on the same line usually restates that step's literal.
        nxt = next((s for s in steps if s.start >= b and "\n" not in solution[b : s.start]), None)
        if (
            nxt is not None
            and steps.index(nxt) in restated
            and Fraction(nxt.result) == v
            and (
                all(Fraction(lf.value) != v for lf in nxt.leaves)
                or re.search(r"\b(?:because|since)\b", solution[b : nxt.start], re.IGNORECASE)
            )
        ):
            # "They make $5 off each gallon because 10 - 5 = <<10-5=5>>5": the number a restated
            # calculation justifies ("because") is what it gives, not its operand; where the value
            # is also an operand and nothing says "because" ("a rate of $5 per hour by doing
            # 25 / $5 = 5 hours"), the operand reading below is kept.
            out.append(ProseNumber(a, b, m.group(1), "step", str(steps.index(nxt))))
            continue
        leaf = next((lf for lf in nxt.leaves if Fraction(lf.value) == v), None) if nxt else None
        if leaf is not None:
            out.append(ProseNumber(a, b, m.group(1), leaf.kind, leaf.ref, leaf.scale, leaf.offset))
            continue
        prior = [j for j, s in enumerate(steps) if s.end <= a and results[j] == v]
        later = [j for j, s in enumerate(steps) if results[j] == v]
        if nxt is not None and not prior and Fraction(nxt.result) == v:
            # "Each gallon costs $5 to make because 3 + 2 = <<5=5>>5": the line states the result
            # its own annotation computes (not a later step's equal result, nor a question number).
            out.append(ProseNumber(a, b, m.group(1), "step", str(steps.index(nxt))))
            continue
        grp = [(g, v / g) for g in group_values if g != 0 and v / g in group_scales[g]]
        if prior or (later and not grp):
            out.append(ProseNumber(a, b, m.group(1), "step", str((prior or later)[-1])))
        elif grp:
            sid = gid[grp[0][0]]
            if roles[sid] == "frozen" and unused[sid] and solution[max(0, a - 1) : a] == "#":
                # "horse #2": a label the question names the same way, never read and never moved.
                out.append(ProseNumber(a, b, m.group(1), "const", ""))
                continue
            if roles[sid] == "frozen" and unused[sid]:
                # The solution reasons with a number the program never reads: changing the others
                # could contradict it ("the remaining 24 liters"), so the item is not templated.
                raise Rejected(
                    "unused_number_in_solution", f"{m.group(1)} is stated in the question and used in the solution outside any computation"
                )
            unit = re.match(r"\s*(day|week|month|year|hour|minute)s?\b", solution[b : b + 12], re.IGNORECASE)
            if unit and roles[sid] != "frozen" and slot_nouns is not None and unit.group(1).lower() not in slot_nouns.get(sid, set()):
                # "During the 5 days together" where the 5 that moves is "5 miles": a count the prose
                # made (3 + 2 days) that only shares the value; rewriting it would misstate the days.
                raise _AmbiguousProse(
                    v, f"{m.group(1)} {unit.group(1)} in the solution equals a number that changes and counts something else"
                )
            out.append(ProseNumber(a, b, m.group(1), "slot", sid, str(grp[0][1])))
        elif v in consts or v in (0, 1):
            out.append(ProseNumber(a, b, m.group(1), "const", ""))
        elif cfg.reject_unexplained:
            raise Rejected("unexplained_solution_number", f"{m.group(1)} in the solution is not a slot, a step result or a constant")
        else:
            out.append(ProseNumber(a, b, m.group(1), "const", ""))
    # A number after "/" in the prose ("32/7 of the total") is no prose number above: when it equals
    # a number that moves, which one it is cannot be told, so the item is not templated.
    moving_vals = {Fraction(s.value) for s in slots if s.role != "frozen"} | moving_results
    for m in re.finditer(r"/\s*(\d+(?:\.\d+)?)(?![\d.])", solution[: body_end if body_end >= 0 else len(solution)]):
        a = m.start(1)
        if any(s <= a < e for s, e in skip):
            continue
        if _number(m.group(1)) in moving_vals:
            raise _AmbiguousProse(_number(m.group(1)), f"'/{m.group(1)}' in the solution prose equals a number that changes")
    # Number words in the prose ("Sam had seventy loaves") follow their slot like digits do.
    for wm in find_mentions(solution[: body_end if body_end >= 0 else len(solution)]):
        if wm.kind != "word" or any(s <= wm.start < e for s, e in skip):
            continue
        v = Fraction(wm.value)
        if v in gid and roles[gid[v]] != "frozen":
            if _WORD_AS_LABEL.search(solution[max(0, wm.start - 12) : wm.start]):
                # "on day three": a label, not the count; rewriting it by value would misname the day.
                raise _AmbiguousProse(v, f"{wm.text!r} in the solution labels something and equals a number that changes")
            out.append(ProseNumber(wm.start, wm.end, wm.text, "slot", gid[v], "1"))
    del moving
    out.sort(key=lambda p: p.start)
    return out
