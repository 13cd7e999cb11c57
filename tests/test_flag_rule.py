"""Issue 32.6: one rule for what a flag is (its score reached its own threshold), shown with the
rule that fired; ``--mode mask`` never leaves an answer that gives the item away."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from contam.data import Document, load_benchmark
from contam.data.formats import record_text
from contam.report.data_side import RenderOptions, render_scan
from contam.report.inputs import Result
from contam.report.model import Table
from contam.scan.decontaminate import decontaminate, load_scan
from contam.scan.hierarchy import Hierarchy, HierarchyConfig, Thresholds
from contam.scan.records import scan_records

# GSM8K test item 5 (answer 64), told in other words: the nn rule's rescue window at a 0.99 cosine threshold.
REPHRASED = (
    "Kylar is buying 16 glasses for his new flat. One glass costs $5, every second glass only 60% of the price. How much does he pay?"
)


@pytest.fixture(scope="module")
def items():
    return load_benchmark("gsm8k")[:40]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_flag_below_its_own_threshold_is_neither_listed_nor_counted(items, tmp_path) -> None:
    rows = [{"text": REPHRASED}] + [{"text": f"A note about gardening, number {i}: plants need water."} for i in range(5)]
    corpus = _write(tmp_path / "c.jsonl", rows)
    th = Thresholds(token=0.99, semantic=0.99, semantic_rule="nn")
    # The cascade flags the rephrasing through the nn rule's second stage: the flag carries the
    # threshold it passed (the second stage's), never the cosine threshold it did not reach.
    h = Hierarchy(HierarchyConfig(levels=("token", "semantic")).with_thresholds(th)).fit(items)
    raw = list(h.scan([Document(str(i), r["text"], line=i) for i, r in enumerate(rows, start=1)]))
    rescued = [f for r in raw for f in r.flags if f.level == "semantic"]
    assert rescued and all(f.score >= f.threshold and f.threshold < 0.99 for f in rescued)
    assert any(e.kind == "rule" and "second stage" in e.text for f in rescued for e in f.evidence)
    s = scan_records(corpus, items, tmp_path / "scan", levels=("token", "semantic"), thresholds=th)
    listed = [json.loads(x) for x in (tmp_path / "scan" / "flags.jsonl").read_text().splitlines()]
    assert s["flagged"] == len(listed) == 1 and s["flags_below_threshold"] == 0, s
    # A flag below its own threshold (as scans before the rule wrote them) is neither listed nor counted.
    raw = [replace(r, flags=tuple(replace(f, threshold=0.99) for f in r.flags)) for r in raw]
    # A scan folder written before the rule (its flags.jsonl holds the raw flag): not cleaned, not reported.
    old = tmp_path / "old"
    old.mkdir()
    (old / "flags.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in raw if r.contaminated))
    summary = {**s, "flagged": 1, "flags": 1}
    (old / "summary.json").write_text(json.dumps(summary))
    assert load_scan(old) == []
    sec = render_scan(Result("scan", str(old / "summary.json"), summary, folder=str(old)), RenderOptions())
    listed_rows = [b for b in sec.blocks if isinstance(b, Table) and b.caption.startswith("First")]
    assert not listed_rows, listed_rows  # no flagged-documents table: nothing passed


def _chat(*turns: str) -> dict:
    roles = ["user", "assistant"] * len(turns)
    return {"messages": [{"role": r, "content": t} for r, t in zip(roles, turns, strict=False)]}


def test_mask_never_leaves_the_answer(items, tmp_path) -> None:
    q, it = items[5].question, items[5]
    assert it.answer == "64"
    filler = [_chat(f"Tell me about tree number {i}.", "Trees grow slowly and need light.") for i in range(6)]
    corpus = _write(
        tmp_path / "chat.jsonl",
        [
            _chat("Please solve: " + q, "He pays $64 for the glasses."),  # 1: question and answer: masked together
            _chat("Please solve: " + q, "Let me think.", "So what was the total?", "It was 64 dollars."),  # 2: answer in a later exchange
            *filler,
        ],
    )
    s = scan_records(corpus, items, tmp_path / "scan")
    assert s["flagged"] == 2
    out = tmp_path / "clean.jsonl"
    d = decontaminate(corpus, out, scan=tmp_path / "scan", mode="mask")
    assert d["masked"] == 1 and d["dropped"] == 1, d
    first = json.loads(out.read_text().splitlines()[0])
    text = record_text(first, "chat").text
    assert "64" not in text and "Kylar" not in text, text  # neither the question nor its answer is left
    log = [json.loads(x) for x in Path(str(out) + ".log.jsonl").read_text().splitlines()]
    assert log[0]["action"] == "masked" and log[0]["masked_with_answer"] == [1], log[0]
    assert log[0]["rules"] and log[0]["rules"][0].startswith("token: ngram coverage"), log[0]
    assert log[1]["action"].startswith("dropped (the answer '64' of gsm8k/test/5 would remain"), log[1]
    # plain text: the question's n-grams are masked, the answer would stay: the record is dropped
    plain = _write(tmp_path / "plain.jsonl", [{"text": "Q: " + q + "\nA: the total is 64."}, {"text": "Nothing to see here at all."}])
    scan_records(plain, items, tmp_path / "pscan")
    p = decontaminate(plain, tmp_path / "p.jsonl", scan=tmp_path / "pscan", mode="mask")
    assert p["dropped"] == 1 and p["masked"] == 0 and "64" not in (tmp_path / "p.jsonl").read_text(), p


def test_mask_mode_cleans_a_scan_against_a_benchmark_file_without_the_file(items, tmp_path) -> None:
    # A scan keeps its items' answers (answers.json): a scan against a benchmark *file*, whose name
    # ("mybench") cannot be loaded again, is masked rather than dropped for want of the answers.
    bench = _write(tmp_path / "mybench.jsonl", [{"id": it.id, "question": it.question, "answer": it.answer} for it in items])
    q = items[7].question
    corpus = _write(
        tmp_path / "c.jsonl",
        [{"text": "Some notes on gardening and light.\n\n" + q + "\n\nWater the plants twice a week."}]
        + [{"text": f"A note about gardening, number {i}: plants need water."} for i in range(5)],
    )
    s = scan_records(corpus, [str(bench)], tmp_path / "scan")
    assert s["flagged"] == 1 and s["benchmarks"] == ["mybench"]
    bench.unlink()
    d = decontaminate(corpus, tmp_path / "clean.jsonl", scan=tmp_path / "scan", mode="mask")
    assert d["masked"] == 1 and d["dropped"] == 0, d
    first = json.loads((tmp_path / "clean.jsonl").read_text(encoding="utf-8").splitlines()[0])["text"]
    assert q not in first and first.startswith("Some notes on gardening") and first.endswith("twice a week.")
    # The answer check still holds: the same page with the item's answer after it is dropped.
    corpus2 = _write(tmp_path / "c2.jsonl", [{"text": "Notes.\n\n" + q + f"\n\nThe answer is {items[7].answer}."}])
    scan_records(corpus2, items, tmp_path / "scan2")
    d2 = decontaminate(corpus2, tmp_path / "clean2.jsonl", scan=tmp_path / "scan2", mode="mask")
    assert d2["dropped"] == 1, d2
