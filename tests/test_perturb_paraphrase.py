"""Paraphrase acceptance with the real embedded embedder, and a short run of the real embedded model."""

from __future__ import annotations

import importlib.util

import pytest

from contam.data import load_benchmark
from contam.models import load_embedder
from contam.perturb.paraphrase import ParaphraseConfig, Paraphraser, numbers_of


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    return load_embedder("minilm")


def test_numbers_multiset() -> None:
    assert numbers_of("She eats three of 16 eggs") == numbers_of("Of 16 eggs, she eats 3")
    assert numbers_of("She eats three of 16 eggs") != numbers_of("She eats four of 16 eggs")


def test_judge_accepts_faithful_and_rejects_the_rest(embedder) -> None:  # type: ignore[no-untyped-def]
    q = load_benchmark("gsm8k-train")[0].question  # Natalia's clips
    faithful = (
        "In April Natalia sold clips to 48 of her friends, and in May she sold half as many clips. "
        "How many clips did Natalia sell in April and May altogether?"
    )
    changed = faithful.replace("48", "36")
    unrelated = "The train leaves the station at noon and arrives in the city two hours later."
    verdicts = {c: r for c, _, r in Paraphraser(ParaphraseConfig(floor=0.8)).judge(q, [faithful, changed, unrelated], embedder)}
    assert verdicts[faithful] == ""
    assert verdicts[changed] == "numbers"  # similar text, different numbers: the answer would change
    assert verdicts[unrelated] == "similarity"


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_real_model_run_keeps_only_accepted(embedder) -> None:  # type: ignore[no-untyped-def]
    from contam.models import load

    model = load("smollm2")
    items = load_benchmark("gsm8k-train")[:1]
    para = Paraphraser(ParaphraseConfig(k=1, tries=2, max_new_tokens=48, floor=0.8))
    got = para.run(model, items, embedder)
    # The 135M model rarely paraphrases faithfully: whatever it keeps must pass every check,
    # and every dropped candidate is counted with its reason.
    assert len(got) + sum(para.rejected.values()) >= 1
    for v in got:
        assert v.metadata["similarity"] >= 0.8 and numbers_of(v.question) == numbers_of(items[0].question)
        assert v.metadata["similarity_metric"].startswith("cosine:minilm")


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_scenario_paraphraser_uses_the_reference_sets_rule(embedder) -> None:  # type: ignore[no-untyped-def]
    """The S2 scenario's LLM paraphraser accepts exactly what the reference sets' judge accepts."""
    from contam.models import load
    from contam.scan.paraphrase import LLMParaphraser

    items = load_benchmark("gsm8k")[:3]
    p = LLMParaphraser(load("smollm2"), embedder=embedder, floor=0.8, max_new_tokens=96)
    got = p.paraphrase_items(items, seed=0)
    assert p.kept + p.rejected == len(items) and p.kept == len(got)
    rule = Paraphraser(ParaphraseConfig(floor=0.8))
    for it in items:
        if it.id in got:
            text, label = got[it.id]
            question = text.split("\n")[0]
            assert label == "llm-paraphrase:smollm2"
            assert rule.judge(it.question, [question], embedder)[0][2] == ""
            assert numbers_of(question) == numbers_of(it.question)
    # A changed number is refused by the one rule, whichever paraphraser asks.
    q = items[0].question
    assert p.judge.judge(q, [q.replace("16", "61")], embedder)[0][2] in ("numbers", "similarity")
