"""Benjamini–Hochberg false-discovery-rate control across many tests (e.g. many benchmarks
audited at once): a verdict for each benchmark that holds as a family.

>>> r = benjamini_hochberg([0.01, 0.04, 0.03, 0.20])
>>> r.rejected, [round(q, 3) for q in r.adjusted]
((True, False, False, False), [0.04, 0.053, 0.053, 0.2])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from contam.records import Record


@dataclass(frozen=True)
class FDRResult(Record):
    """BH-adjusted p-values (q-values) in input order, which hypotheses are rejected at ``alpha``."""

    adjusted: tuple[float, ...]
    rejected: tuple[bool, ...]
    alpha: float
    method: str = "benjamini-hochberg"

    @property
    def n_rejected(self) -> int:
        return sum(self.rejected)


def benjamini_hochberg(p_values: Sequence[float], alpha: float = 0.05) -> FDRResult:
    """Step-up BH procedure. Equals ``statsmodels`` ``multipletests(method="fdr_bh")``.
    NaN p-values (tests that could not run) are left out of the family and never rejected."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError("p_values must be a flat sequence")
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    adjusted = np.full(p.shape, math.nan)
    m = int(ok.sum())
    if m:
        vals = p[ok]
        order = np.argsort(vals, kind="mergesort")
        ranked = vals[order] * m / np.arange(1, m + 1)
        # step-up: q_(i) = min over j >= i of p_(j) m / j, capped at 1
        q_sorted = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
        q = np.empty(m)
        q[order] = q_sorted
        adjusted[ok] = q
    rejected = tuple(bool(ok[i] and adjusted[i] <= alpha) for i in range(p.size))
    return FDRResult(tuple(float(v) for v in adjusted), rejected, alpha)
