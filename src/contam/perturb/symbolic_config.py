"""Configuration and internal rejection signals of the GSM8K templater (:mod:`contam.perturb.symbolic`)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from contam.perturb.chain import Rejected


@dataclass(frozen=True)
class SymbolicConfig:
    """Knobs of the templater.

    ``reject_unexplained``: reject an item whose solution prose holds a number that neither a
    slot, a step, nor a constant explains (it signals a computation outside the annotations).
    ``merge_repeated``: mentions sharing a value form one slot; when False, an operand whose
    value the question states twice is rejected as ambiguous instead.
    """

    reject_unexplained: bool = True
    merge_repeated: bool = True


class _Untraced(Rejected):
    """``untraced_operand`` with the literal's value and where its step starts."""

    def __init__(self, value: Fraction, start: int, detail: str) -> None:
        super().__init__("untraced_operand", detail)
        self.value = value
        self.start = start


class _AmbiguousProse(Rejected):
    """``ambiguous_solution_number`` with the value that could be pinned instead."""

    def __init__(self, value: Fraction, detail: str) -> None:
        super().__init__("ambiguous_solution_number", detail)
        self.value = value
