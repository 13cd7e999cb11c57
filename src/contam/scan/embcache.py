"""A persistent cache of sentence embeddings, so a benchmark is embedded once, not on every scan.

Vectors are stored in SQLite under ``$CONTAM_HOME/embeddings.sqlite`` (default
``~/.cache/contam``), keyed by the embedder's identity (model name and config hash), the cut
length and the text's SHA-256, so a different model or cut never reuses a vector.
``CONTAM_EMBED_CACHE=0`` turns it off. The same database keeps what is fitted on a benchmark's
vectors alone (:meth:`EmbeddingCache.put_arrays`: the anomaly model's parameters).

>>> import numpy as np, tempfile, os
>>> c = EmbeddingCache(os.path.join(tempfile.mkdtemp(), "e.sqlite"))
>>> c.put("m", 8, ["hi"], np.ones((1, 3), dtype=np.float32))
>>> c.get("m", 8, ["hi", "yo"])[0].tolist(), c.get("m", 8, ["hi", "yo"])[1] is None
([1.0, 1.0, 1.0], True)
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def default_path() -> Path | None:
    """``$CONTAM_HOME/embeddings.sqlite`` (else ``~/.cache/contam``); ``None`` when disabled."""
    if os.environ.get("CONTAM_EMBED_CACHE", "1") in ("0", "false", "no"):
        return None
    root = os.environ.get("CONTAM_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "contam")
    return Path(root) / "embeddings.sqlite"


def _key(identity: str, max_chars: int, text: str) -> str:
    return hashlib.sha256(f"{identity}\x00{max_chars}\x00{text}".encode()).hexdigest()


class EmbeddingCache:
    """``get`` returns one row per text (``None`` when missing); ``put`` stores rows. A cache
    that cannot be opened or written is skipped silently: it only ever saves time."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        with contextlib.suppress(OSError, sqlite3.Error):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), timeout=30)
            db.execute("CREATE TABLE IF NOT EXISTS emb (k TEXT PRIMARY KEY, v BLOB)")
            db.execute("CREATE TABLE IF NOT EXISTS fitted (k TEXT PRIMARY KEY, v BLOB)")
            db.commit()
            self._db = db

    def get(self, identity: str, max_chars: int, texts: Sequence[str]) -> list[np.ndarray | None]:
        out: list[np.ndarray | None] = [None] * len(texts)
        if self._db is None:
            return out
        keys = [_key(identity, max_chars, t) for t in texts]
        found: dict[str, bytes] = {}
        try:
            for s in range(0, len(keys), 500):
                chunk = keys[s : s + 500]
                q = f"SELECT k, v FROM emb WHERE k IN ({','.join('?' * len(chunk))})"
                found.update(self._db.execute(q, chunk).fetchall())
        except sqlite3.Error:
            return out
        for i, k in enumerate(keys):
            if k in found:
                out[i] = np.frombuffer(found[k], dtype=np.float32)
        return out

    def put(self, identity: str, max_chars: int, texts: Sequence[str], vecs: np.ndarray) -> None:
        if self._db is None:
            return
        rows = [
            (_key(identity, max_chars, t), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vecs, strict=True)
        ]
        with contextlib.suppress(sqlite3.Error):
            self._db.executemany("INSERT OR REPLACE INTO emb (k, v) VALUES (?, ?)", rows)
            self._db.commit()

    def get_arrays(self, key: str, names: Sequence[str]) -> dict[str, np.ndarray] | None:
        """The float64 arrays ``names`` stored under ``key`` by :meth:`put_arrays` (something fitted
        on a benchmark alone), or ``None``: absent, unreadable or without one of ``names``."""
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT v FROM fitted WHERE k = ?", (key,)).fetchone()
            if row is None:
                return None
            with np.load(io.BytesIO(row[0]), allow_pickle=False) as z:
                return {k: np.asarray(z[k], dtype=np.float64) for k in names}
        except (sqlite3.Error, OSError, ValueError, KeyError):
            return None

    def put_arrays(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        if self._db is None:
            return
        buf = io.BytesIO()
        np.savez(buf, allow_pickle=False, **dict[str, Any](arrays))
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("INSERT OR REPLACE INTO fitted (k, v) VALUES (?, ?)", (key, buf.getvalue()))
            self._db.commit()
