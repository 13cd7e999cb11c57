"""Genuine near duplicates between GSM8K's own splits are shipped, attached to the items and named
in a flag's evidence (issue 15 item 3): a scan that meets one reports a split overlap of the
benchmark itself, counted apart from detector errors."""

from __future__ import annotations

from contam.data import Document, load_benchmark
from contam.data.registry import gsm8k_cross_split_pairs
from contam.models.embed import load_embedder
from contam.scan.dcq import gsm8k_cross_split
from contam.scan.semantic import SemanticConfig, SemanticScanner


def test_shipped_pairs_are_what_the_rule_finds_on_the_shipped_splits() -> None:
    assert gsm8k_cross_split_pairs() == gsm8k_cross_split()


def test_twins_name_each_other() -> None:
    pairs = gsm8k_cross_split_pairs()
    assert pairs, "the rule finds at least one twin in the shipped GSM8K splits"
    test = {it.id: it for it in load_benchmark("gsm8k")}
    train = {it.id: it for it in load_benchmark("gsm8k-train")}
    for t, r in pairs.items():
        assert test[t].metadata["near_duplicate_in"] == r
        assert train[r].metadata["near_duplicate_in"] == t
    others = [it for it in test.values() if it.id not in pairs]
    assert not any("near_duplicate_in" in it.metadata for it in others)


def test_a_flag_on_a_twin_says_so_in_its_evidence() -> None:
    pairs = gsm8k_cross_split_pairs()
    test_id, train_id = next(iter(pairs.items()))
    bench = load_benchmark("gsm8k")
    twin_item = next(it for it in bench if it.id == test_id)
    items = [twin_item, *bench[:40]]
    train_twin = next(it for it in load_benchmark("gsm8k-train") if it.id == train_id)
    sem = SemanticScanner(SemanticConfig(), load_embedder("minilm")).fit(items)
    results = list(sem.scan([Document(id="d0", text=train_twin.text), Document(id="d1", text=bench[41].question)]))
    flags = [f for r in results for f in r.flags]
    hit = [f for f in flags if f.item_id == test_id]
    assert hit, "the train twin (question and solution) of a test item is flagged by the semantic level"
    kinds = {e.kind: e.text for e in hit[0].evidence}
    assert "cross_split" in kinds and train_id in kinds["cross_split"]
    assert not any(e.kind == "cross_split" for f in flags if f.item_id != test_id for e in f.evidence)
