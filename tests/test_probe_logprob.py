"""Log-prob probes (Min-K%, Min-K%++, perplexity, zlib, lowercase, reference ratio) on the real model."""

from __future__ import annotations

import json
import math
import random
import zlib
from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from contam.data import Item, load_benchmark
from contam.models.base import TokenScores
from contam.probe.logprob import ItemLogProb, LogProbConfig, LogProbProbe, LogProbResult, min_k_plus_plus, min_k_prob


@pytest.fixture(scope="module")
def model():
    from contam.models import load

    return load("smollm2", cache=False)


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return load_benchmark("gsm8k")[:5]


def _shuffled(it: Item, seed: int) -> Item:
    words = it.question.split()
    random.Random(seed).shuffle(words)
    return replace(it, id=it.id + "#shuf", question=" ".join(words))


def test_min_k_definitions() -> None:
    lp = [-0.1, -5.0, -0.2, -3.0, -0.3, -1.0, -2.0, -0.05, -0.5, -4.0]
    assert min_k_prob(lp, 0.2) == pytest.approx(np.mean([-5.0, -4.0]))
    assert min_k_prob(lp, 0.01) == -5.0  # at least one token
    assert math.isnan(min_k_prob([], 0.2))
    ts = TokenScores(tokens=("a",) * 4, logprobs=(-1.0, -2.0, -3.0, -4.0), vocab_mean=(-2.0,) * 4, vocab_std=(1.0, 2.0, 1.0, 0.5))
    z = [1.0, 0.0, -1.0, -4.0]
    assert min_k_plus_plus(ts, 0.5) == pytest.approx(np.mean(sorted(z)[:2]))


def test_reference_model_ratio_and_orientation() -> None:
    probe = LogProbProbe()
    target = TokenScores(tokens=("a", "b"), logprobs=(-0.5, -1.5), vocab_mean=(-2.0, -2.0), vocab_std=(1.0, 1.0))
    ref = TokenScores(tokens=("a", "b"), logprobs=(-2.0, -4.0))
    lower = TokenScores(tokens=("a", "b"), logprobs=(-2.0, -2.0))
    s = probe.features("ab", target, lower, ref)
    assert s["ref"] == pytest.approx(3.0 - 1.0)  # log ppl under the reference minus under the target
    assert s["lowercase"] == pytest.approx(-1.0 / 2.0)
    assert s["minkpp"] == pytest.approx(0.5)  # lowest 20% of z = (1.5, 0.5), at least one token
    assert probe.methods(with_ref=True)[-1] == "ref"


def test_scores_equal_direct_computation(model, items) -> None:
    # every token scored (the auto default leaves out SmolLM2's first token: tests/test_probe_edges.py)
    probe = LogProbProbe(LogProbConfig(field="question", k_sweep=(0.1,), first_token="keep"))
    (rec,) = probe.measure(model, {"benchmark": items[:1]})
    text = items[0].question
    ts = model.score([("", text)], vocab_stats=True)[0]
    low = model.score([("", text.lower())])[0]
    s = rec.scores
    assert s["ppl"] == pytest.approx(np.mean(ts.logprobs))
    assert s["mink"] == pytest.approx(min_k_prob(ts.logprobs, 0.2))
    assert s["mink@0.1"] == pytest.approx(min_k_prob(ts.logprobs, 0.1))
    assert s["minkpp"] == pytest.approx(min_k_plus_plus(ts, 0.2))
    assert s["zlib"] == pytest.approx(np.mean(ts.logprobs) / len(zlib.compress(text.encode())))
    loss, loss_lower = -np.mean(ts.logprobs), -np.mean(low.logprobs)
    assert s["lowercase"] == pytest.approx(-loss / loss_lower)
    assert rec.n_tokens == len(ts.logprobs)
    # vocabulary statistics are real: log p of the scored token vs the distribution's own mean
    assert all(sd > 0 for sd in ts.vocab_std) and all(mu < 0 for mu in ts.vocab_mean)


def test_seen_text_beats_shuffled_control(model, items) -> None:
    """Fluent benchmark text vs the same words shuffled: every score must rank the fluent text
    higher (the orientation check), with AUC near 1 and a high confidence."""
    control = [_shuffled(it, i) for i, it in enumerate(items)]
    probe = LogProbProbe(LogProbConfig(field="question"))
    recs = probe.measure(model, {"benchmark": items, "control": control})
    res = probe.analyze(recs, "smollm2")
    for name, floor in (("mink", 0.9), ("ppl", 0.9), ("zlib", 0.75), ("minkpp", 0.75)):
        m = res.method(name)
        assert m is not None and m.auc > floor, name
    assert res.method("ref") is None  # no reference model given
    assert res.primary == "mink" and res.contamination_confidence > 0.9
    x = [r.scores["mink"] for r in recs if r.group == "benchmark"]
    y = [r.scores["mink"] for r in recs if r.group == "control"]
    assert res.method("mink").auc == pytest.approx(roc_auc_score([1] * len(x) + [0] * len(y), x + y))
    assert LogProbResult.from_dict(res.to_dict()) == res


def test_same_data_gives_no_confidence(model, items) -> None:
    probe = LogProbProbe(LogProbConfig(field="question"))
    same = [replace(it, id=it.id + "#copy") for it in items[:4]]
    res = probe.run(model, items[:4], same)
    for m in res.methods:
        assert m.auc == pytest.approx(0.5) and m.calibration.confidence <= 0.5


def test_checkpoint_resume(model, items, tmp_path) -> None:
    from contam.outputs import JsonlCheckpoint

    probe = LogProbProbe(LogProbConfig(field="question"))
    with JsonlCheckpoint(tmp_path / "i.jsonl", key="key") as ck:
        first = probe.measure(model, {"benchmark": items[:2]}, checkpoint=ck)
    ck = JsonlCheckpoint(tmp_path / "i.jsonl", key="key")
    assert ck.done == {f"benchmark/{it.id}" for it in items[:2]}
    again = probe.measure(model, {"benchmark": items[:3]}, checkpoint=ck)
    ck.close()
    assert again[:2] == first and isinstance(again[2], ItemLogProb)
    # The two finished items were read back, not scored again: only the third was appended.
    lines = (tmp_path / "i.jsonl").read_text().splitlines()
    assert len(lines) == 3
    assert [json.loads(line)["key"] for line in lines] == [f"benchmark/{it.id}" for it in items[:3]]
