"""Text normalisation shared by every detector, with character offsets kept.

The GPT-3 / lm-eval convention: Unicode NFKC, lowercase, punctuation dropped, words split on
whitespace. :func:`words_with_spans` keeps each word's span in the *original* text so
evidence can be shown where it was found.
"""

from __future__ import annotations

import re
import unicodedata

# A "word" is a run of letters/digits (Unicode-aware); everything else separates words.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SPACE = re.compile(r"\s+")


def nfkc(text: str) -> str:
    """NFKC-normalise and drop zero-width characters, keeping length changes out of spans."""
    return unicodedata.normalize("NFKC", text)


def normalize(text: str) -> str:
    """Lowercase, NFKC, punctuation removed, whitespace collapsed.

    >>> normalize("Janet’s  ducks lay 16 eggs!")
    'janet s ducks lay 16 eggs'
    """
    return " ".join(m.group(0) for m in _WORD.finditer(nfkc(text).casefold()))


def words(text: str) -> list[str]:
    """Normalised words of ``text``.

    >>> words("How many? 3,000 apples.")
    ['how', 'many', '3', '000', 'apples']
    """
    return [m.group(0).casefold() for m in _WORD.finditer(text)]


def words_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Normalised words with their ``(start, end)`` character span in ``text``.

    Case folding is done per word, so spans refer to the original string.

    >>> words_with_spans("Hi, Bob")
    [('hi', 0, 2), ('bob', 4, 7)]
    """
    return [(m.group(0).casefold(), m.start(), m.end()) for m in _WORD.finditer(text)]


def collapse_whitespace(text: str) -> str:
    """Strip and collapse runs of whitespace to one space."""
    return _SPACE.sub(" ", text).strip()
