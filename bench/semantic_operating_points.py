"""The shipped semantic combiner's operating points on the test halves: what a stricter probability
threshold buys in false flags and costs in recall (issue 30, targets 3 and 4 pull against each other).

Reads the feature dumps of the last ``python bench/semantic_independent.py`` run (test halves and the
GSM8K-train corpus, ``bench/results/*.npz``) and re-applies the shipped combiners at each threshold; no
embedding is redone, so it takes seconds.

    python bench/semantic_independent.py --no-baseline   # writes the dumps (20 min, cache warm)
    python bench/semantic_operating_points.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))

from contam.scan.combiner import FEATURES, learned_scores, load_combiners, model_name  # noqa: E402
from semantic_independent import group_table  # noqa: E402

WATCH = (
    "mathcheck_gsm rephrase:mathcheck_distractor_insertion",
    "mathcheck_gsm rephrase:mathcheck_problem_understanding",
    "mmlu_sr rephrase:mmlusr_question_only",
)


def probabilities(d: np.lib.npyio.NpzFile) -> np.ndarray:
    """Each dumped row's probability under the shipped combiner that judged it (its route; on the
    English route the code model when its nearest item is code), 0 where the shortlist dropped it,
    1 for a near copy or a document keeping its item's options (the learned rule flags both at any threshold)."""
    combiners = load_combiners()
    x = d["features"][:, : len(FEATURES)]
    code = d["code"] if "code" in d.files else np.zeros(len(x), dtype=bool)
    p = np.zeros(len(x))
    routes = (
        (model_name("minilm", False), ~d["multi"] & ~code),
        (model_name("minilm", True), ~d["multi"] & code),
        ("e5-multilingual", d["multi"]),
    )
    for spec, rows in routes:
        rows = rows & ~np.isnan(x[:, 0])
        if rows.any():
            p[rows] = combiners[spec].probability(x[rows])
    return learned_scores(p, x, ~d["multi"], d["options"] if "options" in d.files else None)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--dumps", type=Path, default=ROOT / "results", help="folder of the .npz dumps")
    ap.add_argument("--thresholds", default="0.5,0.7,0.8,0.9,0.95")
    args = ap.parse_args()
    test = np.load(args.dumps / "semantic_independent_test.npz")
    corpus_path = args.dumps / "semantic_independent_corpus.npz"
    corpus = np.load(corpus_path) if corpus_path.is_file() else None
    p = probabilities(test)
    pc = probabilities(corpus) if corpus is not None else None
    head = f"{'threshold':>9} {'MMLU FP of neg':>15} {'corpus FP':>10} {'mean F1':>8} {'min F1':>7} {'groups < .85':>13}  " + "  ".join(
        w.split(":")[-1][:22] for w in WATCH
    )
    print(head)
    for th in (float(t) for t in args.thresholds.split(",")):
        res = group_table(test["set"], test["kind"], test["label"], p >= th, test["right"], test["twin"])
        f1 = [r["F1"] for r in res.values() if r["pos"]]
        mmlu = res.get("mmlu mmlu-other:en", {"FP": 0, "neg": 0})
        cfp = "-" if pc is None or corpus is None else str(int(((pc >= th) & ~corpus["twin"]).sum()))
        watch = "  ".join(f"{res[w]['F1']:>22.3f}" if w in res else f"{'-':>22}" for w in WATCH)
        print(
            f"{th:>9.2f} {mmlu['FP']:>7} of {mmlu['neg']:<5} {cfp:>10} {np.mean(f1):>8.3f} {min(f1):>7.3f} {sum(f < 0.85 for f in f1):>13}  {watch}"
        )


if __name__ == "__main__":
    main()
