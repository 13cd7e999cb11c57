"""The semantic level's ``learned`` decision: a small logistic model over features that do not hang on
one absolute cosine.

A single cosine threshold does not transfer: a translation's cosine to its source sits far below a
close English rephrasing's, yet far above the cosines of that same translation to every *other*
item. So each candidate is described relative to its own neighbourhood in the benchmark
(:func:`neighbourhood_features`, the idea of margin scoring in bitext mining, Artetxe & Schwenk
2019) and by what it keeps of its nearest item (:mod:`contam.scan.textmatch`):

=============  ==================================================================================
``cosine``     cosine to the nearest item's best view
``z``          that cosine in robust standard deviations (median, MAD) above the candidate's
               cosines to a fixed sample of benchmark views (its background)
``gap``        cosine to the nearest item minus cosine to the next one not tied with it
``specifics``  Jaccard of numbers / quoted literals / names with the nearest item, minus 0.5
               (0: too few to tell)
``numbers``    share of the nearest item's numbers the candidate states, minus 0.5 (0: too few)
``pieces``     Jaccard of word pieces, code identifiers split
=============  ==================================================================================

One model per embedder (MiniLM for English, multilingual-e5-small for the rest), and on the English
route two: ``minilm-code`` for documents whose nearest item is code, ``minilm`` for the rest (fitted
together, free paraphrases of knowledge questions and code ports traded against each other). Fitted
by ``python bench/semantic_independent.py --fit`` on the calibration halves of independently made
rephrasings, translations and code ports, their data and date recorded in ``combiner.json`` next to
this file. The shipped models are small gradient-boosted trees (:class:`TreeCombiner`) held
*monotone*: more of any feature never lowers the probability, so a fit cannot learn a quirk of its
calibration sets that reverses the evidence elsewhere, yet it can weigh features jointly (all of a
math problem's numbers kept *and* a nearest item far ahead of the second is strong evidence even when
the wording moved away, which a linear model cannot express). :class:`LinearCombiner` reads the
older logistic records (and the shortlist's). The offset is set so that probability 0.5 is the chosen
operating point, so one threshold serves every embedder.

>>> c = load_combiners()["minilm"]
>>> round(float(c.probability(np.array([[0.99, 12.0, 0.4, 0.5, 0.5, 0.9]]))[0]), 2)
1.0
>>> round(float(c.probability(np.array([[0.35, 1.0, 0.01, -0.5, -0.5, 0.1]]))[0]), 2)
0.0
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

import numpy as np

from contam.records import Record
from contam.scan.textmatch import number_recall, piece_overlap, specifics_overlap

FEATURES = ("cosine", "z", "gap", "specifics", "numbers", "pieces")

#: Size of the fixed background sample of benchmark views each candidate is compared with.
BACKGROUND = 512

#: MiniLM cosine at or above which a document none of whose numbers or names disagree with its
#: nearest item is a near copy, whatever the combiner says. The boosted trees do not extrapolate:
#: few calibration rows are that close with little word overlap (a synonym-heavy rewording), so
#: there the probability follows word pieces alone and fell to .14 for a GPT-4 rewrite with cosine
#: .92 and every number kept. Set from the calib halves: the closest negative there with nothing
#: against it sits at .833 (test halves .842, GSM8K-train corpus .849); .90 leaves a margin.
NEAR_COPY_COSINE = 0.90


def near_copies(features: np.ndarray, english: np.ndarray) -> np.ndarray:
    """Rows of ``features`` (:data:`FEATURES` order) that are near copies on the English route.

    >>> near_copies(np.array([[0.92, 8.0, 0.2, 0.1, 0.17, 0.24], [0.97, 9.0, 0.3, -0.5, -0.5, 0.8]]), np.array([True, True]))
    array([ True, False])
    """
    f = np.nan_to_num(features, nan=-1.0)
    return english & (f[:, 0] >= NEAR_COPY_COSINE) & (f[:, 3] >= 0) & (f[:, 4] >= 0)


#: Multilingual route: a document that stands out from the benchmark as a whole (z of its nearest
#: cosine against the background sample at least OUTLIER_Z) at cosine OUTLIER_COSINE or more, none of
#: whose numbers or names disagree with its nearest item, is flagged whatever the combiner says.
#: multilingual-e5 puts a short translated question at cosine .80-.88 from its source, where the
#: trees read the item's sibling questions on the same topic (a tiny gap) as a near tie. Set on the
#: calib halves (XQuAD questions and paragraphs, MSVAMP, JMMLU, KT Korean, the SVAMP-translation
#: and GSM8K-train corpora): z 6.5 is the lowest at which no calib negative passes but one SVAMP
#: problem that retells its item's story with two of its numbers (z 7.6-11.3); 6.0 lets two
#: XQuAD paragraphs through.
OUTLIER_COSINE = 0.80
OUTLIER_Z = 6.5


def clear_outliers(features: np.ndarray, english: np.ndarray) -> np.ndarray:
    """Rows of ``features`` that are clear outliers on the multilingual route.

    >>> clear_outliers(np.array([[0.84, 7.1, 0.01, 0.0, 0.0, 0.0], [0.84, 7.1, 0.01, -0.2, 0.0, 0.0]]), np.array([False, False]))
    array([ True, False])
    """
    f = np.nan_to_num(features, nan=-1.0)
    return ~english & (f[:, 0] >= OUTLIER_COSINE) & (f[:, 1] >= OUTLIER_Z) & (f[:, 3] >= 0) & (f[:, 4] >= 0)


def learned_scores(
    probability: np.ndarray, features: np.ndarray | None, english: np.ndarray, options_kept: np.ndarray | None = None
) -> np.ndarray:
    """What the ``learned`` rule thresholds: the combiner's probability (0 where there is none), and 1
    for a near copy, a clear outlier on the multilingual route or a document that keeps its item's
    options (:mod:`contam.scan.choices`), which pass any threshold.

    >>> learned_scores(np.array([0.26, 0.8]), np.array([[0.92, 5.0, 0.2, 0.1, 0.17, 0.24]] * 2), np.array([True, False]))
    array([1. , 0.8])
    >>> learned_scores(np.array([0.26, 0.1]), None, np.array([True, True]), options_kept=np.array([0, 4]))
    array([0.26, 1.  ])
    """
    out = np.nan_to_num(probability, nan=0.0)
    if features is not None:
        out = np.where(near_copies(features, english) | clear_outliers(features, english), 1.0, out)
    if options_kept is not None:
        out = np.where(options_kept > 0, 1.0, out)
    return out


def _sigmoid(logit: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(logit, -50, 50)))


@dataclass(frozen=True)
class LinearCombiner(Record):
    """``P(contaminated) = sigmoid(intercept + coef . (x - mean) / scale)`` over :data:`FEATURES`."""

    embedder: str
    coef: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    features: tuple[str, ...] = FEATURES
    fitted_on: dict[str, Any] = field(default_factory=dict)

    def probability(self, x: np.ndarray) -> np.ndarray:
        """Probability of contamination for each row of the ``(n, len(features))`` matrix ``x``."""
        if len(x) == 0:
            return np.zeros(0)
        z = (np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0) - np.asarray(self.mean)) / np.asarray(self.scale)
        return _sigmoid(self.intercept + z @ np.asarray(self.coef))


@dataclass(frozen=True)
class TreeCombiner(Record):
    """``P(contaminated) = sigmoid(offset + sum of the trees' leaf values)`` over :data:`FEATURES`.

    Each tree is a list of nodes ``[feature, threshold, left, right, value]`` (node 0 the root; a
    leaf has feature -1); a row goes left when its feature is ``<= threshold``. This is the plain
    form of a fitted scikit-learn ``HistGradientBoostingClassifier`` (no missing values: NaN is read
    as 0, "too few to tell", as for :class:`LinearCombiner`).

    >>> leaf = lambda v: [-1, 0.0, 0, 0, v]
    >>> c = TreeCombiner("demo", trees=(((0, 0.5, 1, 2, 0.0), leaf(-2.0), leaf(2.0)),), offset=0.0)
    >>> [round(float(p), 3) for p in c.probability(np.array([[0.2], [0.9]]))]
    [0.119, 0.881]
    """

    embedder: str
    trees: tuple[tuple[tuple[float, ...], ...], ...]
    offset: float
    features: tuple[str, ...] = FEATURES
    fitted_on: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def _nodes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # Every tree's nodes in one (trees, nodes) array per column, padded with leaves of value 0 and
        # built once per combiner: a call walks all trees at once, one level per pass (a scan's batch
        # judges tens of rows, where a Python loop over 100 trees cost 15x more).
        width = max(len(t) for t in self.trees)
        grid = np.zeros((len(self.trees), width, 5))
        grid[:, :, 0] = -1
        for k, tree in enumerate(self.trees):
            grid[k, : len(tree)] = tree
        feat, left, right = (grid[:, :, c].astype(np.intp) for c in (0, 2, 3))
        return feat, grid[:, :, 1], left, right, grid[:, :, 4]

    def logit(self, x: np.ndarray) -> np.ndarray:
        """The raw score (log-odds) of each row of the ``(n, len(features))`` matrix ``x``."""
        x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0)
        feat, thr, left, right, value = self._nodes
        trees = np.arange(len(feat))[None, :]
        rows = np.arange(len(x))[:, None]
        node = np.zeros((len(x), len(feat)), dtype=np.intp)  # each row's current node in every tree
        while (inner := feat[trees, node] >= 0).any():
            f = np.where(inner, feat[trees, node], 0)
            step = np.where(x[rows, f] <= thr[trees, node], left[trees, node], right[trees, node])
            node = np.where(inner, step, node)
        return self.offset + value[trees, node].sum(axis=1)

    def probability(self, x: np.ndarray) -> np.ndarray:
        """Probability of contamination for each row of the ``(n, len(features))`` matrix ``x``."""
        return _sigmoid(self.logit(x)) if len(x) else np.zeros(0)


Combiner = LinearCombiner | TreeCombiner


def combiner_from_record(spec: str, d: dict[str, Any]) -> Combiner:
    """The combiner a ``combiner.json`` entry describes (trees when it holds ``trees``, else logistic)."""
    features = tuple(d.get("features", FEATURES))
    fitted_on = dict(d.get("fitted_on", {}))
    if "trees" in d:
        trees = tuple(tuple(tuple(float(v) for v in node) for node in tree) for tree in d["trees"])
        return TreeCombiner(embedder=spec, trees=trees, offset=float(d["offset"]), features=features, fitted_on=fitted_on)
    return LinearCombiner(
        embedder=spec,
        coef=tuple(d["coef"]),
        intercept=float(d["intercept"]),
        mean=tuple(d["mean"]),
        scale=tuple(d["scale"]),
        features=features,
        fitted_on=fitted_on,
    )


@lru_cache(maxsize=1)
def load_combiners() -> dict[str, Combiner]:
    """The shipped combiners by embedder spec (``combiner.json`` in this package)."""
    raw = json.loads(resources.files("contam.scan").joinpath("combiner.json").read_text(encoding="utf-8"))
    return {spec: combiner_from_record(spec, d) for spec, d in raw.get("combiners", {}).items()}


def model_name(space_spec: str, code: bool) -> str:
    """The shipped model that judges a document searched in ``space_spec``'s space: that space's code
    model (``<spec>-code``) when the document's nearest item is code and the space has one, else the
    space's own.

    >>> model_name("minilm", True), model_name("minilm", False), model_name("e5-multilingual", True)
    ('minilm-code', 'minilm', 'e5-multilingual')
    """
    code_spec = f"{space_spec}-code"
    return code_spec if code and code_spec in load_combiners() else space_spec


def background_sample(n_views: int, seed: int = 0) -> np.ndarray:
    """Indices of the fixed sample of benchmark views a candidate's background is measured on."""
    if n_views <= BACKGROUND:
        return np.arange(n_views)
    return np.sort(np.random.default_rng(seed).choice(n_views, BACKGROUND, replace=False))


def neighbourhood_features(x: np.ndarray, background: np.ndarray, top: np.ndarray, with_scale: bool = False) -> np.ndarray:
    """``cosine``, ``z`` and ``gap`` for candidate vectors ``x`` given the background views'
    vectors and each candidate's best cosines to distinct items ``top`` (best first); with
    ``with_scale`` a fourth column, the scale ``z`` divides by (to score the other items alike).
    The gap skips items tied with the nearest (the same text up to the embedder's cut):

    >>> x = np.array([[1.0, 0.0]])
    >>> neighbourhood_features(x, np.zeros((0, 2)), np.array([[0.8, 0.8, 0.8, 0.5, 0.4]]))[0, 2].round(2)
    np.float64(0.3)
    """
    n = len(x)
    out = np.zeros((n, 4 if with_scale else 3), dtype=np.float64)
    if n == 0:
        return out
    cos1 = top[:, 0] if top.shape[1] else np.zeros(n)
    cos2 = top[:, 1] if top.shape[1] > 1 else np.zeros(n)
    if top.shape[1] > 2:
        # Items with one text up to the embedder's cut (MMLU questions on one passage) embed alike:
        # the gap is to the first item that differs, not to a copy of the nearest.
        tied = top[:, 1:] >= cos1[:, None] - 1e-6
        first = np.argmin(tied, axis=1)
        cos2 = np.where(tied.all(axis=1), top[:, -1], top[:, 1:][np.arange(n), first])
    if len(background):
        # Median and MAD, not mean and std: the candidate's own source sits in the background when
        # the benchmark is small, and must not shrink its own standing (40 items or 1,319 alike).
        bg = x @ background.T
        mu = np.median(bg, axis=1)
        sd = 1.4826 * np.median(np.abs(bg - mu[:, None]), axis=1)
    else:
        mu, sd = np.zeros(n), np.ones(n)
    out[:, 0] = cos1
    out[:, 1] = (cos1 - mu) / np.maximum(sd, 1e-3)
    out[:, 2] = cos1 - cos2
    if with_scale:
        out[:, 3] = np.maximum(sd, 1e-3)
    return out


#: Items within this cosine of a document's nearest one may be its match instead: siblings of one
#: template (SVAMP's variations of a story, with other numbers) sit within .015 of each other for a
#: translation, often in the wrong order.
TIE_MARGIN = 0.02

#: ... but only when the two items are this much closer to each other than the document is to the
#: nearest: then the embedding cannot tell them apart, and the document's numbers and words decide.
#: Items merely alike (HumanEval tasks sharing a docstring example) stay in cosine order.
SIBLING_MARGIN = 0.03

#: ... and only items this alike in absolute terms: near duplicates, one template's variations. For a
#: document far from every item (a translation into another language, cosine ~.82 in
#: multilingual-e5) most same-genre items are closer to each other than the margin asks, and the
#: judge would pick whichever of nine such items happens to share the document's two small numbers.
#: On the calib halves (bench/semantic_independent.py): every SVAMP variation a translation was
#: rightly moved to sits at >= .947 from the nearest item; GSM8K problems merely of one genre that
#: SVAMP translations were moved among at .898 (median), 90 % under .935.
SIBLING_FLOOR = 0.94


def judge_near_ties(
    combiner: Combiner,
    texts: Sequence[str],
    views: Callable[[int], tuple[str, ...]],
    item_vecs: np.ndarray,
    d: np.ndarray,
    ids: np.ndarray,
    hood: np.ndarray,
    rows: np.ndarray,
    names: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Features and probability of each of ``rows`` against its most probable match among its nearest
    item and that item's template siblings in the top of ``d``/``ids`` (cosines and items, best
    first; reordered in place so that the match comes first).

    ``item_vecs``: the items' vectors in the space ``d`` was measured in; ``hood``:
    :func:`neighbourhood_features` with its scale column; ``views(j)``: item j's texts; ``names``:
    per row, whether names count as specifics. Items with identical vectors (MMLU questions on one
    passage) keep the order they arrive in."""
    xs: list[tuple[float, ...]] = []
    owner: list[tuple[int, int]] = []  # (position in rows, column of d / ids)
    for pos, r in enumerate(rows):
        cos1, z1, gap1, scale = hood[r, :4]
        cols = [0]
        for t in np.flatnonzero(d[r, 1:] >= d[r, 0] - TIE_MARGIN) + 1:
            pair = float(item_vecs[ids[r, 0]] @ item_vecs[ids[r, t]])
            if max(d[r, 0] + SIBLING_MARGIN, SIBLING_FLOOR) <= pair < 1 - 1e-4:
                cols.append(int(t))
        for t in cols:
            cos = float(d[r, t])
            # The same background for every item: only the cosine moves; the gap is to the nearest.
            z, gap = (z1, gap1) if t == 0 else (z1 - (cos1 - cos) / scale, cos - cos1)
            xs.append((cos, z, gap, *text_features(texts[int(r)], views(int(ids[r, t])), names=bool(names[pos]))))
            owner.append((pos, t))
    feats = np.full((len(rows), len(FEATURES)), np.nan)
    prob = np.full(len(rows), -1.0)
    if not xs:
        return feats, prob
    x = np.array(xs)
    p = combiner.probability(x)
    best = np.zeros(len(rows), dtype=np.intp)
    for k, (pos, t) in enumerate(owner):
        if p[k] > prob[pos]:  # the first of equals: the nearest
            prob[pos], feats[pos], best[pos] = p[k], x[k], t
    for pos in np.flatnonzero(best):
        r, t = rows[pos], best[pos]
        order = [t, *(c for c in range(d.shape[1]) if c != t)]
        d[r], ids[r] = d[r, order], ids[r, order]
    return feats, prob


def text_features(candidate: str, views: Sequence[str], names: bool = True) -> tuple[float, float, float]:
    """``specifics``, ``numbers`` and ``pieces`` of ``candidate`` against one item's ``views``
    (``names=False``: specifics without names, for text in another language than the item's).

    The first two are centred, so that "too few to tell" (0) sits between a match (up to +0.5) and a
    mismatch (down to -0.5): a code prompt without numbers is no evidence either way, while a math
    problem whose numbers all differ (a template re-skinned) is evidence against a leak.

    >>> text_features("Janet's ducks lay 16 eggs; she eats 3.", ["Janet's ducks lay 16 eggs. She eats 3 for breakfast."])
    (0.5, 0.5, 0.818182)
    >>> text_features("def add(a, b): return a + b", ["def add(x, y):"])
    (0.0, 0.0, 0.285714)
    """
    sp = specifics_overlap(candidate, views, names=names)
    nr = number_recall(candidate, views, across=not names)
    return (sp - 0.5 if sp == sp else 0.0, nr - 0.5 if nr == nr else 0.0, piece_overlap(candidate, views))
