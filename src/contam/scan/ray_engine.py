"""The Ray Data executor of a sharded scan (``contam scan --engine ray``; ``pip install 'contam[ray]'``).

Same inputs, flags and outputs as the local engine (:mod:`contam.scan.shards`): the shards are
resolved, selected and kept or resumed the same way, and each finished shard is written by the
driver into the same ``OUT/shards/<name>/`` layout with the same manifest. What changes is who
scans:

* **token level** — a stateless ``map_batches`` over work units: a plain JSONL shard is cut into
  the same byte ranges the local engine deals to its processes (the driver reads only a line end
  near each boundary), any other shard (.gz, .zst, Parquet) is one unit. Each task scans its
  unit with the local engine's own worker code (:func:`contam.scan.worker.work`), with the
  fitted benchmark index put once into the object store, so a flag, a line number and a bad-input
  message are the local engine's, byte for byte. Ray's ``read_json`` is not used: it drops line
  numbers (which every flag and ``contam decontaminate`` rely on) and fails a whole block on one
  bad line where the local engine names the line or skips it.
* **semantic and reasoning levels** — an actor pool (``ActorPoolStrategy``): each actor loads the
  embedder and fits the cascade once and scans whole shards; actors ask for a fraction of a CPU
  (0.5, or one GPU each where the cluster has GPUs) so the pool never starves Ray's own read
  stage on a small machine.

Order is kept (``preserve_order``), so the driver writes each shard's results in corpus order.
A task whose worker process dies is retried by Ray (tasks' default ``max_retries``); a shard with bad input is
named and skipped or fails the job, as ``--on-bad-shard`` says.
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contam.data import BadInputStats, Item
from contam.errors import ConfigError, ContamError, InputError
from contam.scan.chunks import ByteRange, Chunk, byte_ranges, corpus_chunks
from contam.scan.flags import DocResult

if TYPE_CHECKING:
    from contam.scan.options import ScanOptions

#: Fraction of a CPU each semantic-level actor asks for (a full CPU per actor deadlocked the
#: read stage when the pool was as large as a 2-core machine's CPU count).
ACTOR_CPUS = 0.5
COMPRESSED = (".gz", ".zst", ".zstd")


def actor_pool(cpus: float, gpus: float, shards: int) -> tuple[int, float]:
    """(most semantic-level actors, GPUs each asks for) on a cluster of ``cpus`` and ``gpus``.

    The actors are as many as the CPUs allow (the first stage, the shortlist, is CPU work: ~3 ms a
    document), and they *share* the GPUs: MiniLM runs on a GPU only for the 1-3 % of documents the
    shortlist keeps, at ~0.2 ms each on an H200 (``bench/gpu_embed.py``), so one card keeps up with
    hundreds of cores. One whole GPU per actor would cap the pool at the GPU count.

    >>> actor_pool(16, 1, 100)
    (31, 0.03225806451612903)
    >>> actor_pool(2, 0, 1)
    (1, 0.0)
    """
    size = max(1, min(shards, int(cpus / ACTOR_CPUS) - 1))
    return size, (min(1.0, gpus / size) if gpus else 0.0)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--engine ray needs Ray Data: pip install 'contam[ray]'") from None
    return ray


def init_ray(address: str = "auto") -> Any:
    """Connect to a cluster (``auto``: the one this machine belongs to, else a local one) or start
    a local one (``local``); a session already started (e.g. by tests) is reused."""
    ray = _ray()
    if not ray.is_initialized():
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            try:
                ray.init(address=address, log_to_driver=False)
            except ConnectionError:
                if address != "auto":
                    raise ConfigError(f"--ray-address {address}: no Ray cluster there") from None
                ray.init(include_dashboard=False, log_to_driver=False)
    return ray


def _units(local: Sequence[str], batch_bytes: int, token_only: bool) -> list[dict[str, Any]]:
    """Work units in shard order: byte ranges of plain JSONL shards (token level), else whole shards."""
    units: list[dict[str, Any]] = []
    for k, path in enumerate(local):
        low = path.lower()
        plain = low.endswith((".jsonl", ".ndjson")) and not low.endswith(COMPRESSED)
        if token_only and plain and hasattr(os, "pread"):
            for j, c in enumerate(byte_ranges(Path(path), batch_bytes, 0)):
                assert isinstance(c.work, ByteRange)
                units.append({"shard": k, "seq": j, "path": path, "start": c.work.start, "end": c.work.end})
            if os.path.getsize(path) == 0:
                units.append({"shard": k, "seq": 0, "path": path, "start": 0, "end": 0})
        else:
            units.append({"shard": k, "seq": 0, "path": path, "start": -1, "end": -1})
    return units


_SCANNER: dict[str, Any] = {}  # per Ray worker process: the index fetched from the object store once


def _scan_units(batch: dict[str, Any], scanner_ref: Any, opts: ScanOptions) -> dict[str, Any]:
    """The token level on a batch of units (a Ray task: stateless but for the cached index)."""
    import ray

    from contam.scan.worker import init_worker, work

    key = repr(scanner_ref)
    if key not in _SCANNER:
        _SCANNER.clear()
        _SCANNER[key] = ray.get(scanner_ref)
    scanner = _SCANNER[key]
    payloads = []
    for path, start, end in zip(batch["path"], batch["start"], batch["end"], strict=True):
        ctx = init_worker(scanner, opts.text_field, opts.id_field, opts.skip_bad, opts.keep_all, str(path))
        try:
            if int(start) >= 0:
                value: Any = ("range", work(ctx, ByteRange(int(start), int(end))))
            else:
                stats = BadInputStats()
                parts = []
                for chunk in corpus_chunks(str(path), opts.text_field, opts.id_field, opts.skip_bad, stats, opts.config.batch_bytes):
                    res = work(ctx, chunk.work)
                    parts.append((chunk, res))
                value = ("whole", parts, stats.to_dict())
            payloads.append(pickle.dumps((True, value)))
        except ContamError as e:
            payloads.append(pickle.dumps((False, ("range" if int(start) >= 0 else "whole", e))))
        finally:
            if ctx.fd is not None:
                os.close(ctx.fd)
    return {"shard": batch["shard"], "seq": batch["seq"], "payload": payloads}


class _CascadeActor:
    """One actor of the semantic/reasoning pool: the embedder and the fitted cascade, once."""

    def __init__(self, items: list[Item], opts: ScanOptions) -> None:
        from contam.models import load_embedder
        from contam.scan.hierarchy import Hierarchy, HierarchyConfig

        embedder = load_embedder(opts.embedder)
        self.hierarchy = Hierarchy(HierarchyConfig.for_scan(embedder, opts), embedder=embedder).fit(items)
        self.opts = opts

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        from collections import Counter

        from contam.data import read_documents
        from contam.data.fastjsonl import ParseContext, check_documents

        o = self.opts
        payloads = []
        for path in batch["path"]:
            stats, counts = BadInputStats(), Counter()
            parse = ParseContext(source=str(path), text_field=o.text_field, id_field=o.id_field, skip_bad=o.skip_bad)
            try:
                docs = (d for doc in read_documents(str(path), text_field=o.text_field, id_field=o.id_field, skip_bad=o.skip_bad, stats=stats)
                        for d in check_documents(parse, [doc], stats, counts))  # fmt: skip
                results = [r for r in self.hierarchy.scan(docs) if r.contaminated or o.keep_all]
                payloads.append(pickle.dumps((True, ("cascade", results, stats.to_dict(), counts))))
            except ContamError as e:
                payloads.append(pickle.dumps((False, ("whole", e))))
        return {"shard": batch["shard"], "seq": batch["seq"], "payload": payloads}


def ray_shard_results(local: Sequence[str], items: list[Item], opts: ScanOptions, scanner: Any) -> Iterator[tuple[int, Any]]:
    """Per pending shard, in order: ``(k, outcome)`` where outcome is a ContamError or
    ``(results, stats, counts, seconds)`` with the results renumbered in corpus order. ``opts``:
    the run's resolved options (its cluster is ``opts.ray_address``); ``scanner``: the fitted
    token-level index (token level only)."""
    ray = init_ray(opts.ray_address)
    from collections import Counter

    from ray.data import ActorPoolStrategy, DataContext

    from contam.scan.job import collect_chunk
    from contam.scan.worker import shifted

    ctx = DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False  # contam's own progress and summary say what happened
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    token_only = opts.token_only
    units = _units(local, opts.config.batch_bytes, token_only)
    if not units:
        return
    ds = ray.data.from_items(units, override_num_blocks=min(len(units), 200))
    if token_only:
        ref = ray.put(scanner)  # the index, once, in the object store
        # A task whose worker process dies is retried by Ray core (tasks' default max_retries is 3).
        ds = ds.map_batches(_scan_units, batch_size=1, fn_kwargs={"scanner_ref": ref, "opts": opts}, num_cpus=1)
    else:
        res = ray.cluster_resources()
        size, gpus = actor_pool(float(res.get("CPU", 1)), float(res.get("GPU", 0)), len(local))
        ds = ds.map_batches(_CascadeActor, batch_size=1, fn_constructor_kwargs={"items": items, "opts": opts},
                            compute=ActorPoolStrategy(min_size=1, max_size=size), num_cpus=ACTOR_CPUS, num_gpus=gpus)  # fmt: skip
    current, failed = -1, False
    results: list[DocResult] = []
    stats, counts = BadInputStats(), Counter()
    line, t0 = 1, time.perf_counter()

    class _Bar:
        def advance(self, *_: Any) -> None:
            pass

    for row in ds.iter_rows():
        k = int(row["shard"])
        if k != current:
            if current >= 0 and not failed:
                yield current, (results, stats, counts, time.perf_counter() - t0)
            current, failed, results, stats, counts, line, t0 = k, False, [], BadInputStats(), Counter(), 1, time.perf_counter()
        if failed:
            continue
        ok, value = pickle.loads(row["payload"])
        if not ok:
            kind, err = value
            failed = True
            # A byte range's worker numbered its lines from 1: say the corpus line, as the local engine does.
            yield k, shifted(err, line) if kind == "range" and isinstance(err, InputError) else err
            continue
        try:
            if value[0] == "range":
                res = value[1]
                got, line, _ = collect_chunk(lambda res=res: res, Chunk(ByteRange(0, 0), 0, None, 0), stats, counts, _Bar(), None, line)
                results.extend(got)
            elif value[0] == "whole":
                for chunk, res in value[1]:
                    got, line, _ = collect_chunk(lambda res=res: res, chunk, stats, counts, _Bar(), None, line)
                    results.extend(got)
                _add_stats(stats, value[2])
            else:
                results.extend(value[1])
                _add_stats(stats, value[2])
                counts.update(value[3])
        except ContamError as e:
            failed = True
            yield k, e
    if current >= 0 and not failed:
        yield current, (results, stats, counts, time.perf_counter() - t0)


def _add_stats(stats: BadInputStats, d: dict[str, Any]) -> None:
    stats.skipped += d["skipped"]
    for key, v in d["reasons"].items():
        stats.reasons[key] = stats.reasons.get(key, 0) + v
    stats.examples.extend(d["examples"][: max(0, 5 - len(stats.examples))])
