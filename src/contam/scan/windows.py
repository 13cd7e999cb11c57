r"""Long documents read by the semantic level in windows, so that an item placed anywhere is seen.

The level embeds the first ``max_chars`` characters of a text (what an item or a training sample
is about is in its first ~128 tokens). A pretraining document is longer: a blog post that quotes
a rephrased GSM8K problem in its fourth paragraph, a chat transcript whose second turn is a
translated MMLU question. :func:`windows` reads such a document as its first ``max_chars``
characters (what the level always read) and then paragraph by paragraph, since an item quoted in a
document is most often a paragraph of its own; :func:`score_windows` scores every window and keeps,
per document, the one the rule rates highest. A document that fits in one window is scored as it
always was.

>>> [(s, w[:12]) for s, w in windows("A heading\n\nThe first paragraph.\n\nThe second one. " + "x" * 30, 40)]
[(0, 'A heading\n\nT'), (0, 'A heading\n\nT'), (33, 'The second o'), (49, 'xxxxxxxxxxxx')]
>>> windows("short", 512)
[(0, 'short')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contam.scan.semantic import SemanticScanner
    from contam.scan.semantic_scores import SemanticScores

_BLANK = re.compile(r"\n[ \t]*\n\s*")
_LINE = re.compile(r"\n\s*")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+(?=\S)")

#: Windows per document at most (the default of ``SemanticConfig.max_windows``): its first window
#: and its first 15 paragraphs, about 4,000 characters of ordinary prose; what lies beyond is left
#: to the token level.
MAX_WINDOWS = 16

#: A paragraph shorter than this (a heading, an option line) is read with the one after it.
MIN_UNIT = 64


def _pieces(text: str, offset: int, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    out, at = [], 0
    for m in pattern.finditer(text):
        out.append((offset + at, text[at : m.start()]))
        at = m.end()
    out.append((offset + at, text[at:]))
    return [(o, t) for o, t in out if t.strip()]


def _packed(parts: list[tuple[int, str]], size: int) -> list[tuple[int, int]]:
    """Consecutive ``parts`` (start, text) packed into ``(start, end)`` spans of at most ``size``
    characters, each starting where a part starts; a part longer than ``size`` cut at ``size``."""
    out: list[tuple[int, int]] = []
    for o, t in parts:
        end = o + len(t)
        if out and end - out[-1][0] <= size:
            out[-1] = (out[-1][0], end)
        else:
            while end - o > size:
                out.append((o, o + size))
                o += size
            out.append((o, end))
    return out


def windows(text: str, size: int, max_windows: int = MAX_WINDOWS) -> list[tuple[int, str]]:
    """``(start, window)`` pairs: the first ``size`` characters of ``text`` (what the level always
    read), then each paragraph (a paragraph is separated by a blank line; one shorter than
    :data:`MIN_UNIT` joins the next; one longer than ``size`` is cut at line starts, and a line
    longer than ``size`` at sentence starts); at most ``max_windows``."""
    if len(text) <= size:
        return [(0, text)]
    units: list[tuple[int, str]] = []
    for o, para in _pieces(text, 0, _BLANK):
        if len(para) <= size:
            units.append((o, para))
            continue
        for lo, line in _pieces(para, o, _LINE):
            parts = [(lo, line)] if len(line) <= size else _pieces(line, lo, _SENTENCE)
            units += [(a, text[a:b]) for a, b in _packed(parts, size)]
    merged: list[tuple[int, str]] = []
    for o, u in units:
        if merged and len(merged[-1][1]) < MIN_UNIT and o + len(u) - merged[-1][0] <= size:
            merged[-1] = (merged[-1][0], text[merged[-1][0] : o + len(u)])
        else:
            merged.append((o, u))
    out = [(0, text[:size])] + [(o + len(u) - len(u.lstrip()), u.strip()) for o, u in merged if o > 0 or len(u) < size]
    return out[:max_windows]


@dataclass(frozen=True)
class WindowedScores:
    """The semantic scores of documents read in windows. ``scores``: per document, its kept window;
    ``per_window``: every window; ``spans``: every window's ``(start, end, text)``; ``owner``: the
    document of every window row (a document's windows are consecutive rows); ``best``: the row kept
    per document."""

    scores: SemanticScores
    per_window: SemanticScores
    spans: list[tuple[int, int, str]]
    owner: list[int]
    best: list[int]

    def kept(self, doc: int) -> tuple[int, int, str]:
        """The ``(start, end, text)`` of the window kept for document ``doc``."""
        return self.spans[self.best[doc]]

    def passing(self, threshold: float, rule: str) -> list[list[tuple[int, int]]]:
        """Per document, the ``(start, end)`` of each of its windows that passes ``rule`` for the
        item its kept window matched: where an item quoted over several paragraphs lies. A window
        that holds another passing one gives way to it (the first 512 characters pass because the
        paragraph inside them does: the paragraph is where the item lies)."""
        flagged = self.per_window.flagged(threshold, rule)
        nearest = self.per_window.nearest[:, 0]
        out: list[list[tuple[int, int]]] = [[] for _ in self.best]
        for r, d in enumerate(self.owner):
            if flagged[r] and nearest[r] == nearest[self.best[d]]:
                out[d].append(self.spans[r][:2])
        return [innermost(s) for s in out]


def innermost(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` without those that hold another one, in order.

    >>> innermost([(0, 512), (120, 400), (380, 700), (900, 1000)])
    [(120, 400), (380, 700), (900, 1000)]
    """
    return sorted({s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)})


def score_windows(scanner: SemanticScanner, texts: Sequence[str], rule: str, max_windows: int | None = None) -> WindowedScores:
    """The semantic scores of ``texts`` read in windows. Per document the window kept is the one
    ``rule`` rates highest (the probability for ``learned``, the cosine otherwise; the first of
    equals). ``max_windows``: default the scanner's ``max_windows``."""
    import numpy as np  # here, so that the CLI reads MAX_WINDOWS without loading numpy

    size = scanner.config.max_chars
    max_windows = scanner.config.max_windows if max_windows is None else max_windows
    spans: list[tuple[int, int, str]] = []
    owner: list[int] = []
    for d, t in enumerate(texts):
        for s, w in windows(t, size, max_windows):
            spans.append((s, s + len(w), w))
            owner.append(d)
    per_window = scanner.score([w for _, _, w in spans])
    if len(spans) == len(texts):  # every document in one window: nothing to choose
        return WindowedScores(per_window, per_window, spans, owner, list(range(len(texts))))
    rated = per_window.learned_scores() if rule == "learned" and per_window.probability is not None else per_window.sim
    rated = np.nan_to_num(np.asarray(rated, dtype=np.float64), nan=-np.inf)
    counts = np.bincount(np.asarray(owner), minlength=len(texts))
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    best = [int(f + np.argmax(rated[f : f + c])) for f, c in zip(first, counts, strict=True)]
    return WindowedScores(per_window.subset(np.asarray(best, dtype=np.intp)), per_window, spans, owner, best)
