"""Controlled contamination: detection quality of every model-side probe vs exposure and form.

Fine-tunes the embedded SmolLM2-135M-Instruct (full fine-tune, float32, CPU) on GSM8K test
items [0, N) -- verbatim, and paraphrased (hand-written paraphrases of question and solution in
bench/data/gsm8k-test-paraphrases.jsonl, numbers and answers kept) -- mixed with clean real
paragraphs, for the largest exposure count; the snapshots after fewer epochs are the models of
shorter runs (constant learning rate after warm-up). Then `EvalProbes` compares the N seen items
with the next N unseen ones, each against its isomorphic reference variant, and prints one table
(exposure x form) plus the fine-tuning cost per 100 items per epoch.

    .venv/bin/python bench/controlled.py                      # train what is missing, evaluate, print
    .venv/bin/python bench/controlled.py --train-only --forms verbatim   # one form (run forms in parallel)
    # the Zero-CoT Probe reads a chat prompt: train the leak as SFT turns and probe that model
    .venv/bin/python bench/controlled.py --template chat --max-length 352 --epochs 3 --forms verbatim \
        --probes zerocot --cot-tokens 32 --out bench/out/c16chat

Everything is resumable: finished models are reused, probe results are checkpointed per item.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent
PARAPHRASES = ROOT / "data" / "gsm8k-test-paraphrases.jsonl"


def config_for(form: str, args: argparse.Namespace):
    from contam.probe.contaminate import ContaminateConfig

    epochs = sorted(args.epochs)
    return ContaminateConfig(
        benchmark="gsm8k",
        subset=(0, args.n),
        mode=form,
        epochs=epochs[-1],
        filler_ratio=args.filler_ratio,
        paraphrases=str(PARAPHRASES) if form == "paraphrase" else None,
        lr=args.lr,
        batch_size=4,
        max_length=args.max_length,
        seed=0,
        save_epochs=tuple(e for e in epochs[:-1]),
        template=args.template,
    )


def model_dir(out: Path, form: str, epochs: int, top: int) -> Path:
    return out / form if epochs == top else out / form / f"epoch-{epochs}"


def fmt(x: object) -> str:
    if isinstance(x, float):
        return "–" if math.isnan(x) else f"{x:.3f}"
    return str(x)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=16, help="seen items (GSM8K test [0, n)); as many unseen ones follow")
    ap.add_argument("--epochs", type=lambda s: [int(x) for x in s.split(",")], default=[1, 3, 10])
    ap.add_argument("--forms", type=lambda s: s.split(","), default=["verbatim", "paraphrase"])
    ap.add_argument("--filler-ratio", type=float, default=0.5)
    ap.add_argument("--max-length", type=int, default=192)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument(
        "--template",
        choices=["text", "chat"],
        default="text",
        help="training document form: text (raw leak) or chat (SFT turn; what the Zero-CoT Probe's chat prompt reads)",
    )
    ap.add_argument("--probes", default="logprob", help="comma list of logprob, zerocot, reconstruct")
    ap.add_argument("--cot-tokens", type=int, default=64, help="full-CoT budget of the Zero-CoT Probe (only its consistency metric)")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "controlled")
    ap.add_argument("--train-only", action="store_true")
    ap.add_argument("--eval-only", action="store_true", help="evaluate the finished models and snapshots that exist; train nothing")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    args = ap.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from contam.probe.contaminate import Contaminator, read_manifest
    from contam.probe.evalprobes import EvalProbes, EvalProbesConfig, sweep_row

    top = max(args.epochs)
    manifests = {}
    for form in args.forms:
        if args.eval_only:
            found = [e for e in sorted(args.epochs, reverse=True) if (model_dir(args.out, form, e, top) / "manifest.json").is_file()]
            if found:
                manifests[form] = read_manifest(model_dir(args.out, form, found[0], top))
            continue
        t = time.perf_counter()
        manifests[form] = Contaminator(config_for(form, args)).run("smollm2", args.out / form)
        print(
            f"[train] {form}: {len(manifests[form].seen)} items x {top} epochs, {manifests[form].train_tokens} tokens, "
            f"{manifests[form].train_seconds:.0f} s ({manifests[form].seconds_per_100_items_epoch:.0f} s per 100 items per epoch; "
            f"this call {time.perf_counter() - t:.0f} s)",
            flush=True,
        )
    if args.train_only:
        return 0

    runner = EvalProbes(EvalProbesConfig(probes=tuple(args.probes.split(",")), zerocot_cot_tokens=args.cot_tokens))
    rows = []
    for form in args.forms:
        for e in sorted(args.epochs):
            d = model_dir(args.out, form, e, top)
            if not (d / "manifest.json").is_file():
                print(f"[eval] {form} x{e}: no finished model at {d}, skipped", flush=True)
                continue
            t = time.perf_counter()
            res = runner.run(d, args.out / "eval" / f"{form}-{e}")
            row = sweep_row(res)
            row["template"] = read_manifest(d).config.get("template", "text")
            row["eval_s"] = round(time.perf_counter() - t, 1)
            rows.append(row)
            print("[eval]", json.dumps(row, default=str), flush=True)
            for s in res.separations:
                vs, vu = res.verdict("seen", s.probe, s.method), res.verdict("unseen", s.probe, s.method)
                print(
                    f"    {s.probe:11s} {s.method:24s} AUROC {fmt(s.auroc)}  TPR@5% {fmt(s.tpr_at_fpr)}"
                    + (f"  seen p={vs.p_value:.2g} CC={vs.confidence:.3f}" if vs else "")
                    + (f"  unseen p={vu.p_value:.2g} CC={vu.confidence:.3f} dir={vu.direction} gate={vu.gate}" if vu else ""),
                    flush=True,
                )

    cols = [
        "mode",
        "template",
        "epochs",
        "n_seen",
        "best_logprob",
        "auroc",
        "tpr@5%fpr",
        "verdict",
        "seen_p",
        "seen_cc",
        "seen_gate",
        "unseen_p",
        "unseen_cc",
        "unseen_dir",
        "unseen_gate",
        "zerocot_best",
        "zerocot_auroc",
        "zerocot_accuracy_seen_cc",
        "zerocot_accuracy_unseen_cc",
        "zerocot_all_token_prob_seen_cc",
        "zerocot_all_token_prob_unseen_cc",
        "zerocot_all_token_prob_did_seen_cc",
        "zerocot_all_token_prob_did_unseen_cc",
        "reconstruct_auroc",
    ]
    print()
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(fmt(row.get(c, "")) for c in cols) + " |")
    print()
    for form, m in manifests.items():
        items_epochs = max(1, len(m.seen)) * max(1, m.epochs)
        print(
            f"fine-tuning cost ({form}, {m.config['template']}): {m.train_cpu_seconds / items_epochs * 100:.0f} CPU-s and "
            f"{m.seconds_per_100_items_epoch:.0f} wall-s per 100 items per epoch (filler ratio {m.config['filler_ratio']}, "
            f"max {m.config['max_length']} tokens, {m.train_tokens / max(1e-9, m.train_cpu_seconds):.1f} tokens per CPU-s)"
        )
    (args.out / "sweep.json").write_text(json.dumps(rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
