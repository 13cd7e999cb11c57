"""Guards of the GSM8K templater (:mod:`contam.perturb.symbolic`): which question numbers must stay frozen."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from fractions import Fraction

from contam.perturb import arith, guards
from contam.perturb.mentions import CONSTANTS, ORDINALS, word_for
from contam.perturb.records import CalcStep, Mention, TemplateConstraint
from contam.perturb.symbolic_bounds import _LABEL, _unanchored_definite


def _restated_with_noun(body: str, v: Fraction, ms: list[Mention], nouns: list[str], reads: dict[Fraction, int]) -> bool:
    """Whether the solution reads ``v`` no more often than the question states it and restates it
    with the question's noun ("60 downloads", "$30 a month" is not): then a 60 the solution reads
    is the 60 downloads, not 60 minutes of an hour a word elsewhere makes a fact."""
    if reads.get(v, 0) > len(ms) or any(not n or n in ("$", "%") or len(n) < 3 for n in nouns):
        return False
    if any(value == v and pattern and re.search(pattern, n) for value, pattern in CONSTANTS for n in nouns):
        return False  # "7 days", "16 ounces": a fact of that very unit (a week, a pound) stays a fact
    prose = re.sub(r"<<[^<>]*>>", " ", body)
    text = str(v.numerator) if v.denominator == 1 else ""
    return bool(text) and all(
        re.search(rf"(?<![\d.,]){text}(?![\d.,]\d)\s+(?:[a-z]+\s+)?{re.escape(n[:-1] if len(n) > 3 else n)}", prose, re.IGNORECASE)
        for n in set(nouns)
    )


def _scale_free(tree: arith.Node, lit: arith.Num, unit_of: Callable[[Fraction], str], step_unit: str, unit: str) -> bool:
    """Whether ``lit`` is the divisor of "x / k", or a factor of "x * k", where x counts ``unit``
    and so does the whole step: then k has no unit, and cannot be an earlier result counting
    ``unit`` (``step_unit``)."""
    if not unit or step_unit != unit or not isinstance(tree, arith.BinOp):
        return False
    if tree.op == "/" and tree.right is lit:
        rest = [x for x in arith.literals(tree.left) if x.value != 1]
    elif tree.op == "*" and lit in (tree.left, tree.right):
        rest = [tree.right if tree.left is lit else tree.left]
    else:
        return False
    return len(rest) == 1 and isinstance(rest[0], arith.Num) and unit_of(rest[0].value) == unit


def _only_ops(node: arith.Node, ops: str) -> bool:
    """A tree of these operators alone: "+-" for a sum ("6+4", "7-2-1": its terms count one
    thing), "*" for a product ("2*2", "3*2*5": its factors can be read in any order)."""
    if isinstance(node, arith.BinOp):
        return node.op in ops and _only_ops(node.left, ops) and _only_ops(node.right, ops)
    return isinstance(node, arith.Num)


def _guards(
    question: str,
    solution: str,
    mentions: list[Mention],
    groups: dict[Fraction, list[int]],
    gid: dict[Fraction, str],
    reads: dict[Fraction, int],
    steps: list[CalcStep],
    already: set[str],
    frozen_values: set[Fraction] | None = None,
    split: set[Fraction] | None = None,
    *,
    consts: set[int],
    worded: set[int],
) -> tuple[dict[str, str], list[TemplateConstraint]]:
    """Slots to freeze (slot id -> guard name) and range constraints, from what the text means
    (:mod:`contam.perturb.guards`); raises :class:`Rejected` where freezing cannot make it right."""
    body = solution.rsplit("####", 1)[0]
    ordinals = guards.ordinal_values(question) | guards.ordinal_values(body)
    freeze: dict[str, str] = {}
    extra: list[TemplateConstraint] = []
    for v, idx in groups.items():
        sid = gid[v]
        ms = [mentions[i] for i in idx]
        nouns = [guards.head_noun(question, m) for m in ms]
        why = ""
        if any(_LABEL.search(question[max(0, m.start - 12) : m.start]) for m in ms):
            why = "label"  # "Grade 5", "Room 12": a name, not a quantity
        elif (
            v.denominator == 1
            and int(v) in consts
            and reads.get(v, 0) >= 1
            and not (split and v in split)
            and not (int(v) not in worded and _restated_with_noun(body, v, ms, nouns, reads))
        ):
            why = "constant_word"  # "twice", "Monday to Friday", "Sunday and Wednesday", 7 days a week, 3 listed flavors
        elif frozen_values and v in frozen_values and reads.get(v, 0) >= 1 and not (split and v in split):
            why = "frozen_mention"  # the 5 of "2/5" read as "Grade 5": a frozen fraction explains it too
        elif len(ms) > 1 and len(set(nouns)) > 1 and (reads.get(v, 0) < len(ms) or len({m.kind for m in ms}) > 1):
            # "three cups ... three separate meals": which one the program reads is unknown; and a
            # price and a count that share a value ("$2.00 meat ... 2 sauces") cannot move as one
            # ($2.50 would make 2.5 sauces).
            why = "one_number_two_things"
        elif v.denominator == 1 and int(v) in ordinals:
            why = "ordinal"  # "in four days ... on the fourth day"
        elif _unanchored_definite(question, ms, nouns):
            why = "definite_count"  # "the average size worn by the two": the story fixed that count
        elif any(
            re.match(
                r"^\s*(?:weeks?|days?)\s+in\s+(?:a\s+month|the\s+month|a\s+year|" + "|".join(guards.MONTHS) + r")\b",
                question[m.end : m.end + 30],
                re.IGNORECASE,
            )
            for m in ms
        ):
            why = "world_fact"  # "there are exactly 4 weeks in April": how long a month is, as the story counts it
        elif any(
            re.match(
                r"^[- ](?:(?:days?|weeks?)[- ](?:weeks?|months?|years?)|months?[- ]years?)\b", question[m.end : m.end + 20], re.IGNORECASE
            )
            for m in ms
        ):
            why = "world_fact"  # "two 4-week months", "a 30-day month": how long a period is (gsm8k/test/750)
        elif any(
            re.search(
                r"(?:(?:circumference|diameter|radius)\s+of\s+(?:the\s+)?(?:earth|moon|sun)\s+is|orbits\s+the\s+sun\s+every)\s+$",
                question[max(0, m.start - 50) : m.start],
                re.IGNORECASE,
            )
            for m in ms
        ):
            why = "world_fact"  # "Comet Halley orbits the sun every 75 years", "the circumference of the earth is 40,000 km"
        elif any(
            re.search(r"\bevery\s+$", question[max(0, m.start - 8) : m.start], re.IGNORECASE)
            and re.match(r"^\s*(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b", question[m.end : m.end + 12], re.IGNORECASE)
            for m in ms
        ):
            # "earns $5 every 10 minutes" for 150 minutes of work: 15 whole blocks. "Every 40 minutes"
            # leaves 3.75 blocks, paid pro rata or not (graded ill-posed, gsm8k/test/292); "harvests
            # every 3 months" over a year likewise. The period keeps dividing what it divided.
            why = "period"
        elif any(guards.is_conversion(question, m) for m in ms):
            why = "conversion"  # "1 Mb has 1000 kb"
        elif any(guards.is_bill(question, m) for m in ms):
            why = "denomination"  # "$10 bill"
        elif any(n in guards.NATURE_NOUNS for n in nouns):
            why = "fact_of_nature"  # 4 legs of a table
        elif _complement_stated(v, ms, mentions):
            why = "complement"  # ".75 gift bags per guest, because 1/4 of attendees don't show up"
        elif v.denominator == 1 and 1 < v <= 12 and _nature_in_solution(body, int(v), nouns):
            why = "solution_fact"  # "A rectangle has 2 long sides" tied to "2 wood slats for every foot"
        elif v == 50 and any(m.kind == "percent" and guards.is_reduction(question, m) for m in ms) and reads.get(Fraction(1, 2), 0) >= 1:
            why = "half_off"  # "50% off" read as 0.5: the price paid or the amount taken off? 70% off then cost 0.7
        else:
            for m in ms:
                if re.match(r"^\s*times?\s+(?:a|per|each|every)\s+week\b", question[m.end : m.end + 20], re.IGNORECASE) and re.search(
                    r"\b(?:each|every|per|a)\s+day\b", question, re.IGNORECASE
                ):
                    extra.append(TemplateConstraint("le", sid, "7"))  # "walks there and back each day he works ... 11 times a week"
                tall = re.match(
                    r'^\s*[- ]?(?:(feet|foot|ft|inches|inch|in|cm|centimeters?)\s+|(?=")(")\s*)tall\b',
                    question[m.end : m.end + 25],
                    re.IGNORECASE,
                )
                if tall:
                    # "Isabel is 9 feet tall": nobody is; a height stays within a person's (or the original's).
                    limit = {"f": 7, "i": 84, "c": 213, '"': 84}[(tall.group(1) or tall.group(2))[0].lower()]  # 64" tall: inches
                    extra.append(TemplateConstraint("le", sid, str(max(Fraction(limit), v))))
                    extra.append(TemplateConstraint("ge", sid, str(v * 2 / 3)))  # nor a 30" cheerleader for a 60" one
                if guards.hours_in_one_day(question, m):
                    extra.append(TemplateConstraint("le", sid, "24"))  # "Last Tuesday, she worked 27 hours"
                cap = guards.period_cap(question, m)
                if cap is not None:
                    if cap[1]:
                        why = "world_fact"  # "7 days a week"
                    else:
                        extra.append(TemplateConstraint("le", sid, str(cap[0])))  # "5 days a week" never becomes 10
        if why:
            freeze[sid] = why
            continue
        for m in ms:
            cap = guards.plausible_cap(question, m)
            if cap is not None:
                extra.append(TemplateConstraint("le", sid, str(max(cap, v))))
            tight = guards.tight_range(question, m)
            if tight is not None:
                extra.append(TemplateConstraint("ge", sid, str(tight[0])))
                extra.append(TemplateConstraint("le", sid, str(tight[1])))
    # A sum written with a fixed number of terms over a count that would change ("60 + 57 + 54 + 51"
    # for a relay of four): the program cannot grow the sum with the count, so the count is frozen
    # (it then never changes, and the sum stays right).
    for v, idx in groups.items():
        sid = gid[v]
        if sid in freeze or sid in already or v.denominator != 1 or v < 3 or v > 12:
            continue
        if any(mentions[i].kind not in ("int", "word") for i in idx):
            continue
        for st in steps:
            if st.expr.count("+") == int(v) - 1 and not any(op in st.expr for op in "*/-") and len(st.leaves) == int(v):
                freeze[sid] = "fixed_term_sum"
                break
    # "ten packets ... Six of the packets ... the other four packets": the parts of a partition
    # sum to its whole. When "the other N" (or "the remaining N") cannot move, no other count of
    # the same noun may move either, or the parts no longer add up to the whole the story states.
    for v, idx in groups.items():
        if freeze.get(gid[v]) != "definite_count":
            continue
        rest = [
            i
            for i in idx
            if re.search(
                r"\bthe\s+(?:other|remaining|rest\s+of\s+the)\s+$",
                question[max(0, mentions[i].start - 25) : mentions[i].start],
                re.IGNORECASE,
            )
        ]
        if not rest:
            continue
        nouns = {guards.head_noun(question, mentions[i]) for i in rest} - {""}
        for w, jdx in groups.items():
            if gid[w] not in freeze and any(guards.head_noun(question, mentions[j]) in nouns for j in jdx):
                freeze[gid[w]] = "partition"
    # "split the cost three ways with her two parents": the ways are the people the story lists.
    for v, idx in groups.items():
        if gid[v] not in freeze and any(
            re.match(r"^\s*ways?\b", question[mentions[i].end : mentions[i].end + 8], re.IGNORECASE) for i in idx
        ):
            freeze[gid[v]] = "ways_count"
    # "thrice a day for 5 days; but on two other days ... a week": day counts that together make
    # the week (months the year) are a partition of a fixed whole; none of them may move.
    for noun, whole, period in (("day", 7, "week"), ("month", 12, "year")):
        if not re.search(rf"\b{period}\b", question, re.IGNORECASE):
            continue
        counted = [
            v for v, idx in groups.items() if v.denominator == 1 and any(guards.head_noun(question, mentions[i]) == noun for i in idx)
        ]
        fixed = [Fraction(m.value) for m in mentions if not m.perturbable and guards.head_noun(question, m) == noun]
        values = counted + fixed
        if any(a + b == whole for a, b in itertools.combinations(values, 2)):
            for v in counted:
                freeze.setdefault(gid[v], "period_partition")
    # A count of the noun an ordinal numbers ("for 11 months ... on the twelfth month", "5 days ...
    # the third day") is frozen: the ordinal may be within the count or the one after it.
    for om in re.finditer(r"\b(" + "|".join(ORDINALS) + r")\s+([a-z]+)", question, re.IGNORECASE):
        noun = guards.singular(om.group(2).lower())
        for v, idx in groups.items():
            if gid[v] not in freeze and any(guards.head_noun(question, mentions[i]) == noun for i in idx):
                freeze[gid[v]] = "ordinal"
    return freeze, extra


def _as_share(m: Mention) -> Fraction | None:
    """A mention as a share of a whole (75% -> 3/4, .75 -> 3/4, 1/4 -> 1/4); None if it is not one."""
    v = Fraction(m.value)
    if m.kind == "percent":
        return v / 100 if 0 < v < 100 else None
    return v if 0 < v < 1 else None


def _complement_stated(v: Fraction, ms: list[Mention], mentions: list[Mention]) -> bool:
    """Whether another question number is the rest of the whole this one is a share of: changing
    one leaves the other ("needs .75 ... because 1/4 don't show up" became ".40 ... 1/4")."""
    mine = [x for x in (_as_share(m) for m in ms) if x is not None]
    if not mine:
        return False
    own = {(m.start, m.end) for m in ms}
    others = [x for m in mentions if (m.start, m.end) not in own and (x := _as_share(m)) is not None]
    return any(a + b == 1 for a in mine for b in others)


def _nature_counts(body: str) -> set[int]:
    """Counts of nature the solution's prose states ("4 legs/dog", "has 4 legs", "the two long
    sides"), 2 to 12; not a result ("= 8 legs")."""
    prose = re.sub(r"<<[^<>]*>>", " ", body)
    words = "|".join(n for n in guards.NATURE_NOUNS if n.isalpha() and not n.endswith("ed"))
    spelled = {word_for(k): k for k in range(2, 13)}
    number = "|".join(["\\d+", *(w for w in spelled if w)])
    out = set()
    for m in re.finditer(
        rf"(?<![\d.])\b({number})(?![\d.])\s+(?:[a-z]+\s+){{0,2}}?(?:{words})s?\b(?P<per>\s*/\s*[a-z]|\s+(?:per|each|on\s+each|for\s+each)\b)?",
        prose,
        re.IGNORECASE,
    ):
        # "4 legs/dog", "the two long sides": a count per thing, not a result ("= 8 legs").
        if not (m.group("per") or re.search(r"\b(?:has|have|with|the|its)\s+$", prose[max(0, m.start() - 6) : m.start()], re.IGNORECASE)):
            continue
        tok = m.group(1).lower()
        k = int(tok) if tok.isdigit() else spelled.get(tok)
        if k is not None and 2 <= k <= 12:
            out.add(k)
    return out


def _nature_in_solution(body: str, v: int, nouns: list[str]) -> bool:
    """Whether the solution's prose states ``v`` as a count fixed by nature ("A rectangle has 2
    long sides", "a car has 4 wheels") of a noun the question's mentions of ``v`` do not count."""
    prose = re.sub(r"<<[^<>]*>>", " ", body)
    words = "|".join(n for n in guards.NATURE_NOUNS if n.isalpha() and not n.endswith("ed"))
    for m in re.finditer(rf"(?<![\d.]){v}(?![\d.])\s+(?:[a-z]+\s+){{0,2}}?({words})s?\b", prose, re.IGNORECASE):
        if guards.singular(m.group(1).lower()) not in nouns:
            return True
    return False
