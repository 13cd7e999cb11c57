"""Guards of the lifter: numbers whose meaning the program cannot see (issue 16).

The program of a template knows which question numbers a computation reads; it does not know
what those numbers *mean*. A literal ``2`` in ``33*2`` may be the "two" of "two pairs" or the
"twice" of "twice as much"; a ``5`` may be "5 miles" or the five days from "Monday to Friday".
Changing such a number moves one reading and leaves the other, and the new question then means
something the program does not compute. The guards below find those numbers in the text and
either *freeze* them (the value never changes, so every reading stays right) or *reject* the
item with a reason. When in doubt they freeze or reject: coverage may drop, correctness may not.

Each guard is a small function over the question, the solution and the mentions; all of them
read the text only (never a model), so they are deterministic and cheap.

>>> phrase_counts("He works Monday to Friday, except Sunday and Wednesday.")
[5, 2]
>>> enumerations("Four children: Akbar, Alessandro, Helene, and Wilfred.")
[4]
"""

from __future__ import annotations

import re
from fractions import Fraction

from contam.perturb.mentions import FIXED_SIZE, MEASURES, NATURE_NOUNS, ORDINALS, SECOND_UNIT, UNITS
from contam.perturb.nouns import _SKIP_ADJ as _SKIP_ADJ
from contam.perturb.nouns import _WORD, head_noun, singular
from contam.perturb.plausible import _ABBREV_RATES as _ABBREV_RATES
from contam.perturb.plausible import _AGE_AFTER as _AGE_AFTER
from contam.perturb.plausible import _AGE_BEFORE as _AGE_BEFORE
from contam.perturb.plausible import _ASK as _ASK
from contam.perturb.plausible import _MONEY_RATE_AFTER as _MONEY_RATE_AFTER
from contam.perturb.plausible import _MONEY_THING_AFTER as _MONEY_THING_AFTER
from contam.perturb.plausible import _MONEY_THING_BEFORE as _MONEY_THING_BEFORE
from contam.perturb.plausible import _NOT_NOUNS as _NOT_NOUNS
from contam.perturb.plausible import _PERCENT_BEFORE as _PERCENT_BEFORE
from contam.perturb.plausible import _RATE_AFTER as _RATE_AFTER
from contam.perturb.plausible import _TIGHT_AFTER as _TIGHT_AFTER
from contam.perturb.plausible import _TIGHT_PERCENT as _TIGHT_PERCENT
from contam.perturb.plausible import _UNIT_ALIASES as _UNIT_ALIASES
from contam.perturb.plausible import UNIT_CAPS_TABLE as UNIT_CAPS_TABLE
from contam.perturb.plausible import _caps_table as _caps_table
from contam.perturb.plausible import _is_noun as _is_noun
from contam.perturb.plausible import _unit_word as _unit_word
from contam.perturb.plausible import asked_noun as asked_noun
from contam.perturb.plausible import is_keyed as is_keyed
from contam.perturb.plausible import keyed_caps as keyed_caps
from contam.perturb.plausible import plausible_cap as plausible_cap
from contam.perturb.plausible import tight_range as tight_range
from contam.perturb.plausible import unit_caps as unit_caps
from contam.perturb.plausible import unit_key as unit_key
from contam.perturb.records import Mention

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")

#: Words that state a constant number without a digit: the program may read that constant where
#: the solution writes it ("33 * 2" for "twice as much"), so a question number equal to it is ambiguous.
CONSTANT_WORDS: dict[str, int] = {
    "twice": 2,
    "double": 2,
    "doubled": 2,
    "doubles": 2,
    "both": 2,
    "pair": 2,
    "pairs": 2,
    "couple": 2,
    "twins": 2,
    "half": 2,
    "halves": 2,
    "halved": 2,
    "bicycle": 2,
    "weekend": 2,
    "weekends": 2,
    "biweekly": 2,
    "semi": 2,
    "triple": 3,
    "tripled": 3,
    "thrice": 3,
    "third": 3,
    "thirds": 3,
    "tricycle": 3,
    "triplets": 3,
    "trio": 3,
    "quadruple": 4,
    "quarter": 4,
    "quarters": 4,
    "fourth": 4,
    "fourths": 4,
    "quartet": 4,
    "fifth": 5,
    "fifths": 5,
    "weekday": 5,
    "weekdays": 5,
    "nickel": 5,
    "nickels": 5,
    "sixth": 6,
    "sixths": 6,
    "dime": 10,
    "dimes": 10,
    "decade": 10,
    "decades": 10,
    "dozen": 12,
    "dozens": 12,
    "score": 20,
    "century": 100,
    "centuries": 100,
    "parents": 2,
    "spouses": 2,
    "grandparents": 4,
}

#: Facts of the world a solution uses without the question stating them, by the words that
#: license them. A question number equal to one of these, where the solution reads that value,
#: is ambiguous (the "7" of a week, the "60" of an hour).
#: Facts of time: a solution may add one as a term ("60 minutes + 30 minutes"), and its licence
#: needs both its units named (see :data:`WORLD_FACTS`).
TIME_FACTS = frozenset({7, 12, 24, 28, 30, 31, 52, 60, 365, 366})
WORLD_FACTS: tuple[tuple[int, str], ...] = (
    # A fact of time converts one unit into another, so both are named somewhere in the item:
    # "12 homes" in the first of "three years" is no 12 months (gsm8k/test/854).
    (7, r"(?s)(?=.*\bweeks?\b)(?=.*\bdays?\b)"),
    (24, r"(?s)(?=.*\bhours?\b)(?=.*\bdays?\b)"),
    (60, rf"(?s)(?=.*minute)(?=.*(?:\bhours?\b|{SECOND_UNIT}))"),
    (12, r"(?s)(?=.*month)(?=.*year)|(?=.*inch)(?=.*(?:feet|foot))|dozen"),
    (52, r"\bweek.*\byear|\byear.*\bweek"),
    (365, r"(?s)(?=.*\byears?\b)(?=.*\bdays?\b)"),
    (30, r"(?s)(?=.*\bmonths?\b)(?=.*\bdays?\b)"),
    (31, r"(?s)(?=.*\bmonths?\b)(?=.*\bdays?\b)"),
    (100, r"percent|%|cent|meter|metre"),
    (1000, r"kilo|\bkg\b|\bkm\b|gram|liter|litre|milli|\bml\b|\bkb\b|\bmb\b"),
    (16, r"ounce|pound"),
    (3, r"\byards?\b|\bfeet\b|\bfoot\b"),
    (4, r"quart|gallon|season"),
    (8, r"pint|gallon"),
    (36, r"\byards?\b|\binch"),
    (5280, r"\bmiles?\b"),
    (25, r"\bquarters?\b"),
    (10, r"\bdimes?\b|\bdecades?\b"),
)

#: "N <unit> a <period>": the largest N the period holds (a week has 7 days ...).
PERIODS: dict[tuple[str, str], int] = {
    ("day", "week"): 7,
    ("day", "month"): 31,
    ("day", "year"): 366,
    ("week", "year"): 52,
    ("week", "month"): 5,
    ("month", "year"): 12,
    ("hour", "day"): 24,
    ("hour", "week"): 168,
    ("minute", "hour"): 60,
    ("second", "minute"): 60,
    ("night", "week"): 7,
    ("evening", "week"): 7,
    ("morning", "week"): 7,
    ("weekend", "month"): 5,
    ("weekend", "year"): 53,
}
_PERIOD_RE = re.compile(
    r"^\s*[- ]?(?P<unit>day|week|month|hour|minute|second|night|evening|morning|weekend)s?"
    r"(?:\s+(?:a|an|per|each|every|in\s+a|in\s+an|of\s+the|of\s+each|out\s+of\s+the|out\s+of\s+every)\s+|[- ])(?P<period>week|month|year|day|hour|minute)\b",
    re.IGNORECASE,
)
#: "N-day week", "a 5 day work week".
_SIZED_PERIOD_RE = re.compile(
    r"^\s*[- ](?P<unit>day|hour|month)[- ](?:work\s*|school\s*|working\s*)?(?P<period>week|day|year)\b", re.IGNORECASE
)
#: "1 Mb has 1000 kb", "there are 100 cm in a meter", "12 inches per foot": a stated conversion is a definition.
_CONVERSION_AFTER = re.compile(
    r"^\s*[a-zA-Z]+\s+(?:in|per)\s+(?:a|an|one|each|1)\s+[a-zA-Z]+|^\s*[a-zA-Z]+\s*(?:=|make|makes|equals?)\s*(?:a|an|one|1)\s+[a-zA-Z]+",
    re.IGNORECASE,
)
_CONVERSION_BEFORE = re.compile(
    r"(?:\b(?:a|an|one|1|each|every)\s+[a-zA-Z]+\s+(?:has|have|is|equals|contains|holds|=|makes|is\s+equal\s+to|weighs|are)\s+)$",
    re.IGNORECASE,
)
_DEFINITE = re.compile(
    r"(?:\b(?:the|all|these|those|both|each\s+of\s+the|any\s+of\s+the|of\s+the|among\s+the|for\s+the|by\s+the|across\s+the|between\s+the)\s+(?:(?:other|remaining|last|first|next|previous)\s+)?)$",
    re.IGNORECASE,
)
_BILL = re.compile(r"^\s*[- ]?(?:dollar\s+)?(?:bills?|notes?|coins?)\b", re.IGNORECASE)


def phrase_counts(text: str) -> list[int]:
    """Counts stated by named days and months: "Monday to Friday" (5), "Sunday and Wednesday" (2)."""
    low = text.lower()
    out: list[int] = []
    day_range = False
    for names in (DAYS, MONTHS):
        alt = "|".join(names)
        taken: list[tuple[int, int]] = []
        for m in re.finditer(rf"\b(?:from\s+)?({alt})s?\s+(?:to|through|thru|until|till|-|–)\s+({alt})s?\b", low):
            a, b = names.index(m.group(1)), names.index(m.group(2))
            out.append((b - a) % len(names) + 1)
            taken.append(m.span())
        day_range = day_range or (names is DAYS and bool(taken))
        for m in re.finditer(rf"\b({alt})s?\b(?:\s*,\s*(?:and\s+|or\s+)?({alt})s?\b|\s+(?:and|or|&)\s+({alt})s?\b)+", low):
            if any(a <= m.start() < b for a, b in taken):
                continue
            out.append(len(re.findall(rf"\b(?:{alt})", m.group(0))))
    # "On Monday ... On both Tuesday and Wednesday ... Thursday ... Friday": over 5 days (only
    # where no "Monday to Friday" range already says how many).
    named = {d for d in DAYS if re.search(rf"\b{d}s?\b", low)}
    if len(named) >= 2 and not day_range:
        out.append(len(named))
    return out


_LIST = re.compile(
    r"(?P<items>(?:[A-Z][a-z]+|[A-Z]{2,3}\b|(?:\$?\d[\d,.]*|[a-z]+)\s+[a-z][a-z -]{0,30}?)(?:\s*,\s*(?:[A-Z][a-z]+|[A-Z]{2,3}\b|(?:\$?\d[\d,.]*|[a-z]+)\s+[a-z][a-z -]{0,30}?))+"
    r"\s*,?\s+(?:and|or)\s+(?:[A-Z][a-z]+|[A-Z]{2,3}\b|(?:\$?\d[\d,.]*|[a-z]+)\s+[a-z][a-z -]{0,30}?))(?=[.,;:?!)]|\s+(?:for|to|at|in|on|with|each|that|which|who)\b|$)"
)
_NAME_PAIR = re.compile(r"\b([A-Z][a-z]+(?:[A-Z][a-z]+)?)\s+and\s+([A-Z][a-z]+(?:[A-Z][a-z]+)?)\b")  # "John and DeSean"
#: "equal amounts of chamomile and mint", "the average of the costs of the hat and jacket": two
#: things the sentence names, shared or averaged by halves; "her mom and her sister ... 2 boxes
#: each": two people (gsm8k/test/972 read "2*2" as the boxes squared).
_PAIR_OF_THINGS = re.compile(
    r"\b(?:equal\s+(?:amounts?|numbers?)\s+of|the\s+average\s+of(?:\s+the\s+[a-z]+\s+of)?)\s+(?:the\s+)?[a-z]+\s+and\s+(?:the\s+)?[a-z]+\b(?!\s*,)"
    r"|\b(?:her|his|their|my)\s+[a-z]+\s+and\s+(?:her|his|their|my)\s+[a-z]+\b(?!\s*,)",
    re.IGNORECASE,
)
_NOT_NAMES = {
    "The",
    "If",
    "He",
    "She",
    "They",
    "It",
    "In",
    "On",
    "At",
    "But",
    "So",
    "Then",
    "When",
    "How",
    "What",
    "A",
    "An",
    "His",
    "Her",
    "Their",
    "This",
    "That",
    "Each",
    "Every",
    "After",
    "Before",
    "There",
    "We",
    "I",
    "You",
}


def enumerations(text: str) -> list[int]:
    """Lengths of lists the question spells out: "Akbar, Alessandro, Helene, and Wilfred" (4),
    "9 oatmeal cookies, 4 chocolate chip cookies, and 5 sugar cookies" (3), "Tom and Ann" (2)."""
    out: list[int] = []
    for sentence in re.split(r"(?<=[.?!])\s+", text):
        for m in _LIST.finditer(sentence):
            items = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", m.group("items"))
            items = [x for x in items if x.strip()]
            if len(items) >= 3:
                out.append(len(items))
        for m in _NAME_PAIR.finditer(sentence):
            if m.group(1) not in _NOT_NAMES and m.group(2) not in _NOT_NAMES:
                out.append(2)
        if _PAIR_OF_THINGS.search(sentence):
            out.append(2)
    return out


def constant_values(question: str, solution: str, *, world: bool = True) -> set[int]:
    """Values the text states without a digit: constant words, day/month phrases, enumerations,
    "one ... the other" (two), and (``world``) facts of the world licensed by the words present."""
    low = question.lower()
    vals = {v for w, v in CONSTANT_WORDS.items() if re.search(rf"\b{w}\b", low)}
    vals.update(phrase_counts(question))
    vals.update(enumerations(question))
    if re.search(r"\bthe other\b(?!\s+(?:\d|" + "|".join(UNITS) + r"))", low) and re.search(r"\bone\b", low):
        vals.add(2)
    if re.search(r"\bone of each\b|\bof each (?:kind|flavou?r|color|colour|type)\b", low):
        vals.update((2, 3))  # "one of each" of the kinds just listed ("vanilla or chocolate"): a count the story fixed
    # A stated period holds a known number of smaller units: "two weeks" is 14 days, "3 hours" 180 minutes.
    for m in re.finditer(r"\b(\d+|" + "|".join(UNITS) + r")[- ](week|year|hour|day|minute|dozen)s?\b", low):
        k = int(m.group(1)) if m.group(1).isdigit() else UNITS[m.group(1)]
        per = {"week": (7,), "year": (12, 52, 365), "hour": (60,), "day": (24,), "minute": (60,), "dozen": (12,)}[m.group(2)]
        vals.update(k * p for p in per)
    return vals | world_facts(question, solution) if world else vals


def world_facts(question: str, solution: str) -> set[int]:
    """The values of :data:`WORLD_FACTS` the words of the item license."""
    both = (question + " " + solution).lower()
    return {v for v, pat in WORLD_FACTS if re.search(pat, both)}


def period_cap(text: str, m: Mention) -> tuple[int, bool] | None:
    """For "N days a week": (7, N is the whole period). None when the mention counts no period."""
    after = text[m.end : m.end + 40]
    got = _PERIOD_RE.match(after) or _SIZED_PERIOD_RE.match(after)
    if not got:
        return None
    cap = PERIODS.get((got.group("unit").lower(), got.group("period").lower()))
    if cap is None:
        return None
    return cap, Fraction(m.value) >= cap


def is_conversion(text: str, m: Mention) -> bool:
    """A stated unit conversion or definition ("1 Mb has 1000 kb", "12 inches per foot").

    Only between two units of measure (:data:`MEASURES`), or where a fixed-size thing
    (:data:`FIXED_SIZE`) or a count fixed by nature (:data:`NATURE_NOUNS`) is named: "a basket
    contains 25 oranges", "10 eggs in a basket" and "each flagstone weighs 75 pounds" are story
    quantities that may move; "16 cups in a gallon" and "a deck has 52 cards" may not.
    """
    before = _CONVERSION_BEFORE.search(text[max(0, m.start - 40) : m.start])
    after = _CONVERSION_AFTER.match(text[m.end : m.end + 40])
    if not (before or after):
        return False
    words = [singular(w.lower()) for w in _WORD.findall((before.group(0) if before else "") + " " + (after.group(0) if after else ""))]
    words.append(head_noun(text, m))
    units = {u for w in words if (u := _measure(w))}
    return len(units) >= 2 or any(w in FIXED_SIZE or w.startswith(NATURE_NOUNS) for w in words)


def _measure(word: str) -> str:
    """The unit of measure ``word`` names ("lbs" -> "pound", "kgs" -> "kg"), or ""."""
    for w in (word, word.rstrip("s")):
        unit = _UNIT_ALIASES.get(w, w)
        if unit in MEASURES:
            return unit
    return ""


def is_definite(text: str, m: Mention) -> bool:
    """ "the two", "all 10 tests", "the four of them": a count that refers back to a group the story fixed."""
    return bool(_DEFINITE.search(text[max(0, m.start - 30) : m.start]))


_REDUCTION_AFTER = re.compile(
    r"^\s*(?:%|percent)?\s*(?:off|less|fewer|cheaper|discount|decrease|reduction|lower|markdown)\b", re.IGNORECASE
)
_REDUCTION_BEFORE = re.compile(
    r"(?:discount\s+of|reduced\s+by|decreased?\s+by|lowered\s+by|cut\s+by|off\s+by|drops?\s+by|fell\s+by)\s*$", re.IGNORECASE
)


def is_reduction(text: str, m: Mention) -> bool:
    """ "50% off", "a discount of 20%": a percent taken away, whose complement may be what is paid."""
    return bool(_REDUCTION_AFTER.match(text[m.end : m.end + 25]) or _REDUCTION_BEFORE.search(text[max(0, m.start - 20) : m.start]))


_ONE_DAY = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|yesterday|tomorrow|that\s+day|one\s+day|a\s+day|each\s+day|per\s+day|every\s+day|daily)\b",
    re.IGNORECASE,
)


def hours_in_one_day(text: str, m: Mention) -> bool:
    """ "Last Tuesday, she worked 11 hours": hours within one day (at most 24 of them)."""
    if not re.match(r"^\s*[- ]?hours?\b", text[m.end : m.end + 10], re.IGNORECASE):
        return False
    start = max(text.rfind(".", 0, m.start), text.rfind("?", 0, m.start), text.rfind("!", 0, m.start)) + 1
    stops = [k for k in (text.find(".", m.end), text.find("?", m.end), text.find("!", m.end)) if k >= 0]
    end = min(stops) if stops else len(text)
    sentence = text[start:end]
    return bool(_ONE_DAY.search(sentence)) and not re.search(r"\b(?:week|month|year|days)\b", sentence, re.IGNORECASE)


def is_bill(text: str, m: Mention) -> bool:
    """ "a $10 bill": banknotes and coins come in fixed denominations."""
    return bool(_BILL.match(text[m.end : m.end + 20]))


def ordinal_values(text: str) -> set[int]:
    """Values of ordinals in ``text`` ("the fourth day", "3rd", "day 2")."""
    vals = {ORDINALS[w.lower()] for w in re.findall(r"\b(" + "|".join(ORDINALS) + r")\b", text, re.IGNORECASE)}
    vals.update(int(n) for n in re.findall(r"\b(\d+)(?:st|nd|rd|th)\b", text))
    vals.update(
        int(n)
        for n in re.findall(
            r"\b(?:day|week|month|year|round|game|level|step|floor|lap|stage|hour|inning|quarter)\s+(\d+)\b", text, re.IGNORECASE
        )
    )
    return vals
