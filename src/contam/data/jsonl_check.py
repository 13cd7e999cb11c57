"""A compiled check of raw JSON lines, so a corpus scan need not parse every line into Python
objects: which lines are certainly a JSON object whose text field is a string with something
in it to scan.

A line passes (status :data:`CLEAN`) only if it is one valid JSON value (RFC 8259: structure,
string escapes, strict UTF-8, numbers), that value is an object, the object holds the text
field exactly once at its top level, and the field's value is a string with at least one
character that ``str.isspace`` does not call a space. Those are the conditions under which the
scan job's parser would accept the record and take its text. Whatever the check is unsure of
it leaves to the parser (status :data:`UNSURE`), which then reports bad input with its exact
message: a top-level key with an escape in it, a ``\\u`` escape of a lone surrogate, a
number that could overflow a double, nesting deeper than 64, a line over the size limit.
Whitespace-only lines are :data:`BLANK` (the parser skips them too). So the check may only be
stricter than the parser, never laxer: a property test holds it to that against orjson.

>>> import json
>>> lines = [json.dumps({"id": 1, "text": "Janet’s ducks lay 16 eggs."}), '{"id": 2, "text": " \\\\n "}',
...          '{"text": 3}', "", '{"id": 4, "text": "ok"', '{"meta": {"a": [1, 2.5e3, null]}, "text": "ok"}']
>>> check_jsonl("\\n".join(lines).encode(), "text").tolist()
[1, 0, 0, 2, 0, 1]
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from contam.data.swar import GATHER, H8, L1, zero_bytes

UNSURE, CLEAN, BLANK = 0, 1, 2
#: Nesting deeper than this is left to the parser.
MAX_DEPTH = 64
#: A number of 1e308 or more (orjson rejects the infinity it would be), or with an exponent of
#: more digits than this, is left to the parser.
MAX_EXPONENT_DIGITS = 6

_QUOTES = np.uint64(0x2222222222222222)
_BACKSLASHES = np.uint64(0x5C5C5C5C5C5C5C5C)
_SPACES = np.uint64(0x2020202020202020)
_TOP3 = np.uint64(0xE0E0E0E0E0E0E0E0)  # a byte with none of these bits is a control byte (< 0x20)
#: The lowest set bit of each byte value (for 0: 8).
_LOWEST = np.array([8] + [(m & -m).bit_length() - 1 for m in range(1, 256)], dtype=np.int64)


@functools.cache
def space_table() -> np.ndarray:
    """1 for each character of the Basic Multilingual Plane that ``str.isspace`` calls a space
    (none outside it is)."""
    return np.fromiter((chr(c).isspace() for c in range(0x10000)), dtype=np.uint8, count=0x10000)


@njit(cache=True, nogil=True)
def _hex(buf: np.ndarray, p: int) -> int:
    """The value of the four hex digits at ``p``, or -1."""
    v = 0
    for j in range(p, p + 4):
        d = buf[j]
        if 48 <= d <= 57:
            v = v * 16 + d - 48
        elif 97 <= d <= 102 or 65 <= d <= 70:
            v = v * 16 + (d | 0x20) - 87
        else:
            return -1
    return v


@njit(cache=True, nogil=True)
def _string(U: np.ndarray, buf: np.ndarray, p: int, end: int, space: np.ndarray) -> tuple[int, bool]:
    """Check the string whose opening quote is at ``p - 1``: the offset after its closing quote
    (-1 if it is not a valid string within ``end``, or holds what the check leaves to the
    parser) and whether it holds a character that is not a space."""
    nonspace = False
    one = np.uint64(1)
    s7 = np.uint64(7)
    while p < end:
        if p + 8 <= end:
            # The next 8 bytes (an unaligned read over the zero-padded words): skip the plain
            # ones (no quote, backslash, control or non-ASCII byte) to the first special one.
            sh = np.uint64((p & 7) * 8)
            q = p >> 3
            u = (U[q] >> sh) | ((U[q + 1] << one) << (np.uint64(63) - sh))
            # Yes or no first (the classic borrow tests, exact as a whole and cheaper; with
            # _SPACES: some byte below 0x20).
            xq = u ^ _QUOTES
            xb = u ^ _BACKSLASHES
            if not ((u | ((u - _SPACES) & ~u) | ((xq - L1) & ~xq) | ((xb - L1) & ~xb)) & H8):
                nonspace |= u != _SPACES
                p += 8
                continue
            special = (u & H8) | zero_bytes(u & _TOP3) | zero_bytes(xq) | zero_bytes(xb)
            k = int(_LOWEST[((special >> s7) * GATHER) >> np.uint64(56)])
            if k:
                nonspace |= ((u ^ _SPACES) & ((one << np.uint64(8 * k)) - one)) != 0
                p += k
        b = buf[p]
        if b == 34:
            return p + 1, nonspace
        if b == 92:  # an escape
            if p + 1 >= end:
                return -1, nonspace
            e = buf[p + 1]
            if e == 117:  # \uXXXX, a surrogate pair only whole
                cp = _hex(buf, p + 2) if p + 6 <= end else -1
                if cp < 0 or 0xDC00 <= cp < 0xE000:
                    return -1, nonspace
                if 0xD800 <= cp < 0xDC00:
                    if p + 12 > end or buf[p + 6] != 92 or buf[p + 7] != 117:
                        return -1, nonspace
                    lo = _hex(buf, p + 8)
                    if not 0xDC00 <= lo < 0xE000:
                        return -1, nonspace
                    nonspace = True  # an astral character: never a space
                    p += 12
                    continue
                nonspace |= space[cp] == 0
                p += 6
                continue
            if e == 34 or e == 92 or e == 47 or e == 98:  # \" \\ \/ \b: not spaces
                nonspace = True
            elif not (e == 102 or e == 110 or e == 114 or e == 116):  # \f \n \r \t: spaces
                return -1, nonspace
            p += 2
        elif b < 0x20:  # a raw control character
            return -1, nonspace
        elif b < 0x80:
            nonspace |= b != 32
            p += 1
        else:  # strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF
            if 0xC2 <= b <= 0xDF:
                k, lo, hi = 2, 0x80, 0xBF
            elif b == 0xE0:
                k, lo, hi = 3, 0xA0, 0xBF
            elif 0xE1 <= b <= 0xEC or b == 0xEE or b == 0xEF:
                k, lo, hi = 3, 0x80, 0xBF
            elif b == 0xED:
                k, lo, hi = 3, 0x80, 0x9F
            elif b == 0xF0:
                k, lo, hi = 4, 0x90, 0xBF
            elif 0xF1 <= b <= 0xF3:
                k, lo, hi = 4, 0x80, 0xBF
            elif b == 0xF4:
                k, lo, hi = 4, 0x80, 0x8F
            else:
                return -1, nonspace
            if p + k > end or not lo <= buf[p + 1] <= hi:
                return -1, nonspace
            for j in range(p + 2, p + k):
                if not 0x80 <= buf[j] <= 0xBF:
                    return -1, nonspace
            if k == 4:
                nonspace = True
            else:
                cp = (
                    ((b & 0x1F) << 6 | (buf[p + 1] & 0x3F))
                    if k == 2
                    else ((b & 0x0F) << 12 | (buf[p + 1] & 0x3F) << 6 | (buf[p + 2] & 0x3F))
                )
                nonspace |= space[cp] == 0
            p += k
    return -1, nonspace


@njit(cache=True, nogil=True)
def _ws(buf: np.ndarray, p: int, end: int) -> int:
    while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
        p += 1
    return p


@njit(cache=True, nogil=True)
def _number(buf: np.ndarray, p: int, end: int) -> int:
    """The offset after the number at ``p``, or -1 (also for one that may overflow a double)."""
    if buf[p] == 45:  # -
        p += 1
    if p >= end or not 48 <= buf[p] <= 57:
        return -1
    # The decimal magnitude of the number's first digit: below 308 it is under 1e308 < DBL_MAX.
    magnitude = -1
    if buf[p] == 48:
        p += 1
    else:
        while p < end and 48 <= buf[p] <= 57:
            p += 1
            magnitude += 1
    if p < end and buf[p] == 46:  # .
        p += 1
        if p >= end or not 48 <= buf[p] <= 57:
            return -1
        while p < end and 48 <= buf[p] <= 57:
            p += 1
    if p < end and (buf[p] | 0x20) == 101:  # e E
        p += 1
        sign = 1
        if p < end and (buf[p] == 43 or buf[p] == 45):
            sign = -1 if buf[p] == 45 else 1
            p += 1
        e0 = p
        exponent = 0
        while p < end and 48 <= buf[p] <= 57:
            exponent = exponent * 10 + buf[p] - 48
            p += 1
            if p - e0 > MAX_EXPONENT_DIGITS:
                return -1
        if p == e0:
            return -1
        magnitude += sign * exponent
    return p if magnitude < 308 else -1


@njit(cache=True, nogil=True)
def _literal(buf: np.ndarray, p: int, end: int) -> int:
    """The offset after ``true``, ``false`` or ``null`` at ``p``, or -1."""
    b = buf[p]
    if b == 116 and p + 4 <= end and buf[p + 1] == 114 and buf[p + 2] == 117 and buf[p + 3] == 101:
        return p + 4
    if b == 110 and p + 4 <= end and buf[p + 1] == 117 and buf[p + 2] == 108 and buf[p + 3] == 108:
        return p + 4
    if b == 102 and p + 5 <= end and buf[p + 1] == 97 and buf[p + 2] == 108 and buf[p + 3] == 115 and buf[p + 4] == 101:
        return p + 5
    return -1


@njit(cache=True, nogil=True)
def _line(U: np.ndarray, buf: np.ndarray, start: int, end: int, field: np.ndarray, space: np.ndarray, stack: np.ndarray) -> int:
    """The status of the line ``buf[start:end]`` (see the module's docstring)."""
    p = _ws(buf, start, end)
    if p == end:
        return BLANK
    if buf[p] != 123:
        return UNSURE
    stack[0] = 123
    depth = 1
    p += 1
    n_field = 0
    field_ok = False
    # What may come next: 0 a key or "}", 1 a key, 2 a value, 3 a value or "]", 4 "," or a closer.
    need = 0
    while True:
        p = _ws(buf, p, end)
        if p >= end:
            return UNSURE
        b = buf[p]
        closer = 125 if stack[depth - 1] == 123 else 93
        if b == closer and (need == 0 or need == 3 or need == 4):  # an object or array ends (empty, or after a value)
            depth -= 1
            p += 1
            if depth == 0:
                break
            need = 4
            continue
        if need == 0 or need == 1:
            if b != 34:
                return UNSURE
            k0 = p + 1
            p, _ = _string(U, buf, k0, end, space)
            if p < 0:
                return UNSURE
            is_field = False
            if depth == 1:
                for j in range(k0, p - 1):
                    if buf[j] == 92:  # an escaped top-level key could spell the field
                        return UNSURE
                if p - 1 - k0 == len(field):
                    is_field = True
                    for j in range(len(field)):
                        if buf[k0 + j] != field[j]:
                            is_field = False
                            break
            p = _ws(buf, p, end)
            if p >= end or buf[p] != 58:  # :
                return UNSURE
            p = _ws(buf, p + 1, end)
            if is_field:
                n_field += 1
                if p >= end or buf[p] != 34:  # the field is not a string
                    return UNSURE
                p, field_ok = _string(U, buf, p + 1, end, space)
                if p < 0:
                    return UNSURE
                need = 4
            else:
                need = 2
            continue
        if need == 2 or need == 3:
            if b == 34:
                p, _ = _string(U, buf, p + 1, end, space)
                need = 4
            elif b == 123 or b == 91:
                if depth >= MAX_DEPTH:
                    return UNSURE
                stack[depth] = b
                depth += 1
                p += 1
                need = 0 if b == 123 else 3
                continue
            elif b == 45 or 48 <= b <= 57:
                p = _number(buf, p, end)
                need = 4
            else:
                p = _literal(buf, p, end)
                need = 4
            if p < 0:
                return UNSURE
            continue
        # need == 4: after a value, a comma (the closer was taken above)
        if b != 44:
            return UNSURE
        p += 1
        need = 1 if closer == 125 else 2
    if _ws(buf, p, end) != end:
        return UNSURE
    return CLEAN if n_field == 1 and field_ok else UNSURE


@njit(cache=True, nogil=True)
def _check_lines(U: np.ndarray, ends: np.ndarray, field: np.ndarray, space: np.ndarray, max_bytes: int, status: np.ndarray) -> int:
    """Status of each line (line ``i`` ends at ``ends[i]``, the one before it at ``ends[i - 1]``);
    returns how many are :data:`CLEAN`."""
    buf = U.view(np.uint8)
    stack = np.zeros(MAX_DEPTH, dtype=np.uint8)
    start = 0
    n_clean = 0
    for i in range(len(ends)):
        end = ends[i]
        s = _line(U, buf, start, end, field, space, stack) if end - start <= max_bytes else UNSURE
        status[i] = s
        n_clean += s == CLEAN
        start = end + 1
    return n_clean


def check_lines(U: np.ndarray, ends: np.ndarray, field: str, max_bytes: int = 1 << 62) -> np.ndarray:
    """Status of each line of the bytes held by ``U`` (a uint64 array, zero-padded to a whole
    word past the data; line ``i`` ends at byte ``ends[i]``, its newline or the data's end).
    The text field ``field`` is a top-level key; lines over ``max_bytes`` are left unsure."""
    status = np.empty(len(ends), dtype=np.uint8)
    _check_lines(
        U, ends.astype(np.int64, copy=False), np.frombuffer(field.encode("utf-8"), dtype=np.uint8), space_table(), max_bytes, status
    )
    return status


def check_jsonl(block: bytes, field: str = "text", max_bytes: int = 1 << 62) -> np.ndarray:
    """Status of each line of ``block`` (a last line without a newline counts; an empty block
    has none): :data:`CLEAN`, :data:`BLANK` or :data:`UNSURE`."""
    U = np.zeros((len(block) >> 3) + 2, dtype=np.uint64)
    U.view(np.uint8)[: len(block)] = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
    if block and not block.endswith(b"\n"):
        ends = np.append(ends, len(block))
    return check_lines(U, ends, field, max_bytes)
