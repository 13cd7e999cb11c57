"""``contam demo``: the main jobs end to end on the embedded defaults, offline, in a few minutes.

It runs the same commands a user would type (the demo is a script over the CLI, so what it
shows is what the README documents):

1. data-side audit: build a corpus of real web-like text with real GSM8K, HumanEval and MMLU
   items injected (half verbatim, half lightly edited), scan it, check the flags against the
   known injections, and write a decontaminated copy;
2. fresh instances: an isomorphic GSM8K variant set with computed, audited answers;
3. model-side audit: Min-K% Prob and the Zero-CoT Probe with the embedded SmolLM2 model;
4. evergreen tool-agent tasks: regenerated τ-bench retail tasks with a replay oracle and audit;
5. one report (``demo-out/report.html`` and ``report.md``) over everything the steps wrote.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from contam.cli.common import console
from contam.errors import ContamError


def _step(title: str, argv: list[str]) -> float:
    from contam.cli.main import main

    console.rule(f"[bold]{title}")
    console.print("$ contam " + " ".join(argv), style="dim", markup=False)
    t0 = time.perf_counter()
    rc = main(argv)
    if rc != 0:
        raise ContamError(f"demo step {title!r} failed with exit code {rc}")
    return time.perf_counter() - t0


def _check_injections(out: Path, truth_path: Path) -> tuple[int, int, int]:
    """(injections found with the right item, injections, flagged documents with no injection)."""
    truth = [json.loads(line) for line in truth_path.read_text(encoding="utf-8").splitlines()]
    flagged: dict[str, set[str]] = {}
    for line in (out / "scan" / "flags.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["contaminated"]:
            flagged[rec["doc_id"]] = {f["item_id"] for f in rec["flags"]}
    found = sum(1 for t in truth if t["item_id"] in flagged.get(t["doc_id"], set()))
    injected_docs = {t["doc_id"] for t in truth}
    false_pos = sum(1 for d in flagged if d not in injected_docs)
    return found, len(truth), false_pos


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        out: Annotated[Path, typer.Option("--out", "-o", help="Folder for everything the demo writes.")] = Path("demo-out"),
        n: Annotated[int, typer.Option("--n", help="Benchmark items per model-side probe (small keeps the demo quick).")] = 20,
        seed: Annotated[int, typer.Option("--seed", help="Seed of the corpus, the reference set and the regenerated worlds.")] = 0,
    ) -> None:
        """Run the main audit end to end on the embedded defaults (no network, CPU only).

        Example: contam demo --out demo-out
        """
        from contam.data.webtext import build_demo_corpus
        from contam.outputs import atomic_write, ensure_dir

        ensure_dir(out)
        corpus, truth_path = out / "corpus.jsonl", out / "injections.jsonl"
        truth = build_demo_corpus(corpus, seed=seed)
        with atomic_write(truth_path) as fh:
            for t in truth:
                fh.write(json.dumps(t.to_dict()) + "\n")
        console.print(
            f"built {corpus}: 200 documents of real web-like text with {len(truth)} injected benchmark items (ground truth: {truth_path})"
        )
        times: dict[str, float] = {}
        bench = ["-b", "gsm8k", "-b", "humaneval", "-b", "mmlu"]
        times["scan"] = _step(
            "1a. Data-side audit: token-level scan", ["scan", *bench, "--corpus", str(corpus), "--out", str(out / "scan")]
        )
        found, total, false_pos = _check_injections(out, truth_path)
        console.print(
            f"ground truth check: {found}/{total} injected items found with the right item id; {false_pos} flagged documents had no injection"
        )
        times["decontaminate"] = _step(
            "1b. Decontaminated copy",
            ["decontaminate", "--corpus", str(corpus), "--scan", str(out / "scan"), "--out", str(out / "corpus.clean.jsonl")],
        )
        times["perturb"] = _step(
            "2. Fresh instances: isomorphic GSM8K reference set (computed answers, audited)",
            ["perturb", "-b", "gsm8k", "--limit", str(n), "--variants", "1", "--seed", str(seed), "--out", str(out / "reference")],
        )
        times["minkprob"] = _step(
            "3a. Model-side audit: Min-K% Prob, GSM8K vs its isomorphic reference set (SmolLM2-135M)",
            [
                "probe",
                "minkprob",
                "-m",
                "smollm2",
                "-b",
                "gsm8k",
                "--limit",
                str(n),
                "--variants",
                str(out / "reference"),
                "--out",
                str(out / "minkprob"),
            ],
        )
        times["zerocot"] = _step(
            "3b. Model-side audit: Zero-CoT Probe with Contamination Confidence (SmolLM2-135M)",
            [
                "probe", "zerocot", "-m", "smollm2", "-b", "gsm8k", "--limit", str(min(n, 10)), "--variants", str(out / "reference"),
                "--max-cot-tokens", "160", "--truncation", "", "--resamples", "2000", "--out", str(out / "zerocot"),
            ],
        )  # fmt: skip
        times["regen"] = _step(
            "4. Evergreen tool-agent tasks: regenerated τ-bench retail worlds, replay oracle, audit",
            ["regen", "--domain", "retail", "--seeds", f"{seed}:{seed + 3}", "--tasks", "0:20", "--out", str(out / "regen")],
        )
        # one report over everything above, to hand on: HTML for a browser, Markdown for a PR or wiki
        results = [str(out / p) for p in ("scan", "corpus.clean.jsonl.log.jsonl", "reference", "minkprob", "zerocot", "regen")]
        reports = {"html": out / "report.html", "md": out / "report.md"}
        for i, (fmt, path) in enumerate(reports.items()):
            times[f"report-{fmt}"] = _step(
                f"5{'ab'[i]}. Report ({fmt}) over everything above",
                ["report", *results, "--title", "contam demo", "--format", fmt, "--out", str(path)],
            )
        console.rule("[bold]Done")
        console.print("seconds per step: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
        console.print(f"everything is under {out}/ (per-item JSONL and a summary.json per step)")
        console.print(f"report: {reports['html']} (open in a browser) and {reports['md']}", markup=False)
