"""The English route's two models: a document whose nearest benchmark item is code is judged by the
code model (``minilm-code``), any other by the prose one (``minilm``), on the real embedded MiniLM."""

from __future__ import annotations

from contam.data import load_benchmark
from contam.scan.combiner import load_combiners
from contam.scan.semantic import SemanticConfig, SemanticScanner
from contam.scan.textmatch import looks_like_code


def test_the_shipped_benchmarks_fall_on_the_expected_side() -> None:
    assert all(looks_like_code(it.question) for it in load_benchmark("humaneval"))
    assert not any(looks_like_code(it.question) for it in load_benchmark("gsm8k"))
    assert not any(looks_like_code(it.question) for it in load_benchmark("mmlu"))


def test_both_models_ship_and_differ() -> None:
    c = load_combiners()
    assert {"minilm", "minilm-code", "e5-multilingual"} <= set(c)
    assert c["minilm"].trees != c["minilm-code"].trees


def test_a_flag_names_the_model_that_judged_it() -> None:
    he = load_benchmark("humaneval")[:20]
    gsm = load_benchmark("gsm8k")[:20]
    sem = SemanticScanner(SemanticConfig(shortlist=False)).fit([*he, *gsm])
    docs = [he[3].question, gsm[5].question]  # verbatim copies: flagged by either model
    s = sem.score(docs)
    assert s.flagged(0.5, "learned").all()
    texts = [" ".join(e.text for e in sem.flag(f"d{i}", i, s, text=t).evidence if e.kind == "combiner") for i, t in enumerate(docs)]
    assert "(minilm-code," in texts[0]
    assert "(minilm," in texts[1]
