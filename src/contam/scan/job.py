"""The scan job the ``contam scan`` command is a thin layer over: stream a corpus through the
detectors on every core and write per-document JSONL plus a summary JSON, atomically.

Outputs in ``out``: ``flags.jsonl`` (one :class:`~contam.scan.flags.DocResult` per flagged
document, in corpus order; every document with ``keep_all``) and ``summary.json`` (counts,
flag rate, by benchmark and part, skipped bad input, speed). Both appear only when the whole
corpus has been scanned. Until then results go to a hidden ``.flags.jsonl.partial`` with a
``.scan-state.json`` checkpoint (a :class:`ScanState`): an interrupted run (Ctrl-C, a kill)
resumes where it stopped when the same scan is run again; bad input or settings leave ``out``
as it was.

This module is the run: checkpoints, tallies and outputs. The parts it runs live beside it:
:mod:`contam.scan.options` holds its settings (one :class:`~contam.scan.options.ScanOptions`),
:mod:`contam.scan.chunks` cuts the corpus, :mod:`contam.pool` is the ordered worker pool,
:mod:`contam.scan.worker` parses and scores a chunk with the fast JSONL path of
:mod:`contam.data.fastjsonl`.

>>> import tempfile, os
>>> from contam.data.webtext import build_demo_corpus
>>> d = tempfile.mkdtemp(); truth = build_demo_corpus(os.path.join(d, "c.jsonl"), seed=0)
>>> s = run_scan(os.path.join(d, "c.jsonl"), ["gsm8k", "humaneval", "mmlu"], os.path.join(d, "out"))
>>> s["documents"], s["flagged"] >= len(truth) - 2
(200, True)
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from contam.data import BadInputStats, Item, as_items, read_documents
from contam.data.fastjsonl import ParseContext, check_documents
from contam.data.items import Document
from contam.data.loaders import check_corpus_path
from contam.errors import ConfigError, ContamError, InputError, WorkerDied
from contam.outputs import dumps_line, ensure_dir, write_json
from contam.pool import OrderedPool, Reply, usable_cores
from contam.progress import make_progress
from contam.scan.chunks import COMPRESSED, Chunk, Work, corpus_chunks
from contam.scan.flags import DocResult, counted
from contam.scan.masking import write_answers
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.options import ScanOptions
from contam.scan.prefilter import keep_freed_memory
from contam.scan.worker import ChunkResult, WorkerContext, init_worker, shifted, work

__all__ = ["PARALLEL_MIN_BYTES", "ScanState", "WorkerDied", "run_scan"]

#: Corpora smaller than this are scanned in-process (starting workers would cost more).
PARALLEL_MIN_BYTES = 16 << 20
#: The same for the cascade's levels, ~100 times costlier per byte than the token level: from ~2,000
#: documents of a few hundred characters (a worker is a fork of the fitted cascade: it costs no setup).
CASCADE_PARALLEL_MIN_BYTES = 1 << 20


@dataclass
class ScanState:
    """The tallies of a run so far and, in a checkpoint, where it stopped.

    Saved as ``.scan-state.json`` (:meth:`to_dict`): ``key`` is what the run must match to be
    resumed (:func:`_run_key`), ``next_line`` / ``next_offset`` where the corpus continues and
    ``partial_bytes`` how much of ``.flags.jsonl.partial`` the checkpoint covers.
    """

    key: dict[str, Any] = field(default_factory=dict)
    next_line: int = 1
    next_offset: int = 0
    partial_bytes: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    by_part: Counter[str] = field(default_factory=Counter)
    by_bench: dict[str, Counter[str]] = field(default_factory=dict)
    items_hit: set[str] = field(default_factory=set)
    bad: BadInputStats = field(default_factory=BadInputStats)

    def add(self, res: DocResult) -> None:
        """Count one written result."""
        if not res.contaminated:
            return
        self.counts["flagged"] += 1
        for f in res.flags:
            self.counts["flags"] += 1
            self.items_hit.add(f.item_id)
            self.by_part[f.part] += 1
            self.by_bench.setdefault(f.benchmark or "?", Counter())["flags"] += 1
        for b in {f.benchmark or "?" for f in res.flags}:
            self.by_bench[b]["documents"] += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "next_line": self.next_line, "next_offset": self.next_offset, "partial_bytes": self.partial_bytes,
            "counts": dict(self.counts), "by_part": dict(self.by_part), "by_bench": {k: dict(v) for k, v in self.by_bench.items()},
            "items_hit": sorted(self.items_hit), "bad": self.bad.to_dict(),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScanState:
        bad = d["bad"]
        return cls(
            key=d["key"], next_line=int(d["next_line"]), next_offset=int(d["next_offset"]), partial_bytes=int(d["partial_bytes"]),
            counts=Counter(d["counts"]), by_part=Counter(d["by_part"]), by_bench={k: Counter(v) for k, v in d["by_bench"].items()},
            items_hit=set(d["items_hit"]), bad=BadInputStats(bad["skipped"], dict(bad["reasons"]), list(bad["examples"])),
        )  # fmt: skip


def run_scan(
    corpus: str | os.PathLike[str],
    benchmarks: list[str] | list[Item],
    out: str | os.PathLike[str],
    options: ScanOptions | None = None,
    *,
    checkpoint_s: float = 2.0,
    scanner: NGramScanner | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Scan ``corpus`` against ``benchmarks`` (names/paths, or items) and write ``out``; returns the summary.

    ``options`` (a :class:`~contam.scan.options.ScanOptions`) are the scan's settings; any of its
    fields may be given as a keyword instead (``run_scan(corpus, ["gsm8k"], out, workers=1)``)
    or on top of ``options``. A token-level run checkpoints every ``checkpoint_s`` seconds; run
    the same call again after an interruption and it continues from the last checkpoint.
    ``scanner``: an :class:`NGramScanner` already fitted on ``benchmarks`` with the options'
    config (a sharded run fits the index once for all its shards).
    """
    opts = ScanOptions.build(options, **settings).resolved()
    out_dir = ensure_dir(out)  # fail on an unwritable folder before any work
    if not str(corpus).startswith("hf:"):
        check_corpus_path(Path(corpus))
    items = as_items(benchmarks)
    t0, cpu0 = time.perf_counter(), time.process_time()
    partial, state_path = out_dir / ".flags.jsonl.partial", out_dir / ".scan-state.json"
    for stale in out_dir.glob("..scan-state.json.*.tmp"):  # a checkpoint write (atomic_write temp) cut short by a kill
        stale.unlink(missing_ok=True)
    key = _run_key(corpus, items, opts)
    resumed = _load_state(state_path, partial, key) if opts.token_only else None
    state = resumed or ScanState(key=key)
    counts, stats = state.counts, state.bad
    if resumed is not None:  # resume: drop what was written after the last checkpoint
        with open(partial, "r+b") as fh:
            fh.truncate(resumed.partial_bytes)
        counts["resumed_at_line"] = resumed.next_line
    last_checkpoint = time.monotonic()
    clusters: list[Any] = []
    languages: dict[str, Any] = {}
    try:
        with open(partial, "ab" if resumed is not None else "wb") as fh:
            chunks: Iterator[tuple[list[DocResult], int, int]]
            if opts.token_only:
                chunks = _token_scan(corpus, items, opts, stats, counts, state.next_line, state.next_offset, scanner=scanner)
            else:
                hierarchy = _hierarchy_scan(corpus, items, opts, stats, counts, clusters=clusters, languages=languages)
                chunks = (([r], 0, 0) for r in hierarchy)
            for results, next_line, next_offset in chunks:
                for res in results:
                    fh.write((dumps_line(res.to_dict()) + "\n").encode("utf-8"))
                    state.add(res)
                if next_line and time.monotonic() - last_checkpoint >= checkpoint_s:
                    # Checkpoint: everything before next_line is in the partial file.
                    last_checkpoint = time.monotonic()
                    fh.flush()
                    state.next_line, state.next_offset, state.partial_bytes = next_line, next_offset, fh.tell()
                    write_json(state_path, state.to_dict())
            fh.flush()
            os.fsync(fh.fileno())
    except WorkerDied:
        raise  # not the input's fault: the checkpoint stays, and the same scan resumes from it
    except OSError as e:
        # A full disk (or a file-size limit) while writing: the checkpoint stays for the rerun;
        # name the output, which a buffered write's error does not.
        if e.filename is None and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            e.filename = str(out_dir)
        raise
    except ContamError:
        # Bad input or settings: the run cannot be resumed as is, so leave nothing behind.
        for p in (partial, state_path):
            p.unlink(missing_ok=True)
        raise
    os.replace(partial, out_dir / "flags.jsonl")
    state_path.unlink(missing_ok=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0 + counts.pop("worker_cpu_ms", 0) / 1000
    # The items' answers, for `decontaminate --mode mask` where the benchmark file is not at hand.
    write_answers(out_dir, items)
    summary = build_summary(corpus, items, opts, state, wall, cpu)
    if not opts.token_only:
        summary["semantic_clusters"] = clusters
        if languages:
            summary["semantic_languages"] = languages
    write_json(out_dir / "summary.json", summary)
    return summary


def build_summary(
    corpus: str | os.PathLike[str], items: list[Item], opts: ScanOptions, state: ScanState, wall: float, cpu: float
) -> dict[str, Any]:
    """The ``summary.json`` of a scan with (resolved) ``opts`` from its tallies (``state``), wall and CPU seconds."""
    counts, stats = state.counts, state.bad
    return {
        "schema": 1,
        "corpus": str(corpus),
        "benchmarks": sorted({i.benchmark for i in items}),
        "items": len(items),
        "levels": list(opts.levels),
        "config": asdict(opts.config),
        "thresholds": opts.thresholds.to_dict() if opts.thresholds is not None else None,
        "embedder": opts.embedder if not opts.token_only else None,
        "documents": counts["documents"],
        "bytes": counts["bytes"],
        "flagged": counts["flagged"],
        "flag_rate": counts["flagged"] / counts["documents"] if counts["documents"] else 0.0,
        "flags": counts["flags"],
        "flags_below_threshold": counts["flags_below_threshold"],
        "items_flagged": len(state.items_hit),
        "by_benchmark": {k: dict(v) for k, v in sorted(state.by_bench.items())},
        "by_part": dict(sorted(state.by_part.items())),
        "empty_documents": counts["empty"],
        "bad_input": stats.to_dict(),
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "setup_cpu_seconds": round(counts.pop("setup_cpu_ms", 0) / 1000, 3),
        "mb_per_s": round(counts["bytes"] / 1e6 / wall, 2) if wall > 0 else None,
        "workers": counts["workers"] or 1,
        "resumed_at_line": counts["resumed_at_line"] or None,
        "outputs": {"flags": "flags.jsonl", "all_documents": opts.keep_all},
        **_shortlist_summary(counts),
    }


def _shortlist_summary(counts: Counter[str]) -> dict[str, Any]:
    """How many English documents the semantic level's shortlist judged and how many of them it sent
    to MiniLM (the rest scored below its cut and cannot be flagged at that level); empty without it."""
    if not counts["semantic_shortlist_judged"]:
        return {}
    from contam.scan.shortlist import CUT

    judged, embedded = counts["semantic_shortlist_judged"], counts["semantic_shortlist_embedded"]
    return {"semantic_shortlist": {"judged": judged, "embedded": embedded, "not_embedded": judged - embedded, "cut": CUT}}


def _run_key(corpus: str | os.PathLike[str], items: list[Item], opts: ScanOptions) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: the same corpus file, benchmark and settings
    (:meth:`ScanOptions.run_key <contam.scan.options.ScanOptions.run_key>`)."""
    p = Path(corpus)
    st = p.stat() if p.is_file() else None
    digest = hashlib.sha256("\n".join(f"{i.id}\t{len(i.question)}\t{len(i.answer_text)}" for i in items).encode()).hexdigest()
    return {
        "corpus": str(p.resolve()) if st else str(corpus), "size": st.st_size if st else None, "mtime_ns": st.st_mtime_ns if st else None,
        "items": digest, **opts.run_key(),
    }  # fmt: skip


def _load_state(state_path: Path, partial: Path, key: dict[str, Any]) -> ScanState | None:
    """The checkpoint in ``state_path`` if it belongs to this run (``key``) and its partial file is whole."""
    if not (state_path.is_file() and partial.is_file()):
        return None
    try:
        raw = json.loads(state_path.read_text(encoding="utf-8"))
        if raw.get("key") != key:
            return None
        state = ScanState.from_dict(raw)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # unreadable or from another version: start over
    if partial.stat().st_size < state.partial_bytes:
        return None
    return state


# -- the token level on every core ----------------------------------------------------------


def _file_size(src: str) -> int:
    """The corpus's size in bytes when it is one file, else 0 (a folder of shards, a stream)."""
    return os.path.getsize(src) if os.path.isfile(src) else 0


def _worker_count(size: int, workers: int, min_bytes: int) -> int:
    """``workers`` when set, else every core, or 1 for a corpus under ``min_bytes`` (or not one file)."""
    if workers:
        return workers
    return usable_cores() if size >= min_bytes else 1


def _token_scan(
    corpus: str | os.PathLike[str],
    items: list[Item],
    opts: ScanOptions,
    stats: BadInputStats,
    counts: Counter[str],
    start_line: int = 1,
    start_offset: int = 0,
    scanner: NGramScanner | None = None,
) -> Iterator[tuple[list[DocResult], int, int]]:
    """Results chunk by chunk, in corpus order, with where the next chunk starts (for checkpoints)."""
    cpu0 = time.process_time()
    config, text_field, id_field, skip_bad, keep_all, workers = (
        opts.config, opts.text_field, opts.id_field, opts.skip_bad, opts.keep_all, opts.workers
    )  # fmt: skip
    if scanner is None:
        scanner = NGramScanner(config).fit(items, corpus_sample=_corpus_sample(corpus, text_field, config))
    keep_freed_memory()  # the reader's 2 MB blocks too
    src = str(corpus)
    size = _file_size(src)
    n_workers = _worker_count(size, workers, PARALLEL_MIN_BYTES)
    plain = size and not src.lower().endswith(COMPRESSED)
    args = (scanner, text_field, id_field, skip_bad, keep_all, src)
    if config.prefilter and not keep_all:
        scanner.prefilter.warm_up()  # once here: the forked workers inherit the loaded kernels
    counts["setup_cpu_ms"] += int((time.process_time() - cpu0) * 1000)  # the index and the kernels, once a run
    chunks = corpus_chunks(src, text_field, id_field, skip_bad, stats, config.batch_bytes, start_line, start_offset)
    # Forked before the progress thread starts; in-process, this process's own context.
    pool: OrderedPool[Work, ChunkResult] | None = OrderedPool(n_workers, init_worker, work, args) if n_workers > 1 else None
    local: WorkerContext | None = init_worker(*args) if pool is None else None
    counts["workers"] = n_workers
    try:
        with make_progress() as prog:
            bar = prog.add_task(f"scanning {Path(src).name}", total=size if plain else None, completed=start_offset if plain else 0)
            pending: deque[tuple[Reply[ChunkResult] | Callable[[], ChunkResult], Chunk]] = deque()
            line = start_line  # the first line of the oldest pending chunk
            for chunk in chunks:
                if pool is not None:
                    pending.append((pool.submit(chunk.work), chunk))
                else:
                    assert local is not None  # no pool: this process's own context
                    pending.append((functools.partial(work, local, chunk.work), chunk))
                # Bounded read-ahead keeps memory flat whatever the corpus size.
                while pending and (len(pending) > 2 * n_workers or not pool):
                    results, line, offset = collect_chunk(*pending.popleft(), stats, counts, prog, bar, line)
                    yield results, line, offset
            while pending:
                results, line, offset = collect_chunk(*pending.popleft(), stats, counts, prog, bar, line)
                yield results, line, offset
    finally:
        if pool is not None:
            pool.close()


def collect_chunk(
    handle: Reply[ChunkResult] | Callable[[], ChunkResult],
    chunk: Chunk,
    stats: BadInputStats,
    counts: Counter[str],
    prog: Any,
    bar: Any,
    base: int,
) -> tuple[list[DocResult], int, int]:
    """The results of the oldest chunk (its first line is ``base``), the next chunk's first line and byte offset."""
    next_line = chunk.next_line
    try:
        got = handle.get() if isinstance(handle, Reply) else handle()
    except InputError as e:
        if next_line is None:  # a byte range, numbered from 1 by the worker
            raise shifted(e, base) from None
        raise
    results, st = got.results, got.bad
    if got.shift is not None:
        results = got.shift.apply(results, st, base)
        next_line = base + got.shift.n_lines
    counts.update(got.counts)
    stats.skipped += st["skipped"]
    for k, v in st["reasons"].items():
        stats.reasons[k] = stats.reasons.get(k, 0) + v
    stats.examples.extend(st["examples"][: max(0, 5 - len(stats.examples))])
    prog.advance(bar, chunk.nbytes)
    assert next_line is not None  # a byte range's worker always reports its lines
    return results, next_line, chunk.next_offset


# -- semantic / reasoning levels (helper module contam.scan.hierarchy) ------------------------


def _corpus_sample(corpus: str | os.PathLike[str], text_field: str, config: NGramConfig, n: int = 2000) -> list[str] | None:
    """The first ``n`` readable documents' texts, for learning corpus stop-grams (only when
    ``config.stopgram_df`` asks for them); bad records are skipped here and reported by the scan."""
    if config.stopgram_df <= 0:
        return None
    out: list[str] = []
    for doc in read_documents(corpus, text_field=text_field, skip_bad=True, stats=BadInputStats()):
        out.append(doc.text)
        if len(out) >= n:
            break
    return out


def _hierarchy_scan(
    corpus: str | os.PathLike[str],
    items: list[Item],
    opts: ScanOptions,
    stats: BadInputStats,
    counts: Counter[str],
    clusters: list[Any] | None = None,
    languages: dict[str, Any] | None = None,
) -> Iterator[DocResult]:
    """Results of the cascade, document by document; ``clusters`` receives the benchmark-level
    semantic signal (candidates forming a cluster around one item) once the corpus is read."""
    levels, config, text_field, id_field, skip_bad = opts.levels, opts.config, opts.text_field, opts.id_field, opts.skip_bad
    try:
        from contam.scan.hierarchy import Hierarchy, HierarchyConfig
    except ImportError:
        raise ConfigError(
            f"level(s) {', '.join(lv for lv in levels if lv != 'token')} not available in this install: only 'token' is"
        ) from None
    n_workers = _worker_count(_file_size(str(corpus)), opts.workers, CASCADE_PARALLEL_MIN_BYTES)
    embedder = None
    if any(lv != "token" for lv in levels):
        from contam.models import load_embedder

        # Forked workers cannot use a CUDA context their parent made: several workers embed on the
        # CPU; one process (or a Ray actor, started fresh) may take the GPU.
        embedder = load_embedder(opts.embedder, device="cpu" if n_workers > 1 else None)
    hierarchy = Hierarchy(HierarchyConfig.for_scan(embedder, opts), embedder=embedder).fit(
        items, corpus_sample=_corpus_sample(corpus, text_field, config)
    )
    parse = ParseContext(source=str(corpus), text_field=text_field, id_field=id_field, skip_bad=skip_bad)

    def docs() -> Iterator[Document]:
        for doc in read_documents(corpus, text_field=text_field, id_field=id_field, skip_bad=skip_bad, stats=stats):
            yield from check_documents(parse, [doc], stats, counts)

    counts["workers"] = n_workers
    if n_workers > 1:
        from contam.scan.cascade_pool import scan_parallel

        results = scan_parallel(hierarchy, docs(), n_workers, counts)
    else:
        results = hierarchy.scan(docs())
    with make_progress() as prog:
        bar = prog.add_task("scanning (" + ", ".join(levels) + ")", total=None)
        for raw in results:
            prog.advance(bar)
            res = counted(raw)  # one rule for what a flag is: its score reached its own threshold
            if "shortlist_probability" in raw.scores:  # judged by the semantic level's cheap first stage
                counts["semantic_shortlist_judged"] += 1
                counts["semantic_shortlist_embedded"] += "cosine" in raw.scores
            counts["flags_below_threshold"] += len(raw.flags) - len(res.flags)
            if res.contaminated or opts.keep_all:
                yield res
    # Benchmark-level semantic signal ("k candidates form a cluster around item X") for the summary.
    if clusters is not None:
        clusters.extend(hierarchy.cluster_summary[:50])
    # Which languages the semantic level saw, where it sent them, and any it cannot vouch for.
    if languages is not None:
        languages.update(hierarchy.language_summary())
