"""The token-level (L1) scan on real benchmark items injected into real-looking text."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace

import numpy as np
import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contam.data import Document, load_benchmark
from contam.data.webtext import build_corpus, inject, paragraphs
from contam.errors import ConfigError
from contam.scan.exact import ExactScanner, lcs_ratio
from contam.scan.hashing import SEPARATORS, normalized_words, text_words, word_hashes
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.prefilter import _CASE_CHANGERS_14, _cut_bytes, find_case_changers, text_keys


@pytest.fixture(scope="module")
def items():
    return load_benchmark("gsm8k") + load_benchmark("humaneval") + load_benchmark("mmlu")


@pytest.fixture(scope="module")
def scanner(items):
    return NGramScanner(NGramConfig()).fit(items)


def _docs(raw):
    return [Document(id=d["id"], text=d["text"], line=i + 1) for i, d in enumerate(raw)]


def test_injected_items_found_with_id_and_part(scanner, items) -> None:
    rng = random.Random(11)
    chosen = rng.sample(items[:1319], 10) + rng.sample(items[1319:1483], 10) + rng.sample(items[1483:], 10)
    raw, truth = build_corpus(400, seed=5, items=chosen, parts=("question", "item"), edits=("verbatim", "light"))
    results = {r.line: r for r in scanner.scan(_docs(raw))}
    for t in truth:
        r = results[t.line]
        assert r.contaminated, t
        flag = next((f for f in r.flags if f.item_id == t.item_id), None)
        assert flag is not None, (t, [f.item_id for f in r.flags])
        if t.edit == "verbatim" or t.part == "question":
            assert flag.part == t.part, (t, flag.part, flag.scores)
        else:
            # Two substitutions can break every 13-gram of a short question; the seam into the
            # answer may be what is left. Any part of the item is then a right answer.
            assert flag.part in ("item", "question", "answer", "seam"), (t, flag.part)
        if t.edit == "verbatim":
            assert flag.score > 0.95, (t, flag.scores)
        # The injected item is the best match (items sharing a passage may also match, less well).
        assert r.flags[0].score == pytest.approx(max(f.score for f in r.flags))
        assert flag.score >= r.flags[0].score - 0.05
    # Nothing flagged outside the injected documents.
    assert {r.line for r in results.values() if r.contaminated} == {t.line for t in truth}


def test_answer_only_leak_is_the_answer_part(scanner, items) -> None:
    item = items[42]  # a GSM8K item with a worked solution
    doc = "Solutions posted by a tutor:\n\n" + item.solution + "\n\nThanks for reading."
    r = scanner.scan_one(Document(id="d", text=doc))
    assert r.best.item_id == item.id and r.best.part == "answer"


def test_evidence_spans_point_into_the_document(scanner, items) -> None:
    item = items[1319 + 7]  # HumanEval/7
    rng = random.Random(3)
    text, span = inject("\n\n".join(paragraphs()[:5]), item, rng, part="item")
    r = scanner.scan_one(Document(id="d", text=text))
    ev = [e for f in r.flags if f.item_id == item.id for e in f.evidence]
    assert ev and all(e.kind in ("ngram", "exact", "near_exact", "lcs") and e.doc_span for e in ev)
    lo, hi = min(e.doc_span[0] for e in ev), max(e.doc_span[1] for e in ev)
    assert span[0] <= lo < hi <= span[1]
    assert hi - lo > 0.9 * (span[1] - span[0])
    for e in ev:
        assert normalized_words(text[e.doc_span[0] : e.doc_span[1]])[:50] == normalized_words(e.text)[:50]


def test_clean_web_text_gives_no_hit(scanner) -> None:
    raw, _ = build_corpus(3000, seed=9, items=[])
    assert [r.doc_id for r in scanner.scan(_docs(raw)) if r.contaminated] == []


def test_boilerplate_shared_by_many_items_does_not_flag(items) -> None:
    """A page made of the phrases GSM8K items share most ("how much money does she", ...) is
    not a leak: IDF gives those n-grams almost no weight."""
    gsm = items[:1319]
    df: Counter[tuple[str, ...]] = Counter()
    for it in gsm:
        w = normalized_words(it.question)
        df.update({tuple(w[i : i + 5]) for i in range(len(w) - 4)})
    page = ". ".join(" ".join(g) for g, _ in df.most_common(60))
    doc = Document(id="d", text=f"Tips for word problems: {page}.")
    weighted = NGramScanner(NGramConfig(n=5, threshold=0.001)).fit(gsm).scan_one(doc)
    flat = NGramScanner(NGramConfig(n=5, threshold=0.001, idf=False)).fit(gsm).scan_one(doc)
    assert flat.contaminated and weighted.contaminated
    by_item = {f.item_id: f.score for f in weighted.flags}
    assert all(by_item.get(f.item_id, 0.0) < f.score for f in flat.flags[:20])
    assert not NGramScanner(NGramConfig(n=5)).fit(gsm).scan_one(doc).contaminated


def test_gsm8k_train_vs_test_flag_rate() -> None:
    """GSM8K train (7,473 question + solution documents) scanned against GSM8K test at the default
    settings flags 2 documents: 0.027% (measured 2026-11-22). Both are real near-duplicates, the
    same template with other numbers: train/1314 "A train travels 270 miles in 3 hours. At the
    same rate, how many additional hours would it take to travel an additional 180 miles?" and
    train/5162 (360 and 240 miles) vs test/602 "A plane travels 1200 miles in 3 hours. At the same
    rate, ..." (13-gram coverage 0.76, near-exact alignment ratio 0.95). Before the seam needed
    0.8 coverage a third, weaker seam match (train/6910 vs test/893) was flagged too."""
    test, train = load_benchmark("gsm8k"), load_benchmark("gsm8k-train")
    scanner = NGramScanner(NGramConfig()).fit(test)
    docs = [Document(id=it.id, text=it.question + "\n" + it.solution, line=i + 1) for i, it in enumerate(train)]
    flagged = [r for r in scanner.scan(docs) if r.contaminated]
    rate = len(flagged) / len(docs)
    assert rate <= 0.0003, rate
    pairs = {(r.doc_id, r.best.item_id) for r in flagged}
    assert ("gsm8k/train/1314", "gsm8k/test/602") in pairs


def test_llama2_style_catches_edits_gpt3_misses(items) -> None:
    item = next(it for it in items[1483:] if 14 <= len(normalized_words(it.question)) <= 30)
    words = item.question.split()
    # Substitute every 9th word: no 13-gram survives, most 8-grams with a skip budget do.
    edited = " ".join("thing" if i % 9 == 4 else w for i, w in enumerate(words))
    doc = Document(
        id="d", text="Notes from class.\n\n" + edited + "\n" + "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(item.choices))
    )
    strict = NGramScanner(NGramConfig.gpt3()).fit(items[1483:]).scan_one(doc)
    loose = NGramScanner(NGramConfig.llama2()).fit(items[1483:]).scan_one(doc)
    assert any(f.item_id == item.id for f in loose.flags)
    assert not any(f.item_id == item.id and f.scores.get("coverage", 0) > loose.best.score for f in strict.flags)


def test_short_item_found_by_anchor_exact_and_lcs(items) -> None:
    mmlu = items[1483:]
    scanner = NGramScanner(NGramConfig()).fit(mmlu)
    short = [p for p, w in scanner.index.short_words.items() if scanner.index.part_kind[p] == 0 and len(w) < 13]
    assert short, "some MMLU question parts are shorter than 13 words"
    item = mmlu[int(scanner.index.part_item[short[0]])]
    leak = item.question + "\n" + "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(item.choices))
    r = scanner.scan_one(Document(id="d", text="Practice test.\n" + leak + "\nGood luck!"))
    assert r.best.item_id == item.id and r.best.evidence[0].kind == "exact"
    words = leak.split()
    edited = " ".join([*words[:-1], "(" + words[-1] + ")!"]).replace(words[len(words) // 2], words[len(words) // 2] + "s", 1)
    r2 = scanner.scan_one(Document(id="d", text="Practice test.\n" + edited + "\nGood luck!"))
    assert r2.contaminated and r2.best.item_id == item.id


def test_exact_scanner_and_lcs_ratio(items) -> None:
    assert lcs_ratio("abcdef", "xxabcdyy") == pytest.approx(4 / 6)
    assert lcs_ratio("", "abc") == 0.0
    ex = ExactScanner().fit(items[:50])
    same = Document(id="a", text=items[3].question.upper())
    near = Document(id="b", text=items[3].question.replace("?", "").replace(" the ", " a ", 1))
    other = Document(id="c", text=paragraphs()[0])
    r = list(ex.scan([same, near, other]))
    assert r[0].best.item_id == items[3].id and r[0].best.evidence[0].kind == "exact"
    assert r[1].best.item_id == items[3].id and r[1].best.score >= 0.9
    assert not r[2].contaminated


def test_config_validation() -> None:
    with pytest.raises(ConfigError):
        NGramConfig(n=1)
    with pytest.raises(ConfigError):
        NGramConfig(threshold=0)
    with pytest.raises(ConfigError):
        NGramConfig(parts=("question", "preamble"))
    with pytest.raises(ConfigError, match="fit"):
        NGramScanner().scan_one(Document(id="d", text="x"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=60), min_size=1, max_size=6))
def test_fast_path_words_match_regex_words(texts) -> None:
    wh, _, _, doc = word_hashes(texts)
    assert len(wh) == sum(len(text_words(t)) for t in texts)
    # Equal normalised words hash equal, wherever they are.
    flat = [w for t in texts for w in normalized_words(t)]
    seen: dict[str, int] = {}
    for w, h in zip(flat, wh.tolist(), strict=True):
        assert seen.setdefault(w, h) == h
    assert list(doc) == sorted(doc)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), max_size=80), min_size=1, max_size=5))
def test_ascii_fast_path_spans_equal_regex_spans(texts) -> None:
    _, starts, ends, doc, offsets = word_hashes(texts, with_offsets=True)
    for d, t in enumerate(texts):
        sel = doc == d
        got = list(zip((starts[sel] - offsets[d]).tolist(), (ends[sel] - offsets[d]).tolist(), strict=True))
        assert got == text_words(t)


# -- the prefilter in front of the exact scorer ------------------------------------------------

# Characters where a prefilter could part ways with the exact scorer: separators, characters
# whose lowercase is ASCII or another length (Kelvin sign, dotted I), cased letters, escapes.
_ODD = list(SEPARATORS + _CASE_CHANGERS_14) + list("ÉéΣσςİıKkÅåẞß\u0307\u00ad\u200d_-.,;'\"\\/\n\t 0123456789aZz\x00\x10\x19\x7f")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(_ODD)), max_size=16), min_size=1, max_size=8))
@example(["İstanbul", "5 \u212aelvin"])
@example([f"a{c}b {c}" for c in find_case_changers()])
@example(["\u1e9eTRASSE — \u201cÉcole\u201d", "ΣΊΣΥΦΟΣ"])
def test_prefilter_keys_are_a_function_of_the_exact_words(texts) -> None:
    """The prefilter's recall rests on this: it sees the words the exact scorer hashes (the
    existing test above ties those to ``normalized_words``), and a word's key depends only on
    the word as the scorer sees it (lowercased), so every window the scorer can match, the
    prefilter matches too. Each text also appears upper-, lower- and title-cased."""
    variants = [v for t in texts for v in (t, t.upper(), t.lower(), t.title())]
    keys = text_keys(variants)
    seen: dict[str, int] = {}
    for t, k in zip(variants, keys, strict=True):
        words = normalized_words(t)
        assert len(k) == len(words), (t, words)
        for w, h in zip(words, k.tolist(), strict=True):
            assert seen.setdefault(w, h) == h, (w, t)


def _line_keys(block: bytes) -> tuple[list[list[int]], set[int]]:
    """The word keys the prefilter cuts from each raw JSON line, and the lines it leaves to their text."""
    ws, nw, odd = _cut_bytes(block, True, len(block) + 1)
    assert not ws.split  # valid lines: each ends outside any JSON value
    keys = np.diff(ws.c[: nw + 1]).tolist()
    line = np.searchsorted(ws.ends[: ws.n_ends], ws.starts[:nw]).tolist()
    out: list[list[int]] = [[] for _ in range(ws.n_ends + 1)]
    for k, at in zip(keys, line, strict=True):
        out[at].append(k)
    return out, set(odd.tolist())


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.characters(codec="utf-8"), st.sampled_from([*_ODD, "\\", "\\u", '"', "u00e9", "{", "}"])), max_size=24).map(
            "".join
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 7),
    st.sampled_from(["ascii", "utf-8", "orjson"]),
)
@example(["caf\u00e9 na\u00efve \u212aelvin", "a\\u00e9 b\\\\n c", "x" * 7 + "\\"], 0, "ascii")
@example(["😀 ok \u2019quoted\u2019 \u0130stanbul"], 3, "ascii")
def test_prefilter_cuts_raw_json_lines_as_their_texts(texts, pad, how) -> None:
    """Cut straight from raw JSON lines (escapes of every kind, surrogate pairs, any alignment
    of the text in 8-byte chunks), each line's text is a run of the line's words, with the
    keys the text gets on its own; or the line is one left to be cut from its text."""
    recs = [{"id": "x" * pad, "text": t} for t in texts]
    if how == "orjson":
        block = b"".join(orjson.dumps(r) + b"\n" for r in recs)
    else:
        block = "".join(json.dumps(r, ensure_ascii=how == "ascii") + "\n" for r in recs).encode()
    lines, odd = _line_keys(block)
    for i, t in enumerate(texts):
        if i not in odd:
            want, got = text_keys([t])[0].tolist(), lines[i]
            assert any(got[j : j + len(want)] == want for j in range(len(got) - len(want) + 1)), (t, how)


def _oddify(text: str, k: int) -> str:
    """A leak as odd text shows it: shouted, non-breaking spaces, curly quotes, look-alike letters."""
    return [
        text.upper(),
        text.replace(" ", "\u00a0"),
        text.replace("'", "\u2019").replace('"', "\u201c"),
        text.replace("K", "\u212a").replace("k", "\u212a"),  # Kelvin sign: lowercases to ASCII k
        text.replace("I", "\u0130").replace("i", "\u0130"),  # dotted capital I: lowercase is 2 characters
        text.replace(" ", " \u00e9 ", 3).title(),
    ][k % 6]


def test_prefilter_passes_every_document_the_exact_scorer_flags(items, scanner) -> None:
    """On real text: injected GSM8K / HumanEval / MMLU items (verbatim and lightly edited, also
    in odd Unicode), GSM8K train against the whole benchmark, clean web text. Every document the
    exact scorer flags on its own is a prefilter candidate, and the results with the prefilter
    are the results without it, flag for flag."""
    rng = random.Random(4)
    chosen = rng.sample(items[:1319], 25) + rng.sample(items[1319:1483], 25) + rng.sample(items[1483:], 25)
    raw, truth = build_corpus(900, seed=6, items=chosen, parts=("question", "item"), edits=("verbatim", "light"))
    docs = _docs(raw)
    injected = {t.line for t in truth}
    docs += [
        Document(id=f"odd-{d.line}", text=_oddify(d.text, k), line=2000 + k) for k, d in enumerate(d for d in docs if d.line in injected)
    ]
    train = load_benchmark("gsm8k-train")[:2500]
    docs += [Document(id=it.id, text=it.question + "\n" + it.solution, line=5000 + i) for i, it in enumerate(train)]
    exact = NGramScanner(replace(scanner.config, prefilter=False))
    exact.index = scanner.index
    flagged_alone = {r.doc_id for r in exact.scan(docs) if r.contaminated}
    cand = scanner.prefilter.candidates([d.text for d in docs])
    assert flagged_alone <= {docs[i].id for i in cand.tolist()}
    assert len(flagged_alone) >= 0.9 * 2 * len(truth)  # the odd copies are found too
    assert len(cand) < 0.2 * len(docs)  # and the prefilter does filter
    batch = [r.to_dict() for r in scanner.scan(docs)]
    assert batch == [r.to_dict() for r in exact.scan(docs)]


@pytest.mark.parametrize(
    "config",
    [
        NGramConfig.llama2(),
        NGramConfig(n=6, min_words=10, parts=("question",)),
        NGramConfig(anchor_words=0),
        NGramConfig(n=16, min_words=5),
    ],
)
def test_prefilter_superset_under_other_settings(items, config) -> None:
    """Shorter n-grams than anchors, Llama-2 style skips, no anchors, n-grams much longer than
    anchors (a head every 12th word): the prefilter follows the index it is built with."""
    rng = random.Random(12)
    chosen = rng.sample(items[:1319], 8) + rng.sample(items[1483:], 8)
    raw, _ = build_corpus(300, seed=13, items=chosen, parts=("question", "item"), edits=("verbatim", "light"))
    docs = _docs(raw)
    with_pf = NGramScanner(config).fit(items)
    without = NGramScanner(replace(config, prefilter=False))
    without.index = with_pf.index
    flagged = {r.doc_id for r in without.scan(docs) if r.contaminated}
    assert flagged and flagged <= {docs[i].id for i in with_pf.prefilter.candidates([d.text for d in docs]).tolist()}
    assert [r.to_dict() for r in with_pf.scan(docs)] == [r.to_dict() for r in without.scan(docs)]


def test_prefilter_finds_every_benchmark_ngram_at_every_offset(items) -> None:
    """The prefilter keeps a head only every n - m + 1 words of a part: any single benchmark
    n-gram, wherever it starts in its part, still makes its document a candidate (and the
    window before it, one word short, does not need to)."""
    scanner = NGramScanner(NGramConfig()).fit(items)
    n = scanner.config.n
    docs = []
    for it in items[:40] + items[1319:1329] + items[1483:1493]:
        words = normalized_words(it.question)
        docs += [f"Notes {k}: " + " ".join(words[k : k + n]) + " (end)" for k in range(0, max(0, len(words) - n + 1), 1)]
    assert len(docs) > 1000
    assert scanner.prefilter.candidates(docs).tolist() == list(range(len(docs)))


def test_case_changers_listed_for_this_unicode_version() -> None:
    """The short list of characters whose lowercase the prefilter cannot fold byte for byte is
    the one a brute-force pass over Unicode finds (under another Python it is found afresh)."""
    import unicodedata

    if unicodedata.unidata_version == "14.0.0":
        assert find_case_changers() == _CASE_CHANGERS_14
    assert "\u212a" in find_case_changers() and "\u0130" in find_case_changers()
