"""The character tables of the prefilter (:mod:`contam.scan.prefilter`): which characters change
beyond the bytes the compiled pass folds (case changers, fold changers), and the per-character
and per-byte-mask lookup tables the compiled kernels read."""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

from contam.data.normalize import CONFUSABLES, INVISIBLE, composing_chars, fold_char
from contam.scan.hashing import SEPARATORS

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
