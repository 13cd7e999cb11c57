"""Records of the perturbation layer: mentions, slots, program steps, templates, variants, audits.

All are frozen :class:`~contam.records.Record` dataclasses, so a template or a variant set
can be written to JSON and read back. Numbers are stored as exact fraction strings
(``"3/2"``) so nothing is lost to floating point.

>>> v = Variant(original_id="gsm8k/test/0", variant_id="gsm8k/test/0#s0v0", kind="symbolic", seed=0,
...             question="q", answer="7")
>>> Variant.from_dict(v.to_dict()) == v
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contam.records import Record


@dataclass(frozen=True)
class Mention(Record):
    """One number written in a question: its span, value and how it is spelled.

    ``kind`` is one of ``int``, ``decimal``, ``money``, ``percent``, ``word`` (a cardinal such as
    "three"), ``cents`` (a number followed by "cents") or a frozen kind (``multiplier``,
    ``fraction``, ``ordinal``, ``time``, ``year``) that is never rewritten.
    """

    start: int
    end: int
    text: str
    value: str
    kind: str
    perturbable: bool = True
    #: Other values the solution may use for this mention, with the factor that maps the
    #: mention's value to it (``"1/100"`` for 20% used as 0.2, ``"1/2"``... as fraction strings).
    scales: tuple[str, ...] = ("1",)


@dataclass(frozen=True)
class Slot(Record):
    """A group of mentions that share one value and so move together.

    ``role`` is ``free`` (sampled), ``derived`` (computed: ``source`` names what from,
    ``slot:s1*1/100`` or ``step:3``) or ``frozen`` (kept, because it is tied to a constant or
    a non-rewritable mention).
    """

    id: str
    value: str
    kind: str
    mentions: tuple[int, ...]
    role: str = "free"
    source: str = ""
    ratio: str = "1"
    decimals: int = 0


@dataclass(frozen=True)
class Leaf(Record):
    """One number literal of a calculator annotation, traced to where it comes from.

    ``kind`` is ``slot`` (``ref`` = slot id), ``step`` (``ref`` = index of an earlier step) or
    ``const`` (a known constant such as 60 minutes, or a frozen mention); the literal's value
    is ``value(ref) * scale``.
    """

    kind: str
    ref: str
    scale: str
    value: str
    text: str
    #: Added after scaling: 25% more is written 1.25 = 1 + 25/100 (``scale`` 1/100, ``offset`` 1).
    offset: str = "0"


@dataclass(frozen=True)
class CalcStep(Record):
    """One ``<<expr=result>>`` annotation: the expression, its traced literals and where it sits."""

    expr: str
    result: str
    leaves: tuple[Leaf, ...]
    start: int  # span of ``<<...>>`` in the solution
    end: int
    echo_start: int = -1  # span of the result written right after ``>>`` (or -1)
    echo_end: int = -1
    #: True for arithmetic written in the prose without an annotation ("60/15 = 4 cartons"):
    #: the span covers "expr = result" and is rewritten number by number.
    prose: bool = False


@dataclass(frozen=True)
class ProseNumber(Record):
    """A number in the solution's prose outside annotations and how it is rewritten.

    ``kind``: ``slot`` / ``step`` / ``const`` with ``ref`` and ``scale`` as for :class:`Leaf`.
    """

    start: int
    end: int
    text: str
    kind: str
    ref: str
    scale: str = "1"
    offset: str = "0"


@dataclass(frozen=True)
class TemplateConstraint(Record):
    """A property the original satisfies that every instance must keep.

    ``kind``: ``int`` (step result stays an integer), ``nonneg``, ``pos``, ``lt1`` (a ratio below
    one stays below one), ``decimals`` (at most ``arg`` decimal places), ``tie`` (the slot in
    ``arg`` equals the step result ``target`` times ``ratio``), ``order`` (mention values keep
    their order: ``target`` < ``arg``), ``le100`` (a percent stays at most 100), ``eqstep`` (two
    step results a literal could have meant stay equal: ``target`` == ``arg``).
    """

    kind: str
    target: str
    arg: str = ""


@dataclass(frozen=True)
class Template(Record):
    """A GSM8K-style item lifted into typed slots, a program and the constraints the original satisfies."""

    id: str
    item_id: str
    question: str
    solution: str
    answer: str
    mentions: tuple[Mention, ...]
    slots: tuple[Slot, ...]
    steps: tuple[CalcStep, ...]
    answer_step: int
    prose: tuple[ProseNumber, ...] = ()
    constraints: tuple[TemplateConstraint, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def free_slots(self) -> list[Slot]:
        return [s for s in self.slots if s.role == "free"]


@dataclass(frozen=True)
class Rejection(Record):
    """Why an item could not be templated: a short machine ``reason`` and a human ``detail``."""

    item_id: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class Variant(Record):
    """One generated variant: an isomorphic instance, a permuted or masked MC item, or a paraphrase.

    ``answer`` is the computed gold answer (a number, or a letter for multiple choice);
    ``solution`` the recomputed worked solution where one exists; ``audit_hash`` a sha256 over
    the content, identical for the same template, seed and index.
    """

    original_id: str
    variant_id: str
    kind: str
    seed: int
    question: str
    answer: str
    solution: str = ""
    choices: tuple[str, ...] = ()
    template_id: str = ""
    audit_hash: str = ""
    original_answer: str = ""
    values: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditReport(Record):
    """Counts over a variant-set build: templating coverage, instances emitted, failures by kind.

    ``failures`` counts instances that failed an audit check (never emitted), by check name;
    ``rejections`` counts items that could not be templated, by reason.
    """

    items: int
    templated: int
    covered: int  # templates with at least the requested number of audited instances
    instances: int
    failures: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, int] = field(default_factory=dict)
    sampling_exhausted: int = 0
    checks: tuple[str, ...] = ()
    #: Slots the lifter's guards froze, by guard ("constant_word", "ordinal", ...): numbers whose
    #: meaning the program cannot see, kept at their value in every variant (issue 16).
    frozen: dict[str, int] = field(default_factory=dict)
    similarity: str = ""

    @property
    def template_share(self) -> float:
        return self.templated / self.items if self.items else 0.0

    @property
    def coverage(self) -> float:
        return self.covered / self.items if self.items else 0.0
