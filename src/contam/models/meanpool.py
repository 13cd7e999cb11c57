"""A sentence-transformers folder of the plain kind (BERT encoder, mean pooling, normalise) run
on torch, tokenizers and safetensors alone.

Importing sentence-transformers and its transformers modelling stack costs ~12 CPU-s per process
on the 2-core CI machine, more than the semantic level spends embedding the few dozen documents
per thousand that its shortlist leaves for MiniLM (bench/semantic_scale.py); this path loads in
~3.5 CPU-s, most of it importing torch. The arithmetic is sentence-transformers' own for this
layout -- strip, tokenize with truncation at ``max_seq_length``, BERT's encoder, mean of the
token vectors under the attention mask, L2 norm -- and the batches are formed the same way
(longest first), so vectors agree with ``SentenceTransformer.encode`` to float rounding
(``tests/test_meanpool.py``). Any other layout (CLS pooling, a dense head, lower-casing, another
architecture) returns ``None`` from :func:`plain_mean_pool_length` and stays on
sentence-transformers.
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


def _is_bert(config: dict[str, Any]) -> bool:
    """A BERT encoder with absolute positions: the arithmetic :class:`_Bert` implements."""
    return config.get("model_type") == "bert" and config.get("position_embedding_type", "absolute") == "absolute"


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
        if not _is_bert(json.loads((p / "config.json").read_text(encoding="utf-8"))):
            return None
        return int(config.get("max_seq_length") or 512)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


class _Bert:
    """BERT's encoder forward pass in plain torch over the folder's safetensors weights.

    Why not ``transformers.BertModel``: importing its modelling stack costs ~6 CPU-s per
    process (torch._dynamo, distributed tensors), more than the semantic level spends embedding
    a shortlisted corpus; the arithmetic is the standard post-LayerNorm BERT encoder (exact GELU,
    no dropout at inference), checked against sentence-transformers in ``tests/test_meanpool.py``.
    """

    def __init__(self, folder: Path, config: dict[str, Any], device: str) -> None:
        from safetensors.torch import load_file

        w = load_file(str(folder / "model.safetensors"), device=device)
        self.w = {k.removeprefix("bert."): v.float() for k, v in w.items()}
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))

    def _ln(self, x: Any, name: str) -> Any:
        import torch.nn.functional as F

        return F.layer_norm(x, x.shape[-1:], self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.eps)

    def _lin(self, x: Any, name: str) -> Any:
        import torch.nn.functional as F

        return F.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def __call__(self, ids: Any, mask: Any) -> Any:
        import torch.nn.functional as F

        w, (b, n) = self.w, ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n][None]
        x = self._ln(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        keep = mask.bool()[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._lin(x, f"{p}.attention.self.{t}").view(b, n, self.heads, -1).transpose(1, 2) for t in ("query", "key", "value")
            )
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=keep).transpose(1, 2).reshape(b, n, -1)
            x = self._ln(self._lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            h = F.gelu(self._lin(x, f"{p}.intermediate.dense"))
            x = self._ln(self._lin(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x


class MeanPoolEncoder:
    """``encode`` with the signature the embedder uses from ``SentenceTransformer``."""

    def __init__(self, folder: str | Path, max_length: int, device: str = "cpu") -> None:
        from tokenizers import Tokenizer

        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if not _is_bert(config):
            raise ValueError(f"{folder} is not a BERT encoder with absolute positions")
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # tokenizer.json carries its own fixed truncation/padding (128 for MiniLM); use
        # sentence-transformers' max_seq_length and pad to the longest text of the batch instead.
        self.tokenizer.enable_truncation(max_length=max_length)
        pad_id = int(config.get("pad_token_id") or 0)
        self.tokenizer.enable_padding(pad_id=pad_id, pad_token=self.tokenizer.id_to_token(pad_id) or "[PAD]")
        self.model = _Bert(folder, config, device)
        self.dim = int(config["hidden_size"])
        self.device = device

    def get_embedding_dimension(self) -> int:
        return self.dim

    def _batch(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        enc = self.tokenizer.encode_batch([t.strip() for t in texts])
        ids = torch.tensor([e.ids for e in enc], device=self.device)
        mask = torch.tensor([e.attention_mask for e in enc], device=self.device)
        with torch.inference_mode():
            hidden = self.model(ids, mask)
            m = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled.float(), p=2, dim=1).cpu().numpy()

    def encode(self, texts: Sequence[str], batch_size: int = 32, **_: object) -> np.ndarray:
        """Unit vectors of ``texts`` (float32), batched longest first as sentence-transformers does."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts])
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            out[idx] = self._batch([texts[int(i)] for i in idx])
        return out
