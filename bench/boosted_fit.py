"""The fit behind the semantic level's shipped combiners (``combiner.json``): a small, monotone
gradient-boosted model (scikit-learn ``HistGradientBoostingClassifier``), written out as plain trees
that :class:`contam.scan.combiner.TreeCombiner` evaluates without scikit-learn's private classes.

Why these settings: depth 2 (each tree weighs at most two features jointly), 100 trees, balanced
classes, no early stopping (its random validation split would make the fit depend on a seed), and
every feature held monotone increasing, so the fit cannot learn that *more* of a sign of a leak means
less (a quirk of one calibration set that would fail one step away from it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

SETTINGS: dict[str, Any] = {"max_depth": 2, "max_iter": 100, "learning_rate": 0.1, "class_weight": "balanced", "early_stopping": False}


@dataclass
class BoostedFit:
    """A fitted model, its trees as plain lists and the calibration rows' raw scores."""

    trees: list[list[list[float]]]
    baseline: float
    logit: np.ndarray
    settings: dict[str, Any]

    def record(self, features: Sequence[str], cut: float, y: np.ndarray, **fitted_on: Any) -> dict[str, Any]:
        """The ``combiner.json`` entry: probability 0.5 at raw score ``cut``; ``fitted_on`` adds provenance."""
        return {
            "features": list(features),
            "offset": round(self.baseline - cut, 9),
            "fitted_on": {
                "date": date.today().isoformat(),
                "rows": len(y),
                "positives": int(y.sum()),
                **fitted_on,
                "model": f"sklearn HistGradientBoostingClassifier({', '.join(f'{k}={v!r}' for k, v in self.settings.items())})",
                "split": "calib halves (blake2b of the item id), bench/semantic_independent.py",
            },
            "trees": self.trees,
        }


def _plain_trees(model: Any) -> list[list[list[float]]]:
    # sklearn keeps its fitted trees in private predictors; read them once here and check the copy
    # against its own decision function (fit_boosted) so a change in sklearn cannot slip through.
    out = []
    for (pred,) in model._predictors:
        nodes = pred.nodes
        tree = []
        for n in nodes:
            leaf = bool(n["is_leaf"])
            tree.append(
                [
                    -1 if leaf else int(n["feature_idx"]),
                    0.0 if leaf else float(n["num_threshold"]),  # exact: data values sit on the thresholds
                    0 if leaf else int(n["left"]),
                    0 if leaf else int(n["right"]),
                    round(float(n["value"]), 9) if leaf else 0.0,
                ]
            )
        out.append(tree)
    return out


def fit_boosted(x: np.ndarray, y: np.ndarray, seed: int = 0) -> BoostedFit:
    from sklearn.ensemble import HistGradientBoostingClassifier

    from contam.scan.combiner import combiner_from_record

    x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0)
    settings = {**SETTINGS, "monotonic_cst": [1] * x.shape[1], "random_state": seed}
    model = HistGradientBoostingClassifier(**settings).fit(x, y)
    trees = _plain_trees(model)
    baseline = float(np.ravel(model._baseline_prediction)[0])
    ours = combiner_from_record("check", {"trees": trees, "offset": baseline}).logit(x)
    theirs = model.decision_function(x)
    if not np.allclose(ours, theirs, atol=1e-6):
        raise RuntimeError(f"plain trees disagree with sklearn's decision function (max {np.abs(ours - theirs).max():.2e})")
    return BoostedFit(trees, baseline, theirs, settings)
