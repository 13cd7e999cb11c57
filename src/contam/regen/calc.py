"""A safe arithmetic evaluator for the ``calculate`` tool: numbers and + - * / ** ( ) only.

Benchmark and model text is never passed to ``eval``; the expression is parsed with
:mod:`ast` and only numeric literals and the arithmetic operators are walked.

>>> evaluate("(1 + 2) * 3 / 4")
2.25
>>> evaluate("__import__('os')")
Traceback (most recent call last):
...
ValueError: unsupported expression: only numbers and + - * / ** are allowed
"""

from __future__ import annotations

import ast
import operator

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv, ast.Pow: operator.pow}
_UN = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_BAD = "unsupported expression: only numbers and + - * / ** are allowed"


def evaluate(expression: str) -> float:
    """Value of an arithmetic expression; ValueError for anything else (or a huge power)."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(_BAD) from None
    return float(_walk(tree.body))


def _walk(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        left, right = _walk(node.left), _walk(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large")
        try:
            return _BIN[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UN:
        return _UN[type(node.op)](_walk(node.operand))
    raise ValueError(_BAD)
