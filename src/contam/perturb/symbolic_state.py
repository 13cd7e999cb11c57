"""State the GSM8K templater's phases pass on (:mod:`contam.perturb.symbolic`): what the item states, what tracing found, which slots move.

:func:`contam.perturb.symbolic._lift` runs its phases over these records: reading the item
(:func:`~contam.perturb.symbolic_read.read_problem`) gives a :class:`LiftProblem`; tracing its
calculations (:func:`~contam.perturb.symbolic_trace.trace`) a :class:`LiftTrace`; choosing the
slots (:func:`~contam.perturb.symbolic_slots.choose_slots`) a :class:`SlotChoice`; the bounds
(:func:`~contam.perturb.symbolic_bounds.derive_bounds`) and the template
(:func:`~contam.perturb.symbolic._template`) read all three.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from contam.perturb.chain import _Parsed
from contam.perturb.records import CalcStep, Mention, Slot, TemplateConstraint


@dataclass
class LiftProblem:
    """What the question and the solution state, read once before tracing."""

    question: str
    #: The solution with its ``#### answer`` line (written in where the item keeps the answer apart).
    solution: str
    #: The solution above the ``####`` line.
    body: str
    answer: Fraction
    mentions: list[Mention]
    #: Constants the solution may use without a mention (60 minutes, 12 per dozen, a count of nature).
    constants: list[Fraction]
    #: Counts the question states by naming what it counts ("Saturday and Sunday" are 2).
    story_counts: set[Fraction]
    #: Slot groups: the perturbable mentions of each value, in order of first mention.
    groups: dict[Fraction, list[int]]
    group_values: list[Fraction]
    #: Slot id of each group value (``s0``, ``s1`` ...).
    gid: dict[Fraction, str]
    #: The values the solution may write for each group (its mentions' scales times the value).
    group_scales: dict[Fraction, list[Fraction]]
    #: Values of frozen mentions, as the solution may write them: they act as constants.
    frozen_values: set[Fraction]
    #: What the question's mentions of each value count ("apple", "$").
    group_nouns: dict[Fraction, set[str]]
    #: The solution's calculations in order: its annotations and the prose lines traced as steps.
    parsed: list[_Parsed]
    #: How often each value is read before any step produces it.
    reads: dict[Fraction, int]
    #: Constants stated by a word ("twice", "Monday to Friday").
    worded: set[int]
    #: ``worded`` and the facts of the world the item names (7 days a week ...).
    world: set[int]
    #: Constants strong enough to pin a result a literal could also read (``worded``; 100 for a percent).
    strong: set[int]
    #: Whole constants a repeated read of a question number may come from.
    stated_constants: set[int]
    #: The nouns the question counts ("apple", "ticket"), for the units of results.
    story_nouns: set[str]


@dataclass
class LiftTrace:
    """What tracing the annotations found: the program's steps and the ties between its numbers.

    The slot phase goes on freezing into ``freeze`` and pinning into ``pinned``."""

    steps: list[CalcStep] = field(default_factory=list)
    results: list[Fraction] = field(default_factory=list)
    #: The unit each step's result is stated in (see ``symbolic_bounds._result_unit``).
    step_units: list[str] = field(default_factory=list)
    #: slot -> (root slot, ratio): value(slot) = value(root) * ratio.
    slot_links: dict[str, tuple[str, Fraction]] = field(default_factory=dict)
    #: (slot, step, ratio): value(slot) * ratio == result(step).
    step_ties: list[tuple[str, int, Fraction]] = field(default_factory=list)
    #: Two earlier results a literal could be: they must stay equal.
    step_eqs: list[tuple[int, int]] = field(default_factory=list)
    #: Slots that must not move.
    freeze: set[str] = field(default_factory=set)
    #: slot -> steps whose leaves read it directly.
    bound: dict[str, list[int]] = field(default_factory=dict)
    #: Steps whose result a later literal already reads.
    consumed: set[int] = field(default_factory=set)
    #: Steps whose result never moves (every free slot they depend on is frozen): a literal with two
    #: readings then has the original value under both.
    pinned: set[int] = field(default_factory=set)
    #: Question numbers pinned for the same reason.
    pin_slots: set[str] = field(default_factory=set)
    #: Values read once as the question's number and once as a multiplier word's constant ("2 x 2").
    split: set[Fraction] = field(default_factory=set)
    #: Results read on by a sum of terms in their own unit ("6+4 = 10 times" for "2+4 = 6 times").
    confirmed: set[int] = field(default_factory=set)
    #: The last step whose result is the final answer.
    answer_step: int = -1


@dataclass
class SlotChoice:
    """The slots chosen to move and what each step's result depends on."""

    slots: list[Slot]
    #: The free slots each step depends on.
    deps: list[set[str]]
    #: Range constraints from the guards (on every slot; the bounds keep the moving ones).
    guard_constraints: list[TemplateConstraint]
