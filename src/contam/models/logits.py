"""Log-probabilities from raw llama.cpp logits rows, and where each token piece starts in its text.

Kept apart from the backend class (:mod:`contam.models.llamacpp`) so the numerics can be read and
tested on their own: row-chunked log-softmax, the Min-K%++ vocabulary moments, character offsets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def log_softmax_rows(rows: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax (float32: numpy's pairwise sums keep ~1e-6 relative error over 50k entries)."""
    x = np.array(rows, dtype=np.float32, copy=True)
    x -= x.max(axis=1, keepdims=True)
    x -= np.log(np.exp(x).sum(axis=1, keepdims=True))
    return x


#: Rows of logits turned into log-probs at a time: bounds memory to ~50 MB for a 49k vocabulary
#: however long the continuation (a 4k-token text would otherwise need 0.8 GB at once).
ROW_CHUNK = 256


def token_logprobs(rows: np.ndarray, targets: np.ndarray, vocab_stats: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Log-prob of ``targets[i]`` under logits row ``i``, plus Min-K%++ moments if asked."""
    lps = np.empty(len(targets), dtype=np.float64)
    mus = np.empty(len(targets), dtype=np.float64) if vocab_stats else None
    sds = np.empty(len(targets), dtype=np.float64) if vocab_stats else None
    for a in range(0, len(targets), ROW_CHUNK):
        b = min(a + ROW_CHUNK, len(targets))
        logp = log_softmax_rows(rows[a:b])
        lps[a:b] = logp[np.arange(b - a), targets[a:b]]
        if mus is not None and sds is not None:
            mus[a:b], sds[a:b] = vocab_moments(logp)
    return lps, mus, sds


def vocab_moments(logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std of log p(z) under z ~ p for each row of log-probabilities (Min-K%++).

    mu = sum_z p(z) log p(z);  sigma = sqrt(sum_z p(z) (log p(z))^2 - mu^2).
    """
    p = np.exp(logp)
    plogp = p * logp
    mu = plogp.sum(axis=1)
    var = (plogp * logp).sum(axis=1) - mu * mu
    return mu, np.sqrt(np.maximum(var, 0.0))


def char_offsets(pieces: Sequence[bytes], text: str) -> list[int]:
    """Character offset in ``text`` where each token piece starts.

    Pieces are concatenated bytes of the text (byte-level BPE); tokenizers that prepend a
    space (SentencePiece) produce one extra leading byte, which is discounted.
    """
    raw = text.encode("utf-8")
    joined_len = sum(len(b) for b in pieces)
    shift = joined_len - len(raw) if joined_len > len(raw) else 0
    # byte index -> char index (a byte inside a multi-byte character maps to that character)
    char_of_byte = np.zeros(len(raw) + 1, dtype=np.int64)
    pos = 0
    for ci, ch in enumerate(text):
        nb = len(ch.encode("utf-8"))
        char_of_byte[pos : pos + nb] = ci
        pos += nb
    char_of_byte[len(raw)] = len(text)
    offs, b = [], -shift
    for piece in pieces:
        offs.append(int(char_of_byte[min(max(b, 0), len(raw))]))
        b += len(piece)
    return offs
