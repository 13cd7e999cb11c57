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
import glob as globlib
import hashlib
import json
import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from contam.data import Item, as_items
from contam.errors import ConfigError, ContamError, InputError, WorkerDied
from contam.outputs import ensure_dir, write_json
from contam.scan.ngram import NGramConfig
from contam.scan.runpaths import OutputFilter, output_allowed

#: What a folder or glob of input shards may hold (compressed or not).
SHARD_SUFFIXES = (".jsonl", ".ndjson", ".parquet")
COMPRESSIONS = ("", ".gz", ".zst", ".zstd")
ON_BAD_SHARD = ("fail", "skip")
MANIFEST_VERSION = 1
#: A shard whose worker died is run again this many times (it resumes from its checkpoint).
WORKER_RETRIES = 2
_HASH_BLOCK = 1 << 20


@dataclass(frozen=True)
class InputShard:
    """One input file: ``path`` as it is opened (a local path or an fsspec URL) and ``name``, the
    stable name its selection hash and output folder come from (the path relative to the folder
    or glob it was found by, or the path as given)."""

    path: str
    name: str

    @property
    def is_url(self) -> bool:
        return "://" in self.path

    @property
    def folder(self) -> str:
        """The output folder's name: the shard name made safe, with a short hash against clashes."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", self.name).strip("._")[-80:] or "shard"
        return f"{safe}-{hashlib.sha256(self.name.encode()).hexdigest()[:8]}"

    def selected(self, shard_index: int, num_shards: int) -> bool:
        """Whether this shard belongs to task ``shard_index`` of ``num_shards`` (stable across hosts and runs)."""
        return shard_hash(self.name) % num_shards == shard_index


def shard_hash(name: str) -> int:
    """A stable 64-bit hash of a shard name (sha256, not Python's salted ``hash``).

    >>> shard_hash("part-0.jsonl") % 4
    1
    """
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")


def _is_shard_file(name: str) -> bool:
    low = name.lower()
    return not Path(low).name.startswith(".") and any(low.endswith(s + c) for s in SHARD_SUFFIXES for c in COMPRESSIONS)


def resolve_corpus(specs: Sequence[str | os.PathLike[str]], exclude: str | os.PathLike[str] | None = None) -> list[InputShard]:
    """The input shards named by ``specs`` (files, folders, globs, fsspec URLs), in a stable order.

    A folder or glob that matches no shard, and two specs naming the same shard, are errors.
    Inside a folder or glob, contam's own outputs are no shards (:func:`contam.scan.runpaths.contam_output`): the
    folder ``exclude`` (the run's ``--out``), a hidden folder (a run being built) and any folder
    holding a contam ``manifest.json`` or ``shard.json``, so a rerun never reads its own flags.
    """
    skip = OutputFilter(exclude)
    if not specs:
        raise ConfigError("no corpus given")
    out: list[InputShard] = []
    for raw in specs:
        spec = str(raw)
        if "://" in spec:
            out.extend(_resolve_url(spec))
        elif spec.startswith("hf:"):
            out.append(InputShard(spec, spec))
        elif any(c in spec for c in "*?["):
            root = _glob_root(spec)
            files = sorted(p for p in globlib.glob(spec, recursive=True) if os.path.isfile(p) and not skip(p, root))
            if not files:
                raise InputError("no file matches this pattern", path=spec)
            out.extend(InputShard(p, os.path.relpath(p, root).replace(os.sep, "/")) for p in files)
        elif os.path.isdir(spec):
            files = sorted(
                str(p) for p in Path(spec).rglob("*") if p.is_file() and _is_shard_file(str(p.relative_to(spec))) and not skip(str(p), spec)
            )
            if not files:
                raise InputError(f"no corpus shards here (files ending in {', '.join(SHARD_SUFFIXES)}, optionally .gz/.zst)", path=spec)
            out.extend(InputShard(p, os.path.relpath(p, spec).replace(os.sep, "/")) for p in files)
        else:
            if not os.path.exists(spec):
                raise InputError("no such file or folder", path=spec)
            out.append(InputShard(spec, os.path.normpath(spec).replace(os.sep, "/")))
    seen: dict[str, str] = {}
    for s in out:
        if s.name in seen:
            raise ConfigError(f"two corpus specs give the shard name {s.name!r} ({seen[s.name]} and {s.path}): give each input once")
        seen[s.name] = s.path
    return out


def _glob_root(spec: str) -> str:
    """The folder part of a glob before its first wildcard."""
    head = re.split(r"[*?\[]", spec, maxsplit=1)[0]
    return os.path.dirname(head) or "."


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError:
        raise ConfigError("corpus URLs need fsspec (and the filesystem's package, e.g. s3fs): pip install fsspec") from None
    return fsspec


def _resolve_url(spec: str) -> list[InputShard]:
    fsspec = _fsspec()
    try:
        fs, path = fsspec.core.url_to_fs(spec)
        protocol = spec.split("://", 1)[0]
        if any(c in path for c in "*?["):
            root = _glob_root(path)
            found = sorted(p for p in fs.glob(path) if fs.isfile(p))
        elif fs.isdir(path):
            root = path
            found = sorted(p for p in fs.find(path) if _is_shard_file(p[len(path) :].lstrip("/")))
        else:
            root, found = os.path.dirname(path), [path] if fs.exists(path) else []
    except (OSError, ValueError, ImportError) as e:
        raise InputError(f"cannot list: {e}", path=spec) from None
    if not found:
        raise InputError("no corpus shards at this URL", path=spec)
    return [InputShard(f"{protocol}://{p}", p[len(root) :].lstrip("/") if root and p.startswith(root) else p) for p in found]


def file_digest(path: str | os.PathLike[str]) -> tuple[int, str]:
    """Size and sha256 of a local file or fsspec URL."""
    h = hashlib.sha256()
    size = 0
    opener = _fsspec().open(str(path), "rb") if "://" in str(path) else open(path, "rb")
    try:
        with opener as fh:
            while block := fh.read(_HASH_BLOCK):
                h.update(block)
                size += len(block)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=str(path)) from None
    return size, h.hexdigest()


def index_hash(items: Sequence[Item], config: NGramConfig) -> str:
    """sha256 of what the token-level index is built from: every item's id and text parts, and the settings."""
    h = hashlib.sha256(json.dumps(asdict(config), sort_keys=True).encode())
    for it in items:
        h.update(json.dumps([it.id, it.benchmark, it.question, it.answer, it.solution, list(it.choices)], ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


@dataclass(frozen=True)
class ShardOptions:
    """The settings every shard of a run is scanned with (those of :func:`~contam.scan.job.run_scan`),
    and what to do with a bad shard and whether to write a decontaminated copy (``clean``: drop or mask)."""

    config: NGramConfig
    text_field: str = "text"
    id_field: str | None = None
    skip_bad: bool = False
    keep_all: bool = False
    levels: tuple[str, ...] = ("token",)
    workers: int = 0
    embedder: str = "minilm"
    on_bad_shard: str = "fail"
    clean: str | None = None
    mask: str = "[CONTAMINATED]"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["levels"] = list(self.levels)
        d.pop("workers")  # how many cores ran it is no part of the result
        return d


def run_sharded(
    corpus: Sequence[str | os.PathLike[str]],
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
    thresholds: Any = None,
    embedder: str = "minilm",
    shard_index: int = 0,
    num_shards: int = 1,
    on_bad_shard: str = "fail",
    clean: str | None = None,
    mask: str = "[CONTAMINATED]",
    command: str = "scan",
    engine: str = "local",
    ray_address: str = "auto",
) -> dict[str, Any]:
    """Scan every selected input shard of ``corpus`` into ``out/shards/`` and write ``out/summary.json``
    (the reduction of this run's shard summaries) and ``out/manifest.json``; returns the summary."""
    from contam.scan.job import check_levels

    if num_shards < 1 or not 0 <= shard_index < num_shards:
        raise ConfigError(f"--shard-index {shard_index} --num-shards {num_shards}: need 0 <= index < num-shards")
    if on_bad_shard not in ON_BAD_SHARD:
        raise ConfigError(f"--on-bad-shard {on_bad_shard!r}: choose fail or skip")
    if engine not in ("local", "ray"):
        raise ConfigError(f"--engine {engine!r}: choose local or ray")
    if clean is not None and clean not in ("drop", "mask"):
        raise ConfigError(f"unknown mode {clean!r}: choose drop or mask")
    config = config or NGramConfig()
    if thresholds is not None:
        config = replace(config, threshold=max(min(float(thresholds.token), 1.0), 1e-6))
    levels = check_levels(levels)
    shards = resolve_corpus(corpus, exclude=out)
    out_dir = ensure_dir(out)
    items = as_items(benchmarks)
    opts = ShardOptions(config, text_field, id_field, skip_bad, keep_all, levels, workers, embedder, on_bad_shard, clean, mask)
    fingerprint = _fingerprint(items, opts, thresholds)
    shard_root = ensure_dir(out_dir / "shards")
    t0 = time.perf_counter()
    fitted: list[Any] = []

    def scanner() -> Any:
        """The token-level index, fitted once for every shard of the run (and only if one needs it)."""
        if levels != ("token",):
            return None
        if not fitted:
            from contam.scan.ngram import NGramScanner

            fitted.append(NGramScanner(config).fit(items))
        return fitted[0]

    selected = [s for s in shards if s.selected(shard_index, num_shards)]
    if engine == "ray":
        records = _run_ray(selected, items, shard_root, opts, thresholds, fingerprint, scanner, ray_address)
    else:
        records = [_run_shard(shard, items, shard_root, opts, thresholds, fingerprint, scanner) for shard in selected]
    summary = reduce_summaries([r for r in records if r["status"] == "done"], seconds=time.perf_counter() - t0)
    summary.update(
        corpus=[str(c) for c in corpus], benchmarks=sorted({i.benchmark for i in items}), levels=list(levels),
        shard_index=shard_index, num_shards=num_shards, bad_shards=[{"name": r["name"], "error": r["error"]} for r in records if r["status"] == "bad"],
        inputs_total=len(shards), inputs_selected=len(records),
    )  # fmt: skip
    write_json(out_dir / "summary.json", summary)
    write_manifest(
        out_dir,
        command=command,
        settings=opts.to_dict() | {"thresholds": thresholds.to_dict() if thresholds is not None else None},
        items=items,
        config=config,
        shards=records,
        selection={"shard_index": shard_index, "num_shards": num_shards},
    )
    return summary


def _fingerprint(items: Sequence[Item], opts: ShardOptions, thresholds: Any) -> str:
    """What a finished shard must have been made with to be kept by a rerun."""
    raw = json.dumps(
        [index_hash(items, opts.config), opts.to_dict(), thresholds.to_dict() if thresholds is not None else None],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(raw.encode()).hexdigest()


def _run_shard(
    shard: InputShard,
    items: list[Item],
    root: Path,
    opts: ShardOptions,
    thresholds: Any,
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
                summary = run_scan(
                    local,
                    items,
                    work,
                    config=opts.config,
                    text_field=opts.text_field,
                    id_field=opts.id_field,
                    skip_bad=opts.skip_bad,
                    keep_all=opts.keep_all,
                    levels=opts.levels,
                    workers=opts.workers,
                    thresholds=thresholds,
                    embedder=opts.embedder,
                    scanner=scanner(),
                )
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
    opts: ShardOptions,
    fingerprint: str,
) -> dict[str, Any]:
    """Hash the input, write the clean copy and ``shard.json``, and rename the work folder into place."""
    size, sha = file_digest(local)
    outputs = ["flags.jsonl", "summary.json"]
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


def _bad_shard(shard: InputShard, work: Path, err: ContamError, opts: ShardOptions) -> dict[str, Any]:
    """Remove what the shard left and fail, or name it (``--on-bad-shard skip``)."""
    shutil.rmtree(work, ignore_errors=True)  # nothing half-written is left
    if opts.on_bad_shard == "fail":
        raise err
    return {"name": shard.name, "path": shard.path, "folder": shard.folder, "status": "bad", "error": str(err)}


def _run_ray(
    shards: Sequence[InputShard],
    items: list[Item],
    root: Path,
    opts: ShardOptions,
    thresholds: Any,
    fingerprint: str,
    scanner: Callable[[], Any],
    address: str,
) -> list[dict[str, Any]]:
    """The selected shards through the Ray Data executor; finished ones are kept as by the local engine."""
    from contam.outputs import atomic_write, dumps_line
    from contam.scan.job import RunState, build_summary
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
        idx = scanner() if opts.levels == ("token",) else None
        for k, outcome in ray_shard_results([p[2] for p in pending], items, opts, thresholds, idx, address):
            i, shard, local, fetched, work = pending[k]
            if isinstance(outcome, ContamError):
                records[i] = _bad_shard(shard, work, outcome, opts)
                continue
            results, stats, counts, seconds = outcome
            state = RunState(counts=counts, bad=stats)
            with atomic_write(work / "flags.jsonl", "wb") as fh:
                for res in results:
                    fh.write((dumps_line(res.to_dict()) + "\n").encode("utf-8"))
                    state.add(res)
            cpu = counts.pop("worker_cpu_ms", 0) / 1000
            summary = build_summary(
                local if not fetched else shard.path,
                items,
                opts.levels,
                opts.config,
                thresholds,
                opts.embedder,
                opts.keep_all,
                state,
                seconds,
                cpu,
            )
            summary["engine"] = "ray"
            write_json(work / "summary.json", summary)
            records[i] = _finalize(shard, local, fetched, work, root / shard.folder, summary, opts, fingerprint)
    return [records[i] for i in sorted(records)]


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


def _clean_copy(local: str, shard: InputShard, work: Path, opts: ShardOptions) -> list[str]:
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


def reduce_summaries(records: Sequence[dict[str, Any]], seconds: float | None = None) -> dict[str, Any]:
    """One summary from finished shard records (each with its ``summary`` and ``items_hit``)."""
    total: Counter[str] = Counter()
    by_bench: dict[str, Counter[str]] = {}
    by_part: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    examples: list[str] = []
    hit: set[str] = set()
    skipped = 0
    cpu = 0.0
    for rec in records:
        s = rec["summary"]
        for k in ("documents", "bytes", "flagged", "flags", "empty_documents"):
            total[k] += s.get(k, 0)
        for b, c in s.get("by_benchmark", {}).items():
            by_bench.setdefault(b, Counter()).update(c)
        by_part.update(s.get("by_part", {}))
        bad = s.get("bad_input", {})
        skipped += bad.get("skipped", 0)
        reasons.update(bad.get("reasons", {}))
        examples.extend(bad.get("examples", [])[: max(0, 5 - len(examples))])
        hit.update(rec.get("items_hit", []))
        cpu += s.get("cpu_seconds", 0.0)
    docs = total["documents"]
    return {
        "schema": 1,
        "shards": len(records),
        "items": records[0]["summary"].get("items") if records else 0,
        "documents": docs,
        "bytes": total["bytes"],
        "flagged": total["flagged"],
        "flag_rate": total["flagged"] / docs if docs else 0.0,
        "flags": total["flags"],
        "items_flagged": len(hit),
        "by_benchmark": {k: dict(v) for k, v in sorted(by_bench.items())},
        "by_part": dict(sorted(by_part.items())),
        "empty_documents": total["empty_documents"],
        "bad_input": {"skipped": skipped, "reasons": dict(reasons), "examples": examples},
        "cpu_seconds": round(cpu, 3),
        "seconds": round(seconds, 3) if seconds is not None else None,
    }


# -- the manifest ------------------------------------------------------------------------------


def write_manifest(
    run_dir: Path,
    *,
    command: str,
    settings: dict[str, Any],
    items: Sequence[Item],
    config: NGramConfig,
    shards: Sequence[dict[str, Any]],
    selection: dict[str, Any] | None = None,
    extra_outputs: Sequence[str] = ("summary.json",),
) -> dict[str, Any]:
    """Write ``run_dir/manifest.json``: what made the run and a hash of everything it read and wrote."""
    from contam import __version__

    outputs = []
    for rec in shards:
        if rec.get("status") != "done" or "outputs" not in rec:
            continue  # a bad shard, or the input of a one-file scan (its outputs are extra_outputs)
        base = Path(rec["dir"]) if "dir" in rec else run_dir / "shards" / rec["folder"]
        for name in [*rec["outputs"], "shard.json"]:
            p = base / name
            outputs.append(
                {"path": os.path.relpath(p, run_dir).replace(os.sep, "/"), "size": p.stat().st_size, "sha256": file_digest(p)[1]}
            )
    for name in extra_outputs:
        p = run_dir / name
        outputs.append({"path": name, "size": p.stat().st_size, "sha256": file_digest(p)[1]})
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "contam_version": __version__,
        "command": command,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": settings,
        "benchmarks": {
            "names": sorted({i.benchmark for i in items}),
            "items": len(items),
            "item_ids": [i.id for i in items],
            "index_sha256": index_hash(items, config),
        },
        "selection": selection or {"shard_index": 0, "num_shards": 1},
        "inputs": [
            {k: rec.get(k) for k in ("name", "path", "size", "sha256", "status", "error") if rec.get(k) is not None} for rec in shards
        ],
        "outputs": outputs,
    }
    write_json(run_dir / "manifest.json", manifest)
    return manifest


def verify_run(run_dir: str | os.PathLike[str], *, inputs: bool = True) -> dict[str, Any]:
    """Check a run folder against its ``manifest.json``: every output's sha256 and, with ``inputs``,
    every input shard's size and sha256. Returns ``{"ok", "checked", "problems"}``."""
    root = Path(run_dir)
    path = root / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no manifest.json here: is this the --out folder of a contam run?", path=run_dir) from None
    except (OSError, ValueError) as e:
        raise InputError(f"not a readable manifest ({e})", path=path) from None
    if not isinstance(manifest, dict) or manifest.get("manifest_version") != MANIFEST_VERSION:
        raise InputError(f"not a contam manifest of version {MANIFEST_VERSION}", path=path)
    problems: list[str] = []
    checked = 0
    for out in manifest.get("outputs", []):
        p = root / out["path"]
        checked += 1
        # A manifest's paths never make verify read files elsewhere (issue 32.16).
        if not output_allowed(root, out["path"], manifest.get("merged_from") or ()):
            problems.append(f"output {out['path']}: outside the run folder and the runs it was merged from; not read")
            continue
        if not p.is_file():
            problems.append(f"output {out['path']}: missing")
            continue
        size, sha = file_digest(p)
        if sha != out["sha256"]:
            problems.append(
                f"output {out['path']}: sha256 {sha[:12]}… differs from the manifest's {out['sha256'][:12]}… ({size} bytes, manifest {out['size']})"
            )
    if inputs:
        for rec in manifest.get("inputs", []):
            if rec.get("status") != "done" or "sha256" not in rec:
                continue
            checked += 1
            src = rec["path"]
            if "://" not in src and not os.path.isfile(src):
                problems.append(f"input {src}: missing")
                continue
            try:
                size, sha = file_digest(src)
            except ContamError as e:
                problems.append(f"input {src}: {e}")
                continue
            if (size, sha) != (rec["size"], rec["sha256"]):
                problems.append(
                    f"input {src}: changed since the run (size {size}, manifest {rec['size']}; sha256 {sha[:12]}…, manifest {rec['sha256'][:12]}…)"
                )
    return {"ok": not problems, "checked": checked, "problems": problems, "manifest": str(path)}


def merge_runs(run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str]) -> dict[str, Any]:
    """Reduce the shards of several run folders (one per task of a sharded job) into
    ``out/summary.json`` and ``out/manifest.json``; the shard outputs stay where they are and the
    merged manifest points at them. Runs of different settings or benchmarks cannot be merged."""
    records: dict[str, dict[str, Any]] = {}
    manifests: list[dict[str, Any]] = []
    bad: list[dict[str, Any]] = []
    for d in run_dirs:
        root = Path(d)
        try:
            m = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("no manifest.json here: is this the --out folder of a contam run?", path=d) from None
        except (OSError, ValueError) as e:
            raise InputError(f"not a readable manifest ({e})", path=root / "manifest.json") from None
        if manifests and (m.get("settings"), m.get("benchmarks", {}).get("index_sha256")) != (
            manifests[0].get("settings"),
            manifests[0].get("benchmarks", {}).get("index_sha256"),
        ):
            raise ConfigError(f"{d} was run with other settings or benchmarks than {run_dirs[0]}: only runs of one job can be merged")
        manifests.append(m)
        bad.extend(x for x in m.get("inputs", []) if x.get("status") == "bad")
        for shard_json in sorted((root / "shards").glob("*/shard.json")):
            rec = json.loads(shard_json.read_text(encoding="utf-8"))
            rec["dir"] = str(shard_json.parent)
            prev = records.get(rec["name"])
            if prev is not None and prev["sha256"] != rec["sha256"]:
                raise ConfigError(f"shard {rec['name']!r} was scanned from different inputs in {prev['dir']} and {rec['dir']}")
            records[rec["name"]] = rec
        if not (root / "shards").is_dir() and (root / "flags.jsonl").is_file():
            raise InputError("a single-file scan: merge the --out folders of sharded runs (--corpus DIR/GLOB or --num-shards)", path=d)
    out_dir = ensure_dir(out)
    recs = sorted(records.values(), key=lambda r: r["name"])
    summary = reduce_summaries(recs)
    summary.update(merged_from=[str(d) for d in run_dirs], bad_shards=[{"name": b["name"], "error": b.get("error")} for b in bad])
    write_json(out_dir / "summary.json", summary)
    first = manifests[0]
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "contam_version": first.get("contam_version"),
        "command": "merge",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": first.get("settings"),
        "benchmarks": first.get("benchmarks"),
        "merged_from": [str(d) for d in run_dirs],
        "inputs": [{k: r.get(k) for k in ("name", "path", "size", "sha256", "status")} for r in recs] + bad,
        "outputs": [],
    }
    for r in recs:
        for name in [*r["outputs"], "shard.json"]:
            p = Path(r["dir"]) / name
            manifest["outputs"].append(
                {"path": os.path.relpath(p, out_dir).replace(os.sep, "/"), "size": p.stat().st_size, "sha256": file_digest(p)[1]}
            )
    p = out_dir / "summary.json"
    manifest["outputs"].append({"path": "summary.json", "size": p.stat().st_size, "sha256": file_digest(p)[1]})
    write_json(out_dir / "manifest.json", manifest)
    return summary


def write_single_manifest(
    out: str | os.PathLike[str],
    corpus: str | os.PathLike[str],
    items: Sequence[Item],
    *,
    command: str,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """The manifest of a one-file scan (outputs ``flags.jsonl`` and ``summary.json`` at the top of ``out``)."""
    config = settings.get("config") or NGramConfig()
    spec = str(corpus)
    rec: dict[str, Any] = {"name": os.path.basename(spec) or spec, "path": spec, "status": "done"}
    if not spec.startswith("hf:") and os.path.isfile(spec):
        rec["size"], rec["sha256"] = file_digest(spec)
    plain = {
        k: (asdict(v) if k == "config" else v.to_dict() if hasattr(v, "to_dict") else v) for k, v in settings.items() if k != "workers"
    }
    plain["levels"] = list(plain.get("levels", ("token",)))
    return write_manifest(
        Path(out), command=command, settings=plain, items=items, config=config, shards=[rec], extra_outputs=("flags.jsonl", "summary.json")
    )
