"""A template's program compiled once into closures, exact (fractions) and fast (floats).

>>> from contam.data import load_benchmark
>>> from contam.perturb.symbolic import lift
>>> values, results = compiled(lift(load_benchmark("gsm8k-train")[0])).run({})
>>> [str(r) for r in results]
['24', '72']
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from fractions import Fraction

from contam.perturb import arith
from contam.perturb.records import Template


class Program:
    """A template's program compiled once: ``run(values)`` gives every step's exact result."""

    def __init__(self, template: Template) -> None:
        self.template = template
        self.slot_index = {s.id: k for k, s in enumerate(template.slots)}
        n_slots = len(template.slots)
        self._steps: list[Callable[[list[Fraction]], Fraction]] = []
        self._fsteps: list[Callable[[list[float]], float]] = []
        self._fdefaults = [float(Fraction(s.value)) for s in template.slots]
        for step in template.steps:
            tree = arith.parse(arith.normalize_expression(step.expr))
            by_index = dict(enumerate(step.leaves))

            def leaf(num: arith.Num, by_index: dict = by_index) -> Callable[[list[Fraction]], Fraction]:
                lf = by_index[num.index]
                scale, offset = Fraction(lf.scale), Fraction(lf.offset)
                if lf.kind == "slot":
                    k = self.slot_index[lf.ref]
                    return lambda v: v[k] * scale + offset
                if lf.kind == "step":
                    k = n_slots + int(lf.ref)
                    return lambda v: v[k]
                c = Fraction(lf.value)
                return lambda v: c

            self._steps.append(arith.compile_node(tree, leaf))
            self._fsteps.append(_compile_float(tree, {k: lf for k, lf in enumerate(step.leaves)}, self.slot_index, n_slots))
        # Derived slots: from another slot (before the run) or from a step (right after it).
        self.from_slot = [
            (self.slot_index[s.id], self.slot_index[s.source[5:]], Fraction(s.ratio))
            for s in template.slots
            if s.role == "derived" and s.source.startswith("slot:")
        ]
        self.from_step: dict[int, list[tuple[int, Fraction]]] = {}
        for s in template.slots:
            if s.role == "derived" and s.source.startswith("step:"):
                self.from_step.setdefault(int(s.source[5:]), []).append((self.slot_index[s.id], Fraction(s.ratio)))

    def run_float(self, values: dict[str, float]) -> list[float]:
        """Step results in floating point: a cheap first filter before the exact run."""
        vec = [values.get(s.id, f) for s, f in zip(self.template.slots, self._fdefaults, strict=True)]
        for k, root, ratio in self.from_slot:
            vec[k] = vec[root] * float(ratio)
        n = len(vec)
        for j, f in enumerate(self._fsteps):
            r = f(vec)
            vec.append(r)
            for k, ratio in self.from_step.get(j, ()):
                vec[k] = r * float(ratio)
        return vec[n:]

    def run(self, values: dict[str, Fraction]) -> tuple[dict[str, Fraction], list[Fraction]]:
        """All slot values (derived ones filled in) and every step result, exactly."""
        t = self.template
        vec = [values.get(s.id, Fraction(s.value)) for s in t.slots]
        for k, root, ratio in self.from_slot:
            vec[k] = vec[root] * ratio
        for j, f in enumerate(self._steps):
            r = f(vec)
            vec.append(r)
            for k, ratio in self.from_step.get(j, ()):
                vec[k] = r * ratio
        n = len(t.slots)
        return {s.id: vec[k] for k, s in enumerate(t.slots)}, vec[n:]


_FOPS: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}


def _fpow(a: float, b: float) -> float:
    if b != int(b) or abs(b) > arith.MAX_EXPONENT:
        raise OverflowError("exponent is not a small integer")
    return a ** int(b)


def _compile_float(node: arith.Node, leaves: dict, slot_index: dict[str, int], n_slots: int) -> Callable[[list[float]], float]:
    if isinstance(node, arith.Num):
        lf = leaves[node.index]
        scale, offset = float(Fraction(lf.scale)), float(Fraction(lf.offset))
        if lf.kind == "slot":
            k = slot_index[lf.ref]
            return lambda v: v[k] * scale + offset
        if lf.kind == "step":
            k = n_slots + int(lf.ref)
            return lambda v: v[k]
        c = float(Fraction(lf.value))
        return lambda v: c
    if isinstance(node, arith.Neg):
        inner = _compile_float(node.operand, leaves, slot_index, n_slots)
        return lambda v: -inner(v)
    if isinstance(node, arith.Var):
        raise arith.ArithError("names are not part of a template program")
    left = _compile_float(node.left, leaves, slot_index, n_slots)
    right = _compile_float(node.right, leaves, slot_index, n_slots)
    fn = _fpow if node.op == "**" else _FOPS[node.op]
    return lambda v: fn(left(v), right(v))


_PROGRAMS: dict[str, tuple[Template, Program]] = {}


def compiled(template: Template) -> Program:
    """The compiled program of a template (cached by id: sampling runs it many times)."""
    hit = _PROGRAMS.get(template.id)
    if hit is not None and hit[0] is template:
        return hit[1]
    if len(_PROGRAMS) > 20000:
        _PROGRAMS.clear()
    program = Program(template)
    _PROGRAMS[template.id] = (template, program)
    return program
