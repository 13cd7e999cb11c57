"""Helpers for the lifter's regression tests: lift a real item, draw its variants, read numbers
back from a variant question (shared by the partial-lifting and coverage test files)."""

from __future__ import annotations

import re
from fractions import Fraction

from contam.data import Item
from contam.perturb import instances, lift
from contam.perturb.records import Template


def lifted(item: Item) -> Template:
    """The item's template; the test fails if the lifter rejects it."""
    t = lift(item)
    assert isinstance(t, Template), t
    return t


def variants_of(item: Item, n: int = 6, seed: int = 11) -> list:
    """Up to ``n`` instances of the item's template (at least 3, or the test fails)."""
    got = instances(lifted(item), n, seed)
    assert len(got) >= 3, "the item should yield variants"
    return got


def numbers(pattern: str, text: str) -> tuple[Fraction, ...]:
    """The groups of ``pattern``'s first match in ``text`` as exact numbers ("1,200" -> 1200)."""
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return tuple(Fraction(g.replace(",", "")) for g in m.groups())
