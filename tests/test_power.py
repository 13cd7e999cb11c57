"""Power analysis against paper 003 §6 and statsmodels."""

from __future__ import annotations

import itertools
import math

import pytest
from statsmodels.stats.power import NormalIndPower

from contam.stats.power import (
    mde_paired,
    mde_unpaired,
    n_paired,
    n_unpaired,
    passk_gap,
    power_mcnemar_exact,
    power_paired,
    power_unpaired,
)


def test_paper_115_task_mde_is_15_to_18_points():
    # baseline pass rates 0.5 .. 0.7 (where τ-bench retail systems sit) give 18 .. 15 points
    assert mde_unpaired(115, baseline=0.5) == pytest.approx(0.181, abs=0.002)
    assert mde_unpaired(115, baseline=0.7) == pytest.approx(0.153, abs=0.002)
    for b in (0.5, 0.6, 0.7):
        assert 0.15 <= mde_unpaired(115, baseline=b) <= 0.185


def test_five_point_gap_needs_about_1500_per_arm():
    assert 1400 <= n_unpaired(0.05, baseline=0.5) <= 1600
    assert power_unpaired(n_unpaired(0.05), 0.05) >= 0.8 > power_unpaired(n_unpaired(0.05) - 1, 0.05)


@pytest.mark.parametrize("n", [50, 115, 400, 2000])
def test_arcsine_matches_statsmodels(n):
    h = NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05, power=0.8, ratio=1.0)
    p2 = math.sin(math.asin(math.sqrt(0.5)) + h / 2) ** 2
    assert mde_unpaired(n, 0.5, method="arcsine") == pytest.approx(p2 - 0.5, rel=1e-3)


def test_paired_design():
    n = n_paired(0.05, discordance=0.3)
    assert power_paired(n, 0.05, 0.3) >= 0.8 > power_paired(n - 5, 0.05, 0.3)
    # the exact McNemar power at Connor's n is close to the target
    assert power_mcnemar_exact(n, 0.05, 0.3) == pytest.approx(0.8, abs=0.04)
    # pairing with low discordance beats the unpaired design at the same n
    assert mde_paired(115, 0.2) < mde_unpaired(115, 0.5)


def test_passk_gap_rises_then_vanishes():
    # pass^k = p^k, so the gap is p1^k - p2^k: at high pass rates it first *grows* with k (0.7^k
    # falls faster than 0.8^k), peaks, and then shrinks towards nothing; at low pass rates it
    # only shrinks.
    assert passk_gap(0.8, 0.7, 1) == pytest.approx(0.1)
    assert passk_gap(0.8, 0.7, 8) == pytest.approx(0.8**8 - 0.7**8)  # 0.110: larger than at k = 1
    gaps = [passk_gap(0.8, 0.7, k) for k in range(1, 41)]
    peak = max(range(len(gaps)), key=gaps.__getitem__) + 1
    assert peak == 4 and gaps[peak - 1] == pytest.approx(0.8**4 - 0.7**4)  # 0.170
    assert all(a > b for a, b in itertools.pairwise(gaps[peak - 1 :]))  # then falls for good
    assert gaps[-1] < 0.001
    low = [passk_gap(0.5, 0.4, k) for k in range(1, 9)]
    assert all(a > b for a, b in itertools.pairwise(low)) and low[-1] < 0.01


def test_bad_arguments():
    with pytest.raises(ValueError):
        mde_unpaired(115, alpha=1.5)
    with pytest.raises(ValueError):
        power_paired(100, 0.5, 0.3)
