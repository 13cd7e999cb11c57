"""CPU per document of the semantic level: the ``learned`` default against the previous default (``nn``)
in the same run, on English text, and the multilingual route's cost (issue 30, target 5).

English: 600 GSM8K train questions (unique real text) scored against GSM8K test, nothing cached
for the documents (``CONTAM_EMBED_CACHE=0``; the benchmark is fitted before the clock starts).
Multilingual: 600 MSVAMP translations (9 languages), which the learned rule sends to
multilingual-e5-small, against their 400 English SVAMP sources. Each measurement is repeated
(``--repeat``, default 3) interleaved, and the median printed.

    python bench/semantic_cost.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
os.environ["CONTAM_EMBED_CACHE"] = "0"

from contam.data import Item, load_benchmark  # noqa: E402
from contam.scan.semantic import SemanticConfig, SemanticScanner  # noqa: E402


def cpu(sem: SemanticScanner, texts: list[str]) -> float:
    t = time.process_time()
    sem.score(texts)
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    bench = load_benchmark("gsm8k")
    english = [it.question for it in load_benchmark("gsm8k-train")[: args.docs]]
    data = ROOT / "data" / "independent" / "mathoctopus_msvamp"
    src = [json.loads(line) for line in (data / "sources.jsonl").read_text(encoding="utf-8").splitlines()]
    svamp = [Item(id=r["id"], question=r["text"], benchmark="svamp") for r in src]
    foreign = [json.loads(line)["text"] for line in (data / "variants.jsonl").read_text(encoding="utf-8").splitlines()][
        :: 3600 // args.docs
    ][: args.docs]

    nn = SemanticScanner(SemanticConfig(rule="nn")).fit(bench)
    learned = SemanticScanner(SemanticConfig()).fit(bench)
    multi = SemanticScanner(SemanticConfig()).fit(svamp)
    multi.score(foreign[:2])  # builds the multilingual view of the benchmark outside the clock
    base_nn = SemanticScanner(SemanticConfig(rule="nn")).fit(svamp)
    runs: dict[str, list[float]] = {
        "nn, English": [],
        "learned, English": [],
        "learned, non-English (e5)": [],
        "nn, non-English (MiniLM)": [],
    }
    for _ in range(args.repeat):
        runs["nn, English"].append(cpu(nn, english))
        runs["learned, English"].append(cpu(learned, english))
        runs["learned, non-English (e5)"].append(cpu(multi, foreign))
        runs["nn, non-English (MiniLM)"].append(cpu(base_nn, foreign))
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"{args.docs} documents per row, CPU-seconds (median of {args.repeat}), nothing cached for the documents")
    for k, v in med.items():
        print(f"  {k:28s} {v:7.2f} CPU-s = {1000 * v / args.docs:6.1f} ms per document  (runs: {', '.join(f'{x:.2f}' for x in runs[k])})")
    print(f"ratio learned / nn on English: {med['learned, English'] / med['nn, English']:.2f}x")
    print(
        f"ratio multilingual route / MiniLM on the same non-English text: {med['learned, non-English (e5)'] / med['nn, non-English (MiniLM)']:.2f}x"
    )


if __name__ == "__main__":
    main()
