"""``contam audit``: the whole audit in one command (data side, model side, verdict, report, exit code)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contam.cli.common import JsonFlag, console, emit_json, err_console

if TYPE_CHECKING:  # loaded where the command runs, not at CLI start
    from contam.audit import AuditVerdict


def audit(
    benchmark: Annotated[
        list[str] | None, typer.Option("--benchmark", "-b", help="Benchmark(s) to audit: built-in name, file or hf:NAME (repeat).")
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            "-d",
            help="Dataset to scan (JSONL, CSV, Parquet, ..., or a folder of shards): data side, every level, plus a decontaminated copy.",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model spec for the model side: smollm2, llamacpp:PATH, hf:PATH, openai:URL#MODEL.")
    ] = None,
    ref_model: Annotated[
        str | None, typer.Option("--ref-model", help="Reference model (e.g. the base model): adds the paired verdict.")
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option("--api-key-env", help="For openai: models: name of the env var holding the API key (default OPENAI_API_KEY)."),
    ] = None,
    control: Annotated[
        str | None,
        typer.Option("--control", help="Clean control set for Min-K% (reference set, benchmark name or file); default: the variant set."),
    ] = None,
    variant_set: Annotated[
        str | None,
        typer.Option("--variants", help="Isomorphic reference set from `contam perturb` (the probes' word); default: built now."),
    ] = None,
    reference: Annotated[str | None, typer.Option("--reference", hidden=True, help="Deprecated name of --variants.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="Benchmark items per probe (0 = all; default 50).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Run folder; rerun the same command to resume.")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="audit.toml holding any of these options (the command line wins).")
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option("--fail-on", help="Exit 1 when any verdict reaches this (contaminated or suspect) or is inconclusive."),
    ] = None,
    allow_inconclusive: Annotated[
        bool,
        typer.Option("--allow-inconclusive", help="Let an inconclusive verdict (too little data to say) pass the --fail-on gate."),
    ] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard the run folder's finished work and start over.")] = False,
    levels: Annotated[str | None, typer.Option("--levels", help="Scan levels (default all).")] = None,
    text_field: Annotated[str | None, typer.Option("--text-field", help="Dataset field holding the text (default text).")] = None,
    thresholds: Annotated[
        str | None, typer.Option("--thresholds", help="Calibrated scan thresholds (thresholds.json of eval-detectors).")
    ] = None,
    per_item: Annotated[
        int | None,
        typer.Option(
            "--per-item", "--k", help="Variants per item built for the cliff (default 5; `contam probe cliff --k`; audit.toml: per_item)."
        ),
    ] = None,
    max_cot_tokens: Annotated[
        int | None, typer.Option("--max-cot-tokens", help="Token budget of each chain of thought (default 256).")
    ] = None,
    probes: Annotated[
        str | None, typer.Option("--probes", help="Model-side probes, comma-separated (default zerocot,cliff,minkprob).")
    ] = None,
    min_items: Annotated[int | None, typer.Option("--min-items", help="Fewer items than this lower a verdict (default 20).")] = None,
    calibration: Annotated[
        str | None, typer.Option("--calibration", help="eval-probes folder whose measured calibration is plotted.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the variant set and the bootstrap (default 0).")] = None,
    title: Annotated[str | None, typer.Option("--title", help="Report title.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Start here: audit benchmark(s) against a dataset and/or a model in one command (verdicts, report with plots, exit code).

    Example: contam audit -b gsm8k --dataset synth.jsonl --model smollm2 --out runs/a1 --fail-on contaminated

    Example: contam audit --config audit.toml
    """
    from contam.audit import AuditConfig, run_audit
    from contam.audit.config import _DEFAULTS

    given = {
        "benchmarks": tuple(benchmark) if benchmark else None,
        "dataset": dataset,
        "model": model,
        "ref_model": ref_model,
        "api_key_env": api_key_env,
        "control": control,
        "reference": variant_set or reference,
        "limit": limit,
        "out": str(out) if out is not None else None,
        "fail_on": fail_on,
        "allow_inconclusive": allow_inconclusive or None,
        "levels": levels,
        "text_field": text_field,
        "thresholds": thresholds,
        "per_item": per_item,
        "max_cot_tokens": max_cot_tokens,
        "probes": tuple(p.strip() for p in probes.split(",") if p.strip()) if probes else None,
        "min_items": min_items,
        "calibration": calibration,
        "seed": seed,
        "title": title,
    }
    if config is not None:
        cfg = AuditConfig.from_file(config, **given)
    else:
        cfg = AuditConfig(**{k: v for k, v in given.items() if v is not None and k in _DEFAULTS})
    verdict = run_audit(cfg, fresh=fresh, say=lambda s: err_console.print(s, markup=False, highlight=False))
    run = Path(cfg.out)
    if json_out:
        from contam.report.build import finite_json

        emit_json(finite_json(verdict.to_dict()))
    else:
        show(verdict, run)
    why = verdict.gate(cfg.fail_on, cfg.allow_inconclusive)
    if why is not None:
        err_console.print(f"--fail-on {cfg.fail_on}: {why}; exit 1", markup=False, highlight=False)
        raise typer.Exit(1)


def show(verdict: AuditVerdict, run: Path) -> None:
    """The verdict table on the terminal (every text escaped and stripped of control characters)."""
    from contam.audit.report import show_verdict

    show_verdict(verdict, run, console)


def register(app: typer.Typer) -> None:
    """Add ``contam audit`` to ``app``."""
    app.command("audit")(audit)
