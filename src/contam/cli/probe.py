"""``contam probe zerocot|minkprob|cliff|paired``: the Zero-CoT Probe, the Min-K% family, the
performance cliff, the paired verdict; thin over :mod:`contam.probe.runs`.

Resumable: with ``--out DIR`` every finished item is a line of ``DIR/items.jsonl`` and is
skipped on a rerun with the same settings (``DIR/run.json`` records them); model calls go
through the response cache, so an item cut short costs nothing the second time.
``DIR/summary.json`` is written atomically at the end (:mod:`contam.probe.runfolder`).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from contam.cli.common import console, emit_json, err_console, probe_app
from contam.cli.probe_opts import (
    ControlOpt,
    JsonFlag,
    LimitOpt,
    NAlias,
    OutOpt,
    ReferenceAlias,
    RefModelOpt,
    SeedOpt,
    VariantsOpt,
    limit_of,
    not_used,
    reference_alias,
)
from contam.errors import ConfigError
from contam.textsafe import escape, redact_url

ModelOpt = Annotated[str, typer.Option("--model", "-m", help="Model spec: smollm2, llamacpp:PATH, hf:PATH, openai:URL#MODEL, vllm:NAME.")]
BenchOpt = Annotated[str, typer.Option("--benchmark", "-b", help="Built-in benchmark name or a benchmark file.")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Bypass the model response cache.")]
Fresh = Annotated[bool, typer.Option("--fresh", help="Discard finished items in --out and start over.")]
PriorOpt = Annotated[float, typer.Option("--prior", help="Prior probability of contamination for the posterior (paper 004: 0.5).")]


def _floats(text: str, what: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated numbers, got {text!r}") from None


def _say(text: str) -> None:
    err_console.print(text)


def _finish(out: Path | None, summary: dict[str, Any], json_out: bool) -> None:
    if json_out:
        emit_json(summary)
    elif out is not None:
        console.print(f"results: {escape(str(out / 'items.jsonl'))}, {escape(str(out / 'summary.json'))}")


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _ci(ci: dict[str, Any] | None) -> str:
    return f"[{ci['low']:+.2f}, {ci['high']:+.2f}]" if ci else "—"


@probe_app.command("zerocot")
def zerocot(
    model: ModelOpt = "smollm2",
    benchmark: BenchOpt = "gsm8k",
    variants: VariantsOpt = None,
    limit: LimitOpt = 0,
    mode: Annotated[str, typer.Option("--mode", help="auto, prefill (open weights) or instruction (API models).")] = "auto",
    max_cot_tokens: Annotated[int, typer.Option("--max-cot-tokens", help="Token budget of the full-CoT answer.")] = 512,
    max_answer_tokens: Annotated[int, typer.Option("--max-answer-tokens", help="Token budget of a forced answer (authors: 32).")] = 32,
    truncation: Annotated[
        str, typer.Option("--truncation", help="Shares of the model's own CoT kept for the truncation curve ('' = none).")
    ] = "0,0.25,0.5,0.75,1",
    primary: Annotated[
        str,
        typer.Option("--primary", help="Metric behind the headline confidence: accuracy, consistency, first_token_prob, all_token_prob."),
    ] = "accuracy",
    resamples: Annotated[int, typer.Option("--resamples", help="Paired-bootstrap resamples (paper: 10000).")] = 10_000,
    prior: PriorOpt = 0.5,
    control: ControlOpt = None,
    ref_model: RefModelOpt = None,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
    reference_old: ReferenceAlias = None,
) -> None:
    """Zero-CoT Probe (paper 004): forced no-reasoning answers on the benchmark vs an isomorphic reference set.

    Example: contam probe zerocot --model smollm2 --benchmark gsm8k --variants ref/ --limit 200 --out runs/zcp
    """
    from contam.probe.runs import run_zerocot
    from contam.probe.zerocot import ZeroCoTConfig

    not_used("zerocot", control=control, ref_model=ref_model)
    n = limit_of(limit, n_alias)
    ref_path = reference_alias(reference_old, "--variants", variants)

    cfg = ZeroCoTConfig(
        mode=mode,
        max_cot_tokens=max_cot_tokens,
        max_answer_tokens=max_answer_tokens,
        truncation=_floats(truncation, "--truncation"),
        primary_metric=primary,
        n_resamples=resamples,
        prior=prior,
        seed=seed,
    )
    summary = run_zerocot(model, benchmark, cfg, variants=ref_path, n=n, out=out, fresh=fresh, no_cache=no_cache, say=_say)
    if not json_out:
        _show_zerocot(summary)
    _finish(out, summary, json_out)


def _show_zerocot(s: dict[str, Any]) -> None:
    t = Table(title=escape(f"Zero-CoT Probe: {s['model']} on {s['benchmark']} ({s['n_pairs']} pairs, {s['mode']})"))
    for col in ("metric", "orig", "ref", "gap", "95% CI", "p", "conf"):
        t.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    for m in s["metrics"]:
        t.add_row(
            m["metric"],
            _f(m["original"]),
            _f(m["reference"]),
            f"{m['gap']:+.3f}",
            _ci(m["ci"]),
            f"{m['test']['p_value']:.3g}",
            _f(m["calibration"]["confidence"]),
        )
    console.print(t)
    console.print(
        "p: one-sided (original > reference), exact McNemar for accuracy/consistency, paired bootstrap for the "
        "probabilities; conf: calibrated posterior, 0 when the gap has the wrong sign"
    )
    if s["curve"]:
        c = Table(title="Truncation curve: forced-answer accuracy by share of own CoT kept")
        for col in ("kept", "original", "reference", "gap"):
            c.add_column(col, justify="right")
        for p in s["curve"]:
            c.add_row(f"{p['kept']:.0%}", _f(p["original"]), _f(p["reference"]), f"{p['gap']:+.3f}")
        console.print(c)
    if s.get("full_cot"):
        fc = s["full_cot"]
        console.print(f"full-CoT accuracy gap (difficulty check, two-sided McNemar): {fc['effect']:+.3f}, p = {fc['p_value']:.3g}")
    console.print(f"[bold]Contamination Confidence ({escape(s['primary_metric'])}): {s['contamination_confidence']:.3f}[/]")


@probe_app.command("minkprob")
def minkprob(
    model: ModelOpt = "smollm2",
    benchmark: BenchOpt = "gsm8k",
    control: ControlOpt = None,
    variants: VariantsOpt = None,
    limit: LimitOpt = 0,
    k: Annotated[float, typer.Option("--k", help="Min-K%: share of lowest-probability tokens (paper 001: 0.2).")] = 0.2,
    k_sweep: Annotated[str, typer.Option("--k-sweep", help="Also score these K values, e.g. 0.05,0.1,0.3,0.5.")] = "",
    field: Annotated[str, typer.Option("--field", help="Item text scored: text (question+solution), question or answer.")] = "text",
    ref_model: RefModelOpt = None,
    first_token: Annotated[
        str, typer.Option("--first-token", help="Score the first text token: auto (not on models without a BOS token), keep, drop.")
    ] = "auto",
    prior: PriorOpt = 0.5,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
) -> None:
    """Min-K% Prob, Min-K%++, perplexity, zlib, lowercase and reference-model ratios: benchmark vs control (Mann–Whitney AUC).

    The comparison set is --variants (a `contam perturb` set: each item's variant), or --control (a clean benchmark; a perturb set given here is still read as variants), or, with neither, a variant set built now. --ref-model adds the reference-model ratio.

    Example: contam probe minkprob --model smollm2 --benchmark gsm8k --variants ref/ --limit 200 --k-sweep 0.05,0.1,0.3 --out runs/mink
    """
    from contam.probe.logprob import LogProbConfig
    from contam.probe.runs import run_minkprob

    n = limit_of(limit, n_alias)
    if variants is not None and control is not None:
        raise ConfigError("give one comparison set: --variants or --control")
    if variants is not None:
        control = str(variants)
    cfg = LogProbConfig(k=k, k_sweep=_floats(k_sweep, "--k-sweep"), field=field, prior=prior, first_token=first_token)
    summary = run_minkprob(
        model, benchmark, cfg, control=control, ref_model=ref_model, n=n, seed=seed, out=out, fresh=fresh, no_cache=no_cache, say=_say
    )
    if not json_out:
        t = Table(
            title=escape(
                f"Log-prob probes: {summary['model']} on {benchmark} ({summary['n_benchmark']}) vs control ({summary['n_control']})"
            )
        )
        for col in ("score", "bench mean", "ctrl mean", "AUC", "95% CI", "p", "conf"):
            t.add_column(col, justify="left" if col == "score" else "right", no_wrap=True)
        for m in summary["methods"]:
            t.add_row(
                m["method"],
                _f(m["benchmark_mean"], 4),
                _f(m["control_mean"], 4),
                f"{m['auc']:.3f}",
                _ci(m["test"]["ci"]),
                f"{m['test']['p_value']:.3g}",
                _f(m["calibration"]["confidence"]),
            )
        console.print(t)
        console.print(f"[bold]Contamination Confidence ({escape(summary['primary'])}): {summary['contamination_confidence']:.3f}[/]")
    _finish(out, summary, json_out)


@probe_app.command("cliff")
def cliff(
    model: ModelOpt = "smollm2",
    benchmark: BenchOpt = "gsm8k",
    variants: VariantsOpt = None,
    limit: LimitOpt = 0,
    k: Annotated[int, typer.Option("--k", help="Variants per item (paper 001: 5).")] = 5,
    alpha: Annotated[float, typer.Option("--alpha", help="Flag the benchmark at p below this (paper 001: 0.05).")] = 0.05,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", help="Token budget of each CoT answer.")] = 512,
    min_items: Annotated[int, typer.Option("--min-items", help="No verdict below this many items with variants.")] = 10,
    prior: PriorOpt = 0.5,
    control: ControlOpt = None,
    ref_model: RefModelOpt = None,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
    reference_old: ReferenceAlias = None,
) -> None:
    """Performance cliff (paper 001 L4): accuracy on originals vs the mean over K variants, paired t-test.

    Example: contam probe cliff --model smollm2 --benchmark gsm8k --variants ref/ --k 5 --limit 50 --out runs/cliff
    """
    from contam.probe.cliff import CliffConfig
    from contam.probe.runs import run_cliff

    not_used("cliff", control=control, ref_model=ref_model)
    n = limit_of(limit, n_alias)
    ref_path = reference_alias(reference_old, "--variants", variants)
    cfg = CliffConfig(k=k, alpha=alpha, max_new_tokens=max_new_tokens, prior=prior, seed=seed, min_items=min_items)
    summary = run_cliff(model, benchmark, cfg, variants=ref_path, n=n, out=out, fresh=fresh, no_cache=no_cache, say=_say)
    if not json_out:
        t = Table(
            title=escape(f"Performance cliff: {summary['model']} on {benchmark} ({summary['n_items']} items, K={summary['k']})"),
            show_header=False,
        )
        ts = summary["test"]
        for a, b in (
            ("accuracy, originals", _f(summary["acc_original"])),
            ("accuracy, variants (mean)", _f(summary["acc_variants"])),
            ("per variant", ", ".join(_f(x) for x in summary["acc_per_variant"])),
            ("Δ cliff [95% CI]", f"{summary['delta']:+.3f} {_ci(ts['ci'])}"),
            ("paired t-test", f"t = {_f(ts['statistic'])}, p = {ts['p_value']:.3g} (one-sided)"),
            ("flagged", summary["note"] or f"{summary['flagged']} (alpha {alpha})"),
            ("confidence", _f(summary["calibration"]["confidence"])),
        ):
            t.add_row(escape(a), escape(b))
        console.print(t)
    _finish(out, summary, json_out)


def register(app: typer.Typer) -> None:
    """The commands are on ``probe_app`` (decorators above); nothing to add to the root."""


@probe_app.command("paired")
def paired(
    model: ModelOpt = "smollm2",
    benchmark: BenchOpt = "gsm8k",
    ref_model: RefModelOpt = None,
    variants: VariantsOpt = None,
    limit: LimitOpt = 0,
    method: Annotated[
        str, typer.Option("--method", help="did_diff (differing tokens), did (whole text) or pair_diff (no reference model).")
    ] = "did_diff",
    unit: Annotated[
        str,
        typer.Option("--unit", help="char: log-prob per character (any two tokenizers); token: per-token mean (same tokenizer only)."),
    ] = "char",
    field: Annotated[str, typer.Option("--field", help="Item text scored: text (question+solution), question or answer.")] = "text",
    alpha: Annotated[float, typer.Option("--alpha", help="Flag the benchmark at one-sided p below this.")] = 0.05,
    min_items: Annotated[int, typer.Option("--min-items", help="No verdict below this many pairs.")] = 10,
    prior: PriorOpt = 0.5,
    control: ControlOpt = None,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
) -> None:
    """Paired difference-in-differences verdict for any model: d = [M(orig) − M(variant)] − [R(orig) − R(variant)] > 0, Wilcoxon.

    R (--ref-model) is the model's base checkpoint or, when there is none, a reference model that predates the benchmark. Assumption: R's preference for the originals is what M's would be had M not seen them; a reference trained on different data can hide contamination or fake it (docs/model-side.md). Without --variants a variant set is built now (seed --seed).

    Example: contam probe paired --model hf:models/gsm8k-c3 --ref-model gemma3-270m -b gsm8k --variants ref/ --limit 50 --out runs/paired
    """
    from contam.probe.paired import PairedConfig, PairedProbe

    not_used("paired", control=control)
    n = limit_of(limit, n_alias)
    cfg = PairedConfig(method=method, unit=unit, field=field, alpha=alpha, prior=prior, min_items=min_items)
    if ref_model is None and cfg.method != "pair_diff":
        raise ConfigError(
            "`contam probe paired` needs --ref-model (the model's base checkpoint, or a reference model that predates the benchmark)"
        )
    from contam.probe.runfolder import run_in_folder
    from contam.probe.runs import load_items, load_model, variants_for

    # the models first: a missing model fails in a second, before a variant set is built
    m = load_model(model, no_cache)
    r = load_model(ref_model, no_cache) if ref_model else None
    items = load_items(benchmark, n)
    ref = variants_for(variants, items, 1, seed, _say)
    settings = {
        "command": "paired",
        "model": redact_url(model),
        "ref_model": redact_url(ref_model) if ref_model is not None else None,
        "benchmark": benchmark,
        "variants": str(variants) if variants else f"built, seed {seed}",
        "n": n,
        "config": asdict(cfg),
    }

    def work(ck: Any) -> dict[str, Any]:
        result = PairedProbe(cfg).run(m, items, variants=ref, ref_model=r, checkpoint=ck)
        s = {"command": "paired", "benchmark": benchmark, "variants": str(variants) if variants else "built", **result.to_dict()}
        s.pop("items", None)
        return s

    summary = run_in_folder(out, settings, work, fresh=fresh)
    if not json_out:
        ts = summary["test"]
        t = Table(
            title=escape(
                f"Paired verdict ({summary['method']}, per {summary['config']['unit']}): {summary['model']} vs {summary['ref_model'] or '—'} on {benchmark} ({summary['n_pairs']} pairs)"
            ),
            show_header=False,
        )
        for a, b in (
            ("shift (Hodges–Lehmann) [95% CI]", f"{_f(ts['effect'])} {_ci(ts['ci'])}"),
            ("pairs with d > 0", f"{ts['details'].get('n_positive', 0)} of {summary['n_pairs']}"),
            ("Wilcoxon signed-rank", f"p = {ts['p_value']:.3g} (one-sided, d > 0)"),
            ("flagged", summary["note"] or f"{summary['flagged']} (alpha {alpha})"),
            ("Contamination Confidence", _f(summary["contamination_confidence"])),
            ("assumption", summary["assumption"]),
        ):
            t.add_row(escape(a), escape(b))
        console.print(t)
    _finish(out, summary, json_out)
