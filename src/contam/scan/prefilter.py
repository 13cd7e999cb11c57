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
functions. A window key found in the benchmark set (a bitmap, then an exact check) makes
the document a candidate; a sum can also match by accident (other words, or the same words in
another order), which only costs a wasted candidate. Windows that straddle two documents of a
batch are checked too, which can only add candidates.

>>> from contam.data import load_benchmark
>>> from contam.scan.ngram import NGramConfig, NGramScanner
>>> items = load_benchmark("gsm8k")
>>> pf = NGramScanner(NGramConfig()).fit(items).prefilter
>>> texts = ["Nothing to see here, just a recipe for soup.", "Quiz: " + items[3].question]
>>> pf.candidates(texts).tolist()
[1]
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import math
import unicodedata

import numpy as np

from contam.scan.hashing import SEPARATORS

_SPACE = 32
_PAD = b" " * 8  # the 8-byte reads may reach 7 bytes before a word or after it
_SEP2 = np.array(sorted(int.from_bytes(s.encode(), "big") for s in SEPARATORS if len(s.encode()) == 2), dtype=np.int64)
_SEP3 = np.array(sorted(int.from_bytes(s.encode(), "big") for s in SEPARATORS if len(s.encode()) == 3), dtype=np.int64)
_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_ONE, _S7 = np.uint64(1), np.uint64(7)
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_S29 = np.uint64(29)


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to keep freed memory for reuse instead of handing it back to the
    system, so the batch-sized numpy temporaries of every batch do not page-fault afresh (about
    a third of the scan's time otherwise). Memory stays bounded by the largest batch's needs.
    Process-wide: the scan job calls it in its workers. Returns whether it took effect."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        # M_MMAP_THRESHOLD (-3): serve large blocks from the heap; M_TRIM_THRESHOLD (-1): keep its top.
        return bool(libc.mallopt(-3, 256 << 20)) and bool(libc.mallopt(-1, 512 << 20))
    except (OSError, AttributeError):  # not glibc: nothing to tune
        return False


class _Scratch:
    """Per-byte arrays reused from batch to batch (fresh multi-megabyte arrays cost page faults)."""

    def __init__(self) -> None:
        self.size = 0
        self.get(1 << 16)

    def get(self, n: int) -> _Scratch:
        if n > self.size or self.size > max(4 * n, 32 << 20):  # grow, or shrink after a huge batch
            self.size = max(n, 1 << 16)
            self.low = np.empty(self.size, dtype=np.uint8)
            self.tmp = np.empty(self.size, dtype=np.uint8)
            self.isw = np.empty(self.size, dtype=bool)
            self.aux = np.empty(self.size, dtype=bool)
        return self


_SCRATCH = _Scratch()


#: The characters of :func:`_case_changers` in the Unicode version of Python 3.11 (14.0.0).
_CASE_CHANGERS_14 = "\u0130\u023a\u023e\u1e9e\u2126\u212a\u212b\u2c62\u2c64\u2c6d\u2c6e\u2c6f\u2c70\u2c7e\u2c7f\ua78d\ua7aa\ua7ab\ua7ac\ua7ad\ua7ae\ua7b0\ua7b1\ua7b2\ua7c5"


def find_case_changers() -> str:
    """Every character whose lowercase differs from it in more than the bytes :func:`normalize`
    folds: another UTF-8 length, an ASCII character, or another word class (e.g. the Kelvin
    sign, whose lowercase is ``k``). A brute-force pass over all of Unicode (a fraction of a second)."""
    seps = set(SEPARATORS)
    out = []
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        low = c.lower()
        if low == c or 0xD800 <= cp < 0xE000:
            continue
        if len(low) != 1 or len(low.encode()) != len(c.encode()) or low.isascii() or ((c in seps) != (low in seps)):
            out.append(c)
    return "".join(out)


@functools.cache
def _case_changers() -> dict[int, np.ndarray]:
    """UTF-8 codes (as integers, by encoded length) of the case changers: texts holding one are
    lowercased by ``str.lower`` before folding. A few dozen characters; listed for this
    Python's Unicode version, found afresh under another."""
    chars = _CASE_CHANGERS_14 if unicodedata.unidata_version == "14.0.0" else find_case_changers()
    out: dict[int, list[int]] = {2: [], 3: [], 4: []}
    for c in chars:
        enc = c.encode()
        out[len(enc)].append(int.from_bytes(enc, "big"))
    return {k: np.array(sorted(v), dtype=np.int64) for k, v in out.items()}


def _codes(b: np.ndarray, lead: np.ndarray, k: int) -> np.ndarray:
    """The ``k``-byte big-endian integers starting at ``lead`` (0 where they would run past ``b``)."""
    ok = lead + (k - 1) < len(b)
    code = np.zeros(len(lead), dtype=np.int64)
    at = lead[ok]
    val = b[at].astype(np.int64)
    for j in range(1, k):
        val = (val << 8) | b[at + j]
    code[ok] = val
    return code


def normalize(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The texts cut into words as :func:`contam.scan.hashing.normalize_batch` cuts them, in one
    buffer, with the bytes of every word folded so that a word and its lowercase read the same.

    The folding: ``b | 0x20`` on every byte (lowercases ASCII letters, leaves digits), and every
    byte of a non-ASCII character read as 0x80. A character and its lowercase then fold to the
    same bytes, except for the few of :func:`_case_changers`, whose texts are lowercased by
    ``str.lower`` first (folding the lowercase again changes nothing). ASCII texts come first,
    the others after them, so the passes over non-ASCII characters only read the tail.

    Returns the folded bytes (8 bytes of padding at both ends; bytes outside words are 0), the
    word-character mask, the order the texts were laid out in and the byte offset of each
    laid-out text (plus the end). Both arrays are scratch space, valid until the next call.
    """
    is_ascii = np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))
    if is_ascii.all():
        order = np.arange(len(texts), dtype=np.int64)
        raw = b"".join((_PAD, " ".join(texts).encode("ascii"), _PAD))
        tail_at = len(raw)
        lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        lead = np.zeros(0, dtype=np.int64)
    else:
        other = np.flatnonzero(~is_ascii)
        order = np.concatenate([np.flatnonzero(is_ascii), other])
        asc = list(itertools.compress(texts, is_ascii.tolist()))
        head = " ".join(asc).encode("ascii")
        tail_at = len(_PAD) + len(head) + (1 if asc else 0)
        wide = [t.encode("utf-8", "surrogatepass") for t in itertools.compress(texts, (~is_ascii).tolist())]
        tail = b" ".join(wide)
        tb = np.frombuffer(tail, dtype=np.uint8)
        lead = np.flatnonzero(tb >= 0xC2)  # first bytes of the non-ASCII characters
        changers = _case_changers()
        odd = np.concatenate([lead[_in(_codes(tb, lead, k), changers[k])] for k in (2, 3, 4) if len(changers[k])] or [lead[:0]])
        if len(odd):  # rare: lowercase the texts holding such a character, then lay the tail out again
            ends = np.cumsum(np.fromiter(map(len, wide), dtype=np.int64, count=len(wide)) + 1)
            for j in np.unique(np.searchsorted(ends, odd, side="right")).tolist():
                wide[j] = texts[int(other[j])].lower().encode("utf-8", "surrogatepass")
            tail = b" ".join(wide)
            lead = np.flatnonzero(np.frombuffer(tail, dtype=np.uint8) >= 0xC2)
        raw = b"".join((_PAD, head, b" " if asc else b"", tail, _PAD))
        lead += tail_at
        lens = np.fromiter([*map(len, asc), *map(len, wide)], dtype=np.int64, count=len(texts))
    offsets = np.empty(len(texts) + 1, dtype=np.int64)
    offsets[0] = len(_PAD)
    np.cumsum(lens + 1, out=offsets[1:])
    offsets[1:] += len(_PAD)
    n = len(raw)
    ws = _SCRATCH.get(n)
    b = np.frombuffer(raw, dtype=np.uint8)
    low, tmp, isw, aux = ws.low[:n], ws.tmp[:n], ws.isw[:n], ws.aux[:n]
    np.bitwise_or(b, 0x20, out=low)
    # Word characters: ASCII letters and digits, any byte >= 128 (0x10-0x19 | 0x20 would pass
    # for digits, hence the digit test on the raw bytes).
    np.subtract(low, 97, out=tmp)
    np.less(tmp, 26, out=isw)
    np.subtract(b, 48, out=tmp)
    np.less(tmp, 10, out=aux)
    isw |= aux
    np.greater_equal(b, 128, out=aux)
    isw |= aux
    if len(lead):
        # Separator characters (curly quotes, dashes, ...) are not word characters.
        hit2 = lead[_in(_codes(b, lead, 2), _SEP2)]
        hit3 = lead[_in(_codes(b, lead, 3), _SEP3)]
        for k in range(2):
            isw[hit2 + k] = False
        for k in range(3):
            isw[hit3 + k] = False
        np.minimum(low[tail_at:], 0x80, out=low[tail_at:])  # fold every non-ASCII byte
    np.multiply(low, isw.view(np.uint8), out=low)  # bytes outside words: 0
    return low, isw, order, offsets


def _in(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    pos = np.minimum(np.searchsorted(table, x), len(table) - 1)
    return table[pos] == x


def word_keys(low: np.ndarray, isw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit key per word (a function of the word's first 8 bytes only) and the byte offset
    where each word starts, from :func:`normalize`'s output (bytes outside words are 0)."""
    starts = np.flatnonzero(isw[1:] > isw[:-1])  # padding: the buffer starts outside a word
    # Unaligned 8-byte reads at every byte offset, shifted by one: v[i] reads low[i + 1 : i + 9].
    v = np.ndarray(shape=(len(low) - 8,), dtype="<u8", buffer=low, offset=1, strides=(1,))
    key = v[starts]
    with np.errstate(over="ignore"):
        # Keep the bytes before the first zero byte (the word's end): the lowest byte flagged
        # by the classic has-zero-byte test is exact. Longer words keep their first 8 bytes;
        # two that agree on them share a key, which only costs a wasted candidate.
        t = key - _ONES
        m = ~key
        t &= m
        t &= _HIGHS
        np.negative(t, out=m)
        m &= t  # the lowest flagged bit, or 0
        m >>= _S7
        m -= _ONE  # ones below the first zero byte; all ones if the word fills the 8 bytes
        key &= m
        # Multiply (spreads the bytes to the top bits the bitmap reads), fold, multiply: sums of
        # keys that are not linear in the bytes, so only the same words in another order (or a
        # 64-bit accident) collide, which only costs a wasted candidate.
        key *= _K1
        key ^= key >> _S29
        key *= _K2
    starts += 1
    return key, starts


def text_keys(texts: list[str]) -> list[np.ndarray]:
    """The word keys of each text, in reading order (one key per word the exact scorer sees).

    >>> a, b = text_keys(["Janet’s DUCKS", "janet s ducks"])
    >>> a.tolist() == b.tolist()
    True
    """
    low, isw, order, offsets = normalize(texts)
    keys, starts = word_keys(low, isw)
    bounds = np.searchsorted(starts, offsets)
    out: list[np.ndarray] = [np.zeros(0, dtype=np.uint64)] * len(texts)
    for slot, t in enumerate(order.tolist()):
        out[t] = keys[bounds[slot] : bounds[slot + 1]].copy()
    return out


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    x = np.sort(x.astype(np.uint64))
    return x[np.concatenate([[True], x[1:] != x[:-1]])] if len(x) else x


class _Table:
    """Sorted window keys of one length behind two bitmaps: a small one that stays in the
    processor's cache (most windows stop there) and a large one on other bits of the key."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = _sorted_unique(keys)
        n = max(len(self.keys), 1)
        small = int(min(20, max(12, math.ceil(math.log2(n * 6)))))
        large = int(min(25, max(16, math.ceil(math.log2(n * 64)))))
        self.shift1 = np.uint64(64 - small)
        self.mask2 = np.uint64((1 << large) - 1)
        self.bits1 = np.zeros(1 << small, dtype=bool)
        self.bits1[self.keys >> self.shift1] = True
        self.bits2 = np.zeros(1 << large, dtype=bool)
        self.bits2[self.keys & self.mask2] = True

    def hits(self, w: np.ndarray) -> np.ndarray:
        """Indices of the windows ``w`` whose key is in the table."""
        cand = np.flatnonzero(np.take(self.bits1, w >> self.shift1))
        if not len(cand):
            return cand
        wc = w[cand]
        keep = np.take(self.bits2, wc & self.mask2)
        cand, wc = cand[keep], wc[keep]
        if not len(cand):
            return cand
        pos = np.minimum(np.searchsorted(self.keys, wc), len(self.keys) - 1)
        return cand[self.keys[pos] == wc]


class Prefilter:
    """Window keys of the benchmark (n-grams and anchors) and the query over corpus batches.

    ``windows`` maps a window length to the keys of the benchmark's windows of that length
    (the n-grams; the anchors of short parts), ``heads`` to the keys of their first ``m``
    words, ``m`` the shortest length. A corpus batch is looked up once, by its windows of
    ``m`` words; only those found are checked at their full lengths. Built by
    :meth:`contam.scan.ngram_index.NGramIndex.build` from the same item parts as the exact
    index.
    """

    def __init__(self, windows: dict[int, np.ndarray], heads: dict[int, np.ndarray] | None = None) -> None:
        windows = {n: k for n, k in windows.items() if len(k)}
        self.m = min(windows) if windows else 0
        self.full = {n: _sorted_unique(k) for n, k in windows.items()}
        head_keys = [(heads or {}).get(n, k) if n != self.m else k for n, k in windows.items()]
        self.first = _Table(np.concatenate(head_keys)) if head_keys else None

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
        with np.errstate(over="ignore"):
            if len(words) >= n:
                # Windows of n words that lie inside one part, all parts at once.
                owner = np.repeat(np.arange(len(parts)), lens)
                g = np.flatnonzero(owner[: len(words) - n + 1] == owner[n - 1 :])
                windows[n] = [c[g + n] - c[g]]
                heads[n] = [c[g + m] - c[g]]
            if anchors:
                g = np.array([start[p] + off for p, off in anchors], dtype=np.int64)
                windows.setdefault(anchor_n, []).append(c[g + anchor_n] - c[g])
                heads.setdefault(anchor_n, []).append(c[g + m] - c[g])
        return cls({k: np.concatenate(v) for k, v in windows.items()}, {k: np.concatenate(v) for k, v in heads.items()})

    @property
    def keys(self) -> dict[int, np.ndarray]:
        return self.full

    def candidates(self, texts: list[str]) -> np.ndarray:
        """Sorted indices of the texts that may hold a benchmark n-gram or anchor."""
        if not texts or self.first is None:
            return np.zeros(0, dtype=np.int64)
        low, isw, order, offsets = normalize(texts)
        keys, starts = word_keys(low, isw)
        if len(keys) < self.m:
            return np.zeros(0, dtype=np.int64)
        c = np.empty(len(keys) + 1, dtype=np.uint64)
        c[0] = 0
        np.cumsum(keys, out=c[1:])
        with np.errstate(over="ignore"):
            at = self.first.hits(c[self.m :] - c[: -self.m])
            if not len(at):
                return at
            found = []
            for n, table in self.full.items():
                ok = at[at + n < len(c)]
                w = c[ok + n] - c[ok]
                found.append(ok[_in(w, table)])
        first = np.concatenate(found)
        if not len(first):
            return first
        # The text holding each hit window's first word. A window straddling two texts is never
        # a hit of the exact scorer: naming its first text only wastes a candidate.
        slot = np.searchsorted(offsets, starts[first], side="right") - 1
        return np.unique(order[np.unique(slot)])
