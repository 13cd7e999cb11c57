"""Calibrate and test the semantic level's defaults on real GPT-4 paraphrases (DCQ) vs real hard negatives.

    python bench/semantic_dcq.py                      # minilm and static, writes bench/out/semantic_dcq.json
    python bench/semantic_dcq.py --embedders minilm

Data (all real, none made by this project; see contam.scan.dcq):
  positives  DCQ GPT-4 word-level perturbations of 100 GSM8K train items / 164 HumanEval tasks
  negatives  GSM8K test questions (vs a 1,319-item GSM8K-train benchmark); the other half's
             HumanEval prompts and their perturbations; MMLU items of the other half (FP rate only)
Split by item id: ``calib`` half chooses (threshold, rescue threshold, rescue overlap) for the best
mean F1 over GSM8K and HumanEval; the ``test`` half (other items) measures them. GSM8K test
questions that are genuine twins of a train item (contam.scan.dcq.gsm8k_cross_split) are counted
apart, neither as false positives nor as true negatives.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CONTAM_PROGRESS", "0")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

TASKS = ("gsm8k", "humaneval", "mmlu")


def score_tasks(spec: str) -> dict[str, dict[str, np.ndarray]]:
    """Cosine to the nearest item and specifics overlap for every candidate of every task and split."""
    from contam.models.embed import load_embedder
    from contam.scan.dcq import dcq_task
    from contam.scan.semantic import SemanticConfig, SemanticScanner

    emb = load_embedder(spec)
    out: dict[str, dict[str, np.ndarray]] = {}
    for name in TASKS:
        for split in ("calib", "test"):
            t = dcq_task(name, split)
            # threshold 2 / rescue 0: the second stage runs on every candidate, so any setting can be replayed.
            sem = SemanticScanner(SemanticConfig(threshold=2.0, rescue_threshold=-1.0), emb).fit(t.items)
            s = sem.score(t.texts)
            ids = np.array([it.id for it in t.items])
            out[f"{name}/{split}"] = {
                "sim": s.sim,
                "overlap": np.asarray(s.overlap, dtype=np.float64),
                "words": np.asarray(s.words, dtype=np.float64),
                "y": np.array(t.labels),
                "right": ids[s.nearest[:, 0]] == np.array(t.truth),
                "cross": np.array([bool(c) for c in t.cross_split]),
                "kind": np.array(t.kinds),
            }
    return out


def decide(d: dict[str, np.ndarray], tau: float, low: float, rho: float, rw: float) -> np.ndarray:
    """The ``nn`` rule (contam.scan.semantic.SemanticScores.flagged) replayed at any setting."""
    ov, wo = np.nan_to_num(d["overlap"], nan=-1.0), np.nan_to_num(d["words"], nan=-1.0)
    return (d["sim"] >= tau) | ((d["sim"] >= low) & ((ov >= rho) | (wo >= rw)))


def prf(d: dict[str, np.ndarray], pred: np.ndarray) -> dict[str, float]:
    """P/R/F1 with cross-split twins set apart; a positive counts only when its nearest item is right."""
    y, keep = d["y"].astype(bool), ~d["cross"]
    tp = int((pred & y & d["right"]).sum())
    fn = int(y.sum()) - tp
    fp = int((pred & ~y & keep).sum())
    neg = int((~y & keep).sum())
    p = tp / (tp + fp) if tp + fp else (1.0 if not y.any() else 0.0)
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "tp": tp,
        "fn": fn,
        "fp": fp,
        "negatives": neg,
        "fpr": fp / neg if neg else 0.0,
        "precision": p,
        "recall": r,
        "f1": f1,
        "cross_split_flagged": int((pred & d["cross"]).sum()),
        "cross_split": int(d["cross"].sum()),
    }


def calibrate(data: dict[str, dict[str, np.ndarray]], rescue: bool) -> tuple[float, float, float, float]:
    """Grid search on the calib halves: best mean F1 over GSM8K and HumanEval, minus half the MMLU
    false-positive rate (no paraphrases there; its errors must cost too)."""
    taus = np.round(np.arange(0.70, 0.99, 0.01), 3)
    lows = np.round(np.arange(0.45, 0.85, 0.03), 3) if rescue else [2.0]
    rhos = np.round(np.arange(0.5, 1.01, 0.1), 2) if rescue else [2.0]
    rws = np.round(np.arange(0.3, 0.81, 0.05), 2) if rescue else [2.0]
    best, arg = -1.0, (2.0, 2.0, 2.0, 2.0)
    cal = [data[f"{n}/calib"] for n in ("gsm8k", "humaneval")]
    mm = data["mmlu/calib"]
    for tau in taus[::-1]:  # strictest first: ties keep the stricter setting
        for low in lows[::-1]:
            if rescue and low >= tau:
                continue
            for rho in rhos[::-1]:
                for rw in rws[::-1]:
                    f = np.mean([prf(d, decide(d, tau, low, rho, rw))["f1"] for d in cal])
                    f -= 0.5 * prf(mm, decide(mm, tau, low, rho, rw))["fpr"]
                    if f > best + 1e-9:
                        best, arg = f, (float(tau), float(low), float(rho), float(rw))
    return arg


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedders", default="minilm,static")
    ap.add_argument("--out", default="bench/out/semantic_dcq.json")
    args = ap.parse_args()
    from contam.scan.semantic import EMBEDDER_DEFAULTS

    report: dict[str, object] = {}
    for spec in args.embedders.split(","):
        t0 = time.perf_counter()
        data = score_tasks(spec)
        print(f"\n## {spec}  (scored in {time.perf_counter() - t0:.0f} s)")
        rows = {}
        for label, rescue in (("cosine only", False), ("cosine + specifics rescue", True)):
            tau, low, rho, rw = calibrate(data, rescue)
            rows[label] = {"calibrated": (tau, low, rho, rw)}
            print(f"\n{label}: calibrated on calib halves -> threshold {tau}, rescue {low}, specifics {rho}, words {rw}")
            for split in ("calib", "test"):
                for n in TASKS:
                    m = prf(data[f"{n}/{split}"], decide(data[f"{n}/{split}"], tau, low, rho, rw))
                    rows[label][f"{n}/{split}"] = m
                    print(
                        f"  {n:10s} {split:5s} P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f}  FP {m['fp']}/{m['negatives']} "
                        f"(FPR {m['fpr']:.4f})  cross-split twins flagged {m['cross_split_flagged']}/{m['cross_split']}"
                    )
        d = EMBEDDER_DEFAULTS.get(spec)
        if d is not None:
            rows["shipped defaults"] = {"calibrated": (d.threshold, d.rescue_threshold, d.rescue_overlap, d.rescue_words)}
            print(f"\nshipped defaults {d}:")
            for n in TASKS:
                m = prf(data[f"{n}/test"], decide(data[f"{n}/test"], d.threshold, d.rescue_threshold, d.rescue_overlap, d.rescue_words))
                rows["shipped defaults"][f"{n}/test"] = m
                print(
                    f"  {n:10s} test  P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f}  FP {m['fp']}/{m['negatives']} "
                    f"(FPR {m['fpr']:.4f})  cross-split twins flagged {m['cross_split_flagged']}/{m['cross_split']}"
                )
        # Distribution facts, for the docs.
        for n in ("gsm8k", "humaneval"):
            dd = data[f"{n}/test"]
            pos, neg = dd["sim"][dd["y"] == 1], dd["sim"][(dd["y"] == 0) & ~dd["cross"]]
            print(
                f"  {n} test cosine: positives min {pos.min():.3f} p5 {np.percentile(pos, 5):.3f} median {np.median(pos):.3f}; "
                f"negatives p95 {np.percentile(neg, 95):.3f} p99 {np.percentile(neg, 99):.3f} max {neg.max():.3f}"
            )
        report[spec] = rows
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
