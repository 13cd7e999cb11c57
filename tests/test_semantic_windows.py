"""Long documents are read in windows: a rephrased or translated item past the first 512
characters is found, and flagged with where it lies. Real text throughout: GPT-4 perturbations of
GSM8K-train problems (DCQ), KT's Korean GSM8K translations, real prose filler (GitHub issues,
docstrings, licences: contam.data.webtext)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from contam.data import Document, load_benchmark
from contam.data.webtext import paragraphs
from contam.scan.dcq import load_dcq
from contam.scan.hierarchy import Hierarchy, HierarchyConfig
from contam.scan.windows import score_windows, windows

KOREAN = Path(__file__).resolve().parent.parent / "bench" / "data" / "independent" / "kt_kor_gsm8k" / "variants.jsonl"


def _prose(start: int, chars: int) -> str:
    out, k = [], start
    while sum(len(p) + 2 for p in out) < chars:
        out.append(paragraphs()[k])
        k += 1
    return "\n\n".join(out)


@pytest.fixture(scope="module")
def case() -> tuple[Hierarchy, list[Document], dict[str, str], list]:
    rows = load_dcq("gsm8k")[:6]
    korean = [json.loads(x) for x in KOREAN.read_text(encoding="utf-8").splitlines()[:3]]
    train = {it.id: it for it in load_benchmark("gsm8k-train")}
    test = {it.id: it for it in load_benchmark("gsm8k")}
    items = [train[r.item_id] for r in rows] + [test[k["source"]] for k in korean]
    items += [it for it in list(train.values())[2000:2200]]  # same-genre distractors
    docs, truth = [], {}
    for n, text in enumerate([r.perturbations[0] for r in rows] + [k["text"] for k in korean]):
        doc = _prose(40 * n, 1500) + "\n\n" + text + "\n\n" + _prose(40 * n + 20, 600)
        docs.append(Document(id=f"long{n}", text=doc))
        truth[f"long{n}"] = items[n].id
    docs += [Document(id=f"clean{n}", text=_prose(500 + 40 * n, 2500)) for n in range(6)]
    h = Hierarchy(HierarchyConfig(levels=("semantic",))).fit(items)
    return h, docs, truth, items


def test_an_item_past_the_first_window_is_found_and_located(case) -> None:
    h, docs, truth, _ = case
    results = {r.doc_id: r for r in h.scan(docs)}
    found = [d for d, item in truth.items() if results[d].contaminated and results[d].flags[0].item_id == item]
    assert len(found) >= 8, found  # of 9: 6 English rephrasings, 3 Korean translations
    for d in found:
        f = results[d].flags[0]
        where = [e for e in f.evidence if e.kind == "window"]
        assert where and f.scores["window_start"] >= 1000  # the item sits after ~1,500 characters of prose
    assert not any(results[f"clean{n}"].contaminated for n in range(6))


def test_read_in_its_first_window_only_the_same_documents_pass(case) -> None:
    # What the level did before: the first 512 characters only.
    h, docs, truth, _ = case
    assert h.semantic is not None
    sem = score_windows(h.semantic, [d.text for d in docs[: len(truth)]], "learned", max_windows=1).scores
    assert int(sem.flagged(0.5, "learned").sum()) == 0


def test_windows_are_the_first_window_then_the_paragraphs() -> None:
    text = _prose(0, 5000)
    spans = windows(text, 512)
    assert spans[0] == (0, text[:512]) and 8 <= len(spans) <= 24
    assert [a for a, _ in spans] == sorted(a for a, _ in spans) and all(len(w) <= 512 for _, w in spans)
    paras = [p for p in text.split("\n\n") if len(p) >= 64]
    assert sum(w == p for _, w in spans for p in paras) >= 5  # paragraphs read on their own
    assert len(windows(text, 512, max_windows=3)) == 3


def test_the_cli_reads_windows_and_says_where_and_can_read_the_first_only(case, tmp_path: Path) -> None:
    from tests.test_cli_scan import contam

    _, docs, truth, items = case
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps({"id": it.id, "question": it.question}) + "\n" for it in items))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n" for d in docs))
    for windows_, expect in (("16", len(truth)), ("1", 0)):
        out = tmp_path / f"o{windows_}"
        p = contam("scan", "-b", bench, "-c", corpus, "--out", out, "--levels", "semantic", "--semantic-windows", windows_)
        assert p.returncode == 0, p.stderr
        flags = [json.loads(x) for x in (out / "flags.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
        assert len(flags) >= expect - 1 if expect else not flags, [f["doc_id"] for f in flags]
        for f in flags:
            assert any(e["kind"] == "window" and e["text"].startswith("characters ") for fl in f["flags"] for e in fl["evidence"])
    p = contam("scan", "-b", bench, "-c", corpus, "--out", tmp_path / "bad", "--levels", "semantic", "--semantic-windows", "0")
    assert p.returncode != 0 and "--semantic-windows" in p.stderr


def test_the_flag_spans_its_windows_and_mask_mode_masks_only_them(case, tmp_path: Path) -> None:
    """A long document flagged in a window keeps its other paragraphs under ``--mode mask``: the
    window evidence carries the span (inside the inserted item or around it), and what is masked
    is that span, not the document."""
    from contam.scan.decontaminate import decontaminate

    h, docs, truth, items = case
    docs = [replace(d, line=k + 1) for k, d in enumerate(docs)]  # as read from the file written below
    results = list(h.scan(docs))
    by_id = {r.doc_id: r for r in results}
    placed = {}
    for d in docs[: len(truth)]:
        n = int(d.id[4:])
        inserted = [r.perturbations[0] for r in load_dcq("gsm8k")[:6]] + [
            json.loads(x)["text"] for x in KOREAN.read_text(encoding="utf-8").splitlines()[:3]
        ]
        start = d.text.index(inserted[n])
        placed[d.id] = (start, start + len(inserted[n]))
    spanned = 0
    for doc_id, (a, b) in placed.items():
        r = by_id[doc_id]
        if not r.contaminated:
            continue
        spans = [e.doc_span for e in r.flags[0].evidence if e.kind == "window"]
        assert spans and all(s is not None for s in spans)
        assert any(s[0] < b and a < s[1] for s in spans if s), (doc_id, spans, (a, b))  # the window covers the item
        spanned += 1
    assert spanned >= 8
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    out = tmp_path / "masked.jsonl"
    summary = decontaminate(corpus, out, results=results, mode="mask", id_field="id", items=items)
    kept = {json.loads(x)["id"]: json.loads(x)["text"] for x in out.read_text(encoding="utf-8").splitlines()}
    log = [json.loads(x) for x in (tmp_path / "masked.jsonl.log.jsonl").read_text(encoding="utf-8").splitlines()]
    masked = [e for e in log if e.get("action") == "masked"]
    assert masked and summary["masked"] == len(masked)
    for e in masked:  # the item is gone, the prose before it is kept
        doc = next(d for d in docs if d.id == e["doc_id"])
        a, b = placed[e["doc_id"]]
        assert doc.text[a:b] not in kept[e["doc_id"]] and kept[e["doc_id"]].startswith(doc.text[:200])
    assert all(f"clean{n}" in kept for n in range(6))


def test_a_long_chat_turn_is_masked_in_its_window_and_the_chat_keeps_its_shape(case, tmp_path: Path) -> None:
    """A ShareGPT-style chat whose long user turn quotes a rephrased item in its fourth paragraph:
    the semantic level reads that turn in windows, and mask mode masks the window inside the turn."""
    from contam.data.formats import record_text
    from contam.scan.decontaminate import decontaminate
    from contam.scan.records import scan_records

    _, docs, _, items = case
    rephrased = load_dcq("gsm8k")[0].perturbations[0]
    turn = _prose(900, 1500) + "\n\n" + rephrased + "\n\n" + _prose(920, 500)
    chats = [
        {"messages": [{"role": "user", "content": turn}, {"role": "assistant", "content": "Thanks, I will read it later."}]},
        {"messages": [{"role": "user", "content": docs[-1].text}, {"role": "assistant", "content": "Noted."}]},
    ]
    corpus = tmp_path / "chat.jsonl"
    corpus.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chats), encoding="utf-8")
    s = scan_records(corpus, items, tmp_path / "scan", levels=("semantic",))
    assert s["flagged"] == 1, s
    out = tmp_path / "clean.jsonl"
    d = decontaminate(corpus, out, scan=tmp_path / "scan", mode="mask", items=items)
    assert d["masked"] == 1 and d["dropped"] == 0, d
    kept = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    text = record_text(kept, "chat").text
    assert rephrased not in text and kept["messages"][0]["content"].startswith(turn[:300])
    assert kept["messages"][1]["content"] == "Thanks, I will read it later."


def test_an_item_opening_a_long_page_is_masked_as_its_paragraph_not_the_first_512_characters(case) -> None:
    # The first window (512 characters: the item and the start of the prose after it) and the
    # item's own paragraph both pass; the span kept is the paragraph.
    h, _, _, _ = case
    rephrased = load_dcq("gsm8k")[1].perturbations[0]
    doc = Document(id="opening", text=rephrased + "\n\n" + _prose(700, 2000), line=1)
    (r,) = list(h.scan([doc]))
    assert r.contaminated
    spans = [e.doc_span for e in r.flags[0].evidence if e.kind == "window"]
    assert spans == [(0, len(rephrased))], spans
