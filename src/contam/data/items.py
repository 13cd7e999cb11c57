"""The two data shapes everything else consumes: benchmark :class:`Item` and corpus :class:`Document`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contam.records import Record


@dataclass(frozen=True)
class Item(Record):
    """One benchmark item.

    ``question`` is what a model is asked (a GSM8K question, a HumanEval prompt, an MMLU stem,
    a SWE-bench issue); ``answer`` the short gold answer (a number, a letter, ...);
    ``solution`` the worked solution or reasoning (GSM8K's annotated answer, HumanEval's
    canonical solution, a SWE-bench patch); ``choices`` the options of a multiple-choice item.

    >>> Item(id="gsm8k/test/0", question="2+2?", answer="4").text
    '2+2?\\n4'
    """

    id: str
    question: str
    answer: str = ""
    solution: str = ""
    choices: tuple[str, ...] = ()
    benchmark: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def text(self) -> str:
        """The item as it would appear in a leaked document: question, options, then solution or answer."""
        parts = [self.question]
        if self.choices:
            parts.append("\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(self.choices)))
        parts.append(self.solution or self.answer)
        return "\n".join(p for p in parts if p)

    @property
    def answer_text(self) -> str:
        """The part that follows the question in a leak: the solution if any, else the answer
        (for multiple choice, the text of the gold option)."""
        if self.solution:
            return self.solution
        if self.choices and len(self.answer) == 1 and "A" <= self.answer <= chr(64 + len(self.choices)):
            return self.choices[ord(self.answer) - 65]
        return self.answer


@dataclass(frozen=True)
class Document(Record):
    """One document of a corpus being audited.

    ``source`` and ``line`` say where it came from, so every message and flag can point back
    to the input.
    """

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)
    source: str = ""
    line: int = 0
