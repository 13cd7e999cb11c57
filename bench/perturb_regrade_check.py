"""What the current code does with the variants an independent reader graded (issue 16).

For each graded row (``id`` = ``<item>#s<seed>.<index>``, with the reader's ``verdict``), rebuild
the item with the current code exactly as the grading sheet was built
(``build_reference_set([item], variants=1, seed=<seed>)``, see ``bench/perturb_grade_sample.py``)
and say whether the graded variant is emitted unchanged, changed, or the item is now rejected
(with the reason). Prints one table per verdict; ``--json`` writes the rows.

    PYTHONPATH=src python bench/perturb_regrade_check.py bench/data/perturb_graded_h16c_fresh200_A.jsonl \\
        bench/data/perturb_graded_h16c_fresh200_B.jsonl bench/data/perturb_graded_h16c_admitted_C.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter

from contam.data import load_benchmark
from contam.perturb import build_reference_set


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graded", nargs="+", help="graded sheets (JSONL with id, question, verdict)")
    ap.add_argument("--json", help="write one row per graded variant here")
    a = ap.parse_args()
    items = {it.id: it for it in load_benchmark("gsm8k")}
    rows = []
    for path in a.graded:
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                m = re.fullmatch(r"(.+)#s(\d+)\.(.+)", r["id"])
                assert m, r["id"]
                item, seed = items[m.group(1)], int(m.group(2))
                ref = build_reference_set([item], variants=1, seed=seed, description="rebuilding")
                now = next((v for v in ref.variants if v.variant_id == r["id"]), None)
                if ref.rejections:
                    status = "rejected:" + ref.rejections[0].reason
                elif now is None:
                    status = "other_variant"
                else:
                    status = "unchanged" if now.question == r["question"] else "changed"
                rows.append({"id": r["id"], "verdict": r["verdict"], "now": status})
    table = Counter((r["verdict"], r["now"]) for r in rows)
    for (verdict, now), n in sorted(table.items()):
        print(f"{verdict:12s} {now:45s} {n}")
    for r in rows:
        if r["verdict"] not in ("correct",) and r["now"] != "unchanged":
            print(" ", r["id"], r["verdict"], "->", r["now"])
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
