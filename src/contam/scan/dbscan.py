"""DBSCAN over unit-norm embeddings with neighbourhoods from faiss range searches (memory grows with
the number of close pairs, never with N x M): the semantic level's cluster signal (paper 001, Table 3)."""

from __future__ import annotations

import numpy as np


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
