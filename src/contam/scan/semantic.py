"""Level 2 of the cascade: semantic similarity, benchmark clusters and a distributional anomaly.

Paper 001, Section 3.2 (Level 2), Section 3.3 and Table 3. Three signals over sentence embeddings:

1. **similarity** — cosine to the nearest benchmark item (eq. 3), through an exact faiss
   inner-product index (rows are unit-norm, so inner product = cosine);
2. **cluster membership** — DBSCAN (cosine distance, ``eps`` 0.15, ``min_samples`` 5) over the
   benchmark and the candidates together; a candidate is a member when its cluster holds at
   least one benchmark item. The ``eps``-neighbourhoods come from faiss range searches in
   batches, so memory grows with the number of close pairs, never with N×M;
3. **distributional anomaly** — a robust Gaussian (scikit-learn ``MinCovDet``) fitted on the
   *similarity profiles* (sorted top-k cosines to the benchmark, PCA-reduced) of clean reference
   text; a candidate is anomalous when its profile is an outlier (robust Mahalanobis distance
   above the χ² quantile) *toward* the benchmark (its top cosine above the reference median).
   Without reference text the benchmark's own leave-one-out profiles stand in for clean
   same-genre data.

The default rule, ``nn``, decides per candidate from its nearest benchmark items alone, so a
lone leaked sample is flagged: cosine at or above ``threshold`` flags; a cosine between
``rescue_threshold`` and ``threshold`` flags when the candidate also keeps the item's specifics
(its numbers, quoted literals and names: :func:`specifics_overlap`) or most of its words
(:func:`word_overlap`), which a paraphrase keeps and a same-genre problem does not. Both thresholds are calibrated per embedder on real GPT-4
paraphrases (DCQ, :mod:`contam.scan.dcq`) and shipped in :data:`EMBEDDER_DEFAULTS`. The
cluster and anomaly signals stay as evidence and as a benchmark-level summary
(:meth:`SemanticScores.cluster_summary`); they never veto a strong nearest-neighbour match.

The paper's rule flags ``sim > τ2 AND cluster AND anomaly`` (τ2 = 0.75): ``rule="paper"``. Any
other part or conjunction can be picked (``sim``, ``sim+cluster`` as in Algorithm 1,
``sim+anomaly``, ``sim+cluster+anomaly``). Each benchmark item is indexed twice, by its question
and by its whole text (question + solution), so a question-only copy and a question-plus-answer
copy both meet their own view of the item.

>>> from contam.data import load_benchmark                     # doctest: +SKIP
>>> items = load_benchmark("gsm8k")[:200]                       # doctest: +SKIP
>>> sem = SemanticScanner(SemanticConfig(rule="sim")).fit(items)  # doctest: +SKIP
>>> s = sem.score([items[3].question])                          # doctest: +SKIP
>>> int(s.nearest[0]), s.sim[0] > 0.75                          # doctest: +SKIP
(3, True)
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from contam.constraints import Constraints, Interval, Options, validate
from contam.data import Document, Item
from contam.errors import ConfigError
from contam.models.base import Embedder
from contam.scan.flags import DocResult, Evidence, Flag

RULES = ("nn", "paper", "sim", "sim+cluster", "sim+anomaly", "sim+cluster+anomaly")
#: ``paper`` is the paper's conjunction under its own name.
_ALIAS = {"paper": "sim+cluster+anomaly"}


@dataclass(frozen=True)
class SemanticDefaults:
    """Default decision of the ``nn`` rule for one embedder: cosine ``threshold`` flags alone;
    ``rescue_threshold`` <= cosine < ``threshold`` flags with :func:`specifics_overlap` >= ``rescue_overlap``
    or :func:`word_overlap` >= ``rescue_words``."""

    threshold: float
    rescue_threshold: float
    rescue_overlap: float
    rescue_words: float


#: Calibrated on the ``calib`` halves of the DCQ tasks (real GPT-4 perturbations of GSM8K and
#: HumanEval against GSM8K test / other HumanEval tasks, :mod:`contam.scan.dcq`) for the best F1
#: of both together, measured on the disjoint ``test`` halves (docs/semantic.md, bench/semantic_dcq.py).
#: Keys are embedder specs; an embedder not listed gets MiniLM's values (calibrate your own
#: with ``contam eval-detectors --embedder SPEC`` and pass ``--thresholds``).
EMBEDDER_DEFAULTS: dict[str, SemanticDefaults] = {
    "minilm": SemanticDefaults(threshold=0.86, rescue_threshold=0.6, rescue_overlap=0.8, rescue_words=0.5),
    "static": SemanticDefaults(threshold=0.99, rescue_threshold=0.66, rescue_overlap=0.8, rescue_words=0.45),
    # Google USE multilingual v3 (``--embedder use-multilingual``): the same calibration, run with
    # ``python bench/semantic_dcq.py --embedders use-multilingual`` (bench/RESULTS.md, issue 15).
    # Calibrated on English paraphrases only: no real translated contamination was available.
    "use-multilingual": SemanticDefaults(threshold=0.86, rescue_threshold=0.57, rescue_overlap=0.7, rescue_words=0.6),
}


def defaults_for(embedder: object | None) -> SemanticDefaults:
    """The calibrated ``nn`` defaults of ``embedder`` (by its ``spec``; MiniLM's for ``None`` or unknown specs)."""
    spec = str(getattr(embedder, "spec", "minilm")) if embedder is not None else "minilm"
    return EMBEDDER_DEFAULTS.get(spec, EMBEDDER_DEFAULTS["minilm"])


_MINILM = EMBEDDER_DEFAULTS["minilm"]


@dataclass(frozen=True)
class SemanticConfig:
    """Level-2 settings. The decision defaults are the ``nn`` rule with MiniLM's calibrated
    thresholds (:data:`EMBEDDER_DEFAULTS`); paper 001 §3.3 / Table 3 is ``rule="paper"``,
    ``threshold=0.75`` (DBSCAN eps 0.15, min_samples 5 are used by both, as evidence under ``nn``).

    ``max_chars`` cuts texts before embedding (the first ~128 tokens say what a sample is and
    keep CPU time bounded); ``profile_k`` / ``pca_components`` / ``anomaly_quantile`` shape the
    anomaly model; ``max_neighbors`` caps the neighbours kept per point in the DBSCAN graph
    (counts stay exact, so core points are exact; only a pathological blob of thousands of
    duplicates could lose an edge).

    >>> SemanticConfig().rule, SemanticConfig(rule="paper", threshold=0.75).threshold
    ('nn', 0.75)
    """

    threshold: float = _MINILM.threshold
    rule: str = "nn"
    rescue_threshold: float = _MINILM.rescue_threshold
    rescue_overlap: float = _MINILM.rescue_overlap
    rescue_words: float = _MINILM.rescue_words
    eps: float = 0.15
    min_samples: int = 5
    profile_k: int = 10
    pca_components: int = 3
    anomaly_quantile: float = 0.975
    top_k: int = 5
    max_chars: int = 512
    batch_size: int = 16
    max_neighbors: int = 256
    search_batch: int = 4096
    seed: int = 0

    # Cosine thresholds may be calibrated up to 2.0 (contam.scan.calibrate.OFF: the level is off);
    # the rescue overlaps are shares, and one above 1 switches its rescue off.
    _constraints: ClassVar[Constraints] = {
        "threshold": Interval(float, -1, 2),
        "rule": Options(*RULES),
        "rescue_threshold": Interval(float, -1, 2),
        "rescue_overlap": Interval(float, 0, None),
        "rescue_words": Interval(float, 0, None),
        "eps": Interval(float, 0, 2, closed="neither"),  # DBSCAN eps on cosine distance
        "min_samples": Interval(int, 1, None),
        "profile_k": Interval(int, 1, None),
        "pca_components": Interval(int, 1, None),
        "anomaly_quantile": Interval(float, 0, 1),
        "top_k": Interval(int, 1, None),
        "max_chars": Interval(int, 1, None),
        "batch_size": Interval(int, 1, None),
        "max_neighbors": Interval(int, 1, None),
        "search_batch": Interval(int, 1, None),
        "seed": Interval(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)

    @classmethod
    def for_embedder(cls, embedder: object | None, **fields: object) -> SemanticConfig:
        """``fields`` over the calibrated ``nn`` defaults of ``embedder``."""
        d = defaults_for(embedder)
        base = {
            "threshold": d.threshold,
            "rescue_threshold": d.rescue_threshold,
            "rescue_overlap": d.rescue_overlap,
            "rescue_words": d.rescue_words,
        }
        return cls(**{**base, **fields})


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

    def subset(self, idx: np.ndarray) -> SemanticScores:
        """The scores of rows ``idx`` (cluster summary dropped: it belongs to the whole call)."""
        arrays = {k: getattr(self, k)[idx] for k in ("sim", "nearest", "nearest_sim", "cluster", "member", "anomaly", "anomalous")}
        ov = self.overlap[idx] if self.overlap is not None else None
        wo = self.words[idx] if self.words is not None else None
        return SemanticScores(
            **arrays,
            overlap=ov,
            words=wo,
            rescue_threshold=self.rescue_threshold,
            rescue_overlap=self.rescue_overlap,
            rescue_words=self.rescue_words,
        )

    def flagged(self, threshold: float, rule: str) -> np.ndarray:
        """Boolean decision of ``rule`` at cosine threshold ``threshold``."""
        rule = _ALIAS.get(rule, rule)
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


_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_QUOTED = re.compile(r"'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")


def specifics(text: str) -> frozenset[str]:
    """What a paraphrase keeps and a different problem of the same genre rarely shares: the
    numbers written in ``text`` (thousands separators dropped), its quoted literals and the
    capitalised names inside sentences (people, places, brands).

    >>> sorted(specifics("Natalia sold 48 clips in April and 1,200 in 'May'."))  # a sentence's first word is not taken as a name
    ['1200', '48', 'April', 'May', 'may']
    """
    out = {m.group().replace(",", "").rstrip(".") for m in _NUMBER.finditer(text)}
    out.update((m.group(1) or m.group(2)).strip().lower() for m in _QUOTED.finditer(text))
    out.update(m.group() for m in _NAME.finditer(text))
    out.discard("")
    return frozenset(out)


def word_overlap(candidate: str, views: Sequence[str]) -> float:
    """Jaccard overlap of the normalised word sets of ``candidate`` and the closest of ``views``
    (a word-level paraphrase keeps most words; another problem of the genre shares few).

    >>> word_overlap("Tom has three red apples", ["Tom has three green apples"])
    0.666667
    """
    from contam.data.normalize import words

    c = set(words(candidate))
    best = 0.0
    for v in views:
        s = set(words(v))
        if c | s:
            best = max(best, len(c & s) / len(c | s))
    return round(best, 6)


def specifics_overlap(candidate: str, views: Sequence[str], least: int = 2) -> float:
    """Jaccard overlap of :func:`specifics` between ``candidate`` and the closest of an item's
    ``views`` (question, whole text); NaN when fewer than ``least`` specifics are in play (too
    few to tell a paraphrase from a coincidence).

    >>> specifics_overlap("A class of 40 pupils: 80% own dogs, 25% of those parakeets.",
    ...                   ["In a class of 40 students, 80% have puppies and 25% of them parrots."])
    1.0
    """
    c = specifics(candidate)
    best = float("nan")
    for v in views:
        s = specifics(v)
        union = len(c | s)
        if union >= least:
            j = len(c & s) / union
            best = j if best != best or j > best else best  # NaN-safe max
    return best


def embedder_identity(embedder: Embedder) -> str:
    """What names ``embedder``'s vectors (its weights' digest when it has one): the embedding
    cache's key, and what calibrated semantic thresholds hold for."""
    return str(getattr(embedder, "identity", getattr(embedder, "spec", "embedder")))


def embed_texts(embedder: Embedder, texts: Sequence[str], max_chars: int, batch_size: int, cache: bool = True) -> np.ndarray:
    """Unit-norm float32 embeddings of ``texts`` cut to ``max_chars``, in batches with a progress
    bar; vectors already in the persistent cache (:mod:`contam.scan.embcache`) are not recomputed."""
    from contam.progress import track
    from contam.scan.embcache import EmbeddingCache, default_path

    cut = [t[:max_chars] if t else " " for t in texts]
    path = default_path() if cache and getattr(embedder, "cacheable", True) else None
    store = EmbeddingCache(path) if path is not None else None
    ident = embedder_identity(embedder)
    rows = store.get(ident, max_chars, cut) if store is not None else [None] * len(cut)
    todo = [i for i, r in enumerate(rows) if r is None]
    dim = int(getattr(embedder, "dim", 0)) or (len(next(r for r in rows if r is not None)) if len(todo) < len(rows) else 0)
    out = np.zeros((len(cut), dim), dtype=np.float32) if dim else None
    if todo:
        step = max(batch_size * 8, 256)
        # Each distinct text once (corpora repeat samples), in first-seen order: without repeats
        # the chunks and batches are the same as before, and so are the vectors.
        first: dict[str, int] = {}
        for i in todo:
            first.setdefault(cut[i], len(first))
        missing = list(first)
        chunks = range(0, len(missing), step)
        if len(missing) > step:
            chunks = track(chunks, "embedding", total=-(-len(missing) // step))
        parts = []
        for s in chunks:
            part = embedder.embed(missing[s : s + step], batch_size=batch_size)
            parts.append(part)
            if store is not None:
                store.put(ident, max_chars, missing[s : s + step], part)
        new = np.vstack(parts)
        if out is None:
            out = np.zeros((len(cut), new.shape[1]), dtype=np.float32)
        row = {t: k for k, t in enumerate(missing)}
        out[todo] = new[[row[cut[i]] for i in todo]]
    assert out is not None
    for i, r in enumerate(rows):
        if r is not None:
            out[i] = r
    return np.ascontiguousarray(out, dtype=np.float32)


def radius_dbscan(x: np.ndarray, eps: float, min_samples: int, max_neighbors: int = 256, batch: int = 4096) -> np.ndarray:
    """DBSCAN labels with cosine distance over unit-norm rows, neighbourhoods from faiss range search.

    Same clusters as ``sklearn.cluster.DBSCAN(eps, min_samples, metric="cosine")``: a point is
    core with ``min_samples`` points (itself included) within ``eps``; clusters are connected
    components of core points joined within ``eps``; a border point joins the cluster of its
    closest core neighbour; the rest is noise (-1). Cluster ids are numbered by first point.

    >>> v = np.eye(3, dtype=np.float32)[[0, 0, 0, 1, 2]]
    >>> radius_dbscan(v, 0.15, 3).tolist()
    [0, 0, 0, -1, -1]
    """
    import faiss
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    counts = np.zeros(n, dtype=np.int64)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    sims: list[np.ndarray] = []
    radius = float(1.0 - eps) - 1e-6  # faiss keeps inner products strictly above the radius
    for s in range(0, n, batch):
        lims, d, ids = index.range_search(x[s : s + batch], radius)
        for i in range(len(lims) - 1):
            a, b = lims[i], lims[i + 1]
            counts[s + i] = b - a
            nb, nd = ids[a:b], d[a:b]
            if len(nb) > max_neighbors:
                keep = np.argpartition(-nd, max_neighbors - 1)[:max_neighbors]
                nb, nd = nb[keep], nd[keep]
            rows.append(np.full(len(nb), s + i, dtype=np.int64))
            cols.append(nb.astype(np.int64))
            sims.append(nd.astype(np.float32))
    r, c, w = np.concatenate(rows), np.concatenate(cols), np.concatenate(sims)
    core = counts >= min_samples
    labels = np.full(n, -1, dtype=np.int64)
    cc = core[r] & core[c]
    if core.any():
        g = coo_matrix((np.ones(int(cc.sum()), dtype=np.int8), (r[cc], c[cc])), shape=(n, n)).tocsr()
        _, comp = connected_components(g, directed=False)
        core_idx = np.flatnonzero(core)
        # Renumber components by their first core point so ids are stable and dense.
        order = {int(k): j for j, k in enumerate(dict.fromkeys(comp[core_idx].tolist()))}
        labels[core_idx] = [order[int(k)] for k in comp[core_idx]]
        # Border points: closest core neighbour.
        border = ~core[r] & core[c] & (r != c)
        if border.any():
            br, bc, bw = r[border], c[border], w[border]
            best = np.lexsort((-bw, br))
            first = np.ones(len(best), dtype=bool)
            first[1:] = br[best][1:] != br[best][:-1]
            pick = best[first]
            labels[br[pick]] = labels[bc[pick]]
    return labels


class SemanticScanner:
    """Level 2: ``fit(items)`` embeds and indexes the benchmark, ``score(texts)`` / ``scan(docs)`` judge candidates.

    >>> SemanticScanner(SemanticConfig(threshold=0.8)).config.threshold
    0.8
    """

    def __init__(self, config: SemanticConfig | None = None, embedder: Embedder | None = None) -> None:
        self.config = config or SemanticConfig.for_embedder(embedder)
        self._embedder = embedder
        self.items: list[Item] = []

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from contam.models.embed import load_embedder

            self._embedder = load_embedder("minilm")
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings of ``texts``; a text equal (after the ``max_chars`` cut) to a view of
        a fitted benchmark item reuses that view's vector instead of running the model again
        (verbatim copies are the commonest contamination)."""
        known: dict[str, int] = getattr(self, "_known", {})
        if not known:
            return embed_texts(self.embedder, texts, self.config.max_chars, self.config.batch_size)
        mc = self.config.max_chars
        hit = [known.get(t[:mc] if t else " ", -1) for t in texts]
        rest = [i for i, h in enumerate(hit) if h < 0]
        if len(rest) == len(texts):
            return embed_texts(self.embedder, texts, mc, self.config.batch_size)
        views = self.index.reconstruct_n(0, self.index.ntotal)
        out = np.empty((len(texts), views.shape[1]), dtype=np.float32)
        for i, h in enumerate(hit):
            if h >= 0:
                out[i] = views[h]
        if rest:
            out[rest] = embed_texts(self.embedder, [texts[i] for i in rest], mc, self.config.batch_size)
        return out

    def fit(
        self, items: Sequence[Item], reference: Sequence[str] | None = None, item_embeddings: np.ndarray | None = None
    ) -> SemanticScanner:
        """Embed and index ``items`` (whole text, and the question alone where it differs); fit the
        anomaly model on ``reference`` texts (clean, same genre) or, without them, on the
        benchmark's leave-one-out similarity profiles."""
        import faiss

        if not items:
            raise ConfigError("the semantic level needs at least one benchmark item")
        cfg = self.config
        self.items = list(items)
        self._known = {}
        # Second view: the question alone, so a question-only copy meets its own view of the item.
        qi = [
            j for j, it in enumerate(self.items) if it.question and it.question.strip()[: cfg.max_chars] != it.text.strip()[: cfg.max_chars]
        ]
        qtexts = [self.items[j].question for j in qi]
        self.item_vecs = item_embeddings if item_embeddings is not None else self.embed([it.text for it in self.items])
        qvecs = self.embed(qtexts) if qi else np.zeros((0, self.item_vecs.shape[1]), dtype=np.float32)
        self._view_item = np.concatenate([np.arange(len(self.items)), np.asarray(qi, dtype=np.int64)]).astype(np.int64)
        self.index = faiss.IndexFlatIP(self.item_vecs.shape[1])
        self.index.add(np.ascontiguousarray(np.vstack([self.item_vecs, qvecs]), dtype=np.float32))
        view_texts = [it.text for it in self.items] + qtexts
        # Row of each view's text in the index, for :meth:`embed` to reuse (first view wins).
        for r in range(len(view_texts) - 1, -1, -1):
            t = view_texts[r]
            self._known[t[: cfg.max_chars] if t else " "] = r
        k = min(cfg.profile_k, len(self.items) - 1 if reference is None else len(self.items))
        if reference is None:
            d, _ = self._search(self.item_vecs, k + 1, exclude_self=True)
            profiles = d[:, :k]
        else:
            d, _ = self._search(self.embed(list(reference)), k)
            profiles = d
        self._fit_anomaly(profiles)
        return self

    def _search(self, x: np.ndarray, k: int, exclude_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` benchmark *items* per row of ``x`` (best view of each item), best first; with
        ``exclude_self`` row i is benchmark item i and never its own neighbour."""
        n = len(x)
        k = max(0, min(k, len(self.items) - (1 if exclude_self else 0)))
        d_out = np.zeros((n, k), dtype=np.float32)
        i_out = np.zeros((n, k), dtype=np.int64)
        if k == 0 or n == 0:
            return d_out, i_out
        rows = min(self.index.ntotal, 2 * k + 2)
        bs = self.config.search_batch
        for s in range(0, n, bs):
            d, ids = self.index.search(x[s : s + bs], rows)
            it = np.where(ids >= 0, self._view_item[np.maximum(ids, 0)], -1)
            dup = it < 0
            if exclude_self:
                dup |= it == np.arange(s, s + len(it))[:, None]
            for j in range(1, rows):  # a later view of an item already listed is a duplicate
                dup[:, j] |= (it[:, :j] == it[:, j : j + 1]).any(axis=1)
            # Stable order: kept entries first (still best first), duplicates last.
            order = np.argsort(dup, axis=1, kind="stable")[:, :k]
            d_out[s : s + bs] = np.take_along_axis(np.where(dup, -1.0, d), order, axis=1)
            i_out[s : s + bs] = np.take_along_axis(np.where(dup, 0, it), order, axis=1)
        return d_out, i_out

    def _fit_anomaly(self, profiles: np.ndarray) -> None:
        from scipy.stats import chi2
        from sklearn.covariance import MinCovDet
        from sklearn.decomposition import PCA

        cfg = self.config
        self._profile_k = profiles.shape[1]
        self._ref_median = float(np.median(profiles[:, 0])) if profiles.size else -1.0
        self._mcd = None
        self._cutoff = float("inf")
        if len(profiles) < max(10, cfg.pca_components + 2) or self._profile_k == 0:
            return  # too little reference data for a covariance: the anomaly part does not restrict
        feats = _profile_features(profiles)
        ncomp = max(1, min(cfg.pca_components, feats.shape[1], len(feats) - 1))
        self._pca = PCA(n_components=ncomp, random_state=cfg.seed).fit(feats)
        self._mcd = MinCovDet(random_state=cfg.seed).fit(self._pca.transform(feats))
        self._cutoff = float(chi2.ppf(cfg.anomaly_quantile, df=ncomp))

    def score(self, texts: Sequence[str], embeddings: np.ndarray | None = None) -> SemanticScores:
        """All signals for each text (embeddings may be passed to avoid re-embedding)."""
        cfg = self.config
        texts = list(texts)
        x = embeddings if embeddings is not None else self.embed(texts)
        n = len(x)
        k = max(cfg.top_k, self._profile_k)
        d, ids = self._search(x, k)
        labels = radius_dbscan(np.vstack([self.item_vecs, x]), cfg.eps, cfg.min_samples, cfg.max_neighbors, cfg.search_batch)
        nb = len(self.items)
        bench_clusters = np.unique(labels[:nb])
        bench_clusters = bench_clusters[bench_clusters >= 0]
        cand = labels[nb:]
        member = np.isin(cand, bench_clusters) & (cand >= 0)
        clusters: dict[int, tuple[list[int], list[int]]] = {}
        for r in np.flatnonzero(member):
            clusters.setdefault(int(cand[r]), ([], []))[1].append(int(r))
        for j in np.flatnonzero(np.isin(labels[:nb], list(clusters))):
            clusters[int(labels[j])][0].append(int(j))
        prof = d[:, : self._profile_k]
        if prof.shape[1] < self._profile_k:
            prof = np.pad(prof, ((0, 0), (0, self._profile_k - prof.shape[1])))
        top = d[:, 0] if d.shape[1] else np.zeros(n, dtype=np.float32)
        if self._mcd is not None and n:
            maha = self._mcd.mahalanobis(self._pca.transform(_profile_features(prof)))
            anomalous = (maha > self._cutoff) & (top > self._ref_median)
        else:
            maha = np.zeros(n)
            anomalous = top > self._ref_median
        # Second stage, on the shortlist only: specifics shared with the nearest item.
        overlap, wover = np.full(n, np.nan), np.full(n, np.nan)
        if cfg.rule == "nn" and texts:
            for r in np.flatnonzero((top >= cfg.rescue_threshold) & (top < cfg.threshold)):
                it = self.items[int(ids[r, 0])]
                overlap[r] = specifics_overlap(texts[r], (it.question, it.text))
                wover[r] = word_overlap(texts[r], (it.question, it.text))
        return SemanticScores(
            sim=top.astype(np.float64),
            nearest=ids[:, : cfg.top_k],
            nearest_sim=d[:, : cfg.top_k],
            cluster=cand,
            member=member,
            anomaly=np.asarray(maha, dtype=np.float64),
            anomalous=anomalous,
            overlap=overlap,
            words=wover,
            rescue_threshold=cfg.rescue_threshold,
            rescue_overlap=cfg.rescue_overlap,
            rescue_words=cfg.rescue_words,
            clusters=clusters,
        )

    def flag(self, doc_id: str, i: int, s: SemanticScores, threshold: float | None = None, rule: str | None = None, text: str = "") -> Flag:
        """The :class:`Flag` record of candidate ``i`` (document text ``text``) against its nearest benchmark item."""
        th = self.config.threshold if threshold is None else threshold
        j = int(s.nearest[i, 0])
        item = self.items[j]
        ev = [Evidence(kind="embedding", text=item.question[:200], weight=round(float(s.sim[i]), 6))]
        ov = float(s.overlap[i]) if s.overlap is not None else float("nan")
        if ov == ov:  # the second stage ran: list what both sides share, auditable by eye
            shared = sorted(specifics(item.text) & specifics(text)) if text else []
            ev.append(Evidence(kind="specifics", text=", ".join(shared)[:200], weight=round(ov, 6)))
        wo = float(s.words[i]) if s.words is not None else float("nan")
        if wo == wo:
            ev.append(Evidence(kind="words", text="word-set Jaccard with the nearest item", weight=round(wo, 6)))
        cl = int(s.cluster[i])
        size = len(s.clusters.get(cl, ((), ()))[1]) if cl >= 0 else 0
        ctext = (
            f"dbscan cluster {cl}: {size} candidate(s) around benchmark item(s) {', '.join(self.items[k].id for k in s.clusters[cl][0][:3])}"
            if size
            else f"dbscan cluster {cl}"
        )
        ev.append(Evidence(kind="cluster", text=ctext, weight=float(s.member[i])))
        ev.append(
            Evidence(
                kind="anomaly",
                text=f"robust Mahalanobis² {float(s.anomaly[i]):.2f} (cutoff {self._cutoff:.2f})",
                weight=float(s.anomalous[i]),
            )
        )
        cross = item.metadata.get("near_duplicate_in") if item.metadata else None
        if cross:
            ev.append(
                Evidence(kind="cross_split", text=f"benchmark item {item.id} has a near duplicate in another split: {cross}", weight=1.0)
            )
        return Flag(
            doc_id=doc_id,
            item_id=item.id,
            level="semantic",
            score=round(float(s.sim[i]), 6),
            threshold=th,
            benchmark=item.benchmark,
            scores=semantic_score_dict(s, i),
            evidence=tuple(ev),
        )

    def scan(self, docs: Sequence[Document]) -> Iterator[DocResult]:
        """Judge every document with the configured rule (DBSCAN needs all of them at once)."""
        cfg = self.config
        texts = [d.text for d in docs]
        s = self.score(texts)
        hit = s.flagged(cfg.threshold, cfg.rule)
        for i, doc in enumerate(docs):
            flags = (self.flag(doc.id, i, s, text=doc.text),) if hit[i] else ()
            yield DocResult(
                doc_id=doc.id,
                contaminated=bool(hit[i]),
                level="semantic" if hit[i] else "",
                flags=flags,
                source=doc.source,
                line=doc.line,
                scores=semantic_score_dict(s, i),
            )


def semantic_score_dict(s: SemanticScores, i: int) -> dict[str, float]:
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
    return out


def _profile_features(profiles: np.ndarray) -> np.ndarray:
    """Top-k cosines plus the gaps that make a single match stand out (top-1 minus the rest)."""
    if profiles.shape[1] == 0:
        return np.zeros((len(profiles), 1))
    p = profiles.astype(np.float64)
    gap1 = p[:, :1] - p[:, 1:2] if p.shape[1] > 1 else np.zeros((len(p), 1))
    gapm = p[:, :1] - p[:, 1:].mean(axis=1, keepdims=True) if p.shape[1] > 1 else np.zeros((len(p), 1))
    return np.hstack([p, gap1, gapm])
