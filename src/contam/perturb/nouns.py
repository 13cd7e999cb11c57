"""Head nouns of a mention: the noun a number counts ("3 red apples" -> "apple") and plural endings.

Shared by the lifter's guards (:mod:`contam.perturb.guards`) and the plausible-value caps
(:mod:`contam.perturb.plausible`), which both read what a number counts from the words after it.
"""

from __future__ import annotations

import re

from contam.perturb.records import Mention

_WORD = re.compile(r"[A-Za-z]+")
_SKIP_ADJ = {
    "more",
    "less",
    "fewer",
    "extra",
    "other",
    "additional",
    "new",
    "old",
    "big",
    "small",
    "large",
    "full",
    "whole",
    "different",
    "separate",
    "equal",
    "same",
    "identical",
    "total",
    "of",
    "times",
    "a",
    "an",
    "the",
    "each",
    "per",
}


def head_noun(text: str, m: Mention) -> str:
    """The noun a number counts ("3 red apples" -> "apple"), lower case and singular; "$" for money."""
    if m.kind in ("money", "cents"):
        return "$"
    if m.kind == "percent":
        return "%"
    for w in _WORD.findall(text[m.end : m.end + 40])[:3]:
        lw = w.lower()
        if lw in ("dollar", "dollars"):
            return "$"
        if lw in _SKIP_ADJ:
            continue
        return singular(lw)
    return ""


def singular(w: str) -> str:
    """A plural noun's singular, by its ending ("cherries" -> "cherry", "boxes" -> "box"); lower case in, out."""
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w
