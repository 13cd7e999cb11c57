"""Summarise ``bench/results/semantic_independent.json`` into the per-language / per-kind table of
docs/semantic.md and bench/RESULTS.md (pooled counts over the groups of each row; the defaults and the
same-run ``nn`` baseline side by side).

    python bench/semantic_independent_table.py
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "semantic_independent.json"


def row_of(group: str) -> str | None:
    name, kind = group.split(" ", 1)
    k, _, sub = kind.partition(":")
    if k == "benchmark_in":
        return f"benchmark in {sub}, English documents ({name})"
    if name == "xcopa_gmt":
        return f"one-sentence COPA item, English round trip through {sub.removeprefix('gmt_')} (XCOPA's Google MT; never fitted)"
    if k == "translation" and name == "xcopa":
        return f"one-sentence COPA item translated: {sub} (XCOPA, human; calib half in the multilingual fit)"
    if name == "humaneval_xl":
        return f"HumanEval ported to {k.removeprefix('xl_')}, docstring translated (HumanEval-XL; never fitted)"
    if k == "translation" and name == "xquad_questions":
        return f"Wikipedia question alone translated: {sub} (XQuAD, professional; never fitted; split by article)"
    if k == "translation" and name == "xquad":
        return f"Wikipedia paragraph translated: {sub} (XQuAD, professional; never fitted)"
    if k == "translation":
        return f"translation, {sub} ({name})"
    if k == "nl_translation":
        return f"HumanEval prompt, docstring translated: {sub} (mHumanEval-Expert)"
    if k == "code_translation":
        return f"code port to another language ({name})"
    if name in ("gsm8k", "humaneval") and k == "dcq":
        return f"close rephrasing: DCQ GPT-4 perturbations, {name}"
    if name == "recode":
        return "HumanEval prompt rephrased (ReCode)"
    if name == "recode_mbpp":
        return "MBPP prompt rephrased (ReCode)"
    if name == "mathcheck_gsm":
        return f"GSM8K far rephrasing ({sub.removeprefix('mathcheck_')}, MathCheck)"
    if name in ("benbench_math", "benbench_gsm8k"):
        genre = "MATH rephrasing vs other MATH problems" if name == "benbench_math" else "GSM8K close rephrasing"
        what = "question and solution" if sub.endswith("_with_solution") else "question only"
        return f"{genre} ({what}, BenBench, LLM; never fitted)"
    if name == "perteval_mmlu":
        what = "question only" if sub.endswith("_question_only") else "question and options, moved and relabelled"
        return f"MMLU paraphrase vs other MMLU questions ({what}, PertEval, GPT-4; calib half in the prose fit)"
    if name == "mmlu_sr":
        return f"MMLU symbol-replaced ({sub.removeprefix('mmlusr_')}, MMLU-SR)"
    if name == "mmlu":
        return "MMLU other-half items (false-positive rate)"
    if name == "mbpp_vs_humaneval":
        return "MBPP prompts vs HumanEval (false-positive rate)"
    if name == "gsm8k" and k == "gsm8k-test":
        return "GSM8K test questions vs a GSM8K-train benchmark (false-positive rate)"
    if name == "humaneval":
        return "other HumanEval tasks and their perturbations (false-positive rate)"
    return None


def pooled(tab: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])  # tp, fn, fp, neg
    for g, m in tab.items():
        r = row_of(g)
        if r is None:
            continue
        pos = m["pos"]
        tp = round(m["R"] * pos) if pos else 0
        a = acc[r]
        a[0] += tp
        a[1] += pos - tp
        a[2] += m["FP"]
        a[3] += m["neg"]
    out = {}
    for r, (tp, fn, fp, neg) in acc.items():
        p = tp / (tp + fp) if tp + fp else 1.0
        rc = tp / (tp + fn) if tp + fn else float("nan")
        out[r] = {"P": p, "R": rc, "F1": 2 * p * rc / (p + rc) if tp else 0.0, "pos": int(tp + fn), "FP": fp, "neg": int(neg)}
    return out


def main() -> None:
    res = json.loads(RESULTS.read_text(encoding="utf-8"))
    new, old = pooled(res["defaults"]), pooled(res.get("baseline_nn", {}))
    print("| row | positives / negatives | defaults P / R / F1 | FP | previous default (nn) F1 |\n|---|---|---|---|---|")
    for r in sorted(new):
        m, b = new[r], old.get(r, {})
        if m["pos"]:
            line = f"| {r} | {m['pos']} / {m['neg']} | {m['P']:.3f} / {m['R']:.3f} / **{m['F1']:.3f}** | {m['FP']:.0f} | {b.get('F1', float('nan')):.3f} |"
        else:
            line = f"| {r} | 0 / {m['neg']} | — | {m['FP']:.0f} ({m['FP'] / max(1, m['neg']):.1%}) | {b.get('FP', float('nan')):.0f} |"
        print(line)
    for name, tab in res.get("gsm8k_train_corpus", {}).items():
        for m in tab.values():
            print(f"\nGSM8K train (test half) as a clean corpus against GSM8K test, {name}: {m['FP']} flags of {m['neg']}", file=sys.stdout)
    for name, tab in res.get("svamp_translations_corpus", {}).items():
        fp, neg = sum(m["FP"] for m in tab.values()), sum(m["neg"] for m in tab.values())
        print(f"\nSVAMP translations (test half, 9 languages) as a clean corpus against GSM8K test, {name}: {fp} flags of {neg}")


if __name__ == "__main__":
    main()
