"""Scan results of conversation records (chat, ShareGPT, Alpaca, prompt/response): every
piece of evidence names the turn it lies in and its offsets inside that turn.

The token level scans a record as its selected turns joined by a blank line
(:func:`contam.data.formats.record_text`), so one n-gram match may run from the question into
the answer; :func:`annotate` splits such evidence at the turn boundary. The semantic and
reasoning levels judge one turn at a time (:func:`turn_documents`, :func:`merge_turns`): an
embedding of a user turn is an embedding of the question, not of the question diluted by a long
answer.

>>> from contam.data.formats import record_text
>>> from contam.scan.flags import DocResult, Evidence, Flag
>>> rt = record_text({"prompt": "Q: 2+2?", "response": "A: 4"}, "pair")
>>> ev = Evidence(kind="ngram", text="2?\\n\\nA", doc_span=(5, 10))
>>> res = DocResult("d", True, "token", (Flag("d", "it", "token", 1.0, 0.5, evidence=(ev,)),))
>>> [(e.turn, e.role, e.turn_span, e.doc_span, e.text) for e in annotate(res, rt.turns, rt.text).flags[0].evidence]
[(0, 'user', (5, 7), (5, 7), '2?'), (1, 'assistant', (0, 1), (9, 10), 'A')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from contam.data.formats import TurnSpan, locate
from contam.data.items import Document
from contam.scan.flags import DocResult, Evidence, Flag


def annotate(result: DocResult, turns: Sequence[TurnSpan], text: str) -> DocResult:
    """``result`` (of the joined text ``text``) with each evidence span named by its turn; a span
    over two turns becomes one evidence per turn (weight shared by length)."""
    if not result.flags or not turns:
        return result
    flags = []
    for f in result.flags:
        evidence: list[Evidence] = []
        for e in f.evidence:
            if e.doc_span is None or e.turn is not None:
                evidence.append(e)
                continue
            pieces = locate(turns, e.doc_span)
            if not pieces:  # only the blank line between turns: nothing to name
                evidence.append(e)
                continue
            total = max(1, e.doc_span[1] - e.doc_span[0])
            for turn, role, inner, (a, b) in pieces:
                part_weight = e.weight if len(pieces) == 1 else round(e.weight * (b - a) / total, 4)
                snippet = e.text if len(pieces) == 1 else text[a:b][:1000]
                evidence.append(replace(e, text=snippet, doc_span=(a, b), weight=part_weight, turn=turn, role=role, turn_span=inner))
        flags.append(replace(f, evidence=tuple(evidence)))
    return replace(result, flags=tuple(flags))


def turn_documents(doc: Document) -> list[Document]:
    """One document per turn of a conversation record read by :func:`contam.data.read_documents`
    (``metadata["turns"]``); the record itself when it has no turn map."""
    turns: Sequence[TurnSpan] = doc.metadata.get("turns") or ()
    if not turns:
        return [doc]
    return [
        Document(id=f"{doc.id}#turn{t.turn}", text=doc.text[t.start : t.end], metadata={"turn": t}, source=doc.source, line=doc.line)
        for t in turns
    ]


def merge_turns(doc: Document, results: Sequence[DocResult]) -> DocResult:
    """The record's result from its turns' results (:func:`turn_documents`): flags renamed to the
    record, every evidence named by its turn, spans moved into the joined text; best flag first."""
    turns = {f"{doc.id}#turn{t.turn}": t for t in doc.metadata.get("turns") or ()}
    flags: list[Flag] = []
    levels: list[str] = []
    scores: dict[str, object] = {}
    for r in results:
        t = turns.get(r.doc_id)
        if t is None:
            continue
        for k, v in r.scores.items():  # every turn's scores, flagged or not (the audit's score distributions)
            scores[f"turn{t.turn}.{k}"] = v
        if not r.contaminated:
            continue
        levels.append(r.level)
        for f in r.flags:
            ev = []
            # A flag that says where it lies (a long turn's window) keeps to that span; one that
            # judged the whole text (embedding, reasoning pattern) covers the whole turn.
            spanned = any(e.doc_span is not None for e in f.evidence)
            for e in f.evidence:
                if e.doc_span is not None:
                    a, b = e.doc_span
                    ev.append(replace(e, doc_span=(a + t.start, b + t.start), turn=t.turn, role=t.role, turn_span=(a, b)))
                elif spanned:
                    ev.append(replace(e, turn=t.turn, role=t.role))
                else:
                    ev.append(replace(e, doc_span=(t.start, t.end), turn=t.turn, role=t.role, turn_span=(0, t.end - t.start)))
            flags.append(replace(f, doc_id=doc.id, evidence=tuple(ev)))
    if not flags:
        return DocResult(doc_id=doc.id, contaminated=False, level="", flags=(), source=doc.source, line=doc.line, scores=scores)
    from contam.scan.flags import LEVELS

    flags.sort(key=lambda f: (LEVELS.index(f.level) if f.level in LEVELS else 9, -f.score, f.item_id))
    level = min(levels, key=lambda lv: LEVELS.index(lv) if lv in LEVELS else 9)
    return DocResult(doc_id=doc.id, contaminated=True, level=level, flags=tuple(flags), source=doc.source, line=doc.line, scores=scores)
