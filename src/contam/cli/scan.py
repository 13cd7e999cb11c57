"""``contam scan``, ``contam decontaminate`` and ``contam benchmarks``: the data-side token-level
audit of a corpus against benchmarks, and a cleaned copy of the corpus."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from contam.cli.common import JsonFlag, check_out_folder, console, emit_json
from contam.errors import ConfigError, InputError
from contam.scan.windows import MAX_WINDOWS
from contam.textsafe import escape

if TYPE_CHECKING:  # the scan modules load numpy and friends: imported where a command runs, not at CLI start
    from contam.scan.ngram import NGramConfig

BenchOpt = Annotated[
    list[str],
    typer.Option(
        "--benchmark", "-b", help="Built-in name (see `contam benchmarks`), a benchmark file, or hf:NAME[:SPLIT]. Repeat for several."
    ),
]
TextField = Annotated[str, typer.Option("--text-field", help="Corpus field holding the text (a.b reaches into nested objects).")]
IdField = Annotated[
    str | None, typer.Option("--id-field", help="Corpus field holding the document id (default: 'id', else the line number).")
]
SkipBad = Annotated[bool, typer.Option("--skip-bad", help="Count and skip bad corpus lines instead of stopping at the first.")]


ThresholdsOpt = Annotated[
    Path | None,
    typer.Option(
        "--thresholds",
        help="Calibrated per-level thresholds: the thresholds.json of `contam eval-detectors --out DIR` (the scanned benchmark's entry).",
    ),
]
EmbedderOpt = Annotated[
    str, typer.Option("--embedder", help="Embedder of the semantic level: minilm (embedded), st:PATH or a sentence-transformers folder.")
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        help="Corpus record format: auto (detected from the first record), text, chat (messages), sharegpt (conversations), alpaca, pair (prompt/response). See docs/formats.md.",
    ),
]
RolesOpt = Annotated[
    str | None, typer.Option("--roles", help="Turns to scan in conversation formats, e.g. user,assistant (default: every turn).")
]
JudgeOpt = Annotated[
    str | None,
    typer.Option(
        "--judge", help="Re-check semantic/reasoning flags with this model (smollm2, llamacpp:PATH.gguf, openai:URL#MODEL); off by default."
    ),
]


def _roles(roles: str | None) -> tuple[str, ...] | None:
    from contam.data.formats import parse_roles

    return parse_roles(roles)


CorpusOpt = Annotated[
    list[str],
    typer.Option(
        "--corpus",
        "-c",
        help="Corpus: a file (JSONL .gz/.zst, JSON, CSV, Parquet, a datasets folder), or shards: a folder, a glob, "
        "fsspec URLs; repeat for several. Shards get one output shard each under OUT/shards/.",
    ),
]
ShardIndexOpt = Annotated[
    int, typer.Option("--shard-index", help="This task's index among --num-shards (a stable hash of each shard's name picks its task).")
]
NumShardsOpt = Annotated[
    int, typer.Option("--num-shards", help="Tasks the input shards are split over (a Slurm array, a Kubernetes indexed job, hosts).")
]
OnBadShardOpt = Annotated[
    str, typer.Option("--on-bad-shard", help="fail: stop on a corrupt or bad shard (exit 2); skip: name it in the summary and go on.")
]
EngineOpt = Annotated[
    str,
    typer.Option("--engine", help="local (processes on this machine) or ray (Ray Data; pip install 'contam[ray]'); same flags either way."),
]
RayAddressOpt = Annotated[
    str,
    typer.Option(
        "--ray-address", help="With --engine ray: auto (the cluster this machine is in, else a local one), local, or ray://HOST:PORT."
    ),
]
FailAboveOpt = Annotated[
    float | None,
    typer.Option("--fail-above", help="Exit 1 (after writing every output) when the flag rate exceeds RATE, e.g. 0.001: a CI gate."),
]


def _config(n: int | None, threshold: float | None, style: str, skip: int | None) -> NGramConfig:
    from contam.scan.ngram import NGramConfig

    if style not in ("gpt3", "llama2"):
        raise ConfigError(f"--style {style!r}: choose gpt3 (13-grams) or llama2 (8-grams with skips)")
    base = NGramConfig.gpt3() if style == "gpt3" else NGramConfig.llama2()
    over: dict[str, object] = {}
    if n is not None:
        over["n"] = n
    if threshold is not None:
        over["threshold"] = threshold
    if skip is not None:
        over["skip"] = skip
    from dataclasses import replace

    return replace(base, **over) if over else base


def _boilerplate(config: NGramConfig, stopgrams: float, reject: list[str] | None) -> NGramConfig:
    """``config`` with corpus stop-grams and reject patterns (``default`` expands to the built-in list)."""
    if not stopgrams and not reject:
        return config
    from dataclasses import replace

    from contam.scan.stopgrams import DEFAULT_REJECT_PATTERNS

    pats: list[str] = []
    for r in reject or []:
        pats.extend(DEFAULT_REJECT_PATTERNS if r == "default" else [r])
    return replace(config, stopgram_df=stopgrams, reject_patterns=tuple(pats))


def scan(
    benchmark: BenchOpt,
    corpus: CorpusOpt,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output folder: flags.jsonl + summary.json (+ shards/ for sharded input) + manifest.json.")
    ],
    text_field: TextField = "text",
    id_field: IdField = None,
    n: Annotated[int | None, typer.Option("--n", help="Words per n-gram (default 13; 8 with --style llama2).")] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Least IDF-weighted coverage of an item part to flag (default 0.5).")
    ] = None,
    style: Annotated[str, typer.Option("--style", help="gpt3 (13-grams, strict) or llama2 (8-grams, skip budget 4).")] = "gpt3",
    skip: Annotated[int | None, typer.Option("--skip", help="Unmatched tokens tolerated between matched ones.")] = None,
    levels: Annotated[
        str,
        typer.Option(
            "--levels",
            help="token (default: verbatim and near-verbatim copies only), semantic, reasoning, or all (paraphrases too); comma-separated.",
        ),
    ] = "token",
    all_docs: Annotated[bool, typer.Option("--all", help="Write every document's result, not only flagged ones.")] = False,
    workers: Annotated[int, typer.Option("--workers", help="Worker processes (0 = every core; small corpora run in-process).")] = 0,
    semantic_windows: Annotated[
        int,
        typer.Option(
            "--semantic-windows",
            help="Windows of a long document the semantic level reads: its first 512 characters, then paragraph by paragraph (1 = the first only; fewer is faster).",
        ),
    ] = MAX_WINDOWS,
    thresholds: ThresholdsOpt = None,
    embedder: EmbedderOpt = "minilm",
    fmt: FormatOpt = "auto",
    roles: RolesOpt = None,
    judge: JudgeOpt = None,
    stopgrams: Annotated[
        float,
        typer.Option(
            "--stopgrams",
            help="Drop benchmark n-grams found in at least this share of the corpus's first 2,000 documents (corpus boilerplate; 0 = off, e.g. 0.05).",
        ),
    ] = 0.0,
    reject: Annotated[
        list[str] | None,
        typer.Option(
            "--reject",
            help="Regex of boilerplate whose n-grams never count (repeatable; 'default' = built-in list: CoT triggers, licence headers, enacting clauses).",
        ),
    ] = None,
    skip_bad: SkipBad = False,
    shard_index: ShardIndexOpt = 0,
    num_shards: NumShardsOpt = 1,
    on_bad_shard: OnBadShardOpt = "fail",
    fail_above: FailAboveOpt = None,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = "auto",
    json_out: JsonFlag = False,
) -> None:
    """Find corpus documents that share text with benchmark items (IDF-weighted n-gram coverage;
    with --levels all also embedding similarity and reasoning-pattern similarity).

    Example: contam scan --benchmark gsm8k --benchmark humaneval --corpus corpus.jsonl --out runs/scan1

    Example: contam scan -b gsm8k --corpus 'cc/*.jsonl.zst' --num-shards 64 --shard-index $SLURM_ARRAY_TASK_ID --out runs/cc-$SLURM_ARRAY_TASK_ID

    Example: contam scan -b gsm8k --corpus synth.jsonl --out runs/s2 --levels all --thresholds calib/thresholds.json

    Example: contam scan -b gsm8k --corpus sft_chat.jsonl --out runs/s3 --roles user --levels all --judge smollm2
    """
    from contam.scan.options import ScanOptions, load_thresholds, parse_levels
    from contam.scan.shard_inputs import is_sharded

    opts = ScanOptions(
        config=_boilerplate(_config(n, threshold, style, skip), stopgrams, reject), text_field=text_field, id_field=id_field,
        skip_bad=skip_bad, keep_all=all_docs, levels=parse_levels(levels), workers=workers,
        thresholds=load_thresholds(thresholds, benchmark, threshold), embedder=embedder, on_bad_shard=on_bad_shard, engine=engine,
        ray_address=ray_address, semantic_windows=semantic_windows,
    )  # fmt: skip
    check_rate(fail_above)
    check_out_folder(out, "scan")
    if is_sharded(corpus, num_shards) or opts.engine == "ray":
        if fmt not in ("auto", "text") or roles or judge:
            raise ConfigError("--format, --roles and --judge work on one corpus file for now, not on shards or --engine ray")
        from contam.scan.shards import run_sharded

        summary = run_sharded(corpus, benchmark, out, opts, shard_index=shard_index, num_shards=num_shards)
        if json_out:
            emit_json(summary)
        else:
            _print_sharded(summary, out)
    else:
        from contam.data import load_benchmarks
        from contam.scan.records import no_records_reason, scan_records
        from contam.scan.shards import write_single_manifest

        items = load_benchmarks(benchmark)
        summary = scan_records(corpus[0], items, out, opts, fmt=fmt, roles=_roles(roles), judge=judge)
        if not summary["documents"]:
            # A failed run leaves nothing behind: what this scan wrote of an empty dataset goes.
            for name in ("flags.jsonl", "summary.json", "answers.json", "log.jsonl"):
                (Path(out) / name).unlink(missing_ok=True)
            raise InputError(no_records_reason(summary), path=corpus[0])
        write_single_manifest(out, corpus[0], items, command="scan", options=opts)
        if json_out:
            emit_json(summary)
        else:
            _print_summary(summary, out)
    gate_on_rate(summary["flag_rate"], fail_above)


def check_rate(rate: float | None) -> None:
    if rate is not None and not 0.0 <= rate <= 1.0:
        raise ConfigError(f"--fail-above {rate}: give a flag rate between 0 and 1")


def gate_on_rate(rate: float, fail_above: float | None) -> None:
    """Exit 1 when the flag rate is over ``--fail-above`` (2 stays bad input)."""
    from contam.errors import CheckFailed

    if fail_above is not None and rate > fail_above:
        raise CheckFailed(f"contamination gate: flag rate {rate:.6f} exceeds --fail-above {fail_above}")


def levels_text(levels: list[str] | None) -> str:
    """Which levels ran, and what a token-only scan cannot see: "flagged 0" after a token scan
    says nothing about paraphrases, and the table must not read as an all-clear for them."""
    ran = list(levels or ["token"])
    if {"semantic", "reasoning"} & set(ran):
        return f"{', '.join(ran)} (paraphrases checked)"
    return f"{', '.join(ran)} only: verbatim and near-verbatim copies; paraphrases NOT checked (add --levels all)"


def _print_sharded(s: dict, out: Path) -> None:
    table = Table(title=f"sharded scan: {s['shards']:,} shard(s) of {s['inputs_total']:,}", show_header=False)
    table.add_row("documents", f"{s['documents']:,}  ({s['bytes'] / 1e6:,.1f} MB)")
    table.add_row("flagged", f"{s['flagged']:,}  ({100 * s['flag_rate']:.3f}%)")
    table.add_row("levels", levels_text(s.get("levels")))
    table.add_row("items matched", f"{s['items_flagged']:,} of {s['items'] or 0:,}")
    for b, c in s["by_benchmark"].items():
        table.add_row(f"  {escape(b)}", f"{c.get('documents', 0):,} documents, {c.get('flags', 0):,} flags")
    if s["bad_shards"]:
        table.add_row("bad shards (skipped)", escape(", ".join(b["name"] for b in s["bad_shards"])))
    if s["bad_input"]["skipped"]:
        table.add_row("skipped bad input", f"{s['bad_input']['skipped']:,}")
    console.print(table)
    console.print(f"results: {escape(str(out / 'shards'))}/, {escape(str(out / 'summary.json'))}, {escape(str(out / 'manifest.json'))}")


def _print_summary(s: dict, out: Path) -> None:
    import json

    table = Table(title=f"scan of {escape(s['corpus'])}", show_header=False)
    table.add_row("documents", f"{s['documents']:,}  ({s['bytes'] / 1e6:,.1f} MB)")
    table.add_row("flagged", f"{s['flagged']:,}  ({100 * s['flag_rate']:.3f}%)")
    table.add_row("levels", levels_text(s.get("levels")))
    table.add_row("items matched", f"{s['items_flagged']:,} of {s['items']:,}")
    for b, c in s["by_benchmark"].items():
        table.add_row(f"  {escape(b)}", f"{c.get('documents', 0):,} documents, {c.get('flags', 0):,} flags")
    if s["by_part"]:
        table.add_row("by part", ", ".join(f"{escape(k)} {v:,}" for k, v in s["by_part"].items()))
    if s["bad_input"]["skipped"]:
        table.add_row(
            "skipped bad input",
            f"{s['bad_input']['skipped']:,} ({escape(', '.join(f'{k}: {v}' for k, v in s['bad_input']['reasons'].items()))})",
        )
    langs = s.get("semantic_languages") or {}
    if langs:
        by = langs.get("documents_by_language", {})
        table.add_row("languages", escape(", ".join(f"{k} {v:,}" for k, v in list(by.items())[:8]) + (" …" if len(by) > 8 else "")))
        for key in ("benchmark_note", "warning"):
            if langs.get(key):
                table.add_row("", f"[yellow]{escape(langs[key])}[/yellow]")
    short = s.get("semantic_shortlist")
    if short:
        table.add_row(
            "semantic shortlist",
            f"{short['embedded']:,} of {short['judged']:,} English documents embedded; "
            f"{short['not_embedded']:,} scored below {short['cut']} by the first stage, not flagged at that level",
        )
    table.add_row("speed", f"{s['mb_per_s'] or 0:,.1f} MB/s, {s['workers']} worker(s), {s['seconds']:.1f} s")
    console.print(table)
    shown = 0
    flags_path = out / "flags.jsonl"
    with open(flags_path, encoding="utf-8") as fh:
        rows = Table(title="first flagged documents")
        for col in ("line", "document", "item", "part", "coverage", "evidence"):
            rows.add_column(col)
        for raw in fh:
            r = json.loads(raw)
            if not r["contaminated"]:
                continue
            f = r["flags"][0]
            ev = f["evidence"][0]["text"] if f["evidence"] else ""
            rows.add_row(
                str(r["line"]),
                escape(r["doc_id"]),
                escape(f["item_id"]),
                f["part"],
                f"{f['score']:.2f}",
                escape(ev[:60].replace("\n", " ")),
            )
            shown += 1
            if shown == 10:
                break
    if shown:
        console.print(rows)
    console.print(f"results: {escape(str(flags_path))}, {escape(str(out / 'summary.json'))}")


def decontaminate(
    corpus: Annotated[
        list[str],
        typer.Option("--corpus", "-c", help="JSONL corpus (.gz/.zst) to clean, or shards (a folder, a glob, several); never modified."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Cleaned corpus to write (.jsonl, or .jsonl.gz); for shards, an output folder.")],
    scan_dir: Annotated[Path | None, typer.Option("--scan", help="Folder of a finished `contam scan` of this corpus.")] = None,
    benchmark: Annotated[list[str] | None, typer.Option("--benchmark", "-b", help="Scan against these first (instead of --scan).")] = None,
    mode: Annotated[str, typer.Option("--mode", help="drop: remove flagged documents; mask: replace matched spans.")] = "drop",
    log: Annotated[Path | None, typer.Option("--log", help="Removal log (JSONL); default OUT.log.jsonl.")] = None,
    mask: Annotated[str, typer.Option("--mask", help="Replacement text for masked spans.")] = "[CONTAMINATED]",
    text_field: TextField = "text",
    id_field: IdField = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="With --benchmark: least coverage to flag (default 0.5).")] = None,
    levels: Annotated[
        str,
        typer.Option(
            "--levels",
            help="With --benchmark: token (default: copies only), semantic, reasoning, or all (paraphrases too); comma-separated.",
        ),
    ] = "token",
    thresholds: ThresholdsOpt = None,
    embedder: EmbedderOpt = "minilm",
    fmt: Annotated[
        str | None, typer.Option("--format", help="Record format (default: what the scan used, else auto); records are written back in it.")
    ] = None,
    roles: RolesOpt = None,
    judge: JudgeOpt = None,
    skip_bad: SkipBad = False,
    shard_index: ShardIndexOpt = 0,
    num_shards: NumShardsOpt = 1,
    on_bad_shard: OnBadShardOpt = "fail",
    fail_above: FailAboveOpt = None,
    json_out: JsonFlag = False,
) -> None:
    """Write the corpus without flagged documents (or with matched spans masked), plus a JSONL log.

    Example: contam decontaminate --corpus corpus.jsonl --scan runs/scan1 --out clean.jsonl --mode mask

    Example: contam decontaminate --corpus shards/ -b gsm8k --out runs/clean --fail-above 0.01
    """
    from contam.scan.decontaminate import decontaminate as run
    from contam.scan.options import ScanOptions, load_thresholds, parse_levels
    from contam.scan.shard_inputs import is_sharded

    if (scan_dir is None) == (not benchmark):
        raise ConfigError("give exactly one of --scan DIR (a finished scan) or --benchmark NAME (scan now)")
    check_rate(fail_above)
    sharded = is_sharded(corpus, num_shards)
    if sharded and not benchmark:
        raise ConfigError("sharded input is decontaminated with --benchmark (each shard is scanned, then cleaned, on its own)")
    # The scan that --benchmark runs first: the options of `contam scan` for these flags, cleaning as --mode says.
    opts = ScanOptions(
        config=_config(None, threshold, "gpt3", None), text_field=text_field, id_field=id_field, skip_bad=skip_bad,
        levels=parse_levels(levels), thresholds=load_thresholds(thresholds, benchmark or [], threshold), embedder=embedder,
        on_bad_shard=on_bad_shard, clean=mode, mask=mask,
    ) if benchmark else None  # fmt: skip
    if sharded:
        from contam.scan.shards import run_sharded

        assert benchmark and opts is not None  # checked above
        s = run_sharded(corpus, benchmark, out, opts, shard_index=shard_index, num_shards=num_shards, command="decontaminate")
        if json_out:
            emit_json(s)
        else:
            _print_sharded(s, out)
        gate_on_rate(s["flag_rate"], fail_above)
        return
    src = Path(corpus[0])
    if benchmark:
        from contam.outputs import ensure_dir
        from contam.scan.records import scan_records

        parent = ensure_dir(out.parent if str(out.parent) else Path("."))
        with tempfile.TemporaryDirectory(prefix=".contam-scan-", dir=parent) as tmp:
            scanned = scan_records(src, benchmark, tmp, opts, fmt=fmt or "auto", roles=_roles(roles), judge=judge)
            summary = run(
                src, out, scan=tmp, mode=mode, text_field=text_field, id_field=id_field, log=log, mask=mask, fmt=fmt, roles=_roles(roles)
            )
    else:
        summary = run(
            src, out, scan=scan_dir, mode=mode, text_field=text_field, id_field=id_field, log=log, mask=mask, fmt=fmt, roles=_roles(roles)
        )
        scanned = None
    if json_out:
        emit_json(summary)
    else:
        console.print(
            f"{summary['documents_in']:,} documents in, {summary['documents_out']:,} out: "
            f"{summary['dropped']:,} dropped, {summary['masked']:,} masked ({summary['chars_masked']:,} characters)\n"
            f"wrote {escape(summary['out'])} and the log {escape(summary['log'])}"
        )
    if fail_above is not None:
        rate = scanned["flag_rate"] if scanned is not None else (summary["dropped"] + summary["masked"]) / max(summary["documents_in"], 1)
        gate_on_rate(rate, fail_above)


def benchmarks(json_out: JsonFlag = False) -> None:
    """List the built-in benchmarks (records, license); any file or hf:NAME works as --benchmark too.

    Example: contam benchmarks --json
    """
    from contam.data import BENCHMARKS

    rows = [{"name": b.name, "records": b.records, "license": b.license, "description": b.description} for b in BENCHMARKS.values()]
    if json_out:
        emit_json(rows)
        return
    table = Table(title="built-in benchmarks")
    for col in ("name", "records", "license", "description"):
        table.add_column(col, justify="right" if col == "records" else "left")
    for r in rows:
        table.add_row(escape(r["name"]), f"{r['records']:,}", escape(r["license"]), escape(r["description"]))
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add ``scan``, ``decontaminate`` and ``benchmarks`` to ``app``."""
    app.command("scan")(scan)
    app.command("decontaminate")(decontaminate)
    app.command("benchmarks")(benchmarks)
