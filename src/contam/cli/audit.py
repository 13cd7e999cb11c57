"""``contam make-scenarios`` and ``contam eval-detectors``: labelled contamination scenarios and
the detection-quality tables of paper 001 (Table 1 per method × scenario, Table 2 per benchmark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contam.cli.common import JsonFlag, console, emit_json, err_console
from contam.errors import ConfigError, InputError

if TYPE_CHECKING:  # the scan modules load numpy and friends: imported where a command runs
    from rich.table import Table

    from contam.scan.evaluate import EvalReport
    from contam.scan.paraphrase import LLMParaphraser
    from contam.scan.scenarios import ScenarioSet

BenchOpt = Annotated[list[str], typer.Option("--benchmark", "-b", help="gsm8k, humaneval, mmlu (repeat), or 'all'.")]


def _benchmarks(values: list[str]) -> list[str]:
    from contam.scan.scenarios import BENCHMARKS

    out: list[str] = []
    for v in values:
        for b in v.split(","):
            b = b.strip()
            if b == "all":
                out += list(BENCHMARKS)
            elif b not in BENCHMARKS:
                raise ConfigError(f"--benchmark {b!r}: scenarios exist for {', '.join(BENCHMARKS)} (or 'all')")
            else:
                out.append(b)
    return list(dict.fromkeys(out))


def _paraphraser(spec: str | None, floor: float) -> LLMParaphraser | None:
    if not spec:
        return None
    from contam.models import load
    from contam.scan.paraphrase import LLMParaphraser

    return LLMParaphraser(load(spec), floor=floor)


def save_scenarios(s: ScenarioSet, out: Path) -> None:
    """``samples.jsonl`` (one labelled sample a line) and ``summary.json`` under ``out``."""
    from collections import Counter

    from contam.outputs import atomic_write, dumps_line, ensure_dir, write_json

    ensure_dir(out)
    with atomic_write(out / "samples.jsonl") as fh:
        for x in s.samples:
            fh.write(dumps_line(x.to_dict()) + "\n")
    counts = Counter(f"{x.scenario}/{x.split}" for x in s.samples)
    gens = Counter(x.generator for x in s.samples)
    write_json(
        out / "summary.json",
        {
            "benchmark": s.benchmark,
            "seed": s.seed,
            "benchmark_ids": list(s.benchmark_ids),
            "counts": dict(sorted(counts.items())),
            "generators": dict(gens),
            "notes": s.notes,
        },
    )


def load_scenarios(folder: Path) -> ScenarioSet:
    """Read back what :func:`save_scenarios` wrote (errors name file, line and field)."""
    from contam.scan.scenarios import Sample, ScenarioSet

    summ_p, samp_p = folder / "summary.json", folder / "samples.jsonl"
    for p in (summ_p, samp_p):
        if not p.exists():
            raise InputError("missing (write it with `contam make-scenarios --out DIR`)", path=p)
    try:
        summ = json.loads(summ_p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", path=summ_p, line=e.lineno) from None
    samples = []
    with open(samp_p, encoding="utf-8") as fh:
        for ln, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                d = json.loads(raw)
            except json.JSONDecodeError as e:
                raise InputError(f"not valid JSON: {e.msg}", path=samp_p, line=ln) from None
            for f in ("id", "text", "label", "scenario", "split"):
                if f not in d:
                    raise InputError("missing", path=samp_p, line=ln, field=f)
            if d["label"] not in (0, 1):
                raise InputError(f"must be 0 or 1, got {d['label']!r}", path=samp_p, line=ln, field="label")
            samples.append(Sample.from_dict(d))
    return ScenarioSet(summ["benchmark"], int(summ.get("seed", 0)), tuple(summ["benchmark_ids"]), tuple(samples), summ.get("notes", {}))


def make_scenarios(
    benchmark: BenchOpt,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for samples.jsonl and summary.json (one sub-folder per benchmark when several).")
    ],
    n: Annotated[
        int | None, typer.Option("--n", help="Source items per scenario (default: paper's 150 GSM8K / 100 HumanEval / 200 MMLU).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling, splits and variants.")] = 0,
    paraphrase_model: Annotated[
        str | None, typer.Option("--paraphrase-model", help="LLM spec for S2 (e.g. smollm2); rule-based without.")
    ] = None,
    floor: Annotated[float, typer.Option(help="Least embedding cosine between an LLM paraphrase and its original.")] = 0.8,
    question_only: Annotated[
        bool, typer.Option("--question-only", help="Samples hold questions/prompts only, no solutions (S4 left out).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Build labelled scenarios S1–S4 plus hard negatives from a benchmark.

    Example: contam make-scenarios --benchmark gsm8k --out scen/
    """
    from contam.scan.scenarios import build_scenarios

    names = _benchmarks(benchmark)
    para = _paraphraser(paraphrase_model, floor)
    summaries = {}
    for b in names:
        s = build_scenarios(b, n=n, seed=seed, paraphraser=para, question_only=question_only)
        folder = out / b if len(names) > 1 else out
        save_scenarios(s, folder)
        summaries[b] = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        summaries[b].pop("benchmark_ids")
    if as_json:
        emit_json(summaries)
        return
    from rich.table import Table

    for b, summ in summaries.items():
        t = Table(title=f"{b}: scenarios written to {out / b if len(names) > 1 else out}")
        t.add_column("scenario/split")
        t.add_column("samples", justify="right")
        for k, v in summ["counts"].items():
            t.add_row(k, str(v))
        console.print(t)
        console.print("generators: " + ", ".join(f"{k} {v}" for k, v in summ["generators"].items()), markup=False)


def _table1(rep: EvalReport, title: str) -> Table:
    from rich.table import Table

    t = Table(title=title)
    t.add_column("method")
    scs = rep.scenarios()
    for s in scs:
        t.add_column(f"{s} F1", justify="right")
    t.add_column("avg F1", justify="right")
    for m in rep.methods():
        cells, f1s = [], []
        for s in scs:
            row = next((r for r in rep.rows if r.method == m and r.scenario == s), None)
            if row is None:
                cells.append("—")
                continue
            mt = row.metrics
            f1s.append(mt.f1)
            cells.append(f"[bold]{mt.f1:.3f}[/]\n[dim]P {mt.precision:.2f} R {mt.recall:.2f}[/]")
        t.add_row(m, *cells, f"{sum(f1s) / len(f1s):.3f}" if f1s else "—")
    return t


def eval_detectors(
    benchmark: BenchOpt,
    scenarios: Annotated[
        Path | None, typer.Option("--scenarios", help="Folder from make-scenarios (one benchmark); built on the fly without.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="LLM spec for the Min-K% baseline (e.g. smollm2).")] = None,
    n: Annotated[int | None, typer.Option("--n", help="Source items per scenario when building on the fly.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the scenarios built on the fly.")] = 0,
    levels: Annotated[str, typer.Option(help="Cascade levels: token,semantic,reasoning or all.")] = "all",
    target_precision: Annotated[
        float | None, typer.Option("--target-precision", help="Calibrate for recall at this precision instead of F1.")
    ] = None,
    question_only: Annotated[
        bool, typer.Option("--question-only", help="Scenarios built on the fly hold questions only (no solutions).")
    ] = False,
    embedder: Annotated[
        str,
        typer.Option(
            "--embedder",
            help="Embedder of the semantic level: minilm (embedded), static (distilled from it, fast), st:PATH or static:PATH.",
        ),
    ] = "minilm",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write report.json (and one JSONL row per cell) here.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Precision / recall / F1 of baselines and the cascade per scenario (paper 001 Table 1) and per benchmark (Table 2).

    Thresholds are calibrated on the scenarios' calib split and reported on the disjoint test split.

    Example: contam eval-detectors --benchmark gsm8k
    """
    from contam.scan.evaluate import evaluate
    from contam.scan.hierarchy import HierarchyConfig
    from contam.scan.scenarios import build_scenarios

    names = _benchmarks(benchmark)
    if scenarios is not None and len(names) > 1:
        raise ConfigError("--scenarios holds one benchmark's samples: give a single --benchmark with it")
    lm = None
    if model:
        from contam.models import load

        lm = load(model)
    cfg = HierarchyConfig(levels=levels)
    emb = None
    if "semantic" in cfg.levels:
        from contam.models import load_embedder

        emb = load_embedder(embedder)
    reports = []
    for b in names:
        s = load_scenarios(scenarios) if scenarios is not None else build_scenarios(b, n=n, seed=seed, question_only=question_only)
        err_console.print(f"[dim]{b}: {len(s.samples)} samples against {len(s.benchmark_ids)} benchmark items[/]")
        reports.append(evaluate(s, cfg, model=lm, target_precision=target_precision, embedder=emb))
    table2 = []
    for r in reports:
        base = [r.f1(m, "S3") or 0.0 for m in r.methods() if not m.startswith("cascade")]
        ours = r.f1("cascade", "S3") or 0.0
        best = max(base) if base else 0.0
        table2.append({"benchmark": r.benchmark, "best_baseline_f1": best, "cascade_f1": ours, "improvement": round(ours - best, 6)})
    if out is not None:
        from contam.outputs import atomic_write, dumps_line, write_json

        with atomic_write(out / "rows.jsonl") as fh:
            for r in reports:
                for row in r.rows:
                    fh.write(dumps_line({"benchmark": r.benchmark, **row.to_dict()}) + "\n")
        write_json(out / "report.json", {"reports": [r.to_dict() for r in reports], "table2_s3": table2})
        from contam.scan.evaluate import thresholds_for

        # Calibrated cascade settings, for HierarchyConfig().with_thresholds(Thresholds.from_dict(...)).
        write_json(out / "thresholds.json", {r.benchmark: thresholds_for(r).to_dict() for r in reports})
    if as_json:
        emit_json({"reports": [r.to_dict() for r in reports], "table2_s3": table2})
        return
    from rich.table import Table

    for r in reports:
        console.print(_table1(r, f"{r.benchmark}: detection on the test split (thresholds calibrated on the calib split)"))
    t = Table(title="S3 (semantic-near) F1 per benchmark")
    t.add_column("")
    for row in table2:
        t.add_column(row["benchmark"], justify="right")
    t.add_row("best baseline", *[f"{x['best_baseline_f1']:.3f}" for x in table2])
    t.add_row("cascade", *[f"{x['cascade_f1']:.3f}" for x in table2])
    t.add_row("improvement", *[f"{x['improvement']:+.3f}" for x in table2])
    console.print(t)


def register(app: typer.Typer) -> None:
    """Add ``make-scenarios`` and ``eval-detectors`` to ``app``."""
    app.command("make-scenarios")(make_scenarios)
    app.command("eval-detectors")(eval_detectors)
