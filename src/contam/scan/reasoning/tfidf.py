"""Sublinear TF-IDF over token lists, the level-3 shortlist's index.

The formula is scikit-learn's ``TfidfVectorizer(analyzer=identity, sublinear_tf=True)`` --
``tf = 1 + log(count)``, ``idf = log((1 + n) / (1 + df)) + 1``, rows scaled to unit l2 norm, the
vocabulary in sorted order -- written on scipy.sparse because importing scikit-learn costs ~2.3
CPU-s, paid by every scan process and every spawned worker: a tenth of a whole ``--levels all``
scan of a few thousand documents (issue 31). ``tests/test_reasoning_tfidf.py`` checks it against
scikit-learn's on real traces.

>>> t = StepTfidf()
>>> m = t.fit_transform([["a", "b", "b"], ["b", "c"]])
>>> m.shape, round(float((m @ m.T).toarray()[0, 1]), 4)
((2, 3), 0.4461)
>>> t.transform([["z"], ["c", "c"]]).toarray().round(3).tolist()
[[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np


class StepTfidf:
    """``fit_transform`` learns the vocabulary and idf of the benchmark's token lists; ``transform``
    weighs other lists with them (tokens outside the vocabulary are dropped). Both return a CSR
    matrix of float64 rows of unit length (an all-unknown row stays zero). Picklable: the
    fitted state goes to worker processes."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.idf: np.ndarray = np.zeros(0)

    def fit_transform(self, docs: Sequence[Sequence[str]]) -> Any:
        self.vocabulary = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
        counts = self._counts(docs)
        df = np.bincount(counts.indices, minlength=len(self.vocabulary)).astype(np.float64)
        self.idf = np.log((len(docs) + 1) / (df + 1.0)) + 1.0
        return self._weigh(counts)

    def transform(self, docs: Sequence[Sequence[str]]) -> Any:
        return self._weigh(self._counts(docs))

    def _counts(self, docs: Sequence[Sequence[str]]) -> Any:
        from scipy.sparse import csr_matrix

        vocab = self.vocabulary
        indptr = [0]
        indices: list[int] = []
        data: list[int] = []
        for d in docs:
            row = sorted((j, c) for t, c in Counter(d).items() if (j := vocab.get(t)) is not None)
            indices.extend(j for j, _ in row)
            data.extend(c for _, c in row)
            indptr.append(len(indices))
        return csr_matrix(
            (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int32)),
            shape=(len(docs), len(vocab)),
        )

    def _weigh(self, x: Any) -> Any:
        data = x.data
        np.log(data, out=data)
        data += 1.0
        data *= self.idf[x.indices]
        lengths = np.diff(x.indptr)
        full = np.flatnonzero(lengths)
        if full.size:
            norms = np.sqrt(np.add.reduceat(data * data, x.indptr[full]))
            data /= np.repeat(norms, lengths[full])
        return x
