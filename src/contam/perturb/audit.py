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
    drawing again with the same template, seed and index gives the same instance hash;
``readback``
    the variant question, read as plain text without the template (:mod:`contam.perturb.readback`),
    states periods, conversions, enumerations, ordinals and definite counts that agree with each
    other the way the original's did (failures are also counted as ``readback:<what>``);
``stale_numbers``
    every number of the new question and solution is accounted for by the program (a slot value,
    a step result, a constant it reads) or is frozen text of the original; a restated expression
    before an annotation ("72/6 = <<72/6=12>>") states the annotation's own literals.

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
import re
from fractions import Fraction

from contam.perturb import arith, readback
from contam.perturb.chain import Rejected, collect_steps, final_unit_equation
from contam.perturb.chain import number as _number
from contam.perturb.instantiate import Draw, check_constraints, compiled, draw
from contam.perturb.mentions import find_mentions
from contam.perturb.records import Template
from contam.perturb.reparse import reparse_agrees
from contam.perturb.symbolic import restated_readings

CHECKS = ("faithfulness", "coverage", "reparse", "solution", "constraints", "answer_changed", "determinism", "readback", "stale_numbers")
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
    if not reparse_agrees(template, d, found):
        failures.append("reparse")
    if not _solution_consistent(d):
        failures.append("solution")
    if check_constraints(template, d.values, d.results) is not None:
        failures.append("constraints")
    if Fraction(d.answer) == Fraction(template.answer):
        failures.append("answer_changed")
    rb = readback.check(template.question, d.question)
    if rb:
        failures.append("readback")
        failures.extend(f"readback:{x}" for x in rb)
    if unaccounted_numbers(template, d):
        failures.append("stale_numbers")
    if check_determinism:
        again = draw(template, seed, index, wide=wide)
        if again is None or instance_hash(template, seed, index, again, wide) != instance_hash(template, seed, index, d, wide):
            failures.append("determinism")
    return failures


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
    if not steps:
        return False
    if Fraction(d.answer) in {p.value for p in steps}:
        return True
    # The answer computed in the last prose line with unit words ("7 puppies / 20 puppies * 100% =
    # 35%"): exact, and its value is the answer (the same rule the lifter admits it by).
    try:
        return final_unit_equation(d.solution, Fraction(d.answer)) is not None
    except Rejected:
        return False


_SOL_NUM = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])")
_ANNOT = re.compile(r"<<([^<>]*)=([^<>=]*)>>")
_RESTATE = re.compile(
    r"((?:\$?\s?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s*(?!x\s*[\d$(.])[A-Za-z%']+){0,3}\s*[-+*/x×÷−–]\s*\(?\s*)+"
    r"\$?\s?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s*(?!x\s*[\d$(.])[A-Za-z%']+){0,3}\s*\)?)\s*=\s*\$?\s*$"
)


def unaccounted_numbers(template: Template, d: Draw) -> list[str]:
    """Numbers of the variant's question or solution that neither the program nor the frozen text explains.

    The question: every mention either carries its slot's new value or is spelled exactly as in
    the original (frozen). The solution: every number is a slot value (at any scale the template
    reads it), a step result, a constant of the program, or a number of the original solution
    that did not move; and an expression restated right before an annotation uses the
    annotation's literals, in order. Returns the offending numbers (empty: all accounted for).
    """
    bad: list[str] = []
    found = find_mentions(d.question)
    moving = {i: s.id for s in template.slots if s.role != "frozen" for i in s.mentions}
    if len(found) != len(template.mentions):
        return ["question:mentions"]
    for i, (m, o) in enumerate(zip(found, template.mentions, strict=True)):
        if i in moving:
            if Fraction(m.value) != d.values[moving[i]]:
                bad.append(m.text)
        elif m.text != o.text:
            bad.append(m.text)
    scales = {Fraction(s) for m in template.mentions for s in m.scales} | {Fraction(1), Fraction(1, 100), Fraction(100)}
    scales |= {Fraction(lf.scale) for st in template.steps for lf in st.leaves}
    new: set[Fraction] = {v * k for v in d.values.values() for k in scales}
    new |= {abs(r) for r in d.results}
    new |= {Fraction(lf.value) for st in template.steps for lf in st.leaves if lf.kind == "const"}
    new |= {
        v * Fraction(lf.scale) + Fraction(lf.offset)
        for st in template.steps
        for lf in st.leaves
        if lf.kind == "slot"
        for v in (d.values[lf.ref],)
    }
    moved_orig = {Fraction(s.value) for s in template.slots if s.role != "frozen"}
    moved_orig |= {Fraction(st.result) for st, r in zip(template.steps, d.results, strict=True) if Fraction(st.result) != r}
    frozen_orig = {_number(m.group(1)) for m in _SOL_NUM.finditer(template.solution)} - moved_orig
    body = d.solution.rsplit("####", 1)[0]
    for m in _SOL_NUM.finditer(body):
        v = _number(m.group(1))
        if v in (0, 1) or v in new or v in frozen_orig:
            continue
        bad.append(m.group(1))
    for wm in find_mentions(body):
        if wm.kind == "word" and Fraction(wm.value) in moved_orig and Fraction(wm.value) not in new:
            bad.append(wm.text)
    for am in _ANNOT.finditer(body):
        line_start = body.rfind("\n", 0, am.start()) + 1
        prev = body.rfind(">>", line_start, am.start())
        seg = body[(prev + 2 if prev >= 0 else line_start) : am.start()]
        rm = _RESTATE.search(seg)
        if not rm:
            continue
        said = [_number(t) for t in re.findall(r"\d[\d,]*(?:\.\d+)?|\.\d+", rm.group(1))]
        lits = [_number(t) for t in re.findall(r"\d[\d,]*(?:\.\d+)?|\.\d+", am.group(1))]
        if len(said) < len(lits) and said == lits[len(lits) - len(said) :] and "%" not in rm.group(1):
            continue  # words cut the restatement; what is left is the annotation's last literals
        if len(said) == len(lits) and sorted(said) != sorted(lits):  # restated in another order is fine
            bad.append(f"{rm.group(1).strip()} = <<{am.group(1)}>>")
            continue
        values = restated_readings(rm.group(1))
        if values and _number(am.group(2)) not in values:  # "13.75 / .5 = <<20=20>>"
            bad.append(f"{rm.group(1).strip()} = <<{am.group(1)}={am.group(2)}>>")
    return bad
