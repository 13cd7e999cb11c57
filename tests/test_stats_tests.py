"""contam.stats.tests against scipy / statsmodels / scikit-learn on the same inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportions_ztest

from contam.stats.tests import (
    auc_delong,
    mann_whitney,
    mcnemar_counts,
    mcnemar_exact,
    paired_bootstrap,
    paired_ttest,
    two_proportion_ztest,
)

TABLES = [(0, 0, 5, 5), (3, 0, 10, 7), (0, 3, 10, 7), (7, 2, 30, 61), (12, 12, 4, 2), (25, 9, 50, 16), (1, 0, 0, 0)]


@pytest.mark.parametrize("n10,n01,n11,n00", TABLES)
def test_mcnemar_two_sided_matches_statsmodels(n10: int, n01: int, n11: int, n00: int) -> None:
    table = np.array([[n00, n01], [n10, n11]])
    ref = sm_mcnemar(table, exact=True)
    r = mcnemar_counts(n10, n01, n11, n00, alternative="two-sided")
    assert r.p_value == pytest.approx(float(ref.pvalue), rel=1e-12, abs=1e-15)
    assert r.statistic == pytest.approx(float(ref.statistic))


@pytest.mark.parametrize("n10,n01,n11,n00", TABLES)
def test_mcnemar_one_sided_is_half_in_direction(n10: int, n01: int, n11: int, n00: int) -> None:
    p2 = float(sm_mcnemar(np.array([[n00, n01], [n10, n11]]), exact=True).pvalue)
    g = mcnemar_counts(n10, n01, n11, n00, alternative="greater").p_value
    le = mcnemar_counts(n10, n01, n11, n00, alternative="less").p_value
    if n10 > n01:
        assert g == pytest.approx(p2 / 2) and le == pytest.approx(1 - p2 / 2)
        # half the two-sided exact p is the exact one-sided binomial tail P(X >= n10)
        assert g == pytest.approx(float(sps.binomtest(n10, n10 + n01, 0.5, alternative="greater").pvalue))
    elif n10 < n01:
        assert le == pytest.approx(p2 / 2) and g == pytest.approx(1 - p2 / 2)
    else:
        assert g == le == pytest.approx(0.5)


def test_mcnemar_from_arrays_counts_and_effect() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 200)
    b = np.where(rng.random(200) < 0.8, a, 1 - a) * (rng.random(200) < 0.9)
    r = mcnemar_exact(a, b)
    d = r.details
    assert d["n10"] == int(np.sum((a == 1) & (b == 0))) and d["n01"] == int(np.sum((a == 0) & (b == 1)))
    assert d["n10"] + d["n01"] + d["n11"] + d["n00"] == 200 == r.n
    assert r.effect == pytest.approx(a.mean() - b.mean())
    assert r.ci is not None and r.ci.low <= r.effect <= r.ci.high
    with pytest.raises(ValueError):
        mcnemar_exact([0, 1, 2], [0, 1, 1])
    with pytest.raises(ValueError):
        mcnemar_exact([0, 1], [0, 1, 1])


def test_paired_ttest_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    a = rng.normal(0.3, 1, 40)
    b = a - rng.normal(0.2, 0.5, 40)
    for alt in ("greater", "less", "two-sided"):
        ref = sps.ttest_rel(a, b, alternative=alt)
        r = paired_ttest(a, b, alternative=alt)
        assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
        assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    ci = sps.ttest_rel(a, b).confidence_interval(0.95)
    r = paired_ttest(a, b)
    assert (r.ci.low, r.ci.high) == pytest.approx((ci.low, ci.high))
    assert r.effect == pytest.approx(np.mean(a - b))


def test_paired_ttest_zero_variance_cases() -> None:
    assert paired_ttest([1, 0, 1], [1, 0, 1]).p_value == 1.0
    shift = paired_ttest([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    assert shift.p_value == 0.0 and shift.statistic == math.inf
    assert paired_ttest([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], alternative="less").p_value == 1.0


def test_paired_bootstrap_interval_matches_scipy_and_p_reads_centered_distribution() -> None:
    rng = np.random.default_rng(3)
    a = rng.random(60)
    b = np.clip(a - rng.normal(0.05, 0.1, 60), 0, 1)
    r = paired_bootstrap(a, b, n_resamples=5000, seed=7)
    d = a - b
    ref = sps.bootstrap((d,), np.mean, n_resamples=5000, method="percentile", rng=np.random.default_rng(7), vectorized=True)
    assert (r.ci.low, r.ci.high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    null = ref.bootstrap_distribution - ref.bootstrap_distribution.mean()
    assert r.p_value == pytest.approx((1 + np.sum(null >= d.mean())) / 5001)
    # large, clean sample: bootstrap and t-test agree on the order of magnitude
    t = paired_ttest(a, b)
    assert r.p_value < 0.01 and t.p_value < 0.01
    assert r.details["cohens_dz"] == pytest.approx(d.mean() / d.std(ddof=1))


def test_paired_bootstrap_identical_and_constant_shift() -> None:
    x = [0.2, 0.5, 0.9, 0.1]
    same = paired_bootstrap(x, x, n_resamples=500)
    assert same.effect == 0.0 and same.p_value == 1.0
    shift = paired_bootstrap([0.3, 0.6, 1.0], [0.2, 0.5, 0.9], n_resamples=500)
    assert shift.p_value == pytest.approx(1 / 501) and shift.effect == pytest.approx(0.1)
    # reproducible for a seed
    a, b = [0.1, 0.9, 0.4, 0.5, 0.7], [0.2, 0.3, 0.4, 0.1, 0.6]
    assert paired_bootstrap(a, b, seed=5, n_resamples=999) == paired_bootstrap(a, b, seed=5, n_resamples=999)


def test_mann_whitney_matches_scipy_and_auc_matches_sklearn() -> None:
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(0.5, 1, 70), 1)  # rounding makes ties
    y = np.round(rng.normal(0.0, 1, 55), 1)
    for alt in ("greater", "less", "two-sided"):
        ref = sps.mannwhitneyu(x, y, alternative=alt)
        r = mann_whitney(x, y, alternative=alt)
        assert r.p_value == pytest.approx(ref.pvalue, rel=1e-10)
        assert r.statistic == pytest.approx(ref.statistic)
    labels = np.r_[np.ones(x.size), np.zeros(y.size)]
    r = mann_whitney(x, y)
    assert r.effect == pytest.approx(roc_auc_score(labels, np.r_[x, y]))
    assert r.ci.low < r.effect < r.ci.high


def test_delong_se_matches_bruteforce() -> None:
    rng = np.random.default_rng(5)
    x, y = np.round(rng.random(30), 1), np.round(rng.random(25) - 0.1, 1)
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    se = math.sqrt(v10.var(ddof=1) / x.size + v01.var(ddof=1) / y.size)
    auc, got = auc_delong(x, y)
    assert auc == pytest.approx(psi.mean()) and got == pytest.approx(se)


@pytest.mark.parametrize("k1,n1,k2,n2", [(60, 100, 45, 100), (3, 20, 9, 25), (0, 10, 4, 12), (50, 80, 50, 80)])
def test_two_proportion_ztest_matches_statsmodels(k1: int, n1: int, k2: int, n2: int) -> None:
    for alt, sm_alt in (("greater", "larger"), ("less", "smaller"), ("two-sided", "two-sided")):
        z, p = proportions_ztest([k1, k2], [n1, n2], alternative=sm_alt)
        r = two_proportion_ztest(k1, n1, k2, n2, alternative=alt)
        assert r.statistic == pytest.approx(z) and r.p_value == pytest.approx(p)


def test_bad_alternative_is_rejected() -> None:
    with pytest.raises(ValueError):
        paired_ttest([1, 2], [0, 1], alternative="bigger")


def test_paired_permutation_exact_small_and_matches_scipy() -> None:
    from contam.stats.tests import paired_permutation

    a, b = np.array([0.9, 0.8, 0.75, 0.6]), np.array([0.1, 0.2, 0.8, 0.3])
    r = paired_permutation(a, b)
    # exact enumeration of the 16 sign flips
    d = a - b
    signs = np.array(np.meshgrid(*[[1, -1]] * 4)).reshape(4, -1).T
    exact = np.mean((signs * d).mean(axis=1) >= d.mean() - 1e-12)
    assert r.p_value == pytest.approx(exact) and r.details["exact"]
    assert paired_permutation(a, a).p_value == 1.0
    rng = np.random.default_rng(0)
    x, y = rng.random(40), rng.random(40)
    ref = sps.permutation_test(
        (x, y),
        lambda p, q, axis=-1: np.mean(p - q, axis=axis),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=2000,
        vectorized=True,
        rng=np.random.default_rng(3),
    )
    assert paired_permutation(x, y, "two-sided", n_resamples=2000, seed=3).p_value == pytest.approx(ref.pvalue)
