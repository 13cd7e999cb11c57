"""The cascade (token, semantic and reasoning levels) on every core: the fitted
:class:`~contam.scan.hierarchy.Hierarchy` is forked into worker processes, which scan batches of
documents while the parent reads the corpus and writes the results in corpus order.

One process scans ~100 documents per CPU-second with the defaults (the shortlist, MiniLM on the few
it keeps, the text features, the reasoning level); the levels are Python and numpy between torch
calls, so threads would queue on the GIL, and processes are what makes a second core count. Each
worker runs torch on one thread (n workers for n cores; and a forked child must not reuse the
parent's OpenMP pool), and so do its BLAS and OpenMP pools.

A worker gets :data:`BATCH` documents at a time, so the benchmark-level cluster summary (DBSCAN
over the benchmark and the embedded documents, :meth:`SemanticScores.cluster_summary`) is made per
batch and merged; the flags do not depend on it.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

from contam.data.items import Document
from contam.pool import OrderedPool, Reply
from contam.scan.flags import DocResult
from contam.scan.hierarchy import Hierarchy

#: Documents per task: large enough that a task's fixed cost (a DBSCAN over the benchmark's vectors,
#: pickling) is small against its scoring, small enough that both cores stay busy on a short corpus.
BATCH = 2048


@dataclass
class BatchResult:
    """What a worker sends back for one batch: the results and what the batch added to the tallies."""

    results: list[DocResult]
    clusters: list[dict[str, Any]] = field(default_factory=list)
    languages: Counter[str] = field(default_factory=Counter)
    uncovered: Counter[str] = field(default_factory=Counter)
    cpu_ms: int = 0


def _init(hierarchy: Hierarchy) -> Hierarchy:
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    # numpy's OpenBLAS (the background cosines) and OpenMP (DBSCAN) would each start a thread per
    # core in every worker, n workers x n threads on n cores: 6 % more CPU on 8,030 documents. Called
    # as a function, the limit holds for the worker's life.
    threadpool_limits(1)
    return hierarchy


def _scan_batch(hierarchy: Hierarchy, docs: list[Document]) -> BatchResult:
    cpu0 = time.process_time()
    hierarchy.cluster_summary = []
    sem = hierarchy.semantic
    if sem is not None:
        sem.language_counts, sem.uncovered = Counter(), Counter()
    results = hierarchy.scan_chunk(docs)
    out = BatchResult(results, hierarchy.cluster_summary)
    if sem is not None:
        out.languages, out.uncovered = sem.language_counts, sem.uncovered
    out.cpu_ms = int((time.process_time() - cpu0) * 1000)
    return out


def scan_parallel(
    hierarchy: Hierarchy, docs: Iterable[Document], workers: int, counts: Counter[str] | None = None, batch: int = BATCH
) -> Iterator[DocResult]:
    """The results of ``hierarchy.scan(docs)``, in order, from ``workers`` processes; the workers'
    cluster summaries and language tallies are added to ``hierarchy`` as each batch comes back, and
    their CPU to ``counts["worker_cpu_ms"]``; ``batch`` documents go to a worker at a time.

    The workers are forked here, before the caller starts a progress thread (a fork copies no
    thread, and a lock one held would stay held in the child); the results are read by iterating.
    """
    hierarchy.cluster_summary = []
    docs = iter(docs)
    head = list(islice(docs, batch))
    if hierarchy.semantic is not None:
        # The first batch holds a non-English document: fit the multilingual space here, once,
        # rather than in every worker. (One that first appears later is fitted by each worker.)
        hierarchy.semantic.prepare_routes([d.text for d in head])
    pool: OrderedPool[list[Document], BatchResult] = OrderedPool(workers, _init, _scan_batch, (hierarchy,), large_tasks=True)
    return _results(pool, hierarchy, chain(head, docs), workers, counts, batch)


def _results(
    pool: OrderedPool[list[Document], BatchResult],
    hierarchy: Hierarchy,
    docs: Iterable[Document],
    workers: int,
    counts: Counter[str] | None,
    size: int,
) -> Iterator[DocResult]:
    pending: deque[Reply[BatchResult]] = deque()

    def collect() -> Iterator[DocResult]:
        got = pending.popleft().get()
        hierarchy.cluster_summary.extend(got.clusters)
        if hierarchy.semantic is not None:
            hierarchy.semantic.language_counts.update(got.languages)
            hierarchy.semantic.uncovered.update(got.uncovered)
        if counts is not None:
            counts["worker_cpu_ms"] += got.cpu_ms
        yield from got.results

    with pool:
        batch: list[Document] = []
        for d in docs:
            batch.append(d)
            if len(batch) >= size:
                pending.append(pool.submit(batch))
                batch = []
                # Bounded read-ahead keeps the parent's memory flat whatever the corpus size.
                while len(pending) > 2 * workers:
                    yield from collect()
        if batch:
            pending.append(pool.submit(batch))
        while pending:
            yield from collect()
