"""The learned rule's near-copy clause: a document very close to its nearest item (MiniLM cosine >=
NEAR_COPY_COSINE) whose numbers and names do not disagree with it is flagged even where the boosted
combiner, which does not extrapolate to close rows with little word overlap, says otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from contam.data import load_benchmark
from contam.scan.combiner import NEAR_COPY_COSINE, near_copies
from contam.scan.semantic import SemanticConfig, SemanticScanner
from contam.scan.semantic_scores import SemanticScores


def _row(cos: float, specifics: float = 0.1, numbers: float = 0.17, pieces: float = 0.24) -> list[float]:
    return [cos, 8.0, 0.2, specifics, numbers, pieces]


def test_near_copies_needs_the_cosine_and_nothing_against_it() -> None:
    x = np.array(
        [
            _row(NEAR_COPY_COSINE),  # at the line, nothing against: a near copy
            _row(NEAR_COPY_COSINE - 0.001),  # just under it
            _row(0.97, specifics=-0.1),  # a name or number the item does not have
            _row(0.97, numbers=-0.25),  # the item's numbers changed: a template re-skinned
            _row(0.97, specifics=0.0, numbers=0.0),  # too few specifics to tell: no evidence against
            [np.nan] * 6,  # dropped by the shortlist, never embedded
        ]
    )
    assert near_copies(x, np.ones(len(x), dtype=bool)).tolist() == [True, False, False, False, True, False]
    # the multilingual route's cosines live on another scale: never a near copy there
    assert not near_copies(x, np.zeros(len(x), dtype=bool)).any()


def _scores(prob: float, near: bool) -> SemanticScores:
    # near or not by its features: a number the item does not have makes it not a near copy
    one = np.zeros(1)
    return SemanticScores(
        sim=np.array([0.93]),
        nearest=np.zeros((1, 1), dtype=np.int64),
        nearest_sim=np.array([[0.93]]),
        cluster=np.array([-1]),
        member=np.zeros(1, dtype=bool),
        anomaly=one,
        anomalous=np.zeros(1, dtype=bool),
        features=np.array([_row(0.93, specifics=0.1 if near else -0.1)]),
        probability=np.array([prob]),
    )


def test_a_near_copy_is_flagged_with_the_threshold_it_passed_and_its_clause_named() -> None:
    s = _scores(0.26, near=True)
    assert s.flagged(0.5, "learned").tolist() == [True]
    assert s.flagged(0.9, "learned").tolist() == [True]  # a stricter probability does not undo a near copy
    score, th, why = s.decision(0, 0.5, "learned")
    assert (score, th) == (pytest.approx(0.93), NEAR_COPY_COSINE) and score >= th
    assert why.startswith("near copy") and "0.260 < 0.5" in why
    # the probability is the main clause whenever it passes: no rule named
    assert _scores(0.8, near=True).decision(0, 0.5, "learned") == (0.8, 0.5, "")
    assert _scores(0.26, near=False).flagged(0.5, "learned").tolist() == [False]


def test_on_real_text_a_copy_is_near_and_a_reskin_with_other_numbers_is_not() -> None:
    items = load_benchmark("gsm8k")
    sem = SemanticScanner(SemanticConfig()).fit(items)
    q = items[0].question
    reskin = q.replace("16", "19").replace("three", "five").replace("four", "seven").replace("$2", "$3")
    s = sem.score([q, reskin])
    assert s.near_copy is not None and s.near_copy.tolist() == [True, False]
    assert s.sim[1] >= NEAR_COPY_COSINE  # as close as a copy by cosine: the numbers decide
    flag = sem.flag("copy", 0, s, text=q)
    assert flag.item_id == items[0].id and flag.threshold == 0.5  # passed by the probability, no clause named
    assert not any(e.kind == "rule" for e in flag.evidence)


def test_a_near_copy_flag_record_names_its_clause_for_reports() -> None:
    """The record a scan writes when the near-copy clause alone fired (the combiner's probability set
    below the threshold here, as it was for the rewrites that showed the hole): score and threshold
    are the cosine's, the clause is an evidence item, and reports read it as the rule that fired."""
    from dataclasses import replace

    from contam.scan.flags import passed, rule_text

    items = load_benchmark("gsm8k")[:200]
    sem = SemanticScanner(SemanticConfig()).fit(items)
    s = sem.score([items[7].question])
    assert s.probability is not None and s.near_copy is not None and s.near_copy[0]
    low = replace(s, probability=np.array([0.26]))
    assert low.flagged(0.5, "learned").tolist() == [True]
    flag = sem.flag("d", 0, low, text=items[7].question)
    assert flag.item_id == items[7].id and flag.threshold == NEAR_COPY_COSINE and flag.score >= NEAR_COPY_COSINE
    assert passed(flag)  # kept by the filter every report applies (score >= threshold)
    assert [e.kind for e in flag.evidence[:3]] == ["embedding", "rule", "combiner"]
    assert "p 0.260 < 0.5" in flag.evidence[2].text  # the combiner's verdict shown as it was, not as passed
    assert rule_text(flag).startswith("semantic: near copy: cosine 1")
