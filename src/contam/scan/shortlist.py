"""The semantic level's cheap first stage: which English documents are worth the sentence encoder.

Running MiniLM over every document is what the semantic level costs (tens of milliseconds each on
a CPU core), yet in a real corpus almost every document is plainly not a rephrasing of any
benchmark item. The shortlist decides that cheaply, from two signals that cost about a
millisecond per document together:

* the **static** embedder distilled from MiniLM (model2vec, :class:`contam.models.embed.StaticEmbedder`):
  cosine, robust z and gap to the nearest benchmark items, in MiniLM's own geometry;
* a **lexical** index over the benchmark's word pieces (:func:`contam.scan.textmatch.pieces`, code
  identifiers split), found by one sparse product: the best Jaccard overlap with *any* item, so a
  port of a function to C++ meets its source through its names even when the static vectors miss
  it; and the overlap weighted by each piece's rarity among the items (IDF cosine and the share of
  the item's IDF mass written), each with its gap to the runner-up item, so a far rephrasing that
  keeps a question's rare words is told from a text of the same genre that shares its common ones;

plus the numbers and specifics the document shares with its three statically nearest items. A
logistic model over these (``static-shortlist`` in ``combiner.json``) is fitted by
``python bench/semantic_independent.py --fit-shortlist`` to predict which documents the full
``learned`` rule flags, on the calibration halves of the independent sets; at probability 0.5 it
keeps 99.8 % of those (the intercept is shifted so), and the level embeds from :data:`CUT` (0.25)
up. Only documents at or above the cut are
embedded by MiniLM and judged by the full rule; the rest keep the shortlist's probability as their
score and are never flagged. Non-English documents skip the shortlist: the static table is
English, so they go to the multilingual encoder as before.

>>> LexicalIndex(["def has_close_elements(numbers, threshold):"], [0]).overlaps(["function hasCloseElements(numbers, threshold)"])[0][:, 0]
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
SHORTLIST_FEATURES = ("cosine", "z", "gap", "specifics", "numbers", "lexical", "idf_cosine", "idf_cosine_gap", "idf_share", "idf_share_gap")
#: Key of the shortlist's model in ``combiner.json``.
SHORTLIST_KEY = "static-shortlist"
#: Statically nearest items whose numbers and specifics are compared.
NEAREST = 3
#: Shortlist probability at or above which a document is embedded. On the test halves (English rows,
#: the full rule's 3,735 true positives) the model fitted 2026-11-29 loses 13 of them at 0.5 and 5 at
#: 0.25, for 47 and 80 of the scale bench's 3,030 documents embedded; the one before it (without the
#: IDF overlaps) lost 67 and 31 for 73 and 147 (bench/RESULTS.md, seventh session; docs/semantic.md item 5).
CUT = 0.25


class LexicalIndex:
    """Word-piece overlap of texts with the benchmark's ``views`` (``owner[v]``: the item view ``v``
    belongs to, every item owning at least one view): the best plain Jaccard with any item, and two
    overlaps weighted by each piece's inverse document frequency over the items -- the cosine of the
    IDF-weighted piece sets, and the share of the item's IDF mass the text writes -- each with its
    gap to the runner-up item.

    A far rephrasing keeps a question's rare words ("Kohlberg", "agoraphobia", "t-test") and few of
    its common ones; the weights make those count, and the gap says whether one item owns them, as
    the cosine's gap does in embedding space.
    """

    def __init__(self, views: Sequence[str], owner: Sequence[int] | np.ndarray) -> None:
        import scipy.sparse as sp

        self.vocab: dict[str, int] = {}
        owner = np.asarray(owner, dtype=np.int64)
        ind, ptr, sizes = self._rows(views, grow=True)
        binary = sp.csr_matrix((np.ones(len(ind), np.float32), ind, ptr), shape=(len(views), len(self.vocab)))
        n_items = int(owner.max()) + 1 if len(owner) else 0
        # Document frequency over items, not views: an item asked twice (question, question + options) counts once.
        per_item = sp.csr_matrix((np.ones(len(owner), np.float32), (owner, np.arange(len(owner)))), shape=(n_items, len(views))) @ binary
        df = np.asarray((per_item > 0).sum(axis=0)).ravel()
        self.idf = (np.log((1.0 + n_items) / (1.0 + df)) + 1.0).astype(np.float32)
        self.oov_idf = float(np.log(1.0 + n_items) + 1.0)  # a piece no item has: the rarest there is
        self.idf2 = self.idf**2
        w1, w2 = binary.multiply(self.idf[None, :]).tocsr(), binary.multiply(self.idf2[None, :]).tocsr()
        # One sparse product gives the plain, the IDF and the IDF^2 intersections with every view.
        self.stacked = sp.vstack([binary, w1, w2]).T.tocsr()
        self.sizes = sizes
        self.mass = np.asarray(w1.sum(axis=1)).ravel()
        self.norm = np.sqrt(np.asarray(w2.sum(axis=1)).ravel())
        # Views sorted by owner, so a per-item maximum is one reduceat.
        self.order = np.argsort(owner, kind="stable")
        self.starts = np.flatnonzero(np.r_[True, np.diff(owner[self.order]) != 0])
        self.owner = owner

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

    def _best_two(self, per_view: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row: the best item's score and its gap to the runner-up item's."""
        per_item = np.maximum.reduceat(per_view[:, self.order], self.starts, axis=1)
        if per_item.shape[1] < 2:
            return per_item[:, 0], per_item[:, 0]
        top = np.partition(per_item, -2, axis=1)[:, -2:]
        return top[:, 1], top[:, 1] - top[:, 0]

    def overlaps(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(``(n, 5)``: best Jaccard, IDF cosine, its gap, IDF share, its gap; ``(n,)``: the item of the
        best Jaccard), in batches so memory stays small."""
        import scipy.sparse as sp

        n, n_views = len(texts), len(self.sizes)
        out, arg = np.zeros((n, 5)), np.zeros(n, dtype=np.int64)
        step = max(16, 4_000_000 // max(1, 3 * n_views))
        for s in range(0, n, step):
            part = texts[s : s + step]
            ind, ptr, own = self._rows(part)
            t = sp.csr_matrix((np.ones(len(ind), np.float32), ind, ptr), shape=(len(part), len(self.vocab)))
            inter = (t @ self.stacked).toarray()
            plain, by_idf, by_idf2 = inter[:, :n_views], inter[:, n_views : 2 * n_views], inter[:, 2 * n_views :]
            j = plain / np.maximum(own[:, None] + self.sizes[None, :] - plain, 1.0)
            a = j.argmax(axis=1)
            rows = slice(s, s + len(part))
            out[rows, 0], arg[rows] = j[np.arange(len(part)), a], self.owner[a]
            in_vocab = np.diff(np.asarray(ptr))
            doc_norm = np.sqrt(t @ self.idf2 + (own - in_vocab) * self.oov_idf**2)
            cos = by_idf2 / np.maximum(doc_norm[:, None] * self.norm[None, :], 1e-9)
            share = by_idf / np.maximum(self.mass[None, :], 1e-9)
            out[rows, 1], out[rows, 2] = self._best_two(cos)
            out[rows, 3], out[rows, 4] = self._best_two(share)
        return out, arg


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
        """(``(n, 10)`` features in :data:`SHORTLIST_FEATURES` order, ``(n, k)`` statically nearest item
        indices, ``(n,)`` the item of the best word-piece overlap)."""
        n = len(texts)
        x = self.space.embed(texts)
        ds, di = self.space.search(x, max(k, NEAREST))
        out = np.zeros((n, len(SHORTLIST_FEATURES)))
        out[:, :3] = neighbourhood_features(x, self.space.background, ds)
        for r, t in enumerate(texts):
            best = np.array([_specifics_numbers(t, self.items[int(j)]) for j in di[r, :NEAREST]])
            out[r, 3:5] = best.max(axis=0) if len(best) else 0.0
        out[:, 5:], lexical = self.lexical.overlaps([t[: 4 * self.max_chars] for t in texts])
        return out, di[:, :k], lexical

    def score(self, texts: Sequence[str], k: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(probability that the full rule would want the text, ``(n, k)`` nearest items, ``(n,)`` the
        lexically nearest item)."""
        if self.combiner is None:
            raise ValueError("StaticShortlist.score needs a combiner (StaticShortlist.shipped() has the fitted one)")
        f, near, lexical = self.features(texts, k)
        return self.combiner.probability(f), near, lexical
