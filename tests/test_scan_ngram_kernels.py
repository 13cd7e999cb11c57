"""The exact scorer's helpers against the plain loops they replace (same values, same order)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam.data import Document, load_benchmark
from contam.scan.hashing import window_hashes, word_hashes
from contam.scan.ngram import NGramConfig, NGramScanner, _ArraySpans, _SpanSource
from contam.scan.ngram_index import match_runs


@pytest.fixture(scope="module")
def scanner():
    return NGramScanner(NGramConfig()).fit(load_benchmark("gsm8k") + load_benchmark("mmlu"))


def _texts(n: int, seed: int) -> list[str]:
    """Benchmark questions cut, shuffled and glued into filler: many anchor hits, some twice."""
    rng = random.Random(seed)
    qs = [it.question for it in load_benchmark("gsm8k")[:60] + load_benchmark("mmlu")[:60]]
    out = []
    for _ in range(n):
        parts = [rng.choice(qs) for _ in range(rng.randrange(1, 4))]
        parts = [p[rng.randrange(0, 20) :] if rng.random() < 0.3 else p for p in parts]
        out.append(" filler words here. ".join(parts))
    return out


def test_anchor_hits_match_the_per_hit_loop(scanner) -> None:
    idx = scanner.index
    wh, _, _, doc = word_hashes(_texts(40, 1))
    h, first = window_hashes(wh, doc, scanner.config.min_words)
    # The loop anchor_hits ran before it was vectorised.
    lo = np.searchsorted(idx._anchor_sorted, h).tolist()
    hi = np.searchsorted(idx._anchor_sorted, h, side="right").tolist()
    expected = [
        (int(idx._anchor_part[j]), int(f - idx._anchor_off[j]), int(f))
        for a, b, f in zip(lo, hi, first.tolist(), strict=True)
        for j in idx._anchor_order[a:b].tolist()
    ]
    assert len(expected) > 40
    assert list(zip(*(a.tolist() for a in idx.anchor_hits(h, first)), strict=True)) == expected
    parts, starts, at = idx.anchor_hits(h[:0], first[:0])
    assert len(parts) == len(starts) == len(at) == 0


def test_short_key_is_the_part_words_as_bytes(scanner) -> None:
    idx = scanner.index
    p = next(iter(idx.short_words))
    assert idx.short_key(p) == idx.short_words[p].tobytes()
    assert idx.short_key(p) is idx.short_key(p)  # computed once


def _runs_reference(hit_u, hit_pos, matched_u, n):
    distinct = np.unique(matched_u)
    starts = [s for u, s in zip(hit_u.tolist(), hit_pos.tolist(), strict=True) if u in set(distinct.tolist())]
    runs: list[tuple[int, int]] = []
    for s in starts:
        if runs and s <= runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], s + n - 1)
        else:
            runs.append((s, s + n - 1))
    return distinct.tolist(), [a for a, _ in runs], [b for _, b in runs], len(starts)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6)), max_size=40),
    st.lists(st.integers(0, 9), min_size=1, max_size=12),
    st.integers(2, 8),
)
def test_match_runs_matches_the_plain_loop(hits, matched, n) -> None:
    pos = np.cumsum([g for _, g in hits]).astype(np.int64)  # ascending, distinct
    hit_u = np.array([u for u, _ in hits], dtype=np.int64)
    matched_u = np.array(matched, dtype=np.int64)
    distinct, a, b, k = match_runs(hit_u, pos, matched_u, n)
    assert (distinct.tolist(), a.tolist(), b.tolist(), k) == _runs_reference(hit_u, pos, matched_u, n)


def test_ascii_spans_are_the_documents_own() -> None:
    docs = [Document(id=str(i), text=t) for i, t in enumerate(["Hello there, world", "A b  c-d", "x"])]
    _, starts, ends, doc, offsets = word_hashes([d.text for d in docs], with_offsets=True)
    word_start = np.searchsorted(doc, np.arange(len(docs) + 1))
    source = _SpanSource(docs, starts, ends, word_start, offsets)
    for d, document in enumerate(docs):
        spans = source.get(d)
        a, b = word_start[d], word_start[d + 1]
        own = _ArraySpans(starts[a:b] - offsets[d], ends[a:b] - offsets[d])
        assert len(spans) == len(own) == b - a
        assert [spans[i] for i in range(len(spans))] == [own[i] for i in range(len(own))]
        assert [document.text[s:e] for s, e in (spans[i] for i in range(len(spans)))] == document.text.replace(",", " ").replace(
            "-", " "
        ).split()
