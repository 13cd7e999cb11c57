"""Confidence intervals: Wilson for a proportion, Newcombe's hybrid score intervals for a
difference of proportions (paired and unpaired), and bootstrap intervals for any statistic.

>>> round(wilson_interval(7, 20).low, 4)
0.1812
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats as sps

from contam.stats.results import ConfidenceInterval


def z_quantile(confidence: float) -> float:
    """The two-sided standard-normal quantile of a confidence level (1.96 at 0.95).

    >>> round(z_quantile(0.95), 3)
    1.96
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(sps.norm.ppf(0.5 + confidence / 2.0))


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a binomial proportion (good coverage even near 0 and 1,
    unlike the Wald interval). Equals ``statsmodels`` ``proportion_confint(method="wilson")``.

    >>> iv = wilson_interval(0, 10)
    >>> iv.low, round(iv.high, 4)
    (0.0, 0.2775)
    """
    if n <= 0:
        return ConfidenceInterval(float("nan"), float("nan"), float("nan"), confidence, "wilson")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n={n}], got {successes}")
    z = z_quantile(confidence)
    p = successes / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return ConfidenceInterval(p, max(0.0, center - half), min(1.0, center + half), confidence, "wilson")


def newcombe_unpaired_interval(k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95) -> ConfidenceInterval:
    """Newcombe's hybrid score interval (his method 10) for ``k1/n1 - k2/n2`` from two
    independent samples; equals ``statsmodels`` ``confint_proportions_2indep(method="newcomb")``.
    """
    a = wilson_interval(k1, n1, confidence)
    b = wilson_interval(k2, n2, confidence)
    d = a.estimate - b.estimate
    low = d - math.sqrt((a.estimate - a.low) ** 2 + (b.high - b.estimate) ** 2)
    high = d + math.sqrt((a.high - a.estimate) ** 2 + (b.estimate - b.low) ** 2)
    return ConfidenceInterval(d, low, high, confidence, "newcombe-hybrid-score")


def newcombe_paired_interval(n11: int, n10: int, n01: int, n00: int, confidence: float = 0.95) -> ConfidenceInterval:
    """Newcombe (1998) method 10 for the difference of two *paired* proportions
    ``p1 - p2 = (n10 - n01) / n``: Wilson intervals for each margin combined with the phi
    correlation of the 2x2 table. ``n10`` counts pairs where only the first is a success.

    >>> iv = newcombe_paired_interval(n11=5, n10=10, n01=1, n00=4)
    >>> round(iv.estimate, 2), iv.low > 0
    (0.45, True)
    """
    n = n11 + n10 + n01 + n00
    if n <= 0:
        return ConfidenceInterval(float("nan"), float("nan"), float("nan"), confidence, "newcombe-paired")
    a = wilson_interval(n11 + n10, n, confidence)
    b = wilson_interval(n11 + n01, n, confidence)
    p1, p2 = a.estimate, b.estimate
    d = p1 - p2
    denom = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    # Newcombe's phi with his continuity correction for positive association: without it a
    # table with no discordant pairs (phi = 1) collapses the interval to a single point.
    cross = n11 * n00 - n10 * n01
    if cross > 0:
        cross = max(cross - n / 2.0, 0.0)
    phi = cross / math.sqrt(denom) if denom > 0 else 0.0
    dl1, du1 = p1 - a.low, a.high - p1
    dl2, du2 = p2 - b.low, b.high - p2
    low = d - math.sqrt(max(0.0, dl1**2 - 2 * phi * dl1 * du2 + du2**2))
    high = d + math.sqrt(max(0.0, du1**2 - 2 * phi * du1 * dl2 + dl2**2))
    return ConfidenceInterval(d, max(-1.0, low), min(1.0, high), confidence, "newcombe-paired")


def bootstrap_interval(
    data: Sequence[float] | np.ndarray,
    statistic: Callable[..., float] = np.mean,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    method: str = "percentile",
    seed: int = 0,
) -> ConfidenceInterval:
    """Bootstrap interval for ``statistic`` of one sample, through ``scipy.stats.bootstrap``
    (``method`` is ``percentile``, ``basic`` or ``BCa``). A constant sample gives the
    degenerate interval ``[v, v]`` instead of NaN.

    >>> iv = bootstrap_interval([1.0, 2.0, 3.0, 4.0], n_resamples=2000)
    >>> iv.low < 2.5 < iv.high
    True
    """
    x = np.asarray(data, dtype=float)
    if x.size == 0:
        return ConfidenceInterval(float("nan"), float("nan"), float("nan"), confidence, f"bootstrap-{method}")
    est = float(statistic(x))
    if x.size < 2 or np.all(x == x[0]):
        return ConfidenceInterval(est, est, est, confidence, f"bootstrap-{method}")
    res = scipy_bootstrap(x, statistic, confidence, n_resamples, method, seed, "two-sided")
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return ConfidenceInterval(est, low, high, confidence, f"bootstrap-{method}")


def scipy_bootstrap(
    x: np.ndarray,
    statistic: Callable[..., float],
    confidence: float,
    n_resamples: int,
    method: str,
    seed: int,
    alternative: str,
) -> sps._resampling.BootstrapResult:
    """``scipy.stats.bootstrap`` on one sample with a seeded generator (shared by the
    paired bootstrap test so its interval matches :func:`bootstrap_interval`)."""

    vectorized = statistic in (np.mean, np.median)
    with warnings.catch_warnings():
        # BCa on near-degenerate samples warns and yields NaN; callers see the NaN.
        warnings.simplefilter("ignore", category=sps.DegenerateDataWarning)
        return sps.bootstrap(
            (x,),
            statistic,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method=method,
            alternative=alternative,
            rng=np.random.default_rng(seed),
            vectorized=vectorized,
        )
