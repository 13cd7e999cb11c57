"""Instantiating a template: seeded slot values at the same order of magnitude, the program re-run,
question and GSM8K-format solution rewritten (paper 004 Section 3.5; paper 003 "generation is grading").

Each draw samples every free slot from its kind's range (same number of digits, same
roundness: 80,000 stays a multiple of 10,000; $1.50 stays in cents steps of ten), derives the
tied slots, runs the program exactly, and keeps the draw only if every constraint the original
satisfied still holds. Rejection sampling stops after ``budget`` draws.

>>> from contam.data import load_benchmark
>>> from contam.perturb.symbolic import lift
>>> t = lift(load_benchmark("gsm8k-train")[0])
>>> draw(t, seed=0, index=0).answer == draw(t, seed=0, index=0).answer
True
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field
from fractions import Fraction

from contam.perturb import arith
from contam.perturb.program import Program, compiled
from contam.perturb.ranges import MAGNITUDE, MIN_CHOICES, WIDE_MAGNITUDE, Range, candidates, slot_range
from contam.perturb.records import Slot, Template
from contam.perturb.render import decimal_places, format_value, render_question, render_solution
from contam.perturb.vetting import product_of

__all__ = [
    "MAGNITUDE",
    "MIN_CHOICES",
    "WIDE_MAGNITUDE",
    "Draw",
    "Program",
    "Range",
    "SamplerStats",
    "candidates",
    "check_constraints",
    "compiled",
    "draw",
    "format_value",
    "render_question",
    "render_solution",
    "rng_for",
    "slot_range",
]


@dataclass
class Draw:
    """One accepted assignment: slot values, step results, and the rendered texts."""

    values: dict[str, Fraction]
    results: list[Fraction]
    question: str
    solution: str
    answer: str
    attempts: int


@dataclass
class SamplerStats:
    """Why draws were thrown away (by constraint kind), over a sampler's life."""

    rejected: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + 1


def rng_for(template: Template, seed: int, index: int) -> random.Random:
    """A generator that depends only on the template, the seed and the instance index.

    Seeding with a string is stable across processes and Python versions (it hashes with SHA-512).
    """
    return random.Random(f"{template.id}|{seed}|{index}")


def check_constraints(template: Template, values: dict[str, Fraction], results: list[Fraction]) -> str | None:
    """The first violated constraint kind, or None when the assignment keeps every one."""
    for s in template.slots:
        if s.role == "derived":
            v = values[s.id]
            if v <= 0 or decimal_places(v, s.decimals) is None:
                return "derived_value"
    for c in template.constraints:
        k = c.kind
        if k in ("int", "pos", "nonneg", "lt1", "decimals"):
            r = results[int(c.target)]
            if (
                (k == "int" and r.denominator != 1)
                or (k == "pos" and r <= 0)
                or (k == "nonneg" and r < 0)
                or (k == "lt1" and not 0 < r < 1)
                or (k == "decimals" and decimal_places(r, int(c.arg)) is None)
            ):
                return k
        elif k == "tie":
            sid, ratio = c.arg.split("*")
            if values[sid] * Fraction(ratio) != results[int(c.target)]:
                return k
        elif k == "eqstep":
            if results[int(c.target)] != results[int(c.arg)]:
                return k
        elif k == "le100":
            if values[c.target] > 100:
                return k
        elif k == "le":  # a plausible or physical upper bound ("5 days a week" stays at most 7)
            if values[c.target] > Fraction(c.arg):
                return k
        elif k == "stmax":  # an age stays human, an angle an angle
            if results[int(c.target)] > Fraction(c.arg):
                return k
        elif k in ("sumle", "sumeq"):  # parts of a whole ("3 of the albums ... 2 of the albums" of 8)

            def ref(x: str) -> Fraction:
                return values[x] if x in values else Fraction(x)

            total = sum((ref(x) for x in c.arg.split("+")), Fraction(0))
            if (k == "sumle" and total > ref(c.target)) or (k == "sumeq" and total != ref(c.target)):
                return k
        elif k == "stmin":  # the age asked for stays near the original age
            if results[int(c.target)] < Fraction(c.arg):
                return k
        elif k == "stle":  # a step stays within the money at hand ("gave him $64")
            if results[int(c.target)] > values[c.arg]:
                return k
        elif k == "ansle":  # the answer stays within the count it is part of ("guests without a second" <= guests)
            if results[int(c.target)] > values[c.arg]:
                return k
        elif k == "ge":  # "the third day" needs at least 3 days
            if values[c.target] < Fraction(c.arg):
                return k
        elif k == "order":
            if not values[c.target] < values[c.arg]:
                return k
        elif k == "prodle":  # an unused stock bounds what the moving numbers consume (vetting)
            if product_of(c.target, values, results) > Fraction(c.arg):
                return k
    moving = {s.id for s in template.slots if s.role != "frozen"}
    originals = {Fraction(s.value) for s in template.slots}
    for sid in moving:
        if values[sid] in originals:  # an original value may not survive anywhere (coverage)
            return "coverage"
    if len({values[s.id] for s in template.slots}) != len(template.slots):
        return "distinct"  # different numbers stay different, so the instance reads as the original did
    return None


@dataclass
class _Plan:
    """What sampling needs, computed once per template."""

    free: list[tuple[str, Range]]
    ranked: list[list[str]]
    originals: set[Fraction]
    excluded: dict[str, set[int]]
    quick: list[tuple[int, str]]  # (step, constraint kind) checked in floats first


_PLANS: dict[tuple[str, bool], tuple[Template, _Plan | None]] = {}


def _clamped(r: Range | None, template: Template, sid: str) -> Range | None:
    """A free slot's range cut to its ``le``/``ge`` bounds (plausible caps, physical limits), so
    the sampler draws within them instead of throwing most draws away; None when nothing is left.
    The bounds are still checked on every draw (:func:`check_constraints`) and by the audit."""
    if r is None:
        return None
    lo, hi = r.lo, r.hi
    size = r.unit * r.step
    for c in template.constraints:
        if c.target != sid:
            continue
        if c.kind == "le":
            hi = min(hi, math.floor(Fraction(c.arg) / size))
        elif c.kind == "ge":
            lo = max(lo, math.ceil(Fraction(c.arg) / size))
    if (lo, hi) == (r.lo, r.hi):
        return r
    return Range(r.unit, r.step, lo, hi, r.original) if hi >= lo else None


def _plan(template: Template, wide: bool = False) -> _Plan | None:
    hit = _PLANS.get((template.id, wide))
    if hit is not None and hit[0] is template:
        return hit[1]
    originals = {Fraction(s.value) for s in template.slots}
    free: list[tuple[str, Range]] = []
    families: dict[str, list[Slot]] = {}
    plan: _Plan | None = None
    ok = True
    for s in template.slots:
        if s.role != "free":
            continue
        r = _clamped(slot_range(s, wide), template, s.id)
        if r is None:
            ok = False
            break
        free.append((s.id, r))
        family = {"cents": "money"}.get(s.kind, s.kind if s.kind in ("money", "percent") else "n")
        families.setdefault(family, []).append(s)
    if ok:
        ranked = [[s.id for s in sorted(group, key=lambda s: Fraction(s.value))] for group in families.values() if len(group) > 1]
        quick = [(int(c.target), c.kind) for c in template.constraints if c.kind in ("int", "pos", "nonneg", "lt1")]
        # Never draw an original value (coverage), nor a constant the program uses (12 weeks next to
        # 12 eggs per dozen reads as a different problem).
        avoid = originals | {Fraction(lf.value) for st in template.steps for lf in st.leaves if lf.kind == "const"}
        excluded = {sid: {int(x / (r.unit * r.step)) for x in avoid if x in r} for sid, r in free}
        if any(len(excluded[sid]) >= len(r) for sid, r in free):
            ok = False
        else:
            plan = _Plan(free, ranked, originals, excluded, quick)
    if len(_PLANS) > 20000:
        _PLANS.clear()
    _PLANS[(template.id, wide)] = (template, plan)
    return plan


def _on_grid(v: float, r: Range) -> bool:
    return abs(v / r.fstep - round(v / r.fstep)) < 1e-9


def _exact(v: float, r: Range) -> Fraction:
    """The exact grid value a float sample stands for."""
    return Fraction(round(v / r.fstep) * r.step) * r.unit


def _rank(chosen: dict[str, Fraction], ranked: list[list[str]], ranges: dict[str, Range]) -> None:
    """Reassign drawn values so each family keeps the original order, where every value still fits its slot."""
    for ids in ranked:
        vals = sorted(chosen[i] for i in ids)
        if all(v in ranges[i] for i, v in zip(ids, vals, strict=True)):
            chosen.update(zip(ids, vals, strict=True))


def _quick_violations(plan: _Plan, results: list[float]) -> tuple[int, str | None]:
    """How many of the cheap constraints a float run breaks, and the first one's kind."""
    count, first = 0, None
    for j, kind in plan.quick:
        r = results[j]
        bad = (
            (kind == "int" and abs(r - round(r)) > 1e-6 * max(1.0, abs(r)))
            or (kind == "pos" and r <= 0)
            or (kind == "nonneg" and r < -1e-9)
            or (kind == "lt1" and not 0 < r < 1)
        )
        if bad:
            count += 1
            first = first or kind
    return count, first


#: Local-search moves between full restarts (min-conflicts: re-draw one slot, keep the move
#: unless it breaks more constraints). Divisibility chains are found far faster this way than
#: by redrawing everything, and the walk is still a pure function of the seeded generator.
RESTART_EVERY = 25


def draw(
    template: Template,
    seed: int,
    index: int = 0,
    *,
    budget: int = 400,
    stats: SamplerStats | None = None,
    wide: bool = False,
) -> Draw | None:
    """Sample one instance; None when ``budget`` candidate assignments all broke a constraint.

    ``wide`` samples from the second-tier ranges (see :func:`slot_range`), with its own stream.
    """
    rng = rng_for(template, seed, index) if not wide else random.Random(f"{template.id}|{seed}|{index}|wide")
    program = compiled(template)
    plan = _plan(template, wide)
    if plan is None:
        return None
    ranges = dict(plan.free)

    def sample_k(sid: str, r: Range) -> int:
        k = rng.randint(r.lo, r.hi)
        while k in plan.excluded[sid]:  # coverage by construction: no original value is drawn
            k = rng.randint(r.lo, r.hi)
        return k

    space = math.prod(len(r) - len(plan.excluded[sid]) for sid, r in plan.free)
    if space <= ENUMERATE_BELOW:
        budget = min(budget, RANDOM_FIRST)  # small space: a few random draws, then exhaustive search
    ks: dict[str, int] = {}
    current = 1 << 30
    for attempt in range(1, budget + 1):
        if attempt % RESTART_EVERY == 1 or len(plan.free) == 1:
            trial = {sid: sample_k(sid, r) for sid, r in plan.free}
            current = 1 << 30
        else:
            sid, r = plan.free[rng.randrange(len(plan.free))]
            trial = dict(ks)
            trial[sid] = sample_k(sid, r)
        fvals = {sid: trial[sid] * r.fstep for sid, r in plan.free}
        for ids in plan.ranked:  # order constraints hold by construction where ranges allow
            vals = sorted(fvals[i] for i in ids)
            if all(ranges[i].fmin <= v <= ranges[i].fmax and _on_grid(v, ranges[i]) for i, v in zip(ids, vals, strict=True)):
                fvals.update(zip(ids, vals, strict=True))
        try:
            violations, why = _quick_violations(plan, program.run_float(fvals))
        except (ZeroDivisionError, OverflowError):
            violations, why = 1 << 20, "arithmetic"
        if violations <= current:
            ks, current = trial, violations
        if why is not None:
            if stats is not None:
                stats.add(why)
            continue
        chosen = {sid: _exact(fvals[sid], ranges[sid]) for sid, _ in plan.free}
        try:
            values, results = program.run(chosen)
        except arith.ArithError:
            if stats is not None:
                stats.add("arithmetic")
            continue
        why = check_constraints(template, values, results)
        if why is None and results[template.answer_step] == Fraction(template.answer):
            why = "answer_unchanged"
        if why is not None:
            if stats is not None:
                stats.add(why)
            continue
        question = render_question(template, values)
        solution, answer = render_solution(template, values, results)
        d = Draw(values, results, question, solution, answer, attempt)
        # A rendered value can read back differently (e.g. a ratio "4:8" parses as a clock
        # time); such a draw would fail the audit, so it is rejected here like any constraint.
        if not _reads_back(template, d):
            if stats is not None:
                stats.add("reparse")
            continue
        return d
    if space <= ENUMERATE_BELOW:
        feasible = list(_feasible(template, plan, program, wide))  # a copy: the cached list stays whole
        while feasible:
            values, results = feasible.pop(rng.randrange(len(feasible)))
            question = render_question(template, values)
            solution, answer = render_solution(template, values, results)
            d = Draw(values, results, question, solution, answer, budget + 1)
            if _reads_back(template, d):
                return d
        return None
    return _solve(template, plan, program, rng, budget)


#: The constraint solver that runs when every random draw of a large space failed: restarts,
#: coordinate moves per restart, and values of one slot scanned per move.
SOLVE_RESTARTS = 3
SOLVE_MOVES = 40
SOLVE_SCAN = 60


def _solve(template: Template, plan: _Plan, program: Program, rng: random.Random, budget: int) -> Draw | None:
    """Min-conflicts search with a full scan of one slot per move (up to :data:`SOLVE_SCAN` of its
    values): a divisibility chain ("x/y whole, y*z/w whole") is met by choosing, for the slot
    moved, the value that breaks fewest constraints given the others, where redrawing the slot at
    random rarely finds one. Only called after the random draws all failed, so the instances of
    every template that sampled before are unchanged. Every instance it returns keeps every
    constraint (the exact check of :func:`check_constraints`), changes the answer and reads back.
    """
    ranges = dict(plan.free)
    answer = Fraction(template.answer)

    def cost(ks: dict[str, int]) -> tuple[int, dict[str, Fraction] | None, list[Fraction] | None]:
        fvals = {sid: ks[sid] * r.fstep for sid, r in plan.free}
        for ids in plan.ranked:
            vals = sorted(fvals[i] for i in ids)
            if all(ranges[i].fmin <= v <= ranges[i].fmax and _on_grid(v, ranges[i]) for i, v in zip(ids, vals, strict=True)):
                fvals.update(zip(ids, vals, strict=True))
        try:
            quick = _quick_violations(plan, program.run_float(fvals))[0]
        except (ZeroDivisionError, OverflowError):
            return 1 << 20, None, None
        if quick:
            return 2 * quick, None, None
        try:
            values, results = program.run({sid: _exact(fvals[sid], ranges[sid]) for sid, _ in plan.free})
        except arith.ArithError:
            return 1 << 20, None, None
        if check_constraints(template, values, results) is not None or results[template.answer_step] == answer:
            return 1, None, None
        return 0, values, results

    def sample_k(sid: str, r: Range) -> int:
        k = rng.randint(r.lo, r.hi)
        while k in plan.excluded[sid]:
            k = rng.randint(r.lo, r.hi)
        return k

    def scan(sid: str, r: Range) -> list[int]:
        ks = range(r.lo, r.hi + 1) if len(r) <= SOLVE_SCAN else rng.sample(range(r.lo, r.hi + 1), SOLVE_SCAN)
        return [k for k in ks if k not in plan.excluded[sid]]

    for restart in range(SOLVE_RESTARTS):
        ks = {sid: sample_k(sid, r) for sid, r in plan.free}
        c, values, results = cost(ks)
        for _ in range(SOLVE_MOVES):
            if c == 0:
                break
            sid, r = plan.free[rng.randrange(len(plan.free))]
            best: list[tuple[int, dict[str, int], dict[str, Fraction] | None, list[Fraction] | None]] = []
            for k in scan(sid, r):
                trial = dict(ks)
                trial[sid] = k
                tc, tv, tr = cost(trial)
                if not best or tc < best[0][0]:
                    best = [(tc, trial, tv, tr)]
                elif tc == best[0][0]:
                    best.append((tc, trial, tv, tr))
            if best:
                c, ks, values, results = best[rng.randrange(len(best))]
        if c == 0 and values is not None and results is not None:
            question = render_question(template, values)
            solution, answer_text = render_solution(template, values, results)
            d = Draw(values, results, question, solution, answer_text, budget + 1 + restart)
            if _reads_back(template, d):
                return d
    return None


def _reads_back(template: Template, d: Draw) -> bool:
    from contam.perturb.mentions import find_mentions
    from contam.perturb.reparse import reparse_agrees

    return reparse_agrees(template, d, find_mentions(d.question))


#: Assignment spaces up to this size are searched exhaustively when random draws keep failing.
ENUMERATE_BELOW = 20_000
#: Random draws tried first on a small space.
RANDOM_FIRST = 60
_FEASIBLE: dict[tuple[str, bool], tuple[Template, list]] = {}


def _feasible(template: Template, plan: _Plan, program: Program, wide: bool = False) -> list[tuple[dict[str, Fraction], list[Fraction]]]:
    """Every assignment of a small space that keeps all constraints (cached per template)."""
    hit = _FEASIBLE.get((template.id, wide))
    if hit is not None and hit[0] is template:
        return hit[1]
    ids = [sid for sid, _ in plan.free]
    axes = [[k for k in range(r.lo, r.hi + 1) if k not in plan.excluded[sid]] for sid, r in plan.free]
    fsteps = [r.fstep for _, r in plan.free]
    ranges = dict(plan.free)
    answer = Fraction(template.answer)
    out: list[tuple[dict[str, Fraction], list[Fraction]]] = []
    for combo in itertools.product(*axes):
        fvals = {sid: k * f for sid, k, f in zip(ids, combo, fsteps, strict=True)}
        try:
            if _quick_violations(plan, program.run_float(fvals))[0]:
                continue
        except (ZeroDivisionError, OverflowError):
            continue
        chosen = {sid: _exact(fvals[sid], ranges[sid]) for sid in ids}
        try:
            values, results = program.run(chosen)
        except arith.ArithError:
            continue
        if check_constraints(template, values, results) is None and results[template.answer_step] != answer:
            out.append((values, results))
    if len(_FEASIBLE) > 5000:
        _FEASIBLE.clear()
    _FEASIBLE[(template.id, wide)] = (template, out)
    return out
