"""Fitting the semantic level's shortlist (:mod:`contam.scan.shortlist`) on the calibration halves.

Target: the documents the full ``learned`` rule flags with their own source as nearest item (what
the shortlist must never drop); against: every negative of the same sets (twins set apart). The cut
is the ``keep`` quantile of the calibration positives' logit (default 0.2 %: 99.8 % kept), and the
intercept is shifted so that probability 0.5 is that cut. Called by ``semantic_independent.py --fit``.
"""

from __future__ import annotations

import sys

import numpy as np

from contam.data.language import detect_languages
from contam.scan.combiner import combiner_from_record
from contam.scan.dcq import Task
from contam.scan.shortlist import SHORTLIST_FEATURES, StaticShortlist
from logistic_fit import fit_logistic


def fit_shortlist(calib: list[Task], full: list[dict[str, np.ndarray]], combiners: dict, keep: float = 0.002) -> dict:
    """``full``: each calib task's rows scored without the shortlist; ``combiners``: the English
    route's records, ``minilm`` (prose) and ``minilm-code`` (rows whose nearest item is code), whose
    decisions are the target."""
    prose = combiner_from_record("minilm", combiners["minilm"])
    code = combiner_from_record("minilm-code", combiners.get("minilm-code", combiners["minilm"]))
    xs, ys = [], []
    for t, r in zip(calib, full, strict=True):
        rows = np.flatnonzero([lang == "en" for lang in detect_languages(t.texts)])
        if not len(rows):
            continue
        f, _, _ = StaticShortlist().fit(t.items).features([t.texts[i] for i in rows])
        is_code = r["code"][rows] if "code" in r else np.zeros(len(rows), dtype=bool)
        wanted = np.where(is_code, code.probability(r["features"][rows]), prose.probability(r["features"][rows])) >= 0.5
        for k, i in enumerate(rows):
            if t.cross_split[i] or (t.labels[i] == 1 and not (wanted[k] and r["right"][i])):
                continue  # a twin, or a positive the full rule misses anyway
            xs.append(f[k])
            ys.append(t.labels[i])
    x, y = np.array(xs), np.array(ys)
    lf = fit_logistic(x, y)
    cut = float(np.quantile(lf.logit[y == 1], keep))
    kept_neg = float((lf.logit[y == 0] >= cut).mean())
    print(
        f"fitted the shortlist: {len(y)} rows ({int(y.sum())} wanted), cut keeps {1 - keep:.3f} of them and {kept_neg:.3f} of the negatives",
        file=sys.stderr,
    )
    return lf.record(
        SHORTLIST_FEATURES,
        cut,
        y,
        keep=1 - keep,
        calib_negatives_kept=round(kept_neg, 4),
        target="English rows the full learned rule (minilm, minilm-code) flags with their own source nearest",
        sets=sorted({t.name for t in calib}),
    )
