"""Branch selection: resample the catalog content that decides a conditional, re-derive the program.

Paper 003 §3: for an instruction with a conditional ("exchange the keyboard for a clicky
one; if none is available, take the one without backlight"), the seed resamples the
catalog content the condition reads, and the reference program is re-derived by
*evaluating the instruction's predicate on the reseeded data* — never by remembering which
branch the seed chose. A stale spec (resampler and predicate disagreeing, a selector that
matches nothing) raises :class:`StaleSpec`, which the audit reports as an invalid instance.

Specs are data: ``resample`` lists the variants whose availability is redrawn; ``predicate``
is evaluated on the patched world; ``then``/``else`` are edits of the shipped action list,
whose ``select`` values pick the unique available variant with the given options.

>>> d = derive("retail", 0, seed=3)
>>> d.branch in ("then", "else")
True
>>> derive("retail", 0, seed=None).actions == list(__import__("contam.regen.world", fromlist=["x"]).load_tasks("retail")[0]["actions"])
True
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contam.regen.world import Patch, State, load_tasks, load_world

_KEYBOARD = "1656367028"
_CLICKY_RGB_FULL = {"switch type": "clicky", "backlight": "RGB", "size": "full size"}
_CLICKY_NONE_FULL = {"switch type": "clicky", "backlight": "none", "size": "full size"}
_SHORT_BAMBOO = {"deck material": "bamboo", "length": "28 inch"}

#: Per-task branch specs (retail). Keys are shipped task indices.
SPECS: dict[tuple[str, int], dict[str, Any]] = {
    # "If there is no keyboard that is clicky, RGB backlight, full size, you'd go for no backlight."
    ("retail", 0): {
        "resample": [{"product": _KEYBOARD, "item": "9025753381"}],
        "predicate": {"exists_available": {"product": _KEYBOARD, "options": _CLICKY_RGB_FULL}},
        "then": [{"set": [4, "kwargs", "new_item_ids", 0], "value": {"select": {"product": _KEYBOARD, "options": _CLICKY_RGB_FULL}}}],
        "else": [{"set": [4, "kwargs", "new_item_ids", 0], "value": {"select": {"product": _KEYBOARD, "options": _CLICKY_NONE_FULL}}}],
    },
    # "... you'd rather only exchange the thermostat."
    ("retail", 1): {
        "resample": [{"product": _KEYBOARD, "item": "9025753381"}],
        "predicate": {"exists_available": {"product": _KEYBOARD, "options": _CLICKY_RGB_FULL}},
        "then": [
            {"set": [4, "kwargs", "item_ids"], "value": ["1151293680", "4983901480"]},
            {"set": [4, "kwargs", "new_item_ids"], "value": [{"select": {"product": _KEYBOARD, "options": _CLICKY_RGB_FULL}}, "7747408585"]},
        ],
        "else": [],
    },
    # "exchange your skateboard for a shorter bamboo one. If several options are available, you want to
    #  know all options and their prices, and choose the most expensive one" (the current one is 31 inch)
    ("retail", 29): {
        "resample": [{"product": "1968349452", "items": ["6843647669", "6673921677", "8176740019"], "mode": "nonempty_subset"}],
        "predicate": {"count_available_at_least": [{"product": "1968349452", "options": _SHORT_BAMBOO}, 2]},
        "then": [{"set": [4, "kwargs", "new_item_ids", 0], "value": {"select_max_price": {"product": "1968349452", "options": _SHORT_BAMBOO}}}],
        "else": [{"set": [4, "kwargs", "new_item_ids", 0], "value": {"select": {"product": "1968349452", "options": _SHORT_BAMBOO}}}],
        "outputs": {"prices": {"product": "1968349452", "options": _SHORT_BAMBOO}},
    },
    # "you prefer exchange for the same item, but if it is not available just return. If tablet returned,
    #  also cancel the charger you just bought"
    ("retail", 30): {
        "resample": [{"product": "8024098596", "item": "3788616824"}],
        "predicate": {"exists_available": {"product": "8024098596", "item": "3788616824"}},
        "then": [
            {"replace": 6, "value": {"name": "exchange_delivered_order_items", "kwargs": {
                "order_id": "#W2692684", "item_ids": ["3788616824"], "new_item_ids": ["3788616824"],
                "payment_method_id": "gift_card_7711863"}}},
            {"delete": [7, 8]},
        ],
        "else": [],
    },
}


class StaleSpec(Exception):
    """The spec and the data disagree (no unique variant for a selector, a bad edit path)."""


@dataclass(frozen=True)
class Derivation:
    """A branch-selected program in the shipped id space: the catalog patch it needs and the actions."""

    branch: str | None
    availability: dict[str, bool]
    actions: list[dict[str, Any]]
    patch_key: str
    #: Re-derived required outputs (None: the shipped outputs stand).
    outputs: list[str] | None = None

    def patches(self) -> dict[tuple[str, str], Patch]:
        """The catalog edits as :class:`~contam.regen.world.State` patches (availability flags)."""
        by_product: dict[str, dict[str, bool]] = {}
        for key, avail in self.availability.items():
            product, item = key.split("/")
            by_product.setdefault(product, {})[item] = avail

        def make(flags: dict[str, bool]) -> Patch:
            def patch(entity: dict[str, Any], fresh: Callable[[str, str], str]) -> None:
                for item, avail in flags.items():
                    entity["variants"][fresh("item", item)]["available"] = avail
            return patch

        return {("products", p): make(flags) for p, flags in by_product.items()}


def has_spec(domain: str, index: int) -> bool:
    return (domain, index) in SPECS


def _matches(variant: dict[str, Any], sel: dict[str, Any]) -> bool:
    if "item" in sel and variant["item_id"] != sel["item"]:
        return False
    return all(variant["options"].get(k) == v for k, v in sel.get("options", {}).items())


def _available(state: State, sel: dict[str, Any]) -> list[str]:
    product = state.get("products", sel["product"])
    if product is None:
        raise StaleSpec(f"product {sel['product']} not in the catalog")
    return [v["item_id"] for v in product["variants"].values() if v["available"] and _matches(v, sel)]


def evaluate(pred: dict[str, Any], state: State) -> bool:
    """Evaluate a predicate (``exists_available`` / ``all`` / ``any`` / ``not``) on ``state``."""
    (op, arg), = pred.items()
    if op == "exists_available":
        return bool(_available(state, arg))
    if op == "count_available_at_least":
        sel, k = arg
        return len(_available(state, sel)) >= k
    if op == "all":
        return all(evaluate(p, state) for p in arg)
    if op == "any":
        return any(evaluate(p, state) for p in arg)
    if op == "not":
        return not evaluate(arg, state)
    raise StaleSpec(f"unknown predicate {op!r}")


def _resolve(value: Any, state: State) -> Any:
    if isinstance(value, dict) and set(value) == {"select_max_price"}:
        sel = value["select_max_price"]
        hits = _available(state, sel)
        if not hits:
            raise StaleSpec(f"selector {sel} matches no available variant")
        variants = state.get("products", sel["product"])["variants"]
        return max(hits, key=lambda i: (variants[i]["price"], i))
    if isinstance(value, dict) and set(value) == {"select"}:
        hits = _available(state, value["select"])
        if len(hits) != 1:
            raise StaleSpec(f"selector {value['select']} matches {len(hits)} available variants, expected 1")
        return hits[0]
    if isinstance(value, list):
        return [_resolve(v, state) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, state) for k, v in value.items()}
    return value


def _apply(actions: list[dict[str, Any]], edits: list[dict[str, Any]], state: State) -> list[dict[str, Any]]:
    out = copy.deepcopy(actions)
    deleted: set[int] = set()
    try:
        for edit in edits:
            if "set" in edit:
                *path, last = edit["set"]
                node: Any = out
                for step in path:
                    node = node[step]
                node[last] = _resolve(edit["value"], state)
            elif "replace" in edit:
                out[edit["replace"]] = _resolve(edit["value"], state)
            elif "delete" in edit:
                deleted.update(edit["delete"])
            else:
                raise StaleSpec(f"unknown edit {edit}")
    except (IndexError, KeyError, TypeError) as e:
        raise StaleSpec(f"edit does not fit the shipped actions: {e!r}") from None
    return [a for i, a in enumerate(out) if i not in deleted]


def derive(domain: str, index: int, seed: int | None) -> Derivation:
    """Re-derive task ``index``'s program at ``seed`` (``None``: the shipped catalog, unpatched)."""
    spec = SPECS.get((domain, index))
    shipped = list(load_tasks(domain)[index]["actions"])
    if spec is None:
        return Derivation(None, {}, shipped, "")
    avail: dict[str, bool] = {}
    if seed is not None:
        rng = random.Random(int.from_bytes(hashlib.sha256(f"branch|{domain}|{index}|{seed}".encode()).digest()[:8], "big"))
        for r in spec["resample"]:
            if r.get("mode") == "nonempty_subset":  # every non-empty subset of the items equally likely
                items = r["items"]
                mask = rng.randrange(1, 2 ** len(items))
                for b, item in enumerate(items):
                    avail[f"{r['product']}/{item}"] = bool(mask >> b & 1)
            else:
                avail[f"{r['product']}/{r['item']}"] = rng.random() < r.get("p_available", 0.5)
    d = Derivation(None, avail, [], "")
    state = State(load_world(domain), None, d.patches())
    branch = "then" if evaluate(spec["predicate"], state) else "else"
    actions = _apply(shipped, spec[branch], state)
    outputs = None
    if "outputs" in spec:  # e.g. the prices of every available option, as the user asks for them
        sel = spec["outputs"]["prices"]
        variants = state.get("products", sel["product"])["variants"]
        outputs = [str(p) for p in sorted(variants[i]["price"] for i in _available(state, sel))]
    key = hashlib.sha256(json.dumps(sorted(avail.items())).encode()).hexdigest()[:16] if avail else ""
    return Derivation(branch, avail, actions, key, outputs)
