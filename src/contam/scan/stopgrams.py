"""Corpus-side boilerplate for the token level: stop-grams learned from a corpus sample, plus reject patterns.

A benchmark n-gram that is *common in the corpus itself* — a prompt template every record
carries ("Below is an instruction that describes a task ..."), a licence header, a legal
enacting clause, "Let's think step by step" — says nothing about contamination: a document
matching it matches every other document too. The benchmark-side IDF (allenai/decon) cannot see
this, because inside the benchmark such an n-gram may be rare. So:

* :func:`learn_stopgrams` counts, over a sample of corpus documents, in how many documents each
  benchmark n-gram occurs (document frequency); n-grams found in at least ``min_df`` of the
  sample (and in at least ``min_docs`` documents) become stop-grams;
* :func:`reject_ngrams` turns regular expressions (``reject_patterns``) into stop-grams: every
  benchmark n-gram whose words lie mostly inside a match in an item.

Stop-grams weigh nothing in the coverage score and generate no candidates
(:meth:`contam.scan.ngram_index.NGramIndex.drop_ngrams`); a part made only of boilerplate can
no longer be matched by its boilerplate. Exact whole-part comparison of short parts is untouched.

>>> from contam.data import Document, load_benchmark              # doctest: +SKIP
>>> sc = NGramScanner(NGramConfig(stopgram_df=0.05)).fit(items, corpus_sample=texts)  # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from contam.errors import ConfigError

if TYPE_CHECKING:  # for the annotations only: the index imports numba kernels this light module does not need
    from contam.scan.ngram_index import NGramIndex

#: Common boilerplate of reasoning prompts and document headers (case-insensitive regexes).
DEFAULT_REJECT_PATTERNS: tuple[str, ...] = (
    r"let'?s think step by step",
    r"below is an instruction that describes a task[^.]*\.(?:\s*write a response that appropriately completes the request\.)?",
    r"licensed under the apache license,? version 2\.0[^\n]*",
    r"permission is hereby granted, free of charge, to any person obtaining a copy[^\n]*",
    r"be it enacted by the senate and house of representatives of the united states of america in congress assembled",
)


def compile_patterns(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    """Compile ``patterns`` case-insensitively; a bad one is a :class:`ConfigError` naming it."""
    out = []
    for p in patterns:
        try:
            out.append(re.compile(p, re.I))
        except re.error as e:
            raise ConfigError(f"reject pattern {p!r} is not a valid regular expression: {e}") from None
    return out


def learn_stopgrams(index: NGramIndex, texts: Iterable[str], min_df: float = 0.01, min_docs: int = 3, max_docs: int = 20_000) -> np.ndarray:
    """Indices (into ``index.hashes``) of the benchmark n-grams found in at least ``min_df`` of
    the sampled ``texts`` and in at least ``min_docs`` of them (the first ``max_docs`` are read)."""
    from contam.scan.hashing import window_hashes, word_hashes

    if not 0 < min_df <= 1:
        raise ConfigError(f"stop-gram document frequency must be in (0, 1], got {min_df}")
    sample = []
    for t in texts:
        sample.append(t)
        if len(sample) >= max_docs:
            break
    n_hash = len(index.hashes)
    if not sample or n_hash == 0:
        return np.zeros(0, dtype=np.int64)
    df = np.zeros(n_hash, dtype=np.int64)
    for s in range(0, len(sample), 2000):
        batch = sample[s : s + 2000]
        wh, _, _, doc = word_hashes(batch)
        h, first = window_hashes(wh, doc, index.n)
        u, pos = index.lookup(h, first)
        if len(u):
            pairs = np.unique(u.astype(np.int64) * (len(batch) + 1) + doc[pos].astype(np.int64))
            np.add.at(df, pairs // (len(batch) + 1), 1)
    need = max(min_docs, int(np.ceil(min_df * len(sample))))
    return np.flatnonzero(df >= need)


def reject_ngrams(index: NGramIndex, patterns: Sequence[str], least: float = 0.5) -> np.ndarray:
    """Indices of the benchmark n-grams of which at least ``least`` of the words lie inside a
    match of one of ``patterns`` in the item part they come from."""
    from contam.scan.exact import item_parts
    from contam.scan.hashing import text_words

    regs = compile_patterns(patterns)
    if not regs:
        return np.zeros(0, dtype=np.int64)
    idx = index
    n = idx.n
    out: list[np.ndarray] = []
    for p in range(idx.n_parts):
        kind = int(idx.part_kind[p])
        if kind == 2:  # the seam's windows are the question's and answer's; they get caught there
            continue
        item = idx.items[int(idx.part_item[p])]
        text = list(item_parts(item).values())[kind]
        spans = [m.span() for r in regs for m in r.finditer(text)]
        if not spans:
            continue
        words = text_words(text)
        inside = np.array([any(a <= ws and we <= b for a, b in spans) for ws, we in words], dtype=np.float64)
        if len(inside) < n:
            continue
        frac = np.convolve(inside, np.ones(n), mode="valid") / n  # share of each window's words inside
        w = idx.window_ngrams(p)
        if len(w) == len(frac):
            out.append(w[frac >= least])
    return np.unique(np.concatenate(out)) if out else np.zeros(0, dtype=np.int64)
