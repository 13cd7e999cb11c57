"""The scan job the ``contam scan`` command is a thin layer over: stream a corpus through the
detectors on every core and write per-document JSONL plus a summary JSON, atomically.

Outputs in ``out``: ``flags.jsonl`` (one :class:`~contam.scan.flags.DocResult` per flagged
document, in corpus order; every document with ``keep_all``) and ``summary.json`` (counts,
flag rate, by benchmark and part, skipped bad input, speed). Both appear only when the whole
corpus has been scanned. Until then results go to a hidden ``.flags.jsonl.partial`` with a
``.scan-state.json`` checkpoint: an interrupted run (Ctrl-C, a kill) resumes where it stopped
when the same scan is run again; bad input or settings leave ``out`` as it was.

>>> import tempfile, os
>>> from contam.data.webtext import build_demo_corpus
>>> d = tempfile.mkdtemp(); truth = build_demo_corpus(os.path.join(d, "c.jsonl"), seed=0)
>>> s = run_scan(os.path.join(d, "c.jsonl"), ["gsm8k", "humaneval", "mmlu"], os.path.join(d, "out"))
>>> s["documents"], s["flagged"] >= len(truth) - 2
(200, True)
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing as mp
import os
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from contam.data import BadInputStats, Item, load_benchmarks, read_documents
from contam.data.items import Document
from contam.data.jsonl_check import BLANK, CLEAN
from contam.data.loaders import MAX_RECORD_BYTES, _base_suffix, _check_readable, _get, _open_binary
from contam.errors import ConfigError, ContamError, InputError
from contam.outputs import dumps_line, ensure_dir, write_json
from contam.progress import make_progress
from contam.scan.flags import LEVELS, DocResult
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.prefilter import Prefilter, keep_freed_memory

try:  # orjson parses corpus lines 3-4x faster than the standard library
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a pinned dependency
    _fast_loads = json.loads

#: Corpora smaller than this are scanned in-process (starting workers would cost more).
PARALLEL_MIN_BYTES = 16 << 20


def run_scan(
    corpus: str | os.PathLike[str],
    benchmarks: list[str] | list[Item],
    out: str | os.PathLike[str],
    *,
    config: NGramConfig | None = None,
    text_field: str = "text",
    id_field: str | None = None,
    skip_bad: bool = False,
    keep_all: bool = False,
    levels: tuple[str, ...] = ("token",),
    workers: int = 0,
    checkpoint_s: float = 2.0,
    thresholds: Any = None,
    embedder: str = "minilm",
) -> dict[str, Any]:
    """Scan ``corpus`` against ``benchmarks`` (names/paths, or items) and write ``out``; returns the summary.

    A token-level run checkpoints every ``checkpoint_s`` seconds; run the same call again after an
    interruption and it continues from the last checkpoint. ``thresholds`` (a
    :class:`contam.scan.hierarchy.Thresholds`, e.g. from ``Thresholds.load("thresholds.json", "gsm8k")``)
    replaces the paper's per-level defaults; ``embedder`` is the semantic level's embedder spec.
    """
    config = config or NGramConfig()
    if thresholds is not None:
        config = replace(config, threshold=max(min(float(thresholds.token), 1.0), 1e-6))
    out_dir = ensure_dir(out)  # fail on an unwritable folder before any work
    if not str(corpus).startswith("hf:"):
        _check_readable(Path(corpus))
    items = benchmarks if benchmarks and isinstance(benchmarks[0], Item) else load_benchmarks(list(benchmarks))  # type: ignore[arg-type]
    levels = _check_levels(levels)
    t0, cpu0 = time.perf_counter(), time.process_time()
    stats = BadInputStats()
    counts: Counter[str] = Counter()
    by_bench: dict[str, Counter[str]] = {}
    by_part: Counter[str] = Counter()
    items_hit: set[str] = set()
    partial, state_path = out_dir / ".flags.jsonl.partial", out_dir / ".scan-state.json"
    for stale in out_dir.glob("..scan-state.json.*.tmp"):  # a checkpoint write (atomic_write temp) cut short by a kill
        stale.unlink(missing_ok=True)
    key = _run_key(corpus, items, config, levels, text_field, id_field, skip_bad, keep_all,
                   thresholds.to_dict() if thresholds is not None else None, embedder if levels != ("token",) else None)
    state = _load_state(state_path, partial, key) if levels == ("token",) else None
    start_line, start_offset = 1, 0
    if state is not None:  # resume: drop what was written after the last checkpoint
        with open(partial, "r+b") as fh:
            fh.truncate(state["partial_bytes"])
        start_line, start_offset = state["next_line"], state["next_offset"]
        counts.update(state["counts"])
        by_part.update(state["by_part"])
        by_bench = {k: Counter(v) for k, v in state["by_bench"].items()}
        items_hit = set(state["items_hit"])
        stats = BadInputStats(state["bad"]["skipped"], dict(state["bad"]["reasons"]), list(state["bad"]["examples"]))
        counts["resumed_at_line"] = start_line
    last_checkpoint = time.monotonic()
    try:
        with open(partial, "ab" if state is not None else "wb") as fh:
            if levels == ("token",):
                chunks = _token_scan(corpus, items, config, text_field, id_field, skip_bad, keep_all, workers, stats, counts, start_line, start_offset)
            else:
                chunks = (([r], 0, 0) for r in _hierarchy_scan(corpus, items, levels, config, text_field, id_field, skip_bad, keep_all, stats, counts,
                                                               thresholds=thresholds, embedder_spec=embedder))
            for results, next_line, next_offset in chunks:
                for res in results:
                    fh.write((dumps_line(res.to_dict()) + "\n").encode("utf-8"))
                    if res.contaminated:
                        counts["flagged"] += 1
                        for f in res.flags:
                            counts["flags"] += 1
                            items_hit.add(f.item_id)
                            by_part[f.part] += 1
                            by_bench.setdefault(f.benchmark or "?", Counter())["flags"] += 1
                        for b in {f.benchmark or "?" for f in res.flags}:
                            by_bench[b]["documents"] += 1
                if next_line and time.monotonic() - last_checkpoint >= checkpoint_s:
                    # Checkpoint: everything before next_line is in the partial file.
                    last_checkpoint = time.monotonic()
                    fh.flush()
                    write_json(state_path, {
                        "key": key, "next_line": next_line, "next_offset": next_offset, "partial_bytes": fh.tell(),
                        "counts": dict(counts), "by_part": dict(by_part), "by_bench": {k: dict(v) for k, v in by_bench.items()},
                        "items_hit": sorted(items_hit), "bad": stats.to_dict(),
                    })  # fmt: skip
            fh.flush()
            os.fsync(fh.fileno())
    except WorkerDied:
        raise  # not the input's fault: the checkpoint stays, and the same scan resumes from it
    except ContamError:
        # Bad input or settings: the run cannot be resumed as is, so leave nothing behind.
        for p in (partial, state_path):
            p.unlink(missing_ok=True)
        raise
    os.replace(partial, out_dir / "flags.jsonl")
    state_path.unlink(missing_ok=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0 + counts.pop("worker_cpu_ms", 0) / 1000
    summary = {
        "schema": 1,
        "corpus": str(corpus),
        "benchmarks": sorted({i.benchmark for i in items}),
        "items": len(items),
        "levels": list(levels),
        "config": asdict(config),
        "thresholds": thresholds.to_dict() if thresholds is not None else None,
        "embedder": embedder if levels != ("token",) else None,
        "documents": counts["documents"],
        "bytes": counts["bytes"],
        "flagged": counts["flagged"],
        "flag_rate": counts["flagged"] / counts["documents"] if counts["documents"] else 0.0,
        "flags": counts["flags"],
        "items_flagged": len(items_hit),
        "by_benchmark": {k: dict(v) for k, v in sorted(by_bench.items())},
        "by_part": dict(sorted(by_part.items())),
        "empty_documents": counts["empty"],
        "bad_input": stats.to_dict(),
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "setup_cpu_seconds": round(counts.pop("setup_cpu_ms", 0) / 1000, 3),
        "mb_per_s": round(counts["bytes"] / 1e6 / wall, 2) if wall > 0 else None,
        "workers": counts["workers"] or 1,
        "resumed_at_line": counts["resumed_at_line"] or None,
        "outputs": {"flags": "flags.jsonl", "all_documents": keep_all},
    }
    write_json(out_dir / "summary.json", summary)
    return summary


def _run_key(corpus: str | os.PathLike[str], items: list[Item], config: NGramConfig, levels: tuple[str, ...], *rest: object) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: the same corpus file, benchmark and settings."""
    p = Path(corpus)
    st = p.stat() if p.is_file() else None
    digest = hashlib.sha256("\n".join(f"{i.id}\t{len(i.question)}\t{len(i.answer_text)}" for i in items).encode()).hexdigest()
    return {
        "corpus": str(p.resolve()) if st else str(corpus), "size": st.st_size if st else None, "mtime_ns": st.st_mtime_ns if st else None,
        "items": digest, "config": json.loads(json.dumps(asdict(config))), "levels": list(levels), "options": json.loads(json.dumps(rest)),
    }  # fmt: skip


def _load_state(state_path: Path, partial: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    if not (state_path.is_file() and partial.is_file()):
        return None
    try:
        state = json.loads(state_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if state.get("key") != key or partial.stat().st_size < state.get("partial_bytes", 0):
        return None
    return state


def _check_levels(levels: tuple[str, ...]) -> tuple[str, ...]:
    wanted = tuple(LEVELS) if "all" in levels else tuple(dict.fromkeys(levels))
    bad = [lv for lv in wanted if lv not in LEVELS]
    if bad or not wanted:
        raise ConfigError(f"unknown level(s) {bad}: choose from {', '.join(LEVELS)} or all")
    return wanted


# -- the token level on every core ----------------------------------------------------------

_STATE: dict[str, Any] = {}


def _init_worker(scanner: NGramScanner, text_field: str, id_field: str | None, skip_bad: bool, keep_all: bool, source: str) -> None:
    keep_freed_memory()
    _STATE.update(scanner=scanner, text_field=text_field, id_field=id_field, skip_bad=skip_bad, keep_all=keep_all, source=source, line_ids=set(), errors=[])


def _work(task: tuple[str, int | None, Any]) -> tuple[list[DocResult], dict[str, Any], Counter[str], _Shift | None]:
    """Parse (a block of raw JSONL lines) or take (documents) one chunk and scan it. A byte
    range comes without its first line's number (the reader does not count lines): its lines
    are numbered from 1 and the returned :class:`_Shift` lets the parent renumber them."""
    cpu0 = time.process_time()
    kind, first_line, payload = task
    _STATE["line_ids"], _STATE["errors"] = set(), []
    relative = first_line is None
    if kind == "range":
        kind, payload = "block", _read_range(_STATE["source"], *payload)
    if relative:
        first_line = 1
    n_lines = 0  # known for blocks; a byte range is always a block
    stats = BadInputStats()
    counts: Counter[str] = Counter()
    scanner: NGramScanner = _STATE["scanner"]
    if kind == "block" and not _STATE["keep_all"] and scanner.config.prefilter:
        # Only the prefilter's candidates become Documents and reach the exact scorer.
        texts, make, picked, n_lines = _parse_block(payload, first_line, stats, counts, scanner.prefilter)
        if picked is None:
            picked = scanner.prefilter.candidates(texts) if texts else np.zeros(0, dtype=np.int64)
        docs = [make(i) for i in picked.tolist()]
        results = scanner.scan_batch(docs, prefiltered=True) if docs else []
    else:
        if kind == "block":
            texts, make, _, n_lines = _parse_block(payload, first_line, stats, counts)
            docs = [make(i) for i in range(len(texts))]
        else:
            docs = _check_docs(payload, stats, counts)
        results = scanner.scan_batch(docs, keep_all=_STATE["keep_all"]) if docs else []
    shift = _Shift(n_lines, _STATE["line_ids"], _STATE["errors"]) if relative else None
    counts["worker_cpu_ms"] += int((time.process_time() - cpu0) * 1000)
    return results, stats.to_dict(), counts, shift


class _Shift:
    """What the parent needs to renumber a block whose lines a worker numbered from 1: its
    number of lines, the lines whose id is their number, the errors behind the examples."""

    def __init__(self, n_lines: int, line_ids: set[int], errors: list[InputError]) -> None:
        self.n_lines, self.line_ids, self.errors = n_lines, line_ids, errors

    def apply(self, results: list[DocResult], stats: dict[str, Any], base: int) -> list[DocResult]:
        """``results`` and ``stats`` with line ``k`` of the block as line ``base + k - 1``."""
        out = []
        for r in results:
            line = r.line + base - 1
            if r.line in self.line_ids:
                doc_id = str(line)
                r = replace(r, doc_id=doc_id, line=line, flags=tuple(replace(f, doc_id=doc_id) for f in r.flags))
            else:
                r = replace(r, line=line)
            out.append(r)
        stats["examples"] = [str(_shifted(e, base)) for e in self.errors]
        return out


def _shifted(err: InputError, base: int) -> InputError:
    return InputError(err.message, path=err.path, line=err.line + base - 1 if err.line is not None else None, field=err.field)


def _reject(err: InputError, reason: str, stats: BadInputStats) -> None:
    if not _STATE["skip_bad"]:
        raise err
    stats.add(err, reason)
    if len(_STATE["errors"]) < 5:  # the examples, to renumber with the block (see _Shift)
        _STATE["errors"].append(err)


def _parse_block(
    block: bytes, first_line: int, stats: BadInputStats, counts: Counter[str], prefilter: Prefilter | None = None,
) -> tuple[list[str], Callable[[int], Document], np.ndarray | None, int]:
    """The texts of a block of raw JSONL lines, with the loader's checks and messages, a
    function making the Document of the i-th text (only candidates need one), with a
    ``prefilter`` the candidates when the block was clean (else None: the caller asks), and
    the block's number of lines."""
    src, tf, idf = _STATE["source"], _STATE["text_field"], _STATE["id_field"]
    simple = "." not in tf
    texts: list[str] = []
    recs: list[dict[str, Any]] = []
    line_of: list[int] = []
    counts["bytes"] += len(block)
    if simple and block and len(block) <= MAX_RECORD_BYTES:
        # Fast path for a clean block, checked with C-level calls; any doubt and the loop
        # below redoes the block line by line with the exact messages. With a prefilter, it
        # cuts the raw bytes first (sound once every line has parsed) and finds the line ends.
        picked = None
        try:
            if prefilter is not None:
                cand, odd, ends, one_value_each, status = prefilter.candidates_jsonl(block, field=tf, max_line_bytes=MAX_RECORD_BYTES)
                n_clean = int(np.count_nonzero(status == CLEAN))
                if n_clean and n_clean + int(np.count_nonzero(status == BLANK)) == len(ends):
                    # Every line checked in the compiled pass (a JSON object whose text field is a
                    # string with something to scan; or blank): only the lines the exact scorer or
                    # the odd-line rule needs are parsed.
                    counts["documents"] += n_clean
                    make_checked, picked = _checked_lines(block, ends, cand, odd, first_line, prefilter)
                    return [], make_checked, picked, len(ends)
                if not one_value_each:  # some line ends inside a JSON value: it cannot parse alone
                    raise ValueError("a line ends inside a value")
                # Every line ends outside any JSON value, so a raw newline can stand for the comma
                # of one JSON array: one parse for the block. As many values as lines then means
                # one value a line, each parsed whole (else the loop below says which is bad).
                joined = bytearray(len(block) + 2)  # "[" + the lines + "]", one copy
                joined[0], joined[-1] = 0x5B, 0x5D
                joined[1:-1] = block
                commas = np.frombuffer(joined, dtype=np.uint8)
                commas[ends[ends < len(block)] + 1] = 0x2C  # the newlines, found by the prefilter's pass
                if block.endswith(b"\n"):
                    commas[len(block)] = 0x20  # no value after the last line
                fast_recs = _fast_loads(joined)
                if len(fast_recs) != len(ends):
                    raise ValueError("not one value a line")
            else:
                lines = block.split(b"\n")
                if not lines[-1]:
                    lines.pop()  # the block ends with a newline: no line after it
                fast_recs = list(map(_fast_loads, lines))
            fast_texts = list(map(itemgetter(tf), fast_recs))
        except (ValueError, KeyError, TypeError, IndexError):
            fast_texts = []
        if fast_texts and set(map(type, fast_recs)) == {dict} and set(map(type, fast_texts)) == {str} and all(fast_texts) and not any(map(str.isspace, fast_texts)):
            counts["documents"] += len(fast_texts)
            if prefilter is not None:
                picked = prefilter.candidates_of_odd(cand, odd, fast_texts)

            def make_fast(i: int) -> Document:
                key = _get(fast_recs[i], idf) if idf else fast_recs[i].get("id")
                return _document(key, fast_texts[i], first_line + i)

            return fast_texts, make_fast, picked, len(fast_recs)
    lines = block.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the block ends with a newline: no line after it
    n_docs = 0
    for lineno, raw in enumerate(lines, start=first_line):
        if len(raw) > MAX_RECORD_BYTES:
            _reject(InputError(f"record is {len(raw) / 1e6:.0f} MB, over the {MAX_RECORD_BYTES // 2**20} MiB limit", path=src, line=lineno), "record too large", stats)
            continue
        try:
            rec = _fast_loads(raw)
        except ValueError:  # blank, or orjson's terse errors: let the standard library say what and where
            if raw.isspace() or not raw:
                continue
            rec = _slow_loads(raw, src, lineno, stats)
            if rec is _BAD:
                continue
        if type(rec) is not dict:
            _reject(InputError(f"expected a JSON object, found {type(rec).__name__}", path=src, line=lineno), "expected a JSON object", stats)
            continue
        text = rec.get(tf) if simple else _get(rec, tf)
        if type(text) is not str:
            if isinstance(text, str):  # a str subclass cannot come out of a JSON parser, but be exact
                text = str(text)
            else:
                found = "missing" if text is None else f"{type(text).__name__}, expected a string"
                _reject(InputError(f"text field is {found}", path=src, line=lineno, field=tf), f"missing field {tf!r}" if text is None else f"non-string field {tf!r}", stats)
                continue
        n_docs += 1
        if not text or text.isspace():
            # Empty texts are bad input (a corpus line with nothing to scan is almost always a field-mapping mistake).
            counts["empty"] += 1
            _reject(InputError("text is empty", path=src, line=lineno, field=tf), "empty text", stats)
            continue
        texts.append(text)
        recs.append(rec)
        line_of.append(lineno)
    counts["documents"] += n_docs

    def make(i: int) -> Document:
        key = _get(recs[i], idf) if idf else recs[i].get("id")
        return _document(key, texts[i], line_of[i])

    return texts, make, None, len(lines)


def _document(key: Any, text: str, line: int) -> Document:
    """The Document of a corpus line; without an id its line number is its id (noted, so the
    parent can renumber a block the worker numbered from 1)."""
    if key is None:
        _STATE["line_ids"].add(line)
        return Document(id=str(line), text=text, source=_STATE["source"], line=line)
    return Document(id=str(key), text=text, source=_STATE["source"], line=line)


def _checked_lines(block: bytes, ends: np.ndarray, cand: np.ndarray, odd: np.ndarray, first_line: int, prefilter: Prefilter) -> tuple[Callable[[int], Document], np.ndarray]:
    """For a block whose every line the compiled check passed: parse only the candidate and odd
    lines, and return the function making the Document of a line and the candidate lines."""
    tf, idf = _STATE["text_field"], _STATE["id_field"]
    recs: dict[int, dict[str, Any]] = {}
    for i in np.union1d(cand, odd).tolist():
        start = int(ends[i - 1]) + 1 if i else 0
        recs[i] = _fast_loads(block[start : int(ends[i])])
    picked = cand
    if len(odd):
        texts = [""] * len(ends)
        for i in odd.tolist():
            texts[i] = recs[i][tf]
        picked = prefilter.candidates_of_odd(cand, odd, texts)

    def make(i: int) -> Document:
        rec = recs[i]
        key = _get(rec, idf) if idf else rec.get("id")
        return _document(key, rec[tf], first_line + i)

    return make, picked


_BAD = object()


def _slow_loads(raw: bytes, src: str, lineno: int, stats: BadInputStats) -> Any:
    """Parse a line orjson refused with the standard library, for its exact message (or its
    leniency: lone surrogates); ``_BAD`` after reporting bad input."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        _reject(InputError(f"not valid UTF-8 (byte {e.start})", path=src, line=lineno), "not valid UTF-8", stats)
    except json.JSONDecodeError as e:
        _reject(InputError(f"not valid JSON ({e.msg} at column {e.colno})", path=src, line=lineno), "not valid JSON", stats)
    return _BAD


def _check_docs(docs: list[Document], stats: BadInputStats, counts: Counter[str], count_bytes: bool = True) -> list[Document]:
    """Empty texts are bad input (a corpus line with nothing to scan is almost always a field-mapping mistake)."""
    out: list[Document] = []
    for d in docs:
        if count_bytes:
            counts["bytes"] += len(d.text.encode("utf-8", "surrogatepass"))
        counts["documents"] += 1
        if not d.text.strip():
            counts["empty"] += 1
            _reject(InputError("text is empty", path=d.source, line=d.line, field=_STATE["text_field"]), "empty text", stats)
            continue
        out.append(d)
    return out


def _ranges(p: Path, batch_bytes: int, start_offset: int) -> Iterator[tuple[tuple[str, None, Any], int, None, int]]:
    """Byte ranges of about ``batch_bytes`` ending at line ends, from a plain file. The reader
    only looks for a line end near each boundary (it reads no more than that): each worker
    reads its own range and counts its lines."""
    try:
        with open(p, "rb", buffering=0) as f:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            pos = start_offset
            while pos < size:
                end = min(pos + batch_bytes, size)
                if end < size:
                    end = _line_end(fd, pos, end, size)
                yield ("range", None, (pos, end)), end - pos, None, end
                pos = end
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=p) from None


def _line_end(fd: int, pos: int, stop: int, size: int) -> int:
    """The end (after its newline) of the last line ending in ``pos..stop``, or if none does,
    of the line running past ``stop``."""
    near = min(stop - pos, 1 << 16)
    last = os.pread(fd, near, stop - near).rfind(b"\n")
    if last >= 0:
        return stop - near + last + 1
    at = stop  # no line end in the last 64 KiB: look back further, then forward
    back = os.pread(fd, stop - near - pos, pos).rfind(b"\n") if stop - near > pos else -1
    if back >= 0:
        return pos + back + 1
    while at < size:
        chunk = os.pread(fd, 1 << 20, at)
        if not chunk:
            break
        nl = chunk.find(b"\n")
        if nl >= 0:
            return at + nl + 1
        at += len(chunk)
    return size


def _read_range(path: str, pos: int, end: int) -> bytes:
    fd = _STATE.get("fd")
    if fd is None or _STATE.get("fd_path") != path:
        fd = os.open(path, os.O_RDONLY)
        _STATE.update(fd=fd, fd_path=path)
    out = os.pread(fd, end - pos, pos)
    if len(out) != end - pos:
        raise InputError(f"cannot read bytes {pos}-{end}: the file changed during the scan", path=path)
    return out


def _blocks(fh: Any, size: int) -> Iterator[bytes]:
    """Blocks of about ``size`` bytes ending at a line end (or the end of the input); only
    ``read`` is needed, so compressed streams work too."""
    pieces: list[bytes] = []
    while True:
        data = fh.read(size)
        if not data:
            if pieces:
                yield b"".join(pieces)
            return
        cut = data.rfind(b"\n") + 1
        if not cut:  # a line longer than the block: keep reading
            pieces.append(data)
            continue
        pieces.append(data[:cut])
        yield b"".join(pieces)
        pieces = [data[cut:]] if cut < len(data) else []


def _tasks(
    corpus: str, text_field: str, id_field: str | None, skip_bad: bool, stats: BadInputStats, batch_bytes: int, start_line: int = 1, start_offset: int = 0,
) -> Iterator[tuple[tuple[str, int | None, Any], int, int | None, int]]:
    """Chunks of the corpus: ``(task, input bytes, next line, next byte offset)``, from ``start_line``
    (the next line is None after a byte range: its worker counts its lines)."""
    p = Path(corpus)
    if not str(corpus).startswith("hf:") and p.is_file() and _base_suffix(p) in (".jsonl", ".ndjson", ""):
        try:
            fh = _open_binary(p)
        except OSError as e:
            raise InputError(f"cannot open: {e.strerror or e}", path=p) from None
        compressed = p.name.lower().endswith((".gz", ".zst", ".zstd"))
        if not compressed and hasattr(os, "pread"):  # POSIX: workers read their own ranges
            fh.close()
            yield from _ranges(p, batch_bytes, start_offset)
            return
        with fh:
            offset, first = 0, 1
            if start_offset and not compressed:
                fh.seek(start_offset)
                offset, first = start_offset, start_line
            try:
                for block in _blocks(fh, batch_bytes):
                    offset += len(block)
                    n_lines = int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10)) + (not block.endswith(b"\n"))
                    if first < start_line:  # compressed input cannot seek: skip what was done
                        if first + n_lines <= start_line:
                            first += n_lines
                            continue
                        cut = -1
                        for _ in range(start_line - first):
                            cut = block.index(b"\n", cut + 1)
                        block, n_lines, first = block[cut + 1 :], n_lines - (start_line - first), start_line
                    # Workers split the block into lines: the reader only finds line ends.
                    yield ("block", first, block), len(block), first + n_lines, offset
                    first += n_lines
            except (OSError, EOFError) as e:
                raise InputError(f"cannot read (corrupt or truncated compressed file?): {e}", path=p) from None
        return
    batch: list[Document] = []
    size = 0
    for doc in read_documents(corpus, text_field=text_field, id_field=id_field, skip_bad=skip_bad, stats=stats):
        if doc.line < start_line:
            continue
        batch.append(Document(id=doc.id, text=doc.text, source=doc.source, line=doc.line))
        size += len(doc.text)
        if size >= batch_bytes:
            yield ("docs", 0, batch), size, doc.line + 1, 0
            batch, size = [], 0
    if batch:
        yield ("docs", 0, batch), size, batch[-1].line + 1, 0


def _token_scan(
    corpus: str | os.PathLike[str], items: list[Item], config: NGramConfig, text_field: str, id_field: str | None,
    skip_bad: bool, keep_all: bool, workers: int, stats: BadInputStats, counts: Counter[str], start_line: int = 1, start_offset: int = 0,
) -> Iterator[tuple[list[DocResult], int, int]]:
    """Results chunk by chunk, in corpus order, with where the next chunk starts (for checkpoints)."""
    cpu0 = time.process_time()
    scanner = NGramScanner(config).fit(items)
    keep_freed_memory()  # the reader's 2 MB blocks too
    src = str(corpus)
    size = os.path.getsize(src) if os.path.isfile(src) else 0
    n_workers = workers or os.cpu_count() or 1
    plain = size and not src.lower().endswith((".gz", ".zst", ".zstd"))
    if size < PARALLEL_MIN_BYTES and not workers:
        n_workers = 1
    args = (scanner, text_field, id_field, skip_bad, keep_all, src)
    if config.prefilter and not keep_all:
        # Load the compiled kernels once here, so the forked workers inherit them instead of
        # each loading them from numba's cache again.
        scanner.prefilter.candidates_jsonl(b'{"text": "warm up"}\n', field="text")
    counts["setup_cpu_ms"] += int((time.process_time() - cpu0) * 1000)  # the index and the kernels, once a run
    tasks = _tasks(src, text_field, id_field, skip_bad, stats, config.batch_bytes, start_line, start_offset)
    pool = _Workers(n_workers, args) if n_workers > 1 else None  # forked before the progress thread starts
    if pool is None:
        _init_worker(*args)
    counts["workers"] = n_workers
    try:
        with make_progress() as prog:
            bar = prog.add_task(f"scanning {Path(src).name}", total=size if plain else None, completed=start_offset if plain else 0)
            pending: deque[tuple[Any, int, int | None, int]] = deque()
            line = start_line  # the first line of the oldest pending block
            for task, nbytes, next_line, next_offset in tasks:
                pending.append(((pool.submit(task) if pool else functools.partial(_work, task)), nbytes, next_line, next_offset))
                # Bounded read-ahead keeps memory flat whatever the corpus size.
                while pending and (len(pending) > 2 * n_workers or not pool):
                    results, line, offset = _collect(pending.popleft(), stats, counts, prog, bar, line)
                    yield results, line, offset
            while pending:
                results, line, offset = _collect(pending.popleft(), stats, counts, prog, bar, line)
                yield results, line, offset
    finally:
        if pool is not None:
            pool.close()


class _Workers:
    """Worker processes, each with its own pipe, fed blocks in turn: the results of one worker
    come back in the order it got its blocks, so the parent reads them in corpus order with no
    helper threads (``multiprocessing.Pool``'s worker-handler thread wakes on every result and
    cost the parent ~0.35 CPU-s per GB)."""

    def __init__(self, n: int, args: tuple[Any, ...]) -> None:
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        self.sent = 0
        for _ in range(n):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(theirs, args), daemon=True)
            proc.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(proc)

    def submit(self, task: tuple[str, int | None, Any]) -> _Reply:
        conn = self.conns[self.sent % len(self.conns)]
        self.sent += 1
        try:
            conn.send(task)
        except OSError:
            raise WorkerDied() from None
        return _Reply(conn)

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc, conn in zip(self.procs, self.conns, strict=True):
            proc.join()
            conn.close()


class WorkerDied(ContamError):
    """A worker process of the scan died (killed, or out of memory)."""

    def __init__(self) -> None:
        super().__init__("a scan worker process died (killed, or out of memory?); run the same scan again to resume from its last checkpoint")


class _Reply:
    """The result of one submitted block."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def get(self) -> tuple[list[DocResult], dict[str, Any], Counter[str], _Shift | None]:
        try:
            ok, value = self.conn.recv()
        except (EOFError, OSError):
            raise WorkerDied() from None
        if not ok:
            raise value
        return value


def _serve(conn: Any, args: tuple[Any, ...]) -> None:
    """A worker process: scan the blocks that come down ``conn`` until the parent closes it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    _init_worker(*args)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[bool, Any] = (True, _work(task))
        except Exception as e:  # bad input, an unreadable file: raised again in the parent
            reply = (False, e)
        conn.send(reply)


def _collect(
    entry: tuple[Any, int, int | None, int], stats: BadInputStats, counts: Counter[str], prog: Any, bar: Any, base: int,
) -> tuple[list[DocResult], int, int]:
    """The results of the oldest block (its first line is ``base``), the next block's first line and byte offset."""
    handle, nbytes, next_line, next_offset = entry
    try:
        results, st, c, shift = handle.get() if isinstance(handle, _Reply) else handle()
    except InputError as e:
        if next_line is None:  # a byte range, numbered from 1 by the worker
            raise _shifted(e, base) from None
        raise
    if shift is not None:
        results = shift.apply(results, st, base)
        next_line = base + shift.n_lines
    counts.update(c)
    stats.skipped += st["skipped"]
    for k, v in st["reasons"].items():
        stats.reasons[k] = stats.reasons.get(k, 0) + v
    stats.examples.extend(st["examples"][: max(0, 5 - len(stats.examples))])
    prog.advance(bar, nbytes)
    assert next_line is not None  # a byte range's worker always reports its lines
    return results, next_line, next_offset


# -- semantic / reasoning levels (helper module contam.scan.hierarchy) ------------------------

def _hierarchy_scan(
    corpus: str | os.PathLike[str], items: list[Item], levels: tuple[str, ...], config: NGramConfig, text_field: str, id_field: str | None,
    skip_bad: bool, keep_all: bool, stats: BadInputStats, counts: Counter[str], thresholds: Any = None, embedder_spec: str = "minilm",
) -> Iterator[DocResult]:
    try:
        from contam.scan.hierarchy import Hierarchy, HierarchyConfig  # type: ignore[import-not-found]
    except ImportError:
        raise ConfigError(f"level(s) {', '.join(lv for lv in levels if lv != 'token')} not available in this install: only 'token' is") from None
    embedder = None
    if any(lv != "token" for lv in levels):
        from contam.models import load_embedder

        embedder = load_embedder(embedder_spec)
    hconfig = HierarchyConfig.for_embedder(embedder, levels=levels, token=config)
    if thresholds is not None:
        hconfig = hconfig.with_thresholds(thresholds)
    hierarchy = Hierarchy(hconfig, embedder=embedder).fit(items)
    _STATE.update(text_field=text_field, skip_bad=skip_bad)

    def docs() -> Iterator[Document]:
        for doc in read_documents(corpus, text_field=text_field, id_field=id_field, skip_bad=skip_bad, stats=stats):
            yield from _check_docs([doc], stats, counts)

    counts["workers"] = 1
    with make_progress() as prog:
        bar = prog.add_task("scanning (" + ", ".join(levels) + ")", total=None)
        for res in hierarchy.scan(docs()):
            prog.advance(bar)
            if res.contaminated or keep_all:
                yield res
