"""A scan flag's evidence as the report shows it: the flagged record's own text (the turn the
evidence lies in, the matched spans marked) beside the benchmark item it matched.

The record is read back from the corpus the scan read: ``corpus_path`` in the scan's
``summary.json`` (stored absolute, so a report rebuilt from another folder finds it), else
``corpus`` relative to the working folder or the run folder; in the scan's own record format
(``format``, ``roles``, ``text_field``, ``id_field``), so a chat record's ``doc_span`` offsets
land in the same joined turns the scan matched. A sharded run keeps one ``flags.jsonl`` and
``summary.json`` per input shard (``shards/<folder>/``, each with its shard's ``corpus_path``;
the run's own summary maps every folder to its input in ``corpus_paths``): its records are read
back shard by shard (:func:`flag_sources`). A ``contam merge`` folder holds no shard itself: its
summary names each shard's folder in the runs it merged (``shard_dirs``) beside its input. Without the corpus, only text that quotes the
record is shown (an n-gram match), never the item's text standing in for it.

>>> ev = [{"kind": "ngram", "text": "sold clips", "doc_span": [8, 18]}]
>>> [(r.style, r.text) for r in evidence_runs("Natalia sold clips to 48 friends.", ev, RenderOptions(context=8))]
[('', 'Natalia '), ('mark', 'sold clips'), ('', ' to 48 f'), ('', '…')]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from contam.outputs import read_json_dict
from contam.report.model import Run, SectionBuilder, code, mark, num, text

#: Evidence kinds whose text quotes the record itself (the rest say what the record was compared with).
QUOTING = ("ngram", "exact", "lcs")


@dataclass(frozen=True)
class RenderOptions:
    """How much detail a report shows.

    ``max_rows`` caps every per-item table (flagged documents, log entries, sample variants);
    ``context`` is how many characters of a document are shown around its evidence.
    """

    max_rows: int = 10
    context: int = 160
    max_excerpt: int = 900


def clip(s: Any, n: int = 160) -> str:
    s = "" if s is None else str(s)
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass(frozen=True)
class ScannedRecord:
    """A corpus record as the scan read it: its text (turns joined) and its turn map."""

    text: str
    turns: tuple[Any, ...] = ()


@dataclass(frozen=True, eq=False)  # one per folder: compared (and hashed) by identity
class FlagSource:
    """A ``flags.jsonl`` and the summary of the scan that wrote it: the run's own for a one-file
    scan, one per input shard (``shard``: its name) for a sharded run."""

    flags: Path
    summary: dict[str, Any]
    folder: str
    shard: str = ""


def flag_sources(summary: dict[str, Any], folder: str | None) -> list[FlagSource]:
    """Where the flags of the scan in ``folder`` (whose ``summary.json`` is ``summary``) lie: its
    own ``flags.jsonl``, else those of its finished shards in ``shards/`` (the ones its summary
    names in ``corpus_paths``, in the run's order; every finished one for a run made before it
    stored them), each with its shard's summary and its input's absolute path."""
    if not folder:
        return []
    root = Path(folder)
    if (root / "flags.jsonl").is_file():
        return [FlagSource(root / "flags.jsonl", summary, folder)]
    paths = summary.get("corpus_paths")
    if isinstance(paths, dict):
        dirs = [_shard_dir(root, str(k), summary.get("shard_dirs")) for k in paths]
    else:
        dirs = sorted(d for d in (root / "shards").glob("*") if not d.name.startswith(".")) if (root / "shards").is_dir() else []
    out: list[FlagSource] = []
    for d in dirs:
        if not (d / "flags.jsonl").is_file():
            continue
        shard_summary, name = read_json_dict(d / "summary.json"), read_json_dict(d / "shard.json").get("name") or d.name
        if not shard_summary.get("corpus_path") and isinstance(paths, dict) and paths.get(d.name):
            shard_summary = {**shard_summary, "corpus_path": paths[d.name]}
        out.append(FlagSource(d / "flags.jsonl", shard_summary, str(d), str(name)))
    return out


def _shard_dir(root: Path, folder: str, merged: Any) -> Path:
    """The folder of shard ``folder`` of the run in ``root``: ``root/shards/<folder>``, or for a
    merged run (``shard_dirs``) the shard's folder in the run it came from: relative to the merged
    folder (the runs moved together with it), else its absolute path."""
    where = merged.get(folder) if isinstance(merged, dict) else None
    if not isinstance(where, dict):
        return root / "shards" / folder
    rel = root / str(where.get("relative") or "")
    return rel if where.get("relative") and (rel / "flags.jsonl").is_file() else Path(str(where.get("path") or rel))


def find_corpus(summary: dict[str, Any], folder: str | None) -> tuple[Path | None, list[str]]:
    """The corpus file a scan read, and every place looked at (for the note when none is there)."""
    cands: list[Path] = []
    if summary.get("corpus_path"):
        cands.append(Path(str(summary["corpus_path"])))
    p = Path(str(summary.get("corpus", "")))
    if str(p) not in ("", "."):
        cands.append(p)
        if folder and not p.is_absolute():
            f = Path(folder)
            cands += [f.parent / p, f.parent / p.name, f.parent.parent / p]
    found = next((c for c in cands if c.is_file()), None)
    return found, list(dict.fromkeys(str(c) for c in cands))


def read_records(corpus: Path | None, lines: set[int], summary: dict[str, Any]) -> dict[int, ScannedRecord]:
    """The records at ``lines`` of ``corpus`` read the way the scan read them (``{}`` when unreadable)."""
    if corpus is None or not lines:
        return {}
    from contam.data import read_documents
    from contam.errors import ContamError

    fmt = str(summary.get("format") or "text")
    roles = tuple(summary["roles"]) if summary.get("roles") else None
    out: dict[int, ScannedRecord] = {}
    last = max(lines)
    try:
        docs = read_documents(
            corpus,
            text_field=str(summary.get("text_field") or "text"),
            id_field=summary.get("id_field"),
            skip_bad=True,
            fmt=fmt,
            roles=roles,
        )
        for doc in docs:
            if doc.line in lines:
                out[int(doc.line)] = ScannedRecord(doc.text, tuple(doc.metadata.get("turns") or ()))
            if doc.line is not None and doc.line >= last:
                break
    except (ContamError, OSError, UnicodeDecodeError, EOFError, ValueError):
        return out
    return out


def evidence_runs(doc: str | None, evidence: list[dict[str, Any]], opt: RenderOptions) -> list[Run]:
    """The document around its evidence spans, the spans marked; without the document, the
    record's own matched text (marked), never an item's text standing in for it."""
    spans = sorted({(int(e["doc_span"][0]), int(e["doc_span"][1])) for e in evidence if e.get("doc_span")})
    if not spans:  # semantic / reasoning evidence points at the item, not at a span: show the document's start
        return [text(clip(doc, 2 * opt.context))] if doc else []
    if doc is None or spans[-1][1] > len(doc):
        t = next((e["text"] for e in evidence if _quotes_record(e)), "")
        return [mark(clip(t, opt.max_excerpt))] if t else []
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    start = max(0, merged[0][0] - opt.context)
    stop = min(len(doc), merged[-1][1] + opt.context)
    runs: list[Run] = [text("…")] if start else []
    pos = start
    budget = opt.max_excerpt
    for a, b in merged:
        if a >= stop or budget <= 0:
            break
        if a > pos:
            runs.append(text(doc[pos:a]))
        piece = doc[a:b]
        if len(piece) > budget:
            piece = piece[:budget] + "…"
        runs.append(mark(piece))
        budget -= len(piece)
        pos = b
    if pos < stop and budget > 0:
        runs.append(text(doc[pos : min(stop, pos + opt.context)]))
        pos = min(stop, pos + opt.context)
    if pos < len(doc):
        runs.append(text("…"))
    return runs


def _quotes_record(e: dict[str, Any]) -> bool:
    """Whether evidence ``e``'s text is the record's own text at its span (an n-gram or exact
    match), not what it was compared with (an embedding's evidence holds the item's text)."""
    span, t = e.get("doc_span"), e.get("text")
    if not span or not t or e.get("kind") not in QUOTING:
        return False
    return len(str(t)) == min(int(span[1]) - int(span[0]), 1000)


def _turn_view(rec: ScannedRecord, evidence: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]], str]:
    """The text to show, the evidence with spans into it, and a label: for a conversation record,
    the turn most of the evidence lies in (spans moved into it); else the whole record."""
    turned = [e for e in evidence if e.get("turn") is not None and e.get("turn_span")]
    if not turned or not rec.turns:
        return rec.text, evidence, ""
    weight: dict[int, float] = {}
    for e in turned:
        weight[int(e["turn"])] = weight.get(int(e["turn"]), 0.0) + max(float(e.get("weight") or 0.0), 1e-9)
    turn = max(weight, key=lambda t: (weight[t], -t))
    span = next((t for t in rec.turns if int(t.turn) == turn), None)
    if span is None:
        return rec.text, evidence, ""
    inside = [{**e, "doc_span": e["turn_span"]} for e in turned if int(e["turn"]) == turn]
    return rec.text[span.start : span.end], inside, f", turn {turn} ({span.role})"


@lru_cache(maxsize=8)
def _benchmark(name: str) -> dict[str, Any]:
    from contam.data import load_benchmark
    from contam.errors import ContamError

    try:
        return {it.id: it for it in load_benchmark(name)}
    except (ContamError, OSError):
        return {}


def item_part(benchmark: str, item_id: str, part: str) -> str | None:
    """The text of ``part`` of benchmark item ``item_id`` (``None`` when the benchmark is not
    loadable from here, e.g. a file that has moved)."""
    it = _benchmark(benchmark).get(item_id) if benchmark else None
    if it is None:
        return None
    answer = it.solution or it.answer
    if part == "answer":
        return answer
    if part == "seam":
        return f"{it.question[-300:]}\n\n{answer[:300]}"
    return it.question


def add_flag_excerpt(
    b: SectionBuilder, rec: dict[str, Any], flag: dict[str, Any], record: ScannedRecord | None, opt: RenderOptions, shard: str = ""
) -> None:
    """The flagged record's text (its turn, the spans marked) beside the item it matched
    (``shard``: the input shard the record is in, for a sharded run)."""
    evidence = list(flag.get("evidence", []))
    where = ""
    if record is not None:
        shown, ev, where = _turn_view(record, evidence)
        runs = evidence_runs(shown, ev, opt)
    else:
        runs = evidence_runs(None, evidence, opt)
    label: list[Run | str] = [
        code(str(rec.get("doc_id"))),
        text(f" (record at line {rec.get('line')}{' of ' + shard if shard else ''}{where})"),
    ]
    kinds = sorted({str(e.get("kind")) for e in evidence})
    if kinds:
        label.append(text(f"; evidence: {', '.join(kinds)}"))
    part = str(flag.get("part", "") or "item")
    item = item_part(str(flag.get("benchmark", "")), str(flag.get("item_id")), part)
    item_label: list[Run | str] = [
        text("matches "),
        code(str(flag.get("item_id"))),
        text(f" ({flag.get('benchmark', '')}, {part}), score {num(flag.get('score'))}"),
    ]
    b.excerpt(
        label,
        runs or [text("(record text not available: the corpus is not readable from here and no evidence quotes it)")],
        beside_label=item_label,
        beside=[text(clip(item, opt.max_excerpt))] if item else [text("(item text not available: its benchmark does not load here)")],
    )
