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
characters): a text holding one is lowercased by ``str.lower`` and cut again.

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
import functools
import math
import unicodedata
from typing import NamedTuple

import numpy as np
from numba import njit

from contam.data.jsonl_check import UNSURE, check_lines
from contam.data.normalize import CONFUSABLES, INVISIBLE, composing_chars, fold, fold_char
from contam.data.swar import GATHER, H8, L1, zero_bytes
from contam.scan.hashing import SEPARATORS

_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_TEXT_END = 0xFF  # joins the texts of a batch: a byte UTF-8 never holds
_LINE_END = 10  # ends a JSON line: never inside a JSON value (strings escape it)


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


#: The characters of :func:`find_case_changers` in the Unicode version of Python 3.11 (14.0.0).
_CASE_CHANGERS_14 = "\u0130\u023a\u023e\u1e9e\u2126\u212a\u212b\u2c62\u2c64\u2c6d\u2c6e\u2c6f\u2c70\u2c7e\u2c7f\ua78d\ua7aa\ua7ab\ua7ac\ua7ad\ua7ae\ua7b0\ua7b1\ua7b2\ua7c5"


def find_case_changers() -> str:
    """Every character whose lowercase differs from it in more than the bytes the prefilter
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


def find_fold_changers() -> str:
    """Every character the token level's fold (:func:`contam.data.normalize.fold`) may change
    beyond lowercasing: one NFKC changes on its own or may compose with the character before
    it, an invisible character (dropped), a look-alike letter (folded to Latin). A text
    holding one is cut again from its fold, like a text holding a case changer. Characters
    whose fold stays outside words (a no-break space, an ellipsis) keep their separator class.
    A pass over the characters with a decomposition (a fraction of a second, once a process)."""
    seps = set(SEPARATORS)
    table = set(INVISIBLE) | set(CONFUSABLES)
    out = table | composing_chars()
    for cp in range(0x80, 0x30000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000:
            continue
        if unicodedata.decomposition(c) or any(ch in table for ch in c.lower()):  # NFKC may change it; or its lowercase is folded
            if fold_char(c) != c.lower():
                out.add(c)
    for c in seps:
        f = fold_char(c)
        if any((ch.isalnum() if ch.isascii() else ch not in seps) for ch in f):
            raise AssertionError(f"separator {c!r} folds to word characters {f!r}")
    return "".join(sorted(out - seps))


_SEP, _CHANGER = 1, 2  # character classes in the tables below (0: a word character)


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the compiled pass reads per character: the folded byte of each ASCII character (0
    for the non-word ones), the class of each character of the Basic Multilingual Plane (word,
    separator, case changer), and the sorted code points and classes of the others (few)."""
    ascii_fold = np.zeros(128, dtype=np.uint8)
    for c in range(128):
        if 48 <= c <= 57 or 97 <= c <= 122:
            ascii_fold[c] = c
        elif 65 <= c <= 90:
            ascii_fold[c] = c | 0x20
    chars = _CASE_CHANGERS_14 if unicodedata.unidata_version == "14.0.0" else find_case_changers()
    special = {ord(c): _CHANGER for c in chars + find_fold_changers()} | {ord(c): _SEP for c in SEPARATORS}
    bmp = np.zeros(0x10000, dtype=np.uint8)
    astral = sorted((cp, k) for cp, k in special.items() if cp >= 0x10000)
    for cp, k in special.items():
        if cp < 0x10000:
            bmp[cp] = k
    return (ascii_fold, bmp, np.array([cp for cp, _ in astral], dtype=np.int64), np.array([k for _, k in astral], dtype=np.uint8))


def _slot_tables() -> tuple[np.ndarray, np.ndarray]:
    """For each 8-bit mask of word starts in 8 bytes: the start offsets, at 4 * mask (at most 4:
    a start follows a byte outside words, so masks with more never occur), and how many."""
    pos = np.zeros((256, 4), dtype=np.int32)
    cnt = np.zeros(256, dtype=np.int64)
    for m in range(256):
        at = [k for k in range(8) if m >> k & 1][:4]
        pos[m, : len(at)] = at
        cnt[m] = len(at)
    return pos.ravel(), cnt


_SLOT_POS, _SLOT_CNT = _slot_tables()
#: For each 8-bit mask of quotes: the bytes after an odd number of them (inside a string, if
#: the chunk starts outside one); and the number of bits of each byte value.
_QUOTE_PARITY = np.array([sum(1 << k for k in range(8) if bin(m & ((1 << k) - 1)).count("1") % 2) for m in range(256)], dtype=np.int64)
_BIT_COUNT = np.array([bin(m).count("1") for m in range(256)], dtype=np.int64)


@njit(cache=True, nogil=True)
def _hex4(buf: np.ndarray, i: int) -> int:
    v = 0
    for j in range(i, min(i + 4, len(buf))):
        d = buf[j]
        v = v * 16 + (d - 48 if d <= 57 else (d | 0x20) - 87)
    return v


@njit(cache=True, nogil=True)
def _char_class(cp: int, bmp: np.ndarray, astral_cp: np.ndarray, astral_cls: np.ndarray) -> int:
    if cp < 0x10000:
        return bmp[cp]
    j = np.searchsorted(astral_cp, cp)
    return astral_cls[j] if j < len(astral_cp) and astral_cp[j] == cp else 0


@njit(cache=True, nogil=True)
def _escapes_word(
    buf: np.ndarray, n: int, at: int, ascii_fold: np.ndarray, bmp: np.ndarray, astral_cp: np.ndarray, astral_cls: np.ndarray
) -> bool:
    """Whether the ``\\uXXXX`` escape at ``at`` stands for a word character."""
    cp = _hex4(buf[:n], at + 2)
    return ascii_fold[cp] != 0 if cp < 0x80 else _char_class(cp, bmp, astral_cp, astral_cls) != 1


@njit(cache=True, nogil=True)
def _classify_one(u: np.uint64, before: np.uint64, json_mode: bool) -> tuple[np.uint64, np.uint64, np.uint8]:
    """One chunk of 8 bytes ``u`` (``before``: the chunk before it) read as plain ASCII: its
    folded bytes, its word bytes (high bits), and flags: 1 if it needs the byte loop instead
    (non-ASCII, a record end, an escape other than two bytes outside words: \\n, \\", ...),
    2 if it ends with a backslash (taken to escape the next chunk's first byte), 4 if the
    chunk before does. No byte below 0x80 carries into the next when 0x1f, 0x05, 0x50 or 0x46
    is added."""
    hi = u & H8
    if json_mode:
        bs = zero_bytes(u ^ np.uint64(0x5C5C5C5C5C5C5C5C))
        esc = (bs << np.uint64(8)) | (
            (zero_bytes(before ^ np.uint64(0x5C5C5C5C5C5C5C5C)) >> np.uint64(63)) << np.uint64(7)
        )  # bytes an escape swallows
        bad = hi | zero_bytes(u ^ np.uint64(0x0A0A0A0A0A0A0A0A)) | (bs & esc) | (zero_bytes(u ^ np.uint64(0x7575757575757575)) & esc)
        flag = np.uint8(1 if bad else 0) | np.uint8(2 if bs >> np.uint64(63) else 0) | np.uint8(4 if esc & np.uint64(0x80) else 0)
    else:
        esc = np.uint64(0)
        flag = np.uint8(1 if hi else 0)
    low = u | np.uint64(0x2020202020202020)
    letter = (low + np.uint64(0x1F1F1F1F1F1F1F1F)) & ~(low + np.uint64(0x0505050505050505)) & ~esc & H8
    digit = (u + np.uint64(0x5050505050505050)) & ~(u + np.uint64(0x4646464646464646)) & ~esc & H8
    s1 = np.uint64(1)
    s7 = np.uint64(7)
    # (x << 1) - (x >> 7): 0xFF in the bytes whose high bit x has
    fold = (low & ((letter << s1) - (letter >> s7))) | (u & ((digit << s1) - (digit >> s7)))
    return fold, letter | digit, flag


@njit(cache=True, nogil=True)
def _classify(U, nq, json_mode, out, W, flags):
    """:func:`_classify_one` for chunks 0 to ``nq``, independently (the compiler vectorizes it)."""
    if nq:
        out[0], W[0], flags[0] = _classify_one(U[0], np.uint64(0), json_mode)
    for q in range(1, nq):
        out[q], W[q], flags[q] = _classify_one(U[q], U[q - 1], json_mode)
    if json_mode:  # flag 8: a quote or bracket (JSON nesting), in a loop of its own (vectorized too)
        for q in range(nq):
            u = U[q]
            low = u | np.uint64(0x2020202020202020)  # { and [ read 0x7b, } and ] read 0x7d
            nest = (
                zero_bytes(u ^ np.uint64(0x2222222222222222))
                | zero_bytes(low ^ np.uint64(0x7B7B7B7B7B7B7B7B))
                | zero_bytes(low ^ np.uint64(0x7D7D7D7D7D7D7D7D))
            )
            flags[q] |= np.uint8(8 if nest else 0)


@njit(cache=True, nogil=True)
def _cut(
    U,
    n,
    json_mode,
    fold_changers,
    ascii_fold,
    bmp,
    astral_cp,
    astral_cls,
    slot_pos,
    slot_cnt,
    quote_parity,
    bit_count,
    out,
    W,
    flags,
    starts,
    odd,
    ends,
):
    """Cut the bytes ``U`` (uint64 view, zero-padded; ``n`` real bytes: texts joined by 0xFF, or
    JSON lines) into words, 8 bytes at a time.

    Writes ``out``: the folded bytes (ASCII letters lowercased, bytes of non-ASCII word
    characters 0x80, everything else 0), in place; ``starts``: the byte offset of each word's
    first byte; ``ends``: the offset of each record's end byte; ``odd``: the records (in
    order, once each) to cut again from their lowercased text (a case changer, unless
    ``fold_changers``; in JSON a ``\\u`` escape of a word character, which the in-place layout
    cannot hold). ``W``, ``flags``: scratch. Returns the number of words, of record ends and
    of odd records, and in JSON whether some line ends inside a value (a string, object or
    array left open: then lines are not one value each)."""
    nq = (n + 7) >> 3
    _classify(U, nq, json_mode, out, W, flags)
    buf = U.view(np.uint8)
    end_byte = _LINE_END if json_mode else _TEXT_END
    n_ends = len(ends)
    s7 = np.uint64(7)
    s8 = np.uint64(8)
    s56 = np.uint64(56)
    nw = 0
    r = 0
    n_odd = 0
    prev = np.uint64(0)  # 0x80 if the byte before this chunk is in a word
    skip = 0  # bytes still to come that are outside words (a separator's tail, an escape's); -1: an escape's character
    cont = 0  # bytes still to come that are a word character's tail
    # JSON nesting, to tell whether every line is one value: depth of objects and arrays, inside
    # a string, and whether some line ended inside a value.
    depth = 0
    in_str = False
    split = False
    for q in range(nq):
        f = flags[q]
        # The plain reading holds if nothing spills over from the chunk before but what it assumed.
        if not (f & 1) and cont == 0 and skip == (-1 if f & 4 else 0):
            if f & 8:
                u = U[q]
                esc = np.uint64(0x80) if f & 4 else np.uint64(0)
                esc |= zero_bytes(u ^ np.uint64(0x5C5C5C5C5C5C5C5C)) << s8
                low = u | np.uint64(0x2020202020202020)
                qm = (((zero_bytes(u ^ np.uint64(0x2222222222222222)) & ~esc) >> s7) * GATHER) >> s56
                om = ((zero_bytes(low ^ np.uint64(0x7B7B7B7B7B7B7B7B)) >> s7) * GATHER) >> s56
                cm = ((zero_bytes(low ^ np.uint64(0x7D7D7D7D7D7D7D7D)) >> s7) * GATHER) >> s56
                outside = ~(quote_parity[qm] ^ (0xFF if in_str else 0)) & 0xFF  # bytes outside strings
                depth += bit_count[om & outside] - bit_count[cm & outside]
                if bit_count[qm] & 1:
                    in_str = not in_str
            w = W[q]
            st = w & ~((w << s8) | prev)
            m = ((st >> s7) * GATHER) >> s56
            base = q << 3
            at = m << 2
            starts[nw] = base + slot_pos[at]
            starts[nw + 1] = base + slot_pos[at + 1]
            starts[nw + 2] = base + slot_pos[at + 2]
            starts[nw + 3] = base + slot_pos[at + 3]
            nw += slot_cnt[m]
            prev = w >> s56
            skip = -1 if f & 2 else 0
            continue
        # Byte by byte: non-ASCII characters, escapes, record ends.
        folded = np.uint64(0)
        in_word = prev != 0
        for j in range(8):
            p = (q << 3) + j
            if p >= n:
                break
            b = buf[p]
            f = 0
            if skip == -1:  # the character of an escape whose backslash ended the last chunk
                if (
                    b == 117
                    and _escapes_word(buf, n, p - 1, ascii_fold, bmp, astral_cp, astral_cls)
                    and (n_odd == 0 or odd[n_odd - 1] != r)
                ):
                    odd[n_odd] = r
                    n_odd += 1
                skip = 4 if b == 117 else 0
            elif skip:
                skip -= 1
            elif cont:
                cont -= 1
                f = 0x80
            elif b == end_byte:
                if r < n_ends:
                    ends[r] = p
                r += 1
                split |= depth != 0 or in_str
            elif json_mode and b == 34:
                in_str = not in_str
            elif json_mode and not in_str and (b | 0x20) == 0x7B:
                depth += 1
            elif json_mode and not in_str and (b | 0x20) == 0x7D:
                depth -= 1
            elif b >= 0x80:
                k = 1
                cp = -1
                if b >= 0xF0 and p + 3 < n:
                    k, cp = 4, ((b & 0x07) << 18) | ((buf[p + 1] & 0x3F) << 12) | ((buf[p + 2] & 0x3F) << 6) | (buf[p + 3] & 0x3F)
                elif b >= 0xE0 and p + 2 < n:
                    k, cp = 3, ((b & 0x0F) << 12) | ((buf[p + 1] & 0x3F) << 6) | (buf[p + 2] & 0x3F)
                elif b >= 0xC0 and p + 1 < n:
                    k, cp = 2, ((b & 0x1F) << 6) | (buf[p + 1] & 0x3F)
                cls = _char_class(cp, bmp, astral_cp, astral_cls) if cp >= 0 else 0
                if cls == 1:  # a separator
                    skip = k - 1
                else:
                    if cls == 2 and not fold_changers and (n_odd == 0 or odd[n_odd - 1] != r):
                        odd[n_odd] = r
                        n_odd += 1
                    f = 0x80
                    cont = k - 1
            elif json_mode and b == 92:  # a string escape
                e = buf[p + 1] if p + 1 < n else 0
                if e == 117:  # \uXXXX: in place only if it is not a word character
                    if _escapes_word(buf, n, p, ascii_fold, bmp, astral_cp, astral_cls) and (n_odd == 0 or odd[n_odd - 1] != r):
                        odd[n_odd] = r
                        n_odd += 1
                    skip = 5
                else:  # \" \\ \/ \b \f \n \r \t: not word characters
                    skip = 1
            else:
                f = ascii_fold[b]
            if f:
                folded |= np.uint64(f) << np.uint64(8 * j)
                if not in_word:
                    starts[nw] = p
                    nw += 1
                in_word = True
            else:
                in_word = False
        out[q] = folded
        prev = np.uint64(0x80) if in_word else np.uint64(0)
    return nw, r, n_odd, split or depth != 0 or in_str


@njit(cache=True, nogil=True)
def _keys(out, starts, nw, c, m, bloom, shift, hits):
    """Running sums of the keys of the ``nw`` words: ``c[w + 1]`` = keys of words 0..w. A word's
    key is a function of its first 8 folded bytes (the bytes after its end are 0 in ``out``).
    Also the first words of the windows of ``m`` words that pass the bitmap ``bloom`` of
    benchmark window heads (see :func:`_bloom`), in ``hits``; returns how many."""
    one = np.uint64(1)
    s7 = np.uint64(7)
    m63 = np.uint64(63)
    total = np.uint64(0)
    c[0] = total
    n_hits = 0
    for w in range(nw):
        s = starts[w]
        sh = np.uint64((s & 7) * 8)
        q = s >> 3
        x = (out[q] >> sh) | ((out[q + 1] << one) << (np.uint64(63) - sh))
        # Keep the bytes before the first zero byte (the word's end): the lowest byte flagged
        # by the classic has-zero-byte test is exact.
        t = (x - L1) & ~x & H8
        t &= ~t + one
        x &= (t >> s7) - one  # all ones if the word fills the 8 bytes
        # Multiply (spreads the bytes to the top bits the filter reads), fold, multiply: sums
        # of keys that are not linear in the bytes.
        x *= _K1
        x ^= x >> np.uint64(29)
        x *= _K2
        total += x
        c[w + 1] = total
        if w + 1 >= m:
            h = total - c[w + 1 - m]
            if (bloom[h >> shift] >> (h & m63)) & one:  # most windows miss
                hits[n_hits] = w + 1 - m
                n_hits += 1
    return n_hits


@njit(cache=True, nogil=True)
def _scan(
    U,
    n,
    json_mode,
    fold_changers,
    ascii_fold,
    bmp,
    astral_cp,
    astral_cls,
    slot_pos,
    slot_cnt,
    quote_parity,
    bit_count,
    out,
    W,
    flags,
    starts,
    odd,
    ends,
    c,
    m,
    bloom,
    shift,
    hits,
):
    """:func:`_cut` then :func:`_keys`, in one call. Returns the number of words, of record
    ends, of odd records, whether a line ends inside a JSON value, and the number of hits."""
    nw, n_ends, n_odd, split = _cut(
        U,
        n,
        json_mode,
        fold_changers,
        ascii_fold,
        bmp,
        astral_cp,
        astral_cls,
        slot_pos,
        slot_cnt,
        quote_parity,
        bit_count,
        out,
        W,
        flags,
        starts,
        odd,
        ends,
    )
    return nw, n_ends, n_odd, split, _keys(out, starts, nw, c, m, bloom, shift, hits)


@njit(cache=True, nogil=True)
def _bloom(keys: np.ndarray, shift: np.uint64) -> np.ndarray:
    """A bitmap of the keys: bit ``h & 63`` of word ``h >> shift``."""
    out = np.zeros(1 << (64 - shift), dtype=np.uint64)
    one = np.uint64(1)
    m63 = np.uint64(63)
    for h in keys:
        out[h >> shift] |= one << (h & m63)
    return out


@njit(cache=True, nogil=True)
def _has(table: np.ndarray, x: np.uint64) -> bool:
    j = np.searchsorted(table, x)
    return bool(j < len(table) and table[j] == x)


@njit(cache=True, nogil=True)
def _confirm(c, starts, ends, nw, hits, n_hits, m, bits2, mask2, heads, full_n, full_back, full_off, full_keys, cand):
    """For every window in ``hits`` whose key is a benchmark window head (a second bitmap, on the
    key's low bits, then the sorted keys): the windows of each length in ``full_n`` that may
    hold it (starting up to ``full_back`` words before it) and are benchmark windows; mark in
    ``cand`` the record of each one's first word."""
    one = np.uint64(1)
    for k in range(n_hits):
        s = hits[k]
        h = c[s + m] - c[s]
        j = h & mask2
        if not (bits2[j >> np.uint64(6)] >> (j & np.uint64(63))) & one or not _has(heads, h):
            continue
        for t in range(len(full_n)):
            table = full_keys[full_off[t] : full_off[t + 1]]
            for a in range(max(0, s - full_back[t]), s + 1):
                e = a + full_n[t]
                if e <= nw and _has(table, c[e] - c[a]):
                    cand[np.searchsorted(ends, starts[a])] = 1  # the record holding the window's first word


class _Scratch:
    """Arrays reused from batch to batch (fresh multi-megabyte arrays cost page faults)."""

    def __init__(self) -> None:
        self.size = 0
        self.ends = np.zeros(1, dtype=np.int64)
        self.n_ends = 0
        self.n_hits = 0
        self.split = False
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
    nw, ws.n_ends, n_odd, ws.split, ws.n_hits = _scan(
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
            redo = odd
            lowered = [fold(texts[i]) for i in redo.tolist()]
            cand[redo] = self._marked(lowered, len(lowered), fold_changers=True)[0][: len(lowered)]
        return np.flatnonzero(cand)

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
        if ws.n_ends != block.count(b"\n"):
            # The cut reads a backslash as a string escape wherever it stands; outside a string
            # (invalid JSON: a line holding just "\\") it swallowed a newline, so these line ends
            # are not the block's. Vouch for nothing: the caller's exact reader names the bad line.
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
        mask[odd] = 0
        mask[odd[self.candidates([texts[i] for i in odd.tolist()])]] = 1
        return np.flatnonzero(mask)
