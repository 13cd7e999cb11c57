"""BFCL call strings (``cd(folder='docs')``) parsed with :mod:`ast` and dispatched to methods.

BFCL's own harness ``eval``s each call string after prefixing the instance name. We never
``eval``: a call string must be exactly one plain call ``name(arg, key=value, ...)`` whose
arguments are literals (strings, numbers, booleans, None, and lists / tuples / dicts / sets of
them, with unary minus on numbers). Anything else — attribute chains, nested calls, names,
lambdas, comprehensions, ``**kwargs`` — is refused with :class:`CallSyntaxError`.

Dispatch follows BFCL: the method name is looked up on the involved instances in
``involved_classes`` order, a later class overriding an earlier one; private names (``_x``) are
not callable. The result is rendered as BFCL renders it (a ``str`` as is, a ``dict`` as JSON,
anything else with ``str``); an exception becomes ``"Error during execution: ..."``.

>>> parse_call("cd(folder='docs')")
Call(name='cd', args=(), kwargs=(('folder', 'docs'),))
>>> parse_call("__import__('os').system('x')")
Traceback (most recent call last):
...
contam.regen.bfcl.calls.CallSyntaxError: not a plain call name(...): the callee is Attribute (only a bare name is callable)
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contam.errors import InputError

#: Calls BFCL's harness refuses by name before it evaluates anything.
_BFCL_BLOCKED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})


class CallSyntaxError(InputError):
    """A call string that is not one plain call with literal arguments."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class Call:
    """One parsed call: method name, positional and keyword literal arguments."""

    name: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]

    def render(self) -> str:
        """The call as a string :func:`parse_call` reads back to an equal :class:`Call`."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.name}({','.join(parts)})"

    def map_values(self, fn: Any) -> Call:
        """The same call with every literal leaf passed through ``fn`` (containers kept)."""
        return Call(self.name, tuple(_map(a, fn) for a in self.args), tuple((k, _map(v, fn)) for k, v in self.kwargs))


def _map(v: Any, fn: Any) -> Any:
    if isinstance(v, list):
        return [_map(x, fn) for x in v]
    if isinstance(v, tuple):
        return tuple(_map(x, fn) for x in v)
    if isinstance(v, dict):
        return {_map(k, fn): _map(x, fn) for k, x in v.items()}
    return fn(v)


def _literal(node: ast.AST, where: str) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant):
        v = node.operand.value
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.List):
        return [_literal(e, where) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, where) for e in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise CallSyntaxError(f"{where}: ** inside a dict is not a literal")
        return {_literal(k, where): _literal(v, where) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    raise CallSyntaxError(f"{where}: only literal arguments are allowed, found {type(node).__name__}")


def parse_call(text: str) -> Call:
    """Parse one BFCL call string into a :class:`Call` (never evaluates anything)."""
    if not isinstance(text, str):
        raise CallSyntaxError(f"a call must be a string, found {type(text).__name__}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise CallSyntaxError(f"not a call: {e.msg} in {text[:80]!r}") from None
    node = tree.body
    if not isinstance(node, ast.Call):
        raise CallSyntaxError(f"not a plain call name(...): found {type(node).__name__} in {text[:80]!r}")
    if not isinstance(node.func, ast.Name):
        raise CallSyntaxError(f"not a plain call name(...): the callee is {type(node.func).__name__} (only a bare name is callable)")
    name = node.func.id
    if name.startswith("_"):
        raise CallSyntaxError(f"{name}: private or dunder names are not callable")
    args = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            raise CallSyntaxError(f"{name}: *args are not allowed")
        args.append(_literal(a, name))
    kwargs = []
    for kw in node.keywords:
        if kw.arg is None:
            raise CallSyntaxError(f"{name}: **kwargs are not allowed")
        kwargs.append((kw.arg, _literal(kw.value, f"{name}({kw.arg}=)")))
    return Call(name, tuple(args), tuple(kwargs))


def method_table(instances: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """Public method name -> (class, bound method), later involved classes overriding earlier."""
    table: dict[str, tuple[str, Any]] = {}
    for cls, obj in instances.items():
        for mname, meth in inspect.getmembers(obj, predicate=inspect.ismethod):
            if not mname.startswith("_"):
                table[mname] = (cls, meth)
    return table


def render_result(result: Any) -> str:
    """BFCL's rendering of a method's return value."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


@dataclass(frozen=True)
class Outcome:
    """What one call did: its rendered output, and whether it failed (an exception, an
    ``{"error": ...}`` result, or a name no involved class has)."""

    output: str
    error: bool


def execute(call: Call, table: dict[str, tuple[str, Any]]) -> Outcome:
    """Dispatch ``call`` to its bound method; a failure is reported, never raised."""
    if call.name in _BFCL_BLOCKED:
        return Outcome(f"Error during execution: Function call {call.name} is not allowed.", True)
    entry = table.get(call.name)
    if entry is None:
        # BFCL's eval would raise NameError for an unknown function.
        return Outcome(f"Error during execution: name '{call.name}' is not defined", True)
    try:
        # Fresh argument objects per call, as BFCL's eval makes them: a class that stores a list
        # argument (a tweet's mentions) and later appends to it must not change the parsed call.
        args, kwargs = copy.deepcopy((call.args, dict(call.kwargs)))
        res = entry[1](*args, **kwargs)
    except Exception as e:  # the benchmark's tools raise anything; BFCL records str(e)
        return Outcome(f"Error during execution: {e}", True)
    return Outcome(render_result(res), isinstance(res, dict) and "error" in res)


@dataclass(frozen=True)
class BfclReplay:
    """A replay of per-turn call lists: outcomes per turn, the state after each turn."""

    outcomes: list[list[Outcome]]
    states: list[dict[str, Any]]
    initial: dict[str, Any]
    instances: dict[str, Any]

    @property
    def errors(self) -> list[list[bool]]:
        return [[o.error for o in turn] for turn in self.outcomes]

    @property
    def final(self) -> dict[str, Any]:
        return self.states[-1] if self.states else self.initial


def replay(config: dict[str, Any], involved: list[str], long_context: bool, turns: Sequence[Sequence[Call | str]]) -> BfclReplay:
    """Load fresh instances from ``config`` and run each turn's calls in order (strings are parsed
    first; a string that is not a plain literal call raises :class:`CallSyntaxError`)."""
    from contam.regen.bfcl.world import instantiate, snapshot

    insts = instantiate(involved, config, long_context)
    table = method_table(insts)
    initial = snapshot(insts)
    outcomes, states = [], []
    for turn in turns:
        outs = [execute(c if isinstance(c, Call) else parse_call(c), table) for c in turn]
        outcomes.append(outs)
        states.append(snapshot(insts))
    return BfclReplay(outcomes, states, initial, insts)
