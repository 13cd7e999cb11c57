"""The character tables of the prefilter (:mod:`contam.scan.prefilter`): which characters change
beyond the bytes the compiled pass folds (case changers, fold changers), and the per-character
and per-byte-mask lookup tables the compiled kernels read."""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

from contam.data.normalize import CONFUSABLES, INVISIBLE, chars_in_ranges, composing_chars, fold_char
from contam.scan.hashing import SEPARATORS

#: The characters of :func:`find_case_changers` in the Unicode version of Python 3.11 (14.0.0).
_CASE_CHANGERS_14 = "\u0130\u023a\u023e\u1e9e\u2126\u212a\u212b\u2c62\u2c64\u2c6d\u2c6e\u2c6f\u2c70\u2c7e\u2c7f\ua78d\ua7aa\ua7ab\ua7ac\ua7ad\ua7ae\ua7b0\ua7b1\ua7b2\ua7c5"

#: The characters of :func:`find_fold_changers` in Unicode 14.0.0, as
#: :func:`contam.data.normalize.chars_in_ranges` reads them (finding them costs ~0.2 CPU-s, in
#: every scan process).
_FOLD_CHANGERS_14 = (
    "a8 aa ad af b2-b5 b8-ba bc-be 131-133 13f-140 149 17f 1c4-1cc 1f1-1f3 237 251 261 2b0-2b8 2d8-2dd 2e0-2e4 300-304 "
    "306-30c 30f 311 313-314 31b 323-328 32d-32e 330-331 338 340-345 34f 374 37a 37e-37f 384-385 387 391-392 395-397 "
    "399-39a 39c-39d 39f 3a1 3a4-3a5 3a7 3b1-3b2 3b5-3b7 3b9-3ba 3bc-3bd 3bf 3c1 3c4-3c5 3c7 3d0-3d6 3f0-3f3 3f5 3f9 "
    "405-406 408 410 412 415 41a 41c-41e 420-423 425 430 432 435 43a 43c-43e 440-443 445 455-456 458 4ae-4af 4ba-4bb 4c0 "
    "4cf 500-501 51a-51d 54d 555 57d 585 587 5b4 5b7-5b9 5bc 5bf 5c1-5c2 61c 653-655 675-678 93c 958-95f 9bc 9be 9d7 "
    "9dc-9dd 9df a33 a36 a3c a59-a5b a5e b3c b3e b56-b57 b5c-b5d bbe bd7 c56 cc2 cd5-cd6 d3e d57 dca dcf ddf e33 eb3 "
    "edc-edd f0c f43 f4d f52 f57 f5c f69 f72-f79 f80-f81 f93 f9d fa2 fa7 fac fb5 fb7 fb9 102e 10fc 1161-1175 11a8-11c2 "
    "180e 1b35 1d2c-1d2e 1d30-1d3a 1d3c-1d4d 1d4f-1d6a 1d78 1d9b-1dbf 1e9a-1e9b 1f71 1f73 1f75 1f77 1f79 1f7b 1f7d 1fbb "
    "1fbd-1fc1 1fc9 1fcb 1fcd-1fcf 1fd3 1fdb 1fdd-1fdf 1fe3 1feb 1fed-1fef 1ff9 1ffb 1ffd-1ffe 2000-2001 2004-2008 "
    "200a-200f 2017 2024-2025 202a-202f 2034 2036-2037 203c 203e 2047-2049 2057 205f-2064 2066-2069 2070-2071 2074-208e "
    "2090-209c 20a8 2100-2103 2105-2107 2109-2113 2115-2116 2119-211d 2120-2122 2124 2128 212c-212d 212f-2131 2133-2139 "
    "213b-2140 2145-2149 2150-217f 2189 222c-222d 222f-2230 2329-232a 2460-24ea 2a0c 2a74-2a76 2adc 2c6d 2c7c-2c7d 2d6f "
    "2e9f 2ef3 2f00-2fd5 3036 3038-303a 3099-309c 309f 30ff 3131-318e 3192-319f 3200-321e 3220-3247 3250-327e 3280-33ff "
    "a69c-a69d a770 a7ac a7f2-a7f4 a7f8-a7f9 ab5c-ab5f ab69 f900-fa0d fa10 fa12 fa15-fa1e fa20 fa22 fa25-fa26 fa2a-fa6d "
    "fa70-fad9 fb00-fb06 fb13-fb17 fb1d fb1f-fb36 fb38-fb3c fb3e fb40-fb41 fb43-fb44 fb46-fbb1 fbd3-fd3d fd50-fd8f "
    "fd92-fdc7 fdf0-fdfc fe00-fe19 fe30-fe44 fe47-fe52 fe54-fe66 fe68-fe6b fe70-fe72 fe74 fe76-fefc feff ff01-ffbe "
    "ffc2-ffc7 ffca-ffcf ffd2-ffd7 ffda-ffdc ffe0-ffe6 ffe8-ffee 10781-10785 10787-107b0 107b2-107ba 110ba 11127 1133e "
    "11357 114b0 114ba 114bd 115af 11930 1d15e-1d165 1d16e-1d172 1d1bb-1d1c0 1d400-1d454 1d456-1d49c 1d49e-1d49f 1d4a2 "
    "1d4a5-1d4a6 1d4a9-1d4ac 1d4ae-1d4b9 1d4bb 1d4bd-1d4c3 1d4c5-1d505 1d507-1d50a 1d50d-1d514 1d516-1d51c 1d51e-1d539 "
    "1d53b-1d53e 1d540-1d544 1d546 1d54a-1d550 1d552-1d6a5 1d6a8-1d7cb 1d7ce-1d7ff 1ee00-1ee03 1ee05-1ee1f 1ee21-1ee22 "
    "1ee24 1ee27 1ee29-1ee32 1ee34-1ee37 1ee39 1ee3b 1ee42 1ee47 1ee49 1ee4b 1ee4d-1ee4f 1ee51-1ee52 1ee54 1ee57 1ee59 "
    "1ee5b 1ee5d 1ee5f 1ee61-1ee62 1ee64 1ee67-1ee6a 1ee6c-1ee72 1ee74-1ee77 1ee79-1ee7c 1ee7e 1ee80-1ee89 1ee8b-1ee9b "
    "1eea1-1eea3 1eea5-1eea9 1eeab-1eebb 1f100-1f10a 1f110-1f12e 1f130-1f14f 1f16a-1f16c 1f190 1f200-1f202 1f210-1f23b "
    "1f240-1f248 1f250-1f251 1fbf0-1fbf9 2f800-2fa1d "
)


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


#: Character classes in the tables below (0: a word character). An invisible character (one the
#: fold drops: :data:`contam.data.normalize.INVISIBLE`) is a fold changer the compiled pass
#: cuts as a separator where no word character precedes it.
_SEP, _CHANGER, _INVISIBLE = 1, 2, 3


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the compiled pass reads per character: the folded byte of each ASCII character (0
    for the non-word ones), the class of each character of the Basic Multilingual Plane (word,
    separator, case or fold changer, invisible), and the sorted code points and classes of the
    others (few)."""
    ascii_fold = np.zeros(128, dtype=np.uint8)
    for c in range(128):
        if 48 <= c <= 57 or 97 <= c <= 122:
            ascii_fold[c] = c
        elif 65 <= c <= 90:
            ascii_fold[c] = c | 0x20
    if unicodedata.unidata_version == "14.0.0":
        chars = _CASE_CHANGERS_14 + chars_in_ranges(_FOLD_CHANGERS_14)
    else:
        chars = find_case_changers() + find_fold_changers()
    special = {ord(c): _CHANGER for c in chars} | {ord(c): _INVISIBLE for c in INVISIBLE} | {ord(c): _SEP for c in SEPARATORS}
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
