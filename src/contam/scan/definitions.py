"""Term definitions a rewrite adds so it can swap a benchmark's key terms for stand-ins.

A symbol-replaced rewrite (MMLU-SR's recipe: Wang et al. 2024, "Reasoning or Simply Next Token
Prediction?") keeps an item's question and options but replaces its key terms with unrelated words,
each introduced by a quoted definition: ``Suppose 'Dragon' means 'The highest power of the variable
in a polynomial.'``. The definitions are new text, often longer than the question itself, so they
pull the whole text's embedding away from the item it was made from; what is left once they are
removed is the item with a few words swapped, which the semantic level finds like any rephrasing.

Only definitions that open with "Suppose", "Assume", "Let" or "Say" and quote both the term and
its meaning are removed: their extent is then unambiguous, and prose that merely uses "means" (a
benchmark item that defines a word, copied verbatim) is left alone.

>>> text = "Suppose 'Dragon' means 'The highest power of the variable.' Find the Dragon of x^2 + 1."
>>> strip_definitions(text)
('Find the Dragon of x^2 + 1.', 1)
>>> strip_definitions("Let f denote the map; this means 'onto'.")
("Let f denote the map; this means 'onto'.", 0)
"""

from __future__ import annotations

import re

__all__ = ["strip_definitions"]

#: How a definition links its term to its meaning.
_VERBS = ("means", "denotes", "stands for", "refers to", "represents", "is defined as")
_LINK = "|".join(v.replace(" ", r"\s+") for v in _VERBS)
# A defined term is short (a word or two), quoted; the meaning is quoted too and ends at the first
# closing quote followed by a space, the end or a capital (the next sentence, run on): an apostrophe
# inside the meaning ("goddess's") is followed by a lowercase letter.
_DEFINITION = re.compile(
    r"\b(?:Suppose|Assume|Let|Say)\s+(?:that\s+)?"
    r"(?P<q>['\"‘“])[^'\"‘’“”\n]{1,40}['\"’”]\s+"
    rf"(?:{_LINK})\s+"
    r"(?P<m>['\"‘“]).{1,600}?['\"’”]\.?(?=\s|$|[A-Z])",
    re.S,
)
# The longest word of each verb, which every match holds: one scan for it halves the cost on text
# without definitions (4.8 against 10 µs per GSM8K-train document).
_CUE = re.compile("|".join(max(v.split(), key=len) for v in _VERBS))


def strip_definitions(text: str) -> tuple[str, int]:
    """``text`` without its quoted term definitions, and how many were removed.

    Spaces left where a definition stood are collapsed, so a stripped text reads as the item would.
    """
    if not _CUE.search(text):  # most documents: one cheap scan
        return text, 0
    out, n = _DEFINITION.subn(" ", text)
    if not n:
        return text, 0
    out = re.sub(r"[ \t]{2,}", " ", out)
    out = re.sub(r"(^|\n)[ \t]+", r"\1", out)
    return out.strip(), n
