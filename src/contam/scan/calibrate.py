"""Per-level thresholds from a labelled validation set (paper 001 §5.2's "adaptive threshold selection").

Given every level's scores on labelled samples (:meth:`~contam.scan.hierarchy.Hierarchy.score_levels`),
:func:`calibrate` picks τ1 (n-gram coverage), τ2 (cosine) with the semantic rule, and τ3
(reasoning similarity) for the *cascade's* verdict (a sample is flagged when any level fires):
either the thresholds maximising F1, or, with ``target_precision``, those with the highest
recall whose precision on the validation set reaches the target. The search is coordinate
exhaustive on a coarse grid of each level's observed score quantiles (a level may also be switched
off), then coordinate ascent on a fine grid, for each semantic rule; ties go to the stricter
threshold so held-out precision is not spent on nothing.

>>> import numpy as np
>>> from contam.scan.hierarchy import LevelScores
>>> ls = LevelScores(np.array([0.9, 0.8, 0.1, 0.0]), [], None, None)
>>> calibrate(ls, np.array([1, 1, 0, 0]), levels=("token",)).thresholds.token
0.8
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from contam.errors import ConfigError
from contam.records import Record
from contam.scan.hierarchy import LevelScores, Thresholds
from contam.scan.semantic import RULES

OFF = 2.0  # a threshold no score reaches: the level is switched off


@dataclass(frozen=True)
class Metrics(Record):
    """Confusion counts with precision, recall and F1 (0 when undefined)."""

    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float


def metrics(pred: np.ndarray, labels: np.ndarray) -> Metrics:
    """Precision / recall / F1 of boolean ``pred`` against 0/1 ``labels``.

    >>> metrics(np.array([True, True, False]), np.array([1, 0, 1])).f1
    0.5
    """
    y = np.asarray(labels).astype(bool)
    p = np.asarray(pred).astype(bool)
    tp, fp = int((p & y).sum()), int((p & ~y).sum())
    fn, tn = int((~p & y).sum()), int((~p & ~y).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return Metrics(tp, fp, fn, tn, round(prec, 6), round(rec, 6), round(f1, 6))


@dataclass(frozen=True)
class ThresholdCalibration(Record):
    """Chosen thresholds and what they achieve on the validation set itself."""

    thresholds: Thresholds
    objective: str
    validation: Metrics
    levels: tuple[str, ...]


def balanced_weights(labels: np.ndarray) -> np.ndarray:
    """Weights giving both classes the same total weight (each clean sample counts n_pos / n_neg).

    >>> balanced_weights(np.array([1, 1, 1, 0])).tolist()
    [1.0, 1.0, 1.0, 3.0]
    """
    y = np.asarray(labels).astype(bool)
    w = np.ones(len(y))
    if (~y).any() and y.any():
        w[~y] = y.sum() / (~y).sum()
    return w


def _grid(values: np.ndarray, size: int) -> np.ndarray:
    v = np.unique(np.asarray(values, dtype=np.float64))
    if len(v) > size:
        v = np.unique(np.quantile(v, np.linspace(0, 1, size)))
    return np.concatenate([v, [OFF]])


def _level_values(ls: LevelScores, lv: str, rule: str = "") -> np.ndarray:
    if lv == "token":
        return ls.token
    if lv == "semantic" and ls.semantic is not None:
        # The learned rule thresholds a probability (a near copy passes any), every other rule a cosine.
        if rule == "learned" and ls.semantic.probability is not None:
            return ls.semantic.learned_scores()
        return ls.semantic.sim
    if lv == "reasoning" and ls.reasoning is not None:
        return np.array([m.sim.total if m.index >= 0 else 0.0 for m in ls.reasoning])
    return np.zeros(len(ls.token))


def precision_recall(pred: np.ndarray, y: np.ndarray, target: float | None, w: np.ndarray | None = None) -> tuple[float, float]:
    yb = y.astype(bool)
    if w is None:
        tp, fp, fn = float((pred & yb).sum()), float((pred & ~yb).sum()), float((~pred & yb).sum())
    else:
        tp, fp, fn = float(w[pred & yb].sum()), float(w[pred & ~yb].sum()), float(w[~pred & yb].sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    if target is None:
        return (f1, prec)
    if tp == 0 or prec < target:
        return (-1.0 + prec, 0.0)
    return (rec, f1)


def calibrate(
    scores: LevelScores,
    labels: np.ndarray,
    levels: Sequence[str] = ("token", "semantic", "reasoning"),
    target_precision: float | None = None,
    rules: Sequence[str] = RULES,
    grid_size: int = 200,
    coarse_size: int = 24,
    rounds: int = 3,
    sample_weight: np.ndarray | None = None,
) -> ThresholdCalibration:
    """Thresholds for ``levels`` maximising F1 (or recall at ``target_precision``) on ``labels``.

    ``sample_weight`` weighs samples in the objective, e.g. ``balanced_weights(labels)`` so that a
    validation set with more contaminated than clean samples does not reward flagging everything.
    """
    y = np.asarray(labels).astype(int)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if len(y) != len(scores.token):
        raise ConfigError(f"{len(y)} labels for {len(scores.token)} scored samples")
    if y.min(initial=1) == 1 or y.max(initial=0) == 0:
        raise ConfigError("calibration needs both contaminated (1) and clean (0) labelled samples")
    if target_precision is not None and not 0 < target_precision <= 1:
        raise ConfigError(f"target precision must be in (0, 1], got {target_precision}")
    best: tuple[tuple[float, float], Thresholds] | None = None
    learned = scores.semantic is not None and scores.semantic.probability is not None
    for rule in rules if "semantic" in levels else (Thresholds().semantic_rule,):
        if rule == "learned" and not learned:
            continue  # the scores were computed without the combiner
        grids = {lv: _grid(_level_values(scores, lv, rule), grid_size) for lv in levels}
        coarse = {lv: _grid(_level_values(scores, lv, rule), coarse_size) for lv in levels}
        base = Thresholds(token=OFF, semantic=OFF, reasoning=OFF, semantic_rule=rule)
        # 1. Exhaustive search on a coarse grid (coordinate ascent alone gets stuck when one
        #    level's best solo threshold flags everything), 2. coordinate ascent on the fine grid.
        dec = {lv: [scores.level_decision(lv, replace(base, **{lv: float(g)})) for g in coarse[lv]] for lv in levels}
        cur, t = (-2.0, 0.0), base
        for combo in itertools.product(*[range(len(coarse[lv])) for lv in levels]):
            pred = np.zeros(len(y), dtype=bool)
            for lv, gi in zip(levels, combo, strict=True):
                pred |= dec[lv][gi]
            sc = precision_recall(pred, y, target_precision, w)
            if sc > cur:
                cur, t = sc, replace(base, **{lv: float(coarse[lv][gi]) for lv, gi in zip(levels, combo, strict=True)})
        fired = {lv: scores.level_decision(lv, t) for lv in levels}
        for _ in range(rounds):
            changed = False
            for lv in levels:
                others = np.zeros(len(y), dtype=bool)
                for o in levels:
                    if o != lv:
                        others |= fired[o]
                for g in grids[lv][::-1]:  # highest first so ties keep the stricter threshold
                    cand = replace(t, **{lv: float(g)})
                    d = scores.level_decision(lv, cand)
                    sc = precision_recall(others | d, y, target_precision, w)
                    if sc > cur:
                        cur, t, changed = sc, cand, True
                        fired[lv] = d
            if not changed:
                break
        if best is None or cur > best[0]:
            best = (cur, t)
    assert best is not None
    thr = best[1]
    pred, _ = scores.decisions(thr, levels)
    objective = "f1" if target_precision is None else f"recall@precision>={target_precision}"
    return ThresholdCalibration(thresholds=thr, objective=objective, validation=metrics(pred, y), levels=tuple(levels))
