"""Hypothesis tests used by the probes: exact McNemar, paired bootstrap, paired t-test,
Wilcoxon signed-rank, Mann–Whitney with AUC, two-proportion z-test.

Every function returns a :class:`~contam.stats.results.TestResult` whose ``effect`` is signed
so that positive means "the first sample is larger" (the contamination direction:
original > reference), and whose ``ci`` is a *two-sided* interval of that effect.

>>> r = mcnemar_exact([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], alternative="greater")
>>> round(r.p_value, 4), round(r.effect, 3)
(0.0312, 0.833)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from contam.stats.intervals import newcombe_paired_interval, newcombe_unpaired_interval, scipy_bootstrap, z_quantile
from contam.stats.results import ConfidenceInterval, TestResult, check_alternative

ArrayLike = Sequence[float] | np.ndarray


def _paired(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired samples must be 1-D and of equal length, got {x.shape} and {y.shape}")
    return x, y


def _one_sided_from_two(p_two: float, effect_positive: bool, effect_negative: bool, alternative: str) -> float:
    """The Zero-CoT authors' rule: half the two-sided p when the effect points in the
    alternative's direction, else ``1 - p/2`` (no effect at all gives 0.5)."""
    if alternative == "two-sided":
        return p_two
    toward = effect_positive if alternative == "greater" else effect_negative
    return p_two / 2.0 if toward else 1.0 - p_two / 2.0


# --------------------------------------------------------------------------- McNemar
def mcnemar_counts(n10: int, n01: int, n11: int = 0, n00: int = 0, alternative: str = "greater", confidence: float = 0.95) -> TestResult:
    """Exact McNemar test from the 2x2 table of paired binary outcomes.

    ``n10`` counts pairs where only the *first* is a success, ``n01`` where only the second is.
    Two-sided p is the exact binomial ``min(1, 2·P(X ≤ min(n10, n01)))``, X ~ Bin(n10+n01, ½),
    the same as ``statsmodels`` ``mcnemar(table, exact=True)``; one-sided p is half of it in the
    direction of the effect (``1 - p/2`` otherwise), as in the Zero-CoT Probe's code.
    ``effect`` is the difference of proportions ``(n10 - n01)/n`` with Newcombe's paired interval.

    >>> mcnemar_counts(n10=8, n01=1, n11=3, n00=8).p_value < 0.05
    True
    """
    check_alternative(alternative)
    if min(n10, n01, n11, n00) < 0:
        raise ValueError("contingency counts must be non-negative")
    n = n10 + n01 + n11 + n00
    disc = n10 + n01
    p_two = 1.0 if disc == 0 else float(min(1.0, 2.0 * sps.binom.cdf(min(n10, n01), disc, 0.5)))
    p = _one_sided_from_two(p_two, n10 > n01, n10 < n01, alternative)
    effect = (n10 - n01) / n if n else float("nan")
    return TestResult(
        method="exact McNemar",
        statistic=float(min(n10, n01)),
        p_value=p,
        effect=effect,
        n=n,
        alternative=alternative,
        ci=newcombe_paired_interval(n11, n10, n01, n00, confidence),
        details={
            "n11": n11,
            "n10": n10,
            "n01": n01,
            "n00": n00,
            "p_two_sided": p_two,
            "discordant_effect": (n10 - n01) / disc if disc else 0.0,
        },
    )


def mcnemar_exact(first: ArrayLike, second: ArrayLike, alternative: str = "greater", confidence: float = 0.95) -> TestResult:
    """Exact McNemar test on paired 0/1 outcomes (e.g. zero-CoT correctness on each original
    and on its variant). See :func:`mcnemar_counts`."""
    x, y = _paired(first, second)
    if not np.all(np.isin(x, (0, 1))) or not np.all(np.isin(y, (0, 1))):
        raise ValueError("McNemar needs binary (0/1) outcomes")
    x1, y1 = x == 1, y == 1
    return mcnemar_counts(
        n10=int(np.sum(x1 & ~y1)),
        n01=int(np.sum(~x1 & y1)),
        n11=int(np.sum(x1 & y1)),
        n00=int(np.sum(~x1 & ~y1)),
        alternative=alternative,
        confidence=confidence,
    )


# --------------------------------------------------------------------------- paired bootstrap
def paired_bootstrap(
    first: ArrayLike,
    second: ArrayLike,
    alternative: str = "greater",
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> TestResult:
    """Paired bootstrap test of the mean difference ``mean(first - second)``.

    The differences are resampled with ``scipy.stats.bootstrap`` (percentile interval, two-sided);
    the p-value reads the observed mean against the bootstrap distribution shifted to mean 0
    (H0: no difference), as in the Zero-CoT Probe's code, with the usual ``(1 + count)/(1 + B)``
    so that p is never exactly 0.

    >>> r = paired_bootstrap([0.9, 0.8, 0.7, 0.9], [0.1, 0.2, 0.1, 0.3], n_resamples=2000)
    >>> r.p_value < 0.01, round(r.effect, 3)
    (True, 0.65)
    """
    check_alternative(alternative)
    x, y = _paired(first, second)
    d = x - y
    n = int(d.size)
    if n == 0:
        return TestResult("paired bootstrap", float("nan"), float("nan"), float("nan"), 0, alternative)
    obs = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if n < 2 or np.all(d == d[0]):
        dist = np.full(n_resamples, obs)  # every resample of a constant sample is the constant
        low = high = obs
        se = 0.0
    else:
        res = scipy_bootstrap(d, np.mean, confidence, n_resamples, "percentile", seed, "two-sided")
        dist = np.asarray(res.bootstrap_distribution, dtype=float)
        low, high, se = float(res.confidence_interval.low), float(res.confidence_interval.high), float(res.standard_error)
    null = dist - dist.mean()
    tol = 1e-12 * max(1.0, abs(obs))  # floating noise must not turn "equal" into "less"
    if alternative == "greater":
        count = int(np.sum(null >= obs - tol))
    elif alternative == "less":
        count = int(np.sum(null <= obs + tol))
    else:
        count = int(np.sum(np.abs(null) >= abs(obs) - tol))
    p = (1 + count) / (1 + dist.size)
    return TestResult(
        method="paired bootstrap",
        statistic=obs,
        p_value=float(p),
        effect=obs,
        n=n,
        alternative=alternative,
        ci=ConfidenceInterval(obs, low, high, confidence, "bootstrap-percentile"),
        details={
            "mean_first": float(x.mean()),
            "mean_second": float(y.mean()),
            "cohens_dz": obs / sd if sd > 0 else 0.0,
            "n_resamples": int(n_resamples),
            "bootstrap_se": se,
            "seed": seed,
        },
    )


def paired_permutation(
    first: ArrayLike,
    second: ArrayLike,
    alternative: str = "greater",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> TestResult:
    """Sign-flip permutation test of ``mean(first - second)`` (``scipy.stats.permutation_test``
    swapping the two values within pairs): exact when ``2**n <= n_resamples``. Valid at any n,
    unlike the bootstrap, whose p-value is far too small for a handful of pairs.

    >>> paired_permutation([0.9, 0.8], [0.1, 0.2]).p_value
    0.25
    """
    check_alternative(alternative)
    x, y = _paired(first, second)
    d = x - y
    n = int(d.size)
    if n == 0:
        return TestResult("paired sign-flip permutation", float("nan"), float("nan"), float("nan"), 0, alternative)
    obs = float(d.mean())
    if np.all(d == 0):
        p = 1.0
    elif n == 1:  # two sign flips, d and -d; scipy needs two observations
        p = 1.0 if alternative == "two-sided" else (0.5 if (obs > 0) == (alternative == "greater") else 1.0)
    else:
        res = sps.permutation_test(
            (x, y),
            lambda a, b, axis=-1: np.mean(a - b, axis=axis),
            permutation_type="samples",
            alternative=alternative,
            n_resamples=n_resamples,
            vectorized=True,
            rng=np.random.default_rng(seed),
        )
        p = float(res.pvalue)
    return TestResult(
        "paired sign-flip permutation", obs, p, obs, n, alternative, details={"exact": 2**n <= n_resamples, "n_resamples": int(n_resamples)}
    )


def wilcoxon_signed_rank(first: ArrayLike, second: ArrayLike, alternative: str = "greater", confidence: float = 0.95) -> TestResult:
    """Wilcoxon signed-rank test of ``first - second`` (``scipy.stats.wilcoxon``: exact null
    distribution for n <= 50 without ties or zeros, else the normal approximation). Zero
    differences are dropped (Wilcoxon's convention) and NaN pairs ignored. ``effect`` is the
    Hodges-Lehmann estimate (median of the Walsh averages), the location shift the test is
    about, with its exact distribution-free interval from the Walsh averages.

    >>> r = wilcoxon_signed_rank([2.0, 3.5, 4.0, 5.5, 6.0], [0.0, 0.0, 0.0, 0.0, 0.0])
    >>> r.p_value, r.effect
    (0.03125, 4.0)
    """
    check_alternative(alternative)
    x, y = _paired(first, second)
    d = x - y
    d = d[~np.isnan(d)]
    nz = d[d != 0.0]
    n = int(nz.size)
    if n == 0:
        return TestResult(
            "Wilcoxon signed-rank", float("nan"), 1.0 if d.size else float("nan"), 0.0 if d.size else float("nan"), int(d.size), alternative
        )
    walsh = ((nz[:, None] + nz[None, :]) / 2.0)[np.triu_indices(n)]
    hl = float(np.median(walsh))
    res = sps.wilcoxon(nz, alternative=alternative)
    # Distribution-free CI of the shift: order statistics of the Walsh averages at the
    # signed-rank critical value (normal approximation of the rank-sum quantile).
    m = walsh.size
    k = int(max(0, math.floor(m / 2 - z_quantile(confidence) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))))
    ws = np.sort(walsh)
    ci = ConfidenceInterval(hl, float(ws[k]), float(ws[m - 1 - k]), confidence, "walsh") if k < m else None
    # scipy builds WilcoxonResult at run time (_make_tuple_bunch): pyright sees an anonymous tuple class.
    stat, pvalue = float(res.statistic), float(res.pvalue)  # pyright: ignore[reportAttributeAccessIssue]
    return TestResult(
        method="Wilcoxon signed-rank",
        statistic=stat,
        p_value=pvalue,
        effect=hl,
        n=n,
        alternative=alternative,
        ci=ci,
        details={
            "n_positive": int((nz > 0).sum()),
            "n_negative": int((nz < 0).sum()),
            "n_zero": int(d.size - n),
            "mean_diff": float(d.mean()),
            "exact": bool(n <= 50 and np.unique(np.abs(nz)).size == n),
        },
    )


# --------------------------------------------------------------------------- paired t-test
def paired_ttest(first: ArrayLike, second: ArrayLike, alternative: str = "greater", confidence: float = 0.95) -> TestResult:
    """Paired t-test of ``mean(first - second)`` (``scipy.stats.ttest_rel``), with the two-sided
    t interval of the mean difference. Zero-variance differences give p = 1 when they are all
    zero and p = 0 in the direction of a constant non-zero shift (scipy returns NaN there).

    >>> round(paired_ttest([0.8, 0.6, 0.9, 0.7], [0.5, 0.5, 0.6, 0.4]).p_value, 4)
    0.0077
    """
    check_alternative(alternative)
    x, y = _paired(first, second)
    d = x - y
    n = int(d.size)
    if n < 2:
        return TestResult("paired t-test", float("nan"), float("nan"), float(d.mean()) if n else float("nan"), n, alternative)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if np.ptp(d) == 0.0:  # identical differences: the mean can carry rounding noise, the test cannot
        mean, sd = float(d[0]), 0.0
        if mean == 0.0:
            stat, p = 0.0, 1.0
        else:
            stat = math.copysign(math.inf, mean)
            toward = mean > 0 if alternative == "greater" else mean < 0 if alternative == "less" else True
            p = 0.0 if toward else 1.0
        ci = ConfidenceInterval(mean, mean, mean, confidence, "t")
    else:
        res = sps.ttest_rel(x, y, alternative=alternative)
        stat, p = float(res.statistic), float(res.pvalue)
        two = sps.ttest_rel(x, y).confidence_interval(confidence)
        ci = ConfidenceInterval(mean, float(two.low), float(two.high), confidence, "t")
    return TestResult(
        method="paired t-test",
        statistic=stat,
        p_value=p,
        effect=mean,
        n=n,
        alternative=alternative,
        ci=ci,
        details={
            "df": n - 1,
            "sd_diff": sd,
            "cohens_dz": mean / sd if sd > 0 else 0.0,
            "mean_first": float(x.mean()),
            "mean_second": float(y.mean()),
        },
    )


# --------------------------------------------------------------------------- Mann–Whitney / AUC
def auc_delong(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """AUC = P(X > Y) + ½P(X = Y) of sample ``x`` over sample ``y`` and its DeLong standard error
    (via mid-ranks, O(n log n))."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    m, k = a.size, b.size
    if m == 0 or k == 0:
        return float("nan"), float("nan")
    ranks = sps.rankdata(np.concatenate([a, b]))
    v10 = (ranks[:m] - sps.rankdata(a)) / k  # per x: share of y below it (ties count ½)
    v01 = 1.0 - (ranks[m:] - sps.rankdata(b)) / m  # per y: share of x above it
    auc = float(v10.mean())
    var = (v10.var(ddof=1) / m if m > 1 else 0.0) + (v01.var(ddof=1) / k if k > 1 else 0.0)
    return auc, math.sqrt(max(var, 0.0))


def mann_whitney(x: ArrayLike, y: ArrayLike, alternative: str = "greater", confidence: float = 0.95) -> TestResult:
    """Mann–Whitney U test that ``x`` tends to be larger than ``y`` (``scipy.stats.mannwhitneyu``),
    with the AUC (= U / (n_x n_y)) as the effect and a DeLong interval for it.

    >>> r = mann_whitney([5, 6, 7, 8], [1, 2, 3, 4])
    >>> r.effect, round(r.p_value, 4)
    (1.0, 0.0143)
    """
    check_alternative(alternative)
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        return TestResult("Mann-Whitney U", float("nan"), float("nan"), float("nan"), int(a.size + b.size), alternative)
    res = sps.mannwhitneyu(a, b, alternative=alternative)
    auc, se = auc_delong(a, b)
    z = z_quantile(confidence)
    return TestResult(
        method="Mann-Whitney U",
        statistic=float(res.statistic),
        p_value=float(res.pvalue),
        effect=auc,
        n=int(a.size + b.size),
        alternative=alternative,
        ci=ConfidenceInterval(auc, max(0.0, auc - z * se), min(1.0, auc + z * se), confidence, "delong"),
        details={"n_x": int(a.size), "n_y": int(b.size), "auc_se": se, "median_x": float(np.median(a)), "median_y": float(np.median(b))},
    )


# --------------------------------------------------------------------------- two proportions
def two_proportion_ztest(k1: int, n1: int, k2: int, n2: int, alternative: str = "greater", confidence: float = 0.95) -> TestResult:
    """Pooled two-proportion z-test of ``k1/n1`` against ``k2/n2`` (independent samples); the
    same statistic and p as ``statsmodels`` ``proportions_ztest``, with Newcombe's hybrid
    score interval for the difference.

    >>> round(two_proportion_ztest(60, 100, 45, 100).p_value, 4)
    0.0168
    """
    check_alternative(alternative)
    if n1 <= 0 or n2 <= 0:
        raise ValueError("both samples need n > 0")
    p1, p2 = k1 / n1, k2 / n2
    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0.0:
        z, p = 0.0, 1.0  # both samples all-success or all-failure: no evidence either way
    else:
        z = (p1 - p2) / se
        if alternative == "greater":
            p = float(sps.norm.sf(z))
        elif alternative == "less":
            p = float(sps.norm.cdf(z))
        else:
            p = float(2 * sps.norm.sf(abs(z)))
    return TestResult(
        method="two-proportion z-test",
        statistic=z,
        p_value=p,
        effect=p1 - p2,
        n=n1 + n2,
        alternative=alternative,
        ci=newcombe_unpaired_interval(k1, n1, k2, n2, confidence),
        details={"p1": p1, "p2": p2, "k1": k1, "n1": n1, "k2": k2, "n2": n2},
    )
