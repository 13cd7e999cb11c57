"""The one logistic fit behind the semantic level's shipped models (``combiner.json``): standardised
features, scikit-learn ``LogisticRegression(C=0.3, class_weight="balanced")``, and the record the
package reads, with the intercept shifted so that probability 0.5 sits at the chosen logit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np


@dataclass
class LogisticFit:
    """A fitted model over standardised features and the calibration rows' logits."""

    model: Any
    mean: np.ndarray
    scale: np.ndarray
    logit: np.ndarray

    def record(self, features: Sequence[str], cut: float, y: np.ndarray, **fitted_on: Any) -> dict[str, Any]:
        """The ``combiner.json`` entry: probability 0.5 at logit ``cut``; ``fitted_on`` adds provenance."""
        return {
            "features": list(features),
            "coef": [round(float(v), 6) for v in self.model.coef_[0]],
            "intercept": round(float(self.model.intercept_[0]) - cut, 6),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "fitted_on": {
                "date": date.today().isoformat(),
                "rows": len(y),
                "positives": int(y.sum()),
                **fitted_on,
                "model": "sklearn LogisticRegression(C=0.3, class_weight='balanced') on standardised features",
                "split": "calib halves (blake2b of the item id), bench/semantic_independent.py",
            },
        }


def fit_logistic(x: np.ndarray, y: np.ndarray) -> LogisticFit:
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    lr = LogisticRegression(C=0.3, class_weight="balanced", max_iter=3000).fit((x - mean) / scale, y)
    return LogisticFit(lr, mean, scale, lr.decision_function((x - mean) / scale))
