"""The semantic level's anomaly model: how far a candidate's similarity profile (its top-k cosines
to the benchmark and their gaps) lies from the profiles of ordinary text, as a robust Mahalanobis
distance after PCA (scikit-learn's ``PCA`` and ``MinCovDet``, paper 001's level 2).

The fit depends only on the benchmark's profiles and three settings, yet the minimum-covariance
search costs ~5 CPU-s for GSM8K's 1,319 items, on every scan. The fitted parameters (five float64
arrays) are therefore kept in the embedding cache's database, keyed by a hash of the profiles and
the settings, and read back on the next scan of the same benchmark; ``CONTAM_EMBED_CACHE=0`` turns
that off. Distances are computed from the parameters by one formula whether they were fitted now or
read back, so a cached fit gives the same numbers as a fresh one.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> prof = np.sort(rng.uniform(0.2, 0.5, size=(200, 5)), axis=1)[:, ::-1]
>>> model = ProfileOutlier(pca_components=3, quantile=0.975, seed=0).fit(prof, cache=False)
>>> far = model.distance(np.array([[0.95, 0.3, 0.29, 0.28, 0.27]]))
>>> bool(far[0] > model.cutoff), bool(np.median(model.distance(prof)) < model.cutoff)
(True, True)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from contam.scan.embcache import EmbeddingCache, default_path
from contam.scan.semantic_scores import _profile_features

_FORMAT = "profile-outlier-v1"
_PARAMS = ("pca_mean", "pca_components", "location", "precision", "cutoff")


@dataclass
class ProfileOutlier:
    """Robust Mahalanobis distance of similarity profiles; :meth:`fit` then :meth:`distance`.

    ``cutoff`` is the chi-squared ``quantile`` for the kept PCA components (``inf`` when there were
    too few profiles to fit a covariance: then nothing is an outlier)."""

    pca_components: int = 3
    quantile: float = 0.975
    seed: int = 0
    cutoff: float = float("inf")
    _params: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def fitted(self) -> bool:
        return self._params is not None

    def fit(self, profiles: np.ndarray, cache: bool = True) -> ProfileOutlier:
        """Fit on ``profiles`` (rows of best-first cosines), or read the same fit from the cache."""
        self._params, self.cutoff = None, float("inf")
        feats = _profile_features(profiles)
        if len(profiles) < max(10, self.pca_components + 2) or profiles.shape[1] == 0:
            return self  # too little data for a covariance: the anomaly part does not restrict
        key, path = self._key(feats), default_path() if cache else None
        store = EmbeddingCache(path) if path is not None else None
        params = store.get_arrays(key, _PARAMS) if store is not None else None
        if params is None:
            params = self._fit(feats)
            if store is not None:
                store.put_arrays(key, params)
        self._params = params
        self.cutoff = float(params["cutoff"][0])
        return self

    def distance(self, profiles: np.ndarray) -> np.ndarray:
        """Squared robust Mahalanobis distance of each profile (zeros before a fit)."""
        if self._params is None or not len(profiles):
            return np.zeros(len(profiles))
        p = self._params
        z = (_profile_features(profiles) - p["pca_mean"]) @ p["pca_components"].T - p["location"]
        return np.einsum("ij,jk,ik->i", z, p["precision"], z)

    def _key(self, feats: np.ndarray) -> str:
        h = hashlib.sha256(f"{_FORMAT}\x00{self.pca_components}\x00{self.quantile}\x00{self.seed}\x00{feats.shape}".encode())
        h.update(np.ascontiguousarray(feats, dtype=np.float64).tobytes())
        return "anomaly:" + h.hexdigest()

    def _fit(self, feats: np.ndarray) -> dict[str, np.ndarray]:
        from scipy.stats import chi2
        from sklearn.covariance import MinCovDet
        from sklearn.decomposition import PCA

        ncomp = max(1, min(self.pca_components, feats.shape[1], len(feats) - 1))
        pca = PCA(n_components=ncomp, random_state=self.seed).fit(feats)
        mcd = MinCovDet(random_state=self.seed).fit(pca.transform(feats))
        return {
            "pca_mean": np.asarray(pca.mean_, dtype=np.float64),
            "pca_components": np.asarray(pca.components_, dtype=np.float64),
            "location": np.asarray(mcd.location_, dtype=np.float64),
            "precision": np.asarray(mcd.get_precision(), dtype=np.float64),
            "cutoff": np.array([chi2.ppf(self.quantile, df=ncomp)], dtype=np.float64),
        }
