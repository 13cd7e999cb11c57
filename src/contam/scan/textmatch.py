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


@lru_cache(maxsize=65536)
def _numbers(text: str) -> frozenset[str]:
    found = frozenset(m.group().replace(",", "").rstrip(".") for m in _NUMBER.finditer(fold_digits(text))) | spelled_numbers(text)
    return found - labels(text)


def number_recall(candidate: str, views: Sequence[str]) -> float:
    """Share of the numbers of the best of ``views`` that ``candidate`` also writes; NaN when no view
    holds two distinct numbers (too few to tell).

    >>> number_recall("Sie hatte 16 Eier und aß 3.", ["Janet's ducks lay 16 eggs. She eats 3 and bakes with 4."])
    0.666667
    """
    c = _numbers(candidate)
    best = float("nan")
    for v in views:
        s = _numbers(v)
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
    noun is capitalised (``Steven hat 18 Pfirsiche``), so capitalised words tell nothing there.

    >>> specifics_overlap("A class of 40 pupils: 80% own dogs, 25% of those parakeets.",
    ...                   ["In a class of 40 students, 80% have puppies and 25% of them parrots."])
    1.0
    """
    c = specifics(candidate, names)
    best = float("nan")
    for v in views:
        s = specifics(v, names)
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
