"""Speed of the token-level (L1) corpus scan, against a straightforward baseline measured in the same run.

Builds a >= 1 GB JSONL corpus of web-like text (real paragraphs: GitHub issues, stdlib
docstrings, license texts) with real GSM8K test, HumanEval and MMLU items injected verbatim
and lightly edited at known lines, scans it with ``contam.scan.job.run_scan`` on every core
against GSM8K test + HumanEval + the five MMLU subjects, and prints MB/s per core, peak RSS and
recall. On a 50 MB slice it times the datatrove-style baseline (word n-gram tuples in a Python
set) and the same scanner on one core, and prints the ratio: on parsed texts, and from the raw
JSONL lines (the baseline's ``json.loads`` per line against the scan job's worker).

Targets (issue 2): >= 30 MB/s per core, >= 20x the baseline, peak RSS < 1.5 GB, 100% recall of
verbatim injections.

    .venv/bin/python bench/l1_scan.py [--gb 1.0] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from contam.data import Document, load_benchmark
from contam.data.webtext import inject, paragraphs
from contam.scan.exact import item_parts
from contam.scan.job import _init_worker, _work, run_scan
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.prefilter import keep_freed_memory

BENCHMARKS = ["gsm8k", "humaneval", "mmlu"]


def build(path: Path, target_bytes: int, seed: int, every: int) -> list[dict]:
    """Write the corpus; every ``every``-th document carries an injected item. Returns ground truth."""
    rng = random.Random(seed)
    pool = paragraphs()
    escaped = [json.dumps(p, ensure_ascii=False)[1:-1] for p in pool]
    items = [it for b in BENCHMARKS for it in load_benchmark(b)]
    truth: list[dict] = []
    written, line = 0, 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < target_bytes:
            line += 1
            if line % every == 0:
                item = rng.choice(items)
                part = rng.choice(("question", "item"))
                edit = "verbatim" if rng.random() < 0.75 else "light"
                doc = "\n\n".join(rng.choices(pool, k=rng.randint(2, 9)))
                text, _ = inject(doc, item, rng, part, edit)
                body = json.dumps(text, ensure_ascii=False)
                truth.append({"line": line, "item_id": item.id, "part": part, "edit": edit})
            else:
                body = '"' + "\\n\\n".join(rng.choices(escaped, k=rng.randint(2, 9))) + '"'
            rec = f'{{"id": "doc-{line}", "text": {body}}}\n'
            fh.write(rec)
            written += len(rec)
    return truth


_WORD = re.compile(r"[^\W_]+")


def baseline(items: list, docs: list[str], n: int) -> tuple[float, float, int]:
    """The datatrove approach: normalised word n-grams as tuples in a Python set. Returns the
    CPU-seconds of the scan, of building the set (not counted in its throughput), and the
    number of documents sharing an n-gram with the benchmark."""
    t0 = time.process_time()
    index: dict[tuple[str, ...], set[str]] = {}
    for it in items:
        for text in item_parts(it).values():
            w = [m.lower() for m in _WORD.findall(text)]
            for g in zip(*[w[i:] for i in range(n)], strict=False):
                index.setdefault(g, set()).add(it.id)
    build_s = time.process_time() - t0
    t0 = time.process_time()
    flagged = 0
    for text in docs:
        w = [m.lower() for m in _WORD.findall(text)]
        hits: Counter[str] = Counter()
        for g in zip(*[w[i:] for i in range(n)], strict=False):
            for item_id in index.get(g, ()):
                hits[item_id] += 1
        flagged += bool(hits)
    return time.process_time() - t0, build_s, flagged


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0, help="corpus size in GB (1e9 bytes)")
    ap.add_argument("--slice-mb", type=float, default=50.0, help="size of the baseline slice")
    ap.add_argument("--every", type=int, default=500, help="inject an item every N documents")
    ap.add_argument("--keep", type=Path, default=None, help="build the corpus here and keep it")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.environ.setdefault("CONTAM_PROGRESS", "0")
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="contam-l1-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    corpus = tmp / "corpus.jsonl"
    cores = os.cpu_count() or 1
    print(f"machine: {cores} cores, Python {sys.version.split()[0]}; corpus in {tmp}")
    t0 = time.perf_counter()
    truth = build(corpus, int(args.gb * 1e9), args.seed, args.every)
    size = corpus.stat().st_size
    print(f"built {size / 1e9:.2f} GB, {len(truth):,} injections in {time.perf_counter() - t0:.0f} s")

    # -- the full scan on every core --------------------------------------------------------
    cpu0 = time.process_time()
    ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    summary = run_scan(corpus, BENCHMARKS, tmp / "scan", workers=cores)
    wall = time.perf_counter() - t0
    ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    parent_cpu = time.process_time() - cpu0
    worker_cpu = ch1.ru_utime + ch1.ru_stime - ch0.ru_utime - ch0.ru_stime
    cpu = parent_cpu + worker_cpu
    parent_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_rss = ch1.ru_maxrss / 1024
    found: dict[int, set[str]] = {}
    with open(tmp / "scan" / "flags.jsonl", encoding="utf-8") as fh:
        for raw in fh:
            r = json.loads(raw)
            found[r["line"]] = {f["item_id"] for f in r["flags"]}
    recall = {}
    for edit in ("verbatim", "light"):
        sel = [t for t in truth if t["edit"] == edit]
        recall[edit] = sum(t["item_id"] in found.get(t["line"], ()) for t in sel) / max(len(sel), 1)
    injected = {t["line"] for t in truth}
    false_docs = sum(1 for line in found if line not in injected)
    mb = size / 1e6
    print(f"scan: {mb:,.0f} MB in {wall:.1f} s wall = {mb / wall:.1f} MB/s on {cores} workers"
          f" = {mb / wall / cores:.1f} MB/s per core (wall); {cpu:.1f} CPU-s = {mb / cpu:.1f} MB/s per CPU-second")
    print(f"CPU split: parent (read, index, write) {parent_cpu:.1f} s, workers (parse, scan) {worker_cpu:.1f} s = {mb / worker_cpu:.1f} MB/s per worker CPU-second")
    print(f"peak RSS: parent {parent_rss:.0f} MB, largest worker {child_rss:.0f} MB, total <= {parent_rss + cores * child_rss:.0f} MB")
    print(f"recall: verbatim {100 * recall['verbatim']:.2f}% of {sum(t['edit'] == 'verbatim' for t in truth)}, "
          f"light edits {100 * recall['light']:.2f}% of {sum(t['edit'] == 'light' for t in truth)}; "
          f"flagged documents without an injection: {false_docs}; summary flagged {summary['flagged']:,}")

    # -- baseline vs ours on one core, same 50 MB slice ---------------------------------------
    raw_lines: list[bytes] = []
    got = 0
    with open(corpus, "rb") as fh:
        for raw in fh:
            raw_lines.append(raw)
            got += len(raw)
            if got >= args.slice_mb * 1e6:
                break
    t0 = time.process_time()
    docs = [json.loads(raw)["text"] for raw in raw_lines]  # the baseline's reader: json.loads per line
    parse_s = time.process_time() - t0
    slice_mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    raw_mb = got / 1e6
    items = [it for b in BENCHMARKS for it in load_benchmark(b)]
    base_s, base_build_s, base_flagged = baseline(items, docs, 13)
    scanner = NGramScanner(NGramConfig()).fit(items)
    keep_freed_memory()  # as the scan job's workers do
    documents = [Document(id=str(i), text=t) for i, t in enumerate(docs)]
    batches: list[list[Document]] = [[]]
    size = 0
    for d in documents:  # the chunks a worker gets
        batches[-1].append(d)
        size += len(d.text)
        if size >= scanner.config.batch_bytes:
            batches.append([])
            size = 0
    # Untimed warm-up on 50 documents: the compiled kernels load once per process (the full run
    # above pays it), which is no part of the throughput on the slice.
    scanner.scan_batch(batches[0][:50])
    t0 = time.process_time()
    ours_flagged = sum(len(scanner.scan_batch(b)) for b in batches if b)
    ours_s = time.process_time() - t0
    # The same slice from its raw JSONL lines through the scan job's worker (parse, check, prefilter, score).
    _init_worker(scanner, "text", None, False, False, str(corpus))
    blocks = [b"".join(raw_lines[i : i + 2000]) for i in range(0, len(raw_lines), 2000)]
    _work(("block", 1, b"".join(raw_lines[:50])))  # untimed warm-up, as above
    t0 = time.process_time()
    job_flagged = sum(len(_work(("block", 1, b))[0]) for b in blocks)
    job_s = time.process_time() - t0
    print(f"baseline (Python set of word 13-gram tuples): {slice_mb:.0f} MB in {base_s:.1f} CPU-s = {slice_mb / base_s:.2f} MB/s, {base_flagged} documents with a shared 13-gram")
    print(f"ours, one core, same slice: {ours_s:.2f} CPU-s = {slice_mb / ours_s:.1f} MB/s, {ours_flagged} flagged")
    setup = summary["setup_cpu_seconds"]
    print(f"ratio (one core): {base_s / ours_s:.1f}x; full run per CPU-second vs baseline: {(mb / cpu) / (slice_mb / base_s):.1f}x"
          f" (our setup included: {setup:.2f} CPU-s for the index and loading the compiled kernels; the baseline's index, {base_build_s:.2f} CPU-s, is not);"
          f" without either setup: {(mb / (cpu - setup)) / (slice_mb / base_s):.1f}x")
    print(f"with JSON parsing, same slice ({raw_mb:.0f} MB of JSONL): baseline json.loads + scan {parse_s + base_s:.2f} CPU-s = {raw_mb / (parse_s + base_s):.2f} MB/s;"
          f" ours (the job's worker on 2,000-line blocks) {job_s:.2f} CPU-s = {raw_mb / job_s:.1f} MB/s, {job_flagged} flagged; ratio {(parse_s + base_s) / job_s:.1f}x;"
          f" full run per CPU-second vs this baseline: {(mb / cpu) / (raw_mb / (parse_s + base_s)):.1f}x")
    if args.keep is None:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
