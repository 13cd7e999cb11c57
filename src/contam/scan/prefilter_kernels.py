"""The compiled kernels of the prefilter (:mod:`contam.scan.prefilter`): numba passes that cut,
fold and key the words of a batch 8 bytes at a time, look window keys up in the bitmaps, and
confirm the candidates exactly. Pure moves from :mod:`contam.scan.prefilter`; only the
module's globals they read live here with them."""

from __future__ import annotations

import numpy as np
from numba import njit

from contam.data.swar import GATHER, H8, L1, zero_bytes

_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_TEXT_END = 0xFF  # joins the texts of a batch: a byte UTF-8 never holds
_LINE_END = 10  # ends a JSON line: never inside a JSON value (strings escape it)


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
    cannot hold). An invisible character the fold drops (class 3: a zero-width space) that
    follows no word character is cut as a separator, which is what dropping it gives: the
    record is odd only where one follows a word character (it might join two words).
    ``W``, ``flags``: scratch. Returns the number of words, of record ends and of odd
    records, in JSON whether some line ends inside a value (a string, object or array left
    open: then lines are not one value each), and how many end bytes a string escape or a
    character's tail swallowed (a backslash outside a string, in invalid JSON)."""
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
    lost = 0  # end bytes read as part of an escape or a character
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
                lost += b == end_byte
            elif skip:
                skip -= 1
                lost += b == end_byte
            elif cont:
                cont -= 1
                f = 0x80
                lost += b == end_byte
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
                if cls == 3:  # an invisible character, which the fold drops: a separator unless it follows a word character
                    cls = 2 if in_word else 1
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
    return nw, r, n_odd, split or depth != 0 or in_str, lost


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
    ends, of odd records, whether a line ends inside a JSON value, the number of end bytes
    swallowed, and the number of hits."""
    nw, n_ends, n_odd, split, lost = _cut(
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
    return nw, n_ends, n_odd, split, lost, _keys(out, starts, nw, c, m, bloom, shift, hits)


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
