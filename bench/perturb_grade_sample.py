"""Seeded random sample of the symbolic GSM8K reference set, one variant per original item, for a grader.

    PYTHONPATH=src python bench/perturb_grade_sample.py --build-seed 77001 --sample-seed 88002 --n 200 \\
        --sheet bench/data/perturb_grading_77001_88002.jsonl

The 1,319 GSM8K test items are shuffled with ``random.Random(sample_seed)``; items are built in that
order (``build_reference_set(..., variants=1, seed=build_seed)``, the code path of
``contam perturb --benchmark gsm8k --per-item 1 --seed B``, whose instances depend only on the item,
the seed and the index, so a subset build gives the full build's variants) until ``--n`` items have
a variant. That is a uniform random sample of ``n`` of the items the full build covers, one variant
each. Each question is printed alone with its stated answer. ``--sheet`` writes (or extends, keeping
rows already graded) a JSONL grading sheet: id, question, stated_answer, and ``my_answer``,
``verdict`` (wrong / ill-posed / inherited / implausible / correct; "inherited" = the variant
reproduces a flaw of the original item itself), ``reason`` for the grader to fill.
``--summary SHEET`` prints the verdict counts with exact 95 % Clopper-Pearson intervals.

``--key KEY`` also writes, to a separate file the grader does not read, what is needed to check a
verdict afterwards: the original question, solution and answer, the variant's rendered solution,
its slot values, and which slots the lifter froze and why (``frozen``). ``--only IDS.json``
restricts the sample to the item ids listed there (e.g. the items a change newly admitted, as
written by ``--newly BEFORE_DIR AFTER_DIR OUT.json``: items with at least 5 instances in the
``contam perturb`` output AFTER_DIR but not in BEFORE_DIR).

    PYTHONPATH=src python bench/perturb_grade_sample.py --newly ref_before/ ref_after/ new_ids.json
    PYTHONPATH=src python bench/perturb_grade_sample.py --build-seed 88001 --sample-seed 88004 --n 60 \
        --only new_ids.json --sheet bench/data/perturb_grading_h16c_admitted.jsonl \
        --key bench/data/perturb_grading_h16c_admitted.key.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random

from scipy.stats import binomtest

from contam.data import load_benchmark
from contam.perturb import build_reference_set


def sample(build_seed: int, sample_seed: int, n: int, only: set[str] | None = None, templates: dict | None = None) -> list:
    """``n`` variants, one per item, items in the order of a seeded shuffle (of ``only`` when given).
    ``templates`` (item id -> template) is filled for the key file."""
    items = load_benchmark("gsm8k")
    order = [it for it in items if only is None or it.id in only]
    random.Random(sample_seed).shuffle(order)
    out: list = []
    pos = 0
    while len(out) < n and pos < len(order):
        chunk = order[pos : pos + max(20, n - len(out) + 20)]
        pos += len(chunk)
        ref = build_reference_set(chunk, variants=1, seed=build_seed)
        if templates is not None:
            templates.update({t.item_id: t for t in ref.templates.values()})
        by_item = {v.original_id: v for v in ref.variants}
        out.extend(by_item[it.id] for it in chunk if it.id in by_item)
    return out[:n]


def newly(before: str, after: str, out: str) -> None:
    """Item ids with at least 5 instances in ``after``'s variants.jsonl but not in ``before``'s."""

    def covered(d: str) -> set[str]:
        counts: dict[str, int] = {}
        with open(os.path.join(d, "variants.jsonl"), encoding="utf-8") as fh:
            for line in fh:
                k = json.loads(line)["original_id"]
                counts[k] = counts.get(k, 0) + 1
        return {k for k, c in counts.items() if c >= 5}

    ids = sorted(covered(after) - covered(before), key=lambda x: int(x.rsplit("/", 1)[1]))
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(ids, fh, indent=0)
    print(f"{len(ids)} items newly covered")


def key_row(v, item, t) -> dict:
    """What checking a verdict needs, kept out of the grader's sheet."""
    frozen = {s.value: (s.source or "frozen") for s in t.slots if s.role == "frozen"} if t is not None else {}
    return {
        "id": v.variant_id,
        "original_question": item.question,
        "original_solution": item.solution,
        "original_answer": v.original_answer,
        "variant_solution": v.solution,
        "stated_answer": v.answer,
        "values": v.values,
        "frozen": frozen,
        "template_id": v.template_id,
        "attempts": v.metadata.get("attempts"),
        "tier": v.metadata.get("tier"),
    }


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
    ap.add_argument("--key", default="", help="write the answer key (original, program values, frozen slots) here")
    ap.add_argument("--only", default="", help="JSON list of item ids to sample from")
    ap.add_argument("--newly", nargs=3, metavar=("BEFORE_DIR", "AFTER_DIR", "OUT"), help="write the ids newly covered")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary)
        return
    if a.newly:
        newly(*a.newly)
        return
    only = None
    if a.only:
        with open(a.only, encoding="utf-8") as fh:
            only = set(json.load(fh))
    templates: dict = {}
    picked = sample(a.build_seed, a.sample_seed, a.n, only, templates)
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
        _write(a.sheet, rows)
    if a.key:
        items = {it.id: it for it in load_benchmark("gsm8k")}
        _write(a.key, [key_row(v, items[v.original_id], templates.get(v.original_id)) for v in picked])


def _write(path: str, rows: list[dict]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
