"""Zero-CoT Probe (paper 004) with the real embedded model on small n, and its statistics."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from contam.data import Item, load_benchmark
from contam.errors import ConfigError
from contam.models.embedded import smollm2_path
from contam.outputs import JsonlCheckpoint
from contam.probe.zerocot import ItemMeasure, ZeroCoTConfig, ZeroCoTPair, ZeroCoTProbe, ZeroCoTResult
from contam.stats.calibration import contamination_confidence
from contam.stats.tests import mcnemar_exact, paired_bootstrap, paired_permutation

FAST = ZeroCoTConfig(max_cot_tokens=16, max_answer_tokens=8, truncation=(0.0, 0.5, 1.0), n_resamples=2000)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    # A fresh response cache per run: every call reaches the model once, and tests that
    # repeat a prompt (same data on both sides) share the answer.
    from contam.models import load

    return load("smollm2", cache=tmp_path_factory.mktemp("zcp") / "responses.sqlite")


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return load_benchmark("gsm8k")[:40]


@pytest.fixture(scope="module")
def measured(model, items) -> list[ZeroCoTPair]:
    # originals vs other GSM8K items as a stand-in reference (same genre, different numbers)
    pairs = [(items[i], items[20 + i]) for i in range(3)]
    return ZeroCoTProbe(FAST).measure(model, pairs)


def test_metrics_in_range(measured: list[ZeroCoTPair]) -> None:
    assert len(measured) == 3
    for p in measured:
        for m in (p.original, p.reference):
            assert m.accuracy in (0, 1) and m.consistency in (0, 1) and m.full_correct in (0, 1)
            assert 0.0 < m.first_token_prob <= 1.0 and 0.0 < m.all_token_prob <= 1.0
            assert m.n_answer_tokens >= 1
            assert set(m.curve) == {"0.5"} and m.curve["0.5"] in (0, 1)
            assert m.cot  # the model wrote something


def test_probabilities_equal_a_direct_forward_pass(model, items, measured: list[ZeroCoTPair]) -> None:
    """First- and all-token probability of the gold answer, recomputed (1) with model.score on
    the exact forced prompt and (2) with a separate llama.cpp forward pass over raw logits."""
    from llama_cpp import Llama

    probe = ZeroCoTProbe(FAST)
    raw = Llama(str(smollm2_path()), n_ctx=1024, logits_all=True, verbose=False, n_threads=2)
    for item, m in ((items[0], measured[0].original), (items[21], measured[1].reference)):
        prompt = probe.scoring_prompt(model, item.question, "prefill")
        assert prompt.endswith("The final answer is: \\[ \\boxed{")
        ts = model.score([(prompt, item.answer)])[0]
        assert m.first_token_prob == pytest.approx(math.exp(ts.logprobs[0]), rel=1e-9)
        assert m.all_token_prob == pytest.approx(math.exp(np.mean(ts.logprobs)), rel=1e-9)
        p_ids = raw.tokenize(prompt.encode(), add_bos=False, special=True)
        c_ids = raw.tokenize(item.answer.encode(), add_bos=False, special=False)
        raw.reset()
        raw.eval(p_ids + c_ids)
        logits = np.asarray(raw.scores[: len(p_ids) + len(c_ids)], dtype=np.float64)
        lps = []
        for j, tok in enumerate(c_ids):
            row = logits[len(p_ids) + j - 1]
            lps.append(row[tok] - (row.max() + math.log(np.exp(row - row.max()).sum())))
        assert m.first_token_prob == pytest.approx(math.exp(lps[0]), rel=1e-3)
        assert m.all_token_prob == pytest.approx(math.exp(np.mean(lps)), rel=1e-3)


def test_reproducible_without_cache(items, measured: list[ZeroCoTPair]) -> None:
    from contam.models import load

    direct = load("smollm2", cache=False)
    (again,) = ZeroCoTProbe(FAST).measure_items(direct, [items[0]], "prefill")
    assert again == measured[0].original


def test_same_data_gives_no_confidence(model, items) -> None:
    """Both sets the same data: identical measures, zero gap, confidence 0 (≤ 0.5 required)."""
    pairs = [(it, replace(it, id=it.id + "#same")) for it in items[:3]]
    probe = ZeroCoTProbe(FAST)
    res = probe.analyze(probe.measure(model, pairs))
    for g in res.metrics:
        assert g.gap == 0.0 and g.calibration.confidence <= 0.5
    assert res.contamination_confidence <= 0.5


def test_planted_answers_give_confidence_near_one(model, items) -> None:
    """One set's answers planted in the prompt context: the probe must see it (confidence ≈ 1)."""
    n = 10
    originals = [replace(it, question=f"{it.question}\nThe correct final answer is {it.answer}.") for it in items[:n]]
    pairs = list(zip(originals, items[:n], strict=True))
    cfg = replace(FAST, truncation=(), primary_metric="all_token_prob")  # same prompts as FAST: references hit the cache
    res = ZeroCoTProbe(cfg).run(model, pairs)
    acc = res.metric("accuracy")
    allp = res.metric("all_token_prob")
    assert acc is not None and allp is not None
    assert acc.gap >= 0.4 and allp.gap > 0.1
    assert allp.calibration.confidence > 0.95
    assert acc.calibration.confidence > 0.8
    assert res.contamination_confidence == allp.calibration.confidence
    assert 0.0 < res.timing["model_share"] <= 1.0


def test_checkpoint_resume(model, items, tmp_path) -> None:
    path = tmp_path / "items.jsonl"
    probe = ZeroCoTProbe(FAST)
    pairs = [(items[0], items[20]), (items[1], items[21])]
    with JsonlCheckpoint(path, key="key") as ck:
        first = probe.measure(model, pairs[:1], ck)
    ck2 = JsonlCheckpoint(path, key="key")
    assert ck2.done == {items[0].id}
    both = probe.measure(model, pairs, ck2)
    ck2.close()
    assert both[0] == first[0] and len(both) == 2
    assert len(path.read_text().splitlines()) == 2


def test_instruction_mode(model, items) -> None:
    cfg = replace(FAST, mode="instruction", truncation=(0.0,))
    probe = ZeroCoTProbe(cfg)
    prompt, prefix = probe.forced_prompt(model, items[0].question, "", 0.0, "instruction")
    assert prefix == "" and isinstance(prompt, list)
    assert prompt[-1]["content"].endswith("(e.g., reasoning or explanation).")
    (m,) = probe.measure_items(model, [items[2]], "instruction")
    assert m.accuracy in (0, 1) and 0 < m.all_token_prob <= 1
    assert probe.scoring_prompt(model, items[2].question, "instruction").endswith("\\boxed{")


def _pair(i: int, a: tuple[int, int, float, float], b: tuple[int, int, float, float]) -> ZeroCoTPair:
    def m(v: tuple[int, int, float, float], tag: str) -> ItemMeasure:
        return ItemMeasure(f"{tag}{i}", "1", "", "1", 1, "", "1", v[0], v[1], v[2], v[3], 1, {"0.5": v[0]})

    return ZeroCoTPair(f"o{i}", m(a, "o"), m(b, "r"))


def test_analyze_uses_mcnemar_and_paired_bootstrap() -> None:
    rng = np.random.default_rng(0)
    pairs = [
        _pair(
            i,
            (int(rng.random() < 0.7), int(rng.random() < 0.6), float(rng.random()), float(rng.random())),
            (int(rng.random() < 0.4), int(rng.random() < 0.6), float(rng.random() * 0.8), float(rng.random())),
        )
        for i in range(50)
    ]
    res = ZeroCoTProbe(ZeroCoTConfig(n_resamples=3000)).analyze(pairs)
    acc = res.metric("accuracy")
    ref = mcnemar_exact([p.original.accuracy for p in pairs], [p.reference.accuracy for p in pairs], "greater")
    assert acc.test == ref and acc.gap == ref.effect
    assert acc.calibration.confidence == pytest.approx(contamination_confidence(ref.p_value, ref.effect))
    ftp = res.metric("first_token_prob")
    bref = paired_bootstrap(
        [p.original.first_token_prob for p in pairs], [p.reference.first_token_prob for p in pairs], "greater", n_resamples=3000
    )
    perm = paired_permutation(
        [p.original.first_token_prob for p in pairs], [p.reference.first_token_prob for p in pairs], "greater", n_resamples=3000
    )
    assert ftp.test.ci == bref.ci and ftp.gap == bref.effect
    assert ftp.test.p_value == max(bref.p_value, perm.p_value)
    assert ftp.test.details["p_bootstrap"] == bref.p_value
    assert res.contamination_confidence == acc.calibration.confidence
    assert [c.kept for c in res.curve] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ZeroCoTResult.from_dict(res.to_dict()) == res


def test_small_sample_guard_keeps_two_pairs_from_looking_certain() -> None:
    pairs = [_pair(0, (0, 0, 0.9, 0.9), (0, 0, 0.1, 0.1)), _pair(1, (0, 0, 0.8, 0.8), (0, 0, 0.2, 0.2))]
    guarded = ZeroCoTProbe(ZeroCoTConfig(n_resamples=2000)).analyze(pairs).metric("all_token_prob")
    raw = ZeroCoTProbe(ZeroCoTConfig(n_resamples=2000, small_sample_guard=False)).analyze(pairs).metric("all_token_prob")
    assert raw.test.p_value < 0.001  # the bare bootstrap: 2 pairs, "p = 1/(B+1)"
    assert guarded.test.p_value == 0.25 and guarded.calibration.confidence < 0.52


def test_analyze_skips_missing_probabilities() -> None:
    p = _pair(0, (1, 1, 0.5, 0.5), (0, 1, 0.1, 0.1))
    q = ZeroCoTPair("o1", replace(p.original, first_token_prob=None, all_token_prob=None), p.reference)
    res = ZeroCoTProbe().analyze([p, q])
    assert res.metric("first_token_prob").n == 1 and res.metric("accuracy").n == 2


def test_config_errors() -> None:
    with pytest.raises(ConfigError):
        ZeroCoTConfig(mode="bogus")
    with pytest.raises(ConfigError):
        ZeroCoTConfig(truncation=(1.5,))
    with pytest.raises(ConfigError):
        ZeroCoTConfig(primary_metric="f1")
