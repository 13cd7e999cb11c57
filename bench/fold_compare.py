"""Same results on clean text (issue 15 item 7): scan one real corpus with the token level and
write ``flags.jsonl``; run it once with the sources before the fold and once after, then ``cmp``.

The corpus: all 7,473 GSM8K train items (question + worked solution; real text with real near
duplicates of GSM8K test items), 20,000 web-like paragraphs (GitHub issues, stdlib docstrings,
licence texts, with their curly quotes, dashes and accented names) and the built-in demo
corpus (real GSM8K / HumanEval / MMLU items injected into web text), scanned against GSM8K test +
HumanEval + MMLU, JSONL fast path (raw-byte prefilter) on one core.

    PYTHONPATH=OLD/src python bench/fold_compare.py OUT_OLD
    PYTHONPATH=NEW/src python bench/fold_compare.py OUT_NEW
    cmp OUT_OLD/flags.jsonl OUT_NEW/flags.jsonl
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

from contam.data import load_benchmark
from contam.data.webtext import build_demo_corpus, paragraphs
from contam.scan.job import run_scan


def build(path: Path) -> int:
    rng = random.Random(15)
    pool = paragraphs()
    with tempfile.TemporaryDirectory() as d:
        demo = Path(d) / "demo.jsonl"
        build_demo_corpus(str(demo), seed=0)
        demo_lines = demo.read_text(encoding="utf-8").splitlines()
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for it in load_benchmark("gsm8k-train"):
            fh.write(json.dumps({"id": it.id, "text": it.question + "\n" + it.solution}, ensure_ascii=False) + "\n")
            n += 1
        for i in range(20000):
            fh.write(json.dumps({"id": f"web-{i}", "text": "\n\n".join(rng.sample(pool, 3))}, ensure_ascii=False) + "\n")
            n += 1
        for line in demo_lines:
            rec = json.loads(line)
            rec["id"] = f"demo-{rec.get('id', n)}"
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
    return n


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    corpus = out / "corpus.jsonl"
    docs = build(corpus)
    t = time.perf_counter()
    s = run_scan(corpus, ["gsm8k", "humaneval", "mmlu"], out / "scan", workers=1)
    print(json.dumps({"documents": docs, "bytes": s["bytes"], "flagged": s["flagged"], "flags": s["flags"], "seconds": round(time.perf_counter() - t, 2),
                      "non_ascii_docs": sum(1 for x in corpus.read_text(encoding="utf-8").splitlines() if not x.isascii())}))  # fmt: skip


if __name__ == "__main__":
    main()
