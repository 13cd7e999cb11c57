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

The paper's rule flags ``sim > τ2 AND cluster AND anomaly`` (τ2 = 0.75); ``rule`` picks any part
or conjunction (``sim``, ``sim+cluster`` as in Algorithm 1, ``sim+anomaly``, ``sim+cluster+anomaly``).

>>> from contam.data import load_benchmark                     # doctest: +SKIP
>>> items = load_benchmark("gsm8k")[:200]                       # doctest: +SKIP
>>> sem = SemanticScanner(SemanticConfig(rule="sim")).fit(items)  # doctest: +SKIP
>>> s = sem.score([items[3].question])                          # doctest: +SKIP
>>> int(s.nearest[0]), s.sim[0] > 0.75                          # doctest: +SKIP
(3, True)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from contam.data import Document, Item
from contam.errors import ConfigError
from contam.models.base import Embedder
from contam.scan.flags import DocResult, Evidence, Flag

RULES = ("sim", "sim+cluster", "sim+anomaly", "sim+cluster+anomaly")


@dataclass(frozen=True)
class SemanticConfig:
    """Level-2 settings: paper 001 §3.3 and Table 3 (τ2 0.75 cosine, DBSCAN eps 0.15, min_samples 5).

    ``max_chars`` cuts texts before embedding (the first ~128 tokens say what a sample is and
    keep CPU time bounded); ``profile_k`` / ``pca_components`` / ``anomaly_quantile`` shape the
    anomaly model; ``max_neighbors`` caps the neighbours kept per point in the DBSCAN graph
    (counts stay exact, so core points are exact; only a pathological blob of thousands of
    duplicates could lose an edge).

    >>> SemanticConfig().threshold, SemanticConfig().rule
    (0.75, 'sim+cluster+anomaly')
    """

    threshold: float = 0.75
    rule: str = "sim+cluster+anomaly"
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

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ConfigError(f"semantic rule {self.rule!r} is not one of {', '.join(RULES)}")
        if not 0 < self.eps < 2:
            raise ConfigError(f"DBSCAN eps must be in (0, 2) for cosine distance, got {self.eps}")


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

    def flagged(self, threshold: float, rule: str) -> np.ndarray:
        """Boolean decision of ``rule`` at cosine threshold ``threshold``."""
        out = self.sim > threshold
        if "cluster" in rule:
            out &= self.member
        if "anomaly" in rule:
            out &= self.anomalous
        return out


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
        missing = [cut[i] for i in todo]
        chunks = range(0, len(missing), step)
        if len(missing) > step:
            chunks = track(chunks, "embedding", total=-(-len(missing) // step))  # type: ignore[assignment]
        parts = []
        for s in chunks:
            part = embedder.embed(missing[s : s + step], batch_size=batch_size)
            parts.append(part)
            if store is not None:
                store.put(ident, max_chars, missing[s : s + step], part)
        new = np.vstack(parts)
        if out is None:
            out = np.zeros((len(cut), new.shape[1]), dtype=np.float32)
        out[todo] = new
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
        self.config = config or SemanticConfig()
        self._embedder = embedder
        self.items: list[Item] = []

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from contam.models.embed import load_embedder

            self._embedder = load_embedder("minilm")
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return embed_texts(self.embedder, texts, self.config.max_chars, self.config.batch_size)

    def fit(self, items: Sequence[Item], reference: Sequence[str] | None = None, item_embeddings: np.ndarray | None = None) -> SemanticScanner:
        """Embed and index ``items``; fit the anomaly model on ``reference`` texts (clean, same
        genre) or, without them, on the benchmark's leave-one-out similarity profiles."""
        import faiss

        if not items:
            raise ConfigError("the semantic level needs at least one benchmark item")
        cfg = self.config
        self.items = list(items)
        self.item_vecs = item_embeddings if item_embeddings is not None else self.embed([it.text for it in self.items])
        self.index = faiss.IndexFlatIP(self.item_vecs.shape[1])
        self.index.add(self.item_vecs)
        k = min(cfg.profile_k, len(self.items) - 1 if reference is None else len(self.items))
        if reference is None:
            d, _ = self.index.search(self.item_vecs, k + 1)
            profiles = d[:, 1:]  # drop the item itself
        else:
            d, _ = self.index.search(self.embed(list(reference)), k)
            profiles = d
        self._fit_anomaly(profiles)
        return self

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
        """All three signals for each text (embeddings may be passed to avoid re-embedding)."""
        cfg = self.config
        x = embeddings if embeddings is not None else self.embed(list(texts))
        n = len(x)
        k = max(cfg.top_k, self._profile_k)
        k = min(k, len(self.items))
        d = np.zeros((n, k), dtype=np.float32)
        ids = np.zeros((n, k), dtype=np.int64)
        for s in range(0, n, cfg.search_batch):
            d[s : s + cfg.search_batch], ids[s : s + cfg.search_batch] = self.index.search(x[s : s + cfg.search_batch], k)
        labels = radius_dbscan(np.vstack([self.item_vecs, x]), cfg.eps, cfg.min_samples, cfg.max_neighbors, cfg.search_batch)
        bench_clusters = np.unique(labels[: len(self.items)])
        bench_clusters = bench_clusters[bench_clusters >= 0]
        cand = labels[len(self.items) :]
        member = np.isin(cand, bench_clusters) & (cand >= 0)
        prof = d[:, : self._profile_k]
        if prof.shape[1] < self._profile_k:
            prof = np.pad(prof, ((0, 0), (0, self._profile_k - prof.shape[1])))
        if self._mcd is not None and n:
            maha = self._mcd.mahalanobis(self._pca.transform(_profile_features(prof)))
            anomalous = (maha > self._cutoff) & (d[:, 0] > self._ref_median)
        else:
            maha = np.zeros(n)
            anomalous = d[:, 0] > self._ref_median
        return SemanticScores(
            sim=d[:, 0].astype(np.float64),
            nearest=ids[:, : cfg.top_k],
            nearest_sim=d[:, : cfg.top_k],
            cluster=cand,
            member=member,
            anomaly=np.asarray(maha, dtype=np.float64),
            anomalous=anomalous,
        )

    def flag(self, doc_id: str, i: int, s: SemanticScores, threshold: float | None = None, rule: str | None = None) -> Flag:
        """The :class:`Flag` record of candidate ``i`` against its nearest benchmark item."""
        th = self.config.threshold if threshold is None else threshold
        j = int(s.nearest[i, 0])
        item = self.items[j]
        return Flag(
            doc_id=doc_id,
            item_id=item.id,
            level="semantic",
            score=round(float(s.sim[i]), 6),
            threshold=th,
            benchmark=item.benchmark,
            scores=semantic_score_dict(s, i),
            evidence=(
                Evidence(kind="embedding", text=item.question[:200], weight=round(float(s.sim[i]), 6)),
                Evidence(kind="cluster", text=f"dbscan cluster {int(s.cluster[i])}", weight=float(s.member[i])),
                Evidence(kind="anomaly", text=f"robust Mahalanobis² {float(s.anomaly[i]):.2f} (cutoff {self._cutoff:.2f})", weight=float(s.anomalous[i])),
            ),
        )

    def scan(self, docs: Sequence[Document]) -> Iterator[DocResult]:
        """Judge every document with the configured rule (DBSCAN needs all of them at once)."""
        cfg = self.config
        s = self.score([d.text for d in docs])
        hit = s.flagged(cfg.threshold, cfg.rule)
        for i, doc in enumerate(docs):
            flags = (self.flag(doc.id, i, s),) if hit[i] else ()
            yield DocResult(
                doc_id=doc.id, contaminated=bool(hit[i]), level="semantic" if hit[i] else "", flags=flags,
                source=doc.source, line=doc.line, scores=semantic_score_dict(s, i),
            )


def semantic_score_dict(s: SemanticScores, i: int) -> dict[str, float]:
    return {
        "cosine": round(float(s.sim[i]), 6),
        "cluster": float(s.cluster[i]),
        "cluster_member": float(s.member[i]),
        "anomaly": round(float(s.anomaly[i]), 4),
        "anomalous": float(s.anomalous[i]),
    }


def _profile_features(profiles: np.ndarray) -> np.ndarray:
    """Top-k cosines plus the gaps that make a single match stand out (top-1 minus the rest)."""
    if profiles.shape[1] == 0:
        return np.zeros((len(profiles), 1))
    p = profiles.astype(np.float64)
    gap1 = p[:, :1] - p[:, 1:2] if p.shape[1] > 1 else np.zeros((len(p), 1))
    gapm = p[:, :1] - p[:, 1:].mean(axis=1, keepdims=True) if p.shape[1] > 1 else np.zeros((len(p), 1))
    return np.hstack([p, gap1, gapm])
