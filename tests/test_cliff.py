"""Performance cliff (paper 001 L4): the statistic against scipy, and the probe on the real model."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from contam.data import load_benchmark
from contam.errors import ConfigError
from contam.probe.cliff import CliffConfig, CliffItem, CliffProbe, performance_cliff


@pytest.fixture(scope="module")
def model_nocache():
    from contam.models import load

    return load("smollm2", cache=False)


def test_cliff_matches_scipy_paired_t() -> None:
    rng = np.random.default_rng(0)
    orig = (rng.random(40) < 0.8).astype(int)
    var = (rng.random((40, 5)) < 0.55).astype(int)
    r = performance_cliff(orig, var.tolist())
    ref = sps.ttest_rel(orig, var.mean(axis=1), alternative="greater")
    assert r.test.p_value == pytest.approx(ref.pvalue) and r.test.statistic == pytest.approx(ref.statistic)
    # Eq. 5: Acc(orig) - mean_k Acc(para_k)
    assert r.delta == pytest.approx(orig.mean() - np.mean(var.mean(axis=0)))
    assert r.acc_per_variant == pytest.approx(tuple(var.mean(axis=0)))
    assert r.flagged == (ref.pvalue < 0.05)
    assert r.k == 5 and r.n_items == 40


def test_no_cliff_when_variants_match_originals() -> None:
    orig = [1, 0, 1, 1, 0, 1, 0, 1]
    r = performance_cliff(orig, [[x] * 5 for x in orig])
    assert r.delta == 0 and not r.flagged and r.test.p_value == 1.0 and r.calibration.confidence == 0.0


def test_reverse_cliff_is_not_flagged() -> None:
    r = performance_cliff([0] * 10, [[1, 1, 0]] * 10)
    assert r.delta < 0 and not r.flagged and r.calibration.confidence == 0.0


def test_ragged_variants_and_items_without_variants() -> None:
    r = performance_cliff([1, 1, 0], [[0, 1], [], [0]])
    assert r.n_items == 2 and r.acc_per_variant == (0.0, 1.0)
    with pytest.raises(ConfigError):
        performance_cliff([1], [[0], [1]])


def test_cliff_probe_on_real_model_with_self_variants(model_nocache) -> None:
    # Variants identical to their originals: a deterministic model shows no cliff at all.
    items = load_benchmark("gsm8k")[:3]
    ref = {it.id: [it, it] for it in items}
    probe = CliffProbe(CliffConfig(k=2, max_new_tokens=24))
    recs = probe.measure(model_nocache, items, ref)
    assert [r.key for r in recs] == [it.id for it in items]
    for r in recs:
        assert isinstance(r, CliffItem) and len(r.variant_correct) == 2
        assert r.variant_correct == (r.original_correct,) * 2
    res = probe.analyze(recs, "smollm2")
    assert res.delta == 0 and not res.flagged
