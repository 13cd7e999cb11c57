"""BFCL v4 multi-turn: the shipped tasks, BFCL's own world classes, and their state.

The world is not re-implemented: every class is imported from the installed ``bfcl-eval``
package (``bfcl_eval.eval_checker.multi_turn_eval.func_source_code``) and loaded with its own
``_load_scenario(config, long_context=...)``, exactly as BFCL's harness does. The *state* is what
BFCL's state checker compares: each instance's public attributes (``vars(obj)`` without names
starting with ``_``), compared with ``==``. :func:`snapshot` turns that into plain data that
compares equal exactly when BFCL's checker would (``File``/``Directory`` by their own ``__eq__``:
name and content / name and contents), and :func:`state_hash` hashes it.

Task files are read from the installed package with :mod:`importlib.resources` (nothing copied).
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from contam.errors import ConfigError

#: The four multi-turn categories (800 tasks).
CATEGORIES = ("base", "miss_func", "miss_param", "long_context")

#: BFCL's class -> module map for the multi-turn classes (from bfcl_eval.constants, restated
#: here so that importing it does not pull the harness).
_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASS_MODULE = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
#: Classes BFCL instantiates without loading a scenario.
STATELESS = frozenset({"MathAPI"})


class BfclMissing(ConfigError):
    """The ``bfcl-eval`` package (its data files and world classes) is not installed."""


def data_root() -> Any:
    try:
        import importlib.resources as res

        return res.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        raise BfclMissing("BFCL needs the bfcl-eval package: pip install --no-deps bfcl-eval==2026.3.23") from None


def _read_jsonl(name: str) -> list[dict[str, Any]]:
    path = data_root() / name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise BfclMissing(f"cannot read BFCL data file {name}: {e.strerror or e}") from None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass(frozen=True)
class BfclTask:
    """One shipped multi-turn task with its ground truth (per-turn call strings)."""

    id: str
    category: str
    index: int
    question: list[list[dict[str, str]]]
    initial_config: dict[str, Any]
    involved_classes: list[str]
    ground_truth: list[list[str]]
    path: list[str]
    excluded_function: list[str]
    missed_function: dict[str, list[str]] | None

    @property
    def long_context(self) -> bool:
        # BFCL's checker: "long_context" in the category name.
        return "long_context" in self.category


@cache
def load_tasks() -> tuple[BfclTask, ...]:
    """All 800 multi-turn tasks, in category order (base, miss_func, miss_param, long_context)."""
    out: list[BfclTask] = []
    for cat in CATEGORIES:
        qs = _read_jsonl(f"BFCL_v4_multi_turn_{cat}.json")
        ans = {a["id"]: a["ground_truth"] for a in _read_jsonl(f"possible_answer/BFCL_v4_multi_turn_{cat}.json")}
        for r in qs:
            out.append(
                BfclTask(
                    id=r["id"],
                    category=cat,
                    index=int(r["id"].rsplit("_", 1)[1]),
                    question=r["question"],
                    initial_config=r["initial_config"],
                    involved_classes=list(r["involved_classes"]),
                    ground_truth=ans[r["id"]],
                    path=list(r.get("path", [])),
                    excluded_function=list(r.get("excluded_function", [])),
                    missed_function=r.get("missed_function"),
                )
            )
    return tuple(out)


@cache
def task_by_id() -> dict[str, BfclTask]:
    return {t.id: t for t in load_tasks()}


def get_task(task_id: str) -> BfclTask:
    t = task_by_id().get(task_id)
    if t is None:
        raise ConfigError(f"no BFCL multi-turn task {task_id!r} (ids look like multi_turn_base_0)")
    return t


@cache
def world_class(name: str) -> type:
    if name not in CLASS_MODULE:
        raise ConfigError(f"unknown BFCL class {name!r} (known: {', '.join(CLASS_MODULE)})")
    try:
        mod = importlib.import_module(f"{_PREFIX}.{CLASS_MODULE[name]}")
    except ModuleNotFoundError:
        raise BfclMissing("BFCL needs the bfcl-eval package: pip install --no-deps bfcl-eval==2026.3.23") from None
    return getattr(mod, name)


def instantiate(involved: list[str], config: dict[str, Any], long_context: bool) -> dict[str, Any]:
    """Fresh instances of the involved classes loaded with ``config``, as BFCL's harness does
    (a deep copy of each class's config; stateless classes are not loaded)."""
    out = {}
    for name in involved:
        obj = world_class(name)()
        if name not in STATELESS:
            obj._load_scenario(copy.deepcopy(config.get(name, {})), long_context=long_context)
        out[name] = obj
    return out


def _plain(obj: Any) -> Any:
    """Plain data equal (``==``) exactly when BFCL's attribute comparison says equal."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return int(obj) if obj.is_integer() else obj  # 1.0 == 1 for BFCL's ==; one hash for both
    if isinstance(obj, dict):
        return {_key(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return {"$set": sorted((_plain(v) for v in obj), key=repr)}
    kind = type(obj).__name__
    if kind == "File":  # File.__eq__: name and content
        return {"$file": obj.name, "content": obj.content}
    if kind == "Directory":  # Directory.__eq__: name and contents (not the parent)
        return {"$dir": obj.name, "contents": _plain(obj.contents)}
    if hasattr(obj, "__dict__"):
        return {"$obj": kind, **{k: _plain(v) for k, v in vars(obj).items() if not k.startswith("_")}}
    return {"$repr": repr(obj)}


def _key(k: Any) -> str:
    # JSON keys are strings; keep int keys (tweet ids, order ids) apart from string ones.
    return k if isinstance(k, str) else f"${type(k).__name__}:{k!r}"


def snapshot(instances: dict[str, Any]) -> dict[str, Any]:
    """The state BFCL's checker compares: per class, the public attributes as plain data."""
    return {name: {k: _plain(v) for k, v in vars(obj).items() if not k.startswith("_")} for name, obj in instances.items()}


def state_hash(state: dict[str, Any]) -> str:
    text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_hash(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
