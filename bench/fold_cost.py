"""Cost of the fold's exact path in the prefilter (issue 15 item 7): a 19 MB slice of the L1
bench's web-like corpus (``bench/l1_scan.py``'s builder, 20 MB, seed 0) prefiltered as it is
(4% of its documents hold a zero-width space or another character the fold changes, so they are
folded and cut again) and with those characters removed; medians of 7 interleaved runs, one
process.

    PYTHONPATH=src python bench/fold_cost.py SLICE.jsonl   (built by bench/l1_scan.py's build())
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from contam.data import load_benchmark
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.prefilter import find_fold_changers


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    changers = set(find_fold_changers())
    clean = ["".join(c for c in t if c not in changers) if any(c in changers for c in t) else t for t in texts]
    odd = sum(a != b for a, b in zip(texts, clean, strict=True))
    items = [it for b in ["gsm8k", "humaneval", "mmlu"] for it in load_benchmark(b)]
    pf = NGramScanner(NGramConfig()).fit(items).prefilter
    pf.candidates(texts[:500])
    pf.candidates(clean[:500])
    a, b = [], []
    for _ in range(7):
        t = time.process_time()
        pf.candidates(texts)
        a.append(time.process_time() - t)
        t = time.process_time()
        pf.candidates(clean)
        b.append(time.process_time() - t)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(json.dumps({"documents": len(texts), "with_fold_changers": odd, "mb": round(mb, 1), "cpu_s_as_is": round(statistics.median(a), 3),
                      "cpu_s_without_them": round(statistics.median(b), 3)}))  # fmt: skip


if __name__ == "__main__":
    main()
