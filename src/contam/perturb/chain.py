"""The computation chain of a GSM8K-style solution: calculator annotations and prose arithmetic.

``<<48/2=24>>`` annotations, and arithmetic written without one ("60/15 = 4 cartons", "54 − 37 =
17", "12/20 x 100% = 60%"), each parsed by the safe evaluator and checked to be exact.

>>> [(p.expr, str(p.value), p.prose) for p in collect_steps("So 60/15 = 4 cartons, 4*4 = <<4*4=16>>16. #### 16")]
[('60/15', '4', True), ('4*4', '16', False)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from contam.perturb import arith

_ANNOT = re.compile(r"<<([^<>]*)>>")
_ECHO = re.compile(r"\s?\$?\s?(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)")
_PROSE_NUM = re.compile(r"(?<![\w.,/:])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])")


class Rejected(Exception):
    """Why an item cannot be templated (internal; :func:`~contam.perturb.symbolic.lift` returns a Rejection)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def number(text: str) -> Fraction:
    """A number as written in a solution: commas and ``$`` dropped."""
    return Fraction(text.replace(",", "").replace("$", "").strip())


@dataclass(frozen=True)
class _Parsed:
    expr: str
    tree: arith.Node
    value: Fraction
    start: int
    end: int
    echo_start: int
    echo_end: int
    prose: bool


_NUMTOK = r"\$?\s?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)%?"
_PROSE_EQ = re.compile(
    rf"(?<![\w.,/:$])((?:\(\s*)*{_NUMTOK}(?:\s*\))*(?:\s*[-+*/×÷x−–]\s*(?:\(\s*)*{_NUMTOK}(?:\s*\))*)+)\s*=\s*({_NUMTOK})(?![\d.,]*\d)(?!\s*<<)(?!\s*[-+*/×÷−–])"
)


_UNIT = r"(?:\s+(?![xX]\s)[A-Za-z][A-Za-z'/]*){0,3}"
_TERM = rf"{_NUMTOK}{_UNIT}"
_UNIT_EQ = re.compile(rf"(?<![\w.,/:$])({_TERM}(?:\s*[-+*/×÷x−–]\s*{_TERM})+)\s*=\s*({_NUMTOK})(?![\d.,]*\d)")


def final_unit_equation(solution: str, answer: Fraction) -> _Parsed | None:
    """The final answer computed in the prose after the last annotation, with unit words between
    the numbers ("7 puppies / 20 puppies * 100% = 35%", "310 miles/day - 250 miles/day = 60
    miles/day"): the words are dropped and the rest must be plain arithmetic whose exact value is
    the answer. None when there is no such line (the item stays ``answer_not_computed``).

    >>> p = final_unit_equation("<<8+12=20>>20 puppies. So 7 puppies / 20 puppies * 100% = 35%\\n#### 35", Fraction(35))
    >>> p.expr, p.value
    ('7 / 20 * 100', Fraction(35, 1))
    """
    body_end = solution.rfind("####")
    body_end = body_end if body_end >= 0 else len(solution)
    last = max((m.end() for m in _ANNOT.finditer(solution, 0, body_end)), default=0)
    found = [p for p in unit_equations(solution) if p.start >= last and p.value == answer]
    return found[-1] if found else None


def unit_equations(solution: str) -> list[_Parsed]:
    """Exact prose equations with unit words between the numbers, outside annotations ("Zeke's
    team has 7 players + 13 players = 20 players"): words dropped, plain arithmetic, the stated
    result exact. The lifter adds one only where a later literal reads its result (or it gives
    the final answer) and nothing else explains that value."""
    body_end = solution.rfind("####")
    body_end = body_end if body_end >= 0 else len(solution)
    spans = [(m.start(), m.end()) for m in _ANNOT.finditer(solution, 0, body_end)]
    out: list[_Parsed] = []
    for m in _UNIT_EQ.finditer(solution, 0, body_end):
        if any(a < m.end() and m.start() < b for a, b in spans) or solution[m.end() : m.end() + 3].lstrip().startswith("<<"):
            continue
        core = re.sub(r"(?<=[\w%.])\s+[xX]\s+(?=[$\d.])", " * ", m.group(1))
        core = re.sub(r"[A-Za-z][A-Za-z'/]*", " ", core).replace("%", "")
        core = re.sub(r"\s+", " ", core.replace("−", "-").replace("–", "-")).strip()
        try:
            tree, value = _exact_step(core, m.group(2).replace("%", ""), "prose equation")
        except Rejected:
            continue
        if not isinstance(tree, arith.Num):
            out.append(_Parsed(core, tree, value, m.start(), m.end(), m.start(2), m.end(2), True))
    return out


def collect_steps(solution: str) -> list[_Parsed]:
    """Calculator annotations, and arithmetic written in the prose without one ("60/15 = 4 cartons")."""
    body_end = solution.rfind("####")
    body_end = body_end if body_end >= 0 else len(solution)
    out: list[_Parsed] = []
    annots = list(_ANNOT.finditer(solution, 0, body_end))
    for i, m in enumerate(annots):
        body = m.group(1)
        if "=" not in body:
            raise Rejected("malformed_annotation", f"step {i}: {body!r} has no '='")
        expr_text, result_text = body.rsplit("=", 1)
        tree, value = _exact_step(expr_text, result_text, f"step {i}")
        echo = _ECHO.match(solution, m.end())
        es, ee = (echo.start(1), echo.end(1)) if echo and number(echo.group(1)) == value else (-1, -1)
        out.append(_Parsed(expr_text.strip(), tree, value, m.start(), m.end(), es, ee, False))
    spans = [(m.start(), m.end()) for m in annots]
    for m in _PROSE_EQ.finditer(solution, 0, body_end):
        if any(a < m.end() and m.start() < b for a, b in spans):
            continue
        # Prose writes minus as "−" or "–", and "x 100% = 60%" for a share shown in percent.
        expr = m.group(1).replace("−", "-").replace("–", "-").replace("%", "")
        tree, value = _exact_step(expr, m.group(2).replace("%", ""), "prose equation")
        out.append(_Parsed(expr.strip(), tree, value, m.start(), m.end(), m.start(2), m.end(2), True))
    out.sort(key=lambda p: p.start)
    return out


def _exact_step(expr_text: str, result_text: str, where: str) -> tuple[arith.Node, Fraction]:
    try:
        tree = arith.parse(arith.normalize_expression(expr_text))
        value = arith.eval_node(tree)
        claimed = number(result_text)
    except (arith.ArithError, ValueError, ZeroDivisionError):
        raise Rejected("malformed_annotation", f"{where}: {expr_text}={result_text} is not plain arithmetic") from None
    if value != claimed:
        raise Rejected("inexact_annotation", f"{where}: {expr_text.strip()} is {float(value):g}, the text says {result_text.strip()}")
    return tree, value
