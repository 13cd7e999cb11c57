"""Fitting the semantic level's shortlist (:mod:`contam.scan.shortlist`) on the calibration halves.

Target: the documents the full ``learned`` rule flags with their own source as nearest item (what
the shortlist must never drop); against: every negative of the same sets (twins set apart). The cut
is the ``--keep`` quantile of the calibration positives' logit (default 0.2 %: 99.8 % kept), and the
intercept is shifted so that probability 0.5 is that cut. Called by ``semantic_independent.py --fit``.
"""

from __future__ import annotations

import sys
from datetime import date

import numpy as np

from contam.data.language import detect_languages
from contam.scan.dcq import Task
from contam.scan.shortlist import SHORTLIST_FEATURES, SHORTLIST_KEY, StaticShortlist


def fit_shortlist(calib: list[Task], full: list[dict[str, np.ndarray]], new_minilm: dict, keep: float = 0.002) -> dict:
    from sklearn.linear_model import LogisticRegression

    from contam.scan.combiner import LinearCombiner

    c = new_minilm
    minilm = LinearCombiner("minilm", tuple(c["coef"]), float(c["intercept"]), tuple(c["mean"]), tuple(c["scale"]))
    # A placeholder model: only the features are needed here.
    probe = LinearCombiner(SHORTLIST_KEY, (0.0,) * len(SHORTLIST_FEATURES), 0.0, (0.0,) * 6, (1.0,) * 6, SHORTLIST_FEATURES)
    xs, ys = [], []
    for t, r in zip(calib, full, strict=True):
        english = np.array([lang == "en" for lang in detect_languages(t.texts)])
        if not english.any():
            continue
        rows = np.flatnonzero(english)
        sl = StaticShortlist(probe).fit(t.items)
        f, _ = sl.features([t.texts[i] for i in rows])
        wanted = minilm.probability(r["features"][rows]) >= 0.5
        for k, i in enumerate(rows):
            if t.cross_split[i] or (t.labels[i] == 1 and not (wanted[k] and r["right"][i])):
                continue  # a twin, or a positive the full rule misses anyway
            xs.append(f[k])
            ys.append(t.labels[i])
    x, y = np.array(xs), np.array(ys)
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    lr = LogisticRegression(C=0.3, class_weight="balanced", max_iter=3000).fit((x - mean) / scale, y)
    logit = lr.decision_function((x - mean) / scale)
    cut = float(np.quantile(logit[y == 1], keep))
    kept_neg = float((logit[y == 0] >= cut).mean())
    print(
        f"fitted {SHORTLIST_KEY}: {len(y)} rows ({int(y.sum())} wanted), cut keeps {1 - keep:.3f} of them and {kept_neg:.3f} of the negatives",
        file=sys.stderr,
    )
    return {
        "features": list(SHORTLIST_FEATURES),
        "coef": [round(float(v), 6) for v in lr.coef_[0]],
        "intercept": round(float(lr.intercept_[0]) - cut, 6),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "fitted_on": {
            "date": date.today().isoformat(),
            "rows": len(y),
            "positives": int(y.sum()),
            "keep": 1 - keep,
            "calib_negatives_kept": round(kept_neg, 4),
            "target": "English rows the full learned rule (minilm) flags with their own source nearest",
            "sets": sorted({t.name for t in calib}),
            "model": "sklearn LogisticRegression(C=0.3, class_weight='balanced') on standardised features",
            "split": "calib halves (blake2b of the item id), bench/semantic_independent.py",
        },
    }
