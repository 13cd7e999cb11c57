"""``contam scan``, ``contam decontaminate`` and ``contam benchmarks``: the data-side token-level
audit of a corpus against benchmarks, and a cleaned copy of the corpus."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from contam.cli.common import JsonFlag, console, emit_json
from contam.errors import ConfigError
from contam.textsafe import escape

BenchOpt = Annotated[
    list[str],
    typer.Option("--benchmark", "-b", help="Built-in name (see `contam benchmarks`), a benchmark file, or hf:NAME[:SPLIT]. Repeat for several."),
]
TextField = Annotated[str, typer.Option("--text-field", help="Corpus field holding the text (a.b reaches into nested objects).")]
IdField = Annotated[str | None, typer.Option("--id-field", help="Corpus field holding the document id (default: 'id', else the line number).")]
SkipBad = Annotated[bool, typer.Option("--skip-bad", help="Count and skip bad corpus lines instead of stopping at the first.")]


ThresholdsOpt = Annotated[
    Path | None,
    typer.Option("--thresholds", help="Calibrated per-level thresholds: the thresholds.json of `contam eval-detectors --out DIR` (the scanned benchmark's entry)."),
]
EmbedderOpt = Annotated[str, typer.Option("--embedder", help="Embedder of the semantic level: minilm (embedded), st:PATH or a sentence-transformers folder.")]
FormatOpt = Annotated[
    str,
    typer.Option("--format", help="Corpus record format: auto (detected from the first record), text, chat (messages), sharegpt (conversations), alpaca, pair (prompt/response). See docs/formats.md."),
]
RolesOpt = Annotated[str | None, typer.Option("--roles", help="Turns to scan in conversation formats, e.g. user,assistant (default: every turn).")]
JudgeOpt = Annotated[
    str | None,
    typer.Option("--judge", help="Re-check semantic/reasoning flags with this model (smollm2, llamacpp:PATH.gguf, openai:URL#MODEL); off by default."),
]


def _roles(roles: str | None) -> tuple[str, ...] | None:
    from contam.data.formats import parse_roles

    return parse_roles(roles)


def _thresholds(path: Path | None, benchmark: list[str], threshold: float | None):  # type: ignore[no-untyped-def]
    """Thresholds from ``--thresholds`` for the one benchmark scanned (``--threshold`` still wins for level 1)."""
    if path is None:
        return None
    from dataclasses import replace

    from contam.scan.hierarchy import Thresholds

    names = [Path(b).stem if Path(b).suffix else b for b in benchmark]
    t = Thresholds.load(path, names[0] if len(names) == 1 else None)
    return replace(t, token=threshold) if threshold is not None else t


def _config(n: int | None, threshold: float | None, style: str, skip: int | None):  # type: ignore[no-untyped-def]
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


def _boilerplate(config, stopgrams: float, reject: list[str] | None):  # type: ignore[no-untyped-def]
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
    corpus: Annotated[Path, typer.Option("--corpus", "-c", help="Corpus: JSONL (.gz/.zst), JSON, CSV, Parquet, or a datasets folder.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder: flags.jsonl + summary.json.")],
    text_field: TextField = "text",
    id_field: IdField = None,
    n: Annotated[int | None, typer.Option("--n", help="Words per n-gram (default 13; 8 with --style llama2).")] = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="Least IDF-weighted coverage of an item part to flag (default 0.5).")] = None,
    style: Annotated[str, typer.Option("--style", help="gpt3 (13-grams, strict) or llama2 (8-grams, skip budget 4).")] = "gpt3",
    skip: Annotated[int | None, typer.Option("--skip", help="Unmatched tokens tolerated between matched ones.")] = None,
    levels: Annotated[str, typer.Option("--levels", help="token (default), semantic, reasoning, or all; comma-separated.")] = "token",
    all_docs: Annotated[bool, typer.Option("--all", help="Write every document's result, not only flagged ones.")] = False,
    workers: Annotated[int, typer.Option("--workers", help="Worker processes (0 = every core; small corpora run in-process).")] = 0,
    thresholds: ThresholdsOpt = None,
    embedder: EmbedderOpt = "minilm",
    fmt: FormatOpt = "auto",
    roles: RolesOpt = None,
    judge: JudgeOpt = None,
    stopgrams: Annotated[float, typer.Option("--stopgrams", help="Drop benchmark n-grams found in at least this share of the corpus's first 2,000 documents (corpus boilerplate; 0 = off, e.g. 0.05).")] = 0.0,
    reject: Annotated[list[str] | None, typer.Option("--reject", help="Regex of boilerplate whose n-grams never count (repeatable; 'default' = built-in list: CoT triggers, licence headers, enacting clauses).")] = None,
    skip_bad: SkipBad = False,
    json_out: JsonFlag = False,
) -> None:
    """Find corpus documents that share text with benchmark items (IDF-weighted n-gram coverage;
    with --levels all also embedding similarity and reasoning-pattern similarity).

    Example: contam scan --benchmark gsm8k --benchmark humaneval --corpus corpus.jsonl --out runs/scan1

    Example: contam scan -b gsm8k --corpus synth.jsonl --out runs/s2 --levels all --thresholds calib/thresholds.json

    Example: contam scan -b gsm8k --corpus sft_chat.jsonl --out runs/s3 --roles user --levels all --judge smollm2
    """
    from contam.scan.records import scan_records

    summary = scan_records(
        corpus, benchmark, out,
        config=_boilerplate(_config(n, threshold, style, skip), stopgrams, reject), text_field=text_field, id_field=id_field,
        skip_bad=skip_bad, keep_all=all_docs, levels=tuple(x.strip() for x in levels.split(",") if x.strip()), workers=workers,
        thresholds=_thresholds(thresholds, benchmark, threshold), embedder=embedder, fmt=fmt, roles=_roles(roles), judge=judge,
    )
    if json_out:
        emit_json(summary)
        return
    _print_summary(summary, out)


def _print_summary(s: dict, out: Path) -> None:
    import json

    table = Table(title=f"scan of {escape(s['corpus'])}", show_header=False)
    table.add_row("documents", f"{s['documents']:,}  ({s['bytes'] / 1e6:,.1f} MB)")
    table.add_row("flagged", f"{s['flagged']:,}  ({100 * s['flag_rate']:.3f}%)")
    table.add_row("items matched", f"{s['items_flagged']:,} of {s['items']:,}")
    for b, c in s["by_benchmark"].items():
        table.add_row(f"  {escape(b)}", f"{c.get('documents', 0):,} documents, {c.get('flags', 0):,} flags")
    if s["by_part"]:
        table.add_row("by part", ", ".join(f"{escape(k)} {v:,}" for k, v in s["by_part"].items()))
    if s["bad_input"]["skipped"]:
        table.add_row("skipped bad input", f"{s['bad_input']['skipped']:,} ({escape(', '.join(f'{k}: {v}' for k, v in s['bad_input']['reasons'].items()))})")
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
            rows.add_row(str(r["line"]), escape(r["doc_id"]), escape(f["item_id"]), f["part"], f"{f['score']:.2f}", escape(ev[:60].replace("\n", " ")))
            shown += 1
            if shown == 10:
                break
    if shown:
        console.print(rows)
    console.print(f"results: {escape(str(flags_path))}, {escape(str(out / 'summary.json'))}")


def decontaminate(
    corpus: Annotated[Path, typer.Option("--corpus", "-c", help="JSONL corpus (.gz/.zst) to clean; it is never modified.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Cleaned corpus to write (.jsonl, or .jsonl.gz).")],
    scan_dir: Annotated[Path | None, typer.Option("--scan", help="Folder of a finished `contam scan` of this corpus.")] = None,
    benchmark: Annotated[list[str] | None, typer.Option("--benchmark", "-b", help="Scan against these first (instead of --scan).")] = None,
    mode: Annotated[str, typer.Option("--mode", help="drop: remove flagged documents; mask: replace matched spans.")] = "drop",
    log: Annotated[Path | None, typer.Option("--log", help="Removal log (JSONL); default OUT.log.jsonl.")] = None,
    mask: Annotated[str, typer.Option("--mask", help="Replacement text for masked spans.")] = "[CONTAMINATED]",
    text_field: TextField = "text",
    id_field: IdField = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="With --benchmark: least coverage to flag (default 0.5).")] = None,
    levels: Annotated[str, typer.Option("--levels", help="With --benchmark: token (default), semantic, reasoning, or all; comma-separated.")] = "token",
    thresholds: ThresholdsOpt = None,
    embedder: EmbedderOpt = "minilm",
    fmt: Annotated[str | None, typer.Option("--format", help="Record format (default: what the scan used, else auto); records are written back in it.")] = None,
    roles: RolesOpt = None,
    judge: JudgeOpt = None,
    skip_bad: SkipBad = False,
    json_out: JsonFlag = False,
) -> None:
    """Write the corpus without flagged documents (or with matched spans masked), plus a JSONL log.

    Example: contam decontaminate --corpus corpus.jsonl --scan runs/scan1 --out clean.jsonl --mode mask
    """
    from contam.scan.decontaminate import decontaminate as run

    if (scan_dir is None) == (not benchmark):
        raise ConfigError("give exactly one of --scan DIR (a finished scan) or --benchmark NAME (scan now)")
    if benchmark:
        from contam.outputs import ensure_dir
        from contam.scan.records import scan_records

        parent = ensure_dir(out.parent if str(out.parent) else Path("."))
        with tempfile.TemporaryDirectory(prefix=".contam-scan-", dir=parent) as tmp:
            scan_records(corpus, benchmark, tmp, config=_config(None, threshold, "gpt3", None), text_field=text_field, id_field=id_field, skip_bad=skip_bad,
                     levels=tuple(x.strip() for x in levels.split(",") if x.strip()),
                     thresholds=_thresholds(thresholds, benchmark, threshold), embedder=embedder, fmt=fmt or "auto", roles=_roles(roles), judge=judge)
            summary = run(corpus, out, scan=tmp, mode=mode, text_field=text_field, id_field=id_field, log=log, mask=mask, fmt=fmt, roles=_roles(roles))
    else:
        summary = run(corpus, out, scan=scan_dir, mode=mode, text_field=text_field, id_field=id_field, log=log, mask=mask, fmt=fmt, roles=_roles(roles))
    if json_out:
        emit_json(summary)
        return
    console.print(
        f"{summary['documents_in']:,} documents in, {summary['documents_out']:,} out: "
        f"{summary['dropped']:,} dropped, {summary['masked']:,} masked ({summary['chars_masked']:,} characters)\n"
        f"wrote {escape(summary['out'])} and the log {escape(summary['log'])}"
    )


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
