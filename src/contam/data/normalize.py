"""Text normalisation shared by every detector, with character offsets kept.

The GPT-3 / lm-eval convention: lowercase, punctuation dropped, words split on what is left.
Before that, :func:`fold` undoes the cheap evasions that defeat an n-gram match while a reader
sees the same text: Unicode NFKC (full-width letters, ligatures, compatibility digits),
invisible characters dropped (zero-width space/joiners, soft hyphen, bidi marks, the BOM,
variation selectors) and the common confusables folded (Cyrillic and Greek letters that look
like Latin ones: Cyrillic ``а`` is read as ``a``). Benchmark items and corpus documents go
through the same fold, so clean text matches exactly as before; an ASCII text is only
lowercased (no other work).

:func:`fold_spans` maps the folded text back to the original, so evidence spans stay offsets
into the document as written.
"""

from __future__ import annotations

import re
import unicodedata

# A "word" is a run of letters/digits (Unicode-aware); everything else separates words.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SPACE = re.compile(r"\s+")

#: Invisible characters dropped by :func:`fold`: zero-width space, joiners and non-joiner,
#: directional marks and embeddings, word joiner and invisible operators, the byte-order mark
#: (zero-width no-break space), soft hyphen, combining grapheme joiner, Mongolian vowel
#: separator, variation selectors. A zero-width space between two letters must not split a word.
INVISIBLE = (
    "\u00ad\u034f\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff" + "".join(chr(c) for c in range(0xFE00, 0xFE10))
)

#: Look-alike letters folded to the Latin letter they imitate (a small, common subset of
#: Unicode's confusables.txt: Cyrillic, Greek, Armenian and Latin-extension homoglyphs an
#: evasion would use). Applied after lowercasing, so a letter and its capital always fold
#: alike (Cyrillic ``В`` and ``в`` both read ``b``; Greek ``Ν`` and ``ν`` both read ``v``, the
#: small letter's look, as most text is lowercase).
CONFUSABLES = {
    # Cyrillic (small letters; their capitals lowercase to them first)
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "һ": "h", "ү": "y", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    # Greek
    "α": "a", "β": "b", "ε": "e", "ζ": "z", "η": "h", "ι": "i", "κ": "k", "μ": "m", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϳ": "j",
    # Armenian and Latin extensions
    "օ": "o", "ս": "u", "ɑ": "a", "ɡ": "g", "ı": "i", "ȷ": "j",
}  # fmt: skip

_TABLE = {ord(c): None for c in INVISIBLE} | {ord(k): v for k, v in CONFUSABLES.items()}
_NEEDS_TABLE = re.compile("[" + re.escape("".join(chr(c) for c in _TABLE)) + "]")
#: The table as (character, replacement) pairs, the zero-width space first: replaced one by one
#: with ``str.replace`` (the same as ``str.translate``: no replacement is itself in the table).
_TABLE_PAIRS = sorted(((chr(k), v or "") for k, v in _TABLE.items()), key=lambda kv: kv[0] != "\u200b")


def fold(text: str) -> str:
    """The text the token level reads: NFKC, lowercased, invisible characters dropped, look-alikes folded.

    >>> fold("Ja\u200bnet’s ducks")  # a zero-width space inside a word
    'janet’s ducks'
    >>> fold("Jаnеt") == "janet"  # Cyrillic а and е
    True
    >>> fold("ＧＳＭ８Ｋ ﬁle")  # full-width letters and digits, a ligature
    'gsm8k file'
    """
    if text.isascii():
        return text.lower()
    if "\u200b" in text:
        # The zero-width space is by far the commonest fold changer in web text (GitHub issues).
        # When dropping it leaves plain ASCII, the general path below would give the same: ASCII
        # with zero-width spaces is NFKC-normal, lowercasing leaves U+200B, the table drops it.
        # 597 of the 754 documents with a fold changer in the L1 bench corpus take this path
        # (about 8x cheaper than NFKC check + wide-string lowercasing + two table searches).
        stripped = text.replace("\u200b", "")
        if stripped.isascii():
            return stripped.lower()
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    if _NEEDS_TABLE.search(text):
        # Each table character present by a plain replace: ``str.translate`` with the table
        # looks a dict up per character (about 10x slower on the L1 bench corpus's documents
        # with look-alike letters; 80-odd ``in`` searches cost less even on a long text).
        for c, r in _TABLE_PAIRS:
            if c in text:
                text = text.replace(c, r)
    return text


def fold_char(c: str) -> str:
    """:func:`fold` of one character on its own (what the prefilter's character table is built from)."""
    return unicodedata.normalize("NFKC", c).lower().translate(_TABLE)


def nfkc(text: str) -> str:
    """NFKC-normalise and drop the invisible characters (no lowercasing, no look-alike folding)."""
    text = unicodedata.normalize("NFKC", text)
    return text.translate({ord(c): None for c in INVISIBLE}) if _NEEDS_TABLE.search(text) else text


def _joins_previous(c: str) -> bool:
    """Whether ``c`` may change under NFKC with the character before it (a combining mark, or
    a starter that composes with what precedes it, such as a Hangul vowel jamo)."""
    return bool(unicodedata.combining(c)) or c in composing_chars() or c in INVISIBLE


_COMPOSING: set[str] | None = None

#: :func:`find_composing_chars` in the Unicode version of Python 3.11 (14.0.0), as
#: :func:`chars_in_ranges` reads them.
_COMPOSING_14 = (
    "300-304 306-30c 30f 311 313-314 31b 323-328 32d-32e 330-331 338 342 345 5b4 5b7-5b9 5bc 5bf 5c1-5c2 653-655 93c 9bc "
    "9be 9d7 a3c b3c b3e b56-b57 bbe bd7 c56 cc2 cd5-cd6 d3e d57 dca dcf ddf f72 f74 f80 fb5 fb7 102e 1161-1175 11a8-11c2 "
    "1b35 3099-309a 110ba 11127 1133e 11357 114b0 114ba 114bd 115af 11930 1d165 1d16e-1d172 "
)


def chars_in_ranges(spec: str) -> str:
    """The characters of ``spec``: hexadecimal code points and ranges, separated by spaces.

    >>> chars_in_ranges("61-63 2e")
    'abc.'
    """
    out: list[str] = []
    for tok in spec.split():
        a, _, b = tok.partition("-")
        out.extend(map(chr, range(int(a, 16), int(b or a, 16) + 1)))
    return "".join(out)


def find_composing_chars() -> set[str]:
    """Characters that are the second half of a canonical composition (NFKC quick check
    'maybe'): they may merge with the character before them. A pass over Unicode."""
    out = {chr(c) for c in range(0x1161, 0x1176)} | {chr(c) for c in range(0x11A8, 0x11C3)}  # Hangul vowel, trailing jamo
    for cp in range(0x80, 0x30000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                out.add(chr(int(parts[1], 16)))
    return out


def composing_chars() -> set[str]:
    """:func:`find_composing_chars`, once a process (from a table in Unicode 14.0.0)."""
    global _COMPOSING
    if _COMPOSING is None:
        _COMPOSING = set(chars_in_ranges(_COMPOSING_14)) if unicodedata.unidata_version == "14.0.0" else find_composing_chars()
    return _COMPOSING


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_PLAIN: dict[str, bool] = {}


def _plain(c: str) -> bool:
    """Whether the non-ASCII character ``c`` folds alone to its lowercase, one character, wherever
    it stands: it joins no character before it, and no text around it changes its lowercase
    (the Greek capital sigma does: final sigma). Cached per character."""
    v = _PLAIN.get(c)
    if v is None:
        low = c.lower()
        v = _PLAIN[c] = len(low) == 1 and c != "\u03a3" and not _joins_previous(c) and fold(c) == low
    return v


def fold_spans(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`fold` of ``text`` with, for each folded character, the ``(start, end)`` in
    ``text`` of the characters it came from (a ligature's letters share one span, a dropped
    zero-width character belongs to the character before it).

    Folded piece by piece (a character with the combining marks and composing characters after
    it), so the pieces' folds can differ from the whole text's fold only in characters within a
    word (a Greek final sigma), never in where words start and end. Runs of characters that
    fold to their lowercase alone (ASCII, most letters of other scripts) are lowercased at
    once; only the pieces around the other characters (:func:`_plain`) are folded one by one.

    >>> folded, starts, ends = fold_spans("ﬁx Jа\u200bnet")
    >>> folded, starts[:2], ends[:2], starts[-5:]
    ('fix janet', [0, 0], [1, 1], [3, 4, 6, 7, 8])
    """
    if text.isascii():
        return text.lower(), list(range(len(text))), list(range(1, len(text) + 1))
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    n = len(text)
    pos = 0  # text[:pos] is folded
    for run in _NON_ASCII.finditer(text):
        for p in range(run.start(), run.end()):
            if p < pos or _plain(text[p]):
                continue
            # A piece to fold alone: the character before a joiner (it is plain or ASCII, or the
            # piece before would have taken the joiner), else this one; and the joiners after it.
            i = p - 1 if p > pos and _joins_previous(text[p]) else p
            if i > pos:  # characters that fold to their lowercase, one each
                pieces.append(text[pos:i].lower())
                starts.extend(range(pos, i))
                ends.extend(range(pos + 1, i + 1))
            j = i + 1
            while j < n and _joins_previous(text[j]):
                j += 1
            piece = fold(text[i:j])
            pieces.append(piece)
            starts.extend([i] * len(piece))
            ends.extend([j] * len(piece))
            pos = j
    if pos < n:
        pieces.append(text[pos:].lower())
        starts.extend(range(pos, n))
        ends.extend(range(pos + 1, n + 1))
    return "".join(pieces), starts, ends


def normalize(text: str) -> str:
    """Folded (:func:`fold`), punctuation removed, whitespace collapsed.

    >>> normalize("Janet’s  ducks lay 16 eggs!")
    'janet s ducks lay 16 eggs'
    """
    return " ".join(m.group(0) for m in _WORD.finditer(fold(text)))


def words(text: str) -> list[str]:
    """Normalised words of ``text``.

    >>> words("How many? 3,000 apples.")
    ['how', 'many', '3', '000', 'apples']
    """
    return [m.group(0) for m in _WORD.finditer(fold(text))]


def words_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Normalised words with their ``(start, end)`` character span in ``text`` (the original).

    >>> words_with_spans("Hi, Bоb")  # Cyrillic о
    [('hi', 0, 2), ('bob', 4, 7)]
    """
    folded, starts, ends = fold_spans(text)
    return [(m.group(0), starts[m.start()], ends[m.end() - 1]) for m in _WORD.finditer(folded)]


def collapse_whitespace(text: str) -> str:
    """Strip and collapse runs of whitespace to one space."""
    return _SPACE.sub(" ", text).strip()
