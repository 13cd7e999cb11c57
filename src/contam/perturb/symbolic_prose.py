"""Solution prose of the GSM8K templater (:mod:`contam.perturb.symbolic`): binding prose numbers and restatements."""

from __future__ import annotations

import re
from fractions import Fraction

from contam.perturb import arith
from contam.perturb.chain import _PROSE_NUM, Rejected
from contam.perturb.chain import number as _number
from contam.perturb.mentions import find_mentions
from contam.perturb.records import CalcStep, ProseNumber, Slot
from contam.perturb.symbolic_config import SymbolicConfig, _AmbiguousProse

_NUM_TXT = r"\$?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_UNIT_WORDS = r"(?:\s*(?!x\s*[\d$(.])[A-Za-z%']+){0,3}"
_RESTATED = re.compile(rf"((?:{_NUM_TXT}{_UNIT_WORDS}\s*[-+*/x×÷−–]\s*\(?\s*)+{_NUM_TXT}{_UNIT_WORDS}\s*\)?)\s*=\s*\$?\s*$")
_RESTATED_NUM = re.compile(r"(?:(?<![\w.,])|(?<=[0-9][xX]))\$?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")
_WORD_AS_LABEL = re.compile(
    r"\b(?:day|week|month|year|step|part|round|level|grade|page|number|no\.|game|lap|floor|stage|inning)\s+$", re.IGNORECASE
)


def restated_value(expr: str) -> Fraction | None:
    """Value of an expression restated in prose ("10 miles * 5 days", "15x6"), words dropped; None
    when it does not parse as plain arithmetic."""
    core = re.sub(r"(?<=[\d\s)])[xX](?=[\s\d$(.])", "*", expr)
    core = re.sub(r"[A-Za-z%'$]+", " ", core).replace("×", "*").replace("÷", "/").replace(",", "")
    core = core.replace("−", "-").replace("–", "-")
    try:
        return arith.evaluate(core)
    except (arith.ArithError, ValueError, ZeroDivisionError):
        return None


def restated_readings(expr: str) -> set[Fraction]:
    """Every value a prose restatement can mean: :func:`restated_value`, and, when it writes a
    percent, the same with each "N%" read as N/100 ("200 GB * 40%" is 80, the annotation
    ``<<200*40*.01=80>>``; "7 / 20 * 100%" is 35 with the % dropped). Empty when it does not parse.

    >>> sorted(restated_readings("200 GB * 40%"))
    [Fraction(80, 1), Fraction(8000, 1)]
    """
    out = {v for v in (restated_value(expr),) if v is not None}
    if "%" in expr:
        v = restated_value(re.sub(r"(\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+)\s*%", r"(\1/100)", expr))
        if v is not None:
            out.add(v)
    return out


def _prose(
    solution: str,
    steps: list[CalcStep],
    slots: list[Slot],
    group_values: list[Fraction],
    group_scales: dict[Fraction, list[Fraction]],
    gid: dict[Fraction, str],
    results: list[Fraction],
    consts: set[Fraction],
    cfg: SymbolicConfig,
    moving_results: set[Fraction],
    slot_nouns: dict[str, set[str]] | None = None,
) -> list[ProseNumber]:
    """Bind every number of the solution's prose (outside annotations and echoes) to what rewrites it."""
    body_end = solution.rfind("####")
    skip = [(s.start, s.end) for s in steps] + [(s.echo_start, s.echo_end) for s in steps if s.echo_start >= 0]
    roles = {s.id: s.role for s in slots}
    unused = {s.id: s.source == "unused" for s in slots}
    moving = any(r != "frozen" for r in roles.values())
    out: list[ProseNumber] = []
    # "72/6 = <<72/6=12>>": an expression restated right before its annotation is bound literal by
    # literal, by position (binding by value cannot tell two equal literals apart, and a number after
    # "/" is not a prose number at all), so the restatement is rendered from the program too.
    restated: set[int] = set()  # steps whose restatement is bound literal by literal
    for st in steps:
        if st.prose:
            continue
        line_start = solution.rfind("\n", 0, st.start) + 1
        prev_end = max([s.end for s in steps if s.end <= st.start] + [line_start])
        seg = solution[prev_end : st.start]
        em = _RESTATED.search(seg)
        if not em:
            continue
        toks = list(_RESTATED_NUM.finditer(seg, em.start(1), em.end(1)))
        said = restated_readings(em.group(1))
        tail = [Fraction(lf.value) for lf in st.leaves][len(st.leaves) - len(toks) :] if len(toks) < len(st.leaves) else []
        if tail and [_number(t.group(1)) for t in toks] == tail and "%" not in em.group(1):
            # "250 of the original number of books - 135 sold books - 50 unsold books = <<250-135-50=65>>":
            # the words cut the restatement, and what is left is the annotation's last literals in
            # order: bound to those, by position (the earlier numbers are bound by value below).
            for t, lf in zip(toks, st.leaves[len(st.leaves) - len(toks) :], strict=True):
                a, b = prev_end + t.start(1), prev_end + t.end(1)
                out.append(ProseNumber(a, b, t.group(1), lf.kind, lf.ref, lf.scale, lf.offset))
                skip.append((a, b))
            continue
        if said and Fraction(st.result) not in said:
            # "7.5 / .5 = <<15=15>>": the prose computes something else than the annotation.
            raise Rejected("restated_mismatch", f"{em.group(1).strip()} = is not {st.result}")
        if [_number(t.group(1)) for t in toks] != [Fraction(lf.value) for lf in st.leaves]:
            continue
        for t, lf in zip(toks, st.leaves, strict=True):
            a, b = prev_end + t.start(1), prev_end + t.end(1)
            out.append(ProseNumber(a, b, t.group(1), lf.kind, lf.ref, lf.scale, lf.offset))
            skip.append((a, b))
        restated.add(steps.index(st))
    for m in _PROSE_NUM.finditer(solution, 0, body_end if body_end >= 0 else len(solution)):
        a, b = m.span(1)
        if any(s <= a < e for s, e in skip):
            continue
        v = _number(m.group(1))
        # A number just before an annotation on the same line usually restates that step's literal.
        nxt = next((s for s in steps if s.start >= b and "\n" not in solution[b : s.start]), None)
        if (
            nxt is not None
            and steps.index(nxt) in restated
            and Fraction(nxt.result) == v
            and (
                all(Fraction(lf.value) != v for lf in nxt.leaves)
                or re.search(r"\b(?:because|since)\b", solution[b : nxt.start], re.IGNORECASE)
            )
        ):
            # "They make $5 off each gallon because 10 - 5 = <<10-5=5>>5": the number a restated
            # calculation justifies ("because") is what it gives, not its operand; where the value
            # is also an operand and nothing says "because" ("a rate of $5 per hour by doing
            # 25 / $5 = 5 hours"), the operand reading below is kept.
            out.append(ProseNumber(a, b, m.group(1), "step", str(steps.index(nxt))))
            continue
        leaf = next((lf for lf in nxt.leaves if Fraction(lf.value) == v), None) if nxt else None
        if leaf is not None:
            out.append(ProseNumber(a, b, m.group(1), leaf.kind, leaf.ref, leaf.scale, leaf.offset))
            continue
        prior = [j for j, s in enumerate(steps) if s.end <= a and results[j] == v]
        later = [j for j, s in enumerate(steps) if results[j] == v]
        if nxt is not None and not prior and Fraction(nxt.result) == v:
            # "Each gallon costs $5 to make because 3 + 2 = <<5=5>>5": the line states the result
            # its own annotation computes (not a later step's equal result, nor a question number).
            out.append(ProseNumber(a, b, m.group(1), "step", str(steps.index(nxt))))
            continue
        grp = [(g, v / g) for g in group_values if g != 0 and v / g in group_scales[g]]
        if prior or (later and not grp):
            out.append(ProseNumber(a, b, m.group(1), "step", str((prior or later)[-1])))
        elif grp:
            sid = gid[grp[0][0]]
            if roles[sid] == "frozen" and unused[sid] and solution[max(0, a - 1) : a] == "#":
                # "horse #2": a label the question names the same way, never read and never moved.
                out.append(ProseNumber(a, b, m.group(1), "const", ""))
                continue
            if roles[sid] == "frozen" and unused[sid]:
                # The solution reasons with a number the program never reads: changing the others
                # could contradict it ("the remaining 24 liters"), so the item is not templated.
                raise Rejected(
                    "unused_number_in_solution", f"{m.group(1)} is stated in the question and used in the solution outside any computation"
                )
            unit = re.match(r"\s*(day|week|month|year|hour|minute)s?\b", solution[b : b + 12], re.IGNORECASE)
            if unit and roles[sid] != "frozen" and slot_nouns is not None and unit.group(1).lower() not in slot_nouns.get(sid, set()):
                # "During the 5 days together" where the 5 that moves is "5 miles": a count the prose
                # made (3 + 2 days) that only shares the value; rewriting it would misstate the days.
                raise _AmbiguousProse(
                    v, f"{m.group(1)} {unit.group(1)} in the solution equals a number that changes and counts something else"
                )
            out.append(ProseNumber(a, b, m.group(1), "slot", sid, str(grp[0][1])))
        elif v in consts or v in (0, 1):
            out.append(ProseNumber(a, b, m.group(1), "const", ""))
        elif cfg.reject_unexplained:
            raise Rejected("unexplained_solution_number", f"{m.group(1)} in the solution is not a slot, a step result or a constant")
        else:
            out.append(ProseNumber(a, b, m.group(1), "const", ""))
    # A number after "/" in the prose ("32/7 of the total") is no prose number above: when it equals
    # a number that moves, which one it is cannot be told, so the item is not templated.
    moving_vals = {Fraction(s.value) for s in slots if s.role != "frozen"} | moving_results
    for m in re.finditer(r"/\s*(\d+(?:\.\d+)?)(?![\d.])", solution[: body_end if body_end >= 0 else len(solution)]):
        a = m.start(1)
        if any(s <= a < e for s, e in skip):
            continue
        if _number(m.group(1)) in moving_vals:
            raise _AmbiguousProse(_number(m.group(1)), f"'/{m.group(1)}' in the solution prose equals a number that changes")
    # Number words in the prose ("Sam had seventy loaves") follow their slot like digits do.
    for wm in find_mentions(solution[: body_end if body_end >= 0 else len(solution)]):
        if wm.kind != "word" or any(s <= wm.start < e for s, e in skip):
            continue
        v = Fraction(wm.value)
        if v in gid and roles[gid[v]] != "frozen":
            if _WORD_AS_LABEL.search(solution[max(0, wm.start - 12) : wm.start]):
                # "on day three": a label, not the count; rewriting it by value would misname the day.
                raise _AmbiguousProse(v, f"{wm.text!r} in the solution labels something and equals a number that changes")
            out.append(ProseNumber(wm.start, wm.end, wm.text, "slot", gid[v], "1"))
    del moving
    out.sort(key=lambda p: p.start)
    return out
