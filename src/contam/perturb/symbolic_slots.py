"""Slots of the GSM8K templater (:mod:`contam.perturb.symbolic`): resolving, settling and constraining typed slots."""

from __future__ import annotations

import dataclasses
import itertools
import re
from fractions import Fraction

from contam.perturb import arith, guards
from contam.perturb.records import CalcStep, Mention, Slot, TemplateConstraint
from contam.perturb.symbolic_bounds import _PARTITIVE
from contam.perturb.symbolic_prose import _RESTATED


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


def _restates_given(solution: str, p: object, given: set[Fraction]) -> bool:
    """A bare annotation that only restates a number of the question ("Chair = <<3=3>>3 feet",
    "Amber ran <<8=8>>8 miles."): its value is a number the question states, and its line before it
    holds no digit and no arithmetic, so nothing was computed in the head. The step then reads that
    question number (it moves with it), which is what the line says."""
    line_start = solution.rfind("\n", 0, p.start) + 1  # type: ignore[attr-defined]
    before = solution[line_start : p.start]  # type: ignore[attr-defined]
    return p.value in given and p.value > 1 and not re.search(r"[\d+*/×÷−–]|\s[-x]\s", before)  # type: ignore[attr-defined]


def seen_before(parsed: list, i: int) -> set[Fraction]:
    """Results of the steps before step ``i`` (a bare annotation may restate one of them)."""
    return {q.value for q in parsed[:i]}


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


#: Units per period that :func:`guards.constant_values` multiplies a stated period by ("two weeks": 14).
_PERIOD_FACTORS = frozenset({7, 12, 52, 365, 60, 24})

_NUMERIC = ("int", "decimal", "money", "percent", "word", "cents")


def _percent_affine(
    v: Fraction, group_values: list[Fraction], groups: dict[Fraction, list[int]], mentions: list[Mention]
) -> list[tuple[Fraction, Fraction]]:
    out: list[tuple[Fraction, Fraction]] = []
    for g in group_values:
        if any(mentions[i].kind == "percent" for i in groups[g]):
            if v == 1 + g / 100:
                out.append((g, Fraction(1, 100)))
            elif v == 1 - g / 100:
                out.append((g, Fraction(-1, 100)))
    return out


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


#: A question that says one quantity became another ("slowed down to", "rose to", "cut to"): a
#: reader checks the direction, so same-kind numbers keep their order (see :func:`_constraints`).
_CHANGE_WORD = re.compile(
    r"\b(?:slow(?:s|ed)?\s+down|sp(?:ed|eeds?)\s+up|(?:dropp?(?:s|ed)?|fell|falls?|rose|rises?|went\s+(?:up|down)|"
    r"increased|decreased|reduced|cut|raised|lowered|climbed|grew|shrank)\s+to)\b",
    re.IGNORECASE,
)


def _constraints(
    slots: list[Slot],
    mentions: list[Mention],
    results: list[Fraction],
    step_ties: list[tuple[str, int, Fraction]],
    by_id: dict[str, Slot],
    question: str = "",
    money: set[int] | None = None,
) -> list[TemplateConstraint]:
    out: list[TemplateConstraint] = []
    for i, r in enumerate(results):
        if r.denominator == 1:
            # A whole amount of money is marked: a fallback may let it have cents (see
            # contam.perturb.variantset.cents_template).
            out.append(TemplateConstraint("int", str(i), "$" if money and i in money else ""))
        else:
            places = _places(r)
            out.append(TemplateConstraint("decimals", str(i), str(max(2, places if places is not None else 2))))
        if r > 0:
            out.append(TemplateConstraint("pos", str(i)))
        elif r == 0:
            out.append(TemplateConstraint("nonneg", str(i)))
        if 0 < r < 1:
            out.append(TemplateConstraint("lt1", str(i)))
    for sid, j, ratio in step_ties:
        s = by_id[sid]
        if s.role != "derived" or s.source != f"step:{j}":
            out.append(TemplateConstraint("tie", str(j), f"{sid}*{ratio}"))
    moving = [s for s in slots if s.role != "frozen"]
    for s in moving:
        if s.kind == "percent" and Fraction(s.value) <= 100:
            out.append(TemplateConstraint("le100", s.id))
    # Order among the numbers a reader compares: moving slots of the same family, and moving
    # slots against frozen numbers of that family ("the $5 one or the $7 one" stays decided).
    family = {"money": "money", "cents": "money", "percent": "percent"}
    for a in range(len(moving)):
        for b in range(len(moving)):
            sa, sb = moving[a], moving[b]
            if family.get(sa.kind, "n") == family.get(sb.kind, "n") and Fraction(sa.value) < Fraction(sb.value):
                out.append(TemplateConstraint("order", sa.id, sb.id))
    if question and _CHANGE_WORD.search(question):
        # A frozen number counts the same thing as a moving one ("300 taps per minute" frozen,
        # "250" and "200 taps per minute" moving, and "slowed down to 200"): they keep their order,
        # or "slowed down" becomes a speed-up (graded ill-posed, gsm8k/test/721).
        def nouns(sl: Slot) -> set[str]:
            return {guards.head_noun(question, mentions[i]) for i in sl.mentions} - {""}

        frozen = [s for s in slots if s.role == "frozen" and s.mentions]
        for sa in moving:
            na = nouns(sa)
            for sb in frozen:
                if family.get(sa.kind, "n") != family.get(sb.kind, "n") or not (na & nouns(sb)):
                    continue
                # Bounds, not "order": the sampler clamps a free slot's range to them; no moving
                # value may equal an original one, so the order stays strict.
                va, vb = Fraction(sa.value), Fraction(sb.value)
                if va < vb:
                    out.append(TemplateConstraint("le", sa.id, str(vb)))
                elif va > vb:
                    out.append(TemplateConstraint("ge", sa.id, str(vb)))
    return out


def _places(x: Fraction) -> int | None:
    d = x.denominator
    places = 0
    while d % 10 == 0 or d % 2 == 0 or d % 5 == 0:
        if places > 12:
            return None
        x *= 10
        d = x.denominator
        places += 1
    return places if x.denominator == 1 else None
