"""Plausible values of a mention: caps keyed by unit, rate, price, percent or age, and tight ranges.

A value is checked against what GSM8K itself writes for the same kind of quantity: the packaged
table of caps (``bench/unit_caps_table.py`` writes it) keyed by :func:`unit_key`, and a narrow
range for quantities a reader checks against the world (an age, a speed, a rate-like percent).
Also what a question asks for (:func:`asked_noun`). Text only, deterministic.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from contam.perturb.nouns import _SKIP_ADJ, _WORD, head_noun, singular
from contam.perturb.records import Mention

#: The packaged table of plausible caps (``bench/unit_caps_table.py`` writes it).
UNIT_CAPS_TABLE = "gsm8k/unit_caps.json"


@lru_cache(maxsize=1)
def _caps_table() -> dict[str, dict[str, Fraction]]:
    import json

    from contam.data.registry import data_path

    with open(data_path(UNIT_CAPS_TABLE), encoding="utf-8") as fh:
        doc = json.load(fh)
    return {section: {k: Fraction(v[0]) for k, v in doc[section]["caps"].items()} for section in ("nouns", "keyed")}


def unit_caps() -> dict[str, Fraction]:
    """The 95th percentile of the values GSM8K's own training questions give each counted noun
    (nouns seen at least 20 times): "legs", "years old", "% tip" stay within what the benchmark writes.

    Read from the packaged table (section ``nouns``; ``bench/unit_caps_table.py`` recomputes it
    from the packaged GSM8K train split).

    >>> unit_caps()["apple"] > 0
    True
    """
    return _caps_table()["nouns"]


def keyed_caps() -> dict[str, Fraction]:
    """Caps of rates, prices, percents and ages by :func:`unit_key` (``hour/day``, ``$/pen``,
    ``%tip``, ``year old``): the 99th percentile (nearest rank) of the values GSM8K's train and
    test questions and solutions state with that key, for keys seen at least 20 times (section
    ``keyed`` of the packaged table). A solution restating a period's length ("5 hours a day * 7
    days a week") gives no value of the rate.

    >>> keyed_caps()["hour/day"] < 24
    True
    """
    return _caps_table()["keyed"]


def is_keyed(key: str) -> bool:
    """Whether a :func:`unit_key` is a rate, a price, a kind of percent or an age (not a bare noun)."""
    return "/" in key or (key.startswith("%") and len(key) > 1) or key == "year old"


def plausible_cap(text: str, m: Mention) -> Fraction | None:
    """Largest plausible value of a mention: its rate, price, percent or age key's cap
    (:func:`keyed_caps`) when the table has one, else its counted noun's (:func:`unit_caps`)."""
    if m.kind != "cents":
        key = unit_key(text, m.start, m.end, money=m.kind == "money", percent=m.kind == "percent")
        if is_keyed(key) and key in keyed_caps():
            return keyed_caps()[key]
    caps = unit_caps()
    if m.kind == "percent":
        w = _WORD.findall(text[m.end : m.end + 30])
        key = "%" + (singular(w[0].lower()) if w and w[0].lower() not in ("of", "more", "less", "off", "per", "percent") else "")
        return caps.get(key)
    noun = head_noun(text, m)
    if noun in ("$", "%", ""):
        return None
    return caps.get(noun)


#: Quantities a reader checks against the world: an age, a speed, an interest or fee rate. Their
#: variants stay within a factor of 1.5 of the original (a 12-year-old wife, hiking at 19 km/h and
#: a 60 % loan rate are what a wider range produced).
_TIGHT_AFTER = re.compile(
    r"^\s*[- ]?(?:years?[- ]old|years?\s+(?:older|younger)|(?:miles|kilometers|km|meters|feet|yards)\s*(?:per|an|a|/)\s*(?:hour|hr|h|minute|second)\b"
    r"|mph\b|km/h|kmph|km/hr|m/s|seconds?\b)",
    re.IGNORECASE,
)
_TIGHT_PERCENT = re.compile(r"(?:interest|fee|tax|tip|commission|rate|raise|markup|inflation|tariff|charge)", re.IGNORECASE)


def tight_range(text: str, m: Mention) -> tuple[Fraction, Fraction] | None:
    """(low, high) for an age, a speed or a rate-like percent; None for anything else."""
    v = Fraction(m.value)
    if re.match(r"^\s*[- ]?(?:pounds?|lbs?|kg|kilograms?)\b", text[m.end : m.end + 15], re.IGNORECASE) and re.search(
        r"\bweigh", text[max(0, m.start - 40) : m.start], re.IGNORECASE
    ):
        return v * 2 / 3, v * 3 / 2  # "the Affenpinscher, who weighed only 4 pounds"
    if _TIGHT_AFTER.match(text[m.end : m.end + 40]) or (
        m.kind == "percent" and _TIGHT_PERCENT.search(text[max(0, m.start - 40) : m.end + 40])
    ):
        return v * 2 / 3, v * 3 / 2
    return None


_ASK = re.compile(r"\bhow\s+many\s+(?:more\s+|fewer\s+|less\s+|new\s+|extra\s+|total\s+)?([a-z]+)", re.IGNORECASE)


def asked_noun(question: str) -> str:
    """What the question asks for: "How many guests did not ..." -> "guest"; "How much ..." with
    money in the question -> "$"; "" when unclear."""
    m = None
    for m in _ASK.finditer(question):  # noqa: B007 -- the last question asked is the one answered
        pass
    if m is not None:
        noun = singular(m.group(1).lower())
        return "$" if noun == "dollar" else noun
    if re.search(r"\bhow\s+much\b", question, re.IGNORECASE) and "$" in question:
        return "$"
    return ""


# --- Plausible ranges keyed by unit and rate (issue 16, item 1's last clause) -------------------
#
# A value is keyed by what it measures, read from the words around it: a rate ("5 hours a day" ->
# ``hour/day``, "40 mph" -> ``mile/hour``, "$15 an hour" -> ``$/hour``), a price of a thing ("a
# normal movie costs $85", "a $60 pen" -> ``$/movie``, ``$/pen``), a percent by what it is of
# ("a 15% tip" -> ``%tip``), an age (``year old``) or, failing those, the noun it counts
# (:func:`head_noun`). The caps of :func:`unit_caps` are a high percentile of each key's values over
# GSM8K's own questions and solutions (``bench/unit_caps_table.py`` writes the table).

#: Short and spelled-out forms of the same unit, so "hrs", "hr" and "hours" share one key.
_UNIT_ALIASES = {
    "hr": "hour",
    "hrs": "hour",
    "h": "hour",
    "min": "minute",
    "mins": "minute",
    "sec": "second",
    "secs": "second",
    "km": "kilometer",
    "kilometre": "kilometer",
    "kilometres": "kilometer",
    "mi": "mile",
    "lb": "pound",
    "lbs": "pound",
    "oz": "ounce",
    "calory": "calorie",
    "dollar": "$",
    "dollars": "$",
    "buck": "$",
    "bucks": "$",
}
_ABBREV_RATES = {
    "mph": "mile/hour",
    "mpg": "mile/gallon",
    "kph": "kilometer/hour",
    "kmph": "kilometer/hour",
    "km/h": "kilometer/hour",
    "km/hr": "kilometer/hour",
}
#: Words that are no noun of a rate or a price ("$5 more", "20 of the", "a day" after "per").
_NOT_NOUNS = _SKIP_ADJ | {
    "and",
    "or",
    "to",
    "for",
    "in",
    "on",
    "at",
    "by",
    "from",
    "with",
    "into",
    "than",
    "off",
    "worth",
    "is",
    "was",
    "are",
    "were",
    "will",
    "would",
    "if",
    "then",
    "so",
    "but",
    "as",
    "that",
    "which",
    "it",
    "he",
    "she",
    "they",
    "this",
    "his",
    "her",
    "their",
    "its",
    "how",
    "what",
    "left",
    "altogether",
    "together",
    "every",
    "all",
    "one",
    "two",
    "three",
    "time",
    "times",
    "bill",
    "bills",
    "note",
    "notes",
    "coin",
    "coins",
    # Prose of a solution after an amount ("$50 because ...", "$5 x 3", "$120 now"): no thing priced.
    "because",
    "after",
    "before",
    "now",
    "when",
    "since",
    "while",
    "there",
    "them",
    "therefore",
    "thus",
    "hence",
    "back",
    "down",
    "out",
    "up",
    "over",
    "last",
    "next",
    "toward",
    "towards",
    "during",
    "respectively",
    "plus",
    "minus",
    "x",
    "k",
    "g",
    "m",
    "thousand",
    "million",
    "billion",
    "we",
    "you",
    "i",
    "cash",
    "change",
    "profit",
    "leftover",
    "leftovers",
    "remaining",
    "saved",
    "spent",
    "have",
    "has",
    "had",
    "got",
    "get",
    "gets",
    "can",
    "could",
    "should",
    "must",
    "did",
    "do",
    "does",
}
_RATE_AFTER = re.compile(
    r"^\s*[- ]?(?P<unit>[a-z]+)(?:\s+of\s+[a-z]+)?\s*(?:/|\s(?:a|an|per|each|every|for\s+each|for\s+every)\s+)(?P<per>[a-z]+)\b",
    re.IGNORECASE,
)
_MONEY_RATE_AFTER = re.compile(
    r"^\s*(?:dollars?\s*)?(?:/|\s*\b(?:a|an|per|each|every|for\s+each|for\s+every|for\s+a|for\s+an|for\s+one)\s+)(?P<per>[a-z]+)\b",
    re.IGNORECASE,
)
_MONEY_THING_AFTER = re.compile(r"^\s*(?:-?\s*dollars?\b)?[- ]?(?P<noun>[a-z]+)\b", re.IGNORECASE)
_MONEY_THING_BEFORE = re.compile(
    r"\b(?P<noun>[a-z]+)\s+(?:that\s+|which\s+)?(?:each\s+)?(?:will\s+|would\s+)?(?:costs?|costing|cost\s+him|cost\s+her|is\s+priced\s+at|are\s+priced\s+at|priced\s+at|sells?\s+for|sold\s+for|for)\s+(?:only\s+|just\s+)?\$?\s*$",
    re.IGNORECASE,
)
_AGE_AFTER = re.compile(r"^\s*[- ]?years?[- ]old\b", re.IGNORECASE)
_AGE_BEFORE = re.compile(r"(?:\bat\s+the\s+age\s+of|\bat\s+age|\baged)\s+$", re.IGNORECASE)
_PERCENT_BEFORE = re.compile(r"\b(?P<noun>[a-z]+)(?:\s+rate)?\s+(?:of|at)\s+(?:a\s+)?$", re.IGNORECASE)


def _is_noun(word: str) -> bool:
    """A word that can name what is counted or priced: no function word, no name (capitalised in
    the text), no "-ing", "-ly" or "-ed" form ("$50 because", "$400 Jason", "$30 originally")."""
    lw = word.lower()
    return lw not in _NOT_NOUNS and len(lw) > 1 and not word[:1].isupper() and not (len(lw) > 4 and lw.endswith(("ing", "ly", "ed")))


def _unit_word(w: str) -> str:
    lw = w.lower()
    return _UNIT_ALIASES.get(lw, _UNIT_ALIASES.get(singular(lw), singular(lw)))


def unit_key(text: str, start: int, end: int, *, money: bool = False, percent: bool = False) -> str:
    """What the number at ``text[start:end]`` measures, as a key of :func:`unit_caps`; "" if unknown.

    ``money`` and ``percent`` say the number is an amount of money ("$5") or a percent ("15%").

    >>> q = "Each dog takes .5 hours a day. A movie costs $8. Tip 20% tip. She drives 40 mph. Ann is 9 years old."
    >>> [unit_key(q, q.index(x), q.index(x) + len(x), money=x == "8", percent=x == "20") for x in (".5", "8", "20", "40", "9")]
    ['hour/day', '$/movie', '%tip', 'mile/hour', 'year old']
    >>> unit_key("She walks 3 dogs.", 10, 11)
    'dog'
    """
    after = text[end : end + 45]
    before = text[max(0, start - 45) : start]
    if percent:
        after = re.sub(r"^\s*(?:%|percent|per\s+cent)", "", after, flags=re.IGNORECASE)
        w = _WORD.findall(after[:30])
        if w and _is_noun(w[0]) and w[0].lower() not in ("percent",):
            return "%" + singular(w[0].lower())
        b = _PERCENT_BEFORE.search(before)
        if b and _is_noun(b.group("noun")) and b.group("noun").lower() != "rate":
            return "%" + singular(b.group("noun").lower())
        return "%"
    if not money and re.match(r"^\s*[- ]?dollars?\b", after, re.IGNORECASE):
        money = True  # "25 dollar pens", "10 dollars each"
    if money:
        after = re.sub(r"^\s*cents?\b", "", after, flags=re.IGNORECASE)
        got = _MONEY_RATE_AFTER.match(after)
        if got and _is_noun(got.group("per")):
            return "$/" + _unit_word(got.group("per"))
        got = _MONEY_THING_AFTER.match(after)
        if got and _is_noun(got.group("noun")) and _unit_word(got.group("noun")) != "$":
            return "$/" + _unit_word(got.group("noun"))
        got = _MONEY_THING_BEFORE.search(before)
        if (
            got
            and _is_noun(got.group("noun"))
            and got.group("noun").lower()
            not in (
                "paid",
                "spent",
                "bought",
                "sold",
                "pay",
                "spend",
                "buy",
                "sell",
                "earns",
                "earned",
                "makes",
                "made",
                "charges",
                "charged",
                "costs",
                "cost",
                "only",
                "just",
            )
        ):
            return "$/" + _unit_word(got.group("noun"))
        return "$"
    if _AGE_AFTER.match(after) or _AGE_BEFORE.search(before):
        return "year old"
    low = after.lower()
    for abbrev, key in _ABBREV_RATES.items():
        if re.match(rf"^\s*[- ]?{re.escape(abbrev)}\b", low):
            return key
    got = _RATE_AFTER.match(after)
    if got and got.group("unit").lower() not in _NOT_NOUNS and got.group("per").lower() not in _NOT_NOUNS:
        unit, per = _unit_word(got.group("unit")), _unit_word(got.group("per"))
        return f"{unit}/{per}"
    # The counted noun right after the number ("3 red apples"), not past an operator or a stop.
    words = re.match(r"^[\s-]*([A-Za-z][A-Za-z \-]*)", after)
    for w in _WORD.findall(words.group(1) if words else "")[:3]:
        lw = w.lower()
        if lw in _SKIP_ADJ:
            continue
        return _unit_word(lw)
    return ""
