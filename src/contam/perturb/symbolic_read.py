"""Reading of the GSM8K templater (:mod:`contam.perturb.symbolic`): what an item states, before its calculations are traced.

:func:`read_problem` finds the question's number mentions and groups them into slots, gathers the
constants the solution may use, and collects the solution's calculations (its annotations, bare
ones given the prose's expression, and the unit-word prose lines that compute a value); it rejects
a solution that computes or decides something outside them.
"""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction

from contam.data.items import Item
from contam.perturb import arith, guards
from contam.perturb.chain import Rejected, _Parsed, collect_steps, final_unit_equation, unit_equations
from contam.perturb.chain import number as _number
from contam.perturb.mentions import find_mentions, licensed_constants
from contam.perturb.symbolic_guards import _nature_counts
from contam.perturb.symbolic_prose import _RESTATED
from contam.perturb.symbolic_state import LiftProblem

_HIDDEN = re.compile(
    r"(?<![\w.,/])(\d+(?:\.\d+)?)\s*(?:[a-z]+\s*){0,2}([-+*x×−])\s*(\d+(?:\.\d+)?)\s*(?:[a-z]+\s*){0,2}"
    r"(?:for|is|makes|gives|equals|totals?|to\s+get|which\s+is)\s+(?:a\s+total\s+of\s+|an?\s+|of\s+)?\$?(\d+(?:\.\d+)?)(?![\d<])"
)
_COMPARE_Q = re.compile(
    r"\b(?:maximi[sz]e|minimi[sz]e|whichever|which\s+(?:one|option|plan|offer|deal|is\s+(?:cheaper|better|more|less))|better\s+(?:deal|option|choice|offer)|choice\s+of\s+purchase)\b",
    re.IGNORECASE,
)
_COMPARE_S = re.compile(r"\d\s*[<>]\s*\$?\d|\bis\s+(?:greater|bigger|larger|smaller|less|more)\s+than\s+\$?\d", re.IGNORECASE)
_ALGEBRA = re.compile(r"\b[Ll]et\s+[a-zA-Z]\b|\b\d+\s*\*?\s*[a-zA-Z]\s*[-+=]|[-+=]\s*\d*\s*\*?\s*[xyXY]\b|\b[xyXY]\s*=")


def read_problem(item: Item, wanted: frozenset[tuple[Fraction, int]] = frozenset()) -> LiftProblem:
    """What the item states: its mentions grouped into slots, its constants and the solution's
    calculations (with the unit-word prose lines ``wanted`` names as steps); rejects an item whose
    answer or calculations cannot be read."""
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
    group_scales = {v: sorted({Fraction(s) for i in groups[v] for s in mentions[i].scales}) for v in group_values}
    frozen_values = {Fraction(m.value) * Fraction(s) for m in mentions if not m.perturbable for s in m.scales}
    # What the question's mentions of each value count ("apple", "$"), for the unit readings.
    group_nouns = {v: {guards.head_noun(question, mentions[i]) for i in ix} for v, ix in groups.items()}
    _reject_untraceable(question, solution, body)
    parsed = _calculations(solution, answer, wanted)
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
    story_nouns = {guards.head_noun(question, m) for m in mentions} | {
        guards.singular(w.group(0).lower()) for m in mentions if (w := re.match(r"\s*[A-Za-z]+", question[m.end : m.end + 20]))
    }
    return LiftProblem(
        question=question,
        solution=solution,
        body=body,
        answer=answer,
        mentions=mentions,
        constants=constants,
        story_counts=story_counts,
        groups=groups,
        group_values=group_values,
        gid={v: f"s{k}" for k, v in enumerate(group_values)},
        group_scales=group_scales,
        frozen_values=frozen_values,
        group_nouns=group_nouns,
        parsed=parsed,
        reads=reads,
        worded=worded,
        world=world,
        strong=strong,
        stated_constants=stated_constants,
        story_nouns={n.strip() for n in story_nouns} - {"", "%"},
    )


def _reject_untraceable(question: str, solution: str, body: str) -> None:
    """Reject a solution that computes or decides something outside its annotations."""
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


def _calculations(solution: str, answer: Fraction, wanted: frozenset[tuple[Fraction, int]]) -> list[_Parsed]:
    """The solution's calculations in order: its annotations, and the unit-word prose lines that give
    the answer or a value ``wanted`` (``(value, start of the step that reads it)``)."""
    parsed: list[_Parsed] = _bare_from_prose(solution, collect_steps(solution))
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
    return parsed


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
