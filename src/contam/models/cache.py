"""On-disk response cache: every model call is answered once, so reruns are free and a killed
run resumes where it stopped.

Each answer (one scored pair, or the ``n`` completions of one prompt) is stored under a key
hashing (model identity incl. a weights-file hash, method, prompt, parameters) in SQLite with
write-ahead logging (safe for concurrent readers and several writer processes). Misses are sent
to the model in small chunks and committed after each chunk, so a SIGKILL loses at most the
chunk in flight.

>>> from contam.models import load
>>> lm = load("smollm2", cache="/tmp/responses.sqlite")          # doctest: +SKIP
>>> lm.generate(["2+2="], max_new_tokens=4)                        # doctest: +SKIP
>>> lm.generate(["2+2="], max_new_tokens=4)   # answered from disk  # doctest: +SKIP
>>> lm.hits, lm.misses                                             # doctest: +SKIP
(1, 1)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from contam.errors import ConfigError, OutputError
from contam.models.base import Completion, LanguageModel, Messages, Prompt, TokenScores, boxed_completions
from contam.textsafe import no_surrogates

T = TypeVar("T")

#: Bump when the stored value format changes; old rows are then simply not found.
CACHE_FORMAT = 1


def default_cache_path() -> Path:
    """``$CONTAM_CACHE`` if set, else ``~/.cache/contam/responses.sqlite``."""
    env = os.environ.get("CONTAM_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "contam" / "responses.sqlite"


def cache_key(identity: str, method: str, payload: Any) -> str:
    """Stable hex key of one call (JSON with sorted keys, so dict order never matters)."""
    blob = json.dumps([CACHE_FORMAT, identity, method, payload], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate in a prompt still hashes (same bytes as utf-8 for any other text).
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """A SQLite table ``key -> JSON value``; one connection per process, guarded by a lock."""

    def __init__(self, path: str | os.PathLike[str], timeout: float = 60.0) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise ConfigError(f"cannot open the response cache {self.path}: it is a folder; name a file (CONTAM_CACHE or --cache)")
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._db = self._open(timeout)
                break
            except sqlite3.OperationalError as e:
                # Another process creating the file or switching it to WAL at this very moment:
                # those steps can answer "locked" without waiting on the busy timeout, so retry.
                if "locked" in str(e) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise ConfigError(
                    f"cannot open the response cache {self.path}: {e} (set CONTAM_CACHE to another file or use --no-cache)"
                ) from None
            except (sqlite3.Error, OSError) as e:
                raise ConfigError(
                    f"cannot open the response cache {self.path}: {e} (set CONTAM_CACHE to another file or use --no-cache)"
                ) from None
        self._lock = threading.Lock()

    def _open(self, timeout: float) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(self.path), timeout=timeout, check_same_thread=False, isolation_level=None)
        try:
            # Several processes (two probe runs) share one file: writers wait for each other up
            # to the timeout instead of failing with "database is locked".
            db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable against process death (SIGKILL); only a power cut can drop the last commits.
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, identity TEXT NOT NULL, "
                "method TEXT NOT NULL, value TEXT NOT NULL, created REAL NOT NULL)"
            )
        except BaseException:
            db.close()
            raise
        return db

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Stored values of the keys that are present."""
        found: dict[str, Any] = {}
        with self._lock:
            for start in range(0, len(keys), 500):  # SQLite limits bound parameters
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                for k, v in self._db.execute(f"SELECT key, value FROM responses WHERE key IN ({marks})", part):
                    found[k] = json.loads(v)
        return found

    def put_many(self, rows: Sequence[tuple[str, str, str, Any]]) -> None:
        """Store ``(key, identity, method, value)`` rows in one committed transaction."""
        if not rows:
            return
        now = time.time()
        data = [(k, ident, meth, no_surrogates(json.dumps(v, ensure_ascii=False)), now) for k, ident, meth, v in rows]
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)", data)
                    self._db.execute("COMMIT")
                except BaseException:
                    # SQLite may already have rolled back (a full disk does): a failing ROLLBACK
                    # must not replace the error that says what happened.
                    if self._db.in_transaction:
                        try:
                            self._db.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass
                    raise
            except sqlite3.OperationalError as e:
                if "full" in str(e) or "disk I/O error" in str(e):  # ENOSPC is "full"; a file-size limit is an I/O error
                    raise OutputError(
                        f"response cache {self.path}: {e}; answers computed before this chunk are kept, free some space and run again"
                    ) from None
                raise

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def stats(self) -> dict[str, int]:
        """Number of stored answers per model identity."""
        with self._lock:
            return {i: int(n) for i, n in self._db.execute("SELECT identity, COUNT(*) FROM responses GROUP BY identity")}


@lru_cache(maxsize=8)
def open_cache(path: str) -> ResponseCache:
    """One :class:`ResponseCache` per file per process."""
    return ResponseCache(path)


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), max(1, size)):
        yield items[start : start + size]


class CachedModel:
    """Wraps any :class:`LanguageModel` so each answer is computed once and kept on disk.

    ``hits`` / ``misses`` count answers served from disk / computed by the model.
    ``chunk_size`` is how many misses go to the model per call (and per commit); it defaults
    to the backend's ``preferred_batch`` or 8.
    """

    def __init__(self, model: LanguageModel, cache: ResponseCache, *, chunk_size: int | None = None) -> None:
        self.inner = model
        self.cache = cache
        self.chunk_size = chunk_size or int(getattr(model, "preferred_batch", 8))
        self.hits = 0
        self.misses = 0

    # Protocol attributes mirror the wrapped model.
    @property
    def spec(self) -> str:
        return self.inner.spec

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def supports_prefill(self) -> bool:
        return self.inner.supports_prefill

    @property
    def supports_scoring(self) -> bool:
        return self.inner.supports_scoring

    def __getattr__(self, name: str) -> Any:  # describe(), n_ctx, calls, tokenize, ...
        return getattr(self.inner, name)

    def format_chat(self, messages: Messages, prefill: str | None = None) -> str:
        return self.inner.format_chat(messages, prefill)

    def _run(
        self,
        method: str,
        payloads: list[Any],
        compute: Callable[[list[int]], list[Any]],
        order: Callable[[int], Any] | None = None,
        fallbacks: list[Any] | None = None,
    ) -> list[Any]:
        """Look every payload up (or its fallback payload: a stored superset answer); compute
        misses chunk by chunk, committing each; return values in input order."""
        ident = self.inner.identity
        keys = [cache_key(ident, method, p) for p in payloads]
        alt = [cache_key(ident, method, p) for p in fallbacks] if fallbacks else []
        found = self.cache.get_many(keys + alt)
        values: list[Any] = [found.get(k) for k in keys]
        for i, k in enumerate(alt):
            if values[i] is None:
                values[i] = found.get(k)
        # One computation per distinct missing key (duplicates inside a call are free too).
        first_of: dict[str, int] = {}
        for i, k in enumerate(keys):
            if values[i] is None and k not in first_of:
                first_of[k] = i
        todo = list(first_of.values())
        if order is not None:
            todo.sort(key=order)  # e.g. by prompt, so a backend's prefix reuse spans chunks
        self.hits += len(payloads) - len(todo)
        for chunk in _chunks(todo, self.chunk_size):
            out = compute(list(chunk))
            self.cache.put_many([(keys[i], ident, method, v) for i, v in zip(chunk, out, strict=True)])
            for i, v in zip(chunk, out, strict=True):
                values[i] = v
            self.misses += len(chunk)
        for i, k in enumerate(keys):
            if values[i] is None:
                values[i] = values[first_of[k]]
        return values

    def score(self, pairs: Sequence[tuple[str, str]], *, vocab_stats: bool = False) -> list[TokenScores]:
        pairs = [(p, c) for p, c in pairs]  # tuples (hashable, JSON-stable) even when given lists
        payloads = [{"prompt": p, "continuation": c, "vocab_stats": vocab_stats} for p, c in pairs]

        def compute(idx: list[int]) -> list[Any]:
            return [s.to_dict() for s in self.inner.score([pairs[i] for i in idx], vocab_stats=vocab_stats)]

        # Scores stored with vocabulary statistics also answer a request without them.
        fallbacks = None if vocab_stats else [{**p, "vocab_stats": True} for p in payloads]
        vals = self._run("score", payloads, compute, order=lambda i: pairs[i], fallbacks=fallbacks)
        return [TokenScores.from_dict(v) for v in vals]

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
        seed: int = 0,
        stop: Sequence[str] | None = None,
        prefill: str | None = None,
        logprobs: bool = False,
    ) -> list[list[Completion]]:
        params = {
            "max_new_tokens": max_new_tokens,
            "temperature": float(temperature),
            "n": n,
            "seed": seed,
            "stop": list(stop) if stop else None,
            "prefill": prefill,
            "logprobs": logprobs,
        }
        prompts = list(prompts)
        payloads = [{"prompt": p, **params} for p in prompts]

        def compute(idx: list[int]) -> list[Any]:
            outs = self.inner.generate(
                [prompts[i] for i in idx],
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                n=n,
                seed=seed,
                stop=stop,
                prefill=prefill,
                logprobs=logprobs,
            )
            return [[c.to_dict() for c in cs] for cs in outs]

        vals = self._run("generate", payloads, compute)
        return [[Completion.from_dict(c) for c in cs] for cs in vals]

    def complete_box(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int = 32, seed: int = 0, stop: Sequence[str] | None = None
    ) -> list[Completion]:
        """:func:`contam.models.base.boxed_completions` of the wrapped model, each answer kept on disk."""
        prompts = list(prompts)
        params = {"max_new_tokens": max_new_tokens, "seed": seed, "stop": list(stop) if stop else None}
        payloads = [{"prompt": p, **params} for p in prompts]

        def compute(idx: list[int]) -> list[Any]:
            outs = boxed_completions(self.inner, [prompts[i] for i in idx], max_new_tokens=max_new_tokens, seed=seed, stop=stop)
            return [c.to_dict() for c in outs]

        return [Completion.from_dict(v) for v in self._run("complete_box", payloads, compute)]
