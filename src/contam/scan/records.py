"""``contam scan`` over any record format, with the optional judge: a layer over
:func:`contam.scan.job.run_scan` (the fast JSONL scan of one text field) that reads chat,
ShareGPT, Alpaca and prompt/response records (:mod:`contam.data.formats`).

A conversation corpus is first written as a hidden text corpus in the output folder, one line
per record (its selected turns joined by a blank line; the token level) or one line per turn
(the semantic and reasoning levels judge a turn at a time), each line carrying its record's
line, id and turn map. ``run_scan`` scans that file with every core and its checkpoints (an
interrupted scan resumes: the hidden corpus is kept until the scan completes and reused while
the source file is unchanged). Its results are then mapped back: record lines and ids, every
evidence named by its turn with offsets inside it (:mod:`contam.scan.turns`), turns merged
per record. With ``judge`` the semantic and reasoning flags are re-checked
(:mod:`contam.scan.judge`). A plain ``text`` corpus without a judge goes straight to
``run_scan``: same results, same speed.

>>> import tempfile, os, json
>>> from contam.data import load_benchmark
>>> d = tempfile.mkdtemp(); q = load_benchmark("gsm8k")[5].question
>>> with open(os.path.join(d, "c.jsonl"), "w") as fh:
...     _ = fh.write(json.dumps({"messages": [{"role": "user", "content": "Solve: " + q}, {"role": "assistant", "content": "ok"}]}) + "\\n")
>>> s = scan_records(os.path.join(d, "c.jsonl"), ["gsm8k"], os.path.join(d, "out"))
>>> s["format"], s["flagged"]
('chat', 1)
>>> ev = json.loads(open(os.path.join(d, "out", "flags.jsonl")).readline())["flags"][0]["evidence"][0]
>>> ev["turn"], ev["role"], ev["turn_span"][0]
(0, 'user', 7)
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from contam.data import BadInputStats, Item, as_items, read_documents
from contam.data.formats import TurnSpan, check_format
from contam.data.items import Document
from contam.data.loaders import check_corpus_path, sniff_format
from contam.errors import ConfigError
from contam.outputs import atomic_write, dumps_line, ensure_dir, write_json
from contam.scan.flags import DocResult
from contam.scan.options import ScanOptions
from contam.scan.runpaths import remove_stale_temps
from contam.scan.turns import annotate, merge_turns

_TURNS_CORPUS = ".turns.jsonl"
_TURNS_KEY = ".turns.json"


def scan_records(
    corpus: str | os.PathLike[str],
    benchmarks: list[str] | list[Item],
    out: str | os.PathLike[str],
    options: ScanOptions | None = None,
    *,
    fmt: str = "auto",
    roles: tuple[str, ...] | None = None,
    judge: str | None = None,
    checkpoint_s: float = 2.0,
    scanner: Any = None,
    **settings: Any,
) -> dict[str, Any]:
    """Scan ``corpus`` (any record format) and write ``out``; returns the summary (with
    ``format``, ``roles`` and, with a judge, ``judge``). ``options`` and ``settings`` (any
    field of :class:`~contam.scan.options.ScanOptions`), ``checkpoint_s`` and ``scanner`` are
    :func:`~contam.scan.job.run_scan`'s."""
    from contam.scan.job import run_scan

    opts = ScanOptions.build(options, **settings)
    fmt = check_format(fmt)
    text_field, id_field, skip_bad = opts.text_field, opts.id_field, opts.skip_bad
    if judge is not None and opts.token_only:
        raise ConfigError("--judge re-checks semantic and reasoning flags: add --levels all (or semantic, reasoning)")
    src = str(corpus)
    if not src.startswith("hf:"):
        check_corpus_path(Path(src))
    if fmt == "auto":
        fmt = sniff_format(corpus, text_field)
    out_dir = ensure_dir(out)
    items = as_items(benchmarks)
    if fmt == "text":
        summary = run_scan(corpus, items, out, opts, checkpoint_s=checkpoint_s, scanner=scanner)
        if judge is not None:
            summary = _finish(
                out_dir, summary, items, judge, _text_lines(corpus, text_field, id_field, skip_bad), src, per_turn=False, plain=True
            )
        summary.update(format="text", roles=None, **_where(src, text_field, id_field))
        write_json(out_dir / "summary.json", summary)
        return summary
    per_turn = not opts.token_only
    turns_corpus, stats, n_records = _turns_corpus(corpus, out_dir, fmt, roles, text_field, id_field, skip_bad, per_turn)
    turns_opts = replace(opts, text_field="text", id_field="id", skip_bad=False)  # the hidden corpus's own fields
    summary = run_scan(turns_corpus, items, out, turns_opts, checkpoint_s=checkpoint_s, scanner=scanner)
    summary = _finish(out_dir, summary, items, judge, _turn_lines(turns_corpus), src, per_turn=per_turn, plain=False)
    bad = summary["bad_input"]
    bad["skipped"] += stats.skipped
    for k, v in stats.reasons.items():
        bad["reasons"][k] = bad["reasons"].get(k, 0) + v
    bad["examples"] = (stats.examples + bad["examples"])[:5]
    summary.update(
        corpus=src,
        format=fmt,
        roles=list(roles) if roles else None,
        documents=n_records,
        turn_documents=summary["documents"] if per_turn else None,
        **_where(src, text_field, id_field),
    )
    summary["flag_rate"] = summary["flagged"] / n_records if n_records else 0.0
    write_json(out_dir / "summary.json", summary)
    for p in (out_dir / _TURNS_CORPUS, out_dir / _TURNS_KEY):
        p.unlink(missing_ok=True)
    return summary


def no_records_reason(summary: Mapping[str, Any]) -> str:
    """Why a scan read no document: a clean result on nothing must not pass for an all-clear.

    >>> no_records_reason({"bad_input": {"skipped": 2, "reasons": {"not valid JSON": 2}}})
    'no record could be read: 2 bad record(s) skipped (not valid JSON: 2)'
    """
    bad = summary.get("bad_input") or {}
    if bad.get("skipped"):
        reasons = ", ".join(f"{k}: {v}" for k, v in (bad.get("reasons") or {}).items())
        return f"no record could be read: {bad['skipped']:,} bad record(s) skipped ({reasons})"
    return "no records: the dataset is empty (or cut short before its first record)"


def _where(src: str, text_field: str, id_field: str | None) -> dict[str, Any]:
    """What a report needs to read a flagged record back from anywhere: the corpus's absolute
    path (``corpus`` keeps the path as given) and the fields the scan read."""
    p = Path(src)
    return {"corpus_path": str(p.resolve()) if not src.startswith("hf:") and p.is_file() else None, "text_field": text_field,
            "id_field": id_field}  # fmt: skip


def _turns_corpus(
    corpus: str | os.PathLike[str],
    out_dir: Path,
    fmt: str,
    roles: tuple[str, ...] | None,
    text_field: str,
    id_field: str | None,
    skip_bad: bool,
    per_turn: bool,
) -> tuple[Path, BadInputStats, int]:
    """The hidden text corpus of a conversation corpus (reused while the source is unchanged,
    so an interrupted scan of it resumes); its bad-input counts; the number of records."""
    path, key_path = out_dir / _TURNS_CORPUS, out_dir / _TURNS_KEY
    for p in (path, key_path):  # a write cut short by a kill: a corpus-sized temporary no run would reuse
        remove_stale_temps(p)
    p = Path(corpus)
    st = p.stat() if p.is_file() else None
    key = {"corpus": str(p.resolve()) if st else str(corpus), "size": st.st_size if st else None, "mtime_ns": st.st_mtime_ns if st else None,
           "format": fmt, "roles": list(roles) if roles else None, "text_field": text_field, "id_field": id_field, "skip_bad": skip_bad, "per_turn": per_turn}  # fmt: skip
    if st is not None and path.is_file() and key_path.is_file():
        try:
            saved = json.loads(key_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            saved = {}
        if saved.get("key") == key:
            s = saved["stats"]
            return path, BadInputStats(s["skipped"], dict(s["reasons"]), list(s["examples"])), saved["records"]
    stats = BadInputStats()
    n = 0
    with atomic_write(path) as fh:
        for doc in read_documents(corpus, text_field=text_field, id_field=id_field, skip_bad=skip_bad, stats=stats, fmt=fmt, roles=roles):
            n += 1
            turns: tuple[TurnSpan, ...] = tuple(doc.metadata.get("turns") or ())
            if not doc.text.strip():
                continue  # no selected turn has text (e.g. --roles assistant on a prompt-only record): nothing to scan
            tmap = [[t.turn, t.role, t.start, t.end, list(t.path)] for t in turns]
            if per_turn:
                for t in turns:
                    piece = doc.text[t.start : t.end]
                    if piece.strip():
                        fh.write(
                            dumps_line({"id": f"{doc.id}#turn{t.turn}", "text": piece, "rid": doc.id, "rline": doc.line, "turns": tmap})
                            + "\n"
                        )
            else:
                fh.write(dumps_line({"id": doc.id, "text": doc.text, "rid": doc.id, "rline": doc.line, "turns": tmap}) + "\n")
    write_json(key_path, {"key": key, "records": n, "stats": stats.to_dict()})
    return path, stats, n


def _turn_lines(path: Path) -> Any:
    """For a hidden turns corpus: a function from a set of its line numbers to those lines' records."""

    def read(wanted: set[int]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        if not wanted:
            return out
        last = max(wanted)
        with open(path, encoding="utf-8") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if lineno in wanted:
                    out[lineno] = json.loads(raw)
                if lineno >= last:
                    break
        return out

    return read


def _text_lines(corpus: str | os.PathLike[str], text_field: str, id_field: str | None, skip_bad: bool) -> Any:
    """For a plain text corpus: a function from line numbers to ``{"text": ...}`` of those lines."""

    def read(wanted: set[int]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        if not wanted:
            return out
        for doc in read_documents(corpus, text_field=text_field, id_field=id_field, skip_bad=True):
            if doc.line in wanted:
                out[doc.line] = {"text": doc.text}
        return out

    return read


def _spans(tmap: list[list[Any]]) -> tuple[TurnSpan, ...]:
    return tuple(TurnSpan(int(t[0]), str(t[1]), int(t[2]), int(t[3]), tuple(t[4])) for t in tmap)


def _read_results(path: Path) -> Iterator[DocResult]:
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            yield DocResult.from_dict(json.loads(raw))


def _finish(
    out_dir: Path, summary: dict[str, Any], items: list[Item], judge: str | None, lines_of: Any, src: str, *, per_turn: bool, plain: bool
) -> dict[str, Any]:
    """:func:`_post`; if it fails (a judge server down), the scan's raw outputs are removed
    rather than left looking finished."""
    try:
        return _post(out_dir, summary, items, judge, lines_of, src, per_turn=per_turn, plain=plain)
    except BaseException:
        for p in (out_dir / "flags.jsonl", out_dir / "summary.json"):
            p.unlink(missing_ok=True)
        raise


def _post(
    out_dir: Path, summary: dict[str, Any], items: list[Item], judge: str | None, lines_of: Any, src: str, *, per_turn: bool, plain: bool
) -> dict[str, Any]:
    """Map ``flags.jsonl`` back to the records (turns named, turn results merged per record),
    judge it when asked, rewrite it atomically and recount the summary."""
    flags_path = out_dir / "flags.jsonl"
    results = list(_read_results(flags_path))
    meta = lines_of({r.line for r in results if r.contaminated or not plain})
    final: list[DocResult] = []
    texts: dict[int, str] = {}  # record line -> the text the judge reads for it
    if plain:  # a plain text corpus: lines are records already
        for r in results:
            final.append(r)
            if r.line in meta:
                texts[r.line] = meta[r.line]["text"]
    else:
        group: list[DocResult] = []

        def flush() -> None:
            if not group:
                return
            rec = meta[group[0].line]
            rline, rid, tmap = int(rec["rline"]), str(rec["rid"]), _spans(rec["turns"])
            if per_turn:
                doc = Document(id=rid, text="", metadata={"turns": tmap}, line=rline, source=src)
                merged = merge_turns(doc, group)
            else:
                (r,) = group
                renamed = tuple(replace(f, doc_id=rid) for f in r.flags)
                merged = annotate(DocResult(rid, r.contaminated, r.level, renamed, src, rline, r.scores), tmap, rec["text"])
            final.append(merged)
            texts[rline] = "\n\n".join(str(meta[g.line]["text"]) for g in group)
            group.clear()

        for r in results:
            if group and meta[group[0].line]["rline"] != meta[r.line]["rline"]:
                flush()
            group.append(r)
        flush()
    judged: dict[str, Any] | None = None
    if judge is not None:
        from contam.scan.judge import Judge, JudgeConfig

        j = Judge(JudgeConfig(judge))
        by_id = {it.id: it for it in items}
        before = sum(len(r.flags) for r in final)
        final = j.apply(final, lambda r, f: _flag_text(r, f, texts, meta, per_turn), by_id)
        judged = {"spec": judge, "asked": j.asked, "rejected": before - sum(len(r.flags) for r in final),
                  "cache_hits": getattr(j.model, "hits", None)}  # fmt: skip
    with atomic_write(flags_path) as fh:
        for r in final:
            if r.contaminated or summary["outputs"].get("all_documents"):
                fh.write(dumps_line(r.to_dict()) + "\n")
    counts: Counter[str] = Counter()
    by_bench: dict[str, Counter[str]] = {}
    by_part: Counter[str] = Counter()
    hit: set[str] = set()
    for r in final:
        if not r.contaminated:
            continue
        counts["flagged"] += 1
        for f in r.flags:
            counts["flags"] += 1
            hit.add(f.item_id)
            by_part[f.part] += 1
            by_bench.setdefault(f.benchmark or "?", Counter())["flags"] += 1
        for b in {f.benchmark or "?" for f in r.flags}:
            by_bench[b]["documents"] += 1
    summary.update(flagged=counts["flagged"], flags=counts["flags"], items_flagged=len(hit), by_benchmark={k: dict(v) for k, v in sorted(by_bench.items())},
                   by_part=dict(sorted(by_part.items())), judge=judged)  # fmt: skip
    summary["flag_rate"] = summary["flagged"] / summary["documents"] if summary["documents"] else 0.0
    return summary


def _flag_text(r: DocResult, f: Any, texts: dict[int, str], meta: dict[int, dict[str, Any]], per_turn: bool) -> str:
    """What the judge reads for a flag: the turn its evidence names (conversation records), else the document."""
    turns = {e.turn for e in f.evidence if e.turn is not None}
    if turns:
        for rec in meta.values():
            if int(rec.get("rline", -1)) == r.line and str(rec.get("id", "")).endswith(tuple(f"#turn{t}" for t in turns)):
                return str(rec["text"])
        for rec in meta.values():  # joined records: cut the turn out of the joined text
            if int(rec.get("rline", -1)) == r.line:
                spans = [t for t in _spans(rec["turns"]) if t.turn in turns]
                return "\n\n".join(str(rec["text"])[t.start : t.end] for t in spans)
    return texts.get(r.line, "")
