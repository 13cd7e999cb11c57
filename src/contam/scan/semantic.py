"""Level 2 of the cascade: semantic similarity, benchmark clusters and a distributional anomaly.

Paper 001, Section 3.2 (Level 2), Section 3.3 and Table 3. Three signals over sentence embeddings:

1. **similarity** — cosine to the nearest benchmark item (eq. 3), through an exact faiss
   inner-product index (rows are unit-norm, so inner product = cosine);
2. **cluster membership** — DBSCAN (cosine distance, ``eps`` 0.15, ``min_samples`` 5) over the
   benchmark and the candidates together; a candidate is a member when its cluster holds at
   least one benchmark item. The ``eps``-neighbourhoods come from faiss range searches in
   batches, so memory grows with the number of close pairs, never with N×M;
3. **distributional anomaly** — a robust Gaussian (scikit-learn ``MinCovDet``) fitted on the
   *similarity profiles* (sorted top-k cosines to the benchmark, PCA-reduced) of clean
   same-genre text; a candidate is anomalous when its profile is an outlier (robust Mahalanobis
   distance above the χ² quantile) *toward* the benchmark (its top cosine above the clean texts'
   median). Without clean text the benchmark's own leave-one-out profiles stand in for it.

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

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from contam.constraints import Constraints, Interval, Options, validate
from contam.data import Document, Item
from contam.data.language import covered_by_multilingual, detect_languages, sample_languages
from contam.errors import ConfigError
from contam.models.base import Embedder
from contam.scan.anomaly import ProfileOutlier
from contam.scan.choices import OptionIndex
from contam.scan.combiner import FEATURES, judge_near_ties, load_combiners, model_name, neighbourhood_features
from contam.scan.dbscan import radius_dbscan
from contam.scan.definitions import strip_definitions
from contam.scan.embedding import embed_texts, embedder_identity
from contam.scan.figures import strip_figures, without_figures
from contam.scan.flags import DocResult, Evidence, Flag
from contam.scan.preamble import strip_preamble, without_preamble
from contam.scan.semantic_defaults import EMBEDDER_DEFAULTS, SemanticDefaults, defaults_for
from contam.scan.semantic_scores import SemanticScores, semantic_score_dict
from contam.scan.shortlist import CUT as SHORTLIST_CUT
from contam.scan.shortlist import StaticShortlist
from contam.scan.space import EmbeddingSpace
from contam.scan.textmatch import looks_like_code, piece_overlap, specifics, specifics_overlap, word_overlap
from contam.scan.windows import MAX_WINDOWS

__all__ = [
    "EMBEDDER_DEFAULTS",
    "RULES",
    "SemanticConfig",
    "SemanticDefaults",
    "SemanticScanner",
    "SemanticScores",
    "defaults_for",
    "embed_texts",
    "embedder_identity",
    "radius_dbscan",
    "specifics",
    "specifics_overlap",
    "word_overlap",
]

RULES = ("learned", "nn", "paper", "sim", "sim+cluster", "sim+anomaly", "sim+cluster+anomaly")
#: Cluster ids of the multilingual space start here, apart from the primary space's.
_MULTI_CLUSTERS = 1_000_000
#: Probability at or above which the ``learned`` rule flags (each combiner's intercept is set for it).
LEARNED_THRESHOLD = 0.5


_MINILM = EMBEDDER_DEFAULTS["minilm"]


@dataclass(frozen=True)
class SemanticConfig:
    """Level-2 settings. The default decision is the ``learned`` rule (:mod:`contam.scan.combiner`:
    probability >= 0.5, documents routed by language to ``multilingual`` when not English); ``nn``
    keeps MiniLM's calibrated cosine thresholds (:data:`EMBEDDER_DEFAULTS`); paper 001 §3.3 /
    Table 3 is ``rule="paper"``, ``threshold=0.75`` (DBSCAN eps 0.15, min_samples 5 are used by
    all, as evidence under ``learned`` and ``nn``). ``threshold`` left unset is the rule's own
    default: 0.5 (a probability) for ``learned``, MiniLM's cosine 0.86 for the others.

    ``max_chars`` cuts texts before embedding (the first ~128 tokens say what a sample is and
    keep CPU time bounded); in a scan a longer document is read in up to ``max_windows`` windows
    (:mod:`contam.scan.windows`: its first ``max_chars`` characters, then paragraph by paragraph;
    1 reads the first window only); ``profile_k`` / ``pca_components`` / ``anomaly_quantile`` shape the
    anomaly model; ``max_neighbors`` caps the neighbours kept per point in the DBSCAN graph
    (counts stay exact, so core points are exact; only a pathological blob of thousands of
    duplicates could lose an edge).

    >>> SemanticConfig().rule, SemanticConfig().threshold, SemanticConfig(rule="nn").threshold
    ('learned', 0.5, 0.86)
    """

    threshold: float = float("nan")  # NaN: the rule's own default (resolved in __post_init__)
    rule: str = "learned"
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
    max_windows: int = MAX_WINDOWS
    batch_size: int = 16
    max_neighbors: int = 256
    search_batch: int = 4096
    seed: int = 0
    route_languages: bool = True
    multilingual: str = "e5-multilingual"
    #: ``learned`` rule: judge English documents by the static/lexical shortlist first and embed only
    #: those it keeps (:mod:`contam.scan.shortlist`); off when ``threshold`` < 0.5 (it is cut for 0.5).
    shortlist: bool = True

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
        "max_windows": Interval(int, 1, None),
        "batch_size": Interval(int, 1, None),
        "max_neighbors": Interval(int, 1, None),
        "search_batch": Interval(int, 1, None),
        "seed": Interval(int, 0, None),
        "multilingual": Options("e5-multilingual", "use-multilingual"),
    }

    def __post_init__(self) -> None:
        if self.threshold != self.threshold:
            object.__setattr__(self, "threshold", LEARNED_THRESHOLD if self.rule == "learned" else _MINILM.threshold)
        validate(self)

    @classmethod
    def for_embedder(cls, embedder: object | None, **fields: object) -> SemanticConfig:
        """``fields`` over the embedder's defaults: the ``learned`` rule where a combiner was fitted
        for it (MiniLM), else the ``nn`` rule with its calibrated thresholds."""
        spec = str(getattr(embedder, "spec", "minilm")) if embedder is not None else "minilm"
        if spec in load_combiners() and fields.get("rule", "learned") == "learned":
            return cls(**{"threshold": LEARNED_THRESHOLD, "rule": "learned", **fields})
        d = defaults_for(embedder)
        base = {
            "rule": "nn",
            "threshold": d.threshold,
            "rescue_threshold": d.rescue_threshold,
            "rescue_overlap": d.rescue_overlap,
            "rescue_words": d.rescue_words,
        }
        return cls(**{**base, **fields})


class SemanticScanner:
    """Level 2: ``fit(items)`` embeds and indexes the benchmark, ``score(texts)`` / ``scan(docs)`` judge candidates.

    Under the default ``learned`` rule each document's language is detected first: English goes to
    the configured embedder (MiniLM), any other language to the multilingual one
    (``config.multilingual``), whose view of the benchmark is built the first time it is needed.
    When most of the benchmark itself is not English, every document goes to the multilingual one
    (an English translation of a Japanese item shares nothing MiniLM can see).
    ``language_counts`` and ``uncovered`` tally what the scanner has seen, for the scan's summary.

    >>> SemanticScanner(SemanticConfig(threshold=0.8)).config.threshold
    0.8
    """

    def __init__(self, config: SemanticConfig | None = None, embedder: Embedder | None = None) -> None:
        self.config = config or SemanticConfig.for_embedder(embedder)
        self._embedder = embedder
        self.items: list[Item] = []
        self._multi: EmbeddingSpace | None = None
        self.language_counts: Counter[str] = Counter()
        #: Documents per detected language that the multilingual embedder was not trained on.
        self.uncovered: Counter[str] = Counter()
        #: Languages of a sample of the benchmark's items (empty when the level does not route).
        self.item_languages: Counter[str] = Counter()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from contam.models.embed import load_embedder

            self._embedder = load_embedder("minilm")
        return self._embedder

    def _space(self, embedder: Embedder) -> EmbeddingSpace:
        cfg = self.config
        return EmbeddingSpace(embedder, cfg.max_chars, cfg.batch_size, cfg.search_batch, cfg.seed)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings of ``texts`` by the primary embedder (benchmark views reused)."""
        if not self.items:
            return embed_texts(self.embedder, texts, self.config.max_chars, self.config.batch_size)
        return self.primary.embed(texts)

    # The primary space's arrays under their historical names (benches and tests read them).
    @property
    def item_vecs(self) -> np.ndarray:
        return self.primary.item_vecs

    @property
    def index(self) -> Any:
        return self.primary.index

    @property
    def _view_item(self) -> np.ndarray:
        return self.primary.view_item

    @property
    def routing(self) -> bool:
        """Whether documents are routed by language (the ``learned`` rule with a combiner for both embedders)."""
        cfg = self.config
        combiners = load_combiners()
        return cfg.rule == "learned" and cfg.route_languages and self.primary.spec in combiners and cfg.multilingual in combiners

    def fit(self, items: Sequence[Item], clean: Sequence[str] | None = None, item_embeddings: np.ndarray | None = None) -> SemanticScanner:
        """Embed and index ``items`` (whole text, and the question alone where it differs); fit the
        anomaly model on ``clean`` texts (clean, same genre) or, without them, on the
        benchmark's leave-one-out similarity profiles."""
        if not items:
            raise ConfigError("the semantic level needs at least one benchmark item")
        cfg = self.config
        # Figure code (contam.scan.figures) and a code preamble (contam.scan.preamble) are left out on
        # both sides; vectors given for such items are remade.
        self.items = [without_preamble(without_figures(it)) for it in items]
        self._multi = None
        space = self._space(self.embedder)
        redo = [j for j, (a, b) in enumerate(zip(items, self.items, strict=True)) if a is not b]
        if item_embeddings is not None and redo:
            item_embeddings = item_embeddings.copy()
            item_embeddings[redo] = space.embed([self.items[j].text for j in redo])
        self.primary = space.fit(self.items, item_embeddings)
        #: Per item, whether it is code (:func:`~contam.scan.textmatch.looks_like_code`): its documents go to the code model.
        self.code_items = np.array([looks_like_code(it.question) for it in self.items], dtype=bool)
        self.item_languages = sample_languages([it.question or it.text for it in self.items]) if self.routing else Counter()
        self._short: StaticShortlist | None = None
        #: The multiple-choice options that name one item (:mod:`contam.scan.choices`).
        self.options = OptionIndex(self.items)
        k = min(cfg.profile_k, len(self.items) - 1 if clean is None else len(self.items))
        if clean is None:
            d, _ = self.primary.search(self.item_vecs, k + 1, exclude_self=True)
            profiles = d[:, :k]
        else:
            d, _ = self.primary.search(self.primary.embed(list(clean)), k)
            profiles = d
        self._fit_anomaly(profiles)
        return self

    @property
    def foreign_benchmark(self) -> bool:
        """Whether most of the benchmark is not English, so that every document is compared in the
        multilingual space."""
        n = sum(self.item_languages.values())
        return n > 0 and self.item_languages["en"] < 0.5 * n

    def prepare_routes(self, texts: Sequence[str]) -> bool:
        """Fit the multilingual space now if any of ``texts`` would be routed to it; whether it is
        ready. The scan's worker processes call this on the corpus's first batch before they are
        forked, so they share one fit of the benchmark's multilingual vectors instead of each
        making its own (minutes of CPU per worker on the first run of a benchmark)."""
        if self.routing and (self.foreign_benchmark or any(lang != "en" for lang in detect_languages(list(texts)))):
            self._multilingual()
        return self._multi is not None

    def _multilingual(self) -> EmbeddingSpace:
        if self._multi is None:
            from contam.models.embed import load_embedder

            self._multi = self._space(load_embedder(self.config.multilingual)).fit(self.items)
        return self._multi

    @property
    def shortlisting(self) -> bool:
        """Whether English documents go through the shortlist (:mod:`contam.scan.shortlist`) first."""
        cfg = self.config
        return cfg.rule == "learned" and cfg.shortlist and cfg.threshold >= LEARNED_THRESHOLD and self.primary.spec == "minilm"

    def _shortlist(self, texts: list[str], rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(kept rows, the shortlist's probability per text (NaN: not judged), nearest items of the rows it drops)."""
        n = len(texts)
        prob = np.full(n, np.nan)
        near = np.zeros((n, k), dtype=np.int64)
        if self._short is None:
            cfg = self.config
            self._short = StaticShortlist.shipped(max_chars=cfg.max_chars, search_batch=cfg.search_batch, seed=cfg.seed)
            if self._short is not None:
                self._short.fit(self.items)
        if self._short is None or not len(rows):
            return rows, prob, near
        sub = [texts[r] for r in rows]
        p, nr, lexical = self._short.score(sub, k)
        prob[rows] = p
        near[rows, : nr.shape[1]] = nr
        # A document writing every distinctive option of a statically or lexically near item is embedded whatever its score.
        return rows[(p >= SHORTLIST_CUT) | self.options.holds_any(sub, np.column_stack([nr, lexical]))], prob, near

    def _compared(self, text: str) -> tuple[str, int]:
        """``text`` as the level compares it, and how many term definitions were set aside: without a
        template's options (:meth:`contam.scan.choices.OptionIndex.without_shared`), a code preamble
        (:mod:`contam.scan.preamble`), figure code (:mod:`contam.scan.figures`) and, for a
        symbol-replaced rewrite, the term definitions it added (:mod:`contam.scan.definitions`)."""
        return strip_definitions(strip_figures(strip_preamble(self.options.without_shared(text))[0])[0])

    def _search(self, x: np.ndarray, k: int, exclude_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return self.primary.search(x, k, exclude_self)

    def _fit_anomaly(self, profiles: np.ndarray) -> None:
        cfg = self.config
        self._profile_k = profiles.shape[1]
        self._clean_median = float(np.median(profiles[:, 0])) if profiles.size else -1.0
        self._outlier = ProfileOutlier(cfg.pca_components, cfg.anomaly_quantile, cfg.seed).fit(profiles)

    def _languages(self, texts: list[str]) -> list[str]:
        if not self.routing:
            return ["en"] * len(texts)
        langs = detect_languages(texts)
        self.language_counts.update(langs)
        self.uncovered.update(lang for lang in langs if not covered_by_multilingual(lang))
        return langs

    def score(self, texts: Sequence[str], embeddings: np.ndarray | None = None, shortlist: bool = True) -> SemanticScores:
        """All signals for each text (``embeddings``: the primary embedder's vectors, if already made;
        ``shortlist=False`` embeds every English document whatever the configuration, as the baselines
        of :mod:`contam.scan.evaluate` need)."""
        cfg = self.config
        views = [self._compared(t) for t in texts]
        changed = np.array([v != t for (v, _), t in zip(views, texts, strict=True)], dtype=bool)
        texts = [v for v, _ in views]
        removed = np.array([g for _, g in views], dtype=np.int64)
        if embeddings is not None and changed.any():
            embeddings = embeddings.copy()
            embeddings[changed] = self.primary.embed([texts[r] for r in np.flatnonzero(changed)])
        n = len(texts) if embeddings is None else len(embeddings)
        langs = self._languages(texts) if texts else ["en"] * n
        foreign = self.foreign_benchmark
        multi = np.array([foreign or lang != "en" for lang in langs], dtype=bool)
        k = max(cfg.top_k, self._profile_k, 2)
        d = np.full((n, k), -1.0, dtype=np.float32)
        ids = np.zeros((n, k), dtype=np.int64)
        cand = np.full(n, -1, dtype=np.int64)
        member = np.zeros(n, dtype=bool)
        hood = np.zeros((n, 4))
        clusters: dict[int, tuple[list[int], list[int]]] = {}
        maha, anomalous = np.zeros(n), np.zeros(n, dtype=bool)
        nb = len(self.items)
        english = np.flatnonzero(~multi)
        short = np.full(n, np.nan)
        judged = np.ones(n, dtype=bool)  # rows embedded and decided by the full rule
        if len(english) and embeddings is None and shortlist and self.shortlisting:
            kept, short, near = self._shortlist(texts, english, k)
            dropped = np.setdiff1d(english, kept)
            d[dropped], ids[dropped], judged[dropped] = np.nan, near[dropped], False
            english = kept
        for offset, rows in ((0, english), (_MULTI_CLUSTERS, np.flatnonzero(multi))):
            if not len(rows):
                continue
            space = self.primary if offset == 0 else self._multilingual()
            if offset == 0 and embeddings is not None:
                x = embeddings[rows]
            else:
                x = space.embed([texts[r] for r in rows])
            ds, di = space.search(x, k)
            d[rows, : ds.shape[1]], ids[rows, : di.shape[1]] = ds, di
            hood[rows] = neighbourhood_features(x, space.background, ds, with_scale=True)
            labels = radius_dbscan(np.vstack([space.item_vecs, x]), cfg.eps, cfg.min_samples, cfg.max_neighbors, cfg.search_batch)
            bench = labels[:nb][labels[:nb] >= 0]
            lab = labels[nb:]
            mem = np.isin(lab, bench) & (lab >= 0)
            cand[rows] = np.where(lab >= 0, lab + offset, -1)
            member[rows] = mem
            for r in np.flatnonzero(mem):
                clusters.setdefault(int(lab[r]) + offset, ([], []))[1].append(int(rows[r]))
            for j in np.flatnonzero(np.isin(labels[:nb] + offset, list(clusters)) & (labels[:nb] >= 0)):
                clusters[int(labels[j]) + offset][0].append(int(j))
            if offset == 0:  # the anomaly model lives in the primary space
                maha[rows], anomalous[rows] = self._anomaly(ds)
        self._break_ties(texts, d, ids)
        overlap, wover = np.full(n, np.nan), np.full(n, np.nan)
        feats = prob = kept = None
        if cfg.rule == "learned" and texts:
            feats, prob = self._learned(texts, d, ids, hood, multi, judged)
            kept = self.options.kept_rows(texts, ids[:, 0])
        top = d[:, 0].astype(np.float64) if n else np.zeros(0)
        if cfg.rule == "nn" and texts:  # second stage, on the shortlist only
            for r in np.flatnonzero((top >= cfg.rescue_threshold) & (top < cfg.threshold)):
                views = self._views(int(ids[r, 0]))
                overlap[r] = specifics_overlap(texts[r], views)
                wover[r] = word_overlap(texts[r], views)
        return SemanticScores(
            sim=top,
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
            features=feats,
            probability=prob,
            languages=langs,
            multilingual=multi,
            shortlist=short,
            definitions=removed if removed.any() else None,
            options_kept=kept,
        )

    def _break_ties(self, texts: list[str], d: np.ndarray, ids: np.ndarray) -> None:
        """Reorder tied nearest items (in place) by their word pieces shared with the whole text.

        Items that agree on their first ``max_chars`` characters (MMLU's passages, each followed by
        several questions) embed to the same vector, so cosine cannot tell which one a document
        copies; the rest of the text can."""
        if not texts or d.shape[1] < 2:
            return
        for r in np.flatnonzero(d[:, 1] >= d[:, 0] - 1e-6):
            tied = np.flatnonzero(d[r] >= d[r, 0] - 1e-6)
            share = np.array([piece_overlap(texts[r], self._views(int(ids[r, j]))) for j in tied])
            ids[r, tied] = ids[r, tied[np.argsort(-share, kind="stable")]]

    def _anomaly(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(d)
        prof = d[:, : self._profile_k]
        if prof.shape[1] < self._profile_k:
            prof = np.pad(prof, ((0, 0), (0, self._profile_k - prof.shape[1])))
        top = d[:, 0] if d.shape[1] else np.zeros(n, dtype=np.float32)
        if self._outlier.fitted and n:
            maha = self._outlier.distance(prof)
            return maha, (maha > self._outlier.cutoff) & (top > self._clean_median)
        return np.zeros(n), top > self._clean_median

    def _learned(
        self, texts: list[str], d: np.ndarray, ids: np.ndarray, hood: np.ndarray, multi: np.ndarray, judged: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The combiner's features and probability for every ``judged`` row, against the most probable
        of its nearly tied nearest items (:func:`~contam.scan.combiner.judge_near_ties`, which puts
        that item first in ``d`` and ``ids``); NaN for the rows the shortlist dropped."""
        combiners = load_combiners()
        feats = np.full((len(texts), len(FEATURES)), np.nan)
        prob = np.full(len(texts), np.nan)
        # Each route in the space its rows were searched in (score's loop), judged by that space's combiner.
        for space, rows in ((self.primary, ~multi & judged), (self._multi, multi)):
            if space is None or not rows.any():
                continue
            code = self.code_items[ids[:, 0]] & (space is self.primary)  # the code model's rows (model_name)
            for is_code in (False, True):
                part = rows & (code == is_code)
                c = combiners.get(model_name(space.spec, is_code)) or combiners.get("minilm")
                if c is not None and part.any():
                    r = np.flatnonzero(part)
                    # A translation's names are translated too (and German capitalises every noun): numbers only.
                    feats[r], prob[r] = judge_near_ties(c, texts, self._views, space.item_vecs, d, ids, hood, r, names=~multi[r])
        return feats, prob

    def _views(self, j: int) -> tuple[str, str]:
        """Item j's texts a document is compared with: its question alone and its whole text."""
        it = self.items[j]
        return (it.question, it.text)

    def flag(self, doc_id: str, i: int, s: SemanticScores, threshold: float | None = None, rule: str | None = None, text: str = "") -> Flag:
        """The :class:`Flag` record of candidate ``i`` (document text ``text``) against its nearest benchmark item."""
        th = self.config.threshold if threshold is None else threshold
        rule = rule or self.config.rule
        text = self._compared(text)[0]  # the evidence shows what was compared
        j = int(s.nearest[i, 0])
        item = self.items[j]
        ev = [Evidence(kind="embedding", text=item.question[:200], weight=round(float(s.sim[i]), 6))]
        if rule == "learned" and s.probability is not None and s.features is not None:
            spec = self.config.multilingual if s.multilingual[i] else model_name(self.primary.spec, bool(self.code_items[j]))
            f = dict(zip(FEATURES, (round(float(v), 3) for v in s.features[i]), strict=True))
            what = ", ".join(f"{k} {v}" for k, v in f.items())
            ev.append(
                Evidence(
                    kind="combiner",
                    text=f"learned rule ({spec}, language {s.languages[i]}): p {float(s.probability[i]):.3f} {'>=' if s.probability[i] >= th else '<'} {th}; {what}",
                    weight=round(float(s.probability[i]), 6),
                )
            )
        ov = float(s.overlap[i]) if s.overlap is not None else float("nan")
        if ov == ov or (rule == "learned" and text):  # list what both sides share, auditable by eye
            shared = sorted(specifics(item.text) & specifics(text)) if text else []
            ev.append(
                Evidence(
                    kind="specifics",
                    text=", ".join(shared)[:200],
                    weight=round(ov if ov == ov else float(s.features[i, 3]) if s.features is not None else 0.0, 6),
                )
            )
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
                text=f"robust Mahalanobis² {float(s.anomaly[i]):.2f} (cutoff {self._outlier.cutoff:.2f})",
                weight=float(s.anomalous[i]),
            )
        )
        if s.definitions is not None and s.definitions[i]:
            g = int(s.definitions[i])
            ev.append(Evidence(kind="definitions", text=f"compared without the {g} quoted term definition(s) it adds", weight=float(g)))
        cross = item.metadata.get("near_duplicate_in") if item.metadata else None
        if cross:
            ev.append(
                Evidence(kind="cross_split", text=f"benchmark item {item.id} has a near duplicate in another split: {cross}", weight=1.0)
            )
        score, th, why = s.decision(i, th, rule)
        if why:  # flagged by a clause other than the rule's main one: named, with the threshold it passed
            ev.insert(1, Evidence(kind="rule", text=why, weight=1.0))
        return Flag(
            doc_id=doc_id,
            item_id=item.id,
            level="semantic",
            score=round(score, 6),
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
