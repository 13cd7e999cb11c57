"""Result records of ``eval-probes``: item-level separations (AUROC, TPR at a fixed FPR) and
benchmark-level verdicts, and the figures behind them (:func:`roc_figures`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contam.records import Record


@dataclass(frozen=True)
class Separation(Record):
    """Item level: how well one score tells seen from unseen items (higher = more likely seen)."""

    probe: str
    method: str
    auroc: float
    tpr_at_fpr: float
    seen_mean: float
    unseen_mean: float
    n_seen: int
    n_unseen: int


@dataclass(frozen=True)
class SetVerdict(Record):
    """Benchmark level: one set (``seen``/``unseen``) against its variants.

    ``direction`` is the sign gate of the Contamination Confidence (1 when the effect points
    toward contamination). Under the null it is a coin flip, so it cannot be what "flagged"
    means: ``gate`` is the *evidence* gate, 1 only when the effect is positive **and** the
    one-sided test rejects at ``alpha`` (0.05; the same as CC >= 0.71 with prior 0.5)."""

    set: str
    probe: str
    method: str
    n: int
    effect: float
    p_value: float
    confidence: float
    gate: int
    direction: int = 0
    test: str = ""


def make_verdict(
    set_name: str, probe: str, method: str, n: int, effect: float, p_value: float, confidence: float, alpha: float = 0.05, test: str = ""
) -> SetVerdict:
    """A :class:`SetVerdict` with both gates filled in from ``effect`` and ``p_value``."""
    positive = not math.isnan(effect) and effect > 0
    flagged = positive and not math.isnan(p_value) and p_value < alpha
    return SetVerdict(set_name, probe, method, n, effect, p_value, confidence, int(flagged), int(positive), test)


@dataclass(frozen=True)
class EvalProbesResult(Record):
    model: str
    benchmark: str
    mode: str
    epochs: int
    n_seen: int
    n_unseen: int
    separations: tuple[Separation, ...]
    verdicts: tuple[SetVerdict, ...]
    config: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)

    def best(self, probe: str) -> Separation | None:
        """The score of ``probe`` with the highest AUROC (ties: higher TPR, then the higher
        Contamination Confidence on the seen set, then the lower one on the unseen set)."""
        rows = [s for s in self.separations if s.probe == probe and not math.isnan(s.auroc)]

        def key(s: Separation) -> tuple[float, float, float, float]:
            seen, unseen = self.verdict("seen", s.probe, s.method), self.verdict("unseen", s.probe, s.method)
            return (round(s.auroc, 6), round(s.tpr_at_fpr, 6), seen.confidence if seen else -1.0, -(unseen.confidence if unseen else 1.0))

        return max(rows, key=key) if rows else None

    def verdict(self, set_name: str, probe: str, method: str) -> SetVerdict | None:
        return next((v for v in self.verdicts if v.set == set_name and v.probe == probe and v.method == method), None)


def roc_figures(seen: Sequence[float], unseen: Sequence[float], fpr: float = 0.05) -> tuple[float, float]:
    """``(AUROC, TPR at FPR <= fpr)`` of scores where seen items are the positives (NaNs dropped)."""
    from sklearn.metrics import roc_auc_score, roc_curve

    pos = [x for x in seen if x is not None and not math.isnan(x)]
    neg = [x for x in unseen if x is not None and not math.isnan(x)]
    if not pos or not neg:
        return float("nan"), float("nan")
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    s = np.r_[pos, neg].astype(float)
    f, t, _ = roc_curve(y, s)
    return float(roc_auc_score(y, s)), float(t[f <= fpr + 1e-12].max())


def _sep(probe: str, method: str, seen: Sequence[float], unseen: Sequence[float], fpr: float) -> Separation:
    auc, tpr = roc_figures(seen, unseen, fpr)
    clean = lambda xs: [x for x in xs if x is not None and not math.isnan(x)]  # noqa: E731
    return Separation(
        probe,
        method,
        auc,
        tpr,
        float(np.mean(clean(seen))) if clean(seen) else float("nan"),
        float(np.mean(clean(unseen))) if clean(unseen) else float("nan"),
        len(clean(seen)),
        len(clean(unseen)),
    )


#: Paired per-item differences, all oriented so that > 0 points to contamination:
#: ``pair_diff`` = s_M(orig) - s_M(var) on the tokens where the two texts differ (no base model);
#: ``did`` = [s_M(orig) - s_M(var)] - [s_base(orig) - s_base(var)] with s = mean log-prob of the
#: whole text; ``did_diff`` = the same on the differing tokens only (numbers, names and the
#: answer: the shared template tokens carry no signal about the item, only noise and the
#: template boost that training on the original gives the variant too). ``did_diff`` is the
