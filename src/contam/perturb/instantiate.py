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
import operator
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from contam.perturb import arith
from contam.perturb.mentions import word_for
from contam.perturb.records import Mention, Slot, Template

_PROSE_TOK = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+")
_LIT = re.compile(r"\d+(?:\.\d*)?|\.\d+")
#: New values stay within this factor of the original (when enough values remain).
MAGNITUDE = 3
MIN_CHOICES = 6
#: Fewest grid values a slot's full range should offer before its roundness is relaxed.
MIN_RANGE = 15
#: Second-tier sampling window (see :func:`slot_range`).
WIDE_MAGNITUDE = 4


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


@dataclass(frozen=True)
class Range:
    """Values ``k * step * unit`` for ``lo <= k <= hi``: what a free slot may take."""

    unit: Fraction
    step: int
    lo: int
    hi: int
    original: Fraction
    fstep: float = field(init=False, repr=False, compare=False, default=0.0)
    fmin: float = field(init=False, repr=False, compare=False, default=0.0)
    fmax: float = field(init=False, repr=False, compare=False, default=0.0)

    def __post_init__(self) -> None:
        # Float views used on the hot path of rejection sampling (exact values are rebuilt after).
        fstep = float(self.unit * self.step)
        object.__setattr__(self, "fstep", fstep)
        object.__setattr__(self, "fmin", self.lo * fstep)
        object.__setattr__(self, "fmax", self.hi * fstep)

    def __len__(self) -> int:
        return max(0, self.hi - self.lo + 1)

    def sample(self, rng: random.Random) -> Fraction:
        return Fraction(rng.randint(self.lo, self.hi) * self.step) * self.unit

    def __contains__(self, x: object) -> bool:
        if not isinstance(x, Fraction):
            return False
        k = x / (self.unit * self.step)
        return k.denominator == 1 and self.lo <= k <= self.hi


def candidates(slot: Slot) -> tuple[Fraction, ...]:
    """Values a free slot may take: same number of digits and same roundness as the original,
    within a factor of :data:`MAGNITUDE` of it when that leaves at least :data:`MIN_CHOICES`.

    >>> [str(v) for v in candidates(Slot("s0", "48", "int", (0,)))][:3]
    ['16', '17', '18']
    >>> [str(v) for v in candidates(Slot("s0", "80000", "money", (0,)))]
    ['30000', '40000', '50000', '60000', '70000', '90000']
    >>> [str(v) for v in candidates(Slot("s0", "3/2", "money", (0,), decimals=2))][:2]
    ['1/2', '3/5']
    """
    r = slot_range(slot)
    if r is None:
        return ()
    return tuple(x for x in (Fraction(k * r.step) * r.unit for k in range(r.lo, min(r.hi, r.lo + 100_000) + 1)) if x != r.original)


def slot_range(slot: Slot, wide: bool = False) -> Range | None:
    """The sampling :class:`Range` of a slot, or None when its value cannot be varied.

    ``wide`` is the second tier, used only when the first admits too few distinct instances:
    any value on the unit grid within a factor of :data:`WIDE_MAGNITUDE` (single digits up to 20),
    still the same order of magnitude, no longer the same roundness.
    """
    if wide:
        return _wide_range(slot.value, slot.kind, slot.decimals)
    return _range(slot.value, slot.kind, slot.decimals)


@lru_cache(maxsize=8192)
def _wide_range(value: str, kind: str, decimals: int) -> Range | None:
    v = Fraction(value)
    unit = Fraction(1, 10**decimals)
    if (v / unit).denominator != 1 or v <= 0:
        return None
    lo = max(math.ceil(v / WIDE_MAGNITUDE / unit), math.ceil(Fraction(2) / unit) if decimals == 0 else 1)
    hi = math.floor(max(v * WIDE_MAGNITUDE, Fraction(20) if v < 10 else v) / unit)
    if kind == "percent" and v < 100:
        hi = min(hi, int(Fraction(100) / unit) - 1)
    # Money keeps a cents grid of its original fineness (1.50 stays in steps of 10 cents).
    n = int(v / unit)
    step = 10 if decimals == 2 and n % 10 == 0 else 1
    lo, hi = -(-lo // step), hi // step
    return Range(unit, step, lo, hi, v) if hi - lo >= 1 else None


@lru_cache(maxsize=8192)
def _range(value: str, kind: str, decimals: int) -> Range | None:
    v = Fraction(value)
    unit = Fraction(1, 10**decimals)
    if (v / unit).denominator != 1 or v <= 0:
        return None
    n = int(v / unit)
    digits = len(str(n))
    zeros = len(str(n)) - len(str(n).rstrip("0"))
    if decimals == 0 and digits == 1:
        low, high, step = 2, 12, 1  # single digits may grow to a dozen: still the same order of magnitude
    else:
        step = 10 ** min(zeros, digits - 1)
        low, high = max(10 ** (digits - 1), 2), 10**digits - 1
        # Round numbers keep their roundness, but not at the price of a handful of choices:
        # 20 may become 35 rather than only 10, 30, ..., 90 (steps 10 -> 5 -> 1).
        while step > 1 and (high // step - (low + step - 1) // step + 1) < MIN_RANGE:
            step = step // 2 if str(step).startswith("1") else step // 5
    if kind == "percent" and v < 100:
        high = min(high, int(Fraction(100) / unit) - 1)
    lo, hi = -(-low // step), high // step
    # Same order of magnitude, read strictly: within a factor of MAGNITUDE of the original when
    # that still leaves a real choice (1.2 times stays near 1.2, not 9.5).
    unit_step = unit * step
    wlo, whi = max(lo, math.ceil(v / MAGNITUDE / unit_step)), min(hi, math.floor(v * MAGNITUDE / unit_step))
    if whi - wlo >= MIN_CHOICES:
        lo, hi = wlo, whi
    if hi - lo < 1:
        return None
    lo = max(lo, math.ceil(Fraction(2) / unit_step)) if decimals == 0 else lo
    return Range(unit, step, lo, hi, v)


class Program:
    """A template's program compiled once: ``run(values)`` gives every step's exact result."""

    def __init__(self, template: Template) -> None:
        self.template = template
        self.slot_index = {s.id: k for k, s in enumerate(template.slots)}
        n_slots = len(template.slots)
        self._steps: list[Callable[[list[Fraction]], Fraction]] = []
        self._fsteps: list[Callable[[list[float]], float]] = []
        self._fdefaults = [float(Fraction(s.value)) for s in template.slots]
        for step in template.steps:
            tree = arith.parse(arith.normalize_expression(step.expr))
            by_index = dict(enumerate(step.leaves))

            def leaf(num: arith.Num, by_index: dict = by_index) -> Callable[[list[Fraction]], Fraction]:
                lf = by_index[num.index]
                scale, offset = Fraction(lf.scale), Fraction(lf.offset)
                if lf.kind == "slot":
                    k = self.slot_index[lf.ref]
                    return lambda v: v[k] * scale + offset
                if lf.kind == "step":
                    k = n_slots + int(lf.ref)
                    return lambda v: v[k]
                c = Fraction(lf.value)
                return lambda v: c

            self._steps.append(arith.compile_node(tree, leaf))
            self._fsteps.append(_compile_float(tree, {k: lf for k, lf in enumerate(step.leaves)}, self.slot_index, n_slots))
        # Derived slots: from another slot (before the run) or from a step (right after it).
        self.from_slot = [(self.slot_index[s.id], self.slot_index[s.source[5:]], Fraction(s.ratio))
                          for s in template.slots if s.role == "derived" and s.source.startswith("slot:")]
        self.from_step: dict[int, list[tuple[int, Fraction]]] = {}
        for s in template.slots:
            if s.role == "derived" and s.source.startswith("step:"):
                self.from_step.setdefault(int(s.source[5:]), []).append((self.slot_index[s.id], Fraction(s.ratio)))

    def run_float(self, values: dict[str, float]) -> list[float]:
        """Step results in floating point: a cheap first filter before the exact run."""
        vec = [values.get(s.id, f) for s, f in zip(self.template.slots, self._fdefaults, strict=True)]
        for k, root, ratio in self.from_slot:
            vec[k] = vec[root] * float(ratio)
        n = len(vec)
        for j, f in enumerate(self._fsteps):
            r = f(vec)
            vec.append(r)
            for k, ratio in self.from_step.get(j, ()):
                vec[k] = r * float(ratio)
        return vec[n:]

    def run(self, values: dict[str, Fraction]) -> tuple[dict[str, Fraction], list[Fraction]]:
        """All slot values (derived ones filled in) and every step result, exactly."""
        t = self.template
        vec = [values.get(s.id, Fraction(s.value)) for s in t.slots]
        for k, root, ratio in self.from_slot:
            vec[k] = vec[root] * ratio
        for j, f in enumerate(self._steps):
            r = f(vec)
            vec.append(r)
            for k, ratio in self.from_step.get(j, ()):
                vec[k] = r * ratio
        n = len(t.slots)
        return {s.id: vec[k] for k, s in enumerate(t.slots)}, vec[n:]


_FOPS: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
}


def _fpow(a: float, b: float) -> float:
    if b != int(b) or abs(b) > arith.MAX_EXPONENT:
        raise OverflowError("exponent is not a small integer")
    return a ** int(b)


def _compile_float(node: arith.Node, leaves: dict, slot_index: dict[str, int], n_slots: int) -> Callable[[list[float]], float]:
    if isinstance(node, arith.Num):
        lf = leaves[node.index]
        scale, offset = float(Fraction(lf.scale)), float(Fraction(lf.offset))
        if lf.kind == "slot":
            k = slot_index[lf.ref]
            return lambda v: v[k] * scale + offset
        if lf.kind == "step":
            k = n_slots + int(lf.ref)
            return lambda v: v[k]
        c = float(Fraction(lf.value))
        return lambda v: c
    if isinstance(node, arith.Neg):
        inner = _compile_float(node.operand, leaves, slot_index, n_slots)
        return lambda v: -inner(v)
    if isinstance(node, arith.Var):
        raise arith.ArithError("names are not part of a template program")
    left = _compile_float(node.left, leaves, slot_index, n_slots)
    right = _compile_float(node.right, leaves, slot_index, n_slots)
    fn = _fpow if node.op == "**" else _FOPS[node.op]
    return lambda v: fn(left(v), right(v))


def _places(x: Fraction, limit: int = 8) -> int | None:
    for p in range(limit + 1):
        if (x * 10**p).denominator == 1:
            return p
    return None


def check_constraints(template: Template, values: dict[str, Fraction], results: list[Fraction]) -> str | None:
    """The first violated constraint kind, or None when the assignment keeps every one."""
    for s in template.slots:
        if s.role == "derived":
            v = values[s.id]
            if v <= 0 or _places(v, s.decimals) is None:
                return "derived_value"
    for c in template.constraints:
        k = c.kind
        if k in ("int", "pos", "nonneg", "lt1", "decimals"):
            r = results[int(c.target)]
            if (k == "int" and r.denominator != 1) or (k == "pos" and r <= 0) or (k == "nonneg" and r < 0) \
                    or (k == "lt1" and not 0 < r < 1) or (k == "decimals" and _places(r, int(c.arg)) is None):
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
        elif k == "order":
            if not values[c.target] < values[c.arg]:
                return k
    moving = {s.id for s in template.slots if s.role != "frozen"}
    originals = {Fraction(s.value) for s in template.slots}
    for sid in moving:
        if values[sid] in originals:  # an original value may not survive anywhere (coverage)
            return "coverage"
    if len({values[s.id] for s in template.slots}) != len(template.slots):
        return "distinct"  # different numbers stay different, so the instance reads as the original did
    return None


def format_value(x: Fraction, like: str, *, kind: str = "int", min_decimals: int = 0) -> str:
    """Spell ``x`` the way ``like`` was spelled: commas, decimal places, number words, capitals.

    >>> format_value(Fraction(130000), "130,000"), format_value(Fraction(5, 2), "1.50"), format_value(Fraction(5), "Three", kind="word")
    ('130,000', '2.50', 'Five')
    """
    if kind == "word" and x.denominator == 1:
        w = word_for(int(x))
        if w is not None:
            return w.capitalize() if like[:1].isupper() else w
    places = _places(x) or 0
    plain = like.replace(",", "")
    if "." in plain:
        places = max(places, len(plain.split(".", 1)[1]))
    places = max(places, min_decimals)
    text = _fixed(x, places)
    if "," in like and abs(x) >= 1000:
        head, _, tail = text.partition(".")
        text = f"{int(head):,}" + (f".{tail}" if tail else "")
    if like.startswith(".") and text.startswith("0."):
        text = text[1:]
    return text


def _fixed(x: Fraction, places: int) -> str:
    """``x`` with exactly ``places`` decimals (rounded half away from zero; exact for finite decimals)."""
    scaled = x * 10**places
    n = int(abs(scaled) + Fraction(1, 2))
    sign = "-" if x < 0 and n else ""
    if not places:
        return f"{sign}{n}"
    head, tail = divmod(n, 10**places)
    return f"{sign}{head}.{tail:0{places}d}"


def render_question(template: Template, values: dict[str, Fraction]) -> str:
    """The question with every moving slot's mentions rewritten."""
    edits: list[tuple[int, int, str]] = []
    for s in template.slots:
        if s.role == "frozen":
            continue
        for i in s.mentions:
            m: Mention = template.mentions[i]
            edits.append((m.start, m.end, format_value(values[s.id], m.text, kind=m.kind)))
    return _apply(template.question, edits)


def render_solution(template: Template, values: dict[str, Fraction], results: list[Fraction]) -> tuple[str, str]:
    """The GSM8K-format solution (each ``<<expr=result>>`` recomputed) and the final answer."""
    sol = template.solution
    edits: list[tuple[int, int, str]] = []

    def leaf_value(kind: str, ref: str, scale: str, value: str, offset: str = "0") -> Fraction:
        if kind == "slot":
            return values[ref] * Fraction(scale) + Fraction(offset)
        if kind == "step":
            return results[int(ref)]
        return Fraction(value)

    for j, step in enumerate(template.steps):
        if step.prose:  # "60/15 = 4": rewrite each number where it stands, in its own spelling
            toks = list(_PROSE_TOK.finditer(sol, step.start, step.end))
            news = [leaf_value(lf.kind, lf.ref, lf.scale, lf.value, lf.offset) for lf in step.leaves] + [results[j]]
            for tok, new in zip(toks, news, strict=True):
                edits.append((tok.start(), tok.end(), format_value(new, tok.group(0))))
            continue
        expr = arith.normalize_expression(step.expr)
        pieces: list[str] = []
        pos = 0
        for lit, leaf in zip(_LIT.finditer(expr), step.leaves, strict=True):
            pieces.append(expr[pos:lit.start()])
            pieces.append(format_value(leaf_value(leaf.kind, leaf.ref, leaf.scale, leaf.value, leaf.offset), lit.group(0)))
            pos = lit.end()
        pieces.append(expr[pos:])
        edits.append((step.start, step.end, f"<<{''.join(pieces)}={format_value(results[j], '0')}>>"))
        if step.echo_start >= 0:
            edits.append((step.echo_start, step.echo_end, format_value(results[j], sol[step.echo_start:step.echo_end])))
    for p in template.prose:
        if p.kind != "const":
            spelling = "word" if p.text[:1].isalpha() else "int"
            edits.append((p.start, p.end, format_value(leaf_value(p.kind, p.ref, p.scale, "0", p.offset), p.text, kind=spelling)))
    answer = format_value(results[template.answer_step], "0")
    hash_at = sol.rfind("####")
    edits.append((hash_at, len(sol), f"#### {answer}"))
    return _apply(sol, edits), answer


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = 0
    for a, b, new in sorted(edits):
        out.append(text[pos:a])
        out.append(new)
        pos = b
    out.append(text[pos:])
    return "".join(out)


_PROGRAMS: dict[str, tuple[Template, Program]] = {}


def compiled(template: Template) -> Program:
    """The compiled program of a template (cached by id: sampling runs it many times)."""
    hit = _PROGRAMS.get(template.id)
    if hit is not None and hit[0] is template:
        return hit[1]
    if len(_PROGRAMS) > 20000:
        _PROGRAMS.clear()
    program = Program(template)
    _PROGRAMS[template.id] = (template, program)
    return program


@dataclass
class _Plan:
    """What sampling needs, computed once per template."""

    free: list[tuple[str, Range]]
    ranked: list[list[str]]
    originals: set[Fraction]
    excluded: dict[str, set[int]]
    quick: list[tuple[int, str]]  # (step, constraint kind) checked in floats first


_PLANS: dict[tuple[str, bool], tuple[Template, _Plan | None]] = {}


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
        r = slot_range(s, wide)
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
        bad = (kind == "int" and abs(r - round(r)) > 1e-6 * max(1.0, abs(r))) or (kind == "pos" and r <= 0) \
            or (kind == "nonneg" and r < -1e-9) or (kind == "lt1" and not 0 < r < 1)
        if bad:
            count += 1
            first = first or kind
    return count, first


#: Local-search moves between full restarts (min-conflicts: re-draw one slot, keep the move
#: unless it breaks more constraints). Divisibility chains are found far faster this way than
#: by redrawing everything, and the walk is still a pure function of the seeded generator.
RESTART_EVERY = 25


def draw(
    template: Template, seed: int, index: int = 0, *, budget: int = 400, stats: SamplerStats | None = None, wide: bool = False,
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
        if why is None:
            chosen = {sid: _exact(fvals[sid], ranges[sid]) for sid, _ in plan.free}
            try:
                values, results = program.run(chosen)
            except arith.ArithError:
                why = "arithmetic"
        if why is None:
            why = check_constraints(template, values, results)
            if why is None and results[template.answer_step] == Fraction(template.answer):
                why = "answer_unchanged"
        if why is not None:
            if stats is not None:
                stats.add(why)
            continue
        question = render_question(template, values)
        solution, answer = render_solution(template, values, results)
        return Draw(values, results, question, solution, answer, attempt)
    if space <= ENUMERATE_BELOW:
        feasible = _feasible(template, plan, program, wide)
        if feasible:
            values, results = feasible[rng.randrange(len(feasible))]
            question = render_question(template, values)
            solution, answer = render_solution(template, values, results)
            return Draw(values, results, question, solution, answer, budget + 1)
    return None


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
