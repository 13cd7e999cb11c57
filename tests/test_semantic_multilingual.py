"""The semantic level's default (``learned``) rule on independently made translations and code ports
(bench/data/independent, made by other people): routing by language, the multilingual embedder,
flags that carry the rule that fired, and a language the embedder does not cover named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from contam.data import Document, Item, load_benchmark
from contam.data.language import detect_language
from contam.scan.combiner import load_combiners
from contam.scan.semantic import SemanticConfig, SemanticScanner

DATA = Path(__file__).resolve().parent.parent / "bench" / "data" / "independent"


def _read(name: str, file: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name / file).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def svamp() -> tuple[list[Item], list[dict]]:
    """SVAMP problems (English) and their MathOctopus translations (bn, de, es, fr, ja, ru, sw, th, zh)."""
    src = _read("mathoctopus_msvamp", "sources.jsonl")
    items = [Item(id=r["id"], question=r["text"], benchmark="svamp") for r in src[:120]]
    return items, _read("mathoctopus_msvamp", "variants.jsonl")


def test_default_rule_is_learned_with_a_shipped_combiner_per_route() -> None:
    cfg = SemanticConfig()
    assert cfg.rule == "learned" and cfg.threshold == 0.5 and cfg.multilingual == "e5-multilingual"
    assert {"minilm", "e5-multilingual"} <= set(load_combiners())
    assert SemanticConfig(rule="nn").threshold == 0.86  # the earlier rule keeps its own cosine threshold


def test_translations_are_routed_and_flagged_with_their_source(svamp: tuple[list[Item], list[dict]]) -> None:
    items, variants = svamp
    seen = {it.id for it in items[:60]}
    bench = items[:60]
    # One translation per language of seen items, and of unseen ones (same genre, same language).
    pos = [v for v in variants if v["source"] in seen][::9][:18]
    neg = [v for v in variants if v["source"] in {it.id for it in items[60:]}][::9][:18]
    sem = SemanticScanner(SemanticConfig()).fit(bench)
    s = sem.score([v["text"] for v in pos + neg])
    hit = s.flagged(0.5, "learned")
    assert s.multilingual.sum() >= 30  # non-English text goes to the multilingual embedder
    right = [bench[int(j)].id == v["source"] for j, v in zip(s.nearest[: len(pos), 0], pos, strict=True)]
    assert (hit[: len(pos)] & np.array(right)).sum() >= 0.8 * len(pos)
    assert hit[len(pos) :].sum() <= 2
    assert sum(sem.language_counts.values()) == len(pos) + len(neg)


def test_a_flag_says_which_rule_fired_and_never_shows_a_threshold_it_did_not_pass(svamp: tuple[list[Item], list[dict]]) -> None:
    items, variants = svamp
    sem = SemanticScanner(SemanticConfig()).fit(items[:40])
    ids = {it.id for it in items[:10]}
    de = [v for v in variants if v["source"] in ids and v["lang"] == "de"]
    docs = [Document(f"de{k}", v["text"]) for k, v in enumerate(de)]
    docs += [Document("en-copy", items[5].question), Document("other", "The weather in Paris was mild all week.")]
    res = list(sem.scan(docs))
    assert sum(r.contaminated for r in res[: len(de)]) >= 0.8 * len(de)
    assert [r.contaminated for r in res[len(de) :]] == [True, False]
    right = 0
    for r, v in zip(res, [*de, {"source": items[5].id}], strict=False):
        if not r.contaminated:
            continue
        f = r.flags[0]
        right += f.item_id == v["source"]  # SVAMP repeats templates: a flag may name a sibling item
        assert f.score >= f.threshold == 0.5
        comb = next(e for e in f.evidence if e.kind == "combiner")
        assert "learned rule" in comb.text and f"p {f.score:.3f}" in comb.text
        assert ("e5-multilingual" in comb.text) == (r.doc_id != "en-copy")
    assert right >= 0.8 * sum(r.contaminated for r in res)


def test_language_the_multilingual_embedder_does_not_cover_is_counted(svamp: tuple[list[Item], list[dict]]) -> None:
    items, _ = svamp
    sem = SemanticScanner(SemanticConfig()).fit(items[:20])
    # Yoruba (human translation of a SVAMP-like sentence): langid names it, multilingual-e5 was not trained on it.
    yo = "Julia ṣe eré pẹ̀lú àwọn ọmọdé mọ́kànlá ní ọjọ́ Ajé, ó sì ṣe eré pẹ̀lú àwọn ọmọdé méjìlá ní ọjọ́ Ìṣẹ́gun."
    sem.score([yo])
    lang = detect_language(yo)
    assert lang == "yo" and sem.uncovered[lang] == 1


def test_code_port_to_another_language_meets_its_python_source() -> None:
    src = {r["id"]: r["text"] for r in _read("humaneval_x", "sources.jsonl")}
    ports = [v for v in _read("humaneval_x", "variants.jsonl") if v["lang"] in ("cpp", "js")]
    ids = sorted(src)[:60]
    bench = [Item(id=i, question=src[i], benchmark="humaneval") for i in ids[:30]]
    pos = [v for v in ports if v["source"] in ids[:30]][:20]
    neg = [v for v in ports if v["source"] in ids[30:]][:20]
    sem = SemanticScanner(SemanticConfig()).fit(bench)
    s = sem.score([v["text"] for v in pos + neg])
    hit = s.flagged(0.5, "learned")
    right = np.array([bench[int(j)].id == v["source"] for j, v in zip(s.nearest[: len(pos), 0], pos, strict=True)])
    assert (hit[: len(pos)] & right).sum() >= 14
    assert hit[len(pos) :].sum() <= 2


def test_a_benchmark_not_in_english_meets_its_english_translations(svamp: tuple[list[Item], list[dict]]) -> None:
    # The benchmark is MathOctopus's Chinese SVAMP; the corpus holds the English originals, which are
    # translations of it as far as the scanner can tell. Routed by their own language alone, English
    # documents went to MiniLM, which cannot read the Chinese items.
    items, variants = svamp
    zh = {v["source"]: v["text"] for v in variants if v["lang"] == "zh"}
    bench = [Item(id=it.id, question=zh[it.id], benchmark="svamp-zh") for it in items[:60]]
    pos, neg = items[:60:3], items[60:120:3]
    sem = SemanticScanner(SemanticConfig()).fit(bench)
    assert sem.foreign_benchmark and sem.item_languages["zh"] == len(bench)

    def found() -> tuple[int, int, bool]:
        s = sem.score([it.question for it in pos + neg])
        hit = s.flagged(0.5, "learned")
        right = np.array([bench[int(j)].id == it.id for j, it in zip(s.nearest[: len(pos), 0], pos, strict=True)])
        return int((hit[: len(pos)] & right).sum()), int(hit[len(pos) :].sum()), bool(s.multilingual.all())

    # 11 of 20 (the other way round, Chinese documents against the English items: 12 of 20 on these
    # rows; SVAMP's sibling templates and Chinese numerals cost the rest).
    right, false, multi = found()
    assert multi and right >= 9 and false <= 2
    sem.item_languages.clear()  # the route before: by each document's own language
    assert found()[0] <= 2
    # An English benchmark keeps English documents on the primary embedder.
    assert not SemanticScanner(SemanticConfig()).fit(items[:20]).foreign_benchmark


def test_a_translation_is_matched_to_its_own_template_sibling(
    svamp: tuple[list[Item], list[dict]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # SVAMP tells one story several times with other numbers; a Chinese translation sits about as
    # close to every sibling (within .015), often nearest to the wrong one, whose numbers then
    # disagree. Siblings far closer to each other than to the document are judged alike, and the
    # document's numbers pick its source.
    from contam.scan import combiner

    items, variants = svamp
    zh = {v["source"]: v["text"] for v in variants if v["lang"] == "zh"}
    pos = items[:60:3]
    sem = SemanticScanner(SemanticConfig()).fit(items[:60])

    def found() -> int:
        s = sem.score([zh[it.id] for it in pos])
        right = np.array([items[int(j)].id == it.id for j, it in zip(s.nearest[:, 0], pos, strict=True)])
        assert (s.sim == s.nearest_sim[:, 0]).all()  # the match is first, with its own cosine
        return int((s.flagged(0.5, "learned") & right).sum())

    assert found() >= 17  # 18 of 20 when written
    monkeypatch.setattr(combiner, "SIBLING_MARGIN", 9.0)  # cosine order alone
    assert found() <= 13  # 12 of 20


#: Short Indonesian sentences from XCOPA (cambridgeltl/xcopa, data/id/val.id.jsonl, CC BY 4.0): langid
#: splits them between Indonesian and Malay, each under the probability a Latin-script text needs.
XCOPA_ID = (
    "Mata koki itu berkaca-kaca.\nA. Ia telah kehabisan bawang.\nB. Ia sedang memotong bawang.",
    "Anjing itu menggonggong.\nA. Kucing itu berbaring di sofa.\nB. Terdengar ketukan di pintu.",
)


def test_a_language_langid_splits_with_its_neighbour_is_not_english() -> None:
    assert all(detect_language(t) in ("id", "ms") for t in XCOPA_ID)
    # Text that langid spreads over many languages stays on the English route: code, LaTeX, a short question.
    fib = next(it for it in load_benchmark("humaneval") if it.id.endswith("/55"))  # "Return n-th Fibonacci number."
    assert detect_language(fib.question) == "en"
    assert detect_language("Compute $\\dbinom{10}{8}$.") == "en"
    assert detect_language("An ecclesia is:") == "en"


def test_short_questions_in_other_languages_are_not_english() -> None:
    # XQuAD's professional translations of SQuAD questions (bench/data/independent/xquad_questions):
    # a Chinese or Hindi question is often under twelve letters, each a word or a syllable, and a short
    # Spanish or German one is spread by langid over its neighbours with next to nothing on English.
    # Before: 208 of the 1,190 Chinese questions, 88 Spanish, 54 German, 14 Hindi read as English.
    data = Path(__file__).resolve().parent.parent / "bench" / "data" / "independent" / "xquad_questions"
    rows = [json.loads(x) for x in (data / "variants.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    english = {lang: sum(detect_language(r["text"]) == "en" for r in rows if r["lang"] == lang) for lang in ("zh", "es", "de", "hi")}
    assert english["zh"] <= 5 and english["es"] <= 5 and english["hi"] <= 2 and english["de"] <= 30, english
    # Their English sources stay English (two name a Latin or German term: langid's call, as before).
    sources = [json.loads(x)["text"] for x in (data / "sources.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    assert sum(detect_language(t) != "en" for t in sources) <= 2
    assert detect_language("An ecclesia is:") == detect_language("x = y_1 + {z}") == "en"


def test_two_or_three_words_leave_english_only_when_plainly_another_language() -> None:
    # Tatoeba's short sentences (bench/data/independent/tatoeba_short, CC BY 2.0 FR): a Swahili
    # sentence of two or three words ("Usivute sigara kitandani.") was read as English, so the
    # English model compared it and missed its source; 159 of the 390 Swahili sentences, 89 now
    # (the rest are under twelve letters: "Nina njaa."). Not one of 6,325 short English sentences
    # moves ("She adores cats." would at the ratio prose gets).
    sw = [r["sw"] for r in _read("tatoeba_short", "swahili.jsonl")]
    assert sum(detect_language(t) == "en" for t in sw) <= 95
    assert detect_language("Usivute sigara kitandani.") != "en"
    english = [r["text"] for r in _read("tatoeba_short", "short_english.jsonl")]
    assert len(english) > 6000 and [t for t in english if detect_language(t) != "en"] == []
    assert detect_language("An ecclesia is:") == detect_language("She adores cats.") == "en"


def test_code_speaks_the_language_of_its_comments() -> None:
    # HumanEval-XL (bench/data/independent/humaneval_xl, MIT): HumanEval ported to Java, Go and
    # JavaScript with the docstring translated. Keywords and names made langid read 43 of the 160
    # Spanish Go and Java ports as English (es .53 at best); their comments are plainly Spanish.
    data = Path(__file__).resolve().parent.parent / "bench" / "data" / "independent"
    xl = [json.loads(x) for x in (data / "humaneval_xl" / "variants.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    spanish = [r["text"] for r in xl if r["lang"] == "es" and r["kind"] in ("xl_go", "xl_java")]
    assert sum(detect_language(t) == "en" for t in spanish) <= 12, sum(detect_language(t) == "en" for t in spanish)
    # English code stays English: every HumanEval-X port (its comments are English).
    ports = [json.loads(x)["text"] for x in (data / "humaneval_x" / "variants.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    assert sum(detect_language(t) != "en" for t in ports) == 0


def test_a_short_translated_question_that_stands_out_is_flagged_as_a_clear_outlier(monkeypatch: pytest.MonkeyPatch) -> None:
    # XQuAD's professional translations (bench/data/independent/xquad_questions, never fitted): the
    # benchmark is every English question of ten articles; the documents are the Thai, Vietnamese and
    # Arabic translations of those (seen) and of the questions of ten other articles (unseen).
    # multilingual-e5 puts a translated question at cosine .80-.88 from its source with the item's
    # sibling questions (same paragraph, same names) close behind, which the trees read as a near tie;
    # its z against the whole benchmark tells.
    from contam.scan import combiner

    src = _read("xquad_questions", "sources.jsonl")
    articles = sorted({r["id"].split("/")[1] for r in src})
    seen, unseen = set(articles[0::2][:10]), set(articles[1::2][:10])
    bench = [Item(id=r["id"], question=r["text"], benchmark="xquad") for r in src if r["id"].split("/")[1] in seen]
    rows = [
        r
        for r in _read("xquad_questions", "variants.jsonl")
        if r["source"].split("/")[1] in seen | unseen and r["lang"] in ("th", "vi", "ar")
    ]
    pos = np.array([r["source"].split("/")[1] in seen for r in rows])
    assert len(bench) >= 200 and pos.sum() >= 600 and (~pos).sum() >= 600
    s = SemanticScanner(SemanticConfig()).fit(bench).score([r["text"] for r in rows])
    hit = s.flagged(0.5, "learned")
    right = np.array([bench[int(j)].id == r["source"] for j, r in zip(s.nearest[:, 0], rows, strict=True)])
    found, false = int((hit & pos & right).sum()), int((hit & ~pos).sum())
    assert s.clear_outlier is not None and s.probability is not None
    outliers = [int(i) for i in np.flatnonzero(hit) if s.probability[i] < 0.5]
    assert len(outliers) >= 8 and all(s.clear_outlier[i] for i in outliers)
    assert sum(bool(pos[i] and right[i]) for i in outliers) >= len(outliers) - 1
    score, threshold, why = s.decision(outliers[0], 0.5, "learned")
    assert why.startswith("clear outlier: z ") and f">= {combiner.OUTLIER_Z}" in why and score == threshold == 1.0
    assert found >= 0.6 * pos.sum() and false <= 10, (found, pos.sum(), false)
    # The trees alone (the clause off) find fewer.
    monkeypatch.setattr(combiner, "OUTLIER_Z", float("inf"))
    alone = SemanticScanner(SemanticConfig()).fit(bench).score([r["text"] for r in rows])
    assert int((alone.flagged(0.5, "learned") & pos & right).sum()) <= found - 8
