"""Draw a seeded random sample of symbolic GSM8K variants (one per item) for a human grader.

    PYTHONPATH=src python bench/perturb_sample.py --build-seed 1001 --sample-seed 2024 --n 120 > sample.txt

Prints each variant question alone with its stated answer (and, with --solutions, the worked
solution), numbered, so a reader can solve each question and mark it ok / wrong / ill-posed.
"""

from __future__ import annotations

import argparse
import random

from contam.data import load_benchmark
from contam.perturb import build_reference_set


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-seed", type=int, required=True)
    ap.add_argument("--sample-seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--solutions", action="store_true")
    a = ap.parse_args()
    items = load_benchmark("gsm8k")
    picked = random.Random(a.sample_seed).sample(items, min(len(items), 3 * a.n))
    ref = build_reference_set(picked, variants=1, seed=a.build_seed)
    by_item = {v.original_id: v for v in ref.variants}
    shown = 0
    for it in picked:
        v = by_item.get(it.id)
        if v is None:
            continue
        shown += 1
        print(f"[{shown}] {v.variant_id}\nQ: {v.question}\nA: {v.answer}")
        if a.solutions:
            print("S: " + v.solution.replace("\n", " | "))
        print()
        if shown >= a.n:
            break


if __name__ == "__main__":
    main()
