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

One lifting runs in phases, each in its module, passing the records of
:mod:`~contam.perturb.symbolic_state` on: read the item (:mod:`~contam.perturb.symbolic_read`),
trace the calculations (:mod:`~contam.perturb.symbolic_trace`), choose the slots
(:mod:`~contam.perturb.symbolic_slots`), derive the bounds (:mod:`~contam.perturb.symbolic_bounds`),
build the template (here).

>>> from contam.data import Item
>>> t = lift(Item(id="gsm8k/train/0", question="Natalia sold clips to 48 of her friends in April, and then she sold "
...   "half as many clips in May. How many clips did Natalia sell altogether in April and May?",
...   answer="72", solution="Natalia sold 48/2 = <<48/2=24>>24 clips in May.\\nNatalia sold 48+24 = <<48+24=72>>72 "
...   "clips altogether in April and May.\\n#### 72"))
>>> [(s.value, s.role) for s in t.slots], [[(leaf.kind, leaf.ref) for leaf in s.leaves] for s in t.steps]
([('48', 'free')], [[('slot', 's0'), ('const', '')], [('slot', 's0'), ('step', '0')]])
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

from contam.data.items import Item
from contam.perturb.chain import Rejected
from contam.perturb.records import Rejection, Template, TemplateConstraint
from contam.perturb.symbolic_bounds import _result_key as _result_key
from contam.perturb.symbolic_bounds import derive_bounds
from contam.perturb.symbolic_config import SymbolicConfig as SymbolicConfig
from contam.perturb.symbolic_config import _AmbiguousProse, _Untraced
from contam.perturb.symbolic_prose import _prose
from contam.perturb.symbolic_prose import restated_readings as restated_readings
from contam.perturb.symbolic_prose import restated_value as restated_value
from contam.perturb.symbolic_read import read_problem
from contam.perturb.symbolic_slots import choose_slots
from contam.perturb.symbolic_state import LiftProblem, LiftTrace, SlotChoice
from contam.perturb.symbolic_trace import seen_before as seen_before
from contam.perturb.symbolic_trace import trace


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
    """One lifting of ``item``: trace its calculations, choose the slots, derive the bounds, build the
    template; raises :class:`Rejected` (``pin_values`` and ``wanted``: see :func:`lift`)."""
    pb = read_problem(item, wanted)
    tr = trace(pb)
    choice = choose_slots(pb, tr, pin_values)
    constraints = derive_bounds(pb, tr, choice)
    return _template(item, cfg, pb, tr, choice, constraints)


def _template(
    item: Item, cfg: SymbolicConfig, pb: LiftProblem, tr: LiftTrace, choice: SlotChoice, constraints: list[TemplateConstraint]
) -> Template:
    """The template: the question with its slots, the program, the solution's prose numbers bound to
    what rewrites them, and the constraints; rejects one with nothing to perturb."""
    slots, gid = choice.slots, pb.gid
    if not any(s.role == "free" for s in slots):
        raise Rejected("nothing_to_perturb", "no question number the program reads can be changed")
    moving_results = {r for r, d in zip(tr.results, choice.deps, strict=True) if d}
    slot_nouns = {gid[v]: nouns for v, nouns in pb.group_nouns.items()}
    prose = _prose(
        pb.solution,
        tr.steps,
        slots,
        pb.group_values,
        pb.group_scales,
        gid,
        tr.results,
        pb.frozen_values | set(pb.constants),
        cfg,
        moving_results,
        slot_nouns,
    )
    notes = tuple(f"slot {gid[v]} merges {len(ix)} mentions" for v, ix in pb.groups.items() if len(ix) > 1 and gid[v] in tr.bound)
    if notes and not cfg.merge_repeated:
        raise Rejected("repeated_value", notes[0])
    return Template(
        id=template_id(item),
        item_id=item.id,
        question=pb.question,
        solution=pb.solution,
        answer=str(pb.answer),
        mentions=tuple(pb.mentions),
        slots=tuple(slots),
        steps=tuple(tr.steps),
        answer_step=tr.answer_step,
        prose=tuple(prose),
        constraints=tuple(constraints),
        notes=notes,
    )
