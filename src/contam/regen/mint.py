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
from functools import cache

import numpy as np

SYLLABLES = ("ka", "ve", "ri", "to", "lu", "ne", "sa", "mo", "di", "pe", "zo", "fa", "gu", "ni", "ba", "xe", "yo", "qui",
             "ra", "te", "vi", "do", "ze", "ku", "lo", "mi", "se", "po", "ha", "wu", "ja", "fe")
STREET_SUFFIX = re.compile(r"^(\d+) (.+?)(?: (Street|Avenue|Lane|Drive|Road|Boulevard|Court|Way|Place|Terrace|Circle|Parkway))?$")


def _words(rng: np.random.Generator, n: int) -> list[str]:
    counts = rng.integers(2, 4, size=n)
    idx = rng.integers(0, len(SYLLABLES), size=(n, 3))
    return ["".join(SYLLABLES[j] for j in idx[i, : counts[i]]).capitalize() for i in range(n)]


@cache
def _parse(cls: str, value: str) -> tuple | None:
    """A value's format, parsed once: None means "no vector recipe, use the scalar one"."""
    if cls in ("order", "payment") and (m := re.fullmatch(r"(#W?|.*_)(\d+)", value)):
        return ("digits", m.group(1), len(m.group(2)), True)
    if cls == "address2" and (m := re.fullmatch(r"(\D*?)(\d+)", value)):
        return ("digits", m.group(1), len(m.group(2)) + 1, True)  # see rekey.ADDRESS2_WIDEN
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
    hi = 10**lengths
    xs = rng.integers(lo, hi)
    return [f"{x:0{n}d}" for x, n in zip(xs.tolist(), lengths.tolist(), strict=True)]


def draw(cls: str, values: list[str], rng: np.random.Generator, names: dict[str, str]) -> list[str | None]:
    """One candidate per value (None where the class has no vector recipe for it)."""
    parsed = [_parse(cls, v) for v in values]
    out: list[str | None] = [None] * len(values)
    kinds = {p[0] for p in parsed if p is not None}
    if "digits" in kinds:
        pos = [i for i, p in enumerate(parsed) if p is not None and p[0] == "digits"]
        nums = _digits(rng, np.array([parsed[i][2] for i in pos]), np.array([parsed[i][3] for i in pos]))
        for i, d in zip(pos, nums, strict=True):
            out[i] = parsed[i][1] + d
    for kind in ("user", "email"):
        if kind in kinds:
            pos = [i for i, p in enumerate(parsed) if p is not None and p[0] == kind]
            nums = _digits(rng, np.array([parsed[i][3] for i in pos]), np.ones(len(pos), dtype=bool))
            for i, d in zip(pos, nums, strict=True):
                p = parsed[i]
                a, b = names.get(p[1]), names.get(p[2])
                if a is None or b is None:  # a name token the database does not use: no vector recipe
                    continue
                a, b = a.lower(), b.lower()
                out[i] = f"{a}_{b}_{d}" if kind == "user" else f"{a}.{b}{d}@{p[4]}"
    if "street" in kinds:
        pos = [i for i, p in enumerate(parsed) if p is not None and p[0] == "street"]
        nums = _digits(rng, np.array([parsed[i][1] for i in pos]), np.ones(len(pos), dtype=bool))
        words = _words(rng, len(pos))
        for i, d, w in zip(pos, nums, words, strict=True):
            out[i] = f"{d} {w}{parsed[i][2]}"
    if "shape" in kinds:
        pos = [i for i, p in enumerate(parsed) if p is not None and p[0] == "shape"]
        width = max(len(values[i]) for i in pos)
        grid = np.array([list(values[i].ljust(width)) for i in pos])
        digit = np.char.isdigit(grid)
        chars = np.where(digit, rng.integers(48, 58, size=grid.shape), rng.integers(65, 91, size=grid.shape)).astype(np.uint8)
        rows = chars.view(f"S{width}").ravel()
        for i, row in zip(pos, rows.tolist(), strict=True):
            out[i] = row.decode()[: len(values[i])]
    return out
