"""contam.stats.intervals against statsmodels / scipy, plus a coverage check for the paired interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from contam.stats.intervals import bootstrap_interval, newcombe_paired_interval, newcombe_unpaired_interval, wilson_interval


@pytest.mark.parametrize("k,n", [(0, 10), (1, 10), (7, 20), (20, 20), (133, 200), (1, 1000)])
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k: int, n: int, conf: float) -> None:
    lo, hi = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    iv = wilson_interval(k, n, conf)
    assert (iv.low, iv.high) == pytest.approx((lo, hi), abs=1e-12)
    assert iv.estimate == k / n


@pytest.mark.parametrize("k1,n1,k2,n2", [(60, 100, 45, 100), (3, 20, 9, 25), (0, 10, 4, 12), (10, 10, 0, 10)])
def test_newcombe_unpaired_matches_statsmodels(k1: int, n1: int, k2: int, n2: int) -> None:
    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=0.05)
    iv = newcombe_unpaired_interval(k1, n1, k2, n2)
    assert (iv.low, iv.high) == pytest.approx((lo, hi), abs=1e-10)


def test_newcombe_paired_covers_about_95_percent() -> None:
    # Simulated paired binary outcomes with correlation; the interval's coverage of the true
    # difference must be near nominal (Newcombe 1998 reports ~0.95 for method 10).
    rng = np.random.default_rng(0)
    probs = np.array([0.35, 0.15, 0.05, 0.45])  # n11, n10, n01, n00 cell probabilities
    true = probs[1] - probs[2]
    hits = 0
    reps = 2000
    tables = rng.multinomial(60, probs, size=reps)
    for n11, n10, n01, n00 in tables:
        iv = newcombe_paired_interval(int(n11), int(n10), int(n01), int(n00))
        hits += iv.low <= true <= iv.high
    assert 0.92 <= hits / reps <= 0.98


def test_newcombe_paired_edges() -> None:
    iv = newcombe_paired_interval(10, 0, 0, 10)  # no discordant pairs
    assert iv.estimate == 0 and iv.low < 0 < iv.high
    iv = newcombe_paired_interval(0, 20, 0, 0)  # everything flips one way
    assert iv.estimate == 1.0 and iv.high == 1.0 and iv.low > 0.7


def test_bootstrap_interval_matches_scipy() -> None:
    x = np.random.default_rng(1).exponential(size=50)
    for method in ("percentile", "BCa", "basic"):
        ref = sps.bootstrap((x,), np.mean, n_resamples=3000, method=method, rng=np.random.default_rng(3))
        iv = bootstrap_interval(x, n_resamples=3000, method=method, seed=3)
        assert (iv.low, iv.high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    med = bootstrap_interval(x, np.median, n_resamples=2000, seed=1)
    assert med.low <= np.median(x) <= med.high
    const = bootstrap_interval([2.0, 2.0, 2.0])
    assert (const.low, const.high) == (2.0, 2.0)
