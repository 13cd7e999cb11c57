"""The offline web-like filler text and the injection ground truth."""

from __future__ import annotations

import itertools
import json
import random
import re

from contam.data import load_benchmark
from contam.data.webtext import SYNONYMS, build_corpus, build_demo_corpus, inject, leak_text, light_edit, paragraphs


def _words(text: str) -> list[str]:
    # light_edit drops every comma, so "$80,000" comes back as "$80000".
    return re.findall(r"[a-z0-9]+", text.lower().replace(",", ""))


def _substitutions(original: str, edited: str) -> list[tuple[str, str]] | None:
    """The fewest (at most two) SYNONYMS swaps of words of ``original`` that give ``edited`` once
    case, whitespace and punctuation are ignored, or None when no such swaps explain the edit."""
    words = original.split(" ")
    candidates = [i for i, w in enumerate(words) if SYNONYMS.get(w.lower(), w.lower()) != w.lower()]
    target = _words(edited)
    for k in range(3):
        for chosen in itertools.combinations(candidates, k):
            swapped = [SYNONYMS[w.lower()] if i in chosen else w for i, w in enumerate(words)]
            if _words(" ".join(swapped)) == target:
                return [(words[i].lower(), SYNONYMS[words[i].lower()]) for i in chosen]
    return None


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
            # A light edit: the same words up to case, spacing, punctuation and at most two synonym swaps.
            assert leak.isupper() or leak.islower()
            swaps = _substitutions(leak_text(by_id[t.item_id], t.part), leak)
            assert swaps is not None and len(swaps) <= 2, (leak, swaps)


def test_light_edit_changes_surface_only() -> None:
    q = load_benchmark("gsm8k")[0].question
    edited = light_edit(q, random.Random(0))
    assert edited != q
    assert len(edited.split()) >= len(q.split()) - 2
    # Every edit keeps the words and numbers, up to case, spacing, punctuation and 1-2 synonym swaps.
    n_swapped = 0
    for i, item in enumerate(load_benchmark("gsm8k")[:40]):
        text = item.question
        candidates = [w for w in text.split(" ") if w.lower() in SYNONYMS and SYNONYMS[w.lower()] != w.lower()]
        edited = light_edit(text, random.Random(i))
        swaps = _substitutions(text, edited)
        assert swaps is not None, (text, edited)
        assert len(swaps) == min(2, len(candidates)), (text, edited, swaps)
        assert edited in (edited.lower(), edited.upper()) and "," not in edited
        n_swapped += len(swaps)
    assert n_swapped > 40
    # the check itself tells a light edit from unrelated text
    assert _substitutions(q, "an entirely different sentence about cats") is None


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
