"""``contam perturb``: build a reference set (isomorphic instances, option permutations, masked
options, or paraphrases) with computed answers and an audit of every instance."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from contam.cli.common import JsonFlag, console, emit_json
from contam.errors import ConfigError
from contam.textsafe import escape, redact_url

KIND_HELP = "symbolic (GSM8K-style isomorphs), permute (MC option order), mask (TS-Guessing), paraphrase (needs --model), or auto."


def perturb(
    benchmark: Annotated[
        str, typer.Option("--benchmark", "-b", help="Built-in name (gsm8k, gsm8k-train, mmlu, ...), a benchmark file, or hf:NAME[:SPLIT].")
    ],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output folder: variants.jsonl + summary.json (+ rejections.jsonl).")
    ] = None,
    variants: Annotated[int, typer.Option("--variants", "-n", min=1, help="Variants per item.")] = 1,
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

    Example: contam perturb --benchmark gsm8k --variants 5 --seed 0 --out ref/
    """
    from contam.data import load_benchmark
    from contam.outputs import JsonlCheckpoint, ensure_dir, write_json

    kinds = ("auto", "symbolic", "permute", "mask", "paraphrase")
    if kind not in kinds:
        raise ConfigError(f"--kind {kind!r}: choose one of {', '.join(kinds)}")
    items = load_benchmark(benchmark)
    if limit:
        items = items[:limit]
    ck = None
    if out is not None:
        ensure_dir(out)
        _check_resume(out, fresh, {"benchmark": benchmark, "kind": kind, "seed": seed, "variants_per_item": variants})
        ck = JsonlCheckpoint(out / "variants.jsonl", key="original_id", resume=not fresh)
    if kind == "paraphrase":  # model calls are costly: items already written are skipped
        summary = _paraphrase([it for it in items if ck is None or it.id not in ck.done], model, variants, seed, floor, ck)
    else:
        summary = _reference(items, variants, seed, kind, budget, ck, out, swap_names, judge)
    summary.update({"benchmark": benchmark, "kind": kind, "seed": seed, "variants_per_item": variants})
    if ck is not None:
        ck.close()
    if out is not None:
        if not (out / "variants.jsonl").exists():  # a judge may keep none: the set is empty, not missing
            (out / "variants.jsonl").touch()
        write_json(out / "summary.json", summary)
    if json_out:
        emit_json(summary)
        return
    _print(summary, out)


def _check_resume(out: Path, fresh: bool, settings: dict[str, Any]) -> None:
    """Refuse to append to a folder made with other settings (the set would mix seeds or kinds)."""
    import json

    prev = out / "summary.json"
    if fresh or not prev.exists() or not (out / "variants.jsonl").exists():
        return
    try:
        old = json.loads(prev.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    for k, v in settings.items():
        if k in old and old[k] != v:
            raise ConfigError(f"{out}: was built with {k}={old[k]!r}, not {v!r}; use the same settings to resume, or --fresh to start over")


def _reference(
    items: list, variants: int, seed: int, kind: str, budget: int, ck: Any, out: Path | None, names: bool, judge: str | None = None
) -> dict[str, Any]:
    from contam.outputs import atomic_write, dumps_line
    from contam.perturb.reference import build_reference_set

    # Generation is deterministic and cheap, so a resumed run rebuilds the whole set (the summary
    # covers every item) and appends only the items not written before.
    ref = build_reference_set(items, variants, seed, kind=kind, budget=budget, names=names)
    kept = ref.variants
    judged: dict[str, Any] = {}
    if judge:
        from contam.models import load
        from contam.perturb.judge import Judge

        # Judged answers come from the response cache on a rerun, so resuming costs no model calls.
        result = Judge(load(judge)).run(ref.variants)
        kept = result.kept
        judged = result.summary(judge)
        per_item: dict[str, int] = {}
        for v in kept:
            per_item[v.original_id] = per_item.get(v.original_id, 0) + 1
        judged["covered_after_judge"] = sum(1 for n in per_item.values() if n >= variants)
        if out is not None:
            with atomic_write(out / "judge.jsonl") as fh:
                for row in result.verdicts:
                    fh.write(dumps_line(row) + "\n")
    if ck is not None:
        done = set(ck.done)
        for v in kept:
            if v.original_id not in done:
                ck.write(_row(v))
    if out is not None:
        with atomic_write(out / "rejections.jsonl") as fh:
            for r in ref.rejections:
                fh.write(dumps_line(r.to_dict()) + "\n")
    rep = ref.report
    return {
        "items": rep.items,
        "templated": rep.templated,
        "covered": rep.covered,
        "instances": rep.instances,
        "template_share": round(rep.template_share, 4),
        "coverage": round(rep.coverage, 4),
        "audit_checks": list(rep.checks),
        "audit_failures": rep.failures,
        "rejections": rep.rejections,
        "items_with_variants": len({v.original_id for v in kept}),
        "frozen_by_guard": rep.frozen,
        "written": len(kept),
        **({"judge": judged} if judged else {}),
    }


def _paraphrase(items: list, model_spec: str, variants: int, seed: int, floor: float, ck: Any) -> dict[str, Any]:
    from contam.models import load, load_embedder
    from contam.perturb.paraphrase import ParaphraseConfig, Paraphraser

    cfg = ParaphraseConfig(k=variants, tries=max(2 * variants, 4), floor=floor, seed=seed)
    para = Paraphraser(cfg)
    got = para.run(load(model_spec), items, load_embedder("minilm"))
    if ck is not None:
        for v in got:
            ck.write(_row(v))
    return {
        "items": len(items),
        "instances": len(got),
        "items_with_variants": len({v.original_id for v in got}),
        "similarity_metric": "cosine:minilm (BLEURT has no offline checkpoint on PyPI)",
        "floor": floor,
        "model": redact_url(model_spec),
        "rejections": dict(para.rejected),
    }


def _row(v: Any) -> dict[str, Any]:
    d = v.to_dict()
    keys = (
        "original_id",
        "variant_id",
        "kind",
        "seed",
        "question",
        "answer",
        "solution",
        "choices",
        "template_id",
        "audit_hash",
        "original_answer",
        "values",
        "metadata",
    )
    return {k: d[k] for k in keys}


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
