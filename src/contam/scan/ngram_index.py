"""The benchmark side of the n-gram scan: hashed n-grams of every item part, their IDF
weights, postings from n-gram to item part, and a bitmap that rejects almost every corpus
n-gram with one memory read.

Built once by :meth:`NGramIndex.build` and shipped (pickled) to every worker process.

>>> from contam.data import load_benchmark
>>> from contam.scan.ngram import NGramConfig
>>> index = NGramIndex.build(load_benchmark("humaneval"), NGramConfig())
>>> len(index.items), index.n_parts > 2 * len(index.items)
(164, True)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, overload

import numpy as np
from numba import njit

from contam.data import Item
from contam.errors import ConfigError
from contam.scan.exact import item_parts
from contam.scan.hashing import normalized_words, window_hashes, word_hashes
from contam.scan.prefilter import Prefilter, text_keys

if TYPE_CHECKING:
    from contam.scan.ngram import NGramConfig

#: Item parts, in the order their codes (0, 1, 2) are stored.
PART_NAMES = ("question", "answer", "seam")


@overload
def unique(x: np.ndarray, counts: Literal[False] = False) -> np.ndarray: ...
@overload
def unique(x: np.ndarray, counts: Literal[True]) -> tuple[np.ndarray, np.ndarray]: ...
def unique(x: np.ndarray, counts: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Sorted unique values (and their counts) by sorting: numpy's hash-based ``np.unique`` is
    several times slower on large integer arrays.

    >>> unique(np.array([3, 1, 3, 2]), counts=True)
    (array([1, 2, 3]), array([1, 1, 2]))
    """
    x = np.sort(x)
    keep = np.empty(len(x), dtype=bool)
    if len(x):
        keep[0] = True
        np.not_equal(x[1:], x[:-1], out=keep[1:])
    u = x[keep]
    if not counts:
        return u
    return u, np.diff(np.append(np.flatnonzero(keep), len(x)))


def in_sorted(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``np.isin(x, table)`` for a sorted ``table``, by binary search (``np.isin`` sorts or
    hashes ``table`` on every call).

    >>> in_sorted(np.array([5, 1, 7]), np.array([1, 2, 5])).tolist()
    [True, True, False]
    """
    if not len(table):
        return np.zeros(len(x), dtype=bool)
    pos = np.minimum(np.searchsorted(table, x), len(table) - 1)
    return table[pos] == x


def idf(df: np.ndarray, n_items: int) -> np.ndarray:
    """Inverse document frequency over the benchmark, ``log((N + 1) / df)``: an n-gram in every
    item weighs almost nothing, one in a single item weighs ``log(N + 1)``.

    >>> [round(float(x), 2) for x in idf(np.array([1, 10, 100]), 100)]
    [4.62, 2.31, 0.01]
    """
    return np.log((n_items + 1) / np.maximum(df, 1)).astype(np.float64)


@njit(cache=True, nogil=True)
def _cover(win_ngram, win_idf, tok, doc_ngrams, n, skip):
    """Per token of a part, the largest IDF of its windows (``n`` tokens each, window ``i``
    covering tokens ``i`` to ``i + n - 1``; ``win_ngram``: their n-grams' indices) found in the
    sorted ``doc_ngrams``; tokens in gaps of
    at most ``skip`` between covered ones get their own weight ``tok``. Also which windows were
    found. Compiled: called for every (document, part) pair that may reach the threshold."""
    cov = np.zeros(len(tok))
    matched = np.zeros(len(win_ngram), dtype=np.bool_)
    for i in range(len(win_ngram)):
        j = np.searchsorted(doc_ngrams, win_ngram[i])
        if j < len(doc_ngrams) and doc_ngrams[j] == win_ngram[i]:
            matched[i] = True
            w = win_idf[i]
            for k in range(i, min(i + n, len(tok))):
                if cov[k] < w:
                    cov[k] = w
    if skip:
        last = -1  # the last token covered by a window (filled gaps lie behind it: never read again)
        for t in range(len(tok)):
            if cov[t] > 0:
                if last >= 0 and 0 < t - last - 1 <= skip:
                    cov[last + 1 : t] = tok[last + 1 : t]
                last = t
    return cov, matched


@njit(cache=True, nogil=True)
def _count_parts(u, post_off, post_part, n_parts):
    """The parts (ascending) in the postings of the unique hash indices ``u``, and how many of
    ``u`` each one holds: ``unique(post_part[gathered postings], counts=True)`` in one pass."""
    counts = np.zeros(n_parts, dtype=np.int64)
    total = 0
    for x in u:
        total += post_off[x + 1] - post_off[x]
    seen = np.empty(total, dtype=np.int64)
    m = 0
    for x in u:
        for j in range(post_off[x], post_off[x + 1]):
            p = post_part[j]
            if counts[p] == 0:
                seen[m] = p
                m += 1
            counts[p] += 1
    parts = np.sort(seen[:m])
    return parts, counts[parts]


@njit(cache=True, nogil=True)
def match_runs(hit_u, hit_pos, matched_u, n):
    """The hits (n-gram index ``hit_u``, word position ``hit_pos``, ascending) on the n-grams
    ``matched_u``, merged into runs of words: windows of ``n`` words that overlap or touch join
    one run. Returns the distinct n-grams of ``matched_u`` (sorted), the runs' first and last
    words and the number of windows. Compiled: one call per flagged part instead of a handful
    of numpy calls and a Python loop.

    >>> u, a, b, k = match_runs(np.array([4, 9, 4, 7]), np.array([0, 2, 20, 30]), np.array([9, 4, 9]), 3)
    >>> u.tolist(), a.tolist(), b.tolist(), k
    ([4, 9], [0, 20], [4, 22], 3)
    """
    distinct = np.unique(matched_u)
    run_a = np.empty(len(hit_u), dtype=np.int64)
    run_b = np.empty(len(hit_u), dtype=np.int64)
    m = 0
    windows = 0
    for i in range(len(hit_u)):
        j = np.searchsorted(distinct, hit_u[i])
        if j < len(distinct) and distinct[j] == hit_u[i]:
            s = hit_pos[i]
            if m == 0 or s > run_b[m - 1] + 1:
                run_a[m] = s
                m += 1
            run_b[m - 1] = s + n - 1  # positions ascend, so the latest window ends last
            windows += 1
    return distinct, run_a[:m], run_b[:m], windows


class _ShortNorm(dict[int, str]):
    """Short part -> its normalised words joined by spaces, worked out on first use: only parts
    with an anchor hit in some document are ever compared whole."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: dict[int, str] = {}

    def __missing__(self, p: int) -> str:
        norm = self[p] = " ".join(normalized_words(self.texts[p]))
        return norm


class NGramIndex:
    """Hashed n-grams of a benchmark's item parts (see module docstring)."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.n = 13
        self.skip = 0
        self.part_item = np.zeros(0, dtype=np.int32)
        self.part_kind = np.zeros(0, dtype=np.int8)
        self.hashes = np.zeros(0, dtype=np.uint64)  # sorted unique n-gram hashes
        self.hash_idf = np.zeros(0, dtype=np.float64)
        self._win_off = np.zeros(1, dtype=np.int64)  # part p's windows: [_win_off[p], _win_off[p+1])
        self._win_idf = np.zeros(0, dtype=np.float64)
        self._tok_w: list[np.ndarray] = []  # per part: weight of each token (max IDF of its windows)
        self._tok_total = np.zeros(0, dtype=np.float64)
        self._max_w = np.zeros(0, dtype=np.float64)
        self._max_rep = np.zeros(0, dtype=np.int32)
        self._post_off = np.zeros(1, dtype=np.int64)
        self._post_part = np.zeros(0, dtype=np.int32)
        self._bits = np.zeros(1, dtype=bool)
        self._shift = np.uint64(63)
        # Short parts (fewer than anchor_words words): anchor hash -> (part, offset in the part).
        self.short_words: dict[int, np.ndarray] = {}
        self.short_norm = _ShortNorm()
        self._short_bytes: dict[int, bytes] = {}
        self._anchor_hash = np.zeros(0, dtype=np.uint64)
        self._anchor_part = np.zeros(0, dtype=np.int32)
        self._anchor_off = np.zeros(0, dtype=np.int64)
        self._anchor_order = np.zeros(0, dtype=np.int64)
        self._anchor_sorted = np.zeros(0, dtype=np.uint64)
        self._anchor_bits = np.zeros(1 << 20, dtype=bool)  # top 20 bits of each anchor hash (calloc'd: free until set)
        self.prefilter = Prefilter({})

    @property
    def n_parts(self) -> int:
        return len(self.part_item)

    @property
    def has_anchors(self) -> bool:
        return len(self._anchor_hash) > 0

    @classmethod
    def build(cls, items: list[Item], config: NGramConfig) -> NGramIndex:
        if not items:
            raise ConfigError("the benchmark has no items to index")
        self = cls()
        self.items, self.n, self.skip = items, config.n, config.skip
        n, kinds = config.n, {PART_NAMES.index(p) for p in config.parts}
        texts = [t for it in items for t in item_parts(it).values()]
        wh, _, _, doc = word_hashes(texts)
        bounds = np.searchsorted(doc, np.arange(len(texts) + 1))
        per_text = [wh[bounds[k] : bounds[k + 1]] for k in range(len(texts))]
        pf_text = text_keys(texts)
        if [len(k) for k in pf_text] != [len(w) for w in per_text]:  # the prefilter's recall rests on this
            raise AssertionError("prefilter and exact hashing cut the benchmark into different words")
        pf_parts: list[np.ndarray] = []
        part_words: list[np.ndarray] = []
        part_item: list[int] = []
        part_kind: list[int] = []
        anchors: list[tuple[int, int, int]] = []  # (part, offset, hash) for short parts
        for i in range(len(items)):
            q, a = per_text[2 * i], per_text[2 * i + 1]
            seam = np.concatenate([q[-(n - 1) :], a[: n - 1]]) if len(q) and len(a) else np.zeros(0, dtype=np.uint64)
            pq, pa = pf_text[2 * i], pf_text[2 * i + 1]
            pf_seam = np.concatenate([pq[-(n - 1) :], pa[: n - 1]]) if len(q) and len(a) else np.zeros(0, dtype=np.uint64)
            for kind, words, pf in ((0, q, pq), (1, a, pa), (2, seam, pf_seam)):
                if kind not in kinds or len(words) < (n if kind == 2 else config.min_words):
                    continue
                p = len(part_item)
                part_item.append(i)
                part_kind.append(kind)
                part_words.append(words)
                pf_parts.append(pf)
                if kind != 2 and len(words) < config.anchor_words:
                    # Short parts get anchors (first, middle, last min_words words) and are then
                    # compared whole: exact, or near-exact, where n-gram coverage is fragile.
                    self.short_words[p] = words
                    self._short_bytes[p] = words.tobytes()
                    self.short_norm.texts[p] = texts[2 * i + kind]
        self.part_item = np.array(part_item, dtype=np.int32)
        self.part_kind = np.array(part_kind, dtype=np.int8)
        win_hash = self._build_windows(part_words, n)
        self._build_weights(win_hash, len(items), config)
        self._build_postings(len(items), config.max_df)
        if self.short_words:
            short = list(self.short_words)
            words = np.concatenate([self.short_words[p] for p in short])
            owner = np.repeat(np.arange(len(short)), [len(self.short_words[p]) for p in short])
            h, first = window_hashes(words, owner, config.min_words)
            win_owner = owner[first]
            bounds = np.searchsorted(win_owner, np.arange(len(short) + 1))
            for k, p in enumerate(short):
                hk = h[bounds[k] : bounds[k + 1]]
                for off in sorted({0, (len(hk) - 1) // 2, len(hk) - 1}):
                    anchors.append((p, off, int(hk[off])))
        # The prefilter holds the same windows under its own keys: every n-gram, every anchor.
        self.prefilter = Prefilter.build(pf_parts, n, [(p, off) for p, off, _ in anchors], config.min_words)
        if anchors:
            self._anchor_part = np.array([a[0] for a in anchors], dtype=np.int32)
            self._anchor_off = np.array([a[1] for a in anchors], dtype=np.int64)
            self._anchor_hash = np.array([a[2] for a in anchors], dtype=np.uint64)
            self._anchor_order = np.argsort(self._anchor_hash, kind="stable")
            self._anchor_sorted = self._anchor_hash[self._anchor_order]
            self._anchor_bits[self._anchor_hash >> np.uint64(44)] = True
        return self

    def _build_windows(self, part_words: list[np.ndarray], n: int) -> np.ndarray:
        """Every window of every part (owner, first token, offsets); returns their hashes."""
        # Every part's windows in one vectorised call: the part index plays the document.
        self._part_len = np.array([len(w) for w in part_words], dtype=np.int64)
        self._tok_off = np.concatenate([[0], np.cumsum(self._part_len)]).astype(np.int64)
        words = np.concatenate(part_words) if part_words else np.zeros(0, dtype=np.uint64)
        owner = np.repeat(np.arange(len(part_words), dtype=np.int64), self._part_len)
        win_hash, first = window_hashes(words, owner, n)
        self._win_part = owner[first]
        self._win_tok = first  # global index of each window's first token
        self._win_off = np.searchsorted(self._win_part, np.arange(len(part_words) + 1)).astype(np.int64)
        return win_hash

    def _build_weights(self, win_hash: np.ndarray, n_items: int, config: NGramConfig) -> None:
        win_item = self.part_item[self._win_part].astype(np.int64)
        # Scanning needs each window's n-gram only as an index into the sorted distinct hashes.
        self.hashes, inverse = np.unique(win_hash, return_inverse=True)
        # Document frequency = number of distinct items whose parts contain the n-gram.
        pairs = unique(inverse.astype(np.int64) * (n_items + 1) + win_item)
        df = np.bincount(pairs // (n_items + 1), minlength=len(self.hashes))
        self.hash_idf = idf(df, n_items) if config.idf else np.ones(len(self.hashes))
        self._df = df
        self._win_idf = self.hash_idf[inverse]
        self._win_u = inverse.astype(np.int64)
        self._token_weights()
        # Largest number of times one n-gram repeats inside a part (for reachable_parts' bound).
        key, counts = unique(self._win_part * (len(self.hashes) + 1) + self._win_u, counts=True)
        self._max_rep = np.ones(self.n_parts, dtype=np.int64)
        np.maximum.at(self._max_rep, key // (len(self.hashes) + 1), counts)

    def _token_weights(self) -> None:
        # Token weight = the largest IDF of the windows covering the token. For a fixed offset k
        # the indices first + k are distinct, so plain fancy assignment is exact.
        tok = np.zeros(int(self._tok_off[-1]))
        for k in range(self.n):
            idx = self._win_tok + k
            tok[idx] = np.maximum(tok[idx], self._win_idf)
        self._tok_w = [tok[self._tok_off[p] : self._tok_off[p + 1]] for p in range(self.n_parts)]
        self._tok_total = np.add.reduceat(tok, self._tok_off[:-1]) if len(tok) else np.zeros(self.n_parts)
        self._max_w = np.maximum.reduceat(tok, self._tok_off[:-1]) if len(tok) else np.zeros(self.n_parts)

    def drop_ngrams(self, u: np.ndarray) -> int:
        """Make the n-grams ``u`` (indices into :attr:`hashes`) stop-grams: they weigh nothing in
        coverage and generate no candidates (:mod:`contam.scan.stopgrams`). Returns how many."""
        u = np.unique(np.asarray(u, dtype=np.int64))
        if not len(u):
            return 0
        self.hash_idf = self.hash_idf.copy()
        self.hash_idf[u] = 0.0
        self._win_idf = self.hash_idf[self._win_u]
        self._token_weights()
        self._df = self._df.copy()
        self._df[u] = np.iinfo(np.int64).max // 4  # above any max_df cap: out of the postings
        self._build_postings(len(self.items), self._max_df)
        self.stopgrams = np.union1d(getattr(self, "stopgrams", np.zeros(0, dtype=np.int64)), u)
        return len(u)

    def _build_postings(self, n_items: int, max_df: float) -> None:
        self._max_df = max_df
        cap = max(20, math.ceil(max_df * n_items))
        keep = self._df[self._win_u] <= cap
        key = unique(self._win_u[keep] * (self.n_parts + 1) + self._win_part[keep])
        u, p = key // (self.n_parts + 1), key % (self.n_parts + 1)
        self._post_part = p.astype(np.int32)
        self._post_off = np.searchsorted(u, np.arange(len(self.hashes) + 1)).astype(np.int64)
        # A bitmap over the top bits of the hash: ~3% load, so 97% of misses cost one read.
        bits = int(min(28, max(16, math.ceil(math.log2(max(len(self.hashes), 1) * 32)))))
        self._shift = np.uint64(64 - bits)
        self._bits = np.zeros(1 << bits, dtype=bool)
        self._bits[self.hashes >> self._shift] = True

    # -- queries ---------------------------------------------------------------------
    def lookup(self, h: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Indices (into :attr:`hashes`) and word positions of the windows ``h`` that are benchmark n-grams."""
        cand = self._bits[h >> self._shift]
        h2, f2 = h[cand], first[cand]
        if not len(h2):
            return np.zeros(0, dtype=np.int64), f2
        u = np.minimum(np.searchsorted(self.hashes, h2), len(self.hashes) - 1)
        ok = self.hashes[u] == h2
        return u[ok], f2[ok]

    def reachable_parts(self, u: np.ndarray, threshold: float) -> list[int]:
        """The parts, ascending, sharing n-grams ``u`` (unique hash indices) in enough number
        that they may reach ``threshold`` (a cheap upper bound on their coverage)."""
        parts, k = _count_parts(u, self._post_off, self._post_part, self.n_parts)
        windows = k * self._max_rep[parts]
        # Upper bound: every shared n-gram repeated as often as any repeats in the part, each
        # covering n tokens plus skip-gaps, every token at the part's largest weight.
        reach = (windows * self.n + (windows + 1) * self.skip) * self._max_w[parts]
        return parts[reach >= threshold * self._tok_total[parts]].tolist()

    def coverage(self, p: int, doc_ngrams: np.ndarray) -> tuple[float, np.ndarray]:
        """IDF-weighted fraction of part ``p``'s tokens covered by its n-grams found in
        ``doc_ngrams`` (sorted indices into :attr:`hashes`; gaps of at most ``skip`` tokens between
        covered ones count as covered);
        also the mask of the part's windows that matched."""
        a, b = self._win_off[p], self._win_off[p + 1]
        cov, matched = _cover(self._win_u[a:b], self._win_idf[a:b], self._tok_w[p], doc_ngrams, self.n, self.skip)
        total = self._tok_total[p]
        return (float(cov.sum() / total) if total > 0 else 0.0), matched

    def window_ngrams(self, p: int) -> np.ndarray:
        """Index (into :attr:`hashes`) of the n-gram of each of part ``p``'s windows."""
        return self._win_u[self._win_off[p] : self._win_off[p + 1]]

    def anchor_hits(self, h: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Corpus windows equal to an anchor, as three arrays: the part, the word index where
        the part would start, the word index of the anchor (one entry per anchor hit)."""
        empty = np.zeros(0, dtype=np.int64)
        cand = np.flatnonzero(self._anchor_bits[h >> np.uint64(44)])
        if not len(cand):
            return empty, empty, empty
        hit = cand[in_sorted(h[cand], self._anchor_sorted)]
        lo = np.searchsorted(self._anchor_sorted, h[hit])
        count = np.searchsorted(self._anchor_sorted, h[hit], side="right") - lo
        # Each hit window, repeated once per anchor with its hash, and those anchors in
        # ``_anchor_order`` order: rank k of the group is the k-th after ``lo``.
        which = np.repeat(np.arange(len(hit)), count)
        rank = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
        j = self._anchor_order[lo[which] + rank]
        at = first[hit][which].astype(np.int64)
        return self._anchor_part[j].astype(np.int64), at - self._anchor_off[j], at

    def short_key(self, p: int) -> bytes:
        """Short part ``p``'s word hashes as bytes: comparing bytes is several times cheaper than
        ``np.array_equal`` on arrays this small (equal bytes, equal arrays: same dtype)."""
        return self._short_bytes[p]
