"""Lift every GSM8K test item once (no sampling) and write item id -> "ok" or the rejection reason.

    PYTHONPATH=src python bench/perturb_lifts.py out.json

Prints templated count, rejection reasons by count and slots frozen by each guard (about 12 s).
"""

from __future__ import annotations

import collections
import json
import sys

from contam.data import load_benchmark
from contam.perturb.records import Rejection
from contam.perturb.symbolic import lift


def main() -> None:
    out: dict[str, str] = {}
    rejected: collections.Counter[str] = collections.Counter()
    frozen: collections.Counter[str] = collections.Counter()
    for item in load_benchmark("gsm8k"):
        t = lift(item)
        if isinstance(t, Rejection):
            rejected[t.reason] += 1
            out[item.id] = t.reason
            continue
        out[item.id] = "ok"
        frozen.update(s.source[6:] for s in t.slots if s.source.startswith("guard:"))
    templated = sum(v == "ok" for v in out.values())
    print(json.dumps({"templated": templated, "rejections": rejected.most_common(), "frozen_by_guard": frozen.most_common()}))
    with open(sys.argv[1], "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
