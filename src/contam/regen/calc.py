"""The ``calculate`` tool's evaluator: numbers and + - * / ** ( ) only.

It is the one bounded calculator of :mod:`contam.perturb.arith` (exact fractions, small
integer exponents, every intermediate at most 4096 bits, expressions of at most 400
characters); benchmark and model text is never passed to ``eval``.

>>> evaluate("(1 + 2) * 3 / 4")
2.25
>>> evaluate("__import__('os')")
Traceback (most recent call last):
...
contam.perturb.arith.ArithError: unsupported syntax: Call
"""

from __future__ import annotations

from contam.perturb.arith import ArithError, calculate

__all__ = ["ArithError", "evaluate"]


def evaluate(expression: str) -> float:
    """Value of an arithmetic expression; ArithError (a ValueError) for anything else, a huge
    power or result, or a non-integer exponent."""
    return calculate(expression, max_exponent=64)
