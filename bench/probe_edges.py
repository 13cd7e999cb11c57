"""Issue 17 measurements on the controlled-contamination harness (CPU only).

Three parts, each resumable (trained models are reused, probe records are checkpointed):

``mink``    Min-K% on a model without a BOS token: AUROC of seen vs unseen items with the first
            text token scored (after the backend's ``<|im_start|>`` start token) and without it
            (as the reference code scores ``input_ids[1:]``), on a model fine-tuned on GSM8K
            test items [0, N) verbatim (text template) for E epochs; unseen = the next N items.
``paired``  ``contam probe paired`` on the same model, seen and unseen sets against their
            isomorphic variants (``contam.perturb`` seed 0), with the reference models of
            ``--ref-models`` (default: the base checkpoint ``hf:smollm2``, float32, and the
            embedded SmolLM2 GGUF; ``gemma3-270m`` is a third-party reference, Gemma 3 270M
            base, other tokenizer). Each row gives the verdict in the default unit (log-prob per
            character) and d's figures per token for comparison. ``--paired-on zerocot`` runs
            it on the zerocot-template model instead of training the text-template one.
``zerocot`` the Zero-CoT Probe on a model fine-tuned with ``--template zerocot`` (the probe's own
            prompt answered with ``The final answer is: \\[ \\boxed{ANSWER} \\]``), seen vs unseen.
``cliff``   the performance cliff (``contam probe cliff``'s ``CliffProbe``: the standard CoT question
            on each original and ``--cliff-k`` of its audited variants) on the same zerocot model.

    flock /tmp/cpu.lock nice -n 5 timeout 1500 .venv/bin/python bench/probe_edges.py --parts mink,paired,zerocot
    # bench/RESULTS.md, issue 17 (30 items: 18 seen / 17 unseen pairs; Gemma 3 270M as the third-party reference)
    ... bench/probe_edges.py --parts zerocot --n 30 --zc-epochs 8 --out /tmp/pe30
    ... bench/probe_edges.py --parts paired --n 30 --epochs 3 --ref-models gemma3-270m,hf:smollm2 --out /tmp/pe30
    ... bench/probe_edges.py --parts paired --paired-on zerocot --n 30 --zc-epochs 8 --ref-models gemma3-270m,hf:smollm2 --out /tmp/pe30
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CONTAM_PROGRESS", "0")
ROOT = Path(__file__).resolve().parent


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def train(out: Path, template: str, n: int, epochs: int, max_length: int, filler: float) -> Path:
    from contam.probe.contaminate import ContaminateConfig, Contaminator

    cfg = ContaminateConfig(
        benchmark="gsm8k",
        subset=(0, n),
        mode="verbatim",
        epochs=epochs,
        filler_ratio=filler,
        lr=1e-4,
        batch_size=4,
        max_length=max_length,
        seed=0,
        template=template,
    )
    t, c = time.perf_counter(), cpu_s()
    m = Contaminator(cfg).run("smollm2", out)
    print(
        f"[train] {template}: {len(m.seen)} items x {epochs} epochs, {m.train_tokens} tokens, {m.train_cpu_seconds:.0f} CPU-s "
        f"(this call {time.perf_counter() - t:.0f} s wall, {cpu_s() - c:.0f} CPU-s)",
        flush=True,
    )
    return out


def sets(n: int, k: int = 1) -> tuple[list, list, dict]:
    from contam.data import load_benchmark
    from contam.perturb import make_reference_set
    from contam.probe.reference import variants_as_reference

    items = load_benchmark("gsm8k")
    seen, unseen = items[:n], items[n : 2 * n]
    variants = variants_as_reference(make_reference_set(seen + unseen, variants=k, seed=0))
    return seen, unseen, variants


def auroc(pos: list[float], neg: list[float]) -> float:
    from contam.stats.tests import auc_delong

    return auc_delong([x for x in pos if not math.isnan(x)], [x for x in neg if not math.isnan(x)])[0]


def part_mink(model_dir: Path, n: int, report: dict) -> None:
    from contam.models import load
    from contam.probe.logprob import adds_bos, drop_first, min_k_plus_plus, min_k_prob

    seen, unseen, _ = sets(n)
    out = {}
    for spec in (f"hf:{model_dir}", "smollm2"):
        lm = load(spec, cache=False)
        t, c = time.perf_counter(), cpu_s()
        scores = lm.score([("", it.text) for it in seen + unseen], vocab_stats=True)
        row = {
            "adds_bos": adds_bos(lm),
            "first_token_logprob_mean": float(sum(s.logprobs[0] for s in scores) / len(scores)),
            "first_token_in_lowest_20pct": float(
                sum(s.logprobs[0] <= sorted(s.logprobs)[max(1, int(len(s.logprobs) * 0.2)) - 1] for s in scores) / len(scores)
            ),
        }
        for label, f in (("keep", lambda s: s), ("drop", drop_first)):
            sc = [f(s) for s in scores]
            mk = [min_k_prob(s.logprobs, 0.2) for s in sc]
            mpp = [min_k_plus_plus(s, 0.2) for s in sc]
            row[f"mink_auroc_{label}"] = auroc(mk[:n], mk[n:])
            row[f"minkpp_auroc_{label}"] = auroc(mpp[:n], mpp[n:])
        row["score_s"], row["score_cpu_s"] = round(time.perf_counter() - t, 1), round(cpu_s() - c, 1)
        out[spec if spec == "smollm2" else "contaminated"] = row
        print(f"[mink] {spec}: {json.dumps(row)}", flush=True)
    report["mink"] = out


def part_paired(model_dir: Path, n: int, report: dict, out_dir: Path, ref_specs: list[str], tag: str = "") -> None:
    from contam.models import load
    from contam.outputs import JsonlCheckpoint
    from contam.probe.paired import PairedConfig, PairedProbe

    seen, unseen, variants = sets(n)
    m = load(f"hf:{model_dir}", cache=True)
    rows = {}
    for ref_spec in ref_specs:
        r = load(ref_spec, cache=True)
        for name, its in (("seen", seen), ("unseen", unseen)):
            t, c = time.perf_counter(), cpu_s()
            with JsonlCheckpoint(out_dir / f"paired{tag}-{ref_spec.replace(':', '_')}-{name}.jsonl", key="key") as ck:
                res = PairedProbe(PairedConfig()).run(m, its, variants=variants, ref_model=r, checkpoint=ck)
            tok = PairedProbe(PairedConfig(unit="token")).analyze(res.items)
            row = {
                "unit": res.config["unit"],
                "n": res.n_pairs,
                "p": res.test.p_value,
                "shift": res.test.effect,
                "cc": res.contamination_confidence,
                "flagged": res.flagged,
                "note": res.note,
                "n_positive": res.test.details.get("n_positive"),
                "per_token": {
                    "n": tok.n_pairs,
                    "p": tok.test.p_value,
                    "shift": tok.test.effect,
                    "n_positive": tok.test.details.get("n_positive"),
                },
                "s": round(time.perf_counter() - t, 1),
                "cpu_s": round(cpu_s() - c, 1),
            }
            rows[f"{ref_spec}/{name}"] = row
            print(f"[paired] ref {ref_spec} {name}: {json.dumps(row)}", flush=True)
    report[f"paired{tag}"] = rows


def part_zerocot(model_dir: Path, n: int, report: dict, out_dir: Path, answer_tokens: int) -> None:
    from contam.models import load
    from contam.outputs import JsonlCheckpoint
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe

    seen, unseen, variants = sets(n)
    m = load(f"hf:{model_dir}", cache=True)
    probe = ZeroCoTProbe(ZeroCoTConfig(max_cot_tokens=1, max_answer_tokens=answer_tokens, truncation=(), n_resamples=10_000))
    rows = {}
    for name, its in (("seen", seen), ("unseen", unseen)):
        t, c = time.perf_counter(), cpu_s()
        with JsonlCheckpoint(out_dir / f"zerocot-{name}.jsonl", key="key") as ck:
            res = probe.run(m, its, ck, variants=variants)
        acc = res.metric("accuracy")
        row = {
            "n_pairs": res.n_pairs,
            "acc_orig": acc.original if acc else None,
            "acc_ref": acc.reference if acc else None,
            "p": acc.test.p_value if acc else None,
            "cc": res.contamination_confidence,
            "gate": int(bool(acc and acc.gap > 0 and acc.test.p_value < 0.05)),
            "all_token_prob": [g.original for g in res.metrics if g.metric == "all_token_prob"]
            + [g.reference for g in res.metrics if g.metric == "all_token_prob"],
            "s": round(time.perf_counter() - t, 1),
            "cpu_s": round(cpu_s() - c, 1),
        }
        rows[name] = row
        print(f"[zerocot] {name}: {json.dumps(row)}", flush=True)
    report["zerocot"] = rows


def part_cliff(model_dir: Path, n: int, report: dict, out_dir: Path, k: int, max_new_tokens: int) -> None:
    from contam.models import load
    from contam.outputs import JsonlCheckpoint
    from contam.probe.cliff import CliffConfig, CliffProbe

    seen, unseen, variants = sets(n, k)
    m = load(f"hf:{model_dir}", cache=True)
    probe = CliffProbe(CliffConfig(k=k, max_new_tokens=max_new_tokens))
    rows = {}
    for name, its in (("seen", seen), ("unseen", unseen)):
        t, c = time.perf_counter(), cpu_s()
        with JsonlCheckpoint(out_dir / f"cliff-k{k}-{name}.jsonl", key="key") as ck:
            res = probe.run(m, its, variants, ck)
        row = {
            "n_items": res.n_items,
            "k": res.k,
            "acc_orig": res.acc_original,
            "acc_variants": res.acc_variants,
            "acc_per_variant": res.acc_per_variant,
            "delta": res.delta,
            "p": res.test.p_value,
            "cc": res.calibration.confidence,
            "flagged": res.flagged,
            "note": res.note,
            "s": round(time.perf_counter() - t, 1),
            "cpu_s": round(cpu_s() - c, 1),
        }
        rows[name] = row
        print(f"[cliff] {name}: {json.dumps(row, default=str)}", flush=True)
    report["cliff"] = rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="mink,paired,zerocot")
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=3, help="exposures of the text-template model (mink, paired)")
    ap.add_argument("--zc-epochs", type=int, default=6, help="exposures of the zerocot-template model")
    ap.add_argument("--answer-tokens", type=int, default=12)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ref-models", default="hf:smollm2,smollm2", help="comma-separated reference model specs of the paired part")
    ap.add_argument("--paired-on", choices=("text", "zerocot"), default="text", help="which fine-tuned model the paired part audits")
    ap.add_argument("--cliff-k", type=int, default=5, help="variants per item of the cliff part")
    ap.add_argument("--cliff-tokens", type=int, default=48, help="new tokens per cliff answer (the zerocot model answers at once)")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "issue17")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    parts = args.parts.split(",")
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict = {"n": args.n, "epochs": args.epochs, "zc_epochs": args.zc_epochs}
    # zerocot first: on a shared machine a timeout then cuts the cheaper parts
    refs = [r for r in args.ref_models.split(",") if r.strip()]
    if "zerocot" in parts or "cliff" in parts or ("paired" in parts and args.paired_on == "zerocot"):
        zc_dir = train(args.out / f"zerocot-x{args.zc_epochs}", "zerocot", args.n, args.zc_epochs, 192, 0.0)
        if "zerocot" in parts:
            part_zerocot(zc_dir, args.n, report, args.out, args.answer_tokens)
        if "cliff" in parts:
            part_cliff(zc_dir, args.n, report, args.out, args.cliff_k, args.cliff_tokens)
        if "paired" in parts and args.paired_on == "zerocot":
            part_paired(zc_dir, args.n, report, args.out, refs, tag="-zerocot")
    if "mink" in parts or ("paired" in parts and args.paired_on == "text"):
        text_dir = train(args.out / f"text-x{args.epochs}", "text", args.n, args.epochs, 192, 0.5)
        if "paired" in parts and args.paired_on == "text":
            part_paired(text_dir, args.n, report, args.out, refs)
        if "mink" in parts:
            part_mink(text_dir, args.n, report)
    (args.out / f"report-{'-'.join(parts)}-{args.paired_on}.json").write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
