"""Which graded variants the current constraints would now refuse (issue 16, plausible ranges).

    PYTHONPATH=src python bench/perturb_graded_caps.py [implausible ill-posed ...]

Reads the independent gradings ``bench/data/perturb_graded_*.jsonl``, keeps the variants with the
given verdicts (default: implausible, ill-posed), lifts the original GSM8K test item with the
current code, reads the variant question's numbers back into the template's free slots, re-runs
the program and prints the first constraint the variant breaks (``None``: it would still be made).
"""

from __future__ import annotations

import glob
import json
import sys
from fractions import Fraction

from contam.data import load_benchmark
from contam.perturb import arith, lift
from contam.perturb.instantiate import check_constraints, compiled
from contam.perturb.mentions import find_mentions
from contam.perturb.records import Template


def main() -> None:
    verdicts = sys.argv[1:] or ["implausible", "ill-posed"]
    gsm = load_benchmark("gsm8k")
    refused = total = 0
    for path in sorted(glob.glob("bench/data/perturb_graded_*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        for r in rows:
            if r["verdict"] not in verdicts:
                continue
            total += 1
            i = int(r["id"].split("/")[2].split("#")[0])
            t = lift(gsm[i])
            if not isinstance(t, Template):
                print(i, r["verdict"], "lift rejected:", t.reason)
                refused += 1
                continue
            ms = find_mentions(r["question"])
            if len(ms) != len(t.mentions):
                print(i, r["verdict"], "numbers do not read back")
                continue
            chosen = {s.id: Fraction(ms[s.mentions[0]].value) for s in t.slots if s.role == "free"}
            try:
                values, results = compiled(t).run(chosen)
            except arith.ArithError as e:
                print(i, r["verdict"], "program fails:", e)
                continue
            why = check_constraints(t, values, results)
            refused += why is not None
            print(i, r["verdict"], "->", why, "|", r["reason"][:80])
    print(json.dumps({"graded": total, "refused_now": refused}))


if __name__ == "__main__":
    main()
