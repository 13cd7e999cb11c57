"""The per-task plan record and the BFCL facts a plan reads.

:class:`BfclTaskPlan` holds what is computed once per shipped task; the helpers here read a task's
call arguments and config numbers, its question text, and the names BFCL treats specially (tool
doc field names, the long-context extension's files and filler texts), which are never renamed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from contam.regen.bfcl.calls import BfclReplay, Call
from contam.regen.bfcl.world import BfclTask


# --------------------------------------------------------------------------- per-task plan
def _call_leaves(calls: list[Call]) -> list[Any]:
    out: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        else:
            out.append(v)

    for c in calls:
        for a in c.args:
            walk(a)
        for _, v in c.kwargs:
            walk(v)
    return out


def _config_numbers(obj: Any) -> list[float]:
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _config_numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _config_numbers(v)]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return [float(obj)]
    return []


@dataclass(frozen=True)
class BfclTaskPlan:
    """What is computed once per shipped task: candidates, frozen literals, the shipped replay."""

    task: BfclTask
    calls: list[list[Call]]
    literals: list[tuple[str, str]]  # (kind, original), one per casefolded original
    frozen: dict[str, str]  # original -> why it is kept
    numeric: list[tuple[str, tuple[str, ...], tuple[str, ...], float | int]]  # (cls, pattern, path, value)
    contents: list[tuple[str, tuple[str, ...], str]]  # (cls, path, content)
    vocabulary: frozenset[str]  # casefolded strings of the task (fresh values must avoid them)
    shipped: BfclReplay
    read_only: bool


def question_text(question: list[list[dict[str, str]]]) -> str:
    return "\n".join(m.get("content", "") for turn in question for m in turn if isinstance(m, dict))


@cache
def schema_words() -> frozenset[str]:
    """Function, parameter, property and enum names of BFCL's multi-turn tool docs (casefolded):
    a literal equal to one is a field name of the tools' outputs, never renamed."""
    from contam.regen.bfcl.world import CLASS_MODULE, data_root

    out: set[str] = set()

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                out.add(str(k).casefold())
                if k == "enum" and isinstance(v, list):
                    out.update(str(x).casefold() for x in v)
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for mod in CLASS_MODULE.values():
        doc = data_root() / "multi_turn_func_doc" / f"{mod}.json"
        for line in doc.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                out.add(rec.get("name", "").casefold())
                walk(rec.get("parameters"))
                walk(rec.get("response"))
    return frozenset(out)


@cache
def _long_context_texts() -> tuple[str, ...]:
    try:
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context as lc

        return tuple(v for k, v in sorted(vars(lc).items()) if k.isupper() and isinstance(v, str) and len(v) > 200)
    except ImportError:  # pragma: no cover - older bfcl-eval
        return ()


@cache
def _files_tail_used() -> frozenset[str]:
    try:
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context import FILES_TAIL_USED

        return frozenset(FILES_TAIL_USED)
    except ImportError:  # pragma: no cover - older bfcl-eval
        return frozenset()
