"""Slots of the GSM8K templater (:mod:`contam.perturb.symbolic`): choosing which question numbers move, resolving and settling typed slots."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

from contam.perturb import guards
from contam.perturb.chain import Rejected
from contam.perturb.records import CalcStep, Mention, Slot
from contam.perturb.symbolic_bounds import _PARTITIVE, _same_unit
from contam.perturb.symbolic_guards import _guards
from contam.perturb.symbolic_state import LiftProblem, LiftTrace, SlotChoice


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


_NUMERIC = ("int", "decimal", "money", "percent", "word", "cents")


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


def _settle(slots: list[Slot], steps: list[CalcStep]) -> tuple[list[Slot], list[set[str]]]:
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


def choose_slots(pb: LiftProblem, tr: LiftTrace, pin_values: frozenset[Fraction] = frozenset()) -> SlotChoice:
    """Which question numbers move: the traced ties resolved into free, derived and frozen slots,
    after the guards, the unit checks and every pin have frozen what must stay (``pin_values``:
    numbers of the prose that may be labels, see :func:`contam.perturb.symbolic.lift`); rejects an
    answer that no moving number reaches. Goes on freezing into ``tr.freeze`` and pinning into ``tr.pinned``."""
    guard_freeze, guard_constraints = _guards(
        pb.question,
        pb.solution,
        pb.mentions,
        pb.groups,
        pb.gid,
        pb.reads,
        tr.steps,
        tr.freeze,
        pb.frozen_values,
        tr.split,
        consts=pb.world,
        worded=pb.worded,
    )
    tr.freeze |= set(guard_freeze)
    slots = _resolve_slots(pb.mentions, pb.groups, pb.gid, tr.bound, tr.slot_links, tr.step_ties, tr.freeze)
    # A question number derived from a step result must count what that result counts ("four packs"
    # is not the $4 a subtraction left); otherwise it is frozen, and the tie becomes a constraint.
    unit_clash = {
        s.id: "result_unit"
        for s in slots
        if s.role == "derived"
        and s.source.startswith("step:")
        and not _same_unit(pb.question, pb.mentions, s, tr.step_units[int(s.source[5:])])
    }
    if unit_clash:
        guard_freeze.update(unit_clash)
        tr.freeze |= set(unit_clash)
    # A result the solution computes and never uses ("30 - 12 - 8 = 10 neutral days", before the
    # story names "eight neutral days") checks the story; a draw that changes it may contradict
    # what the story says next (15 good days left 7 neutral days for eight: gsm8k/test/672). It
    # stays, as a pinned result does.
    read_steps = {int(leaf.ref) for st in tr.steps for leaf in st.leaves if leaf.kind == "step"}
    tr.pinned.update(j for j in range(len(tr.steps)) if j not in read_steps and j != tr.answer_step)
    for v in pin_values:  # numbers of the prose that may be labels (see lift)
        if v in pb.gid:
            tr.pin_slots.add(pb.gid[v])
        tr.pinned.update(j for j, r in enumerate(tr.results) if r == v)
    _freeze_more(tr, guard_freeze, tr.pin_slots - tr.freeze, "pinned")
    slots, deps = _rebuild(pb, tr, guard_freeze)
    while tr.pinned and (more := set().union(*(deps[j] for j in tr.pinned)) - tr.freeze):
        _freeze_more(tr, guard_freeze, more, "pinned")  # the free numbers a pinned result depends on
        slots, deps = _rebuild(pb, tr, guard_freeze)
    slots, deps = _freeze_unused_total_parts(pb, tr, guard_freeze)
    if not deps[tr.answer_step]:
        raise Rejected("answer_independent", "the answer does not depend on any number that can change")
    return SlotChoice(slots, deps, guard_constraints)


def _rebuild(pb: LiftProblem, tr: LiftTrace, guard_freeze: dict[str, str]) -> tuple[list[Slot], list[set[str]]]:
    """The slots under the freezes so far (a slot a guard froze says which guard) and what each step depends on."""
    out = _resolve_slots(pb.mentions, pb.groups, pb.gid, tr.bound, tr.slot_links, tr.step_ties, tr.freeze)
    out = [
        dataclasses.replace(s, source=f"guard:{guard_freeze[s.id]}")
        if s.id in guard_freeze and s.role == "frozen" and s.source == "constant"
        else s
        for s in out
    ]
    return _settle(out, tr.steps)


def _freeze_more(tr: LiftTrace, guard_freeze: dict[str, str], ids: set[str], why: str) -> None:
    """Freeze ``ids``, recording ``why`` for those no guard froze before."""
    for sid in ids:
        guard_freeze.setdefault(sid, why)
    tr.freeze.update(ids)


def _freeze_unused_total_parts(pb: LiftProblem, tr: LiftTrace, guard_freeze: dict[str, str]) -> tuple[list[Slot], list[set[str]]]:
    """A number the program never reads that is a sum or product of numbers that move ("8
    customers: the first 3 ..., the next 2 ..., the last 3 ..."): the parts are frozen (a part
    derived from a result freezes what that result depends on), so the stated total stays right."""
    slots, deps = _rebuild(pb, tr, guard_freeze)
    while parts := _unused_total_parts(pb.question, pb.mentions, slots):
        by_id = {s.id: s for s in slots}
        more = set()
        for s in slots:
            if s.role in ("free", "derived") and any(i in parts for i in s.mentions):
                more |= {s.id} | _slot_deps(s.id, by_id, deps)
        if not more - tr.freeze:  # nothing left to freeze, yet a part still moves: reject as before
            raise Rejected("unused_number_is_a_total", "a number never read is a sum or product of numbers that change")
        _freeze_more(tr, guard_freeze, more - tr.freeze, "unused_total_part")
        slots, deps = _rebuild(pb, tr, guard_freeze)
    return slots, deps
