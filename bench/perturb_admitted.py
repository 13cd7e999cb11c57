"""Variants of the items a loosened guard admits, for a grader (issue 16, coverage step).

    PYTHONPATH=src python bench/perturb_admitted.py BEFORE.json AFTER.json --seed 91011 --n 2

BEFORE/AFTER map item id -> lift outcome ("ok" or a rejection reason), as written by
``bench/perturb_lifts.py``. Prints ``--n`` audited variants of every item that was rejected
before and is templated after, each question alone with its stated answer.
"""

from __future__ import annotations

import argparse
import json

from contam.data import load_benchmark
from contam.perturb import build_reference_set


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=2)
    a = ap.parse_args()
    with open(a.before, encoding="utf-8") as fh:
        before = json.load(fh)
    with open(a.after, encoding="utf-8") as fh:
        after = json.load(fh)
    new = {k for k, v in after.items() if v == "ok" and before.get(k) != "ok"}
    items = [it for it in load_benchmark("gsm8k") if it.id in new]
    ref = build_reference_set(items, variants=a.n, seed=a.seed)
    for k, v in enumerate(ref.variants, 1):
        print(f"[{k}] {v.variant_id}\nQ: {v.question}\nA: {v.answer}\n")


if __name__ == "__main__":
    main()
