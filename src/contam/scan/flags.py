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


def passed(flag: Flag | dict[str, Any]) -> bool:
    """The one rule for what a flag is: its score reached its own threshold (a rule that fired
    below it, e.g. the ``nn`` rule's rescue window, is not listed, counted or cleaned).

    >>> passed(Flag("d", "it", "semantic", 0.93, 0.5)), passed(Flag("d", "it", "semantic", 0.71, 0.86))
    (True, False)
    """
    if isinstance(flag, Flag):
        return flag.score >= flag.threshold
    score, th = flag.get("score"), flag.get("threshold")  # a flag read back from flags.jsonl
    return not (isinstance(score, int | float) and isinstance(th, int | float)) or score >= th


def counted(result: DocResult) -> DocResult:
    """``result`` with only the flags that :func:`passed`; a document left without one is clean.

    >>> r = DocResult("d", True, "semantic", (Flag("d", "it", "semantic", 0.71, 0.86),))
    >>> counted(r).contaminated, counted(r).flags
    (False, ())
    """
    keep = tuple(f for f in result.flags if passed(f))
    if len(keep) == len(result.flags):
        return result
    if not keep:
        return DocResult(result.doc_id, False, "", (), result.source, result.line, result.scores)
    level = min((f.level for f in keep), key=lambda lv: LEVELS.index(lv) if lv in LEVELS else len(LEVELS))
    return DocResult(result.doc_id, True, level, keep, result.source, result.line, result.scores)


def rule_text(flag: Flag | dict[str, Any]) -> str:
    """The rule that fired for ``flag`` (a :class:`Flag` or its dict), in a few words.

    >>> rule_text(Flag("d", "it", "token", 0.82, 0.5, evidence=(Evidence("ngram"),)))
    'token: ngram coverage 0.82 ≥ 0.5'
    >>> rule_text(Flag("d", "it", "semantic", 0.931, 0.5, evidence=(Evidence("combiner", "learned rule (minilm, language en): p 0.931 >= 0.5; ..."),)))
    'semantic: learned rule (minilm, language en): p 0.931 ≥ 0.5'
    >>> near = Evidence("rule", "near copy: cosine 0.919 >= 0.9, no number or name against the item; learned p 0.264 < 0.5")
    >>> rule_text(Flag("d", "it", "semantic", 0.919, 0.9, evidence=(near, Evidence("combiner", "learned rule (minilm, language en): p 0.264 < 0.5; ..."))))
    'semantic: near copy: cosine 0.919 ≥ 0.9, no number or name against the item'
    """
    f = flag.to_dict() if isinstance(flag, Flag) else flag
    level, score, th = str(f.get("level", "")), f.get("score"), f.get("threshold")
    ev = [e for e in f.get("evidence", ()) if isinstance(e, dict)]
    kinds = [str(e.get("kind", "")) for e in ev]
    combiner = next((e for e in ev if e.get("kind") == "combiner" and e.get("text")), None)
    if combiner is not None:  # the learned rule: the clause that fired (another than the probability is named apart)
        fired = next((e for e in ev if e.get("kind") == "rule" and e.get("text")), combiner)
        return f"{level}: " + str(fired["text"]).split(";")[0].replace(">=", "≥")
    what = {"token": f"{kinds[0] if kinds else 'ngram'} coverage", "semantic": "nearest-item cosine", "reasoning": "reasoning similarity"}
    return f"{level}: {what.get(level, 'score')} {_num(score)} ≥ {_num(th)}"


def _num(x: Any) -> str:
    return f"{x:.4g}" if isinstance(x, int | float) else "?"
