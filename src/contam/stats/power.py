"""Power analysis: minimum detectable effects and sample sizes, unpaired and paired.

Paper 003 §6: on a 115-task suite the minimum detectable effect (MDE) of an unpaired
two-proportion z-test (α = .05 two-sided, 80% power) is roughly 15 to 18 points, and a
5-point gap needs on the order of 1,500 instances per arm; pairing on common seeded
instances (exact McNemar) helps only as far as the discordant pairs allow.

Two normal approximations are offered for the unpaired design: ``"wald"`` (pooled variance
under H0, unpooled under H1 — the textbook two-proportion z-test sample size) and
``"arcsine"`` (Cohen's h, exactly what ``statsmodels`` ``NormalIndPower`` solves). The
paired design uses Connor's (1987) McNemar approximation, or the exact McNemar power by
enumeration (:func:`power_mcnemar_exact`).

>>> round(mde_unpaired(115, baseline=0.5), 3)
0.181
>>> n_unpaired(0.05, baseline=0.5)
1565
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

from scipy import optimize
from scipy import stats as sps

from contam.records import Record


def _z(alpha: float, two_sided: bool) -> float:
    return float(sps.norm.ppf(1 - alpha / 2 if two_sided else 1 - alpha))


def _check(alpha: float, power: float) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie in (0, 1), got alpha={alpha}, power={power}")


def power_unpaired(
    n: float, delta: float, baseline: float = 0.5, alpha: float = 0.05, two_sided: bool = True, method: str = "wald"
) -> float:
    """Power of the two-proportion z-test with ``n`` per arm to detect ``baseline`` vs ``baseline + delta``."""
    p1, p2 = baseline, baseline + delta
    if not (0 <= p1 <= 1 and 0 <= p2 <= 1):
        raise ValueError(f"proportions must lie in [0, 1], got {p1} and {p2}")
    za = _z(alpha, two_sided)
    if method == "arcsine":
        h = abs(2 * math.asin(math.sqrt(p2)) - 2 * math.asin(math.sqrt(p1)))
        return float(sps.norm.cdf(h * math.sqrt(n / 2) - za) + (sps.norm.cdf(-h * math.sqrt(n / 2) - za) if two_sided else 0))
    if method != "wald":
        raise ValueError(f"method must be 'wald' or 'arcsine', got {method!r}")
    pbar = (p1 + p2) / 2
    sd0 = math.sqrt(2 * pbar * (1 - pbar) / n)
    sd1 = math.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n)
    if sd1 == 0:
        return 1.0 if delta else 0.0
    d = abs(delta)
    return float(sps.norm.cdf((d - za * sd0) / sd1) + (sps.norm.cdf((-d - za * sd0) / sd1) if two_sided else 0))


def mde_unpaired(
    n: float, baseline: float = 0.5, alpha: float = 0.05, power: float = 0.8, two_sided: bool = True, method: str = "wald"
) -> float:
    """Smallest gap above ``baseline`` detectable with ``power`` by ``n`` instances per arm."""
    _check(alpha, power)
    hi = 1 - baseline
    if hi <= 0 or power_unpaired(n, hi, baseline, alpha, two_sided, method) < power:
        return float("nan")  # not detectable at any gap
    # brentq returns the root alone unless full_output=True (its stub also admits the tuple)
    return float(cast(float, optimize.brentq(lambda d: power_unpaired(n, d, baseline, alpha, two_sided, method) - power, 1e-9, hi)))


def n_unpaired(
    delta: float, baseline: float = 0.5, alpha: float = 0.05, power: float = 0.8, two_sided: bool = True, method: str = "wald"
) -> int:
    """Instances per arm needed to detect a gap ``delta`` above ``baseline``."""
    _check(alpha, power)
    if delta == 0:
        raise ValueError("a zero gap cannot be detected")
    n = 2
    while power_unpaired(n, delta, baseline, alpha, two_sided, method) < power:
        n *= 2
    lo, hi = n // 2, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if power_unpaired(mid, delta, baseline, alpha, two_sided, method) >= power else (mid, hi)
    return hi


def power_paired(n: float, delta: float, discordance: float, alpha: float = 0.05, two_sided: bool = True) -> float:
    """Connor's (1987) normal approximation to McNemar's power.

    ``discordance`` is ψ = P(the two systems disagree on an instance); ``delta`` = p10 - p01.
    """
    if not 0 < discordance <= 1 or abs(delta) > discordance:
        raise ValueError(f"need 0 < discordance <= 1 and |delta| <= discordance, got {discordance}, {delta}")
    za = _z(alpha, two_sided)
    sd1 = math.sqrt(max(discordance - delta**2, 1e-15))
    return float(sps.norm.cdf((abs(delta) * math.sqrt(n) - za * math.sqrt(discordance)) / sd1))


def mde_paired(n: float, discordance: float, alpha: float = 0.05, power: float = 0.8, two_sided: bool = True) -> float:
    """Smallest paired gap (p10 - p01) detectable on ``n`` common instances with discordance ψ."""
    _check(alpha, power)
    if power_paired(n, discordance, discordance, alpha, two_sided) < power:
        return float("nan")
    return float(cast(float, optimize.brentq(lambda d: power_paired(n, d, discordance, alpha, two_sided) - power, 1e-9, discordance)))


def n_paired(delta: float, discordance: float, alpha: float = 0.05, power: float = 0.8, two_sided: bool = True) -> int:
    """Common instances needed to detect a paired gap ``delta`` (Connor 1987)."""
    _check(alpha, power)
    za, zb = _z(alpha, two_sided), float(sps.norm.ppf(power))
    return math.ceil((za * math.sqrt(discordance) + zb * math.sqrt(discordance - delta**2)) ** 2 / delta**2)


def power_mcnemar_exact(n: int, delta: float, discordance: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided exact McNemar test, by enumerating the discordant counts.

    D ~ Bin(n, ψ) discordant pairs; given D = d, the first system wins N10 ~ Bin(d, (ψ+δ)/(2ψ));
    the test rejects when the exact binomial p-value is ≤ α.
    """
    if not 0 < discordance <= 1 or abs(delta) > discordance:
        raise ValueError(f"need 0 < discordance <= 1 and |delta| <= discordance, got {discordance}, {delta}")
    q = (discordance + delta) / (2 * discordance)
    total = 0.0
    for d in range(1, n + 1):
        pd = sps.binom.pmf(d, n, discordance)
        if pd < 1e-14:
            continue
        ks = range(d + 1)
        # reject when min(2·P(X <= min(k, d-k)), 1) <= alpha
        crit = [k for k in ks if min(1.0, 2 * sps.binom.cdf(min(k, d - k), d, 0.5)) <= alpha]
        if crit:
            total += float(pd) * float(sum(sps.binom.pmf(k, d, q) for k in crit))
    return float(total)


def passk_gap(p1: float, p2: float, k: int) -> float:
    """Gap in pass^k (all k trials pass) between per-trial success rates p1 and p2: p1^k - p2^k."""
    return p1**k - p2**k


@dataclass(frozen=True)
class PowerReport(Record):
    """What ``contam stats power`` prints: MDEs and sample sizes for one setting."""

    n: int
    alpha: float
    power: float
    baseline: float
    gap: float
    discordance: float
    mde_unpaired_wald: float
    mde_unpaired_arcsine: float
    mde_paired: float
    n_unpaired_for_gap: int
    n_paired_for_gap: int
    exact_mcnemar_power_at_n: float


def power_report(
    n: int = 115, alpha: float = 0.05, power: float = 0.8, baseline: float = 0.5, gap: float = 0.05, discordance: float = 0.3
) -> PowerReport:
    """All the figures of §6 for one setting (defaults: the paper's 115-task retail suite)."""
    return PowerReport(
        n=n,
        alpha=alpha,
        power=power,
        baseline=baseline,
        gap=gap,
        discordance=discordance,
        mde_unpaired_wald=mde_unpaired(n, baseline, alpha, power),
        mde_unpaired_arcsine=mde_unpaired(n, baseline, alpha, power, method="arcsine"),
        mde_paired=mde_paired(n, discordance, alpha, power),
        n_unpaired_for_gap=n_unpaired(gap, baseline, alpha, power),
        n_paired_for_gap=n_paired(gap, discordance, alpha, power),
        exact_mcnemar_power_at_n=power_mcnemar_exact(n, min(gap, discordance), discordance, alpha),
    )
