"""A recall-safe prefilter in front of the exact n-gram scorer: which documents of a batch can
possibly be flagged at the token level.

The exact scorer (:class:`contam.scan.ngram.NGramScanner`) only looks at a document if one of
its windows of ``n`` words is a benchmark n-gram, or one of its windows of ``min_words`` words
is an anchor of a short item part. The prefilter asks the same two questions with a cheaper
hash, over a whole batch at once, and passes on only the documents where the answer may be
yes; in a web corpus that is well under one document in a hundred.

Why it never drops a document the scorer would flag: it cuts the text into exactly the words
:func:`contam.scan.hashing.word_hashes` cuts (same lowercasing, same separators, same
encoding), gives every word a key that depends only on the word's lowercase (its first eight
bytes, folded), and keys a window by the sum of its words' keys. Equal word sequences
therefore get equal window keys, and the benchmark's windows are keyed by the very same
functions. A window key found in the benchmark set (two bitmaps, then an exact check) makes
the document a candidate; a sum can also match by accident (other words, or the same words in
another order), which only costs a wasted candidate. Windows that straddle two documents of a
batch are checked too, which can only add candidates.

The folding: ASCII letters are lowercased and every byte of a non-ASCII character reads as
0x80, so a character and its lowercase fold alike, except for the few characters of
:func:`find_case_changers` (the Kelvin sign lowercases to ASCII ``k``, a dotted capital I to two
characters) and the characters the token level's fold changes (:func:`find_fold_changers`): a
text holding one is folded (:func:`contam.data.normalize.fold`) and cut again. An invisible
character the fold drops (a zero-width space) is cut as a separator where no word character
precedes it, which is what dropping it gives; only one after a word character (it may join two
words) has the text folded.

One compiled pass (numba, 8 bytes at a time) does the cutting, folding, keying and the first
lookups, over a batch of texts or straight over the raw bytes of JSON lines, so the texts
are never encoded again. There a line's words are read in place: the escapes ``\\n``,
``\\"``, ``\\t``, ... are two bytes outside words, as the characters they stand for are, and so
is a ``\\u`` escape of a separator; a line with a ``\\u`` escape of a word character (which
the in-place layout cannot hold) is cut again from its parsed text. The words of a record's
text field are then a run of the words of its line (the quotes around the string are
separators; keys and other fields only add windows, which can only add candidates). The pass
also tells whether every line ends outside any JSON value, which lets the scan job parse a
block of lines as one JSON array.

Only the benchmark windows' heads (their first ``m`` words, ``m`` the shortest window length)
are looked up, and for the n-grams only the heads every ``n - m + 1`` words of a part: an
n-gram's first ``n - m + 1`` words hold exactly one of those, so a corpus n-gram equal to a
benchmark one still holds a head, and the bitmaps stay small enough for the processor's cache.

>>> from contam.data import load_benchmark
>>> from contam.scan.ngram import NGramConfig, NGramScanner
>>> items = load_benchmark("gsm8k")
>>> pf = NGramScanner(NGramConfig()).fit(items).prefilter
>>> texts = ["Nothing to see here, just a recipe for soup.", "Quiz: " + items[3].question]
>>> pf.candidates(texts).tolist()
[1]
>>> import json
>>> block = "".join(json.dumps({"id": i, "text": t}) + "\\n" for i, t in enumerate(texts)).encode()
>>> found = pf.candidates_jsonl(block, field="text")
>>> found.candidates.tolist(), found.odd.tolist(), len(found.ends), found.one_value_each, found.status.tolist()
([1], [], 2, True, [1, 1])
"""

from __future__ import annotations

import ctypes
import math
from typing import NamedTuple

import numpy as np

from contam.data.jsonl_check import UNSURE, check_lines
from contam.data.normalize import fold
from contam.scan.prefilter_kernels import _TEXT_END, _bloom, _confirm, _scan
from contam.scan.prefilter_tables import (
    _BIT_COUNT,
    _QUOTE_PARITY,
    _SLOT_CNT,
    _SLOT_POS,
    _tables,
)

# The ``X as X`` imports are re-exports: tests and benchmarks import them from here.
from contam.scan.prefilter_tables import _CASE_CHANGERS_14 as _CASE_CHANGERS_14
from contam.scan.prefilter_tables import find_case_changers as find_case_changers
from contam.scan.prefilter_tables import find_fold_changers as find_fold_changers


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to keep freed memory for reuse instead of handing it back to the
    system, so the batch-sized temporaries of every batch do not page-fault afresh. Memory stays
    bounded by the largest batch's needs. Process-wide: the scan job calls it in its workers.
    Returns whether it took effect."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        # M_MMAP_THRESHOLD (-3): serve large blocks from the heap; M_TRIM_THRESHOLD (-1): keep its top.
        return bool(libc.mallopt(-3, 256 << 20)) and bool(libc.mallopt(-1, 512 << 20))
    except (OSError, AttributeError):  # not glibc: nothing to tune
        return False


class _Scratch:
    """Arrays reused from batch to batch (fresh multi-megabyte arrays cost page faults)."""

    def __init__(self) -> None:
        self.size = 0
        self.ends = np.zeros(1, dtype=np.int64)
        self.n_ends = 0
        self.n_hits = 0
        self.split = False
        self.lost = 0
        self.get(1 << 16)

    def get(self, n_bytes: int) -> _Scratch:
        if n_bytes > self.size or self.size > max(4 * n_bytes, 16 << 20):  # grow (with room: batches vary), or shrink after a huge one
            self.size = max(n_bytes + (n_bytes >> 3), 1 << 16)
            chunks = (self.size >> 3) + 2
            self.raw = np.zeros(chunks, dtype=np.uint64)
            self.out = np.zeros(chunks, dtype=np.uint64)
            self.W = np.zeros(chunks, dtype=np.uint64)
            self.flags = np.zeros(chunks, dtype=np.uint8)
            words = (self.size >> 1) + 8  # a word is at least one byte and a separator; + 4 slots of slack
            self.starts = np.empty(words, dtype=np.int32 if self.size < 1 << 31 else np.int64)  # narrow: stored once a word
            self.c = np.empty(words + 1, dtype=np.uint64)
            self.hits = np.empty(words, dtype=np.int64)
            # Records (lines, texts) number at most one a byte, plus one.
            self.odd = np.empty(self.size + 2, dtype=np.int64)
            self.ends = np.empty(self.size + 2, dtype=np.int64)
        return self


_SCRATCH = _Scratch()
_NO_BLOOM = np.zeros(1, dtype=np.uint64)


def _cut_bytes(
    data: bytes, json_mode: bool, n_rec: int, fold_changers: bool = False, pf: Prefilter | None = None
) -> tuple[_Scratch, int, np.ndarray]:
    """Cut ``data`` (see :func:`_cut`) and key its words: the scratch arrays (``c``: the running
    key sums, ``ends``/``n_ends``: the record ends; with a prefilter ``pf``, ``hits``/``n_hits``:
    the windows its filter passed), the number of words, the odd records (sorted indices)."""
    ws = _SCRATCH.get(len(data))
    nq = (len(data) + 7) >> 3
    raw = ws.raw.view(np.uint8)
    raw[: len(data)] = np.frombuffer(data, dtype=np.uint8)  # an aligned copy, zero-padded
    raw[len(data) : (nq + 1) * 8] = 0
    ws.out[nq : nq + 2] = 0
    nw, ws.n_ends, n_odd, ws.split, ws.lost, ws.n_hits = _scan(
        ws.raw[: nq + 1],
        len(data),
        json_mode,
        fold_changers,
        *_tables(),
        _SLOT_POS,
        _SLOT_CNT,
        _QUOTE_PARITY,
        _BIT_COUNT,
        ws.out,
        ws.W,
        ws.flags,
        ws.starts,
        ws.odd[: n_rec + 1],
        ws.ends[: n_rec + 1],
        ws.c,
        pf.m if pf else 1 << 62,
        pf.bloom if pf else _NO_BLOOM,
        pf.bloom_shift if pf else np.uint64(63),
        ws.hits,
    )
    return ws, nw, ws.odd[:n_odd].copy()


def _cut_texts(texts: list[str], fold_changers: bool = False, pf: Prefilter | None = None) -> tuple[_Scratch, int, np.ndarray]:
    """Words of ``texts``: the scratch arrays, the number of words, which texts hold a case changer."""
    return _cut_bytes(bytes([_TEXT_END]).join([t.encode("utf-8", "surrogatepass") for t in texts]), False, len(texts), fold_changers, pf)


def text_keys(texts: list[str]) -> list[np.ndarray]:
    """The word keys of each text, in reading order (one key per word the exact scorer sees).

    >>> a, b = text_keys(["Janet’s DUCKS", "janet s ducks"])
    >>> a.tolist() == b.tolist()
    True
    """
    ws, nw, odd = _cut_texts(texts)
    if len(odd):  # rare: fold the texts holding a case or fold changer, then cut again
        texts = list(texts)
        for i in odd.tolist():
            texts[i] = fold(texts[i])
        ws, nw, _ = _cut_texts(texts, fold_changers=True)
    keys = np.diff(ws.c[: nw + 1])  # wraps modulo 2**64, as the sums did
    bounds = np.concatenate([[0], np.searchsorted(ws.starts[:nw], ws.ends[: len(texts) - 1]), [nw]])
    return [keys[bounds[t] : bounds[t + 1]].copy() for t in range(len(texts))]


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    x = np.sort(x.astype(np.uint64))
    return x[np.concatenate([[True], x[1:] != x[:-1]])] if len(x) else x


class JsonlCandidates(NamedTuple):
    """What :meth:`Prefilter.candidates_jsonl` finds in a block of JSON lines."""

    candidates: np.ndarray  #: the lines that may hold a benchmark n-gram or anchor
    odd: np.ndarray  #: the lines to judge from their parsed text instead
    ends: np.ndarray  #: the offset of each line's newline (or of the block's end)
    one_value_each: bool  #: no line ends inside a JSON value
    status: np.ndarray | None  #: each line's :mod:`contam.data.jsonl_check` status, when a field was given


class Prefilter:
    """Window keys of the benchmark (n-grams and anchors) and the query over corpus batches.

    ``windows`` maps a window length to the keys of the benchmark's windows of that length
    (the n-grams; the anchors of short parts), ``heads`` to keys of windows of ``m`` words,
    ``m`` the shortest length, such that every window of that length holds one of them within
    its first ``back`` + 1 words (its first ``m`` words, by default). A corpus batch is looked
    up once, by its windows of ``m`` words: a filter that stays in the processor's cache (most
    windows stop there), a bitmap on the low bits of the key, the sorted keys; around the windows
    found, windows of the full lengths are checked. Built by
    :meth:`contam.scan.ngram_index.NGramIndex.build` from the same item parts as the exact index.
    """

    def __init__(
        self, windows: dict[int, np.ndarray], heads: dict[int, np.ndarray] | None = None, back: dict[int, int] | None = None
    ) -> None:
        windows = {n: k for n, k in windows.items() if len(k)}
        self.m = min(windows) if windows else 0
        self.full = {n: _sorted_unique(k) for n, k in windows.items()}
        head_keys = [(heads or {}).get(n, k) if n != self.m else k for n, k in windows.items()]
        self.heads = _sorted_unique(np.concatenate(head_keys)) if head_keys else np.zeros(0, dtype=np.uint64)
        # Two bitmaps: a small one on the key's top bits that stays in the processor's cache
        # (about 1 window in 50 passes), then a larger one on its low bits (about 1 in 100 of
        # those), then the sorted keys.
        n = max(len(self.heads), 1)
        small = int(min(21, max(12, math.ceil(math.log2(n * 48)))))
        large = int(min(23, max(16, math.ceil(math.log2(n * 96)))))
        self.bloom_shift = np.uint64(64 - (small - 6))
        self.bloom = _bloom(self.heads, self.bloom_shift)
        self.mask2 = np.uint64((1 << large) - 1)
        self.bits2 = np.zeros(1 << (large - 6), dtype=np.uint64)
        np.bitwise_or.at(self.bits2, (self.heads & self.mask2) >> np.uint64(6), np.uint64(1) << (self.heads & np.uint64(63)))
        self.full_n = np.array(list(self.full), dtype=np.int64)
        self.full_back = np.array([(back or {}).get(n, 0) for n in self.full], dtype=np.int64)
        self.full_off = np.concatenate([[0], np.cumsum([len(k) for k in self.full.values()])]).astype(np.int64)
        self.full_keys = np.concatenate(list(self.full.values())) if self.full else np.zeros(0, dtype=np.uint64)

    @classmethod
    def build(cls, parts: list[np.ndarray], n: int, anchors: list[tuple[int, int]], anchor_n: int) -> Prefilter:
        """From the word keys of every indexed part, the n-gram length, and the anchors
        (part, first word) of ``anchor_n`` words."""
        m = min(n, anchor_n) if anchors else n
        lens = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
        start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        words = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
        c = np.zeros(len(words) + 1, dtype=np.uint64)
        np.cumsum(words, out=c[1:])
        windows: dict[int, list[np.ndarray]] = {}
        heads: dict[int, list[np.ndarray]] = {}
        back = {n: n - m}
        with np.errstate(over="ignore"):
            if len(words) >= n:
                # Windows of n words that lie inside one part, all parts at once.
                owner = np.repeat(np.arange(len(parts)), lens)
                g = np.flatnonzero(owner[: len(words) - n + 1] == owner[n - 1 :])
                windows[n] = [c[g + n] - c[g]]
                # Heads: the windows of m words at every (n - m + 1)-th word of a part of at
                # least n words. An n-gram's first n - m + 1 words hold exactly one of those
                # starts, so a corpus n-gram equal to a benchmark one holds one head (at most
                # n - m words after its start), and a sixth of the keys keep the filter small.
                h = np.flatnonzero(owner[: len(words) - m + 1] == owner[m - 1 :])
                h = h[((h - start[owner[h]]) % (n - m + 1) == 0) & (lens[owner[h]] >= n)]
                heads[n] = [c[h + m] - c[h]]
            if anchors:
                g = np.array([start[p] + off for p, off in anchors], dtype=np.int64)
                windows.setdefault(anchor_n, []).append(c[g + anchor_n] - c[g])
                heads.setdefault(anchor_n, []).append(c[g + m] - c[g])
        return cls({k: np.concatenate(v) for k, v in windows.items()}, {k: np.concatenate(v) for k, v in heads.items()}, back)

    @property
    def keys(self) -> dict[int, np.ndarray]:
        return self.full

    def _marked(
        self, texts: list[str] | None, n_rec: int, block: bytes = b"", fold_changers: bool = False
    ) -> tuple[np.ndarray, np.ndarray, _Scratch]:
        """Cut ``texts`` (or the JSON lines ``block``, ``n_rec`` its capacity for lines) and
        look their windows up: a mask of the candidate records, the odd ones, the scratch."""
        if texts is not None:
            ws, nw, odd = _cut_texts(texts, fold_changers, self)
        else:
            ws, nw, odd = _cut_bytes(block, True, n_rec, pf=self)
        cand = np.zeros(ws.n_ends + 1 if texts is None else n_rec + 1, dtype=np.uint8)  # + 1: words after the last line end
        _confirm(
            ws.c,
            ws.starts,
            ws.ends[: ws.n_ends],
            nw,
            ws.hits,
            ws.n_hits,
            self.m,
            self.bits2,
            self.mask2,
            self.heads,
            self.full_n,
            self.full_back,
            self.full_off,
            self.full_keys,
            cand,
        )
        return cand, odd, ws

    def candidates(self, texts: list[str]) -> np.ndarray:
        """Sorted indices of the texts that may hold a benchmark n-gram or anchor."""
        if not texts or not self.m:
            return np.zeros(0, dtype=np.int64)
        cand, odd, _ = self._marked(texts, len(texts))
        cand = cand[: len(texts)]
        if len(odd):  # rare: texts holding a case or fold changer are cut again from their fold
            cand[odd] = self._folded_marks([texts[i] for i in odd.tolist()])
        return np.flatnonzero(cand)

    def _folded_marks(self, texts: list[str]) -> np.ndarray:
        """Which of ``texts`` are candidates, each cut from its fold (what an odd text needs;
        the fold of a text that needs none cuts into the same keys as the text itself)."""
        folded = [fold(t) for t in texts]
        return self._marked(folded, len(folded), fold_changers=True)[0][: len(folded)]

    def warm_up(self) -> None:
        """Compile (or load from numba's on-disk cache) the kernels a scan runs, once, in this
        process: forked workers then inherit them, and later processes find them cached."""
        self.candidates_jsonl(b'{"text": "warm up"}\n', field="text")

    def candidates_jsonl(self, block: bytes, field: str | None = None, max_line_bytes: int = 1 << 62) -> JsonlCandidates:
        """Candidates among the lines of a block of raw JSON lines (each line's text taken to
        be one of its JSON strings), cut from the raw bytes so the texts need not be decoded
        and encoded again: the candidate lines, the lines to judge from their text instead
        (:meth:`candidates_of_odd`), the end of each line (the offset of its newline, or of the
        block's end), and whether every line ends outside any JSON value (string, object,
        array). Sound only for valid JSON lines: parse them before trusting it, or pass the
        text ``field`` to have each line checked in the same call
        (:func:`contam.data.jsonl_check.check_lines`: ``status``)."""
        cand, odd, ws = self._marked(None, len(block) + 1, block)
        n_lines = ws.n_ends + (1 if block and not block.endswith(b"\n") else 0)
        ends = ws.ends[:n_lines].copy()
        if n_lines > ws.n_ends:  # the last line has no newline
            ends[-1] = len(block)
        found = np.flatnonzero(cand[:n_lines]) if self.m else np.zeros(0, dtype=np.int64)
        status = None
        if field is not None:  # the block is still in the scratch words, zero-padded
            status = check_lines(ws.raw[: ((len(block) + 7) >> 3) + 1], ends, field, max_line_bytes)
        if ws.lost:
            # The cut reads a backslash as a string escape wherever it stands; outside a string
            # (invalid JSON: a line holding just "\\") it swallowed a newline (counted in
            # ``lost``), so these line ends are not the block's. Vouch for nothing: the caller's exact reader names the bad line.
            if status is not None:
                status[:] = UNSURE
            return JsonlCandidates(found, odd[odd < n_lines], ends, False, status)
        return JsonlCandidates(found, odd[odd < n_lines], ends, not ws.split, status)

    def candidates_of_odd(self, cand: np.ndarray, odd: np.ndarray, texts: list[str]) -> np.ndarray:
        """:meth:`candidates_jsonl`'s candidates, with its odd lines (``texts``: every line's
        text) judged from their text instead."""
        if not len(odd):
            return cand
        mask = np.zeros(len(texts), dtype=np.uint8)
        mask[cand] = 1
        # Cut from their fold at once: most odd lines hold a fold changer, and cutting their
        # text first would only find that again.
        mask[odd] = self._folded_marks([texts[i] for i in odd.tolist()]) if self.m else 0
        return np.flatnonzero(mask)
