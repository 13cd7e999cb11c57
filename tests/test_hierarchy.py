"""The cascade (L1 → L2 → L3), calibration on held-out data, and the L4 hook, on real GSM8K."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from contam.data import Document, load_benchmark
from contam.errors import ConfigError
from contam.models.embed import load_embedder
from contam.scan.calibrate import calibrate, metrics
from contam.scan.hierarchy import Hierarchy, HierarchyConfig, parse_levels
from contam.scan.paraphrase import rule_paraphrase
from contam.scan.scenarios import build_scenarios, s4_text
from contam.scan.semantic import SemanticConfig


def test_parse_levels() -> None:
    assert parse_levels("all") == ("token", "semantic", "reasoning")
    assert parse_levels(("reasoning", "token")) == ("token", "reasoning")
    with pytest.raises(ConfigError, match="unknown level"):
        parse_levels("token,vibes")


@pytest.fixture(scope="module")
def items() -> list:
    return load_benchmark("gsm8k")[:80]


def test_each_level_catches_its_kind_and_negatives_pass(items: list) -> None:
    # L2 uses the similarity+anomaly rule here: single leaked samples never make a DBSCAN cluster.
    cfg = HierarchyConfig(levels="all", semantic=SemanticConfig(rule="sim+anomaly"))
    h = Hierarchy(cfg, embedder=load_embedder("minilm")).fit(items)
    para_q = rule_paraphrase(items[1].question, random.Random(1))  # question only: no chain for L3
    s4 = s4_text(items[2], 0)
    assert s4 is not None
    negs = [Document(id=f"neg{i}", text=it.text) for i, it in enumerate(load_benchmark("gsm8k-train")[:12])]
    docs = [Document("exact", items[0].text), Document("para", para_q), Document("s4", s4), *negs]
    res = {r.doc_id: r for r in h.scan(docs)}
    assert res["exact"].level == "token" and res["exact"].best.item_id == items[0].id
    assert res["para"].level == "semantic" and res["para"].best.item_id == items[1].id
    assert res["s4"].contaminated and res["s4"].best.item_id == items[2].id
    assert not any(res[d.id].contaminated for d in negs)
    # Every flag carries its level, nearest item and every score computed on the way.
    f = res["para"].best
    assert f.level == "semantic" and {"token_coverage", "cosine", "anomaly"} <= set(f.scores)
    assert res["para"].scores["nearest_item"] == items[1].id


def test_reasoning_level_alone_flags_s4(items: list) -> None:
    h = Hierarchy(HierarchyConfig(levels="reasoning")).fit(items)
    texts = [t for t in (s4_text(it, 0) for it in items[10:30]) if t]
    res = list(h.scan([Document(f"s{i}", t) for i, t in enumerate(texts)]))
    hits = [r for r in res if r.contaminated]
    assert len(hits) >= 0.8 * len(texts) and all(r.level == "reasoning" for r in hits)
    assert {"struct", "step", "arg"} <= set(hits[0].best.scores)


def test_calibration_meets_precision_on_held_out_split() -> None:
    """Calibrate token + reasoning thresholds on the calib split for precision >= 0.95 and check
    the precision on the disjoint test split (real scenarios, no embedding model needed)."""
    sc = build_scenarios("gsm8k", n=80, seed=3)
    cfg = HierarchyConfig(levels=("token", "reasoning"))
    h = Hierarchy(cfg).fit(sc.items())
    samples = list(sc.samples)
    ls = h.score_levels([s.document() for s in samples])
    y = np.array([s.label for s in samples])
    calib = np.array([s.split == "calib" for s in samples])

    def part(mask: np.ndarray):  # type: ignore[no-untyped-def]
        idx = np.flatnonzero(mask)
        return replace(ls, token=ls.token[idx], token_results=[ls.token_results[i] for i in idx], reasoning=[ls.reasoning[i] for i in idx])

    cal = calibrate(part(calib), y[calib], levels=cfg.levels, target_precision=0.95)
    assert cal.validation.precision >= 0.95
    held = metrics(part(~calib).decisions(cal.thresholds, cfg.levels)[0], y[~calib])
    assert held.precision >= 0.95 and held.recall >= 0.8
    f1 = calibrate(part(calib), y[calib], levels=cfg.levels)
    assert f1.validation.f1 >= cal.validation.f1 - 1e-9


def test_calibration_rejects_one_class_labels(items: list) -> None:
    h = Hierarchy(HierarchyConfig(levels="token")).fit(items)
    ls = h.score_levels([Document("a", items[0].text), Document("b", "hello")])
    with pytest.raises(ConfigError, match="both"):
        calibrate(ls, np.array([1, 1]), levels=("token",))


def test_scan_is_deterministic(items: list) -> None:
    h = Hierarchy(HierarchyConfig(levels=("token", "reasoning"))).fit(items)
    docs = [Document(f"d{i}", it.text) for i, it in enumerate(load_benchmark("gsm8k-train")[:30])] + [Document("x", items[5].text)]
    assert [r.to_dict() for r in h.scan(docs)] == [r.to_dict() for r in h.scan(docs)]


def test_level4_hook(items: list) -> None:
    from contam.probe.cliff import performance_cliff

    seen = []

    def cliff(its):  # type: ignore[no-untyped-def]
        seen.append(len(its))
        # 8 items: below the cliff's default minimum of 10 for a verdict, so say 8 is enough here
        return performance_cliff([1, 1, 1, 1, 1, 1, 0, 1], [[0, 0], [0, 1], [0, 0], [1, 0], [0, 0], [0, 0], [0, 0], [0, 1]], min_items=8)

    h = Hierarchy(HierarchyConfig(levels="token"), cliff=cliff).fit(items)
    v = h.check_benchmark()
    assert seen == [len(items)] and v is not None
    assert v.level == "performance" and v.contaminated and v.p_value is not None and v.p_value < 0.05 and v.delta > 0
    assert Hierarchy(HierarchyConfig(levels="token")).fit(items).check_benchmark() is None


def test_generated_traces_with_the_embedded_model(items: list) -> None:
    """With a trace model, texts without a chain get the model's step-by-step solution appended
    (Algorithm 1's ExtractReasoning(M(x))); texts that have a chain are left alone."""
    from contam.models import load

    lm = load("smollm2")
    h = Hierarchy(HierarchyConfig(levels="reasoning"), trace_model=lm).fit(items[:5])
    texts = ["Tom has 3 apples and buys 4 more. How many apples does he have?", items[0].text]
    out = h._traces(texts)
    assert out[1] == items[0].text
    assert out[0].startswith(texts[0]) and len(out[0]) > len(texts[0])
    assert h._traces(texts) == out  # greedy decoding: deterministic


def test_thresholds_file_round_trip_and_bad_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from contam.errors import ConfigError, InputError
    from contam.scan.hierarchy import Thresholds

    t = Thresholds(token=0.3, semantic=0.81, reasoning=0.55, semantic_rule="sim")
    f = tmp_path / "thresholds.json"
    f.write_text(json.dumps({"gsm8k": t.to_dict(), "mmlu": Thresholds().to_dict()}))
    assert Thresholds.load(f, "gsm8k") == t
    with pytest.raises(ConfigError, match="several benchmarks"):
        Thresholds.load(f)
    with pytest.raises(ConfigError, match="no entry for benchmark 'humaneval'"):
        Thresholds.load(f, "humaneval")
    single = tmp_path / "one.json"
    single.write_text(json.dumps(t.to_dict()))
    assert Thresholds.load(single, "anything") == t
    single.write_text('{"token": 1.5}')
    with pytest.raises(InputError, match="field 'token'"):
        Thresholds.load(single)
    single.write_text('{"token": 0.5, "semantic_rule": "cluster"}')
    with pytest.raises(InputError, match="semantic_rule"):
        Thresholds.load(single)
    single.write_text('{"token": 0.5,\n')
    with pytest.raises(InputError, match=r"one.json:\d+: not valid JSON"):
        Thresholds.load(single)
    with pytest.raises(ConfigError, match="not found"):
        Thresholds.load(tmp_path / "missing.json")
