"""Records every data-side detector emits, whatever its level.

A detector looks at one corpus :class:`~contam.data.Document` at a time and returns a
:class:`DocResult`: the document's verdict and one :class:`Flag` per (document, benchmark item)
pair it judged contaminated, each with its :class:`Evidence`. The token, semantic and reasoning
levels and the cascade all speak these shapes, so writing, decontamination and reports are shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contam.records import Record

#: Level names, in cascade order (paper 001, Algorithm 1).
LEVELS = ("token", "semantic", "reasoning")


@dataclass(frozen=True)
class Evidence(Record):
    """One piece of evidence: what matched, where in the document and where in the item.

    ``kind`` says what the matcher was (``ngram``, ``exact``, ``lcs``, ``embedding``, ``cluster``,
    ``anomaly``, ``struct``, ``step``, ``arg``, ``judge``); spans are ``(start, end)`` character
    offsets (``doc_span`` into the document text, ``item_span`` into the matched item ``part``).

    For a conversation record (:mod:`contam.data.formats`) ``turn`` and ``role`` name the turn
    the evidence lies in and ``turn_span`` its offsets inside that turn's text (``doc_span``
    stays the offsets in the turns joined by a blank line). They are left out of
    :meth:`to_dict` for plain text, so text corpora's results read as before.
    """

    kind: str
    text: str = ""
    doc_span: tuple[int, int] | None = None
    item_span: tuple[int, int] | None = None
    part: str = ""
    weight: float = 0.0
    turn: int | None = None
    role: str = ""
    turn_span: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if self.turn is None:
            del d["turn"], d["role"], d["turn_span"]
        return d


@dataclass(frozen=True)
class Flag(Record):
    """A (document, benchmark item) pair judged contaminated at one level.

    ``part`` is which part of the item matched: ``question``, ``answer`` (the solution or
    answer text), ``seam`` (text spanning the end of the question and the start of the answer),
    or ``item`` when the whole item was compared. ``scores`` holds every score the level
    computed (e.g. ``coverage``, ``cosine``, ``struct``), ``score`` the one the threshold was
    applied to.
    """

    doc_id: str
    item_id: str
    level: str
    score: float
    threshold: float
    part: str = "item"
    benchmark: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class DocResult(Record):
    """A document's verdict. ``flags`` is best-first; ``level`` is the first level that flagged it."""

    doc_id: str
    contaminated: bool
    level: str = ""
    flags: tuple[Flag, ...] = ()
    source: str = ""
    line: int = 0
    scores: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> Flag | None:
        return self.flags[0] if self.flags else None
