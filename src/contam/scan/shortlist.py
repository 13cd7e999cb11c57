"""The semantic level's cheap first stage: which English documents are worth the sentence encoder.

Running MiniLM over every document is what the semantic level costs (tens of milliseconds each on
a CPU core), yet in a real corpus almost every document is plainly not a rephrasing of any
benchmark item. The shortlist decides that cheaply, from two signals that cost about a
millisecond per document together:

* the **static** embedder distilled from MiniLM (model2vec, :class:`contam.models.embed.StaticEmbedder`):
  cosine, robust z and gap to the nearest benchmark items, in MiniLM's own geometry;
* a **lexical** index over the benchmark's word pieces (:func:`contam.scan.textmatch.pieces`, code
  identifiers split): the best Jaccard overlap with *any* item, found by one sparse product, so a
  port of a function to C++ meets its source through its names even when the static vectors miss it;

plus the numbers and specifics the document shares with its three statically nearest items. A
logistic model over these (``static-shortlist`` in ``combiner.json``) is fitted by
``python bench/semantic_independent.py --fit`` to predict which documents the full ``learned`` rule
flags, on the calibration halves of the independent sets; at probability 0.5 it kept 99.8 % of those
(the intercept is shifted so), and the level embeds from :data:`CUT` (0.25) up, which also keeps
what the English prose model refitted since flags. Only documents at or above the cut are
embedded by MiniLM and judged by the full rule; the rest keep the shortlist's probability as their
score and are never flagged. Non-English documents skip the shortlist: the static table is
English, so they go to the multilingual encoder as before.

>>> LexicalIndex(["def has_close_elements(numbers, threshold):"], [0]).best(["function hasCloseElements(numbers, threshold)"])[0]
array([0.625])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from contam.data import Item
from contam.scan.combiner import Combiner, load_combiners, neighbourhood_features
from contam.scan.space import EmbeddingSpace
from contam.scan.textmatch import number_recall, pieces, specifics_overlap

#: What the shortlist's model reads, in order.
SHORTLIST_FEATURES = ("cosine", "z", "gap", "specifics", "numbers", "lexical")
#: Key of the shortlist's model in ``combiner.json``.
SHORTLIST_KEY = "static-shortlist"
#: Statically nearest items whose numbers and specifics are compared.
NEAREST = 3
#: Shortlist probability at or above which a document is embedded. The model's own cut (0.5) kept
#: 99.8 % of what the 2026-11-28 rule flagged; the English prose model refitted since (docs/semantic.md
#: item 10) flags rows the shortlist was not fitted to keep, and a cut of 0.25 takes back about half
#: of those (26 true positives lost of 4,099 on the test halves, against 56) for twice as many
#: documents embedded (147 of the scale bench's 3,030, against 73): bench/RESULTS.md, sixth session.
CUT = 0.25


class LexicalIndex:
    """Best word-piece Jaccard of a text with any of ``views`` (``owner[v]``: the item view ``v`` belongs to)."""

    def __init__(self, views: Sequence[str], owner: Sequence[int] | np.ndarray) -> None:
        import scipy.sparse as sp

        self.vocab: dict[str, int] = {}
        self.owner = np.asarray(owner, dtype=np.int64)
        ind, ptr, sizes = self._rows(views, grow=True)
        self.views = sp.csr_matrix((np.ones(len(ind), np.float32), ind, ptr), shape=(len(views), len(self.vocab))).T.tocsr()
        self.sizes = sizes

    def _rows(self, texts: Sequence[str], grow: bool = False) -> tuple[list[int], list[int], np.ndarray]:
        """CSR indices and row pointers of ``texts``' pieces in the vocabulary, and each text's
        number of pieces (those outside the vocabulary count in a Jaccard's union too)."""
        ind: list[int] = []
        ptr = [0]
        sizes = np.zeros(len(texts), dtype=np.float32)
        for r, t in enumerate(texts):
            ps = pieces(t)
            sizes[r] = len(ps)
            for p in ps:
                j = self.vocab.setdefault(p, len(self.vocab)) if grow else self.vocab.get(p, -1)
                if j >= 0:
                    ind.append(j)
            ptr.append(len(ind))
        return ind, ptr, sizes

    def best(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(best Jaccard, index of the item it is with) per text; in batches so memory stays small."""
        import scipy.sparse as sp

        n = len(texts)
        jac, arg = np.zeros(n), np.zeros(n, dtype=np.int64)
        step = max(16, 4_000_000 // max(1, len(self.sizes)))
        for s in range(0, n, step):
            part = texts[s : s + step]
            ind, ptr, own = self._rows(part)
            t = sp.csr_matrix((np.ones(len(ind), np.float32), ind, ptr), shape=(len(part), len(self.vocab)))
            inter = (t @ self.views).toarray()
            j = inter / np.maximum(own[:, None] + self.sizes[None, :] - inter, 1.0)
            a = j.argmax(axis=1)
            jac[s : s + len(part)] = j[np.arange(len(part)), a]
            arg[s : s + len(part)] = self.owner[a]
        return jac, arg


def _specifics_numbers(text: str, item: Item) -> tuple[float, float]:
    """The ``specifics`` and ``numbers`` of :func:`contam.scan.combiner.text_features` (centred; 0: too few)."""
    views = (item.question, item.text)
    sp, nr = specifics_overlap(text, views), number_recall(text, views)
    return (sp - 0.5 if sp == sp else 0.0, nr - 0.5 if nr == nr else 0.0)


class StaticShortlist:
    """``StaticShortlist(combiner).fit(items)``, then :meth:`score` (probability per text; >= :data:`CUT`:
    embed it); without a combiner only :meth:`features` (what the shortlist's model is fitted on)."""

    def __init__(self, combiner: Combiner | None = None, max_chars: int = 512, search_batch: int = 4096, seed: int = 0) -> None:
        self.combiner = combiner
        self.max_chars = max_chars
        self.search_batch = search_batch
        self.seed = seed

    @classmethod
    def shipped(cls, **kwargs: Any) -> StaticShortlist | None:
        """The shortlist fitted for MiniLM (``None`` when ``combiner.json`` has none)."""
        c = load_combiners().get(SHORTLIST_KEY)
        return cls(c, **kwargs) if c is not None else None

    def fit(self, items: Sequence[Item]) -> StaticShortlist:
        from contam.models.embed import load_embedder

        self.items = list(items)
        self.space = EmbeddingSpace(load_embedder("static"), self.max_chars, 1024, self.search_batch, self.seed).fit(self.items)
        # Every question that differs from its item's text is a view here, also where the two share
        # their first ``max_chars`` (the embedding space's test): the pieces are of the whole texts.
        qi = [j for j, it in enumerate(self.items) if it.question and it.question != it.text]
        views = [it.text for it in self.items] + [self.items[j].question for j in qi]
        self.lexical = LexicalIndex(views, list(range(len(self.items))) + qi)
        return self

    def features(self, texts: Sequence[str], k: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(``(n, 6)`` features in :data:`SHORTLIST_FEATURES` order, ``(n, k)`` statically nearest item
        indices, ``(n,)`` the item of the best word-piece overlap)."""
        n = len(texts)
        x = self.space.embed(texts)
        ds, di = self.space.search(x, max(k, NEAREST))
        out = np.zeros((n, len(SHORTLIST_FEATURES)))
        out[:, :3] = neighbourhood_features(x, self.space.background, ds)
        for r, t in enumerate(texts):
            best = np.array([_specifics_numbers(t, self.items[int(j)]) for j in di[r, :NEAREST]])
            out[r, 3:5] = best.max(axis=0) if len(best) else 0.0
        out[:, 5], lexical = self.lexical.best([t[: 4 * self.max_chars] for t in texts])
        return out, di[:, :k], lexical

    def score(self, texts: Sequence[str], k: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(probability that the full rule would want the text, ``(n, k)`` nearest items, ``(n,)`` the
        lexically nearest item)."""
        if self.combiner is None:
            raise ValueError("StaticShortlist.score needs a combiner (StaticShortlist.shipped() has the fitted one)")
        f, near, lexical = self.features(texts, k)
        return self.combiner.probability(f), near, lexical
