"""Read a drawn variant's slot values back from its question and re-run the template's program.

The check both the instance audit (:mod:`contam.perturb.audit`) and the draw
(:mod:`contam.perturb.instantiate`, before it returns a variant) make: the numbers a reader finds in
the new question, put through the template's program, give exactly the values, step results and
answer that were drawn. It sits below both, so neither imports the other for it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from contam.perturb import arith
from contam.perturb.program import compiled
from contam.perturb.records import Template

if TYPE_CHECKING:
    from contam.perturb.instantiate import Draw


def reparse_agrees(template: Template, d: Draw, found: list) -> bool:
    """Read the slot values back from the new question (``found``: its mentions) and re-run the program on them."""
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
        values, results = compiled(template).run(
            {sid: v for sid, v in read.items() if next(s for s in template.slots if s.id == sid).role == "free"}
        )
    except arith.ArithError:
        return False
    return values == d.values and results == d.results and Fraction(d.answer) == results[template.answer_step]
