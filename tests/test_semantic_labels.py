"""List labels are not shared numbers: MMLU's "Statement 1 | … Statement 2 | …" items, the shipped
MMLU set's own, scanned against each other with the real MiniLM and the shipped combiners."""

from __future__ import annotations

from contam.data import load_benchmark
from contam.scan.semantic import SemanticConfig, SemanticScanner
from contam.scan.textmatch import labels, number_recall, specifics


def test_labels_leave_the_number_features() -> None:
    a = "Statement 1 | Every field is an integral domain. Statement 2 | Z_6 has 6 elements."
    assert labels(a) == {"1", "2"}
    assert specifics(a, names=False) == {"6"}
    # Without labels too few numbers are left to tell: NaN, "no evidence", not "every number kept".
    assert number_recall("Statement 1 | A ring. Statement 2 | A field.", ["Statement 1 | A group. Statement 2 | A set."]) != 1.0
    assert labels("Step 2: add 3 to 5.") == frozenset()


def test_statement_siblings_are_not_flagged_and_a_copy_is() -> None:
    mmlu = load_benchmark("mmlu")
    stmt = [it for it in mmlu if it.question.startswith("Statement 1")]
    assert len(stmt) >= 40
    seen, other = stmt[::2], stmt[1::2]
    held = {it.id for it in other}
    sem = SemanticScanner(SemanticConfig()).fit([it for it in mmlu if it.id not in held])
    docs = [it.question for it in other] + [seen[0].question]
    flagged = sem.score(docs).flagged(0.5, "learned")
    assert flagged[-1], "a verbatim Statement item is still flagged"
    assert flagged[:-1].sum() <= 1, f"{int(flagged[:-1].sum())} of {len(other)} Statement siblings flagged"
