"""``judge_near_ties``: which of a document's nearly tied nearest items it is matched to, with the
shipped English combiner and hand-made vectors (the geometry is the point here; the real-data
checks are in tests/test_semantic_multilingual.py)."""

from __future__ import annotations

import numpy as np

from contam.scan.combiner import SIBLING_MARGIN, TIE_MARGIN, judge_near_ties, load_combiners

ITEMS = [
    ("Julia played tag with 11 kids on Monday and 12 kids on Tuesday. How many kids in all?",),
    ("Julia played tag with 18 kids on Monday and 7 kids on Tuesday. How many kids in all?",),
    ("Sam bought 3 pens for 4 dollars each. How much did he pay?",),
]
DOC = "On Monday Julia played tag with 18 kids, and on Tuesday with 7. How many kids did she play with?"


def _unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=np.float64)
    return a / np.linalg.norm(a)


def _judge(pair: float, tied: float) -> tuple[int, float, np.ndarray]:
    """Match DOC whose nearest item by cosine is 0 (.90) and item 1 at ``tied``; items 0 and 1 at
    cosine ``pair`` to each other. Returns the matched item, its probability and the new cosines."""
    vecs = np.vstack([_unit([1.0, 0.0, 0.0]), _unit([pair, np.sqrt(1 - pair**2), 0.0]), _unit([0.0, 0.0, 1.0])])
    d = np.array([[0.90, tied, 0.20]])
    ids = np.array([[0, 1, 2]])
    hood = np.array([[0.90, 8.0, 0.90 - tied, 0.05]])  # cosine, z, gap, the scale z divides by
    feats, prob = judge_near_ties(
        load_combiners()["minilm"], [DOC], lambda j: ITEMS[j], vecs, d, ids, hood, np.array([0]), np.array([True])
    )
    assert feats.shape == (1, 6)
    return int(ids[0, 0]), float(prob[0]), d[0]


def test_a_sibling_far_closer_to_the_nearest_than_the_document_is_judged_and_wins_on_its_numbers() -> None:
    item, p, d = _judge(pair=0.90 + SIBLING_MARGIN + 0.05, tied=0.90 - TIE_MARGIN / 2)
    assert item == 1 and p >= 0.5  # the document states 18 and 7, item 1's numbers
    assert d[0] == 0.90 - TIE_MARGIN / 2  # the match's own cosine comes first with it


def test_an_item_merely_alike_or_not_near_enough_stays_in_cosine_order() -> None:
    assert _judge(pair=0.90, tied=0.90 - TIE_MARGIN / 2)[0] == 0  # not a sibling: no closer to item 0 than the document
    assert _judge(pair=0.99, tied=0.90 - 2 * TIE_MARGIN)[0] == 0  # a sibling, but too far behind
    assert _judge(pair=1.0, tied=0.90)[0] == 0  # identical vectors: the order they came in (piece overlap) stands
