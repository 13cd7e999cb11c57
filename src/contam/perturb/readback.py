"""The audit's second, independent check: read the variant question back from scratch.

The first audit checks the program against itself. This one ignores the template entirely: it
reads the original question and the variant question as plain text and checks that what the
variant *states* still holds together, and holds the way it held in the original:

``period``
    "N days a week" at most 7, "N weeks a year" at most 52, "N-day week" ... and a period the
    original stated whole ("7 days a week") is still whole;
``conversion``
    stated conversions ("1 Mb has 1000 kb", "12 inches in a foot") are the original's, and true
    where the fact is known;
``enumeration``
    a count written next to a list ("four children: A, B, C and D", "3 cookies, one of each
    flavor" after three flavors) still matches the list where it did in the original;
``ordinal``
    an ordinal ("on the fourth day") still fits the count it lives in ("a party in four days"):
    equal where it was equal, within it where it was within;
``definite``
    a definite count ("the two", "all 10 tests") is unchanged unless the variant introduces the
    same number of the same thing elsewhere.

Each check returns the names of what failed; nothing here imports the template modules.

>>> check("He works 5 days a week.", "He works 9 days a week.")
['period']
>>> check("Knowing that 1 Mb has 1000 kb.", "Knowing that 1 Mb has 3000 kb.")
['conversion']
>>> check("A party in four days. On the fourth day, 3 came.", "A party in six days. On the fourth day, 2 came.")
['ordinal']
"""

from __future__ import annotations

import re
from fractions import Fraction

from contam.perturb.mentions import FIXED_SIZE, MEASURES, NATURE_NOUNS, ORDINALS, TENS, UNITS

# The number words are the lifter's (contam.perturb.mentions); what is independent here is the
# reading of the variant question, not the vocabulary.
_UNITS = {**UNITS, **TENS, "hundred": 100}
_ORD = ORDINALS
_NUM = (
    r"(\d[\d,]*(?:\.\d+)?|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-(?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
)

#: How many of a unit a period holds.
_PERIOD = {
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
}
#: Known conversions: (small unit, large unit) -> how many small in one large.
_CONV = {
    ("kb", "mb"): {1000, 1024},
    ("mb", "gb"): {1000, 1024},
    ("gb", "tb"): {1000, 1024},
    ("g", "kg"): {1000},
    ("gram", "kilogram"): {1000},
    ("m", "km"): {1000},
    ("meter", "kilometer"): {1000},
    ("cm", "m"): {100},
    ("centimeter", "meter"): {100},
    ("mm", "cm"): {10},
    ("inch", "foot"): {12},
    ("foot", "yard"): {3},
    ("feet", "yard"): {3},
    ("ounce", "pound"): {16},
    ("oz", "lb"): {16},
    ("minute", "hour"): {60},
    ("second", "minute"): {60},
    ("hour", "day"): {24},
    ("day", "week"): {7},
    ("month", "year"): {12},
    ("ml", "l"): {1000},
    ("milliliter", "liter"): {1000},
    ("quart", "gallon"): {4},
    ("pint", "quart"): {2},
    ("cup", "pint"): {2},
    ("cent", "dollar"): {100},
    ("penny", "dollar"): {100},
    ("egg", "dozen"): {12},
    ("item", "dozen"): {12},
    ("year", "decade"): {10},
    ("year", "century"): {100},
}


def _val(tok: str) -> Fraction | None:
    t = tok.lower().replace(",", "")
    if t and t[0].isdigit():
        try:
            return Fraction(t)
        except ValueError:
            return None
    if "-" in t:
        a, b = t.split("-", 1)
        return Fraction(_UNITS[a] + _UNITS[b]) if a in _UNITS and b in _UNITS else None
    return Fraction(_UNITS[t]) if t in _UNITS else None


def _sing(w: str) -> str:
    w = w.lower()
    if w == "feet":
        return "foot"
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("ches") or w.endswith("shes"):
        return w[:-2]
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 2 else w


_PERIOD_RE = re.compile(
    rf"\b{_NUM}\s*[- ]?(day|week|month|hour|minute|second|night)s?(?:\s+(?:a|an|per|each|every|in\s+a|in\s+an)\s+|[- ](?:work\s*|school\s*)?)"
    r"(week|month|year|day|hour|minute)\b",
    re.IGNORECASE,
)


def periods(text: str) -> list[tuple[int, str, str, Fraction]]:
    """(position, unit, period, N) for every "N <unit> a <period>" statement."""
    out = []
    for m in _PERIOD_RE.finditer(text):
        v = _val(m.group(1))
        if v is not None and (_sing(m.group(2)), _sing(m.group(3))) in _PERIOD:
            out.append((m.start(), _sing(m.group(2)), _sing(m.group(3)), v))
    return out


_CONV_RE = re.compile(
    rf"\b(?:a|an|one|1|each|every)\s+([A-Za-z]+)\s+(?:has|have|is|equals|contains|holds|=|makes|is\s+equal\s+to|are)\s+{_NUM}\s+([A-Za-z]+)"
    rf"|\b{_NUM}\s+([A-Za-z]+)\s+(?:in|per|make|makes|=|equals?)\s+(?:a|an|one|1|each)\s+([A-Za-z]+)",
    re.IGNORECASE,
)


def conversions(text: str) -> list[tuple[str, str, Fraction]]:
    """(small unit, large unit, N) for stated conversions ("1 Mb has 1000 kb", "12 inches in a foot")."""
    out = []
    for m in _CONV_RE.finditer(text):
        if m.group(1):
            big, n, small = m.group(1), m.group(2), m.group(3)
        else:
            n, small, big = m.group(4), m.group(5), m.group(6)
        v = _val(n)
        small, big = _sing(small), _sing(big)
        # "16 cups in a gallon", "a table has 4 legs", "a deck has 52 cards": a definition. "A
        # basket has 25 oranges" and "each bag weighs 50 pounds" are story quantities a variant
        # may change.
        if v is not None and (
            (small, big) in _CONV
            or all(w in MEASURES for w in (small, big))
            or any(w in FIXED_SIZE or w.startswith(NATURE_NOUNS) for w in (small, big))
        ):
            out.append((small, big, v))
    return out


_COUNTED_LIST = re.compile(
    rf"\b(?i:{_NUM})\s+([a-z]+)(?:\s+[a-z]+){{0,3}}\s*(?::|—|–|-|,|\(|\bnamed\b|\bcalled\b|\bincluding\b|\bare\b)\s*"
    r"((?:[A-Z][a-z]+\s*,\s*)+(?:and\s+)?[A-Z][a-z]+|[A-Z][a-z]+\s+and\s+[A-Z][a-z]+)"
)


def counted_lists(text: str) -> list[tuple[Fraction, int]]:
    """(stated count, listed names) for "four children—Akbar, Alessandro, Helene, and Wilfred"."""
    out = []
    for m in _COUNTED_LIST.finditer(text):
        v = _val(m.group(1))
        if v is not None:
            out.append((v, len(re.findall(r"[A-Z][a-z]+", m.group(3)))))
    return out


def _kinds_listed(text: str) -> int:
    """How many kinds a question lists as "9 oatmeal cookies, 4 chocolate chip cookies, and 5 sugar cookies"."""
    best = 0
    for m in re.finditer(rf"(?:{_NUM}\s+[a-z][a-z ]*?\s*,\s*)+(?:and\s+)?{_NUM}\s+[a-z][a-z ]*", text):
        best = max(best, len(re.findall(rf"\b{_NUM}\s+[a-z]", m.group(0))))
    return best


def each_kind(text: str) -> list[Fraction]:
    """Counts stated as "N ..., one of each" (N must be the number of kinds listed)."""
    return [v for m in re.finditer(rf"\b{_NUM}\s+[a-z]+[^.]*?,\s*one\s+of\s+each\b", text) if (v := _val(m.group(1))) is not None]


_ORD_RE = re.compile(r"\b(" + "|".join(_ORD) + r")\s+([a-z]+)", re.IGNORECASE)


def ordinal_fits(text: str) -> list[tuple[str, int, Fraction]]:
    """(noun, ordinal, count) for every ordinal and every count of the same noun in ``text``."""
    counts: dict[str, list[Fraction]] = {}
    for m in re.finditer(rf"\b{_NUM}\s+([a-z]+)", text, re.IGNORECASE):
        v = _val(m.group(1))
        if v is not None:
            counts.setdefault(_sing(m.group(2)), []).append(v)
    out = []
    for m in _ORD_RE.finditer(text):
        noun = _sing(m.group(2))
        for c in counts.get(noun, []):
            out.append((noun, _ORD[m.group(1).lower()], c))
    return out


_DEF_RE = re.compile(rf"\b(?:the|all|these|those|both)\s+{_NUM}(?:\s+([a-z]+))?", re.IGNORECASE)


def definites(text: str) -> list[tuple[Fraction, str, int]]:
    """(value, noun, position) of definite counts: "the two", "all 10 tests", "the four of them"."""
    out = []
    for m in _DEF_RE.finditer(text):
        v = _val(m.group(1))
        if v is not None:
            out.append((v, _sing(m.group(2) or ""), m.start()))
    return out


def check(original: str, variant: str) -> list[str]:
    """Names of the readback checks ``variant`` fails, judged against what held in ``original``."""
    failed: list[str] = []
    po, pv = periods(original), periods(variant)
    bad = any(n > _PERIOD[(u, p)] for _, u, p, n in pv)
    whole_o = [(u, p) for _, u, p, n in po if n == _PERIOD[(u, p)]]
    whole_v = [(u, p) for _, u, p, n in pv if n == _PERIOD[(u, p)]]
    if bad or len(po) != len(pv) or any(whole_o.count(k) > whole_v.count(k) for k in whole_o):
        failed.append("period")
    co, cv = conversions(original), conversions(variant)
    # A known conversion stated wrongly fails unless the original already stated it so ("12 hours in a day" of a work day).
    if sorted(co) != sorted(cv) or any(n not in _CONV[(s, b)] and (s, b, n) not in co for s, b, n in cv if (s, b) in _CONV):
        failed.append("conversion")
    lo, lv = counted_lists(original), counted_lists(variant)
    kinds_o, kinds_v = _kinds_listed(original), _kinds_listed(variant)
    if sum(c == n for c, n in lo) > sum(c == n for c, n in lv) or sum(v == kinds_o for v in each_kind(original)) > sum(
        v == kinds_v for v in each_kind(variant)
    ):
        failed.append("enumeration")
    fo, fv = ordinal_fits(original), ordinal_fits(variant)
    if sum(k == c for _, k, c in fo) > sum(k == c for _, k, c in fv) or sum(k <= c for _, k, c in fo) > sum(k <= c for _, k, c in fv):
        failed.append("ordinal")
    do, dv = definites(original), definites(variant)
    plain_v: dict[tuple[Fraction, str], int] = {}
    for m in re.finditer(rf"\b{_NUM}\s+([a-z]+)", variant, re.IGNORECASE):
        v = _val(m.group(1))
        if v is not None:
            key = (v, _sing(m.group(2)))
            plain_v[key] = plain_v.get(key, 0) + 1
    if len(do) != len(dv):
        failed.append("definite")
    else:
        for (vo, _no, _), (vv, nv, _) in zip(do, dv, strict=True):
            # Changed definite count: fine only when the variant states that many of that noun plainly too.
            if vo != vv and (not nv or plain_v.get((vv, nv), 0) < 2):
                failed.append("definite")
                break
    return failed
