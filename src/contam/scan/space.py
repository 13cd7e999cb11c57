"""One embedding space of the semantic level: a benchmark's items embedded by one embedder and
indexed for exact nearest-neighbour search.

Each item is indexed twice, by its whole text and by its question alone (where they differ), so a
question-only copy and a question-plus-answer copy both meet their own view of the item; a search
returns each item once, at its best view. The semantic level holds one space per embedder it uses
(MiniLM for English, multilingual-e5-small for other languages).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from contam.data import Item
from contam.models.base import Embedder
from contam.scan.combiner import background_sample
from contam.scan.embedding import embed_texts


class EmbeddingSpace:
    """``EmbeddingSpace(embedder, max_chars, batch_size).fit(items)``, then :meth:`embed` and :meth:`search`."""

    def __init__(self, embedder: Embedder, max_chars: int = 512, batch_size: int = 16, search_batch: int = 4096, seed: int = 0) -> None:
        self.embedder = embedder
        self.spec = str(getattr(embedder, "spec", "embedder"))
        self.max_chars = max_chars
        self.batch_size = batch_size
        self.search_batch = search_batch
        self.seed = seed
        self._known: dict[str, int] = {}

    def _cut(self, t: str) -> str:
        return t[: self.max_chars] if t else " "

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings of ``texts``; a text equal (after the ``max_chars`` cut) to a view of
        a fitted item reuses that view's vector (verbatim copies are the commonest contamination)."""
        if not self._known:
            return embed_texts(self.embedder, texts, self.max_chars, self.batch_size)
        hit = [self._known.get(self._cut(t), -1) for t in texts]
        rest = [i for i, h in enumerate(hit) if h < 0]
        if len(rest) == len(texts):
            return embed_texts(self.embedder, texts, self.max_chars, self.batch_size)
        out = np.empty((len(texts), self.views.shape[1]), dtype=np.float32)
        for i, h in enumerate(hit):
            if h >= 0:
                out[i] = self.views[h]
        if rest:
            out[rest] = embed_texts(self.embedder, [texts[i] for i in rest], self.max_chars, self.batch_size)
        return out

    def fit(self, items: Sequence[Item], item_embeddings: np.ndarray | None = None) -> EmbeddingSpace:
        import faiss

        self.items = list(items)
        self._known = {}
        mc = self.max_chars
        qi = [j for j, it in enumerate(self.items) if it.question and it.question.strip()[:mc] != it.text.strip()[:mc]]
        qtexts = [self.items[j].question for j in qi]
        self.item_vecs = item_embeddings if item_embeddings is not None else self.embed([it.text for it in self.items])
        qvecs = self.embed(qtexts) if qi else np.zeros((0, self.item_vecs.shape[1]), dtype=np.float32)
        self.view_item = np.concatenate([np.arange(len(self.items)), np.asarray(qi, dtype=np.int64)]).astype(np.int64)
        self.views = np.ascontiguousarray(np.vstack([self.item_vecs, qvecs]), dtype=np.float32)
        self.index = faiss.IndexFlatIP(self.views.shape[1])
        self.index.add(self.views)
        view_texts = [it.text for it in self.items] + qtexts
        for r in range(len(view_texts) - 1, -1, -1):  # first view wins
            self._known[self._cut(view_texts[r])] = r
        self.background = self.views[background_sample(len(self.views), self.seed)]
        return self

    def search(self, x: np.ndarray, k: int, exclude_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` *items* per row of ``x`` (best view of each item), best first; with
        ``exclude_self`` row i is item i and never its own neighbour."""
        n = len(x)
        k = max(0, min(k, len(self.items) - (1 if exclude_self else 0)))
        d_out = np.zeros((n, k), dtype=np.float32)
        i_out = np.zeros((n, k), dtype=np.int64)
        if k == 0 or n == 0:
            return d_out, i_out
        rows = min(self.index.ntotal, 2 * k + 2)
        bs = self.search_batch
        for s in range(0, n, bs):
            d, ids = self.index.search(x[s : s + bs], rows)
            it = np.where(ids >= 0, self.view_item[np.maximum(ids, 0)], -1)
            dup = it < 0
            if exclude_self:
                dup |= it == np.arange(s, s + len(it))[:, None]
            for j in range(1, rows):  # a later view of an item already listed is a duplicate
                dup[:, j] |= (it[:, :j] == it[:, j : j + 1]).any(axis=1)
            order = np.argsort(dup, axis=1, kind="stable")[:, :k]  # kept entries first, still best first
            d_out[s : s + bs] = np.take_along_axis(np.where(dup, -1.0, d), order, axis=1)
            i_out[s : s + bs] = np.take_along_axis(np.where(dup, 0, it), order, axis=1)
        return d_out, i_out
