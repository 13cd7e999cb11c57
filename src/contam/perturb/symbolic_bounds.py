"""Bounds of the GSM8K templater (:mod:`contam.perturb.symbolic`): the constraints an instance keeps (results, ties, order, budgets, answers, parts, caps)."""

from __future__ import annotations

import itertools
import re
from fractions import Fraction
from typing import Protocol

from contam.perturb import guards
from contam.perturb.records import CalcStep, Mention, Slot, TemplateConstraint
from contam.perturb.symbolic_state import LiftProblem, LiftTrace, SlotChoice

_BUDGET = re.compile(
    r"(?:\bhas|\bhad|\bgave\s+(?:him|her|them)|\bstarts?\s+(?:off\s+)?with|\bbudget\s+of|\bsaved|\bbrought|\bwith)\s+(?:only\s+|a\s+total\s+of\s+)?\$?\s*$",
    re.IGNORECASE,
)


def _budget_bounds(question: str, mentions: list[Mention], slots: list[Slot], results: list[Fraction]) -> list[TemplateConstraint]:
    """Money someone has ("Dean's mother gave him $64", "Ted starts with $200") bounds what the
    steps compute where it bounded them in the original: no variant spends $81 out of $64."""
    out: list[TemplateConstraint] = []
    for s in slots:
        if s.kind not in ("money", "cents"):
            continue
        if not any(_BUDGET.search(question[max(0, mentions[i].start - 30) : mentions[i].start]) for i in s.mentions):
            continue
        for j, r in enumerate(results):
            if 0 < r <= Fraction(s.value):
                out.append(TemplateConstraint("stle", str(j), s.id))
    return out


def _answer_bounds(
    question: str, mentions: list[Mention], slots: list[Slot], answer: Fraction, answer_step: int
) -> list[TemplateConstraint]:
    """The answer stays at most every question number of the thing it counts that it was at most in
    the original: "how many guests did not get a second" never exceeds the guests, the questions
    still to answer never exceed the test's, the money spent never exceeds the money one has.
    Two fixed numbers whose product holds the thing counted bound it too: "4 pizzas. Each pizza
    had 8 slices" means no more than 32 slices are eaten."""
    noun = guards.asked_noun(question)
    if not noun:
        return []
    out: list[TemplateConstraint] = []
    for s in slots:
        if any(guards.head_noun(question, mentions[i]) == noun for i in s.mentions) and answer <= Fraction(s.value):
            out.append(TemplateConstraint("ansle", str(answer_step), s.id))
    fixed = [i for s in slots if s.role == "frozen" for i in s.mentions if mentions[i].kind in ("int", "word")]
    for a, b in itertools.combinations(fixed, 2):
        if noun in (guards.head_noun(question, mentions[a]), guards.head_noun(question, mentions[b])):
            cap = Fraction(mentions[a].value) * Fraction(mentions[b].value)
            if answer <= cap:
                out.append(TemplateConstraint("stmax", str(answer_step), str(cap)))
    return out


_PARTITIVE = re.compile(r"^\s+of\s+(?:the|them|these|those)\b", re.IGNORECASE)


def _partition_bounds(question: str, mentions: list[Mention], slots: list[Slot]) -> list[TemplateConstraint]:
    """ "into 8 albums. 3 of the albums ... and 2 of the albums ...": the parts ("N of the X",
    "N of them") stay within the whole ("M X" stated before them) as they were in the original,
    and equal to it where they were equal: 5 + 4 selfie and portrait albums out of 6 is what a
    free draw made."""
    ref = {i: s.id for s in slots for i in s.mentions}
    wholes: dict[str, int] = {}  # noun -> index of the last plain count of it
    last_noun = ""
    parts: dict[int, list[int]] = {}  # whole mention -> its part mentions
    for i, m in enumerate(mentions):
        if m.kind not in ("int", "word"):
            continue
        if _PARTITIVE.match(question[m.end : m.end + 20]):
            after = question[m.end : m.end + 40].lower()
            noun = last_noun if re.match(r"^\s+of\s+them\b", after) else guards.head_noun(question, m)
            if noun in wholes:
                parts.setdefault(wholes[noun], []).append(i)
            continue
        noun = guards.head_noun(question, m)
        if noun and noun not in ("$", "%"):
            wholes[noun] = i
            last_noun = noun
    out: list[TemplateConstraint] = []
    for w, ps in parts.items():
        total = sum(Fraction(mentions[i].value) for i in ps)
        whole = Fraction(mentions[w].value)
        if total > whole:
            continue  # not a partition in the original either
        kind = "sumeq" if total == whole else "sumle"
        refs = [ref.get(i, str(Fraction(mentions[i].value))) for i in ps]
        out.append(TemplateConstraint(kind, ref.get(w, str(whole)), "+".join(refs)))
    return out


class _Span(Protocol):
    """Where an annotation sits in the solution: a traced :class:`CalcStep` or a parsed one."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def echo_end(self) -> int: ...


def _result_unit(solution: str, step: _Span) -> str:
    """The unit the solution states a step's result in ("498 pounds" -> "pound"; "$" for money)."""
    before = solution[max(0, step.start - 3) : step.start]
    end = step.echo_end if step.echo_end >= 0 else step.end
    words = re.findall(r"[A-Za-z$%]+", solution[end : end + 30])
    unit = "$" if "$" in before or (words[:1] == ["$"]) else (guards.singular(words[0].lower()) if words else "")
    return "$" if unit in ("dollar", "dollars") else unit


def _counts_other(nouns: set[str], unit: str) -> bool:
    """Whether the question's mentions of a value all name what they count (``nouns``), and none
    counts ``unit``."""
    return "" not in nouns and unit not in nouns


def _same_unit(question: str, mentions: list[Mention], slot: Slot, unit: str) -> bool:
    """Whether a step's result, stated in ``unit`` (:func:`_result_unit`), counts what its tied
    question number counts."""
    nouns = {guards.head_noun(question, mentions[i]) for i in slot.mentions}
    return bool(unit) and unit in nouns


#: Units in which a result is the size of one thing a reader can picture (a person's weight or
#: age, a height): "Alex weighs 12 times what Grace weighs" made a 3,499-pound person, "five
#: times as old" a sister 62 years older than her brother.
_PICTURED_UNITS = ("pound", "lb", "kg", "kilogram", "year", "inch", "foot", "feet")


def _result_caps(
    question: str, solution: str, steps: list[CalcStep], results: list[Fraction], units: list[str]
) -> list[TemplateConstraint]:
    """Results stated in a pictured unit stay within what the benchmark writes for that unit (the
    95th percentile of its question values, :func:`guards.unit_caps`) or 1.5 times the original
    result, whichever is larger; results stated as a rate, a price, a kind of percent or an age
    (:func:`guards.unit_key`) stay within that key's cap (:func:`guards.keyed_caps`) or the original
    result; the answer to "how old" stays within 1.5 times the original age."""
    caps = guards.unit_caps()
    out: list[TemplateConstraint] = []
    for j, (r, unit) in enumerate(zip(results, units, strict=True)):
        if r > 0 and unit in _PICTURED_UNITS and unit in caps:
            cap = max(caps[unit], r * 3 / 2)
            if unit in ("pound", "lb", "kg", "kilogram") and re.search(r"\bweigh", question, re.IGNORECASE):
                # What a person or an animal weighs stays within 1.5 times the original weight:
                # the benchmark's pounds are mostly goods, and a 540-pound Mastiff is no dog.
                cap = r * 3 / 2
            out.append(TemplateConstraint("stmax", str(j), str(cap)))
    keyed = guards.keyed_caps()
    for j, (st, r) in enumerate(zip(steps, results, strict=True)):
        # "He spends 10*.5 = 5 hours per day": a rate, price, percent or age the solution states
        # stays within what GSM8K states for it (its 99th percentile: 23 hours a day, not 24)
        # or within the original result.
        end = st.echo_end if st.echo_end >= 0 else st.end
        key = _result_key(solution, st)
        if r > 0 and guards.is_keyed(key) and key in keyed:
            out.append(TemplateConstraint("stmax", str(j), str(max(keyed[key], r))))
            continue
        per = re.match(r"^\s*(?:hours?|hrs?)\s+(?:a|per|each|every)\s+(day|week)\b", solution[end : end + 30], re.IGNORECASE)
        if per and r > 0:
            limit = 24 if per.group(1).lower() == "day" else 168
            if r <= limit:
                out.append(TemplateConstraint("stmax", str(j), str(limit)))
    if re.search(r"\bhow\s+old\b", question, re.IGNORECASE) and results:
        # The age asked for: the solution often writes it without a unit ("Angela is 42-4 = 38").
        j = len(results) - 1
        if results[j] > 0:
            out.append(TemplateConstraint("stmax", str(j), str(results[j] * 3 / 2)))
            out.append(TemplateConstraint("stmin", str(j), str(results[j] * 2 / 3)))
    return out


def _result_key(solution: str, step: CalcStep) -> str:
    """The :func:`guards.unit_key` of a step's result where the solution states it ("5 hours per day")."""
    end = step.echo_end if step.echo_end >= 0 else step.end
    money = "$" in solution[max(0, step.start - 3) : step.start]
    percent = bool(re.match(r"^\s*(?:%|percent)", solution[end : end + 10]))
    key = guards.unit_key(solution, step.start, end, money=money, percent=percent)
    if guards.is_keyed(key):
        return key
    # "The 2nd fastest car can go 600 MPH because 5 x 120 = <<5*120=600>>600": the same line
    # states the result with its unit before the calculation.
    r = Fraction(step.result)
    if r.denominator != 1:
        return key
    line_start = solution.rfind("\n", 0, step.start) + 1
    for m in re.finditer(rf"(?<![\d.,]){int(r)}(?![\d,]|\.\d)", solution[line_start : step.start]):
        a, b = line_start + m.start(), line_start + m.end()
        k = guards.unit_key(solution, a, b, money=solution[max(0, a - 1) : a] == "$", percent=solution[b : b + 1] == "%")
        if guards.is_keyed(k):
            return k
    return key


_LABEL = re.compile(
    r"\b(?:grade|level|room|chapter|page|day|week|year|no\.|number|class|floor|gate|platform|route|bus|channel|lane|section|unit|apartment|apt\.?|size)\s+$",
    re.IGNORECASE,
)


def _unanchored_definite(question: str, ms: list[Mention], nouns: list[str]) -> bool:
    """A definite count ("the two", "all 10 tests") whose group is not introduced by a plain
    mention of the same noun in the question ("5 apples ... the 5 apples" moves together)."""
    definite = [guards.is_definite(question, m) for m in ms]
    if not any(definite):
        return False
    plain = {n for n, d in zip(nouns, definite, strict=True) if not d and n}
    return any(d and nouns[k] not in plain for k, d in enumerate(definite)) or not plain


_TALL_AFTER = re.compile(r'^\s*(?:(")|(inches|inch|in|feet|foot|ft|cm|centimeters?)\s)\s*tall\b', re.IGNORECASE)


def _height_caps(solution: str, steps: list[CalcStep], results: list[Fraction]) -> list[TemplateConstraint]:
    """A result the solution states as a height ("Anne is 2*36 = <<2*36=72>>72" tall") stays within a
    person's (84 inches, 7 feet, 213 cm) or the original's, and at least two thirds of the original:
    twice a 76" Albert made a 152" Anne (gsm8k/test/1292)."""
    out: list[TemplateConstraint] = []
    for j, (st, r) in enumerate(zip(steps, results, strict=True)):
        end = st.echo_end if st.echo_end >= 0 else st.end
        m = _TALL_AFTER.match(solution[end : end + 20])
        if m and r > 0:
            limit = 84 if m.group(1) else {"i": 84, "f": 7, "c": 213}[m.group(2)[0].lower()]
            out.append(TemplateConstraint("stmax", str(j), str(max(Fraction(limit), r))))
            out.append(TemplateConstraint("stmin", str(j), str(r * 2 / 3)))  # nor shrinks to a baby's (a 14" Albert)
    return out


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


def derive_bounds(pb: LiftProblem, tr: LiftTrace, choice: SlotChoice) -> list[TemplateConstraint]:
    """Every constraint an instance must keep: the results' kinds and signs, the ties and equalities
    tracing left, the guards' ranges on moving slots, and the bounds that keep the story sensible
    (budgets, answers, parts, caps on results, ages and angles)."""
    question, solution, mentions, slots = pb.question, pb.solution, pb.mentions, choice.slots
    steps, results = tr.steps, tr.results
    by_id = {s.id: s for s in slots}
    money = {j for j, u in enumerate(tr.step_units) if u == "$"}
    constraints = _constraints(slots, mentions, results, tr.step_ties, by_id, question, money)
    constraints += [TemplateConstraint("eqstep", str(j), str(k)) for j, k in sorted(set(tr.step_eqs))]
    moving_ids = {s.id for s in slots if s.role == "free"}
    constraints += [c for c in choice.guard_constraints if c.target in moving_ids]
    constraints += _answer_bounds(question, mentions, slots, pb.answer, tr.answer_step)
    constraints += _budget_bounds(question, mentions, slots, results)
    constraints += _result_caps(question, solution, steps, results, tr.step_units)
    constraints += _height_caps(solution, steps, results)
    for j, (st, r) in enumerate(zip(steps, results, strict=True)):
        if st.prose and 0 < r < 100 and "%" in solution[st.echo_start : st.echo_end + 1]:
            # "40 + 24 + 38 = 102%" for the charge of a power bank that "wasn't fully charged"
            # (gsm8k/test/1012): a share the prose states below the whole stays below it.
            constraints.append(TemplateConstraint("stmax", str(j), "9999/100"))
    constraints += _partition_bounds(question, mentions, slots)
    # Ages stay human (at most 100 where the original's were) and angles stay angles (at most 90
    # degrees from the ground): "Bill saw the comet at 200", "227 degrees from the ground".
    low_q = question.lower()
    for cap, on in ((100, "years old" in low_q or "how old" in low_q or "age" in low_q), (90, "degree" in low_q and "angle" in low_q)):
        if on:
            constraints += [TemplateConstraint("stmax", str(j), str(cap)) for j, r in enumerate(results) if 0 < r <= cap]
    return constraints
