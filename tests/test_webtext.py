"""The offline web-like filler text and the injection ground truth."""

from __future__ import annotations

import json
import random

from contam.data import load_benchmark
from contam.data.webtext import build_corpus, build_demo_corpus, inject, leak_text, light_edit, paragraphs


def test_paragraphs_are_real_prose() -> None:
    pool = paragraphs()
    assert len(pool) > 5000
    assert len(set(pool)) == len(pool)
    assert all(60 <= len(p) <= 1500 for p in pool)
    # Real sources: GitHub issue text and docstrings of the standard library are both in there.
    joined = "\n".join(pool)
    assert "Traceback" in joined or "traceback" in joined
    assert "Return" in joined


def test_corpus_is_seeded_and_ground_truth_is_exact() -> None:
    items = load_benchmark("gsm8k")[:4] + load_benchmark("humaneval")[:2]
    a_docs, a_truth = build_corpus(60, seed=3, items=items)
    b_docs, b_truth = build_corpus(60, seed=3, items=items)
    assert a_docs == b_docs and a_truth == b_truth
    assert build_corpus(60, seed=4, items=items)[0] != a_docs
    by_id = {it.id: it for it in items}
    for t in a_truth:
        text = a_docs[t.line - 1]["text"]
        leak = text[t.span[0] : t.span[1]]
        if t.edit == "verbatim":
            assert leak == leak_text(by_id[t.item_id], t.part)
        else:
            assert leak.lower() != leak_text(by_id[t.item_id], t.part).lower() or leak.isupper() or leak.islower()


def test_light_edit_changes_surface_only() -> None:
    q = load_benchmark("gsm8k")[0].question
    edited = light_edit(q, random.Random(0))
    assert edited != q
    assert len(edited.split()) >= len(q.split()) - 2


def test_inject_places_text_between_paragraphs() -> None:
    item = load_benchmark("mmlu")[0]
    text, span = inject("para one\n\npara two", item, random.Random(1), part="item")
    assert text[span[0] : span[1]] == leak_text(item, "item")
    assert "para one" in text and "para two" in text
    assert "Answer: " + item.answer in text


def test_demo_corpus(tmp_path) -> None:
    path = tmp_path / "demo.jsonl"
    truth = build_demo_corpus(path, seed=0)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 200 and len(truth) == 12
    assert {t.benchmark for t in truth} == {"gsm8k", "humaneval", "mmlu"}
    assert {t.edit for t in truth} == {"verbatim", "light"}
    for t in truth:
        assert json.loads(lines[t.line - 1])["id"] == t.doc_id
