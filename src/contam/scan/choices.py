"""The options of a multiple-choice item as the semantic level's evidence: what a rephrasing keeps.

A rephrased multiple-choice question (GPT-4 rewriting MMLU, options permuted and relabelled) often
moves far from its source in wording, yet it keeps the options themselves -- "Tumor suppressor
gene", "The Treaty of Westphalia" -- as a rephrased math problem keeps its numbers. An option that
no other item of the benchmark offers says which item the document is about; three of them in one
document say it beyond chance. :class:`OptionIndex` counts, for a document and a benchmark item,
how many of the item's *distinctive* options (found among no other item's options nor in its own
question, at least :data:`MIN_CHARS` characters, not a bare number) the document writes word for
word (case, punctuation and spacing aside). The semantic level flags a document that writes every
distinctive option of its nearest item, at least :data:`KEPT` of them (``options kept``); its
shortlist sends such a document to the encoder whatever its static score. All of them, not three
of four: single-word options ("Avoidant", "Secure") recur inside another question's longer ones
("Insecure avoidant"); on PertEval's calib half every rewrite that kept three kept the fourth.

>>> from contam.data import Item
>>> items = [Item("m/1", "Which organelle makes ATP?", choices=("Mitochondrion", "Golgi apparatus", "Ribosome", "True")),
...          Item("m/2", "Is it true?", choices=("True", "False"))]
>>> idx = OptionIndex(items)
>>> idx.kept("Where is ATP produced? U. ribosome V. golgi apparatus W. mitochondrion X. true", 0)
3
>>> idx.kept("Where is ATP produced? U. ribosome V. golgi apparatus", 0), idx.kept("U. True V. False", 1)
(0, 0)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from contam.data import Item

#: Fewest distinctive options an item needs for the ``options kept`` clause (a document must write all of them).
KEPT = 3
#: Shortest option (in characters, after normalising) that counts: "Yes", "1914" or "ATP" are too common.
MIN_CHARS = 5
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: An option offered by at least this many items, and this share of the items with options, is a template's.
TEMPLATE_MIN = 5
TEMPLATE_SHARE = 0.01
#: One option on a line of its own: a capital letter label ("A.", "B)", "(C)", "D:") and the option's text.
_OPTION_LINE = re.compile(r"^\s*\(?[A-Z][.):]\)?\s+(\S.*?)\s*$")
#: The line that closes a multiple-choice item with its answer: a lone letter ("B", "(C)", "Answer: D").
_LETTER_LINE = re.compile(r"^\s*(?:answer\s*[:.]?\s*)?\(?[A-Z]\)?\.?\s*$", re.IGNORECASE)


def _bare_number(option: str) -> bool:
    """Whether a normalised option is only digits ("2", "1 000")."""
    return option.replace(" ", "").isdigit()


@lru_cache(maxsize=256)  # a text is checked against up to six items in a row: normalised once
def _norm(text: str) -> str:
    """Lower-case words joined by single spaces, padded: option matching ignores case and punctuation."""
    return " " + " ".join(_WORD.findall(text.lower())) + " "


class OptionIndex:
    """The distinctive options of each benchmark item, and :meth:`kept`: how many of them a text writes."""

    def __init__(self, items: Sequence[Item]) -> None:
        normed = [[_norm(c) for c in it.choices] for it in items]
        # An option several items offer ("None of the above", "True, False") names none of them, and
        # one quoted from the item's own passage is in every other question on that passage too.
        offered = Counter(o for opts in normed for o in set(opts))
        # A template's option ("True, False", "All of the above", "I and II only") is offered by many
        # items; a topic's ("Pure Land", offered by the three questions on it) by a few, and a rewrite
        # keeps it as evidence. Numbers stay too: a translation keeps its item's numeric options.
        least = max(TEMPLATE_MIN, TEMPLATE_SHARE * sum(1 for opts in normed if opts))
        #: Options so many items offer that they are a template's, not an item's (:meth:`without_shared`).
        self.shared = frozenset(o for o, c in offered.items() if c >= least and o.strip() and not _bare_number(o))
        self.options: list[tuple[str, ...]] = []
        for it, opts in zip(items, normed, strict=True):
            q = _norm(it.question) if opts else ""
            keep = {o for o in opts if offered[o] == 1 and len(o) - 2 >= MIN_CHARS and not _bare_number(o) and o not in q}
            self.options.append(tuple(sorted(keep)))
        #: Whether any item has enough distinctive options for the clause (else every check is skipped).
        self.any = any(len(o) >= KEPT for o in self.options)
        # Each option's longest word: a text that lacks one of them (lower-cased) cannot keep the options.
        self._words = [tuple(max(o.split(), key=len) for o in opts) for opts in self.options]

    def without_shared(self, text: str) -> str:
        """``text`` without its option lines that offer a :attr:`shared` option, and then without the
        answer letter closing them. Every Statement item of MMLU's abstract algebra ends in the same
        four options ("True, True" … "False, True"): another such item written out with its options
        shares them with the benchmark, and they are not what a leak keeps.

        >>> from contam.data import Item
        >>> idx = OptionIndex([Item(f"a{k}", "P?", choices=("True, True", "False, False", f"x{k}")) for k in range(5)])
        >>> idx.without_shared("Statement 1 | Every field is a ring.\\nA. True, True\\nB. False, False\\nA")
        'Statement 1 | Every field is a ring.'
        """
        if not self.shared or "\n" not in text:
            return text
        lines = text.split("\n")
        keep = [ln for ln in lines if not ((m := _OPTION_LINE.match(ln)) and _norm(m.group(1)) in self.shared)]
        if len(keep) == len(lines):
            return text
        while keep and _LETTER_LINE.match(keep[-1]):
            keep.pop()
        return "\n".join(keep)

    def kept(self, text: str, j: int) -> int:
        """The number of item ``j``'s distinctive options when ``text`` writes every one of them word
        for word and they are at least :data:`KEPT`; else 0."""
        opts = self.options[j]
        if len(opts) < KEPT:
            return 0
        low = text.lower()
        if not all(w in low for w in self._words[j]):  # cheap: most texts stop here
            return 0
        normed = _norm(low)
        return len(opts) if all(o in normed for o in opts) else 0

    def kept_rows(self, texts: Sequence[str], nearest: np.ndarray) -> np.ndarray:
        """(n,) :meth:`kept` of each text against its item ``nearest[r]`` (all zero on a benchmark
        without multiple-choice options, at no cost)."""
        out = np.zeros(len(texts), dtype=np.int64)
        if self.any:
            for r, t in enumerate(texts):
                out[r] = self.kept(t, int(nearest[r]))
        return out

    def holds_any(self, texts: Sequence[str], candidates: np.ndarray) -> np.ndarray:
        """(n,) whether each text keeps the options of any of its ``candidates[r]`` items (:meth:`kept`)."""
        out = np.zeros(len(texts), dtype=bool)
        if self.any:
            for r, t in enumerate(texts):
                out[r] = any(self.kept(t, int(j)) > 0 for j in candidates[r])
        return out
