"""What the Zero-CoT Probe (:mod:`contam.probe.zerocot`) records per item and per metric: the
per-item measures of an original and its variant, the flat table row, each metric's
gap with its test, and the truncation curve's points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.results import ConfidenceInterval, TestResult

DISCRETE = ("accuracy", "consistency")
CONTINUOUS = ("first_token_prob", "all_token_prob")
METRICS = DISCRETE + CONTINUOUS


@dataclass(frozen=True)
class ItemMeasure(Record):
    """What the probe measured on one item (an original or a variant)."""

    id: str
    gold: str
    cot: str
    full_answer: str | None
    full_correct: int
    zero_raw: str
    zero_answer: str | None
    accuracy: int
    consistency: int
    first_token_prob: float | None = None
    all_token_prob: float | None = None
    n_answer_tokens: int = 0
    curve: dict[str, int] = field(default_factory=dict)  # kept fraction -> forced answer correct


@dataclass(frozen=True)
class ZeroCoTPair(Record):
    """One row of the per-item table: an original and its variant (field ``reference``, the name
    files on disk keep)."""

    key: str
    original: ItemMeasure
    reference: ItemMeasure


def table_row(pair: ZeroCoTPair) -> dict[str, Any]:
    """One flat row of the per-item table (``table.csv``): both sides' answers and metrics."""
    row: dict[str, Any] = {"id": pair.key, "reference_id": pair.reference.id}
    for side, m in (("orig", pair.original), ("ref", pair.reference)):
        row |= {
            f"{side}_gold": m.gold,
            f"{side}_full_answer": m.full_answer,
            f"{side}_zero_answer": m.zero_answer,
            f"{side}_full_correct": m.full_correct,
            **{f"{side}_{k}": getattr(m, k) for k in METRICS},
        }
    return row


@dataclass(frozen=True)
class MetricGap(Record):
    """Original − reference gap of one metric, its test and calibrated confidence."""

    metric: str
    original: float
    reference: float
    gap: float
    ci: ConfidenceInterval | None
    test: TestResult
    calibration: Calibration
    n: int


@dataclass(frozen=True)
class CurvePoint(Record):
    """Forced-answer accuracy when ``kept`` of the model's own CoT is given (paper Figure 2)."""

    kept: float
    original: float
    reference: float
    gap: float
