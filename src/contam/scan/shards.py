"""Sharded corpora: many input files in, one output shard per input shard, a run manifest.

``--corpus`` may name a file, a folder (every JSONL / .gz / .zst / Parquet file under it), a
glob (``data/*.jsonl.gz``), several of these, or fsspec URLs (``s3://bucket/cc/*.jsonl.zst``)
where fsspec is installed. Each input shard is scanned on its own into
``OUT/shards/<name>/`` (``flags.jsonl``, ``summary.json``, ``shard.json`` and, when asked, the
decontaminated copy), built in a hidden ``.partial`` folder and renamed into place whole: the
shard is the unit of resume (a rerun skips finished shards and continues a cut-short one from
its checkpoint), and no output shard is ever half-written.

``shard_index`` / ``num_shards`` pick a stable subset of the inputs (the hash of each shard's
name), so one command line runs unchanged as a Slurm array, a Kubernetes indexed job or a loop
over hosts, each task with its own ``--out``; :func:`merge_runs` reduces their summaries into one.

Every run writes ``manifest.json`` (:func:`write_manifest`): contam's version, the settings, the
benchmark item ids and the hash of the index built from them, every input shard with its size
and sha256, every output with its size and sha256. :func:`verify_run` checks a run folder
against it.

>>> import os, tempfile
>>> from contam.data.webtext import build_demo_corpus
>>> d = tempfile.mkdtemp(); os.mkdir(os.path.join(d, "in"))
>>> for k in range(3):
...     _ = build_demo_corpus(os.path.join(d, "in", f"part-{k}.jsonl"), seed=k)
>>> s = run_sharded([os.path.join(d, "in")], ["gsm8k", "humaneval", "mmlu"], os.path.join(d, "out"))
>>> s["shards"], s["documents"], verify_run(os.path.join(d, "out"))["ok"]
(3, 600, True)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from contam.data import Item, as_items
from contam.errors import ConfigError, ContamError, InputError, WorkerDied
from contam.outputs import ensure_dir, write_json
from contam.scan.masking import write_answers
from contam.scan.options import ScanOptions
from contam.scan.shard_inputs import COMPRESSIONS, _fsspec

# The ``X as X`` imports are re-exports: the command line, the audit, tests and benchmarks import them from here.
from contam.scan.shard_inputs import SHARD_SUFFIXES as SHARD_SUFFIXES
from contam.scan.shard_inputs import InputShard as InputShard
from contam.scan.shard_inputs import resolve_corpus as resolve_corpus
from contam.scan.shard_inputs import shard_hash as shard_hash
from contam.scan.shard_manifest import _HASH_BLOCK, file_digest, index_hash, reduce_summaries, write_manifest
from contam.scan.shard_manifest import MANIFEST_VERSION as MANIFEST_VERSION
from contam.scan.shard_manifest import merge_runs as merge_runs
from contam.scan.shard_manifest import verify_run as verify_run
from contam.scan.shard_manifest import write_single_manifest as write_single_manifest

#: A shard whose worker died is run again this many times (it resumes from its checkpoint).
WORKER_RETRIES = 2


def run_sharded(
    corpus: Sequence[str | os.PathLike[str]],
    benchmarks: list[str] | list[Item],
    out: str | os.PathLike[str],
    options: ScanOptions | None = None,
    *,
    shard_index: int = 0,
    num_shards: int = 1,
    command: str = "scan",
    **settings: Any,
) -> dict[str, Any]:
    """Scan every selected input shard of ``corpus`` into ``out/shards/`` and write ``out/summary.json``
    (the reduction of this run's shard summaries) and ``out/manifest.json``; returns the summary.

    ``options`` (a :class:`~contam.scan.options.ScanOptions`) are the settings of every shard's
    scan, the engine, what to do with a bad shard and the decontaminated copy; any of its fields
    may be given as a keyword instead, or on top. ``shard_index`` / ``num_shards``: this task's
    share of the inputs; ``command`` is what the manifest says made the run."""
    opts = ScanOptions.build(options, **settings).resolved()
    if num_shards < 1 or not 0 <= shard_index < num_shards:
        raise ConfigError(f"--shard-index {shard_index} --num-shards {num_shards}: need 0 <= index < num-shards")
    shards = resolve_corpus(corpus, exclude=out)
    out_dir = ensure_dir(out)
    items = as_items(benchmarks)
    fingerprint = _fingerprint(items, opts)
    shard_root = ensure_dir(out_dir / "shards")
    t0 = time.perf_counter()
    fitted: list[Any] = []

    def scanner() -> Any:
        """The token-level index, fitted once for every shard of the run (and only if one needs it)."""
        if not opts.token_only:
            return None
        if not fitted:
            from contam.scan.ngram import NGramScanner

            fitted.append(NGramScanner(opts.config).fit(items))
        return fitted[0]

    selected = [s for s in shards if s.selected(shard_index, num_shards)]
    if opts.engine == "ray":
        records = _run_ray(selected, items, shard_root, opts, fingerprint, scanner)
    else:
        records = [_run_shard(shard, items, shard_root, opts, fingerprint, scanner) for shard in selected]
    summary = reduce_summaries([r for r in records if r["status"] == "done"], seconds=time.perf_counter() - t0)
    summary.update(
        corpus=[str(c) for c in corpus], benchmarks=sorted({i.benchmark for i in items}), levels=list(opts.levels),
        shard_index=shard_index, num_shards=num_shards, bad_shards=[{"name": r["name"], "error": r["error"]} for r in records if r["status"] == "bad"],
        inputs_total=len(shards), inputs_selected=len(records),
        corpus_paths={r["folder"]: local_path(r["path"]) for r in records if r["status"] == "done"},
    )  # fmt: skip
    write_json(out_dir / "summary.json", summary)
    write_manifest(
        out_dir,
        command=command,
        settings=opts.shard_settings(),
        items=items,
        config=opts.config,
        shards=records,
        selection={"shard_index": shard_index, "num_shards": num_shards},
    )
    return summary


def _fingerprint(items: Sequence[Item], opts: ScanOptions) -> str:
    """What a finished shard must have been made with to be kept by a rerun."""
    settings = opts.shard_settings()
    thresholds = settings.pop("thresholds")
    raw = json.dumps([index_hash(items, opts.config), settings, thresholds], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def _run_shard(
    shard: InputShard,
    items: list[Item],
    root: Path,
    opts: ScanOptions,
    fingerprint: str,
    scanner: Callable[[], Any],
) -> dict[str, Any]:
    """Scan one input shard into ``root/<folder>`` (or keep it, when a finished one matches)."""
    from contam.scan.job import run_scan

    final, work = root / shard.folder, root / f".{shard.folder}.partial"
    done = _finished(final, shard, fingerprint)
    if done is not None:
        return done
    try:
        ensure_dir(work)
        local, fetched = _local_copy(shard, work)
        attempt = 0
        while True:  # a dead worker is retried WORKER_RETRIES times, resuming from the shard's checkpoint
            try:
                summary = run_scan(local, items, work, opts, scanner=scanner())
                break
            except WorkerDied:
                if attempt == WORKER_RETRIES:
                    raise  # the shard's checkpoint stays in its .partial folder for the next run
                attempt += 1
        return _finalize(shard, local, fetched, work, final, summary, opts, fingerprint)
    except WorkerDied:
        raise
    except ContamError as e:
        return _bad_shard(shard, work, e, opts)


def _finalize(
    shard: InputShard,
    local: str,
    fetched: bool,
    work: Path,
    final: Path,
    summary: dict[str, Any],
    opts: ScanOptions,
    fingerprint: str,
) -> dict[str, Any]:
    """Write the shard's ``summary.json``, hash the input, write the clean copy and ``shard.json``, and
    rename the work folder into place."""
    # Where a report reads a flagged record back from, from any folder (as a one-file scan stores it;
    # no `format`: a shard is read as JSONL of `text_field`, the report's and decontaminate's default).
    summary = {**summary, "corpus_path": local_path(shard.path), "text_field": opts.text_field, "id_field": opts.id_field}
    write_json(work / "summary.json", summary)
    size, sha = file_digest(local)
    outputs = ["flags.jsonl", "summary.json", "answers.json"]
    if opts.clean is not None:
        outputs += _clean_copy(local, shard, work, opts)
    if fetched:
        os.unlink(local)
    record = {
        "name": shard.name, "path": shard.path, "folder": shard.folder, "size": size, "sha256": sha, "status": "done",
        "fingerprint": fingerprint, "items_hit": _items_hit(work / "flags.jsonl"),
        "summary": summary, "outputs": {name: file_digest(work / name)[1] for name in outputs},
    }  # fmt: skip
    write_json(work / "shard.json", record)
    if final.exists():  # a stale shard of other settings: replaced whole
        shutil.rmtree(final)
    os.replace(work, final)
    return record


def _bad_shard(shard: InputShard, work: Path, err: ContamError, opts: ScanOptions) -> dict[str, Any]:
    """Remove what the shard left and fail, or name it (``--on-bad-shard skip``)."""
    shutil.rmtree(work, ignore_errors=True)  # nothing half-written is left
    if opts.on_bad_shard == "fail":
        raise err
    return {"name": shard.name, "path": shard.path, "folder": shard.folder, "status": "bad", "error": str(err)}


def _run_ray(
    shards: Sequence[InputShard],
    items: list[Item],
    root: Path,
    opts: ScanOptions,
    fingerprint: str,
    scanner: Callable[[], Any],
) -> list[dict[str, Any]]:
    """The selected shards through the Ray Data executor; finished ones are kept as by the local engine."""
    from contam.outputs import atomic_write, dumps_line
    from contam.scan.job import ScanState, build_summary
    from contam.scan.ray_engine import ray_shard_results

    records: dict[int, dict[str, Any]] = {}
    pending: list[tuple[int, InputShard, str, bool, Path]] = []
    for i, shard in enumerate(shards):
        final, work = root / shard.folder, root / f".{shard.folder}.partial"
        done = _finished(final, shard, fingerprint)
        if done is not None:
            records[i] = done
            continue
        try:
            ensure_dir(work)
            local, fetched = _local_copy(shard, work)
        except ContamError as e:
            records[i] = _bad_shard(shard, work, e, opts)
            continue
        pending.append((i, shard, local, fetched, work))
    if pending:
        idx = scanner() if opts.token_only else None
        for k, outcome in ray_shard_results([p[2] for p in pending], items, opts, idx):
            i, shard, local, fetched, work = pending[k]
            if isinstance(outcome, ContamError):
                records[i] = _bad_shard(shard, work, outcome, opts)
                continue
            results, stats, counts, seconds = outcome
            state = ScanState(counts=counts, bad=stats)
            with atomic_write(work / "flags.jsonl", "wb") as fh:
                for res in results:
                    fh.write((dumps_line(res.to_dict()) + "\n").encode("utf-8"))
                    state.add(res)
            cpu = counts.pop("worker_cpu_ms", 0) / 1000
            summary = build_summary(local if not fetched else shard.path, items, opts, state, seconds, cpu)
            summary["engine"] = "ray"
            write_answers(work, items)
            records[i] = _finalize(shard, local, fetched, work, root / shard.folder, summary, opts, fingerprint)
    return [records[i] for i in sorted(records)]


def local_path(path: str) -> str | None:
    """The absolute path of a local input shard; ``None`` for a URL or ``hf:`` input, whose bytes
    the run does not keep (a report cannot read its records back).

    >>> local_path("s3://bucket/part-0.jsonl") is None, os.path.isabs(local_path("part-0.jsonl") or "")
    (True, True)
    """
    if "://" in path or path.startswith("hf:"):
        return None
    return str(Path(path).resolve())


def _finished(final: Path, shard: InputShard, fingerprint: str) -> dict[str, Any] | None:
    """The record of a finished shard made from this input with these settings, else None."""
    try:
        rec = json.loads((final / "shard.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict):  # not a record we wrote: scan the shard again
        return None
    if rec.get("fingerprint") != fingerprint or rec.get("name") != shard.name:
        return None
    if not shard.is_url and not shard.path.startswith("hf:"):
        with contextlib.suppress(OSError):
            if os.path.getsize(shard.path) != rec.get("size"):
                return None  # the input changed since
    rec["resumed"] = True
    return rec


def _local_copy(shard: InputShard, work: Path) -> tuple[str, bool]:
    """A local path to scan: the file itself, or a copy of a URL's bytes in the shard's work folder
    (the scan reads byte ranges in parallel, which needs a local file)."""
    if not shard.is_url:
        return shard.path, False
    dst = work / ("input" + "".join(Path(shard.name).suffixes[-2:]))
    if dst.is_file():
        return str(dst), True  # fetched by the run that was cut short
    tmp = dst.with_name(dst.name + ".tmp")
    try:
        with _fsspec().open(shard.path, "rb") as src, open(tmp, "wb") as fh:
            shutil.copyfileobj(src, fh, _HASH_BLOCK)
    except OSError as e:
        raise InputError(f"cannot fetch: {e.strerror or e}", path=shard.path) from None
    os.replace(tmp, dst)
    return str(dst), True


def _clean_copy(local: str, shard: InputShard, work: Path, opts: ScanOptions) -> list[str]:
    """The shard without its flagged documents (or with their matched spans masked), and the log."""
    from contam.scan.decontaminate import decontaminate

    low = shard.name.lower()
    if not any(low.endswith(".jsonl" + c) or low.endswith(".ndjson" + c) for c in COMPRESSIONS):
        return []  # only JSONL is rewritten line for line; other formats are scanned, not copied
    name = "clean.jsonl.gz" if low.endswith(".gz") else "clean.jsonl"
    decontaminate(
        local,
        work / name,
        scan=work,
        mode=opts.clean or "drop",
        text_field=opts.text_field,
        id_field=opts.id_field,
        log=work / "clean.log.jsonl",
        mask=opts.mask,
    )
    return [name, "clean.log.jsonl"]


def _items_hit(flags: Path) -> list[str]:
    hit: set[str] = set()
    with open(flags, encoding="utf-8") as fh:
        for raw in fh:
            r = json.loads(raw)
            if r.get("contaminated"):
                hit.update(f["item_id"] for f in r["flags"])
    return sorted(hit)
