"""Vectorised word and n-gram hashing: the fast path of the token-level (L1) scan.

Text is normalised the GPT-3 / lm-eval way (lowercase, punctuation dropped, split on what is
left) and every word and every window of ``n`` consecutive words is hashed to a 64-bit integer
with numpy, over a whole batch of documents at once, so the per-byte work runs in C.

A *word* is a maximal run of characters that are ASCII letters or digits or non-ASCII
characters other than the common Unicode punctuation and spaces in :data:`SEPARATORS`.
:data:`WORD_RE` spells the same rule as a regular expression; the slow path (spans of the
words of a flagged document) uses it, and it finds exactly the words the fast path hashes.

>>> wh, starts, ends, doc = word_hashes(["Janet’s ducks lay 16 eggs!", "Janet's DUCKS"])
>>> len(wh), [int(d) for d in doc]
(9, [0, 0, 0, 0, 0, 0, 1, 1, 1])
>>> bool(wh[0] == wh[6]) and bool(wh[2] == wh[8])  # janet == janet, ducks == ducks
True
"""

from __future__ import annotations

import re
from typing import Literal, overload

import numpy as np

from contam.data.normalize import fold, fold_spans

#: Non-ASCII characters treated as separators (curly quotes, dashes, ellipsis, odd spaces,
#: bullets, the minus sign). Everything else non-ASCII counts as a word character. Zero-width
#: characters are not separators: :func:`contam.data.normalize.fold` drops them first.
SEPARATORS = "\u00a0\u00ab\u00b7\u00bb\u2002\u2003\u2009\u2010\u2011\u2012\u2013\u2014\u2015\u2018\u2019\u201a\u201c\u201d\u201e\u2022\u2026\u2032\u2033\u2212\u3000"

#: Regular-expression twin of the fast path's word rule (used for spans in the original text).
WORD_RE = re.compile("[^\\x00-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f" + SEPARATORS + "]+")

# ASCII: letters and digits stay (already lowercased), every other ASCII byte becomes a space.
_ASCII_TABLE = bytes(c if (48 <= c <= 57 or 97 <= c <= 122 or c >= 128) else 32 for c in range(256))
# UTF-8 codes of the separators, as integers, by encoded length (all are 2 or 3 bytes long).
_SEP2 = np.array(sorted(int.from_bytes(s.encode("utf-8"), "big") for s in SEPARATORS if len(s.encode("utf-8")) == 2), dtype=np.int64)
_SEP3 = np.array(sorted(int.from_bytes(s.encode("utf-8"), "big") for s in SEPARATORS if len(s.encode("utf-8")) == 3), dtype=np.int64)
assert len(_SEP2) + len(_SEP3) == len(SEPARATORS)

_SPACE = 32
#: Buffers longer than this are hashed in segments cut at spaces (a 20 MB document must not
#: need 20 M-entry power tables).
SEGMENT_BYTES = 4 << 20
_rng = np.random.default_rng(0x5EED_C0DE)
#: Random 64-bit code per byte value (0 for the space so separators add nothing).
_BYTE_CODE = _rng.integers(1, 2**63 - 1, size=256, dtype=np.uint64) | np.uint64(1)
_BYTE_CODE[_SPACE] = 0
_MIX = np.uint64(0xD6E8FEB86659FD93)
_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd, so it is invertible modulo 2**64
_BASE_INV = np.uint64(pow(int(_BASE), -1, 2**64))


class _Powers:
    """Cached ``BASE**i`` and ``BASE**-i`` modulo 2**64, grown on demand."""

    def __init__(self) -> None:
        self.pow = np.ones(1, dtype=np.uint64)
        self.inv = np.ones(1, dtype=np.uint64)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if n > len(self.pow):
            size = max(1 << 16, 1 << (n - 1).bit_length())  # next power of two: few regrowths
            # One allocation each, filled in place: fresh pages are what costs here.
            with np.errstate(over="ignore"):
                self.pow = np.empty(size, dtype=np.uint64)
                self.pow.fill(_BASE)
                self.pow[0] = 1
                np.cumprod(self.pow, out=self.pow)
                self.inv = np.empty(size, dtype=np.uint64)
                self.inv.fill(_BASE_INV)
                self.inv[0] = 1
                np.cumprod(self.inv, out=self.inv)
        return self.pow[:n], self.inv[:n]

    def trim(self, limit: int = SEGMENT_BYTES + 1) -> None:
        """Drop arrays grown for one huge document so memory stays flat."""
        if len(self.pow) > limit:
            self.pow = self.pow[:limit].copy()
            self.inv = self.inv[:limit].copy()


_POWERS = _Powers()


class _Workspace:
    """Scratch arrays reused from batch to batch: fresh multi-megabyte arrays cost page faults."""

    def __init__(self) -> None:
        self.size = 0
        self.isw = np.zeros(0, dtype=bool)
        self.flips = np.zeros(0, dtype=bool)
        self.prefix = np.zeros(0, dtype=np.uint64)

    def trim(self) -> None:
        if self.size > SEGMENT_BYTES + 1:
            self.__init__()

    def get(self, n: int) -> _Workspace:
        if n > self.size:
            self.size = max(n, 1 << 16)
            self.isw = np.empty(self.size, dtype=bool)
            self.flips = np.empty(self.size, dtype=bool)
            self.prefix = np.empty(self.size + 1, dtype=np.uint64)
        return self


_WORK = _Workspace()


def normalize_batch(texts: list[str]) -> tuple[bytes, np.ndarray]:
    """Fold (:func:`contam.data.normalize.fold`: lowercase, NFKC, invisible characters dropped,
    look-alikes folded) and encode ``texts``, separators turned to spaces, joined by one space.

    Returns the buffer and the byte offset where each text starts (plus the end offset).
    """
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    joined = " ".join(texts) + " "
    if joined.isascii():
        # One lower() and one encode() for the whole batch; characters are bytes here.
        np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1, out=offsets[1:])
        buf = joined.lower().encode("ascii").translate(_ASCII_TABLE)
    else:  # text by text: lowercasing one wide string is slower than many narrow ones
        encoded = [fold(t).encode("utf-8", "surrogatepass") for t in texts]
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)) + 1, out=offsets[1:])
        buf = (b" ".join(encoded) + b" ").translate(_ASCII_TABLE)
    if buf.isascii():
        return buf, offsets
    # Blank the UTF-8 bytes of separator characters in place (same length, offsets stay valid).
    b = np.frombuffer(buf, dtype=np.uint8).copy()
    lead = np.flatnonzero(b >= 0xC2)
    lead = lead[lead + 2 < len(b)]
    c2 = (b[lead].astype(np.int64) << 8) | b[lead + 1]
    c3 = (c2 << 8) | b[lead + 2]
    hit2 = lead[_SEP2[np.minimum(np.searchsorted(_SEP2, c2), len(_SEP2) - 1)] == c2]  # np.isin, without re-sorting _SEP2
    hit3 = lead[_SEP3[np.minimum(np.searchsorted(_SEP3, c3), len(_SEP3) - 1)] == c3]
    for k in range(2):
        b[hit2 + k] = _SPACE
    for k in range(3):
        b[hit3 + k] = _SPACE
    return b.tobytes(), offsets


@overload
def word_hashes(texts: list[str], with_offsets: Literal[False] = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
@overload
def word_hashes(texts: list[str], with_offsets: Literal[True]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
def word_hashes(
    texts: list[str], with_offsets: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hash every word of every text.

    Returns ``(hashes, starts, ends, doc)``: uint64 word hashes in reading order, their byte
    start/end in the normalised batch buffer, and the index of the text each word belongs to;
    with ``with_offsets`` also the byte offset of each text in the buffer (for an ASCII text,
    ``starts - offset`` are character positions in the text).
    """
    buf, offsets = normalize_batch(texts)
    b = np.frombuffer(buf, dtype=np.uint8)
    if len(b) <= SEGMENT_BYTES:
        wh, starts, ends = _hash_segment(b)
    else:
        pieces, lo = [], 0
        while lo < len(b):
            hi = min(len(b), lo + SEGMENT_BYTES)
            if hi < len(b):
                cut = buf.rfind(b" ", lo, hi)  # words never straddle a cut
                hi = cut + 1 if cut > lo else hi
            w, s0, e0 = _hash_segment(b[lo:hi])
            pieces.append((w, s0 + lo, e0 + lo))
            lo = hi
        wh, starts, ends = (np.concatenate([p[k] for p in pieces]) for k in range(3))
        _POWERS.trim()
        _WORK.trim()
    # Words per text from the text offsets (both sorted): no per-word search needed.
    first_word = np.searchsorted(starts, offsets[:-1])
    doc = np.repeat(np.arange(len(texts), dtype=np.int64), np.diff(np.append(first_word, len(starts))))
    out = (wh, starts, ends, doc)
    return (*out, offsets) if with_offsets else out


def _hash_segment(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Word hashes and byte spans of one normalised buffer (or a segment of one cut at a space)."""
    ws = _WORK.get(len(b) + 1)
    isw = np.not_equal(b, _SPACE, out=ws.isw[: len(b)])
    flips = np.not_equal(isw[1:], isw[:-1], out=ws.flips[: max(len(b) - 1, 0)])
    edges = np.flatnonzero(flips) + 1  # alternating word starts and ends
    if len(isw) and isw[0]:
        edges = np.concatenate([np.zeros(1, dtype=edges.dtype), edges])
    if len(edges) % 2:  # a word runs to the end of the segment
        edges = np.append(edges, len(b))
    starts, ends = edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)
    if len(starts) == 0:
        return np.zeros(0, dtype=np.uint64), starts, ends
    pw, inv = _POWERS.get(len(b) + 1)
    # Prefix sums of byte * BASE**i; a word's hash is its slice of the sum, shifted back to
    # position 0 by BASE**-start so equal words hash equal wherever they are. The byte values
    # are below 256 and BASE is odd, so distinct words only collide by modular accident.
    with np.errstate(over="ignore"):
        s = ws.prefix[: len(b) + 1]
        s[0] = 0
        np.multiply(b, pw[: len(b)], out=s[1:], dtype=np.uint64)
        np.cumsum(s[1:], out=s[1:])
        wh = (s[ends] - s[starts]) * inv[starts]
        wh *= _MIX  # spread the bits: word hashes of short words differ only in low bits
        wh ^= wh >> np.uint64(29)
    return wh, starts, ends


def window_hashes(wh: np.ndarray, doc: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash every window of ``n`` consecutive words that lies inside one document.

    Returns ``(hashes, first_word_index)``; windows crossing a document boundary are dropped.
    """
    w = len(wh)
    if w < n:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    pw, inv = _POWERS.get(w + 1)
    with np.errstate(over="ignore"):
        q = np.empty(w + 1, dtype=np.uint64)
        q[0] = 0
        np.cumsum(wh * pw[:w], out=q[1:])
        h = (q[n:] - q[: w - n + 1]) * inv[: w - n + 1]
        h ^= h >> np.uint64(31)
    if w > SEGMENT_BYTES:
        _POWERS.trim()
    first = np.arange(w - n + 1, dtype=np.int64)
    inside = doc[: w - n + 1] == doc[n - 1 :]
    if not inside.all():
        h, first = h[inside], first[inside]
    return h, first


def text_words(text: str) -> list[tuple[int, int]]:
    """Character spans in ``text`` of the words :func:`word_hashes` hashes (the words of its fold).

    >>> text_words("Hi, Bob’s")
    [(0, 2), (4, 7), (8, 9)]
    >>> text_words("Jа\u200bnet’s")  # Cyrillic а, a zero-width space: still one word
    [(0, 6), (7, 8)]
    """
    return list(zip(*(a.tolist() for a in word_spans(text)), strict=True))


def normalized_words(text: str) -> list[str]:
    """The normalised words of ``text`` (of its fold).

    >>> normalized_words("Janet’s ducks: 3,000!")
    ['janet', 's', 'ducks', '3', '000']
    """
    return WORD_RE.findall(fold(text))


# Word characters by code point (the rule of WORD_RE): ASCII letters and digits, and every
# non-ASCII character but the separators. Code points above the BMP are looked up at 0xFFFF,
# a word character (every separator lies below it).
_WORD_CHAR = np.ones(0x10000, dtype=bool)
_WORD_CHAR[:128] = [chr(c).isalnum() for c in range(128)]
_WORD_CHAR[[ord(c) for c in SEPARATORS]] = False


def word_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`text_words` as two arrays (word starts, word ends), vectorised: spans of the
    words of a non-ASCII document, where the fast path's byte offsets are not character offsets.

    A text that folds character for character (lowercasing only) is cut where it stands; one
    that NFKC, a dropped invisible character or a look-alike changes is cut in its fold, and
    the spans are mapped back (:func:`contam.data.normalize.fold_spans`).

    >>> [a.tolist() for a in word_spans("Hi, Bob’s")]
    [[0, 4, 8], [2, 7, 9]]
    """
    if not text.isascii():
        folded = fold(text)
        if len(folded) != len(text) or folded != text.lower():
            pieces, starts, ends = fold_spans(text)
            a, b = _spans_of(pieces)
            return np.asarray(starts, dtype=np.int64)[a].astype(np.intp), np.asarray(ends, dtype=np.int64)[b - 1].astype(np.intp) if len(
                b
            ) else b
    return _spans_of(text)


def _spans_of(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Word starts and ends of ``text`` as it stands, by the rule of :data:`WORD_RE`."""
    code = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    isw = _WORD_CHAR[np.minimum(code, 0xFFFF)].view(np.int8)
    edge = np.diff(isw, prepend=np.int8(0), append=np.int8(0))  # +1 where a word starts, -1 after it ends
    return np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)
