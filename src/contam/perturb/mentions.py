"""Finding the numbers a word problem states: digits, money, percents, number words, and frozen forms.

A *mention* is a span of the question with a value. Digits (``16``, ``80,000``, ``$1.50``,
``20%``) and cardinal words (``three``, ``twenty-five``) can be rewritten; multiplier and
fraction words (``twice``, ``half``, ``a dozen``, ``two-thirds``), ordinals, clock times and
years are *frozen*: the program may read them, but an instance never changes them (rewriting
"half" into another fraction word would change the grammar, and a clock time has its own
arithmetic).

>>> [(m.text, m.value, m.kind) for m in find_mentions("She eats three of 16 eggs and sells half for $2.50.")]
[('three', '3', 'word'), ('16', '16', 'int'), ('half', '1/2', 'fraction'), ('2.50', '5/2', 'money')]
"""

from __future__ import annotations

import re
from fractions import Fraction

from contam.perturb.records import Mention

UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
SCALE_WORDS = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
UNIT_NAMES = {v: k for k, v in UNITS.items()}
TENS_NAMES = {v: k for k, v in TENS.items()}

# Multipliers: value, and what the solution may write instead (``half`` is 0.5 or "/2").
MULTIPLIERS: dict[str, tuple[Fraction, tuple[Fraction, ...]]] = {
    "twice": (Fraction(2), ()),
    "double": (Fraction(2), ()),
    "doubled": (Fraction(2), ()),
    "doubles": (Fraction(2), ()),
    "triple": (Fraction(3), ()),
    "tripled": (Fraction(3), ()),
    "triples": (Fraction(3), ()),
    "thrice": (Fraction(3), ()),
    "quadruple": (Fraction(4), ()),
    "quadrupled": (Fraction(4), ()),
    "once": (Fraction(1), ()),
    "dozen": (Fraction(12), ()),
    "dozens": (Fraction(12), ()),
    "pair": (Fraction(2), ()),
    "pairs": (Fraction(2), ()),
    "half": (Fraction(1, 2), (Fraction(2),)),
    "halves": (Fraction(1, 2), (Fraction(2),)),
    "quarter": (Fraction(1, 4), (Fraction(4), Fraction(25))),
    "quarters": (Fraction(1, 4), (Fraction(4), Fraction(25))),
    "score": (Fraction(20), ()),
    "decade": (Fraction(10), ()),
    "decades": (Fraction(10), ()),
    "century": (Fraction(100), ()),
    "centuries": (Fraction(100), ()),
}
FRACTION_DENOMS = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "quarter": 4,
    "quarters": 4,
    "fourth": 4,
    "fourths": 4,
    "fifth": 5,
    "fifths": 5,
    "sixth": 6,
    "sixths": 6,
    "seventh": 7,
    "sevenths": 7,
    "eighth": 8,
    "eighths": 8,
    "ninth": 9,
    "ninths": 9,
    "tenth": 10,
    "tenths": 10,
}
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
}

# Known constants a solution may use without the question stating them, each licensed by a
# keyword in the problem (60 needs minutes/hours/seconds, 7 needs a week, ...). 1 is always allowed.
#: "second" as a unit of time, not the ordinal of "Elijah's second dog" (gsm8k/test/1123).
SECOND_UNIT = r"\bseconds\b|\b(?:per|a|one|each|every|\d+)\s+second\b"
CONSTANTS: tuple[tuple[Fraction, str], ...] = (
    (Fraction(60), rf"minute|hour|{SECOND_UNIT}|mph|per hour"),
    (Fraction(24), r"hour|day"),
    (Fraction(7), r"week|day"),
    (Fraction(12), r"dozen|month|year|inch|foot|feet|annual"),
    (Fraction(52), r"week|year"),
    (Fraction(365), r"year|day|annual"),
    (Fraction(366), r"leap"),
    (Fraction(30), r"month"),
    (Fraction(31), r"month|january|march|may|july|august|october|december"),
    (Fraction(28), r"february"),
    (Fraction(4), r"quarter|week|month|quadruple|season"),
    (Fraction(3), r"triple|third|thrice|yard|feet|foot|tricycle|triplet"),
    (Fraction(2), r"half|halves|twice|double|pair|both|couple|twin|bicycle|biweekly|semi|every other|each other|round trip|back|weekend"),
    (Fraction(100), r"percent|%|cent|century|centuries|meter|hundred"),
    (Fraction(1000), r"thousand|kilo|gram|liter|litre|millimet|ml\b|kg\b|km\b"),
    (Fraction(10), r"dime|decade"),
    (Fraction(5), r"nickel|weekday"),  # five weekdays, two weekend days: facts of the calendar
    (Fraction(25), r"quarter"),
    (Fraction(16), r"ounce|pound"),
    (Fraction(8), r"pint|gallon|quart"),
    (Fraction(36), r"yard"),
    (Fraction(5280), r"mile"),
    (Fraction(1, 2), r"half|halves"),
    (Fraction(1, 4), r"quarter"),
    (Fraction(1, 100), r"percent|%|cent"),
    (Fraction(1), r""),
)

_DIGITS = re.compile(
    r"(?<![\w.,/:])(?P<dollar>\$\s?)?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<after>\s?(?:%|percent\b|per cent\b)|\s?cents?\b|(?:st|nd|rd|th)\b|\s?(?:a\.m\.|p\.m\.|am\b|pm\b)|:\d\d?(?!\d)|/\d+)?"
)
_WORD_NUM = re.compile(
    r"\b(?:(?P<tens>" + "|".join(TENS) + r")(?:[- ](?P<unit1>" + "|".join(k for k in UNITS if UNITS[k] < 10 and UNITS[k] > 0) + r"))?"
    r"|(?P<unit>" + "|".join(UNITS) + r"))(?:[- ](?P<scale>hundred|thousand|million))?\b",
    re.IGNORECASE,
)
_FRACTION_WORD = re.compile(
    r"\b(?:(?P<num>a|an|one|two|three|four|five|six|seven|eight|nine)[- ])?(?P<den>" + "|".join(FRACTION_DENOMS) + r")\b",
    re.IGNORECASE,
)
_MULT_WORD = re.compile(r"\b(?P<w>" + "|".join(MULTIPLIERS) + r")\b", re.IGNORECASE)
_ORDINAL_WORD = re.compile(r"\b(?P<w>" + "|".join(ORDINALS) + r")\b", re.IGNORECASE)
_YEAR_CONTEXT = re.compile(
    r"(?:\bin|\bof|\bsince|\buntil|\bby|\bfrom|\bto|\byear|\bjanuary|\bfebruary|\bmarch|\bapril|\bmay|\bjune"
    r"|\bjuly|\baugust|\bseptember|\boctober|\bnovember|\bdecember|,)\s*$",
    re.IGNORECASE,
)


def _frac_str(x: Fraction) -> str:
    return str(x)


def find_mentions(text: str) -> list[Mention]:
    """Every number mention of ``text``, sorted by position, spans never overlapping."""
    found: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    def add(m: Mention) -> None:
        found.append(m)
        taken.append((m.start, m.end))

    for m in _DIGITS.finditer(text):
        raw = m.group("num")
        value = Fraction(raw.replace(",", ""))
        after = (m.group("after") or "").strip().lower()
        start, end = m.start("num"), m.end("num")
        if after.startswith("/"):  # "3/4": a written fraction, frozen (numerator, denominator and quotient)
            den = Fraction(after[1:])
            if den == 0:
                continue
            add(
                Mention(
                    start,
                    m.end(),
                    m.group(0).lstrip("$ "),
                    _frac_str(value / den),
                    "fraction",
                    False,
                    ("1", _frac_str(value / (value / den)) if value else "1", _frac_str(den / (value / den)) if value else "1"),
                )
            )
            continue
        if (
            after.startswith(":")
            and re.search(r"(?:ratio|proportion)[^.]{0,120}$", text[max(0, start - 140) : start], re.IGNORECASE)
            and not re.match(r"\s*(?:am|pm|a\.m|p\.m|o'clock)", text[m.end() :], re.IGNORECASE)
        ):
            # "in the ratio 7:11": two plain numbers, not a clock time.
            second = m.end() - len(after) + 1
            add(Mention(start, end, raw, _frac_str(value), "int", value not in (0, 1)))
            add(Mention(second, m.end(), after[1:], after[1:].lstrip("0") or "0", "int", int(after[1:]) not in (0, 1)))
            continue
        if (after.startswith(":") and len(after) == 3) or after in ("am", "pm", "a.m.", "p.m."):
            add(Mention(start, end, raw, _frac_str(value), "time", False))
            continue
        if after in ("st", "nd", "rd", "th"):
            add(Mention(start, end, raw, _frac_str(value), "ordinal", False))
            continue
        if after in ("%", "percent", "per cent"):
            add(Mention(start, end, raw, _frac_str(value), "percent", value not in (0, 100), ("1", "1/100")))
            continue
        if after.startswith("cent"):
            add(Mention(start, end, raw, _frac_str(value), "cents", value > 1, ("1", "1/100")))
            continue
        if m.group("dollar"):
            add(Mention(start, end, raw, _frac_str(value), "money", value not in (0, 1)))
            continue
        is_int = value.denominator == 1 and "." not in raw
        if is_int and "," not in raw and 1900 <= value <= 2099 and _YEAR_CONTEXT.search(text[max(0, start - 12) : start]):
            add(Mention(start, end, raw, _frac_str(value), "year", False))
            continue
        kind = "int" if is_int else "decimal"
        add(Mention(start, end, raw, _frac_str(value), kind, value not in (0, 1)))

    for m in _FRACTION_WORD.finditer(text):
        den_word = m.group("den").lower()
        num_word = (m.group("num") or "").lower()
        den = FRACTION_DENOMS[den_word]
        if not num_word and den_word in ORDINALS and den_word not in ("half", "quarter"):
            continue  # bare "third" is an ordinal, handled below
        num = 1 if num_word in ("", "a", "an") else UNITS[num_word]
        value = Fraction(num, den)
        if free(m.start(), m.end()):
            add(
                Mention(
                    m.start(),
                    m.end(),
                    m.group(0),
                    _frac_str(value),
                    "fraction",
                    False,
                    ("1", _frac_str(Fraction(den) / value), _frac_str(Fraction(num) / value)),
                )
            )
    for m in _MULT_WORD.finditer(text):
        w = m.group("w").lower()
        value, alts = MULTIPLIERS[w]
        if free(m.start(), m.end()):
            add(
                Mention(m.start(), m.end(), m.group(0), _frac_str(value), "multiplier", False, ("1", *(_frac_str(a / value) for a in alts)))
            )
    for m in _WORD_NUM.finditer(text):
        if not free(m.start(), m.end()):
            continue
        if m.group("tens"):
            value = TENS[m.group("tens").lower()] + (UNITS[m.group("unit1").lower()] if m.group("unit1") else 0)
        else:
            value = UNITS[m.group("unit").lower()]
        if m.group("scale"):
            value *= SCALE_WORDS[m.group("scale").lower()]
        add(Mention(m.start(), m.end(), m.group(0), str(value), "word", value >= 2))
    for m in re.finditer(r"\b(?P<a>a|one)[- ](?P<s>hundred|thousand)\b", text, re.IGNORECASE):
        if free(m.start(), m.end()):
            add(Mention(m.start(), m.end(), m.group(0), str(SCALE_WORDS[m.group("s").lower()]), "multiplier", False))
    for m in _ORDINAL_WORD.finditer(text):
        if free(m.start(), m.end()):
            add(Mention(m.start(), m.end(), m.group(0), str(ORDINALS[m.group("w").lower()]), "ordinal", False))
    found.sort(key=lambda x: x.start)
    return found


def licensed_constants(text: str) -> list[Fraction]:
    """Constants the solution may use without a mention, given the keywords present in ``text``."""
    low = text.lower()
    return [value for value, pattern in CONSTANTS if not pattern or re.search(pattern, low)]


def word_for(n: int) -> str | None:
    """English cardinal for 0..999 (``"twenty-five"``), or None."""
    if n < 0 or n >= 1000:
        return None
    if n < 20:
        return UNIT_NAMES[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return TENS_NAMES[tens * 10] + (f"-{UNIT_NAMES[unit]}" if unit else "")
    hundreds, rest = divmod(n, 100)
    head = f"{UNIT_NAMES[hundreds]} hundred"
    return head if rest == 0 else f"{head} {word_for(rest)}"


#: Counts fixed by nature: legs of a table, wheels of a car, sides of a square ...
NATURE_NOUNS = (
    "leg",
    "wheel",
    "wing",
    "side",
    "corner",
    "eye",
    "arm",
    "hand",
    "finger",
    "toe",
    "teeth",  # "James has 30 teeth": 60 teeth is no person's (gsm8k/test/1179)
    "tooth",
    "ear",
    "face",
    "vertice",
    "vertex",
    "edge",
    "season",
    "continent",
    "player",
    # "15 4-legged animals", "a 3-wheeled cart": the count is the kind of thing, not a quantity.
    "legged",
    "wheeled",
    "sided",
    "winged",
    "footed",
    "eyed",
    "headed",
)
#: Units of measure: a stated "N x in a y" or "a y has N x" between two of them is a conversion
#: ("16 cups in a gallon", "1 Mb has 1000 kb"); with one ("each flagstone weighs 75 pounds") it
#: is a story quantity.
MEASURES = frozenset(
    "second minute hour day week month year decade century "
    "inch foot feet yard mile meter metre centimeter centimetre millimeter millimetre kilometer kilometre km cm mm ft "
    "ounce pound gram kilogram kg mg ton tonne lb oz "
    "cup pint quart gallon liter litre milliliter millilitre ml tablespoon teaspoon tbsp tsp "
    "bit byte kb mb gb tb kilobyte megabyte gigabyte terabyte "
    "cent penny pennie nickel dime quarter dollar $ "
    "dozen pair score degree".split()
)
#: Things whose size is a fact ("52 cards in a deck", "3 angles in a triangle"): one of these
#: named in a stated "N x in a y" makes it a definition.
FIXED_SIZE = frozenset("deck triangle square rectangle pentagon hexagon octagon cube die dice clock alphabet".split())
