"""Transport checks of a draw: its replay against the shipped replay under the map, leaks, injectivity."""

from __future__ import annotations

import json
from typing import Any

from contam.regen.bfcl.calls import BfclReplay, Call
from contam.regen.bfcl.draws import BfclDraw
from contam.regen.bfcl.literals import _pattern
from contam.regen.bfcl.taskplan import BfclTaskPlan, _call_leaves, _long_context_texts, question_text


# --------------------------------------------------------------------------- transport checks
def _parse_output(s: str) -> Any:
    if s[:1] in "{[":
        try:
            return json.loads(s)
        except json.JSONDecodeError:
            return s
    return s


def _canon(o: Any) -> Any:
    """Order-insensitive form (a rename may reorder listings and dict keys)."""
    if isinstance(o, dict):
        return sorted(((str(k), _canon(v)) for k, v in o.items()), key=repr)
    if isinstance(o, list):
        return sorted((_canon(v) for v in o), key=repr)
    if isinstance(o, float) and o.is_integer():
        return int(o)
    return o


def transport_output(out: str, d: BfclDraw) -> Any:
    """The shipped observation carried into the fresh world: strings through the map, resampled
    numbers and contents replaced by their fresh values."""
    nums = {float(old): new for old, new in d.numbers.values()}
    conts = dict(d.contents.values())

    def walk(o: Any) -> Any:
        if isinstance(o, dict):
            return {(walk(k) if isinstance(k, str) else k): walk(v) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(v) for v in o]
        if isinstance(o, str):
            for old, new in conts.items():
                if old and old in o:
                    o = o.replace(old, new)
            # BFCL's long-context filler is glued to a file's text ("report.csvThe company's ...");
            # it is class data, not task text: map the pieces around it.
            for ext in _long_context_texts():
                if ext in o:
                    return ext.join(d.lm.sub(part) for part in o.split(ext))
            return d.lm.sub(o)
        if isinstance(o, (int, float)) and not isinstance(o, bool) and float(o) in nums:
            return nums[float(o)]
        return o

    return _canon(walk(_parse_output(out)))


def check_draw(p: BfclTaskPlan, d: BfclDraw, run: BfclReplay) -> list[str]:
    """Problems of a draw's replay against the shipped replay, as ``reason: detail`` strings."""
    probs = []
    if run.errors != p.shipped.errors:
        probs.append(f"error_pattern_changed: {run.errors} != shipped {p.shipped.errors}")
    else:
        for t, (a, b) in enumerate(zip(p.shipped.outcomes, run.outcomes, strict=True)):
            for k, (oa, ob) in enumerate(zip(a, b, strict=True)):
                if transport_output(oa.output, d) != _canon(_parse_output(ob.output)):
                    probs.append(f"outputs_not_transported: turn {t} call {k} ({p.calls[t][k].name})")
                    break
            if probs:
                break
    if all(s == run.initial for s in run.states):
        probs.append("goal_unchanged: no turn changes the fresh state")
    return probs


def leaks(p: BfclTaskPlan, d: BfclDraw, cfg: dict[str, Any], question: list[list[dict[str, str]]], calls: list[list[Call]]) -> list[str]:
    """Original re-keyed literals (whole-token, any case) or replaced contents found in fresh text."""
    texts: list[str] = [question_text(question)]

    def collect(o: Any) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if isinstance(k, str):
                    texts.append(k)
                collect(v)
        elif isinstance(o, list):
            for v in o:
                collect(v)
        elif isinstance(o, str):
            texts.append(o)

    collect(cfg)
    texts.extend(v for v in _call_leaves([c for t in calls for c in t]) if isinstance(v, str))
    joined = "\n".join(texts)
    out = []
    rx = _pattern(list(d.lm.orig.values()))
    if rx is not None:
        m = rx.search(joined)
        if m:
            out.append(f"leak: original {m.group(0)!r} in the fresh instance")
    for old, new in d.contents.values():
        if old != new and len(old) >= 8 and old in joined:
            out.append(f"leak: a replaced file content {old[:30]!r} survives")
    return out


def injective(d: BfclDraw) -> list[str]:
    fresh = [v.casefold() for v in d.lm.fwd.values()]
    if len(set(fresh)) != len(fresh):
        return ["not_injective: two originals share a fresh value"]
    if set(fresh) & set(d.lm.fwd):
        return ["not_injective: a fresh value is an original"]
    return []
