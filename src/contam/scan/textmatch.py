"""What a rephrasing, a translation or a port to another programming language keeps of its source,
and another item of the same genre rarely shares: the semantic level's text features.

* :func:`specifics` — numbers (any script's digits), quoted literals and names;
* :func:`number_recall` — the share of an item's numbers that a candidate states;
* :func:`pieces` — lower-case word pieces with code identifiers split (``hasCloseElements`` and
  ``has_close_elements`` both give ``has close elements``), so a port of a function to C++ or
  JavaScript meets its Python source through its names as well as its comments.

All are cheap (regular expressions over two short texts) and run only on a candidate's nearest item.

>>> sorted(pieces("def hasCloseElements(numbers: List[float]) -> bool:"))
['bool', 'close', 'def', 'elements', 'float', 'has', 'hascloseelements', 'list', 'numbers']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from contam.data.language import fold_digits

# A number may follow any letter of a script without spaces (Chinese "有5个", Japanese "5個"), but not a
# Latin letter, a digit or a point (an identifier like "x2", a version, the tail of a decimal).
_NUMBER = re.compile(r"(?<![0-9A-Za-z_.])\d+(?:[.,]\d+)*")
_QUOTED = re.compile(r"'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_SPACES = re.compile(r"\s+")
_PIECE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)


_UNITS = (
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_CARDINAL = {w: i for i, w in enumerate(_UNITS, 2)} | {w: 10 * i for i, w in enumerate(_TENS, 2)} | {"one": 1, "dozen": 12}
_PARTS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4, "fifth": 5, "fifths": 5}
_TIMES = {
    "twice": 2,
    "double": 2,
    "doubled": 2,
    "doubles": 2,
    "thrice": 3,
    "triple": 3,
    "tripled": 3,
    "triples": 3,
    "quadruple": 4,
    "quadrupled": 4,
}
_SPELLED = re.compile(
    r"\b(?:(?P<n>" + "|".join(sorted(_CARDINAL, key=len, reverse=True)) + r")(?:[- ](?P<u>" + "|".join(_UNITS[:8]) + r"))?"
    r"(?:[- ](?P<big>hundred|thousand))?(?:[- ](?P<part>" + "|".join(_PARTS) + r")|[- ]?(?P<fold>fold))?"
    r"|(?P<lone>" + "|".join(list(_PARTS) + list(_TIMES)) + r"))\b"
)  # matched against the lower-cased text: 4x faster than re.IGNORECASE here


@lru_cache(maxsize=65536)
def spelled_numbers(text: str) -> frozenset[str]:
    """The numbers an English text writes in words, as digits, the way the same number written in
    digits is read: "two-thirds" gives 2 and 3 (like "2/3"), "twenty-five" 25, "two hundred" 200,
    "twice" or "double" 2, "fourfold" 4, "a third" 3. A lone "one" is left out (a pronoun as often
    as a number). Far rephrasings spell out the small numbers their source wrote in digits.

    >>> sorted(spelled_numbers("She sold two-thirds of twenty-five pies, twice; a fourfold rise of one hundred."), key=int)
    ['2', '3', '4', '25', '100']
    """
    out: set[str] = set()
    for m in _SPELLED.finditer(text.lower()):
        if m.group("lone"):
            w = m.group("lone")
            out.add(str(_PARTS.get(w) or _TIMES[w]))
            continue
        n = _CARDINAL[m.group("n")] + (_CARDINAL[m.group("u")] if m.group("u") else 0)
        if m.group("big"):
            n *= 100 if m.group("big") == "hundred" else 1000
        part = m.group("part")
        if part:
            out.add(str(_PARTS[part]))
        if n != 1 or part or m.group("big") or m.group("fold"):
            out.add(str(n))
    return frozenset(out)


@lru_cache(maxsize=65536)
def specifics(text: str, names: bool = True) -> frozenset[str]:
    """What a paraphrase keeps and a different problem of the same genre rarely shares: the
    numbers written in ``text`` (any script's digits, thousands separators dropped), its quoted
    literals and the capitalised names inside sentences (people, places, brands).

    >>> sorted(specifics("Natalia sold 48 clips in April and 1,200 in 'May'.  She kept 2."))  # a sentence's first word is not a name
    ['1200', '2', '48', 'April', 'May', 'may']
    >>> sorted(specifics("নাটালিয়া এপ্রিলে ৪৮ টি ক্লিপ বিক্রি করেছিল")), sorted(specifics("杰克有5个苹果，又买了12个。"))
    (['48'], ['12', '5'])
    """
    text = fold_digits(text)
    out = set(_numbers(text))
    out.update((m.group(1) or m.group(2)).strip().lower() for m in _QUOTED.finditer(text))
    if names:
        # One space between words first: GSM8K puts two after a full stop, and the look-behind
        # that skips a sentence's first word sees one character only ("She", "How" were names).
        out.update(m.group() for m in _NAME.finditer(_SPACES.sub(" ", text)))
    out.discard("")
    return frozenset(out)


_LABEL = re.compile(r"\b([A-Z][a-z]{2,}) (\d{1,2})\b")


@lru_cache(maxsize=65536)
def labels(text: str) -> frozenset[str]:
    """Numbers that only number the parts of a text: 1 to k after one capitalised word ("Statement 1 |
    ... Statement 2 | ...", "Example 1: ... Example 2: ..."). Every item of such a template states
    them, so they say nothing about which item a document copies: numbers and specifics leave them out.

    >>> sorted(labels("Statement 1 | Every group of order 6 is cyclic. Statement 2 | Z_3 has 3 elements."))
    ['1', '2']
    >>> sorted(labels("Table 2 shows 3 rows."))  # one number after the word: not a list's labels
    []
    """
    by: dict[str, set[int]] = {}
    for m in _LABEL.finditer(text):
        by.setdefault(m.group(1), set()).add(int(m.group(2)))
    return frozenset(str(n) for ns in by.values() if len(ns) >= 2 and ns == set(range(1, len(ns) + 1)) for n in ns)


# Digit groups of three set apart by a space inside prose (Spanish and Russian "711 988 habitantes"), or
# by a no-break or thin space anywhere (Russian "17\u00a0786\u00a0419"). A plain space counts only
# between words, so that code's "modp 100 101" and "2 300-page books" stay two numbers.
_SPACED_GROUPS = re.compile(r"(?<=[^\W\d_] )[1-9]\d{0,2}(?: \d{3})+(?= [^\W\d_])|(?<!\d)[1-9]\d{0,2}(?:[\u00a0\u202f\u2009]\d{3})+(?!\d)")
_SEPARATOR = re.compile(r"[.,]")


def canonical_number(token: str) -> str:
    """One spelling of a number however a locale groups its digits or marks its decimals, so that a
    German "74.000" or "56,2" meets the English "74,000" or "56.2".

    A separator before exactly three digits after a leading group of 1-3 (not "0") groups thousands;
    a lone separator before another count of digits is the decimal point; with two kinds of separator
    the last is the decimal point. Anything else (a list "4,2,3", a version "1.2.3") keeps its points
    and drops its commas, as before. Ambiguous "3.141" reads as 3141 on both sides of a comparison alike.

    >>> [canonical_number(t) for t in ("74.000", "74,000", "1.234.567", "56,2", "1.50", "0.039", "1.234,5", "4,2,3")]
    ['74000', '74000', '1234567', '56.2', '1.50', '0.039', '1234.5', '423']
    """
    parts = _SEPARATOR.split(token)
    if len(parts) == 1:
        return token
    seps = _SEPARATOR.findall(token)
    if len(set(seps)) == 2 and seps[-1] not in seps[:-1]:
        return "".join(parts[:-1]) + "." + parts[-1]
    if len(set(seps)) == 1 and parts[0][:1] != "0" and len(parts[0]) <= 3 and all(len(p) == 3 for p in parts[1:]):
        return "".join(parts)
    if len(parts) == 2:
        return parts[0] + "." + parts[1]
    return token.replace(",", "")


@lru_cache(maxsize=65536)
def _digit_numbers(text: str) -> frozenset[str]:
    """The numbers ``text`` writes in digits of any script, in :func:`canonical_number` spelling."""
    text = _SPACED_GROUPS.sub(lambda m: "".join(m.group().split()), fold_digits(text))
    return frozenset(canonical_number(m.group().rstrip(".")) for m in _NUMBER.finditer(text)) - labels(text)


@lru_cache(maxsize=65536)
def _numbers(text: str) -> frozenset[str]:
    return _digit_numbers(text) | (spelled_numbers(text) - labels(text))


def _across(text: str, other: str) -> frozenset[str]:
    """The numbers of ``text`` that count against ``other``, a text in another language: its digits, and
    the numbers it spells in English words only where ``other`` states them (a translation spells its
    own words, so an English "three" it renders as "tres" is no disagreement)."""
    return _digit_numbers(text) | (spelled_numbers(text) & _numbers(other))


def number_recall(candidate: str, views: Sequence[str], across: bool = False) -> float:
    """Share of the numbers of the best of ``views`` that ``candidate`` also writes; NaN when no view
    holds two distinct numbers (too few to tell). ``across``: ``candidate`` is in another language
    than the views (see :func:`_across`).

    >>> number_recall("Sie hatte 16 Eier und aß 3.", ["Janet's ducks lay 16 eggs. She eats 3 and bakes with 4."])
    0.666667
    >>> number_recall("Tenía 16 huevos durante tres días.", ["She had 16 eggs for three days and ate 4."], across=True)
    0.5
    """
    c = _numbers(candidate)
    best = float("nan")
    for v in views:
        s = _across(v, candidate) if across else _numbers(v)
        if len(s) >= 2:
            r = len(c & s) / len(s)
            best = r if best != best or r > best else best
    return round(best, 6) if best == best else best


_WORDISH = re.compile(r"[^\W_]+", re.UNICODE)


@lru_cache(maxsize=65536)
def pieces(text: str) -> frozenset[str]:
    """Lower-case word pieces of ``text``: words, with camelCase and snake_case identifiers split
    (and each word whole as well, so rAnDoM case changes do not shatter it)."""
    return frozenset(m.group().lower() for m in _PIECE.finditer(text)) | frozenset(m.group().lower() for m in _WORDISH.finditer(text))


def word_overlap(candidate: str, views: Sequence[str]) -> float:
    """Jaccard overlap of the normalised word sets of ``candidate`` and the closest of ``views``
    (a word-level paraphrase keeps most words; another problem of the genre shares few).

    >>> word_overlap("Tom has three red apples", ["Tom has three green apples"])
    0.666667
    """
    from contam.data.normalize import words

    c = set(words(candidate))
    best = 0.0
    for v in views:
        s = set(words(v))
        if c | s:
            best = max(best, len(c & s) / len(c | s))
    return round(best, 6)


def piece_overlap(candidate: str, views: Sequence[str]) -> float:
    """Jaccard overlap of :func:`pieces` with the closest of ``views`` (identifiers split).

    >>> piece_overlap("function hasCloseElements(numbers, threshold)", ["def has_close_elements(numbers, threshold):"])
    0.625
    """
    c = pieces(candidate)
    best = 0.0
    for v in views:
        s = pieces(v)
        if c | s:
            best = max(best, len(c & s) / len(c | s))
    return round(best, 6)


def specifics_overlap(candidate: str, views: Sequence[str], least: int = 2, names: bool = True) -> float:
    """Jaccard overlap of :func:`specifics` between ``candidate`` and the closest of an item's
    ``views`` (question, whole text); NaN when fewer than ``least`` specifics are in play (too
    few to tell a paraphrase from a coincidence). ``names=False`` compares numbers and quoted
    literals only: across languages names are translated or transliterated, and in German every
    noun is capitalised (``Steven hat 18 Pfirsiche``), so capitalised words tell nothing there; and
    quoted words and numbers spelled in English count only where both texts hold them.

    >>> specifics_overlap("A class of 40 pupils: 80% own dogs, 25% of those parakeets.",
    ...                   ["In a class of 40 students, 80% have puppies and 25% of them parrots."])
    1.0
    >>> specifics_overlap('Von 711.988 Einwohnern waren 56,2 % "katholisch".',
    ...                   ['Of its 711,988 inhabitants, 56.2% were "Catholic", three in four.'], names=False)
    1.0
    """
    mine = specifics(candidate, names)
    best = float("nan")
    for v in views:
        c, s = mine, specifics(v, names)
        if not names:
            # Across languages a translator renders quoted words and spelled numbers in its own
            # words: they count where both texts hold them, and are no evidence either way where not.
            c, s = mine & (s | _across(candidate, v)), s & (mine | _across(v, candidate))
        union = len(c | s)
        if union >= least:
            j = len(c & s) / union
            best = j if best != best or j > best else best  # NaN-safe max
    return best


#: A line that opens a statement of Python, C, Java, JavaScript, Go, Rust and their kin, or a Python
#: doctest-style ``assert f(...)`` (MBPP's prompts): what makes a benchmark item a code task.
_CODE_LINE = re.compile(
    r"^[ \t]*(?:def\s+\w+\s*\(|class\s+\w+\s*[(:]|from\s+[\w.]+\s+import\s|import\s+[\w.]+[ \t]*$|assert\s+\w+\s*\("
    r"|#include\s*[<\"]|(?:public|private|static)\s+\w+|function\s+\w+\s*\(|fn\s+\w+\s*\(|func\s+\w+\s*\()",
    re.M,
)


def looks_like_code(text: str) -> bool:
    r"""Whether ``text`` holds a line of code (a definition, an import, an ``assert f(...)``): the
    semantic level judges documents whose nearest item is code with the code model.

    >>> looks_like_code("def add(a, b):\n    return a + b")
    True
    >>> looks_like_code("Write a function to add.\nassert add(1, 2) == 3")
    True
    >>> looks_like_code("Janet's ducks lay 16 eggs per day. How many does she sell?")
    False
    """
    return _CODE_LINE.search(text) is not None
