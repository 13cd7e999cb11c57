"""The semantic level's per-candidate scores (:class:`SemanticScores`) and each rule's decision over them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from contam.data import Item
from contam.scan.combiner import FEATURES, NEAR_COPY_COSINE, OUTLIER_COSINE, OUTLIER_Z, clear_outliers, near_copies
from contam.scan.combiner import learned_scores as combined_scores

#: ``paper`` is the paper's conjunction under its own name.
_ALIAS = {"paper": "sim+cluster+anomaly"}


@dataclass
class SemanticScores:
    """Per-candidate arrays of one :meth:`SemanticScanner.score` call (row i = candidate i)."""

    sim: np.ndarray  # (n,) cosine to the nearest benchmark item
    nearest: np.ndarray  # (n, top_k) benchmark indices, best first
    nearest_sim: np.ndarray  # (n, top_k)
    cluster: np.ndarray  # (n,) DBSCAN label, -1 = noise
    member: np.ndarray  # (n,) bool, in a cluster holding a benchmark item
    anomaly: np.ndarray  # (n,) robust squared Mahalanobis distance of the profile
    anomalous: np.ndarray  # (n,) bool, outlier toward the benchmark
    overlap: np.ndarray | None = None  # (n,) specifics shared with the nearest item (NaN: not computed)
    words: np.ndarray | None = None  # (n,) word-set Jaccard with the nearest item (NaN: not computed)
    rescue_threshold: float = 2.0
    rescue_overlap: float = 2.0
    rescue_words: float = 2.0
    #: DBSCAN cluster id -> (benchmark item indices, candidate row indices) for clusters holding both
    clusters: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)
    #: ``learned`` rule: (n, len(FEATURES)) combiner inputs and (n,) probability of contamination
    features: np.ndarray | None = None
    probability: np.ndarray | None = None
    #: detected language per row ("en" when not routed), and whether the row went to the multilingual embedder
    languages: list[str] = field(default_factory=list)
    multilingual: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    #: (n,) probability from the shortlist (:mod:`contam.scan.shortlist`), NaN where it did not judge;
    #: below :data:`contam.scan.shortlist.CUT` the row was not embedded and its cosine, features and probability are NaN
    shortlist: np.ndarray | None = None
    #: (n,) quoted term definitions removed before comparing (:mod:`contam.scan.definitions`); None: none anywhere
    definitions: np.ndarray | None = None
    #: (n,) ``learned`` rule: the nearest item's distinctive options, where the document writes them all
    #: (:mod:`contam.scan.choices`; 0 elsewhere): flagged whatever the probability
    options_kept: np.ndarray | None = None

    def _english(self) -> np.ndarray:
        return ~self.multilingual if len(self.multilingual) else np.ones(len(self.sim), dtype=bool)

    @cached_property
    def near_copy(self) -> np.ndarray | None:
        """(n,) ``learned`` rule: near copies (:func:`contam.scan.combiner.near_copies`), flagged
        whatever the probability; None without the combiner's features."""
        return None if self.features is None else near_copies(self.features, self._english())

    @cached_property
    def clear_outlier(self) -> np.ndarray | None:
        """(n,) ``learned`` rule: clear outliers on the multilingual route
        (:func:`contam.scan.combiner.clear_outliers`), flagged whatever the probability."""
        return None if self.features is None else clear_outliers(self.features, self._english())

    def learned_scores(self) -> np.ndarray:
        """(n,) what the ``learned`` rule thresholds (:func:`contam.scan.combiner.learned_scores`)."""
        if self.probability is None:
            raise ValueError("the learned rule needs scores computed with rule='learned' (no probabilities here)")
        return combined_scores(self.probability, self.features, self._english(), self.options_kept)

    def subset(self, idx: np.ndarray) -> SemanticScores:
        """The scores of rows ``idx`` (cluster summary dropped: it belongs to the whole call)."""
        arrays = {k: getattr(self, k)[idx] for k in ("sim", "nearest", "nearest_sim", "cluster", "member", "anomaly", "anomalous")}
        ov = self.overlap[idx] if self.overlap is not None else None
        wo = self.words[idx] if self.words is not None else None
        return SemanticScores(
            **arrays,
            overlap=ov,
            words=wo,
            features=self.features[idx] if self.features is not None else None,
            probability=self.probability[idx] if self.probability is not None else None,
            languages=[self.languages[int(i)] for i in np.arange(len(self.sim))[idx]] if self.languages else [],
            multilingual=self.multilingual[idx] if len(self.multilingual) else self.multilingual,
            shortlist=self.shortlist[idx] if self.shortlist is not None else None,
            definitions=self.definitions[idx] if self.definitions is not None else None,
            options_kept=self.options_kept[idx] if self.options_kept is not None else None,
            rescue_threshold=self.rescue_threshold,
            rescue_overlap=self.rescue_overlap,
            rescue_words=self.rescue_words,
        )

    def flagged(self, threshold: float, rule: str) -> np.ndarray:
        """Boolean decision of ``rule`` at cosine threshold ``threshold``."""
        rule = _ALIAS.get(rule, rule)
        if rule == "learned":
            return self.learned_scores() >= threshold
        if rule == "nn":
            out = self.sim >= threshold
            if self.overlap is not None and self.words is not None:
                keeps = (np.nan_to_num(self.overlap, nan=-1.0) >= self.rescue_overlap) | (
                    np.nan_to_num(self.words, nan=-1.0) >= self.rescue_words
                )
                out |= (self.sim >= self.rescue_threshold) & keeps
            return out
        out = self.sim > threshold
        if "cluster" in rule:
            out &= self.member
        if "anomaly" in rule:
            out &= self.anomalous
        return out

    def decision(self, i: int, threshold: float, rule: str) -> tuple[float, float, str]:
        """(score, threshold it passed, the clause that fired when not the rule's main one) of flagged row ``i``."""
        rule = _ALIAS.get(rule, rule)
        if rule == "learned" and self.probability is not None:
            p = float(self.probability[i])
            if not p >= threshold and self.options_kept is not None and self.options_kept[i] > 0:
                why = f"options kept: the document writes all {int(self.options_kept[i])} distinctive options of the item word for word; learned p {p:.3f} < {threshold}"
                return 1.0, 1.0, why
            if not p >= threshold and self.near_copy is not None and self.near_copy[i]:
                why = f"near copy: cosine {float(self.sim[i]):.3f} >= {NEAR_COPY_COSINE}, no number or name against the item; learned p {p:.3f} < {threshold}"
                return float(self.sim[i]), NEAR_COPY_COSINE, why
            if not p >= threshold and self.clear_outlier is not None and self.clear_outlier[i] and self.features is not None:
                z = float(self.features[i, 1])
                why = (
                    f"clear outlier: z {z:.2f} >= {OUTLIER_Z} against the benchmark at cosine {float(self.features[i, 0]):.3f} >= {OUTLIER_COSINE}, "
                    f"no number or name against the item; learned p {p:.3f} < {threshold}"
                )
                return 1.0, 1.0, why  # as learned_scores rates it: passes any threshold (z and cosine in the text)
            return p, threshold, ""
        score = float(self.sim[i])
        if rule == "nn" and score < threshold:  # the second stage: the threshold it passed is the shortlist's
            why = (
                f"nn second stage: cosine >= {self.rescue_threshold} and specifics >= {self.rescue_overlap} or words >= {self.rescue_words}"
            )
            return score, self.rescue_threshold, why
        return score, threshold, ""

    def cluster_summary(
        self, items: Sequence[Item], doc_ids: Sequence[str] | None = None, min_candidates: int = 2
    ) -> list[dict[str, object]]:
        """Benchmark-level signal: each DBSCAN cluster where ``min_candidates`` or more candidates
        gather around benchmark items ("k candidates form a cluster around item X"), largest first."""
        ranked: list[tuple[int, dict[str, object]]] = []  # (number of candidates, row)
        for cid, (its, cands) in self.clusters.items():
            if len(cands) >= min_candidates:
                row: dict[str, object] = {
                    "cluster": int(cid),
                    "candidates": len(cands),
                    "items": [items[j].id for j in its[:10]],
                    "n_items": len(its),
                }
                if doc_ids is not None:
                    row["documents"] = [doc_ids[r] for r in cands[:10]]
                ranked.append((len(cands), row))
        return [row for _, row in sorted(ranked, key=lambda t: -t[0])]


def semantic_score_dict(s: SemanticScores, i: int) -> dict[str, float]:
    """The scores of row ``i`` as a flat dict (what was not computed for it is left out)."""
    out = {
        "cosine": round(float(s.sim[i]), 6),
        "cluster": float(s.cluster[i]),
        "cluster_member": float(s.member[i]),
        "anomaly": round(float(s.anomaly[i]), 4),
        "anomalous": float(s.anomalous[i]),
    }
    if s.overlap is not None and s.overlap[i] == s.overlap[i]:
        out["specifics_overlap"] = round(float(s.overlap[i]), 6)
    if s.words is not None and s.words[i] == s.words[i]:
        out["word_overlap"] = round(float(s.words[i]), 6)
    if s.probability is not None and s.features is not None:
        out["probability"] = round(float(s.probability[i]), 6)
        out.update({f"f_{k}": round(float(v), 6) for k, v in zip(FEATURES, s.features[i], strict=True)})
        out["multilingual"] = float(bool(s.multilingual[i])) if len(s.multilingual) else 0.0
    if s.shortlist is not None and s.shortlist[i] == s.shortlist[i]:
        out["shortlist_probability"] = round(float(s.shortlist[i]), 6)
    if s.definitions is not None and s.definitions[i]:
        out["definitions_removed"] = float(s.definitions[i])
    if s.near_copy is not None and s.near_copy[i]:
        out["near_copy"] = 1.0
    if s.clear_outlier is not None and s.clear_outlier[i]:
        out["clear_outlier"] = 1.0
    if s.options_kept is not None and s.options_kept[i]:
        out["options_kept"] = float(s.options_kept[i])
    # A row the shortlist dropped was never embedded: no cosine, features or probability to show.
    return {k: v for k, v in out.items() if v == v}


def _profile_features(profiles: np.ndarray) -> np.ndarray:
    """Top-k cosines plus the gaps that make a single match stand out (top-1 minus the rest)."""
    if profiles.shape[1] == 0:
        return np.zeros((len(profiles), 1))
    p = profiles.astype(np.float64)
    gap1 = p[:, :1] - p[:, 1:2] if p.shape[1] > 1 else np.zeros((len(p), 1))
    gapm = p[:, :1] - p[:, 1:].mean(axis=1, keepdims=True) if p.shape[1] > 1 else np.zeros((len(p), 1))
    return np.hstack([p, gap1, gapm])
