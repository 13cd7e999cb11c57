"""The small records every statistical function returns.

>>> TestResult(method="paired t-test", statistic=2.1, p_value=0.04, effect=0.1, n=30).significant()
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from contam.records import Record

#: Direction of the alternative hypothesis. ``greater`` means "the first sample is larger",
#: which is the contamination direction everywhere in contam (original > reference).
Alternative = Literal["greater", "less", "two-sided"]

ALTERNATIVES: tuple[str, ...] = ("greater", "less", "two-sided")


def check_alternative(alternative: str) -> None:
    """Raise ``ValueError`` for anything but ``greater``, ``less`` or ``two-sided``."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


@dataclass(frozen=True)
class ConfidenceInterval(Record):
    """A confidence interval ``[low, high]`` around ``estimate`` at level ``confidence``.

    >>> ConfidenceInterval(0.5, 0.3, 0.7).contains(0.4)
    True
    """

    estimate: float
    low: float
    high: float
    confidence: float = 0.95
    method: str = ""

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    @property
    def width(self) -> float:
        return self.high - self.low


#: The old name of :class:`ConfidenceInterval` (issue 33: ``Interval`` also names a config range,
#: :class:`contam.constraints.Interval`), importable for scripts written against it.
Interval = ConfidenceInterval


@dataclass(frozen=True)
class TestResult(Record):
    """One hypothesis test.

    ``effect`` is the effect in the test's natural unit (a difference of means or proportions,
    or an AUC), signed so that positive means "first sample larger"; ``ci`` is its confidence
    interval when the method gives one. ``details`` holds method-specific numbers (counts of a
    contingency table, Cohen's d, the number of resamples ...).
    """

    __test__ = False  # not a pytest test class despite the name

    method: str
    statistic: float
    p_value: float
    effect: float
    n: int
    alternative: str = "two-sided"
    ci: ConfidenceInterval | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def significant(self, alpha: float = 0.05) -> bool:
        """``p_value < alpha`` (``False`` when p is NaN)."""
        return bool(not math.isnan(self.p_value) and self.p_value < alpha)
