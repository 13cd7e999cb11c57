"""Effect of corpus-side stop-grams and reject patterns on the token level (issue 15 item 5).

    python bench/stopgrams.py

Set-up (constructed from real texts; say so next to every figure): the benchmark is GSM8K test,
where 10 items carry the standard Apache-2.0 licence header in front of the question (as a
benchmark file scraped from repositories may); the corpus is 2,000 GSM8K **train** records
(clean), 30 % of them with the same header (as data and code files often have), plus 100 GSM8K
**test** items copied verbatim (contaminated, no header). Benchmark-side IDF cannot help: the
header is rare in the benchmark (10 of 1,319 items) but common in the corpus. Reported: false
positives among the clean records, recall on the copies, for the default token level, reject
patterns only, and stop-grams learned from a 500-document corpus sample.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import replace

os.environ.setdefault("CONTAM_PROGRESS", "0")

HEADER = (
    'Copyright 2024 The Authors. Licensed under the Apache License, Version 2.0 (the "License"); you may not use this '
    "file except in compliance with the License. You may obtain a copy of the License at "
    "http://www.apache.org/licenses/LICENSE-2.0 Unless required by applicable law or agreed to in writing, software "
    'distributed under the License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, '
    "either express or implied. See the License for the specific language governing permissions and limitations under the License.\n"
)


def main() -> int:
    from contam.data import Document, load_benchmark
    from contam.scan.ngram import NGramConfig, NGramScanner
    from contam.scan.stopgrams import DEFAULT_REJECT_PATTERNS

    rng = random.Random(0)
    test = load_benchmark("gsm8k")
    items = [replace(it, question=HEADER + it.question) if i < 10 else it for i, it in enumerate(test)]
    train = load_benchmark("gsm8k-train")[:2000]
    docs = [Document(f"clean{i}", (HEADER if rng.random() < 0.3 else "") + it.text) for i, it in enumerate(train)]
    docs += [Document(f"leak{i}", test[100 + i].text) for i in range(100)]
    rng.shuffle(docs)
    sample = [d.text for d in docs[:500]]
    reject = (
        *DEFAULT_REJECT_PATTERNS,
        r"copyright \d{4}[^.]*\.",
        r"you may obtain a copy of the license at \S+",
        r"unless required by applicable law.*?limitations under the license\.",
    )
    rows = [
        ("default (benchmark IDF only)", NGramConfig(), None),
        ("reject patterns", NGramConfig(reject_patterns=reject), None),
        ("stop-grams (df >= 5 % of a 500-doc sample)", NGramConfig(stopgram_df=0.05), sample),
        ("both", NGramConfig(stopgram_df=0.05, reject_patterns=reject), sample),
    ]
    print("| setting | stop-grams | FP (of 2,000 clean) | recall (of 100 copies) | fit s | scan s |")
    print("|---|---|---|---|---|---|")
    for name, cfg, smp in rows:
        t0 = time.perf_counter()
        sc = NGramScanner(cfg).fit(items, corpus_sample=smp)
        t1 = time.perf_counter()
        res = list(sc.scan(docs))
        t2 = time.perf_counter()
        fp = sum(r.contaminated for r in res if r.doc_id.startswith("clean"))
        tp = sum(r.contaminated for r in res if r.doc_id.startswith("leak"))
        n_stop = len(getattr(sc.index, "stopgrams", ()))
        print(f"| {name} | {n_stop} | {fp} | {tp}/100 | {t1 - t0:.1f} | {t2 - t1:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
