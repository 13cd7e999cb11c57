"""A sentence-transformers folder of the plain kind (transformer, mean pooling, normalise) run
through transformers alone.

Importing sentence-transformers costs ~14 CPU-s on the 2-core CI machine (it pulls in most of
its optional stack), more than embedding a few hundred documents; the semantic level's shortlist
leaves only a few dozen documents per thousand for MiniLM, so that import was the largest part of
a scan's cost (bench/semantic_scale.py). The arithmetic is sentence-transformers' own for this
layout -- strip, tokenize with truncation at ``max_seq_length``, mean of the token vectors under
the attention mask, L2 norm -- and the batches are formed the same way (longest first), so vectors
agree with ``SentenceTransformer.encode`` to float rounding (max |diff| 7e-8 on 264 GSM8K texts,
``tests/test_meanpool.py``). Any other layout (CLS pooling, a dense head, lower-casing) returns
``None`` from :func:`plain_mean_pool_length` and stays on sentence-transformers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_OTHER_POOLING = (
    "pooling_mode_cls_token",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)


def plain_mean_pool_length(folder: str | Path) -> int | None:
    """``max_seq_length`` when ``folder`` is transformer -> mean pooling (-> normalise), else None.

    >>> plain_mean_pool_length("/nonexistent") is None
    True
    """
    p = Path(folder)
    try:
        modules = json.loads((p / "modules.json").read_text(encoding="utf-8"))
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]):
            return None
        if modules[0].get("path", "") not in ("", "."):
            return None
        pooling = json.loads((p / str(modules[1]["path"]) / "config.json").read_text(encoding="utf-8"))
        if not pooling.get("pooling_mode_mean_tokens") or any(pooling.get(k) for k in _OTHER_POOLING):
            return None
        config = json.loads((p / "sentence_bert_config.json").read_text(encoding="utf-8"))
        if config.get("do_lower_case"):
            return None
        return int(config.get("max_seq_length") or 512)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


class MeanPoolEncoder:
    """``encode`` with the signature the embedder uses from ``SentenceTransformer``."""

    def __init__(self, folder: str | Path, max_length: int, device: str = "cpu") -> None:
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.model: Any = AutoModel.from_pretrained(str(folder), local_files_only=True).to(device).eval()
        self.max_length = max_length
        self.device = device

    def get_embedding_dimension(self) -> int:
        return int(self.model.config.hidden_size)

    def _batch(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        enc = self.tokenizer([t.strip() for t in texts], padding=True, truncation=True, max_length=self.max_length, return_tensors="pt").to(
            self.device
        )
        with torch.inference_mode():
            hidden = self.model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled.float(), p=2, dim=1).cpu().numpy()

    def encode(self, texts: Sequence[str], batch_size: int = 32, **_: object) -> np.ndarray:
        """Unit vectors of ``texts`` (float32), batched longest first as sentence-transformers does."""
        out = np.empty((len(texts), self.get_embedding_dimension()), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts])
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            out[idx] = self._batch([texts[int(i)] for i in idx])
        return out
