"""The datatrove filter step drops exactly the documents ``contam scan`` flags."""

from __future__ import annotations

import json

import pytest

from contam.data.webtext import build_demo_corpus
from contam.scan.job import run_scan

pytest.importorskip("datatrove")


def test_contam_filter_in_a_datatrove_pipeline(tmp_path) -> None:
    from datatrove.data import Document as DtDocument

    from contam.integrations.datatrove import ContamFilter

    truth = build_demo_corpus(tmp_path / "c.jsonl", seed=4)
    rows = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = [DtDocument(text=r["text"], id=str(r.get("id", i + 1))) for i, r in enumerate(rows)]
    step = ContamFilter(["gsm8k", "humaneval", "mmlu"], batch_size=64)
    kept = list(step.run(iter(docs)))
    scan = run_scan(tmp_path / "c.jsonl", ["gsm8k", "humaneval", "mmlu"], tmp_path / "scan")
    flagged = {json.loads(x)["doc_id"] for x in (tmp_path / "scan" / "flags.jsonl").read_text().splitlines()}
    assert len(kept) == 200 - scan["flagged"] and scan["flagged"] >= len(truth) - 2 > 0  # the demo's light edits may hide one
    assert {d.id for d in docs} - {d.id for d in kept} == flagged
    tagger = ContamFilter(["gsm8k", "humaneval", "mmlu"], drop=False, batch_size=64)
    tagged = list(tagger.run(iter([DtDocument(text=r["text"], id=str(r.get("id", i + 1))) for i, r in enumerate(rows)])))
    assert len(tagged) == 200 and {d.id for d in tagged if "contam" in d.metadata} == flagged
