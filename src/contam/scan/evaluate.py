"""Detection quality on labelled scenarios: the layout of paper 001's Tables 1 and 2.

:func:`evaluate` scores every sample of a :class:`~contam.scan.scenarios.ScenarioSet` once with
every level, then, for each method, calibrates its threshold(s) on the ``calib`` split (one
setting for all scenarios together, as a practitioner would have to) and reports precision,
recall and F1 per scenario on the disjoint ``test`` split (that scenario's positives against all
test negatives). Methods:

* ``13-gram`` — the token level alone (IDF-weighted 13-gram coverage, GPT-3 style);
* ``embed-sim`` — cosine to the nearest benchmark item alone;
* ``min-k%`` — Min-K% Prob (K = 20 %) of the sample under ``model`` (only when one is given);
* ``cascade (paper τ)`` — the cascade with the paper's fixed settings (τ2 0.75 with the full
  semantic rule, τ1 0.5, τ3 0.6);
* ``cascade (defaults)`` — the cascade as shipped, no calibration: the semantic level's default
  rule (``learned``, :mod:`contam.scan.combiner`; ``nn`` with the embedder's calibrated cosines,
  :data:`contam.scan.semantic.EMBEDDER_DEFAULTS`, for an explicit ``--embedder``);
* ``cascade`` — the cascade with thresholds and semantic rule calibrated on ``calib``.

>>> rep = evaluate(build_scenarios("gsm8k", n=20))                # doctest: +SKIP
>>> rep.f1("cascade", "S1") > 0.9                                 # doctest: +SKIP
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contam.records import Record
from contam.scan.calibrate import Metrics, balanced_weights, calibrate, metrics
from contam.scan.hierarchy import Hierarchy, HierarchyConfig, LevelScores, Thresholds
from contam.scan.scenarios import SCENARIOS, ScenarioSet
from contam.scan.semantic import embedder_identity

METHODS = ("13-gram", "embed-sim", "min-k%", "cascade (paper τ)", "cascade (defaults)", "cascade")


@dataclass(frozen=True)
class Row(Record):
    """One (method, scenario) cell: metrics on the test split."""

    method: str
    scenario: str
    metrics: Metrics
    n_pos: int
    n_neg: int


@dataclass(frozen=True)
class EvalReport(Record):
    """All cells for one benchmark, plus the thresholds each method was calibrated to."""

    benchmark: str
    seed: int
    rows: tuple[Row, ...]
    thresholds: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)

    def f1(self, method: str, scenario: str) -> float | None:
        for r in self.rows:
            if r.method == method and r.scenario == scenario:
                return r.metrics.f1
        return None

    def methods(self) -> list[str]:
        return list(dict.fromkeys(r.method for r in self.rows))

    def scenarios(self) -> list[str]:
        return [s for s in SCENARIOS if any(r.scenario == s for r in self.rows)]


def min_k_scores(model: Any, texts: list[str], k: float = 0.2) -> np.ndarray:
    """Min-K% Prob (Shi et al. 2024): mean of the lowest ``k`` share of token log-probs."""
    from contam.progress import track

    out = []
    for t in track(texts, "min-k% scoring"):
        lp = np.sort(np.asarray(model.score([("", t)])[0].logprobs, dtype=np.float64))
        m = max(1, int(len(lp) * k))
        out.append(float(lp[:m].mean()) if len(lp) else -1e9)
    return np.asarray(out)


def _threshold_1d(values: np.ndarray, y: np.ndarray) -> float:
    """Threshold maximising class-balanced F1 of ``values >= t`` (stricter on ties)."""
    from contam.scan.calibrate import precision_recall

    w = balanced_weights(y)
    best, best_t = -1.0, float("inf")
    for t in np.unique(values)[::-1]:
        f = precision_recall(values >= t, y, None, w)[0]
        if f > best:
            best, best_t = f, float(t)
    return best_t


def evaluate(
    scenarios: ScenarioSet,
    config: HierarchyConfig | None = None,
    embedder: Any | None = None,
    model: Any | None = None,
    target_precision: float | None = None,
) -> EvalReport:
    """Table-1 style rows for one benchmark's scenarios (see the module docstring)."""

    cfg = config or HierarchyConfig.for_embedder(embedder, levels="all")
    docs = [s.document() for s in scenarios.samples]
    h = Hierarchy(cfg, embedder=embedder).fit(scenarios.items())
    ls: LevelScores = h.score_levels(docs)
    full = None
    if h.semantic is not None and h.semantic.shortlisting:
        # The baselines and the calibration read every document's cosine: the same fitted semantic level
        # again without the shortlist (the other levels' scores are the same).
        full = LevelScores(ls.token, ls.token_results, h.semantic.score([d.text for d in docs], shortlist=False), ls.reasoning)
    mk = min_k_scores(model, [d.text for d in docs]) if model is not None else None
    # Calibrated semantic thresholds hold for this embedder only: the report says which.
    emb_id = embedder_identity(h.semantic.embedder) if h.semantic is not None else ""
    return report(
        scenarios,
        ls,
        cfg,
        min_k=mk,
        model_spec=getattr(model, "spec", ""),
        target_precision=target_precision,
        embedder_id=emb_id,
        full=full,
    )


def report(
    scenarios: ScenarioSet,
    ls: LevelScores,
    cfg: HierarchyConfig,
    min_k: np.ndarray | None = None,
    model_spec: str = "",
    target_precision: float | None = None,
    embedder_id: str = "",
    full: LevelScores | None = None,
) -> EvalReport:
    """The rows of :func:`evaluate` from scores already computed for ``scenarios.samples``
    (``embedder_id``: the semantic level's embedder, recorded in the notes). ``full``: the same
    scores with every document embedded (no shortlist), which the baselines and the calibrated
    rows read; ``ls`` is what the shipped defaults compute, for the defaults' row."""
    samples = list(scenarios.samples)
    shipped, ls = ls, full or ls
    y = np.array([s.label for s in samples])
    calib = np.array([s.split == "calib" for s in samples])
    test = ~calib

    def sub(mask: np.ndarray) -> LevelScores:
        idx = np.flatnonzero(mask)
        sem = ls.semantic
        if sem is not None:
            sem = sem.subset(idx)
        rea = [ls.reasoning[i] for i in idx] if ls.reasoning is not None else None
        return LevelScores(ls.token[idx], [ls.token_results[i] for i in idx], sem, rea)

    preds: dict[str, np.ndarray] = {}
    thresholds: dict[str, Any] = {}
    levels = cfg.levels
    # Calibration pools the scenarios, so contaminated samples outnumber clean ones; balanced
    # weights keep "flag everything" from looking good (the test sets are 1:1 per scenario).
    wc = balanced_weights(y[calib])
    c_tok = calibrate(sub(calib), y[calib], levels=("token",), target_precision=target_precision, sample_weight=wc)
    preds["13-gram"] = ls.level_decision("token", c_tok.thresholds)
    thresholds["13-gram"] = {"token": c_tok.thresholds.token}
    if ls.semantic is not None:
        c_sem = calibrate(sub(calib), y[calib], levels=("semantic",), target_precision=target_precision, rules=("sim",), sample_weight=wc)
        preds["embed-sim"] = ls.level_decision("semantic", c_sem.thresholds)
        thresholds["embed-sim"] = {"cosine": c_sem.thresholds.semantic}
    if min_k is not None:
        t = _threshold_1d(min_k[calib], y[calib])
        preds["min-k%"] = min_k >= t
        thresholds["min-k%"] = {"min_k": t, "model": model_spec}
    paper = Thresholds(token=0.5, semantic=0.75, reasoning=0.6, semantic_rule="paper")
    preds["cascade (paper τ)"] = ls.decisions(paper, levels)[0]
    thresholds["cascade (paper τ)"] = paper.to_dict()
    defaults = cfg.thresholds
    preds["cascade (defaults)"] = shipped.decisions(defaults, levels)[0]
    thresholds["cascade (defaults)"] = defaults.to_dict()
    c_all = calibrate(sub(calib), y[calib], levels=levels, target_precision=target_precision, sample_weight=wc)
    preds["cascade"] = ls.decisions(c_all.thresholds, levels)[0]
    thresholds["cascade"] = c_all.thresholds.to_dict() | {"validation_f1": c_all.validation.f1}
    rows = []
    scen = np.array([s.scenario for s in samples])
    for method in METHODS:
        if method not in preds:
            continue
        for sc in SCENARIOS:
            mask = test & ((scen == sc) | (y == 0))
            n_pos = int((test & (scen == sc)).sum())
            if n_pos == 0:
                continue
            rows.append(Row(method, sc, metrics(preds[method][mask], y[mask]), n_pos, int((test & (y == 0)).sum())))
    notes = dict(scenarios.notes) | ({"embedder": embedder_id} if embedder_id else {})
    return EvalReport(scenarios.benchmark, scenarios.seed, tuple(rows), thresholds, notes)


def thresholds_for(report: EvalReport) -> Thresholds:
    """The calibrated cascade thresholds of a report."""
    t = dict(report.thresholds["cascade"])
    t.pop("validation_f1", None)
    return Thresholds(**t)
