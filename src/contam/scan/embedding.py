"""Embedding many texts once: cut to a length, each distinct text embedded once, vectors kept in the
persistent cache (:mod:`contam.scan.embcache`) under the embedder's identity."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from contam.models.base import Embedder


def embedder_identity(embedder: Embedder) -> str:
    """What names ``embedder``'s vectors (its weights' digest when it has one): the embedding
    cache's key, and what calibrated semantic thresholds hold for."""
    return str(getattr(embedder, "identity", getattr(embedder, "spec", "embedder")))


def embed_texts(embedder: Embedder, texts: Sequence[str], max_chars: int, batch_size: int, cache: bool = True) -> np.ndarray:
    """Unit-norm float32 embeddings of ``texts`` cut to ``max_chars``, in batches with a progress
    bar; vectors already in the persistent cache (:mod:`contam.scan.embcache`) are not recomputed."""
    from contam.progress import track
    from contam.scan.embcache import EmbeddingCache, default_path

    cut = [t[:max_chars] if t else " " for t in texts]
    path = default_path() if cache and getattr(embedder, "cacheable", True) else None
    store = EmbeddingCache(path) if path is not None else None
    ident = embedder_identity(embedder)
    rows = store.get(ident, max_chars, cut) if store is not None else [None] * len(cut)
    todo = [i for i, r in enumerate(rows) if r is None]
    dim = int(getattr(embedder, "dim", 0)) or (len(next(r for r in rows if r is not None)) if len(todo) < len(rows) else 0)
    out = np.zeros((len(cut), dim), dtype=np.float32) if dim else None
    if todo:
        step = max(batch_size * 8, 256)
        # Each distinct text once (corpora repeat samples), in first-seen order: without repeats
        # the chunks and batches are the same as before, and so are the vectors.
        first: dict[str, int] = {}
        for i in todo:
            first.setdefault(cut[i], len(first))
        missing = list(first)
        chunks = range(0, len(missing), step)
        if len(missing) > step:
            chunks = track(chunks, "embedding", total=-(-len(missing) // step))
        parts = []
        for s in chunks:
            part = embedder.embed(missing[s : s + step], batch_size=batch_size)
            parts.append(part)
            if store is not None:
                store.put(ident, max_chars, missing[s : s + step], part)
        new = np.vstack(parts)
        if out is None:
            out = np.zeros((len(cut), new.shape[1]), dtype=np.float32)
        row = {t: k for k, t in enumerate(missing)}
        out[todo] = new[[row[cut[i]] for i in todo]]
    assert out is not None
    for i, r in enumerate(rows):
        if r is not None:
            out[i] = r
    return np.ascontiguousarray(out, dtype=np.float32)
