"""The run manifest of a sharded scan (:mod:`contam.scan.shards`): the digests of inputs,
outputs and the benchmark index, writing ``manifest.json``, checking a run folder against it,
reducing shard summaries and merging the run folders of several tasks into one."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from contam.data import Item
from contam.errors import ConfigError, ContamError, InputError
from contam.outputs import ensure_dir, read_json_dict, write_json
from contam.scan.ngram import NGramConfig
from contam.scan.options import ScanOptions
from contam.scan.runpaths import output_allowed
from contam.scan.shard_inputs import _fsspec

MANIFEST_VERSION = 1
_HASH_BLOCK = 1 << 20


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
    run_corpus_paths: dict[str, Any] = {}
    corpus: list[str] = []  # the --corpus each task was given
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
            rec["dir"] = str(shard_json.parent.resolve())
            prev = records.get(rec["name"])
            if prev is not None and prev["sha256"] != rec["sha256"]:
                raise ConfigError(f"shard {rec['name']!r} was scanned from different inputs in {prev['dir']} and {rec['dir']}")
            records[rec["name"]] = rec
        if not (root / "shards").is_dir() and (root / "flags.jsonl").is_file():
            raise InputError("a single-file scan: merge the --out folders of sharded runs (--corpus DIR/GLOB or --num-shards)", path=d)
        run_summary = read_json_dict(root / "summary.json")
        paths, specs = run_summary.get("corpus_paths"), run_summary.get("corpus")
        run_corpus_paths.update(paths if isinstance(paths, dict) else {})
        corpus += [str(c) for c in (specs if isinstance(specs, list) else [specs] if specs else []) if str(c) not in corpus]
    out_dir = ensure_dir(out)
    recs = sorted(records.values(), key=lambda r: r["name"])
    summary = reduce_summaries(recs)
    summary.update(merged_from=[str(d) for d in run_dirs], bad_shards=[{"name": b["name"], "error": b.get("error")} for b in bad])
    summary.update(corpus=corpus, **_merged_sources(recs, run_corpus_paths, out_dir, manifests[0]))
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


def _merged_sources(recs: Sequence[dict[str, Any]], corpus_paths: dict[str, Any], out_dir: Path, first: dict[str, Any]) -> dict[str, Any]:
    """Where a merged run's flags and records lie, for a report rebuilt from any folder: each
    shard's folder (``shard_dirs``: absolute, and relative to the merged folder for runs moved
    together with it) and the absolute path of the input it scanned (``corpus_paths``, as a
    sharded run stores them), keyed by shard folder; and what the runs scanned against."""
    dirs: dict[str, dict[str, str]] = {}
    paths: dict[str, str | None] = {}
    for r in recs:
        folder = str(r.get("folder") or Path(r["dir"]).name)
        dirs[folder] = {"path": r["dir"], "relative": os.path.relpath(r["dir"], out_dir.resolve()).replace(os.sep, "/")}
        paths[folder] = (r.get("summary") or {}).get("corpus_path") or corpus_paths.get(folder)
    one = (recs[0].get("summary") or {}) if recs else {}
    said = {k: one[k] for k in ("levels", "config") if one.get(k)}
    return {"shard_dirs": dirs, "corpus_paths": paths, "benchmarks": (first.get("benchmarks") or {}).get("names", []), **said}


def write_single_manifest(
    out: str | os.PathLike[str],
    corpus: str | os.PathLike[str],
    items: Sequence[Item],
    *,
    command: str,
    options: ScanOptions,
) -> dict[str, Any]:
    """The manifest of a one-file scan with ``options`` (outputs ``flags.jsonl``, ``summary.json`` and ``answers.json`` at the top of ``out``)."""
    spec = str(corpus)
    rec: dict[str, Any] = {"name": os.path.basename(spec) or spec, "path": spec, "status": "done"}
    if not spec.startswith("hf:") and os.path.isfile(spec):
        rec["size"], rec["sha256"] = file_digest(spec)
    return write_manifest(
        Path(out),
        command=command,
        settings=options.manifest_settings(),
        items=items,
        config=options.config,
        shards=[rec],
        extra_outputs=("flags.jsonl", "summary.json", "answers.json"),
    )
