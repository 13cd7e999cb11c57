"""Seeded random sample of the symbolic GSM8K reference set, one variant per original item, for a grader.

    PYTHONPATH=src python bench/perturb_grade_sample.py --build-seed 77001 --sample-seed 88002 --n 200 \\
        --sheet bench/data/perturb_grading_77001_88002.jsonl

The 1,319 GSM8K test items are shuffled with ``random.Random(sample_seed)``; items are built in that
order (``build_reference_set(..., variants=1, seed=build_seed)``, the code path of
``contam perturb --benchmark gsm8k --variants 1 --seed B``, whose instances depend only on the item,
the seed and the index, so a subset build gives the full build's variants) until ``--n`` items have
a variant. That is a uniform random sample of ``n`` of the items the full build covers, one variant
each. Each question is printed alone with its stated answer. ``--sheet`` writes (or extends, keeping
rows already graded) a JSONL grading sheet: id, question, stated_answer, and ``my_answer``,
``verdict`` (wrong / ill-posed / inherited / implausible / correct; "inherited" = the variant
reproduces a flaw of the original item itself), ``reason`` for the grader to fill.
``--summary SHEET`` prints the verdict counts with exact 95 % Clopper-Pearson intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import random

from scipy.stats import binomtest

from contam.data import load_benchmark
from contam.perturb import build_reference_set


def sample(build_seed: int, sample_seed: int, n: int) -> list:
    """``n`` variants, one per item, items in the order of a seeded shuffle."""
    items = load_benchmark("gsm8k")
    order = list(items)
    random.Random(sample_seed).shuffle(order)
    out: list = []
    pos = 0
    while len(out) < n and pos < len(order):
        chunk = order[pos : pos + max(20, n - len(out) + 20)]
        pos += len(chunk)
        ref = build_reference_set(chunk, variants=1, seed=build_seed)
        by_item = {v.original_id: v for v in ref.variants}
        out.extend(by_item[it.id] for it in chunk if it.id in by_item)
    return out[:n]


def summary(sheet: str) -> None:
    """Verdict counts of a filled sheet with exact binomial 95 % intervals."""
    with open(sheet, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    graded = [r for r in rows if r.get("verdict")]
    n = len(graded)
    counts: dict[str, int] = {}
    for r in graded:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print(f"graded {n} of {len(rows)}")
    if not n:
        return
    for k in ("wrong", "ill-posed", "inherited", "implausible", "correct"):
        c = counts.get(k, 0)
        ci = binomtest(c, n).proportion_ci(0.95, method="exact")
        print(f"  {k:12s} {c:4d}  {c / n:6.1%}  95% CI {ci.low:.1%}-{ci.high:.1%}")
    bad = counts.get("wrong", 0) + counts.get("ill-posed", 0)
    ci = binomtest(bad, n).proportion_ci(0.95, method="exact")
    print(f"  wrong+ill-posed {bad} ({bad / n:.1%}, 95% CI {ci.low:.1%}-{ci.high:.1%})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-seed", type=int, default=0)
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--sheet", default="")
    ap.add_argument("--solutions", action="store_true")
    ap.add_argument("--summary", default="")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary)
        return
    picked = sample(a.build_seed, a.sample_seed, a.n)
    done: dict[str, dict] = {}
    if a.sheet and os.path.exists(a.sheet):
        with open(a.sheet, encoding="utf-8") as fh:
            done = {r["id"]: r for r in map(json.loads, fh)}
    rows = []
    for k, v in enumerate(picked, 1):
        print(f"[{k}] {v.variant_id}\nQ: {v.question}\nA: {v.answer}")
        if a.solutions:
            print("S: " + v.solution.replace("\n", " | "))
        print()
        blank = {"id": v.variant_id, "question": v.question, "stated_answer": v.answer}
        blank.update(my_answer="", verdict="", reason="")
        rows.append(done.get(v.variant_id) or blank)
    if a.sheet:
        tmp = a.sheet + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        os.replace(tmp, a.sheet)


if __name__ == "__main__":
    main()
