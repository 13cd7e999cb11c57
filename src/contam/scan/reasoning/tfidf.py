"""Token counts as sparse matrices, and sublinear TF-IDF over them: the level-3 shortlist's index.

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


def counts_csr(counters: Sequence[Counter[str]], vocab: dict[str, int], grow: bool = False) -> tuple[Any, np.ndarray]:
    """``counters`` as one int64 CSR matrix over ``vocab`` (column ids; new keys added when ``grow``,
    dropped otherwise), indices sorted, and each row's total count (dropped keys included)."""
    from scipy.sparse import csr_matrix

    indptr = [0]
    indices: list[int] = []
    data: list[int] = []
    tot: list[int] = []
    for c in counters:
        t = 0
        for key, v in c.items():
            t += v
            j = vocab.setdefault(key, len(vocab)) if grow else vocab.get(key)
            if j is not None:
                indices.append(j)
                data.append(v)
        tot.append(t)
        indptr.append(len(indices))
    # Built after the loop: when growing, the vocabulary (the column count) is complete only now.
    m = csr_matrix(
        (np.asarray(data, dtype=np.int64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
        shape=(len(counters), len(vocab)),
    )
    m.sort_indices()  # canonical form: scipy's fast element-wise minimum, scikit-learn's summation order
    return m, np.asarray(tot, dtype=np.int64)


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
        return counts_csr([Counter(d) for d in docs], self.vocabulary)[0].astype(np.float64)

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
