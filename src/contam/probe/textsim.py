"""Text similarity measures the generation probes share: ROUGE-L, token edit distance, n-gram overlap.

* ROUGE-L comes from Google's ``rouge-score`` package (the implementation the guided-prompting
  and reconstruction papers report), so numbers are comparable with theirs. Its default
  tokenizer lowercases and keeps ``[a-z0-9]`` runs only; ``code=True`` swaps in a lexical
  tokenizer that keeps identifiers, numbers and punctuation, because for source code the
  symbols carry the content.
* Edit distance is Levenshtein over *token* sequences (ids or strings), computed by rapidfuzz,
  which accepts any sequence of hashables: what CDD (Dong et al. 2024) measures.
* N-gram overlap counts consecutive n-grams of lexical tokens (paper 002's 5-gram overlap).

>>> round(rouge_l("the cat sat on the mat", "the cat on the mat"), 3)
0.909
>>> token_edit_distance([1, 2, 3], [1, 3, 4])
2
>>> ngram_overlap("a b c d e f", "a b c d e g", n=5)
0.5
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

#: Lexical tokens of code or prose: identifiers/words, numbers, then any single other symbol.
_LEX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|[^\sA-Za-z0-9_]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def lexical_tokens(text: str) -> list[str]:
    """Identifiers, numbers and single symbols, in order (case kept).

    >>> lexical_tokens("def f(x): return x+1")
    ['def', 'f', '(', 'x', ')', ':', 'return', 'x', '+', '1']
    """
    return _LEX.findall(text)


class _LexicalTokenizer:
    """A ``rouge-score`` tokenizer object (it only needs ``tokenize``)."""

    def tokenize(self, text: str) -> list[str]:
        return lexical_tokens(text)


@lru_cache(maxsize=2)
def _scorer(code: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=_LexicalTokenizer() if code else None)


def rouge_l(prediction: str, gold: str, *, code: bool = False) -> float:
    """ROUGE-L F-measure of ``prediction`` against ``gold`` (0 when either is empty).

    >>> rouge_l("x = 1", "x = 1", code=True)
    1.0
    """
    if not prediction.strip() or not gold.strip():
        return 0.0
    return float(_scorer(code).score(gold, prediction)["rougeL"].fmeasure)


def max_rouge_l(predictions: Sequence[str], gold: str, *, code: bool = False) -> float:
    """The best ROUGE-L F over several samples (0 for no samples)."""
    return max((rouge_l(p, gold, code=code) for p in predictions), default=0.0)


def token_edit_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Levenshtein distance between two token sequences (insert, delete, substitute cost 1).

    >>> token_edit_distance(["de", "f"], ["de", "f", "("])
    1
    """
    return int(Levenshtein.distance(list(a), list(b)))


def ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """Multiset of consecutive ``n``-grams."""
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def ngram_overlap(prediction: str, gold: str, n: int = 5) -> float:
    """Share of the gold text's consecutive ``n``-grams that the prediction reproduces
    (multiset counts, each clipped to how often the prediction has it).

    Measured on the gold side so a short output cannot score high by saying little: it is
    "how much of the gold text came back". A gold text shorter than ``n`` tokens is compared as
    one whole-sequence gram.

    >>> ngram_overlap("return a + b", "return a + b", n=5)
    1.0
    """
    gold_tokens, pred = lexical_tokens(gold), lexical_tokens(prediction)
    if not gold_tokens:
        return 0.0
    k = min(n, len(gold_tokens))
    gold_grams, pred_grams = ngrams(gold_tokens, k), ngrams(pred, k)
    total = sum(gold_grams.values())
    hit = sum(min(c, pred_grams[g]) for g, c in gold_grams.items())
    return hit / total


def squash(text: str) -> str:
    """Whitespace-insensitive form used for exact and verbatim comparisons."""
    return _SPACE.sub(" ", text).strip()


def exact_match(prediction: str, gold: str) -> bool:
    """Equal after collapsing whitespace.

    >>> exact_match(" a  b\\n", "a b")
    True
    """
    return bool(gold.strip()) and squash(prediction) == squash(gold)


def verbatim_match(prediction: str, gold: str) -> bool:
    """The gold text comes back word for word at the start of the prediction (whitespace
    collapsed); text the model adds after it does not matter.

    >>> verbatim_match("a b c and more", "a  b c")
    True
    """
    want = squash(gold)
    return bool(want) and squash(prediction).startswith(want)


def word_prefix(text: str, fraction: float) -> tuple[str, str]:
    """Split ``text`` after the first ``fraction`` of its whitespace-separated words, keeping the
    original spacing of both halves (at least one word each side when there are two or more).

    >>> word_prefix("one two three four five", 0.4)
    ('one two', ' three four five')
    """
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    if len(spans) < 2:
        return text, ""
    k = min(max(1, round(len(spans) * fraction)), len(spans) - 1)
    cut = spans[k - 1][1]
    return text[:cut], text[cut:]
