"""Checks on a lifted template that need the whole template (issue 16, second grading).

An independent reader graded 260 variants built after the first round of guards; the non-correct
ones fell into three classes that the lifter's own guards cannot see, because each needs the
finished template (which slots move, which are frozen as unused, what the steps compute):

* **A prose result equal to a question number.** "1/2 off of 1 pound is $3/2 = $1.50+$3.00=$4.50"
  derives $1.50 in unannotated prose, and the question also states "seashells for $1.50". The
  program read the later "1.50" as the seashell price, so the variant priced half a pound of taffy
  at the seashells' price. One number, two things, hidden in prose: the item is rejected
  (``prose_result_is_question_number``), since no program reading is right for both.
* **An unused number that bounds moving ones.** "Both start with 100 pieces ... Ginger eats 4
  pieces a day ... after two weeks": the program never reads the 100 (frozen as unused), yet 4 x 14
  pieces must not exceed it. Every product of a moving quantity that counts the same thing as the
  unused number (same head noun) with 1, a step result or another moving count that was at
  most the unused number stays at most it, and so does every step that reads such a quantity
  (constraints ``prodle`` and ``stmax``, checked on every sampled instance and by the audit; a
  draw that breaks one is resampled, and an item with no draw left is rejected as
  ``sampling_exhausted``).
* **A defective original.** Some GSM8K test items are wrong already (a wrong gold answer, a
  question that contradicts itself); a faithful variant copies the defect. The known ones are
  listed, each with its reason, in ``contam/data/benchmarks/gsm8k/known_defects.json``; they get
  no variant instances (rejection reason ``original_defect``).

>>> from fractions import Fraction
>>> prose_results("So 1/2 off of 1 pound is $3/2 = $1.50+$3.00=$4.50\\n4 magnets is 4*.25=$<<4*0.25=1.00>>1.00")
[Fraction(3, 2), Fraction(9, 2)]
"""

from __future__ import annotations

import dataclasses
import json
import re
from fractions import Fraction
from functools import lru_cache
from importlib import resources

from contam.data.items import Item
from contam.perturb import guards
from contam.perturb.records import Rejection, Template, TemplateConstraint

#: A number as GSM8K solutions write it in prose: "$1.50", "3,000", ".25".
_N = r"\$?\s*((?:\d[\d,]*(?:\.\d+)?|\.\d+))"
#: "a op b = c" anywhere in the prose, overlapping (a chain "a/b = c+d = e" holds two), never
#: starting inside a longer number.
_PROSE_EQ = re.compile(r"(?<![\d.,])(?=" + _N + r"\s*([-+*/x×÷])\s*" + _N + r"\s*=\s*" + _N + r")")
#: An annotation with the result echoed after it: "=<<4*0.25=1.00>>1.00" is annotated, not prose.
_ANNOTATION = re.compile(r"<<[^<>]*>>\s*\$?\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+)?")


def _num(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def prose_results(solution: str) -> list[Fraction]:
    """Values the solution computes in its prose, outside any ``<<expr=result>>`` annotation.

    Only equations that hold exactly count ("$3/2 = $1.50"); a line that merely restates numbers
    ("3 x 2 = 6" written next to its annotation) is removed with the annotation first.
    """
    body = _ANNOTATION.sub(" ", solution.rsplit("####", 1)[0])
    out: list[Fraction] = []
    for m in _PROSE_EQ.finditer(body):
        a, op, b, c = _num(m.group(1)), m.group(2), _num(m.group(3)), _num(m.group(4))
        if op in "*x×":
            ok = a * b == c
        elif op in "/÷":
            ok = b != 0 and a / b == c
        elif op == "+":
            ok = a + b == c
        else:
            ok = a - b == c
        if ok and c not in out:
            out.append(c)
    return out


def prose_result_clash(template: Template) -> str | None:
    """Why ``template`` reads a prose result as a moving question number, or None.

    A value the solution derives in unannotated prose that also equals a question number the
    program moves: the program cannot tell which one a later literal means, and the prose
    equation itself turns stale in every variant. 0 and 1 are read as constants everywhere and
    are left out.
    """
    moving = {Fraction(s.value): s.id for s in template.slots if s.role in ("free", "derived")}
    for v in prose_results(template.solution):
        if v not in (0, 1) and v in moving:
            shown = str(v) if v.denominator == 1 else f"{float(v):g}"
            return f"the solution derives {shown} in its prose and the question states {shown} too (slot {moving[v]})"
    return None


def _noun(template: Template, slot_mentions: tuple[int, ...]) -> str:
    nouns = {guards.head_noun(template.question, template.mentions[i]) for i in slot_mentions}
    return nouns.pop() if len(nouns) == 1 else ""


def _step_slots(template: Template) -> list[set[str]]:
    """The slots each step reads, directly or through earlier steps (derived slots through their roots)."""
    roots = {s.id: s.source[5:] for s in template.slots if s.role == "derived" and s.source.startswith("slot:")}
    out: list[set[str]] = []
    for st in template.steps:
        got: set[str] = set()
        for lf in st.leaves:
            if lf.kind == "slot":
                got |= {lf.ref, roots.get(lf.ref, lf.ref)}
            elif lf.kind == "step":
                got |= out[int(lf.ref)]
        out.append(got)
    return out


def unused_bounds(template: Template) -> list[TemplateConstraint]:
    """Constraints that keep moving quantities on the original side of every unused number of their kind.

    For each number the program never reads (frozen as ``unused``) whose head noun is ``N``, and
    each moving slot ``q`` whose mentions count ``N`` too, the products ``q``, ``q * r`` (``r`` a
    step result that does not read ``q``) and ``q * p`` (``p`` another moving count, of a different
    noun) that were at most the unused number in the original stay at most it (``prodle``), and so
    do the step results that read ``q`` (``stmax``). "Start with 100 pieces, eat 4 pieces a day for
    14 days" keeps 4 x 14 <= 100. Only this direction is kept: a stock, a capacity or a budget
    bounds what is used from above; on GSM8K test every product that exceeded an unused number of
    its kind was a meaningless pairing (a book's price times the pencils bought), and a lower
    bound there only cost variants. Percentages are left out (their whole is 100, not a stock).
    """
    results = [Fraction(s.result) for s in template.steps]
    deps = _step_slots(template)
    unused = [s for s in template.slots if s.role == "frozen" and s.source == "unused"]
    moving = [s for s in template.slots if s.role in ("free", "derived")]
    out: list[TemplateConstraint] = []
    for u in unused:
        noun = _noun(template, u.mentions)
        if not noun or noun == "%":
            continue
        bound = Fraction(u.value)
        for q in moving:
            if _noun(template, q.mentions) != noun:
                continue
            qv = Fraction(q.value)
            factors: list[tuple[str, Fraction]] = [("", Fraction(1))]
            # A step that reads q itself is no count of q's ("(4-3) * 14" is no multiple of the 4).
            factors += [(f"#{j}", r) for j, r in enumerate(results) if r > 1 and q.id not in deps[j]]
            factors += [
                (p.id, Fraction(p.value))
                for p in moving
                if p.id != q.id and Fraction(p.value) > 1 and Fraction(p.value).denominator == 1 and _noun(template, p.mentions) != noun
            ]
            for ref, f in factors:
                if qv * f <= bound:
                    c = TemplateConstraint("prodle", q.id + (f"*{ref}" if ref else ""), str(bound))
                    if c not in out:
                        out.append(c)
            # Sums: a step that reads q and stayed within the stock ("3 books at $16 and 3 pencils at
            # $6" out of "starts with $200") stays within it.
            for j, r in enumerate(results):
                c = TemplateConstraint("stmax", str(j), str(bound))
                if 0 < r <= bound and q.id in deps[j] and c not in out:
                    out.append(c)
    return out


def product_of(target: str, values: dict[str, Fraction], results: list[Fraction]) -> Fraction:
    """The value of a ``prodle`` target: slot ids and ``#j`` step results joined by ``*``."""
    out = Fraction(1)
    for ref in target.split("*"):
        out *= results[int(ref[1:])] if ref.startswith("#") else values[ref]
    return out


@lru_cache(maxsize=1)
def known_defects() -> dict[str, tuple[str, str]]:
    """GSM8K originals known to be defective: item id -> (start of its question, reason)."""
    path = resources.files("contam.data").joinpath("benchmarks/gsm8k/known_defects.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return {e["id"]: (e["question_start"], f"{e['kind']}: {e['reason']} ({e.get('found_by', data['found_by'])})") for e in data["items"]}


def original_defect(item: Item) -> Rejection | None:
    """A rejection for an item whose original is known to be defective, else None.

    The entry applies only when the question starts as recorded, so a renumbered or edited copy of
    the data is never rejected by id alone.
    """
    hit = known_defects().get(item.id)
    if hit is None or not item.question.startswith(hit[0]):
        return None
    return Rejection(item.id, "original_defect", hit[1])


def vet(template: Template) -> Template | Rejection:
    """``template`` with the constraints its unused numbers impose, or a rejection (see the module doc)."""
    why = prose_result_clash(template)
    if why:
        return Rejection(template.item_id, "prose_result_is_question_number", why)
    extra = [c for c in unused_bounds(template) if c not in template.constraints]
    if not extra:
        return template
    return dataclasses.replace(template, constraints=template.constraints + tuple(extra))
