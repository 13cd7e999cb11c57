"""Drawing one attempt's fresh values and applying them to a task's config, question and calls."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from contam.regen.bfcl.calls import Call
from contam.regen.bfcl.literals import _MIN_LEN, LiteralMap, _pattern, _stem, pools, sub_call, sub_config
from contam.regen.bfcl.taskplan import BfclTaskPlan, _config_numbers


# --------------------------------------------------------------------------- drawing fresh values
def _redigit(value: str, rng: random.Random) -> str:
    return "".join(str(rng.randrange(10)) if ch.isdigit() else ch for ch in value)


def _fresh_string(
    kind: str, original: str, rng: random.Random, used: set[str], bad: re.Pattern[str] | None, vocab: frozenset[str]
) -> str | None:
    pool = list(pools().strings.get(kind, ()))
    rng.shuffle(pool)
    stem, ext = _stem(original) if kind == "file" else (original, "")

    def build(base: str) -> str:
        if kind == "file":
            return "." + base if ext == "." else base + ext
        if kind in ("card_number", "booking_id", "token", "card_id") and any(ch.isdigit() for ch in base):
            return _redigit(base, rng)
        return base

    def ok(c: str) -> bool:
        key = c.casefold()
        return (
            key != original.casefold()
            and key not in used
            and key not in vocab
            and (bad is None or not bad.search(c))
            and len(c) >= _MIN_LEN
        )

    for base in pool:
        if kind == "file" and base == stem:
            continue
        cand = build(base)
        if ok(cand):
            return cand
    # Pool exhausted for this task: two pool values joined (still the benchmark's own words).
    for _ in range(50):
        if len(pool) < 2:
            break
        a, b = rng.sample(pool, 2)
        cand = build(f"{a}_{b}" if kind in ("file", "dir", "handle", "card_id", "booking_id", "token") else a + b)
        if ok(cand):
            return cand
    return None


@dataclass(frozen=True)
class BfclDraw:
    """One attempt's operators: the literal map and the positional replacements."""

    lm: LiteralMap
    numbers: dict[tuple[str, tuple[str, ...]], tuple[Any, Any]]  # (cls, path) -> (old, new)
    contents: dict[tuple[str, tuple[str, ...]], tuple[str, str]]  # (cls, path) -> (old, new)


def draw(p: BfclTaskPlan, seed: int, attempt: int, rekey: bool, resample: bool, half: bool = False) -> BfclDraw | None:
    rng = random.Random(f"bfcl|{p.task.id}|{seed}|{attempt}")
    lm = LiteralMap()
    used: set[str] = set()
    bad = _pattern([v for _, v in p.literals])
    if rekey:
        for kind, v in p.literals:
            fresh = _fresh_string(kind, v, rng, used, bad, p.vocabulary)
            if fresh is None:
                return None
            used.add(fresh.casefold())
            lm.add(kind, v, fresh)
    numbers: dict[tuple[str, tuple[str, ...]], tuple[Any, Any]] = {}
    contents: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}
    if resample:
        taken = set(_config_numbers(p.task.initial_config))
        for cls, pat, path, v in p.numeric:
            if half and rng.random() < 0.5:
                continue  # fields a joint condition ties (an average of four tyres) stay apart
            pool = [x for x in pools().numbers.get((cls, pat), ()) if float(x) not in taken and type(x) is type(v)]
            if not pool:
                continue
            new = rng.choice(pool)
            taken.add(float(new))
            numbers[(cls, path)] = (v, new)
        cpool = list(pools().contents)
        for cls, path, c in p.contents:
            if half and rng.random() < 0.5:
                continue
            others = [x for x in cpool if x != c and (bad is None or not bad.search(x))]
            if others:
                contents[(cls, path)] = (c, rng.choice(others))
    return BfclDraw(lm, numbers, contents)


def _set_path(cfg: dict[str, Any], path: tuple[str, ...], value: Any, gfs: bool = False) -> None:
    node: Any = cfg
    if gfs:  # GFS paths run through "contents" between names
        node = cfg["root"][path[0]]
        for name in path[1:-1]:
            node = node["contents"][name]
        node["contents"][path[-1]]["content"] = value
        return
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def apply(p: BfclTaskPlan, d: BfclDraw) -> tuple[dict[str, Any], list[list[dict[str, str]]], list[list[Call]]]:
    """The fresh config, question and calls of a draw (positional changes first, then the map)."""
    cfg = json.loads(json.dumps(p.task.initial_config))
    for (cls, path), (_, new) in d.numbers.items():
        _set_path(cfg[cls], path, new)
    for (cls, path), (_, new) in d.contents.items():
        _set_path(cfg[cls], path, new, gfs=True)
    cfg = sub_config(cfg, d.lm)
    question = [[{**m, "content": d.lm.sub(m.get("content", ""))} for m in turn] for turn in p.task.question]
    calls = [[sub_call(c, d.lm) for c in turn] for turn in p.calls]
    return cfg, question, calls
