"""A small, safe arithmetic evaluator: numbers, names, ``+ - * / **`` and parentheses. Never ``eval``.

Benchmark and model text is untrusted, so calculator annotations such as GSM8K's
``<<48/2=24>>`` are parsed with :mod:`ast` and walked node by node; anything other than a
number, a variable name, a unary sign, the four operations or a small integer power is
rejected with :class:`ArithError`. Values are exact :class:`fractions.Fraction` so that
"the intermediate stayed an integer" is a fact, not a float comparison.

>>> evaluate("48/2")
Fraction(24, 1)
>>> evaluate("s0 + r1*2", {"s0": Fraction(1), "r1": Fraction(5, 2)})
Fraction(6, 1)
>>> evaluate("__import__('os')")
Traceback (most recent call last):
...
contam.perturb.arith.ArithError: unsupported syntax: Call
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from contam.errors import ContamError

#: Largest accepted exponent: ``2**1000000`` would be a denial of service, not arithmetic.
MAX_EXPONENT = 12
#: Largest numerator or denominator (bits) of any intermediate: nested powers such as
#: ``((9**12)**12)**12`` stay small per step but grow without bound together.
MAX_RESULT_BITS = 4096
#: Longest accepted expression (characters).
MAX_EXPR_CHARS = 400

_NUM_RE = re.compile(r"\d+(?:\.\d*)?|\.\d+")


class ArithError(ContamError, ValueError):
    """An expression that is not plain arithmetic, or that cannot be computed (division by zero,
    a result too large, ...). It is a ValueError too, so callers that guard a tool call with
    ``except ValueError`` keep working."""


@dataclass(frozen=True)
class Num:
    """A number literal; ``index`` is its position among the literals of the expression (left to right)."""

    value: Fraction
    text: str
    index: int


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Neg:
    operand: Node


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / **
    left: Node
    right: Node


Node = Num | Var | Neg | BinOp

_OPS: dict[type, str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def normalize_expression(expr: str) -> str:
    """Calculator-annotation spelling to Python arithmetic: ``x``/``×`` → ``*``, ``÷`` → ``/``,
    thousands commas and ``$`` dropped, leading zeros removed (``05`` is a syntax error in Python).

    >>> normalize_expression("$1,200 x 3 ÷ 04")
    '1200 * 3 / 4'
    """
    s = expr.replace("×", "*").replace("÷", "/").replace("$", "")
    s = re.sub(r"(?<=\d)\s*[xX]\s*(?=[\d.(])", " * ", s)
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)
    s = re.sub(r"(?<![\d.])0+(?=\d)", "", s)
    return s.strip()


def parse(expr: str) -> Node:
    """Parse an arithmetic expression into a tree of :class:`Num`, :class:`Var`, :class:`Neg`, :class:`BinOp`.

    Number literals keep their source text (``"1.50"``) and their left-to-right index.
    """
    if len(expr) > MAX_EXPR_CHARS:
        raise ArithError(f"expression longer than {MAX_EXPR_CHARS} characters")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError):  # ValueError: a NUL byte
        raise ArithError(f"not an arithmetic expression: {expr!r}") from None
    except (RecursionError, MemoryError):
        raise ArithError("expression nested too deeply") from None
    literals = [m.group(0) for m in _NUM_RE.finditer(_strip_names(expr))]
    counter = [0]

    def walk(node: ast.AST) -> Node:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            i = counter[0]
            counter[0] += 1
            if isinstance(node.value, float) and not math.isfinite(node.value):
                raise ArithError(f"number out of range in {expr!r}")
            text = literals[i] if i < len(literals) else repr(node.value)
            value = Fraction(text)
            if value != node.value and float(value) != node.value:
                # A literal the plain-number pattern splits (``1e5``): its parsed value is the truth.
                text, value = repr(node.value), Fraction(repr(node.value))
            return Num(value, text, i)
        if isinstance(node, ast.Name):
            return Var(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = walk(node.operand)
            return Neg(inner) if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return BinOp(_OPS[type(node.op)], walk(node.left), walk(node.right))
        raise ArithError(f"unsupported syntax: {type(node).__name__}")

    return walk(tree)


def _strip_names(expr: str) -> str:
    # Variable names such as ``s0`` contain digits that are not literals.
    return re.sub(r"[A-Za-z_][A-Za-z_0-9]*", " ", expr)


def eval_node(node: Node, env: Mapping[str, Fraction] | None = None, max_exponent: int = MAX_EXPONENT) -> Fraction:
    """Exact value of a parsed tree; names are looked up in ``env``."""
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Var):
        if env is None or node.name not in env:
            raise ArithError(f"unknown name {node.name!r}")
        return env[node.name]
    if isinstance(node, Neg):
        return -eval_node(node.operand, env, max_exponent)
    a = eval_node(node.left, env, max_exponent)
    b = eval_node(node.right, env, max_exponent)
    return apply(node.op, a, b, max_exponent)


def _bits(x: Fraction) -> int:
    return max(x.numerator.bit_length(), x.denominator.bit_length())


def apply(op: str, a: Fraction, b: Fraction, max_exponent: int = MAX_EXPONENT) -> Fraction:
    """One operation with the evaluator's safety limits (exponent, and size of every result)."""
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op == "/":
        if b == 0:
            raise ArithError("division by zero")
        r = a / b
    elif op == "**":
        if b.denominator != 1 or abs(b) > max_exponent:
            raise ArithError(f"exponent {b} is not a small integer")
        if a == 0 and b < 0:
            raise ArithError("division by zero")
        # Checked before computing: the power itself is the costly step.
        if _bits(a) * abs(int(b)) > MAX_RESULT_BITS + 64:
            raise ArithError(f"result too large (over {MAX_RESULT_BITS} bits)")
        r = a ** int(b)
    else:
        raise ArithError(f"unknown operator {op!r}")
    if _bits(r) > MAX_RESULT_BITS:
        raise ArithError(f"result too large (over {MAX_RESULT_BITS} bits)")
    return r


def evaluate(expr: str, env: Mapping[str, Fraction] | None = None, *, max_exponent: int = MAX_EXPONENT) -> Fraction:
    """Parse and evaluate ``expr`` (see :func:`normalize_expression` for accepted spellings)."""
    return eval_node(parse(normalize_expression(expr)), env, max_exponent)


def calculate(expr: str, *, max_exponent: int = 64) -> float:
    """The value of ``expr`` as a float, for a ``calculate`` tool (τ-bench's): the same bounded
    evaluator; ArithError (a ValueError) for anything that is not plain arithmetic, or too large.

    >>> calculate("((9**64)**64)")
    Traceback (most recent call last):
    ...
    contam.perturb.arith.ArithError: result too large (over 4096 bits)
    """
    value = evaluate(expr, max_exponent=max_exponent)
    try:
        return float(value)
    except OverflowError:
        raise ArithError("result too large for a float") from None


def literals(node: Node) -> list[Num]:
    """Number literals of a tree, left to right."""
    out: list[Num] = []

    def walk(n: Node) -> None:
        if isinstance(n, Num):
            out.append(n)
        elif isinstance(n, Neg):
            walk(n.operand)
        elif isinstance(n, BinOp):
            walk(n.left)
            walk(n.right)

    walk(node)
    out.sort(key=lambda n: n.index)
    return out


def compile_node(node: Node, leaf: Callable[[Num], Callable[[list[Fraction]], Fraction]]) -> Callable[[list[Fraction]], Fraction]:
    """Turn a tree into a closure over a value vector; ``leaf`` decides what each literal reads.

    Used by the instantiator: the template's program is compiled once and run thousands of
    times during rejection sampling, so re-parsing per draw would dominate the cost.
    """
    if isinstance(node, Num):
        return leaf(node)
    if isinstance(node, Var):
        raise ArithError("compile_node does not resolve names")
    if isinstance(node, Neg):
        inner = compile_node(node.operand, leaf)
        return lambda v: -inner(v)
    left = compile_node(node.left, leaf)
    right = compile_node(node.right, leaf)
    op = node.op
    return lambda v: apply(op, left(v), right(v))
