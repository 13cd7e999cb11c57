"""What a scan worker does with one chunk: parse it (the fast JSONL path) and score it.

A worker's settings and its open file live in a :class:`WorkerContext` that
:func:`init_worker` builds once per process and the pool passes to every :func:`work` call:
explicit, so the parent (which scans in-process on small corpora) and its workers each hold
their own.

A :class:`~contam.scan.chunks.ByteRange` comes without its first line's number (the reader does
not count lines): the worker numbers its lines from 1 and returns a :class:`Shift` with which
the parent renumbers them once it knows where the range starts.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from contam.data import BadInputStats
from contam.data.fastjsonl import ParseContext, check_documents, parse_block
from contam.errors import InputError
from contam.scan.chunks import Block, ByteRange, Docs, Work, read_range
from contam.scan.flags import DocResult
from contam.scan.ngram import NGramScanner
from contam.scan.prefilter import keep_freed_memory


@dataclass
class WorkerContext:
    """One worker's scanner, settings and open corpus file."""

    scanner: NGramScanner
    parse: ParseContext
    keep_all: bool = False
    fd: int | None = field(default=None, repr=False)

    def read(self, r: ByteRange) -> bytes:
        """The bytes of ``r``; the corpus stays open between ranges."""
        if self.fd is None:
            self.fd = os.open(self.parse.source, os.O_RDONLY)
        return read_range(self.fd, self.parse.source, r)


def init_worker(scanner: NGramScanner, text_field: str, id_field: str | None, skip_bad: bool, keep_all: bool, source: str) -> WorkerContext:
    """A worker's context (and its allocator settings), once per process."""
    keep_freed_memory()
    return WorkerContext(scanner, ParseContext(source=source, text_field=text_field, id_field=id_field, skip_bad=skip_bad), keep_all)


@dataclass
class ChunkResult:
    """What a worker sends back for a chunk: the results to write, the skipped bad input, the
    counts (documents, bytes, empty, CPU time) and, for a byte range, its :class:`Shift`."""

    results: list[DocResult]
    bad: dict[str, Any]
    counts: Counter[str]
    shift: Shift | None = None


def work(ctx: WorkerContext, chunk: Work) -> ChunkResult:
    """Parse (a block of raw JSONL lines) or take (documents) one chunk and scan it."""
    cpu0 = time.process_time()
    ctx.parse.new_block()
    stats = BadInputStats()
    counts: Counter[str] = Counter()
    relative = isinstance(chunk, ByteRange)
    if isinstance(chunk, ByteRange):
        chunk = Block(1, ctx.read(chunk))
    n_lines = 0  # known for blocks; a byte range is always a block
    scanner = ctx.scanner
    if isinstance(chunk, Block) and not ctx.keep_all and scanner.config.prefilter:
        # Only the prefilter's candidates become Documents and reach the exact scorer.
        texts, make, picked, n_lines = parse_block(ctx.parse, chunk.data, chunk.first_line, stats, counts, scanner.prefilter)
        if picked is None:
            picked = scanner.prefilter.candidates(texts) if texts else np.zeros(0, dtype=np.int64)
        docs = [make(i) for i in picked.tolist()]
        results = scanner.scan_batch(docs, prefiltered=True) if docs else []
    else:
        if isinstance(chunk, Block):
            texts, make, _, n_lines = parse_block(ctx.parse, chunk.data, chunk.first_line, stats, counts)
            docs = [make(i) for i in range(len(texts))]
        else:
            assert isinstance(chunk, Docs)
            docs = check_documents(ctx.parse, chunk.docs, stats, counts)
        results = scanner.scan_batch(docs, keep_all=ctx.keep_all) if docs else []
    shift = Shift(n_lines, ctx.parse.line_ids, ctx.parse.errors) if relative else None
    counts["worker_cpu_ms"] += int((time.process_time() - cpu0) * 1000)
    return ChunkResult(results, stats.to_dict(), counts, shift)


class Shift:
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
        stats["examples"] = [str(shifted(e, base)) for e in self.errors]
        return out


def shifted(err: InputError, base: int) -> InputError:
    """``err`` with its line (numbered from 1 in a block) as line ``base + line - 1`` of the corpus."""
    return InputError(err.message, path=err.path, line=err.line + base - 1 if err.line is not None else None, field=err.field)
