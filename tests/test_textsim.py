"""Text similarity: ROUGE-L and token edit distance against independent implementations, on real items."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein
from rouge_score import rouge_scorer, tokenize

from contam.data import load_benchmark
from contam.probe.textsim import (
    exact_match,
    lexical_tokens,
    max_rouge_l,
    ngram_overlap,
    rouge_l,
    token_edit_distance,
    verbatim_match,
    word_prefix,
)


def _lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _rouge_l_by_hand(pred: str, ref: str, tok) -> float:  # type: ignore[no-untyped-def]
    p, r = tok(pred), tok(ref)
    if not p or not r:
        return 0.0
    lcs = _lcs(p, r)
    if lcs == 0:
        return 0.0
    prec, rec = lcs / len(p), lcs / len(r)
    return 2 * prec * rec / (prec + rec)


def _levenshtein_by_hand(a: list, b: list) -> int:  # type: ignore[type-arg]
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


@pytest.fixture(scope="module")
def gsm8k_pairs() -> list[tuple[str, str]]:
    items = load_benchmark("gsm8k")[:60]
    # a question against the next one, and against its own first half: low and high overlap
    return [(a.question, b.question) for a, b in itertools.pairwise(items)] + [
        (a.question[: len(a.question) // 2], a.question) for a in items[:30]
    ]


def test_rouge_l_matches_rouge_score_and_an_independent_lcs(gsm8k_pairs: list[tuple[str, str]]) -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    for pred, ref in gsm8k_pairs:
        ours = rouge_l(pred, ref)
        assert ours == pytest.approx(scorer.score(ref, pred)["rougeL"].fmeasure, abs=1e-12)
        assert ours == pytest.approx(_rouge_l_by_hand(pred, ref, lambda t: tokenize.tokenize(t, None)), abs=1e-12)


def test_rouge_l_code_mode_keeps_symbols() -> None:
    a, b = "x = f(a) + 1", "x = f(a) - 1"
    assert rouge_l(a, b) == 1.0  # the default tokenizer drops + and -
    assert rouge_l(a, b, code=True) == pytest.approx(_rouge_l_by_hand(a, b, lexical_tokens))
    assert rouge_l(a, b, code=True) < 1.0


def test_rouge_l_edge_cases() -> None:
    assert rouge_l("", "anything") == 0.0
    assert rouge_l("same words", "same words") == 1.0
    assert max_rouge_l([], "x") == 0.0
    assert max_rouge_l(["no", "the cat"], "the cat") == 1.0


def test_token_edit_distance_matches_rapidfuzz_and_dp_on_real_token_ids(gsm8k_pairs: list[tuple[str, str]]) -> None:
    vocab: dict[str, int] = {}
    for pred, ref in gsm8k_pairs[:40]:
        a = [vocab.setdefault(t, len(vocab)) for t in lexical_tokens(pred)]
        b = [vocab.setdefault(t, len(vocab)) for t in lexical_tokens(ref)]
        d = token_edit_distance(a, b)
        assert d == _levenshtein_by_hand(a, b)
        assert d == Levenshtein.distance(a, b)


def test_token_level_is_not_character_level() -> None:
    # one token replaced by a long one: 1 token edit, many character edits
    assert token_edit_distance(["the", "cat"], ["the", "hippopotamus"]) == 1
    assert Levenshtein.distance("the cat", "the hippopotamus") > 5


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=12), st.lists(st.integers(0, 5), max_size=12))
def test_token_edit_distance_property(a: list[int], b: list[int]) -> None:
    d = token_edit_distance(a, b)
    assert d == _levenshtein_by_hand(a, b)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))
    assert d == token_edit_distance(b, a)


def test_ngram_overlap() -> None:
    gold = "def f(x):\n    return x + 1\n"
    assert ngram_overlap(gold, gold) == 1.0
    assert ngram_overlap("", gold) == 0.0
    assert ngram_overlap("completely different text here now", gold) == 0.0
    # half of the gold's 5-grams come back
    toks = lexical_tokens("a b c d e f g h i j")
    assert len(toks) == 10
    assert ngram_overlap("a b c d e f g z z z", "a b c d e f g h i j") == pytest.approx(3 / 6)
    # clipped: repeating a matching gram does not count twice
    assert ngram_overlap("a b c d e a b c d e", "a b c d e x") == pytest.approx(1 / 2)


def test_exact_and_verbatim() -> None:
    assert exact_match("a  b\n", "a b")
    assert not exact_match("a b c", "a b")
    assert verbatim_match("a b c", "a b")
    assert not verbatim_match("x a b", "a b")
    assert not verbatim_match("anything", "   ")


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ab \n", max_size=40), st.floats(0.05, 0.95))
def test_word_prefix_splits_without_losing_text(text: str, frac: float) -> None:
    head, tail = word_prefix(text, frac)
    assert head + tail == text
    if len(text.split()) >= 2:
        assert head.split() and tail.split()
