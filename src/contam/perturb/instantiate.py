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

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from contam.perturb import arith
from contam.perturb.mentions import word_for
from contam.perturb.records import Mention, Slot, Template

_LIT = re.compile(r"\d+(?:\.\d*)?|\.\d+")
#: New values stay within this factor of the original (when enough values remain).
MAGNITUDE = 3
MIN_CHOICES = 6


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


def candidates(slot: Slot) -> tuple[Fraction, ...]:
    """Values a free slot may take: same number of digits and same roundness as the original.

    >>> [str(v) for v in candidates(Slot("s0", "48", "int", (0,)))][:3]
    ['10', '11', '12']
    >>> len(candidates(Slot("s0", "80000", "money", (0,))))
    9
    >>> [str(v) for v in candidates(Slot("s0", "3/2", "money", (0,), decimals=2))][:2]
    ['1', '11/10']
    """
    return _candidates(slot.value, slot.kind, slot.decimals)


@lru_cache(maxsize=4096)
def _candidates(value: str, kind: str, decimals: int) -> tuple[Fraction, ...]:
    v = Fraction(value)
    unit = Fraction(1, 10**decimals)
    n = int(v / unit) if (v / unit).denominator == 1 else None
    if n is None or n <= 0:
        return ()
    digits = len(str(n))
    zeros = len(str(n)) - len(str(n).rstrip("0"))
    if decimals == 0 and digits == 1:
        low, high, step = 2, 12, 1  # single digits may grow to a dozen: still the same order of magnitude
    else:
        zeros = min(zeros, digits - 1)
        step = 10**zeros
        low, high = max(10 ** (digits - 1), 2), 10**digits - 1
    out = [Fraction(k) * unit for k in range((low + step - 1) // step * step, high + 1, step)]
    if kind == "percent" and v <= 100:
        out = [x for x in out if x < 100]
    out = [x for x in out if x != v and x not in (0, 1)]
    # Same order of magnitude, read strictly: within a factor of MAGNITUDE of the original when
    # that still leaves a real choice (1.2 times stays near 1.2, not 9.5).
    near = [x for x in out if v / MAGNITUDE <= x <= v * MAGNITUDE]
    return tuple(near if len(near) >= MIN_CHOICES else out)


class Program:
    """A template's program compiled once: ``run(values)`` gives every step's exact result."""

    def __init__(self, template: Template) -> None:
        self.template = template
        self.slot_index = {s.id: k for k, s in enumerate(template.slots)}
        n_slots = len(template.slots)
        self._steps: list[Callable[[list[Fraction]], Fraction]] = []
        for step in template.steps:
            tree = arith.parse(arith.normalize_expression(step.expr))
            by_index = dict(enumerate(step.leaves))

            def leaf(num: arith.Num, by_index: dict = by_index) -> Callable[[list[Fraction]], Fraction]:
                lf = by_index[num.index]
                scale = Fraction(lf.scale)
                if lf.kind == "slot":
                    k = self.slot_index[lf.ref]
                    return lambda v: v[k] * scale
                if lf.kind == "step":
                    k = n_slots + int(lf.ref)
                    return lambda v: v[k]
                c = Fraction(lf.value)
                return lambda v: c

            self._steps.append(arith.compile_node(tree, leaf))
        # Derived slots: from another slot (before the run) or from a step (right after it).
        self.from_slot = [(self.slot_index[s.id], self.slot_index[s.source[5:]], Fraction(s.ratio))
                          for s in template.slots if s.role == "derived" and s.source.startswith("slot:")]
        self.from_step: dict[int, list[tuple[int, Fraction]]] = {}
        for s in template.slots:
            if s.role == "derived" and s.source.startswith("step:"):
                self.from_step.setdefault(int(s.source[5:]), []).append((self.slot_index[s.id], Fraction(s.ratio)))

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


def _places(x: Fraction, limit: int = 8) -> int | None:
    for p in range(limit + 1):
        if (x * 10**p).denominator == 1:
            return p
    return None


def check_constraints(template: Template, values: dict[str, Fraction], results: list[Fraction]) -> str | None:
    """The first violated constraint kind, or None when the assignment keeps every one."""
    by_id = {s.id: s for s in template.slots}
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
        elif k == "le100":
            if values[c.target] > 100:
                return k
        elif k == "order":
            if not values[c.target] < values[c.arg]:
                return k
    moving = {s.id for s in template.slots if s.role != "frozen"}
    originals = {Fraction(by_id[s].value) for s in moving}
    for sid in moving:
        if values[sid] in originals:  # an original value may not survive anywhere (coverage)
            return "coverage"
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

    def leaf_value(kind: str, ref: str, scale: str, value: str) -> Fraction:
        if kind == "slot":
            return values[ref] * Fraction(scale)
        if kind == "step":
            return results[int(ref)]
        return Fraction(value)

    for j, step in enumerate(template.steps):
        expr = arith.normalize_expression(step.expr)
        pieces: list[str] = []
        pos = 0
        for lit, leaf in zip(_LIT.finditer(expr), step.leaves, strict=True):
            pieces.append(expr[pos:lit.start()])
            pieces.append(format_value(leaf_value(leaf.kind, leaf.ref, leaf.scale, leaf.value), lit.group(0)))
            pos = lit.end()
        pieces.append(expr[pos:])
        edits.append((step.start, step.end, f"<<{''.join(pieces)}={format_value(results[j], '0')}>>"))
        if step.echo_start >= 0:
            edits.append((step.echo_start, step.echo_end, format_value(results[j], sol[step.echo_start:step.echo_end])))
    for p in template.prose:
        if p.kind != "const":
            edits.append((p.start, p.end, format_value(leaf_value(p.kind, p.ref, p.scale, "0"), p.text)))
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


def _free_candidates(template: Template) -> tuple[list[tuple[str, tuple[Fraction, ...]]], list[list[str]]]:
    """Candidates per free slot with every moving original value removed (coverage by construction),
    and the free slots of each number family (money, percent, plain) sorted by original value."""
    originals = {Fraction(s.value) for s in template.slots if s.role != "frozen"}
    free: list[tuple[str, tuple[Fraction, ...]]] = []
    families: dict[str, list[Slot]] = {}
    for s in template.slots:
        if s.role != "free":
            continue
        free.append((s.id, tuple(x for x in candidates(s) if x not in originals)))
        family = {"cents": "money"}.get(s.kind, s.kind if s.kind in ("money", "percent") else "n")
        families.setdefault(family, []).append(s)
    ranked = [[s.id for s in sorted(group, key=lambda s: Fraction(s.value))] for group in families.values() if len(group) > 1]
    return free, ranked


def _rank(chosen: dict[str, Fraction], ranked: list[list[str]], allowed: dict[str, set[Fraction]]) -> None:
    """Reassign drawn values so each family keeps the original order, where every value still fits its slot."""
    for ids in ranked:
        vals = sorted(chosen[i] for i in ids)
        if all(v in allowed[i] for i, v in zip(ids, vals, strict=True)):
            chosen.update(zip(ids, vals, strict=True))


def draw(template: Template, seed: int, index: int = 0, *, budget: int = 400, stats: SamplerStats | None = None) -> Draw | None:
    """Sample one instance; None when ``budget`` draws all broke a constraint."""
    rng = rng_for(template, seed, index)
    program = compiled(template)
    free, ranked = _free_candidates(template)
    if any(not c for _, c in free):
        return None
    allowed = {sid: set(c) for sid, c in free}
    for attempt in range(1, budget + 1):
        chosen = {sid: rng.choice(c) for sid, c in free}
        _rank(chosen, ranked, allowed)  # order constraints hold by construction where ranges allow
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
        return Draw(values, results, question, solution, answer, attempt)
    return None
