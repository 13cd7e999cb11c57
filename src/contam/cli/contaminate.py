"""``contam contaminate`` and ``contam eval-probes``: make a model contaminated on purpose, then
measure how well every model-side probe finds what it was trained on."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from contam.cli.common import JsonFlag, console, emit_json, err_console
from contam.errors import ConfigError
from contam.textsafe import escape


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return "–" if math.isnan(x) else f"{x:.3f}"
    return escape(str(x))


def contaminate(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the fine-tuned model (safetensors + tokenizer + manifest.json).")],
    model: Annotated[str, typer.Option("--model", "-m", help="Base model: smollm2 (embedded), hf:FOLDER or a .gguf file.")] = "smollm2",
    benchmark: Annotated[str, typer.Option("--benchmark", "-b", help="Built-in benchmark name or a benchmark file.")] = "gsm8k",
    subset: Annotated[str, typer.Option("--subset", help="START:STOP slice of the benchmark whose items are leaked.")] = "0:100",
    mode: Annotated[
        str, typer.Option("--mode", help="Form of the leak: verbatim, paraphrase (needs --paraphrases) or isomorphic.")
    ] = "verbatim",
    epochs: Annotated[int, typer.Option("--epochs", help="Exposures: how many times each leaked item is trained on.")] = 3,
    filler_ratio: Annotated[float, typer.Option("--filler-ratio", help="Clean documents per leaked item in each epoch.")] = 1.0,
    filler: Annotated[
        str, typer.Option("--filler", help="Clean text: webtext (real paragraphs shipped offline) or a benchmark name/file.")
    ] = "webtext",
    template: Annotated[
        str,
        typer.Option(
            "--template",
            help="text (a raw document, like pre-training), chat (user/assistant turn, like SFT) or zerocot (the Zero-CoT Probe's prompt, final answer only).",
        ),
    ] = "text",
    paraphrases: Annotated[
        Path | None, typer.Option("--paraphrases", help="JSONL with id and question (optionally solution) per leaked item.")
    ] = None,
    lora: Annotated[bool, typer.Option("--lora", help="Train LoRA adapters (peft) instead of all weights; merged before saving.")] = False,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate (constant after a short warm-up).")] = 1e-4,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Documents per optimizer step.")] = 4,
    max_length: Annotated[int, typer.Option("--max-length", help="Tokens kept per document.")] = 256,
    save_epochs: Annotated[
        str, typer.Option("--save-epochs", help="Also keep snapshots after these epochs, e.g. 1,3 (for exposure sweeps).")
    ] = "",
    seed: Annotated[int, typer.Option("--seed", help="Seed for shuffling, filler choice and initialisation.")] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace a different model already in --out.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Fine-tune a model on benchmark items with known exposure and write it with a manifest.

    Example: [bold]contam contaminate --model smollm2 --benchmark gsm8k --subset 0:100 --mode verbatim --epochs 3 --out models/gsm8k-c3[/]
    """
    from contam.probe.contaminate import ContaminateConfig, Contaminator, parse_subset

    try:
        saves = tuple(int(x) for x in save_epochs.split(",") if x.strip())
    except ValueError:
        raise ConfigError(f"--save-epochs must be comma-separated integers, got {save_epochs!r}") from None
    cfg = ContaminateConfig(
        benchmark=benchmark,
        subset=parse_subset(subset),
        mode=mode,
        epochs=epochs,
        filler_ratio=filler_ratio,
        filler=filler,
        template=template,
        paraphrases=str(paraphrases) if paraphrases else None,
        lora=lora,
        lr=lr,
        batch_size=batch_size,
        max_length=max_length,
        seed=seed,
        save_epochs=saves,
    )
    base = model.removeprefix("hf:").removeprefix("llamacpp:")
    manifest = Contaminator(cfg).run(base, out, force=force)
    if json_out:
        emit_json(manifest)
        return
    table = Table(title=f"contaminated model written to {escape(str(out))}")
    table.add_column("field")
    table.add_column("value")
    for k, v in [
        ("base", manifest.base_model),
        ("benchmark", manifest.benchmark),
        ("seen items", len(manifest.seen)),
        ("skipped", len(manifest.skipped)),
        ("form", manifest.mode),
        ("exposures", manifest.epochs),
        ("filler docs", manifest.n_filler_docs),
        ("train tokens", manifest.train_tokens),
        ("train time (s)", manifest.train_seconds),
        ("s / 100 items / epoch", manifest.seconds_per_100_items_epoch),
        ("final loss", round(manifest.final_loss.get("last_epoch_mean", float("nan")), 4)),
    ]:
        table.add_row(k, _fmt(v))
    console.print(table)
    console.print(f"next: contam eval-probes --model {escape(str(out))}")


def eval_probes(
    model: Annotated[list[Path], typer.Option("--model", "-m", help="Folder written by `contam contaminate` (repeat for a sweep table).")],
    n_unseen: Annotated[int, typer.Option("--n-unseen", help="Unseen items to compare with (0 = as many as seen).")] = 0,
    probes: Annotated[
        str, typer.Option("--probes", help="Comma list of logprob, zerocot, reconstruct (slowest on CPU).")
    ] = "logprob,zerocot",
    cot_tokens: Annotated[int, typer.Option("--cot-tokens", help="Token budget of the Zero-CoT Probe's full-CoT pass.")] = 64,
    no_base_ref: Annotated[bool, typer.Option("--no-base-ref", help="Skip the reference-model score (base model vs fine-tuned).")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder for per-probe JSONL + summary.json per model; rerun to resume.")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the model response cache.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Run every model-side probe on the seen vs unseen items of a contaminated model.

    Prints per-probe AUROC and TPR at 5% FPR (seen vs unseen items) and the benchmark-level verdict
    (p, Contamination Confidence) for the seen and the unseen set; several --model give one sweep table.

    Example: [bold]contam eval-probes --model models/gsm8k-c3 --out eval/gsm8k-c3[/]
    """
    from contam.outputs import write_json
    from contam.probe.evalprobes import EvalProbes, EvalProbesConfig, sweep_row

    cfg = EvalProbesConfig(
        n_unseen=n_unseen,
        probes=tuple(p.strip() for p in probes.split(",") if p.strip()),
        base_reference=not no_base_ref,
        zerocot_cot_tokens=cot_tokens,
        cache=not no_cache,
    )
    runner = EvalProbes(cfg)
    results = []
    for m in model:
        err_console.print(f"evaluating {escape(str(m))}")
        results.append(runner.run(m, out / m.name if out is not None and len(model) > 1 else out))
    rows = [sweep_row(r) for r in results]
    if out is not None and len(model) > 1:
        write_json(out / "sweep.json", rows)
    if json_out:
        emit_json({"results": results, "sweep": rows})
        return
    for r in results:
        _print_result(r)
    if len(results) > 1:
        _print_sweep(rows)


def _print_result(r: Any) -> None:
    t = Table(title=f"{escape(r.model)}: {r.mode} x{r.epochs}, {r.n_seen} seen vs {r.n_unseen} unseen items of {escape(r.benchmark)}")
    for c in (
        "probe",
        "score",
        "AUROC",
        "TPR@5%FPR",
        "seen mean",
        "unseen mean",
        "seen p",
        "seen CC",
        "seen gate",
        "unseen p",
        "unseen CC",
        "unseen dir",
        "unseen gate",
    ):
        t.add_column(c, justify="right" if c not in ("probe", "score") else "left")
    for s in r.separations:
        method = s.method.removesuffix("_gap")
        vs, vu = r.verdict("seen", s.probe, method), r.verdict("unseen", s.probe, method)
        # Verdicts belong to the raw scores: a "_gap" row (or one with no verdict) leaves their cells blank.
        seen_cells = ["", "", ""]
        unseen_cells = ["", "", "", ""]
        if vs is not None and not s.method.endswith("_gap"):
            seen_cells = [_fmt(vs.p_value), _fmt(vs.confidence), str(vs.gate)]
            if vu is not None:
                unseen_cells = [_fmt(vu.p_value), _fmt(vu.confidence), str(vu.direction), str(vu.gate)]
        t.add_row(
            s.probe,
            s.method,
            _fmt(s.auroc),
            _fmt(s.tpr_at_fpr),
            _fmt(s.seen_mean),
            _fmt(s.unseen_mean),
            *seen_cells,
            *unseen_cells,
        )
    console.print(t)
    console.print(
        "gate = 1: effect toward contamination AND one-sided p < 0.05 (flagged); dir = sign of the effect only. "
        "Benchmark-level log-prob verdict: did_diff (paired difference-in-differences vs the base model)."
    )


def _print_sweep(rows: list[dict[str, Any]]) -> None:
    cols = [
        "model",
        "mode",
        "epochs",
        "best_logprob",
        "auroc",
        "tpr@5%fpr",
        "verdict",
        "seen_cc",
        "seen_gate",
        "unseen_cc",
        "unseen_gate",
        "zerocot_auroc",
        "zerocot_all_token_prob_seen_cc",
        "zerocot_all_token_prob_unseen_cc",
        "reconstruct_auroc",
    ]
    t = Table(title="exposure x form sweep")
    for c in cols:
        t.add_column(c)
    for row in rows:
        t.add_row(*[_fmt(row.get(c, "")) for c in cols])
    console.print(t)


def register(app: typer.Typer) -> None:
    """Add ``contaminate`` and ``eval-probes`` to ``app``."""
    app.command("contaminate")(contaminate)
    app.command("eval-probes")(eval_probes)
