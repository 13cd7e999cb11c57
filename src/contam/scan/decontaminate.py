"""Write a cleaned copy of a JSONL corpus: flagged documents dropped, or their matched spans masked.

Unflagged lines are copied byte for byte. A JSONL log records every document touched (id,
line, action, items, masked spans). Outputs are written atomically; the input is never
modified (writing over it is refused).

>>> import tempfile, os
>>> from contam.data.webtext import build_demo_corpus
>>> from contam.scan.job import run_scan
>>> d = tempfile.mkdtemp(); corpus = os.path.join(d, "c.jsonl")
>>> truth = build_demo_corpus(corpus, seed=0)
>>> _ = run_scan(corpus, ["gsm8k", "humaneval", "mmlu"], os.path.join(d, "scan"))
>>> s = decontaminate(corpus, os.path.join(d, "clean.jsonl"), scan=os.path.join(d, "scan"), mode="drop")
>>> s["documents_in"] - s["documents_out"] == s["dropped"] >= len(truth) - 2
True
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from contam.data.items import Item
from contam.data.loaders import base_suffix, check_corpus_path, decompress_errors, get_field, open_binary
from contam.errors import ConfigError, InputError, reading
from contam.outputs import atomic_write, dumps_line
from contam.progress import make_progress
from contam.scan.flags import DocResult, counted, rule_text
from contam.scan.masking import answer_book, dropped, exchange, keys_for, left_answer, load_items, read_answers
from contam.scan.runpaths import remove_stale_temps
from contam.textsafe import no_surrogates

MODES = ("drop", "mask")
DEFAULT_MASK = "[CONTAMINATED]"


def load_scan(scan_dir: str | os.PathLike[str]) -> list[DocResult]:
    """Flagged documents of a finished ``contam scan`` output folder: only the flags that reached
    their own threshold (:func:`contam.scan.flags.counted`), as the scan counted them."""
    path = Path(scan_dir) / "flags.jsonl"
    if not path.is_file():
        raise InputError("no flags.jsonl here: is this a `contam scan --out` folder of a finished scan?", path=scan_dir)
    out: list[DocResult] = []
    with open(path, encoding="utf-8-sig", errors="surrogateescape") as fh:
        for lineno, raw in enumerate(fh, start=1):
            with reading(path, line=lineno, what="not a scan result"):
                res = counted(DocResult.from_dict(json.loads(raw)))
            if res.contaminated:
                out.append(res)
    return out


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, overlapping or touching spans merged.

    >>> merge_spans([(5, 9), (0, 2), (8, 12), (12, 13)])
    [(0, 2), (5, 13)]
    """
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def mask_text(text: str, spans: list[tuple[int, int]], mask: str = DEFAULT_MASK) -> str:
    """``text`` with every span replaced by ``mask``.

    >>> mask_text("keep this SECRET and this", [(10, 16)], "[X]")
    'keep this [X] and this'
    """
    parts, last = [], 0
    for a, b in merge_spans(spans):
        parts.append(text[last:a])
        parts.append(mask)
        last = b
    parts.append(text[last:])
    return "".join(parts)


def decontaminate(
    corpus: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    scan: str | os.PathLike[str] | None = None,
    results: Iterable[DocResult] | None = None,
    mode: str = "drop",
    text_field: str = "text",
    id_field: str | None = None,
    log: str | os.PathLike[str] | None = None,
    mask: str = DEFAULT_MASK,
    fmt: str | None = None,
    roles: tuple[str, ...] | None = None,
    items: Iterable[Item] | None = None,
) -> dict[str, Any]:
    """Copy ``corpus`` to ``out`` without the documents flagged in ``scan`` (a scan folder) or
    ``results``; returns a summary. ``log`` defaults to ``<out>.log.jsonl``.

    Records are written back in their own format (:mod:`contam.data.formats`): a masked chat,
    ShareGPT, Alpaca or prompt/response record keeps its shape, with the matched spans masked
    inside the turns they lie in. ``fmt`` and ``roles`` default to what the scan used (its
    ``summary.json``), else ``auto`` and every turn.

    Masking never leaves an answer that gives the item away (:mod:`contam.scan.masking`): the
    flagged items' answers (``items``; default: the benchmarks the scan names) are looked for in
    what masking leaves; a conversation's question and answer turns are masked together, and a
    record that would still hold the answer (or whose answer is unknown here) is dropped, the
    log saying why."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}: choose drop or mask")
    src, dst = Path(corpus), Path(out)
    check_corpus_path(src)
    if base_suffix(src) not in (".jsonl", ".ndjson", "") or src.is_dir():
        raise ConfigError(f"decontaminate rewrites JSONL corpora (.jsonl, optionally .gz/.zst); {src.name} is not one")
    log_path = Path(log) if log else dst.with_name(dst.name + ".log.jsonl")
    for p in (dst, log_path):
        if p.exists() and p.resolve() == src.resolve():
            raise ConfigError(f"refusing to overwrite the input corpus {src}: choose another output path")
    if log_path.resolve() == dst.resolve():
        raise ConfigError(f"--log {log_path} is the cleaned corpus --out itself: one would overwrite the other; choose another --log")
    for p in (dst, log_path):  # what a killed run (kill -9) left: corpus-sized hidden temporaries
        remove_stale_temps(p)
    if scan is not None:
        check_scanned_corpus(scan, src)
    flagged = {r.line: r for r in (load_scan(scan) if scan is not None else (counted(x) for x in results or [])) if r.contaminated}
    used = _scan_settings(scan)
    book: dict[str, tuple[str, ...]] = {}
    if mode == "mask":  # the flagged items' answers: given, kept by the scan, else loaded by name
        if items is not None:
            book = answer_book(items)
        else:
            book = (read_answers(scan) if scan is not None else None) or answer_book(load_items(used.get("benchmarks") or []).values())
    from contam.data.formats import FormatReader, check_format

    reader = FormatReader(
        check_format(fmt or used.get("format") or "auto"),
        roles=roles if roles is not None else used.get("roles"),
        text_field=text_field,
        path=str(src),
    )
    stats = {"documents_in": 0, "documents_out": 0, "dropped": 0, "masked": 0, "chars_masked": 0}
    size = os.path.getsize(src)
    lineno = 0
    with atomic_write(dst, "wb") as raw_out, atomic_write(log_path) as log_fh, make_progress() as prog:
        sink = gzip.GzipFile(fileobj=raw_out, mode="wb") if dst.name.endswith(".gz") else raw_out
        bar = prog.add_task(f"decontaminating {src.name}", total=size)
        try:
            with open_binary(src) as fh:
                for lineno, raw in enumerate(fh, start=1):
                    prog.advance(bar, len(raw))
                    if raw.strip():
                        stats["documents_in"] += 1
                    res = flagged.get(lineno)
                    if res is None:
                        sink.write(raw)
                        stats["documents_out"] += bool(raw.strip())
                        continue
                    entry = _apply(res, raw, lineno, src, mode, text_field, id_field, mask, reader, book)
                    log_fh.write(dumps_line(entry["log"]) + "\n")
                    stats["chars_masked"] += entry["log"].get("chars_masked", 0)
                    if entry["line"] is None:
                        stats["dropped"] += 1
                    else:
                        sink.write(entry["line"])
                        stats["masked"] += 1
                        stats["documents_out"] += 1
        except decompress_errors() as e:  # raised inside the atomic writes: nothing is left behind
            if isinstance(e, OSError) and e.errno is not None:
                raise  # the system's (a full disk), not the file's: reported as such
            raise InputError(f"cannot read (corrupt or truncated compressed file?): {e}", path=src) from None
        beyond = sorted(line for line in flagged if line > lineno)
        if beyond:  # raised inside the atomic writes: nothing is left behind
            raise InputError(
                f"scan results do not match this corpus: the scan flagged line {beyond[0]}, the corpus has {lineno} lines", path=src
            )
        if sink is not raw_out:
            sink.close()
    return {**stats, "mode": mode, "out": str(dst), "log": str(log_path)}


def check_scanned_corpus(scan: str | os.PathLike[str], corpus: Path) -> None:
    """Refuse a corpus that is not the one the scan read (its manifest holds the size and sha256
    of the scanned file): the flags name lines, and the lines of another file are other documents.
    A scan without a manifest (an older contam), or of a stream, is not checked."""
    try:
        manifest = json.loads((Path(scan) / "manifest.json").read_text(encoding="utf-8"))
        (rec,) = [r for r in manifest.get("inputs", []) if isinstance(r, dict) and r.get("status", "done") == "done"]
        size, sha = int(rec["size"]), str(rec["sha256"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    now = os.path.getsize(corpus)
    if now != size:
        raise InputError(
            f"not the corpus the scan in {scan} read: {now:,} bytes, the scan's manifest says {size:,} "
            "(changed since the scan?); scan it again",
            path=corpus,
        )
    h = hashlib.sha256()
    with open(corpus, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    if h.hexdigest() != sha:
        raise InputError(
            f"not the corpus the scan in {scan} read: same size, other content (sha256 {h.hexdigest()[:12]}…, "
            f"the scan's manifest says {sha[:12]}…; changed since the scan?); scan it again",
            path=corpus,
        )


def _scan_settings(scan: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The record format and roles a scan folder's ``summary.json`` says it read (if any)."""
    if scan is None:
        return {}
    try:
        summary = json.loads((Path(scan) / "summary.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    roles, benches = summary.get("roles"), summary.get("benchmarks")
    return {
        "format": summary.get("format"),
        "roles": tuple(roles) if isinstance(roles, list) else None,
        "benchmarks": [str(b) for b in benches] if isinstance(benches, list) else [],
    }


def _apply(
    res: DocResult,
    raw: bytes,
    lineno: int,
    src: Path,
    mode: str,
    text_field: str,
    id_field: str | None,
    mask: str,
    reader: Any = None,
    book: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    try:
        rec = json.loads(raw.decode("utf-8-sig"))  # -sig: a byte-order mark opening the file
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise InputError(
            "the scan flagged this line but it is not valid JSON now: was the corpus changed since the scan?", path=src, line=lineno
        ) from None
    key = get_field(rec, id_field) if id_field else rec.get("id") if isinstance(rec, dict) else None
    doc_id = str(key) if key is not None else str(lineno)
    if doc_id != res.doc_id:
        raise InputError(
            f"scan results do not match this corpus: the scan flagged document {res.doc_id!r} here, the corpus has {doc_id!r}",
            path=src,
            line=lineno,
        )
    item_ids = sorted({f.item_id for f in res.flags})
    spans = merge_spans(e.doc_span for f in res.flags for e in f.evidence if e.doc_span is not None)
    log: dict[str, Any] = {
        "doc_id": doc_id,
        "line": lineno,
        "items": item_ids,
        "levels": sorted({f.level for f in res.flags}),
        "score": res.flags[0].score if res.flags else None,
        "rules": [rule_text(f) for f in res.flags],
    }
    if mode == "drop":
        log["action"] = "dropped"
        return {"line": None, "log": log}
    keys, unknown = keys_for(item_ids, book)
    if unknown:
        return dropped(log, f"the answer of {unknown[0]} is not known here, so a masked copy cannot be checked")
    if reader is not None and reader.format != "text":
        rt = reader.read(rec, lineno)
        if rt.turns and (rt.turns[0].role != "text"):
            return _apply_turns(rec, rt, spans, log, mask, keys, reader.format)
    text = get_field(rec, text_field)
    whole = next((f.level for f in res.flags if not any(e.doc_span for e in f.evidence)), None)
    if whole is not None or not spans or not isinstance(text, str):
        return dropped(log, f"the {whole} level judged the whole text: no span to mask" if whole else "no spans to mask")
    masked = mask_text(text, spans, mask)
    if (left := left_answer(masked, keys)) is not None:
        return dropped(log, f"the answer {left[1]!r} of {left[0]} would remain after masking")
    _set(rec, text_field, masked)
    log.update(action="masked", spans=[list(s) for s in spans], chars_masked=sum(b - a for a, b in spans))
    return {"line": (no_surrogates(json.dumps(rec, ensure_ascii=False)) + "\n").encode("utf-8"), "log": log}


def _apply_turns(
    rec: dict[str, Any], rt: Any, spans: list[tuple[int, int]], log: dict[str, Any], mask: str, keys: dict[str, tuple[str, ...]], fmt: str
) -> dict[str, Any]:
    """Mask a conversation record's spans inside the turns they lie in (the record keeps its
    format); turns of the flagged exchange that still hold a flagged item's answer are masked
    whole (question and answer together); an answer left anywhere else drops the record."""
    from contam.data.formats import locate, record_text, set_turn_text

    if not spans:
        return dropped(log, "no spans to mask")
    per_turn: dict[int, list[tuple[int, int]]] = {}
    for span in spans:
        for turn, _, inner, _ in locate(rt.turns, span):
            if inner[1] > inner[0]:
                per_turn.setdefault(turn, []).append(inner)
    full = record_text(rec, fmt).turns  # every turn, whatever roles were scanned: the answer may lie in any
    pos = {t.turn: k for k, t in enumerate(full)}
    texts = {t.turn: rt_text for t in full if (rt_text := _turn_text(rec, t.path)) is not None}
    for turn, inner in per_turn.items():
        texts[turn] = mask_text(texts[turn], inner, mask)
    together = exchange([t.role for t in full], [pos[k] for k in per_turn if k in pos])
    whole: list[int] = []
    for k in sorted(together):
        t = full[k]
        if left_answer(texts.get(t.turn, ""), keys) is not None:
            texts[t.turn] = mask
            whole.append(t.turn)
    left = left_answer("\n\n".join(texts.values()), keys)
    if left is not None:
        return dropped(log, f"the answer {left[1]!r} of {left[0]} would remain after masking, outside the flagged exchange")
    masked_turns = [
        {"turn": t, "role": full[pos[t]].role if t in pos else "", "spans": [list(x) for x in merge_spans(inner)]}
        for t, inner in sorted(per_turn.items())
        if t not in whole
    ]
    for t in whole:
        n = len(_turn_text(rec, full[pos[t]].path) or "")
        masked_turns.append({"turn": t, "role": full[pos[t]].role, "spans": [[0, n]], "whole": True})
    for t in {*per_turn, *whole}:
        if t in pos:
            set_turn_text(rec, full[pos[t]].path, texts[t])
    chars = sum(b - a for t in masked_turns for a, b in t["spans"])
    log.update(action="masked", spans=[list(s) for s in spans], turns=sorted(masked_turns, key=lambda t: t["turn"]), chars_masked=chars)
    if whole:
        log["masked_with_answer"] = whole  # question and answer masked together
    return {"line": (no_surrogates(json.dumps(rec, ensure_ascii=False)) + "\n").encode("utf-8"), "log": log}


def _turn_text(rec: dict[str, Any], jpath: tuple[str | int, ...]) -> str | None:
    cur: Any = rec
    for k in jpath:
        cur = cur[k]
    return cur if isinstance(cur, str) else None


def _set(rec: dict[str, Any], dotted: str, value: Any) -> None:
    cur = rec
    *path, last = dotted.split(".")
    for part in path:
        cur = cur[part]
    cur[last] = value
