"""Vectorised minting of a whole domain's fresh ids at one seed (numpy), for speed.

:func:`contam.regen.rekey.KeyMap.build` needs a few thousand fresh values per seed. Drawing
them one by one with :mod:`random` costs tens of milliseconds; here each class is drawn in
one numpy call from a parse of the originals that is done once per domain. Candidates that
collide or leak are re-drawn by the caller with the per-value recipes, so the result has
the same guarantees; it is a pure function of (domain, seed).

>>> import numpy as np
>>> out = draw("order", ["#W2378156", "#W1000000"], np.random.default_rng(0), {})
>>> [len(x) for x in out], all(x.startswith("#W") for x in out)
([9, 9], True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

SYLLABLES = (
    "ka",
    "ve",
    "ri",
    "to",
    "lu",
    "ne",
    "sa",
    "mo",
    "di",
    "pe",
    "zo",
    "fa",
    "gu",
    "ni",
    "ba",
    "xe",
    "yo",
    "qui",
    "ra",
    "te",
    "vi",
    "do",
    "ze",
    "ku",
    "lo",
    "mi",
    "se",
    "po",
    "ha",
    "wu",
    "ja",
    "fe",
)
STREET_SUFFIX = re.compile(r"^(\d+) (.+?)(?: (Street|Avenue|Lane|Drive|Road|Boulevard|Court|Way|Place|Terrace|Circle|Parkway))?$")


@cache
def _word_table() -> tuple[str, ...]:
    """Every 2- and 3-syllable word, capitalised: index a*k+b, then k*k + (a*k+b)*k+c (k syllables)."""
    k = len(SYLLABLES)
    two = [(SYLLABLES[a] + SYLLABLES[b]).capitalize() for a in range(k) for b in range(k)]
    three = [(SYLLABLES[a] + SYLLABLES[b] + SYLLABLES[c]).capitalize() for a in range(k) for b in range(k) for c in range(k)]
    return tuple(two + three)


def _words(rng: np.random.Generator, n: int) -> list[str]:
    counts = rng.integers(2, 4, size=n)
    idx = rng.integers(0, len(SYLLABLES), size=(n, 3))
    # The same words as joining idx[i, :counts[i]], looked up in a table instead of built one by one.
    k = len(SYLLABLES)
    two = idx[:, 0] * k + idx[:, 1]
    code = np.where(counts == 2, two, k * k + two * k + idx[:, 2])
    table = _word_table()
    return [table[c] for c in code.tolist()]


@cache
def _parse(cls: str, value: str) -> tuple | None:
    """A value's format, parsed once: None means "no vector recipe, use the scalar one"."""
    if cls in ("order", "payment") and (m := re.fullmatch(r"(#W?|.*_)(\d+)", value)):
        return ("digits", m.group(1), len(m.group(2)), True)
    if cls == "address2" and (m := re.fullmatch(r"(\D*?)(\d+)", value)):
        return ("digits", m.group(1), len(m.group(2)) + 1, True, "widened")  # see rekey.ADDRESS2_WIDEN
    if cls in ("item", "product", "tracking") and value.isdigit():
        return ("digits", "", len(value), True)
    if cls in ("zip", "last4") and value.isdigit():
        return ("digits", "", len(value), False)
    if cls == "flight" and (m := re.fullmatch(r"([A-Z]+)(\d+)", value)):
        return ("digits", m.group(1), len(m.group(2)), False)
    if cls == "user" and (m := re.fullmatch(r"([a-z]+)_([a-z]+)_(\d+)", value)):
        return ("user", m.group(1).capitalize(), m.group(2).capitalize(), len(m.group(3)))
    if cls == "email" and (m := re.fullmatch(r"([a-z]+)\.([a-z]+)(\d*)@(.+)", value)):
        return ("email", m.group(1).capitalize(), m.group(2).capitalize(), max(len(m.group(3)), 4), m.group(4))
    if cls == "address1" and (m := STREET_SUFFIX.fullmatch(value)):
        return ("street", len(m.group(1)), f" {m.group(3)}" if m.group(3) else "")
    if cls == "reservation" and re.fullmatch(r"[A-Z0-9]+", value):
        return ("shape", value)
    return None


def _digits(rng: np.random.Generator, lengths: np.ndarray, lead: np.ndarray) -> list[str]:
    lo = np.where(lead, 10 ** (lengths - 1), 0)
    xs = rng.integers(lo, 10**lengths).tolist()
    if lead.all():  # a leading non-zero digit: plain str() has the right width
        return list(map(str, xs))
    return [str(x).zfill(n) for x, n in zip(xs, lengths.tolist(), strict=True)]


#: Digit spaces up to this size are drawn without replacement from the numbers no original uses.
POOL_LIMIT = 200_000


@dataclass(frozen=True)
class _Plan:
    """Per-kind positions and arrays for one class's values (computed once per value list)."""

    digits: tuple[list[int], np.ndarray, np.ndarray, list[str]]
    #: Crowded small spaces (flight numbers, suites, zips, last-fours): per (prefix, width) the
    #: positions and the pool of numbers that neither equal nor extend an original's number.
    pools: list[tuple[list[int], str, int, np.ndarray]]
    named: dict[str, tuple[list[int], np.ndarray, list[tuple]]]
    street: tuple[list[int], np.ndarray, list[str]]
    shape: tuple[list[int], np.ndarray | None, list[int]]


@cache
def _plan(cls: str, values: tuple[str, ...]) -> _Plan:
    # Only values with a recipe: every position below comes from pos(), so it is a key here.
    parsed = {i: p for i, v in enumerate(values) if (p := _parse(cls, v)) is not None}

    def pos(kind: str) -> list[int]:
        return [i for i, p in parsed.items() if p[0] == kind]

    d = pos("digits")
    groups: dict[tuple[str, int, bool], list[int]] = {}
    for i in d:
        groups.setdefault((parsed[i][1], parsed[i][2], parsed[i][3]), []).append(i)
    pools = []
    for (pre, n, lead), idx in groups.items():
        if 10**n > POOL_LIMIT:
            continue
        widened = len(parsed[idx[0]]) > 4
        used = {int(re.sub(r"\D", "", values[i])) for i in idx}
        lo = 10 ** (n - 1) if lead else 0
        nums = np.arange(lo, 10**n, dtype=np.int64)
        # a widened number must not start with an original's number ("Suite 259" in "Suite 2590")
        mask = ~np.isin(nums // 10 if widened else nums, np.fromiter(used, dtype=np.int64, count=len(used)))
        pool = nums[mask]
        if len(pool) >= 2 * len(idx):
            pools.append((idx, pre, n, pool))
    pooled = {i for idx, *_ in pools for i in idx}
    d = [i for i in d if i not in pooled]
    digits = (
        d,
        np.array([parsed[i][2] for i in d], dtype=np.int64),
        np.array([parsed[i][3] for i in d], dtype=bool),
        [parsed[i][1] for i in d],
    )
    named = {}
    for kind in ("user", "email"):
        k = pos(kind)
        named[kind] = (k, np.array([parsed[i][3] for i in k], dtype=np.int64), [parsed[i] for i in k])
    st = pos("street")
    street = (st, np.array([parsed[i][1] for i in st], dtype=np.int64), [parsed[i][2] for i in st])
    sh = pos("shape")
    grid = None
    if sh:
        width = max(len(values[i]) for i in sh)
        grid = np.char.isdigit(np.array([list(values[i].ljust(width)) for i in sh]))
    shape = (sh, grid, [len(values[i]) for i in sh])
    return _Plan(digits, pools, named, street, shape)


def draw(cls: str, values: list[str], rng: np.random.Generator, names: dict[str, str]) -> list[str | None]:
    """One candidate per value (None where the class has no vector recipe for it)."""
    plan = _plan(cls, tuple(values))
    out: list[str | None] = [None] * len(values)
    pos, lengths, lead, prefixes = plan.digits
    if pos:
        for i, pre, num in zip(pos, prefixes, _digits(rng, lengths, lead), strict=True):
            out[i] = pre + num
    for idx, pre, n, pool in plan.pools:  # distinct, and never an original, by construction
        for i, x in zip(idx, rng.choice(pool, size=len(idx), replace=False).tolist(), strict=True):
            out[i] = pre + str(x).zfill(n)
    for kind, (pos, lengths, parsed) in plan.named.items():
        if not pos:
            continue
        nums = _digits(rng, lengths, np.ones(len(pos), dtype=bool))
        for i, p, num in zip(pos, parsed, nums, strict=True):
            a, b = names.get(p[1]), names.get(p[2])
            if a is None or b is None:  # a name token the database does not use: no vector recipe
                continue
            out[i] = f"{a.lower()}_{b.lower()}_{num}" if kind == "user" else f"{a.lower()}.{b.lower()}{num}@{p[4]}"
    pos, lengths, suffixes = plan.street
    if pos:
        nums = _digits(rng, lengths, np.ones(len(pos), dtype=bool))
        for i, num, w, suf in zip(pos, nums, _words(rng, len(pos)), suffixes, strict=True):
            out[i] = f"{num} {w}{suf}"
    pos, grid, widths = plan.shape
    if pos and grid is not None:
        chars = np.where(grid, rng.integers(48, 58, size=grid.shape), rng.integers(65, 91, size=grid.shape)).astype(np.uint8)
        for i, row, n in zip(pos, chars.view(f"S{grid.shape[1]}").ravel().tolist(), widths, strict=True):
            out[i] = row.decode()[:n]
    return out
