"""Auditing every generated instance (paper 003's checks, adapted to word problems).

An instance is emitted only when all checks pass:

``faithfulness``
    the template's program at the *original* values reproduces every original intermediate
    result and the original answer (checked once per template);
``coverage``
    no replaced original value survives in the new question, compared as whole numbers
    (``48`` inside ``148`` is not a survivor) and as number words;
``reparse``
    the new question, read back by the mention finder with no help from the sampler, yields
    the sampled values, and the program re-run on those values gives the emitted answer
    (the program and the audit agree);
``solution``
    every ``<<expr=result>>`` of the new solution evaluates exactly to its result and the
    ``#### answer`` line is the answer;
``constraints``
    every constraint the original satisfied holds;
``answer_changed``
    the answer differs from the original's;
``determinism``
    drawing again with the same template, seed and index gives the same instance hash.

>>> from contam.data import load_benchmark
>>> from contam.perturb.symbolic import lift
>>> from contam.perturb.instantiate import draw
>>> t = lift(load_benchmark("gsm8k-train")[0])
>>> audit_instance(t, draw(t, seed=0), seed=0, index=0)
[]
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction

from contam.perturb import arith
from contam.perturb.chain import Rejected, collect_steps
from contam.perturb.instantiate import Draw, check_constraints, compiled, draw
from contam.perturb.mentions import find_mentions
from contam.perturb.records import Template

CHECKS = ("faithfulness", "coverage", "reparse", "solution", "constraints", "answer_changed", "determinism")
_REWRITABLE = ("int", "decimal", "money", "percent", "word", "cents")


def instance_hash(template: Template, seed: int, index: int, d: Draw, wide: bool = False) -> str:
    """sha256 over what identifies an instance: template, seed, index, tier, question, solution, answer."""
    payload = json.dumps([template.id, seed, index, wide, d.question, d.solution, d.answer], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


_FAITHFUL: dict[str, bool] = {}


def faithful(template: Template) -> bool:
    """The program at the original values reproduces every annotated result and the answer."""
    hit = _FAITHFUL.get(template.id)
    if hit is not None:
        return hit
    try:
        _, results = compiled(template).run({})
        ok = [str(r) for r in results] == [s.result for s in template.steps] and results[template.answer_step] == Fraction(template.answer)
    except arith.ArithError:
        ok = False
    _FAITHFUL[template.id] = ok
    return ok


def audit_instance(template: Template, d: Draw, *, seed: int, index: int, check_determinism: bool = True, wide: bool = False) -> list[str]:
    """Names of the checks ``d`` fails (empty: the instance may be emitted)."""
    failures: list[str] = []
    if not faithful(template):
        failures.append("faithfulness")
    moving = [s for s in template.slots if s.role != "frozen"]
    originals = {Fraction(s.value) for s in moving}
    found = find_mentions(d.question)
    if any(m.kind in _REWRITABLE and Fraction(m.value) in originals for m in found):
        failures.append("coverage")
    if not _reparse_agrees(template, d, found):
        failures.append("reparse")
    if not _solution_consistent(d):
        failures.append("solution")
    if check_constraints(template, d.values, d.results) is not None:
        failures.append("constraints")
    if Fraction(d.answer) == Fraction(template.answer):
        failures.append("answer_changed")
    if check_determinism:
        again = draw(template, seed, index, wide=wide)
        if again is None or instance_hash(template, seed, index, again, wide) != instance_hash(template, seed, index, d, wide):
            failures.append("determinism")
    return failures


def _reparse_agrees(template: Template, d: Draw, found: list) -> bool:
    """Read the slot values back from the new question and re-run the program on them."""
    if len(found) != len(template.mentions):
        return False
    read: dict[str, Fraction] = {}
    for s in template.slots:
        if s.role == "frozen":
            continue
        for i in s.mentions:
            v = Fraction(found[i].value)
            if read.setdefault(s.id, v) != v:
                return False
    for i, m in enumerate(template.mentions):
        if not any(i in s.mentions and s.role != "frozen" for s in template.slots) and found[i].text != m.text:
            return False  # an unchanged mention was altered
    try:
        values, results = compiled(template).run({sid: v for sid, v in read.items()
                                                 if next(s for s in template.slots if s.id == sid).role == "free"})
    except arith.ArithError:
        return False
    return values == d.values and results == d.results and Fraction(d.answer) == results[template.answer_step]


def _solution_consistent(d: Draw) -> bool:
    """Every annotation and every prose equation of the new solution is exact, and the final line
    is the answer, which one of those computations produces."""
    _, sep, final = d.solution.rpartition("####")
    if not sep or final.strip().replace(",", "") != d.answer:
        return False
    try:
        steps = collect_steps(d.solution)
    except Rejected:
        return False
    return bool(steps) and Fraction(d.answer) in {p.value for p in steps}
