"""Turning a p-value into a posterior probability of contamination (paper 004, §3.6).

The Zero-CoT Probe calibrates a one-sided p-value with the Sellke–Bayarri–Berger bound on the
Bayes factor, ``BF ≤ 1 / (−e·p·ln p)`` for ``p < 1/e`` (else 1), turns it into a posterior with a
prior probability of contamination (0.5 by default: no opinion), and gates it to 0 when the
effect points the wrong way (a variant or control scoring better than the original cannot be evidence of a leak).
The bound is the *largest* Bayes factor any reasonable prior on the alternative can give, so
the confidence is an upper bound on how convinced the p-value alone should make you.

>>> round(contamination_confidence(0.001, effect=0.2), 4)
0.9816
>>> contamination_confidence(0.001, effect=-0.2)
0.0
>>> contamination_confidence(0.6, effect=0.1)
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from contam.records import Record


def sbb_bayes_factor(p_value: float) -> float:
    """Sellke–Bayarri–Berger upper bound on the Bayes factor for H1 given ``p``:
    ``1 / (−e·p·ln p)`` when ``0 < p < 1/e``, 1 when ``p ≥ 1/e``, ∞ at ``p = 0``."""
    if math.isnan(p_value):
        return float("nan")
    if not 0.0 <= p_value <= 1.0:
        raise ValueError(f"p-value must be in [0, 1], got {p_value}")
    if p_value == 0.0:
        return math.inf
    if p_value < 1.0 / math.e:
        return 1.0 / (-math.e * p_value * math.log(p_value))
    return 1.0


def posterior_probability(bayes_factor: float, prior: float = 0.5) -> float:
    """P(H1 | data) = BF·π / (BF·π + 1 − π)."""
    if not 0.0 <= prior <= 1.0:
        raise ValueError(f"prior must be in [0, 1], got {prior}")
    if math.isnan(bayes_factor):
        return float("nan")
    if math.isinf(bayes_factor):
        return 1.0 if prior > 0 else 0.0
    den = bayes_factor * prior + (1.0 - prior)
    return bayes_factor * prior / den if den > 0 else 0.0


def contamination_confidence(p_value: float, effect: float, prior: float = 0.5) -> float:
    """Contamination Confidence: the calibrated posterior, gated to 0 unless ``effect > 0``.

    NaN inputs (a test that could not run) give 0: no evidence."""
    if effect is None or math.isnan(effect) or effect <= 0.0 or math.isnan(p_value):
        return 0.0
    return posterior_probability(sbb_bayes_factor(p_value), prior)


@dataclass(frozen=True)
class Calibration(Record):
    """The calibration chain for one test, kept whole so a report can show each step."""

    p_value: float
    effect: float
    bayes_factor: float
    prior: float
    posterior: float
    confidence: float  # the posterior after the direction gate

    @classmethod
    def from_p(cls, p_value: float, effect: float, prior: float = 0.5) -> Calibration:
        """
        >>> Calibration.from_p(0.01, 0.1).bayes_factor > 7
        True
        """
        bf = sbb_bayes_factor(p_value)
        post = posterior_probability(bf, prior)
        return cls(p_value, effect, bf, prior, post, contamination_confidence(p_value, effect, prior))
