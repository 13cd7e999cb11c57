"""Issue 31 target 3: the token level pays for the fold only where a character the fold changes
stands. The fast paths must agree with the general ones on real text, with and without such
characters: ``fold_spans`` (runs lowercased at once) against folding piece by piece, and the
compiled prefilter cutting a zero-width space that follows no word character as a separator
(instead of folding the whole document) against cutting the document's fold."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam.data import load_benchmark
from contam.data.jsonl_check import UNSURE
from contam.data.normalize import _joins_previous, fold, fold_spans
from contam.data.webtext import paragraphs
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.prefilter import _cut_texts, text_keys

ZWSP = "\u200b"


def _fold_spans_by_piece(text: str) -> tuple[str, list[int], list[int]]:
    """The general fold with spans: every piece (a character and the joiners after it) folded alone."""
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and _joins_previous(text[j]):
            j += 1
        piece = fold(text[i:j])
        pieces.append(piece)
        starts.extend([i] * len(piece))
        ends.extend([j] * len(piece))
        i = j
    return "".join(pieces), starts, ends


def _samples() -> list[str]:
    """Real web paragraphs (the L1 bench's text) as they are, and with what evaders and other
    scripts put in them: zero-width spaces after spaces (as in the bench corpus) and inside
    words, look-alike letters, full-width digits, ligatures, combining accents, Greek capitals
    (final sigma), Hangul jamo."""
    rng = random.Random(31)
    pool = paragraphs()
    base = [p for p in pool if not p.isascii()][:60] + rng.sample([p for p in pool if p.isascii()], 60)
    extra = [
        lambda t: t.replace(" ", " " + ZWSP),
        lambda t: t.replace("e", "e" + ZWSP),
        lambda t: t.replace("a", "\u0430").replace("o", "\u03bf"),
        lambda t: t.replace("1", "\uff11").replace("fi", "\ufb01"),
        lambda t: t.replace("e", "e\u0301").replace("n", "n\u0303\u0323"),
        lambda t: t + " ΟΔΥΣΣΕΥΣ ΚΑΙ ΣΙΣΥΦΟΣ Σ " + "\u1100\u1161\u11a8 \u00bd \u2126",
        lambda t: "\u0301" + ZWSP + t + ZWSP + "\u00ad",
        lambda t: t.replace(" ", "\u00a0").replace("-", "\u2011") + "\ufeff",
    ]
    return base + [f(t) for t in base[::4] for f in extra]


def test_fold_spans_fast_path_is_the_piecewise_fold_on_real_text() -> None:
    for text in _samples():
        assert fold_spans(text) == _fold_spans_by_piece(text), text[:80]


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(codec="utf-8"),
            st.sampled_from(
                [ZWSP, "\u00ad", "\u0430", "\u03a3", "\u0301", "\u0323", "\u1161", "\uff21", "\ufb01", "\u0130", " ", "a", "é"]
            ),
        ),
        max_size=40,
    )
)
def test_fold_spans_fast_path_is_the_piecewise_fold(text: str) -> None:
    assert fold_spans(text) == _fold_spans_by_piece(text)


def test_zero_width_space_after_no_word_is_cut_as_a_separator() -> None:
    """A document whose zero-width spaces all follow a space, a newline or punctuation (all 3,461
    such documents of a 100 MB slice of the L1 bench corpus) is not folded: its cut gives the
    words and keys of its fold. One inside a word still has the document folded."""
    texts = [p.replace(" ", " " + ZWSP).replace("\n", "\n" + ZWSP) for p in paragraphs()[:200] if p.isascii()][:100]
    texts += [ZWSP + "Janet", "(\u200bJanet) \u200b\u200b sells \ufeff\u00ad eggs", "x \u200b" + "\u00e9t\u00e9 \u200b\u4e2d\u6587"]
    _, _, odd = _cut_texts(texts)
    assert not len(odd)
    for batch in (texts, [*texts, "\u00b2"]):  # alone, and beside a text that is folded and cut again
        for t, k in zip(texts, text_keys(batch), strict=False):
            assert np.array_equal(k, text_keys([fold(t)])[0]), t[:60]
    inside = ["Ja\u200bnet sells", "eggs\u200b.", "\u00e9\u200bt\u00e9", "Janet\u00ad"]
    _, _, odd = _cut_texts(inside)
    assert odd.tolist() == [0, 1, 2, 3]
    assert [k.tolist() for k in text_keys(inside)] == [text_keys([fold(t)])[0].tolist() for t in inside]


@pytest.fixture(scope="module")
def scanner():
    return NGramScanner(NGramConfig()).fit(load_benchmark("gsm8k"))


def test_jsonl_prefilter_with_zero_width_spaces_finds_what_the_fold_finds(scanner) -> None:
    """Raw JSON lines (UTF-8 and escaped) with zero-width spaces in every position, GSM8K
    questions among them: the raw-byte pass plus its odd lines picks what the prefilter picks
    from the folded texts, and only lines with a zero-width space after a word character are odd."""
    pf = scanner.prefilter
    items = load_benchmark("gsm8k")[:40]
    pool = [p for p in paragraphs()[:300] if p.isascii()][:40]
    texts = []
    for k, (p, it) in enumerate(zip(pool, items, strict=True)):
        q = it.question
        if k % 4 == 0:
            q = q.replace(" ", " " + ZWSP)  # after spaces: read as separators
        elif k % 4 == 1:
            q = "".join(c + ZWSP if c.isalpha() else c for c in q)  # inside words: the line is folded
        texts.append((p + "\n\n" + q) if k % 3 else p.replace(" ", "\n" + ZWSP))
    for ensure_ascii in (False, True):
        block = "".join(json.dumps({"id": str(i), "text": t}, ensure_ascii=ensure_ascii) + "\n" for i, t in enumerate(texts)).encode()
        cand, odd, _, one_each, status = pf.candidates_jsonl(block, field="text")
        assert one_each and status is not None and not (status == UNSURE).any()
        picked = pf.candidates_of_odd(cand, odd, texts)
        assert picked.tolist() == pf.candidates([fold(t) for t in texts]).tolist()
        assert {k for k in range(len(texts)) if k % 3} <= set(picked.tolist())  # every question found
        if not ensure_ascii:  # raw UTF-8: only a zero-width space after a letter makes a line odd
            assert odd.tolist() == [k for k in range(len(texts)) if k % 4 == 1 and k % 3]


def test_a_newline_read_into_an_escape_or_a_character_makes_the_block_unsure(scanner) -> None:
    pf = scanner.prefilter
    for block in (b'{"text": "a"}\n\\\n{"text": "b"}\n', b'{"text": "a"}\n\xe2\n{"text": "b"}\n'):
        *_, one_each, status = pf.candidates_jsonl(block, field="text")
        assert not one_each and status is not None and (status == UNSURE).all()
    *_, one_each, status = pf.candidates_jsonl(b'{"text": "a\\\\"}\n{"text": "\\n\\u200b"}\n', field="text")
    assert one_each and status is not None and not (status == UNSURE).any()


def test_fold_is_nfkc_lowercase_and_the_table_on_real_text() -> None:
    """``fold``'s shortcuts (ASCII, ASCII once its zero-width spaces are dropped, the table by
    ``str.replace`` of the characters present) give what the general definition gives."""
    import unicodedata

    from contam.data.normalize import _TABLE

    for text in _samples():
        assert fold(text) == unicodedata.normalize("NFKC", text).lower().translate(_TABLE), text[:80]


def test_the_stored_character_tables_are_what_a_pass_over_unicode_finds() -> None:
    """The fold-changer and composing-character tables a scan reads are stored for Unicode 14.0.0
    (finding them costs every scan process ~0.2 CPU-s); they are what the passes find."""
    import unicodedata

    from contam.data.normalize import _COMPOSING_14, chars_in_ranges, find_composing_chars
    from contam.scan.prefilter_tables import _FOLD_CHANGERS_14, find_fold_changers

    if unicodedata.unidata_version != "14.0.0":
        pytest.skip("the tables are computed in other Unicode versions")
    assert set(chars_in_ranges(_COMPOSING_14)) == find_composing_chars()
    assert chars_in_ranges(_FOLD_CHANGERS_14) == find_fold_changers()
