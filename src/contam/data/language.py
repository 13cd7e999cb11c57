"""The language of a text, and which of the shipped embedders covers it.

The semantic level embeds English text with MiniLM and routes every other language to the
multilingual embedder (multilingual-e5-small, the ~100 languages of XLM-R). A text in a language
that embedder was not trained on is still scored, but it is named in the scan's summary rather
than silently trusted. Detection is py3langid (langid.py's 97-language model, shipped in its
wheel, BSD-3-Clause) on the first ``max_chars`` characters; very short texts in Latin script and
symbol-only ones count as English, the primary embedder's language.

>>> detect_language("Natalia sold clips to 48 of her friends in April.")
'en'
>>> detect_language("Natalia verkaufte im April Haarspangen an 48 ihrer Freundinnen.")
'de'
>>> detect_language("Mata koki itu berkaca-kaca. Ia telah kehabisan bawang.")  # Malay or Indonesian: never English
'ms'
>>> detect_language("黑豹队的防守丢了多少分？"), detect_language("¿Cuántos balones interceptó Josh Norman?")  # short, yet plain
('zh', 'es')
>>> covered_by_multilingual("sw"), covered_by_multilingual("yo")
(True, False)
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

#: The languages multilingual-e5-small was trained on (XLM-R's CC-100 list, ISO 639-1 where one exists).
E5_LANGUAGES = frozenset(
    "af am ar as az be bg bn br bs ca cs cy da de el en eo es et eu fa fi fr fy ga gd gl gu ha he hi hr hu hy id is it "
    "ja jv ka kk km kn ko ku ky la lo lt lv mg mk ml mn mr ms my ne nl nb nn no om or pa pl ps pt ro ru sa sd si sk sl so "
    "sq sr su sv sw ta te th tl tr ug uk ur uz vi xh yi zh".split()
)

#: langid labels for varieties whose written language the embedder knows under another code.
ALIASES = {"wuu": "zh", "yue": "zh", "ary": "ar", "arz": "ar", "nn": "no", "nb": "no", "zxx": "en"}

_ASCII_LETTERS = re.compile(r"[A-Za-z]")

#: Below this many letters a text is too short to tell its language: it goes to the primary embedder.
MIN_LETTERS = 12


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _letters(text: str) -> int:
    if text.isascii():  # the common case, at C speed
        return len(_ASCII_LETTERS.findall(text))
    return sum(ch.isalpha() for ch in text)


def detect_language(text: str, max_chars: int = 1000, min_prob: float = 0.6) -> str:
    """ISO 639-1 code of ``text``'s language; ``en`` when it is English or too short to tell. A text
    mostly in Latin letters needs ``min_prob`` to leave English (code with English comments, or a
    few foreign names, stays English); a text of mostly non-Latin letters (Chinese, Thai, Bengali...)
    is never English, whatever langid's confidence."""
    head = text[:max_chars]
    if _NOT_PROSE.search(head):
        # Code speaks the language of its comments and docstrings (a Go port with Spanish comments
        # is Spanish), though its keywords and names make almost any of it "English" to langid. Only
        # plain evidence counts: a short English comment alone can read as Latin.
        said = _comments(head)
        n = _letters(said)
        if n >= 2 * MIN_LETTERS and (_non_latin_share(said, n) >= 0.3 or _plainly_not_english(said)):
            return detect_language(said, max_chars, min_prob)
    letters = _letters(head)
    # A few letters tell nothing in Latin script, but a short question in Chinese, Hindi or Thai
    # (each letter a syllable or a word) is plainly not English.
    if letters < MIN_LETTERS and (head.isascii() or letters < 2 or _non_latin_share(head, letters) < 0.5):
        return "en"
    lang, prob = _identifier().classify(head)
    if lang == "en":
        if head.isascii():
            return "en"
        foreign = sum(ch.isalpha() and not ch.isascii() for ch in head) / letters
        return "en" if foreign < 0.3 else "und"
    lang = ALIASES.get(str(lang), str(lang))
    if float(prob) >= min_prob or _non_latin_share(head, letters) >= 0.3:
        return lang
    # Unsure between two close languages (Indonesian and Malay split a short sentence about evenly,
    # each under min_prob) is not unsure whether it is English; nor is a short question that langid
    # spreads over Spanish, Aragonese and Galician with next to nothing on English. Code and LaTeX,
    # which langid spreads over many languages, stay English.
    return lang if _between_two(head) or _plainly_not_english(head) else "en"


#: A character of code or LaTeX: a text holding one is not read as prose by :func:`_plainly_not_english`.
_NOT_PROSE = re.compile(r"[\\{}=_$<>\[\]#@|^~`*]")

#: How many times more of langid's probability its first language must hold than English.
NOT_ENGLISH_RATIO = 10.0
#: The same for two or three words in ASCII letters: of the 6,325 such English sentences of
#: Tatoeba's English side in LASER's test sets (bench/data/independent/tatoeba_short) 10x moves 4
#: ("She adores cats.", "Her toe bleeds."), 100x none, while 70 of the 94 such Swahili sentences
#: langid can classify (12 letters or more) and 45 of 50 Indonesian pass 100x.
SHORT_NOT_ENGLISH_RATIO = 100.0


_COMMENT = re.compile(r"^[ \t]*(?://+|#+|\*+|/\*+|--|;+)[ \t]?(.*)$", re.M)
_DOCSTRING = re.compile(r'("""|\'\'\')(.*?)\1', re.S)


def _comments(text: str) -> str:
    """The natural-language part of code: the lines of its comments and docstrings that hold no
    character of code (a doctest or an example call is code, whatever language it sits in)."""
    parts = [m.group(1) for m in _COMMENT.finditer(text)] + [m.group(2) for m in _DOCSTRING.finditer(text)]
    lines = (line.strip() for p in parts for line in p.splitlines())
    return "\n".join(line for line in lines if line and not _NOT_PROSE.search(line))


def _plainly_not_english(text: str) -> bool:
    """Whether ``text`` is prose (no character of code or LaTeX; two words at least, or a letter
    outside ASCII) on whose first language langid puts :data:`NOT_ENGLISH_RATIO` times what it puts
    on English (:data:`SHORT_NOT_ENGLISH_RATIO` for two or three words in ASCII letters)."""
    words = len(text.split())
    if _NOT_PROSE.search(text) or (text.isascii() and words < 2):
        return False  # code or LaTeX; or one plain word, too little to tell
    ranked = _ranked(text)
    english = next((float(p) for lang, p in ranked if lang == "en"), 0.0)
    # Two or three plain words ("Mimi si daktari.", "An ecclesia is:") need far more than prose does.
    ratio = SHORT_NOT_ENGLISH_RATIO if text.isascii() and words < 4 else NOT_ENGLISH_RATIO
    return float(ranked[0][1]) >= ratio * english


def _between_two(text: str) -> bool:
    """Whether langid puts at least 0.9 of ``text`` on two languages, neither of them English (its
    ``rank`` is best first; only texts langid is unsure of get here, so the second pass is rare)."""
    (first, p1), (second, p2) = _ranked(text)[:2]
    return "en" not in (first, second) and float(p1) + float(p2) >= 0.9


@lru_cache(maxsize=1024)
def _ranked(text: str) -> tuple[tuple[str, float], ...]:
    """langid's languages for ``text``, best first: one pass shared by the checks of an unsure text
    (:func:`_between_two`, :func:`_plainly_not_english`, and code's comments read twice)."""
    return tuple((str(lang), float(p)) for lang, p in _identifier().rank(text))


def _non_latin_share(text: str, letters: int) -> float:
    return sum(ch.isalpha() and not ch.isascii() and not _is_latin(ch) for ch in text) / max(1, letters)


def _is_latin(ch: str) -> bool:
    return "LATIN" in unicodedata.name(ch, "")


def detect_languages(texts: Sequence[str], max_chars: int = 1000) -> list[str]:
    """:func:`detect_language` of each text (ASCII prose that langid calls English skips nothing:
    Swahili and Indonesian are ASCII too, so every text is classified)."""
    return [detect_language(t, max_chars) for t in texts]


def sample_languages(texts: Sequence[str], sample: int = 200) -> Counter[str]:
    """Detected languages of at most ``sample`` evenly spaced ``texts`` (a benchmark's items): what
    its language is, without classifying every item of a large one.

    >>> sample_languages(["Natalia sold clips to 48 of her friends.", "Natalia verkaufte Haarspangen an 48 Freundinnen."])
    Counter({'en': 1, 'de': 1})
    """
    step = max(1, -(-len(texts) // sample))
    return Counter(detect_languages(list(texts[::step])))


def covered_by_multilingual(lang: str) -> bool:
    """Whether multilingual-e5-small was trained on ``lang``."""
    return lang in E5_LANGUAGES


def fold_digits(text: str) -> str:
    """``text`` with every decimal digit of any script (Bengali ৪৮, Thai ๔๘, Devanagari, full-width)
    written as ASCII, so numbers compare across translations.

    >>> fold_digits("৪৮ টি ক্লিপ, ๔๘ and ４８")
    '48 টি ক্লিপ, 48 and 48'
    """
    if text.isascii():
        return text
    out = []
    for ch in text:
        if not ch.isascii() and ch.isdigit():
            d = unicodedata.digit(ch, -1)
            out.append(str(d) if d >= 0 else ch)
        else:
            out.append(ch)
    return "".join(out)
