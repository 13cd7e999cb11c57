"""p → Bayes factor → posterior calibration (paper 004 §3.6) and Benjamini–Hochberg."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from contam.stats.calibration import Calibration, contamination_confidence, posterior_probability, sbb_bayes_factor
from contam.stats.multiple import benjamini_hochberg


def _authors_ccs(effect: float, p: float, pi: float = 0.5) -> float:
    # the formula as the Zero-CoT Probe's code writes it, for p in (0, 1)
    bf = 1.0 / (-math.e * p * math.log(p)) if p < 1 / math.e else 1.0
    return (1.0 if effect > 0 else 0.0) * (bf * pi) / (bf * pi + (1 - pi))


@pytest.mark.parametrize("p", [1e-12, 1e-6, 1e-3, 0.01, 0.05, 0.2, 1 / math.e - 1e-9, 0.5, 0.99])
@pytest.mark.parametrize("prior", [0.1, 0.5, 0.9])
def test_confidence_matches_the_papers_formula(p: float, prior: float) -> None:
    assert contamination_confidence(p, 0.3, prior) == pytest.approx(_authors_ccs(0.3, p, prior))
    assert contamination_confidence(p, -0.3, prior) == 0.0
    assert contamination_confidence(p, 0.0, prior) == 0.0


def test_bayes_factor_bound_properties() -> None:
    assert sbb_bayes_factor(0.5) == 1.0 and sbb_bayes_factor(1.0) == 1.0
    assert sbb_bayes_factor(0.0) == math.inf
    assert sbb_bayes_factor(0.05) == pytest.approx(2.456, abs=1e-3)  # the well-known 2.46 at p = .05
    ps = np.linspace(1e-6, 1 / math.e, 200)
    bfs = [sbb_bayes_factor(float(p)) for p in ps]
    assert all(b1 >= b2 for b1, b2 in itertools.pairwise(bfs))  # monotone in p
    assert contamination_confidence(0.0, 1.0) == 1.0
    assert contamination_confidence(float("nan"), 1.0) == 0.0
    assert posterior_probability(3.0, prior=0.0) == 0.0
    with pytest.raises(ValueError):
        sbb_bayes_factor(1.5)


def test_calibration_record_roundtrip() -> None:
    c = Calibration.from_p(0.01, 0.2, prior=0.3)
    assert c.confidence == c.posterior == pytest.approx(_authors_ccs(0.2, 0.01, 0.3))
    assert Calibration.from_dict(c.to_dict()) == c


def test_bh_matches_statsmodels() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = np.r_[rng.random(15), rng.random(5) * 0.01]
        for alpha in (0.05, 0.1):
            rej, q, _, _ = multipletests(p, alpha=alpha, method="fdr_bh")
            r = benjamini_hochberg(p, alpha)
            assert np.allclose(r.adjusted, q) and list(r.rejected) == list(rej)


def test_bh_ignores_nan() -> None:
    r = benjamini_hochberg([0.001, float("nan"), 0.04])
    assert math.isnan(r.adjusted[1]) and r.rejected == (True, False, True)
    assert r.n_rejected == 2
