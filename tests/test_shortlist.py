"""The semantic level's shortlist (issue 31): real static and MiniLM models, real GPT-4 perturbations
(DCQ, shipped in the package) and real clean text; what it drops is never flagged by the full rule
on this data, and what it keeps is judged exactly as before."""

from __future__ import annotations

import json

import numpy as np
import pytest

from contam.data import load_benchmark
from contam.scan.dcq import dcq_task
from contam.scan.semantic import SemanticConfig, SemanticScanner
from contam.scan.semantic_scores import semantic_score_dict
from contam.scan.shortlist import CUT, LexicalIndex, StaticShortlist

LICENCE = (
    "Permission is hereby granted, free of charge, to any person obtaining a copy of this software and "
    "associated documentation files, to deal in the Software without restriction."
)
ISSUE = "When I call fit() twice on the same estimator the second call ignores sample_weight; see the traceback below."


@pytest.fixture(scope="module")
def task():
    t = dcq_task("gsm8k", "test")
    keep = [i for i, y in enumerate(t.labels) if y == 1][:12] + [i for i, y in enumerate(t.labels) if y == 0][:12]
    texts = [t.texts[i] for i in keep] + [LICENCE, ISSUE]
    return t, texts, [t.labels[i] for i in keep] + [0, 0]


@pytest.fixture(scope="module")
def scanners(task):
    t = task[0]
    return SemanticScanner(SemanticConfig()).fit(t.items), SemanticScanner(SemanticConfig(shortlist=False)).fit(t.items)


def test_shortlist_drops_unrelated_text_and_keeps_every_flag(task, scanners):
    _, texts, labels = task
    on, off = scanners
    assert on.shortlisting and not off.shortlisting
    s_on, s_off = on.score(texts), off.score(texts)
    f_on, f_off = s_on.flagged(0.5, "learned"), s_off.flagged(0.5, "learned")
    assert s_off.shortlist is not None and np.isnan(s_off.shortlist).all()
    assert s_on.shortlist is not None and not np.isnan(s_on.shortlist).any()
    dropped = s_on.shortlist < CUT
    assert dropped[-2:].all(), "a licence paragraph and a GitHub issue are not maths rephrasings"
    assert not f_off[dropped].any(), "the shortlist dropped a document the full rule flags"
    assert (f_on == f_off).all()
    assert f_on[np.array(labels) == 1].sum() >= 10  # the GPT-4 perturbations are still found
    kept = ~dropped
    np.testing.assert_allclose(s_on.probability[kept], s_off.probability[kept], atol=1e-6)
    assert np.isnan(s_on.sim[dropped]).all() and np.isnan(s_on.probability[dropped]).all()
    assert np.isfinite(s_on.sim[kept]).all(), "a document at or above the cut is embedded"


def test_scores_of_a_dropped_document_say_so_and_are_valid_json(task, scanners):
    _, texts, _ = task
    s = scanners[0].score(texts[-2:])
    for i in range(2):
        d = semantic_score_dict(s, i)
        assert "cosine" not in d and "probability" not in d
        assert 0 <= d["shortlist_probability"] < CUT
        json.dumps(d, allow_nan=False)


def test_a_lower_threshold_or_another_rule_turns_the_shortlist_off():
    items = load_benchmark("gsm8k")[:50]
    assert not SemanticScanner(SemanticConfig(threshold=0.3)).fit(items).shortlisting
    assert not SemanticScanner(SemanticConfig(rule="nn")).fit(items).shortlisting


def test_lexical_index_finds_the_item_with_most_pieces_in_common():
    idx = LexicalIndex(["def add_numbers(a, b): return a + b", "Natalia sold 48 clips in April"], [0, 1])
    f, arg = idx.overlaps(["function addNumbers(a, b) { return a + b; }", "In April Natalia sold clips, 48 of them", "zzz"])
    assert list(arg[:2]) == [0, 1]
    jac = f[:, 0]
    assert jac[0] > 0.3 and jac[1] > 0.5 and jac[2] == 0.0
    assert (f[2] == 0).all(), "a text sharing no piece has no overlap of any kind"


def test_shipped_shortlist_is_recorded_with_its_data():
    sl = StaticShortlist.shipped()
    assert sl is not None
    meta = sl.combiner.fitted_on
    assert meta["keep"] >= 0.99 and meta["rows"] > 1000 and "calib" in meta["split"]


def test_idf_overlaps_of_an_item_itself_and_of_its_far_rephrasing():
    """Real MMLU professional-psychology questions as items; PertEval's GPT-4 rewrite of one of them
    keeps "psychologist", which one item has, and shares only common words with the rest."""
    items = [
        "Attempting to teach a new behavior through the use of aversive techniques is difficult because of which of the following",
        "The most common functional psychiatric disorder of later life is",
        "After studying for an examination, retention of the learned material is best facilitated by",
        "To serve as an expert witness in a court case, a psychologist must:",
        "The largest proportion of variation in therapy outcome is accounted for by",
    ]
    idx = LexicalIndex(items, range(len(items)))
    rewrite = "In order to testify as a specialist in legal proceedings, a psychologist is required to:"
    f, arg = idx.overlaps([items[3], rewrite, "zzz qqq"])
    np.testing.assert_allclose(f[0, [1, 3]], 1.0, atol=1e-6)  # an item meets itself whole
    assert arg[0] == 3 and f[0, 2] > 0 and f[0, 4] > 0
    assert f[1, 4] > 0.1, "the rewrite's IDF share leads the runner-up: one item has its rare word"
    assert (f[2] == 0).all()
    assert ((f >= 0) & (f <= 1 + 1e-6)).all()
