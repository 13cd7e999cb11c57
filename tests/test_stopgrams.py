"""Corpus-side boilerplate on the token level: stop-grams from a corpus sample and reject patterns,
on real GSM8K items with a real licence header (the Apache-2.0 text shipped with the DCQ data)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from contam.data import Document, load_benchmark
from contam.errors import ConfigError
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.stopgrams import DEFAULT_REJECT_PATTERNS

HEADER = (
    'Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance '
    "with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0 Unless "
    "required by applicable law or agreed to in writing, software distributed under the License is distributed on an "
    '"AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n'
)


@pytest.fixture(scope="module")
def setup() -> tuple[list, list[Document]]:
    test = load_benchmark("gsm8k")[:300]
    items = [replace(it, question=HEADER + it.question) if i < 5 else it for i, it in enumerate(test)]
    rng = random.Random(0)
    docs = [
        Document(f"clean{i}", (HEADER if rng.random() < 0.3 else "") + it.question)
        for i, it in enumerate(load_benchmark("gsm8k-train")[:300])
    ]
    docs += [Document(f"leak{i}", test[50 + i].text) for i in range(20)] + [Document("leak-header", items[2].text)]
    return items, docs


def _run(items: list, docs: list[Document], cfg: NGramConfig, sample: list[str] | None) -> tuple[int, int]:
    res = list(NGramScanner(cfg).fit(items, corpus_sample=sample).scan(docs))
    fp = sum(r.contaminated for r in res if r.doc_id.startswith("clean"))
    tp = sum(r.contaminated for r in res if r.doc_id.startswith("leak"))
    return fp, tp


def test_header_common_in_corpus_causes_false_positives_that_stopgrams_remove(setup: tuple[list, list[Document]]) -> None:
    items, docs = setup
    fp, tp = _run(items, docs, NGramConfig(), None)
    assert fp > 20 and tp == 21  # the problem is real: benchmark-side IDF cannot see corpus boilerplate
    sample = [d.text for d in docs[:150]]
    fp2, tp2 = _run(items, docs, NGramConfig(stopgram_df=0.05), sample)
    # Every copy is still found, the header item's too: its question words carry the weight now.
    assert fp2 == 0 and tp2 == 21


def test_reject_patterns_and_bad_pattern(setup: tuple[list, list[Document]]) -> None:
    items, docs = setup
    pats = (*DEFAULT_REJECT_PATTERNS, r"you may obtain a copy of the license at \S+", r"unless required by applicable law.*?implied\.")
    fp, tp = _run(items, docs, NGramConfig(reject_patterns=pats), None)
    assert fp == 0 and tp >= 20
    with pytest.raises(ConfigError, match="reject pattern"):
        NGramConfig(reject_patterns=("(unclosed",))
    with pytest.raises(ConfigError, match="stopgram_df"):
        NGramConfig(stopgram_df=1.5)


def test_stopgrams_leave_clean_runs_unchanged() -> None:
    """Without boilerplate in the corpus nothing is dropped and results are identical."""
    items = load_benchmark("gsm8k")[:200]
    docs = [Document(f"d{i}", it.text) for i, it in enumerate(load_benchmark("gsm8k-train")[:200])] + [Document("x", items[9].text)]
    base = NGramScanner(NGramConfig()).fit(items)
    sc = NGramScanner(NGramConfig(stopgram_df=0.05)).fit(items, corpus_sample=[d.text for d in docs])
    assert len(getattr(sc.index, "stopgrams", ())) == 0
    assert [r.to_dict() for r in base.scan(docs)] == [r.to_dict() for r in sc.scan(docs)]


def test_cli_stopgrams_option(tmp_path, setup: tuple[list, list[Document]]) -> None:  # type: ignore[no-untyped-def]
    """`contam scan --stopgrams 0.05` learns the header from the corpus and stops flagging it;
    a bad `--reject` regex is one clear error line, exit 2."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    items, docs = setup
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps({"id": it.id, "question": it.question, "answer": it.solution}) + "\n" for it in items))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in docs))
    exe = str(Path(sys.executable).with_name("contam"))
    env = {**os.environ, "CONTAM_PROGRESS": "0"}

    def flagged(*extra: str) -> set[str]:
        p = subprocess.run(
            [exe, "scan", "-b", str(bench), "--corpus", str(corpus), "--out", str(tmp_path / "o"), *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        return {json.loads(x)["doc_id"] for x in (tmp_path / "o" / "flags.jsonl").read_text().splitlines()}

    plain, learned = flagged(), flagged("--stopgrams", "0.05")
    assert sum(d.startswith("clean") for d in plain) > 20
    assert not any(d.startswith("clean") for d in learned) and sum(d.startswith("leak") for d in learned) == 21
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["config"]["stopgram_df"] == 0.05
    p = subprocess.run(
        [exe, "scan", "-b", str(bench), "--corpus", str(corpus), "--out", str(tmp_path / "o2"), "--reject", "(bad"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr and "reject pattern" in p.stderr, p.stderr
