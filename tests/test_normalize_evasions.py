"""Issue 15 item 7: the token level sees through cheap evasions (zero-width characters inside
words, Cyrillic / Greek look-alike letters, full-width forms), on real GSM8K questions, through
the in-memory scanner and the JSONL fast path (raw-byte prefilter); clean text reads as before."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam.data import Document, load_benchmark
from contam.data.normalize import CONFUSABLES, INVISIBLE, fold, fold_spans, words_with_spans
from contam.data.webtext import paragraphs
from contam.scan.hashing import WORD_RE, normalized_words, text_words, word_hashes
from contam.scan.job import run_scan
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.prefilter import find_fold_changers, text_keys

ZWSP = "\u200b"


@pytest.fixture(scope="module")
def items():
    return load_benchmark("gsm8k")


@pytest.fixture(scope="module")
def scanner(items):
    return NGramScanner(NGramConfig()).fit(items)


def _zero_width(text: str) -> str:
    """A zero-width space between the letters of every word (what an evader does to break n-grams)."""
    return "".join(c + ZWSP if c.isalpha() and i + 1 < len(text) and text[i + 1].isalpha() else c for i, c in enumerate(text))


def _cyrillic(text: str) -> str:
    """Latin a and e replaced by Cyrillic а and е (they look identical)."""
    return text.replace("a", "\u0430").replace("e", "\u0435")


def _greek_fullwidth(text: str) -> str:
    """Greek omicron for o, full-width digits, a soft hyphen inside long words."""
    out = text.replace("o", "\u03bf")
    out = "".join(chr(ord(c) - 0x30 + 0xFF10) if c.isdigit() else c for c in out)
    return " ".join(w[:3] + "\u00ad" + w[3:] if len(w) > 6 else w for w in out.split(" "))


EVASIONS = {"zero-width": _zero_width, "cyrillic": _cyrillic, "greek+fullwidth": _greek_fullwidth}


def _leak(items, k: int, evade) -> tuple[str, str]:
    """A web page holding GSM8K test question ``k``, evaded; returns (document, item id)."""
    pool = paragraphs()
    item = items[k]
    return pool[k % len(pool)] + "\n\n" + evade(item.question) + "\n\n" + pool[(k + 7) % len(pool)], item.id


@pytest.mark.parametrize("name", list(EVASIONS))
def test_evaded_gsm8k_question_is_found_in_memory(scanner, items, name) -> None:
    """A real GSM8K test question with the evasion applied is flagged for its own item, and the
    evidence spans are offsets into the document as written (covering the evaded question)."""
    evade = EVASIONS[name]
    for k in (3, 250, 1000):
        text, item_id = _leak(items, k, evade)
        assert items[k].question not in text  # the evasion did change the text
        res = scanner.scan_one(Document(id=f"d{k}", text=text))
        assert res.contaminated and res.best.item_id == item_id, (name, k)
        assert res.best.part in ("question", "item")
        for e in res.best.evidence:
            a, b = e.doc_span
            assert text[a:b] == e.text[: b - a] or e.text.endswith("…")
            assert fold(text[a:b]).replace(ZWSP, "") in fold(text)


@pytest.mark.parametrize("name", list(EVASIONS))
def test_evaded_gsm8k_question_is_found_through_the_jsonl_fast_path(items, tmp_path, name) -> None:
    """The same through ``run_scan`` (raw JSONL bytes, the compiled prefilter in front), with the
    evaded lines written both as UTF-8 and as ASCII ``\\u`` escapes."""
    evade = EVASIONS[name]
    pool = paragraphs()
    corpus = tmp_path / "c.jsonl"
    want = {}
    with open(corpus, "w", encoding="utf-8") as fh:
        for line in range(1, 201):
            if line % 40 == 0:
                k = line * 6
                text, item_id = _leak(items, k, evade)
                want[line] = item_id
                fh.write(json.dumps({"text": text}, ensure_ascii=line % 80 == 0) + "\n")
            else:
                fh.write(json.dumps({"text": pool[line % len(pool)]}) + "\n")
    s = run_scan(corpus, items, tmp_path / "out", workers=1)
    got = {}
    for raw in open(tmp_path / "out" / "flags.jsonl", encoding="utf-8"):
        r = json.loads(raw)
        got[r["line"]] = r["flags"][0]["item_id"]
    assert got == want, name
    assert s["flagged"] == len(want)


def test_before_the_fold_these_evasions_were_missed(items) -> None:
    """What the issue measured (0 of 1 each): without the fold the evaded question shares no
    13-gram with the item, so this test cannot pass by a matcher that ignores the fold."""
    q = items[3].question
    plain = " ".join(w.lower() for w in WORD_RE.findall(q))
    for evade in (_zero_width, _cyrillic):
        raw_words = " ".join(w.lower() for w in WORD_RE.findall(evade(q).replace(ZWSP, " ")))
        assert raw_words != plain
        assert " ".join(normalized_words(evade(q))) == plain


def test_clean_text_folds_to_its_lowercase() -> None:
    """Clean text reads as before: ASCII and ordinary accented/curly-quoted text fold to their lowercase."""
    for t in ["Janet’s ducks lay 16 eggs per day.", "Café NAÏVE — “quoted” «guillemets»", "ΨΔΦΩ ψδφω Ελλάδα"[:9], "数学 問題 ５"[:5]]:
        assert fold(t) == t.lower()
    for p in paragraphs()[:300]:
        if unicodedata.is_normalized("NFKC", p) and not any(c in p for c in INVISIBLE) and not any(c in p for c in CONFUSABLES):
            assert fold(p) == p.lower()


def test_a_letter_and_its_capital_fold_alike() -> None:
    """Case-insensitive as before: the look-alike fold comes after lowercasing."""
    for c in CONFUSABLES:
        assert fold(c.upper()) == fold(c) == CONFUSABLES[c], c
    assert fold("ΔΈΣΜΗ") == fold("δέσμη") and fold("ВОДА") == fold("вода")


def test_fold_table_and_fold_changers() -> None:
    changers = set(find_fold_changers())
    for c in [ZWSP, "\ufeff", "\u00ad", "\u0430", "\u0410", "\u03bf", "\uff21", "\ufb01", "\u0301"]:
        assert c in changers, hex(ord(c))
    for c in ["é", "ß", "ж", "中", "\u2019", "\u00a0"]:
        assert c not in changers, c


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(codec="utf-8"),
            st.sampled_from([*INVISIBLE, *CONFUSABLES, "\u0301", "\uff21", "\ufb01", "\u2026", "\u00bd", " ", "a"]),
        ),
        max_size=40,
    )
)
def test_fold_spans_keep_word_boundaries(text: str) -> None:
    """The piecewise fold used for spans cuts the same words as the fold of the whole text, and
    every span maps back into the original text."""
    folded, starts, ends = fold_spans(text)
    assert len(WORD_RE.findall(folded)) == len(WORD_RE.findall(fold(text)))
    assert len(starts) == len(ends) == len(folded)
    assert all(0 <= a < b <= len(text) for a, b in zip(starts, ends, strict=True))
    spans = text_words(text)
    assert len(spans) == len(normalized_words(text))
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert len(word_hashes([text])[0]) == len(spans)
    assert len(text_keys([text])[0]) == len(spans)


def test_words_with_spans_point_to_the_original() -> None:
    text = "Jа\u200bnet’s ducks"
    assert words_with_spans(text) == [("janet", 0, 6), ("s", 7, 8), ("ducks", 9, 14)]


def test_fold_of_zero_width_spaces_in_ascii_is_the_general_path() -> None:
    """The zero-width-space shortcut of ``fold`` gives what NFKC, lowercasing and the table give,
    on real paragraphs of the L1 bench's web text with zero-width spaces put between letters."""
    from contam.data.normalize import _TABLE

    def general(t: str) -> str:
        return unicodedata.normalize("NFKC", t).lower().translate(_TABLE)

    texts = [p for p in paragraphs()[:400] if p.isascii()][:200]
    zw = ["\u200b".join(t[i : i + 3] for i in range(0, len(t), 3)) for t in texts]
    mixed = [t + " Jа\u200bnet’s ﬁle" for t in zw[:20]]  # not ASCII once the spaces are gone: general path
    for t in zw + mixed + ["\u200b", "A\u200b\u200bB", "\u200bÉcole"]:
        assert fold(t) == general(t), t[:60]
