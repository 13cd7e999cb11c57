"""``contam perturb``: build a variant set (isomorphic instances, option permutations, masked
options, or paraphrases) with computed answers and an audit of every instance; thin over
:func:`contam.perturb.folder.build_variant_folder`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from contam.cli.common import JsonFlag, console, emit_json, renamed_option
from contam.textsafe import escape

KIND_HELP = "symbolic (GSM8K-style isomorphs), permute (MC option order), mask (TS-Guessing), paraphrase (needs --model), or auto."


def perturb(
    benchmark: Annotated[
        str, typer.Option("--benchmark", "-b", help="Built-in name (gsm8k, gsm8k-train, mmlu, ...), a benchmark file, or hf:NAME[:SPLIT].")
    ],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output folder: variants.jsonl + summary.json (+ rejections.jsonl).")
    ] = None,
    per_item: Annotated[int | None, typer.Option("--per-item", "-n", min=1, help="Variants per item (default 1).")] = None,
    old_variants: Annotated[
        int | None, typer.Option("--variants", hidden=True, min=1, help="Deprecated name of --per-item (a count here).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed: the same seed gives the same instances and hashes.")] = 0,
    kind: Annotated[str, typer.Option("--kind", help=KIND_HELP)] = "auto",
    limit: Annotated[int | None, typer.Option("--limit", min=0, help="Only the first N items (0 = all).")] = None,
    model: Annotated[
        str, typer.Option("--model", help="Model spec for --kind paraphrase (smollm2, llamacpp:PATH, hf:PATH, openai:URL#MODEL).")
    ] = "smollm2",
    floor: Annotated[float, typer.Option("--floor", help="Paraphrase: least embedding cosine to the original.")] = 0.8,
    budget: Annotated[int, typer.Option("--budget", min=1, help="Symbolic: candidate assignments tried per instance.")] = 400,
    fresh: Annotated[bool, typer.Option("--fresh", help="Start over instead of resuming an existing variants.jsonl.")] = False,
    swap_names: Annotated[bool, typer.Option("--swap-names", help="Symbolic: also replace listed person names (context change).")] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="Symbolic: a model spec that solves each variant; only variants whose judged answer equals the computed one are kept (off by default; calls are cached).",
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Make a reference set whose answers are computed, never guessed, and audit every instance.

    Example: contam perturb --benchmark gsm8k --per-item 5 --seed 0 --out ref/
    """
    from contam.perturb.folder import build_variant_folder

    why = "--variants names a variant set everywhere else: pass this folder to the probes as --variants"
    variants = renamed_option("--variants", "--per-item", old_variants, per_item, why) or 1

    summary = build_variant_folder(
        benchmark,
        out,
        variants=variants,
        seed=seed,
        kind=kind,
        limit=limit,
        model=model,
        floor=floor,
        budget=budget,
        fresh=fresh,
        swap_names=swap_names,
        judge=judge,
    )
    if json_out:
        emit_json(summary)
        return
    _print(summary, out)


def _print(s: dict[str, Any], out: Path | None) -> None:
    t = Table(title=f"reference set: {escape(str(s['benchmark']))} ({escape(s['kind'])}, seed {s['seed']})", show_header=False)
    t.add_column("what")
    t.add_column("value", justify="right")
    t.add_row("items", str(s["items"]))
    if "templated" in s:
        t.add_row("templated / planned", f"{s['templated']} ({s['template_share']:.1%})")
        t.add_row(f"with {s['variants_per_item']} audited variants", f"{s['covered']} ({s['coverage']:.1%})")
    t.add_row("variants written", str(s.get("written", s["instances"])))
    if "similarity_metric" in s:
        t.add_row("similarity", escape(f"{s['similarity_metric']} >= {s['floor']}"))
    console.print(t)
    if "audit_checks" in s:
        a = Table(title="audit of every generated instance (failing ones are never written)")
        a.add_column("check")
        a.add_column("failed", justify="right")
        for c in s["audit_checks"]:
            a.add_row(c, str(s["audit_failures"].get(c, 0)))
            for sub, n in sorted(s["audit_failures"].items()):
                if sub.startswith(c + ":"):  # which readback statements failed
                    a.add_row(escape("  " + sub), str(n))
        console.print(a)
    if s.get("judge"):
        j = s["judge"]
        console.print(
            escape(
                f"judge {j['judge']}: {j['agreed']} of {j['judged']} variants agree ({j['agreement_rate']:.1%}); "
                f"{j['dropped']} dropped; {j['covered_after_judge']} items keep {s['variants_per_item']} variants"
            )
        )
    if s.get("frozen_by_guard"):
        g = Table(title="numbers frozen by the lifter's guards (they keep their value in every variant)")
        g.add_column("guard")
        g.add_column("slots", justify="right")
        for k, n in s["frozen_by_guard"].items():
            g.add_row(escape(k), str(n))
        console.print(g)
    if s.get("rejections"):
        r = Table(title="items without variants, by reason")
        r.add_column("reason")
        r.add_column("items", justify="right")
        for k, n in s["rejections"].items():
            r.add_row(escape(k), str(n))
        console.print(r)
    if out is not None:
        console.print(f"wrote {escape(str(out / 'variants.jsonl'))} and {escape(str(out / 'summary.json'))}")


def register(app: typer.Typer) -> None:
    """Add ``contam perturb`` to ``app``."""
    app.command("perturb")(perturb)
