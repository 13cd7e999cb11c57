"""Branch selection: resample the catalog content that decides a conditional, re-derive the program.

Paper 003 §3: for an instruction with a conditional ("exchange the keyboard for a clicky
one; if none is available, take the one without backlight"), the seed resamples the
catalog content the condition reads, and the gold program is re-derived by
*evaluating the instruction's predicate on the reseeded data* — never by remembering which
branch the seed chose. A stale spec (resampler and predicate disagreeing, a selector that
matches nothing) raises :class:`StaleSpec`, which the audit reports as an invalid instance.

Specs are data (``specs/<domain>.json``, one per shipped task with a data-decided
conditional): ``resample`` lists the catalog content a seed redraws (a variant's
availability, a non-empty subset of variants, a variant's price, a flight's fare); ``predicate`` with
``then``/``else``, or an ordered list of ``cases`` (first ``when`` that holds wins), are
evaluated on the patched world and pick edits of the shipped action list; ``finally`` edits
apply on every branch; ``outputs`` re-derives the required outputs. Values:
``select`` (the unique available variant with the given options; a list of values means any
of them), ``select_pref`` (narrowed by ordered preferences), ``select_min_price`` /
``select_max_price``, ``price`` of a selector, ``fare`` of a flight, ``mul``, ``first_covering`` (the first payment method
that can pay the action's price difference). Predicates: ``exists_available``,
``count_available_at_least``, ``less_than`` / ``greater_than``, ``all`` / ``any`` / ``not``; numbers:
``price``, ``fare``, ``item_price`` (paid in an order), ``add`` / ``sub`` / ``mul``. ``name_by``
labels the branch with a value the derivation chose (the payment method ``first_covering`` picked).

>>> d = derive("retail", 0, seed=3)
>>> d.branch in ("then", "else")
True
>>> derive("retail", 0, seed=None).actions == list(__import__("contam.regen.world", fromlist=["x"]).load_tasks("retail")[0]["actions"])
True
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from contam.errors import InputError
from contam.regen.world import Patch, State, dumps, load_tasks, load_world, loads

_SPEC_DIR = Path(__file__).with_name("specs")


@cache
def load_specs(domain: str) -> dict[int, dict[str, Any]]:
    """The branch specs of ``domain`` by shipped task index (``{}`` where the domain has none)."""
    path = _SPEC_DIR / f"{domain}.json"
    return read_spec_file(path) if path.exists() else {}


def read_spec_file(path: Path) -> dict[int, dict[str, Any]]:
    """A spec file's task specs by task index; a malformed one raises :class:`InputError` naming the field."""
    try:
        with open(path, encoding="utf-8") as fh:
            tasks = json.load(fh)["tasks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"cannot read the branch specs: {e}", path=path) from None
    out = {}
    for key, spec in tasks.items():
        out[int(key)] = spec
        # The shape is checked here so that a bad spec fails at load, naming its task and field.
        need = ("condition", "resample", "cases") if "cases" in spec else ("condition", "resample", "predicate", "then", "else")
        for name in need:
            if name not in spec:
                raise InputError("missing", path=path, field=f"tasks.{key}.{name}")
        for i, r in enumerate(spec["resample"]):
            if not ("product" in r and ("item" in r or "items" in r)) and not {"flight", "date", "cabin", "price"} <= set(r):
                raise InputError(
                    "expected a variant (product + item/items) or a fare (flight, date, cabin, price)",
                    path=path,
                    field=f"tasks.{key}.resample[{i}]",
                )
        for i, case in enumerate(spec.get("cases", [])):
            if "name" not in case or "edits" not in case:
                raise InputError("a case needs a name and edits", path=path, field=f"tasks.{key}.cases[{i}]")
    return out


#: Per-task branch specs, keyed by (domain, shipped task index).
SPECS: dict[tuple[str, int], dict[str, Any]] = {(d, i): spec for d in ("retail", "airline") for i, spec in load_specs(d).items()}


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
    #: Resampled prices: ``"product/item"`` (a retail variant) or ``"flight/date/cabin"`` (an airline fare).
    prices: dict[str, float] = field(default_factory=dict)

    @property
    def catalog_patch(self) -> dict[str, bool | float]:
        """The catalog edits as flat data: ``"product/item"`` -> available, ``"product/item/price"`` /
        ``"flight/date/cabin/price"`` -> price (shipped ids)."""
        return {**self.availability, **{f"{k}/price": v for k, v in self.prices.items()}}

    def fresh_patch(self, fwd: Callable[[str, str], str]) -> dict[str, bool | float]:
        """:attr:`catalog_patch` with its ids renamed by ``fwd(cls, value)`` (what an instance records:
        the shipped ids must not appear in a fresh instance)."""
        out: dict[str, bool | float] = {}
        for key, value in self.catalog_patch.items():
            parts = key.split("/")
            if len(parts) == 4:  # flight/date/cabin/price
                parts[0] = fwd("flight", parts[0])
            else:
                parts[0], parts[1] = fwd("product", parts[0]), fwd("item", parts[1])
            out["/".join(parts)] = value
        return out

    def patches(self) -> dict[tuple[str, str], Patch]:
        """The catalog edits as :class:`~contam.regen.world.State` patches (availability flags, prices)."""
        by_product: dict[str, list[tuple[str, str, Any]]] = {}
        by_flight: dict[str, list[tuple[str, str, Any]]] = {}
        for key, avail in self.availability.items():
            product, item = key.split("/")
            by_product.setdefault(product, []).append((item, "available", avail))
        for key, price in self.prices.items():
            parts = key.split("/")
            if len(parts) == 3:
                by_flight.setdefault(parts[0], []).append((parts[1], parts[2], price))
            else:
                by_product.setdefault(parts[0], []).append((parts[1], "price", price))

        def variant_patch(edits: list[tuple[str, str, Any]]) -> Patch:
            def patch(entity: dict[str, Any], fresh: Callable[[str, str], str]) -> None:
                for item, fieldname, value in edits:
                    entity["variants"][fresh("item", item)][fieldname] = value

            return patch

        def fare_patch(edits: list[tuple[str, str, Any]]) -> Patch:
            def patch(entity: dict[str, Any], fresh: Callable[[str, str], str]) -> None:
                for date, cabin, value in edits:  # dates and cabins are not renamed
                    entity["dates"][date]["prices"][cabin] = value

            return patch

        out = {("products", p): variant_patch(edits) for p, edits in by_product.items()}
        out.update({("flights", f): fare_patch(edits) for f, edits in by_flight.items()})
        return out


def has_spec(domain: str, index: int) -> bool:
    return (domain, index) in SPECS


def _matches(variant: dict[str, Any], sel: dict[str, Any]) -> bool:
    if "item" in sel and variant["item_id"] != sel["item"]:
        return False
    for k, want in sel.get("options", {}).items():
        have = variant["options"].get(k)
        if have not in want if isinstance(want, list) else have != want:  # a list: any of these values
            return False
    return True


def _variants(state: State, product_id: str) -> dict[str, Any]:
    product = state.get("products", product_id)
    if product is None:
        raise StaleSpec(f"product {product_id} not in the catalog")
    return product["variants"]


def _available(state: State, sel: dict[str, Any]) -> list[str]:
    return [v["item_id"] for v in _variants(state, sel["product"]).values() if v["available"] and _matches(v, sel)]


def _number(value: Any, state: State) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict) and set(value) == {"price"}:
        sel = value["price"]
        ((_kind, arg),) = sel.items()
        item = _resolve(sel, state)
        return float(_variants(state, arg["product"])[item]["price"])
    if isinstance(value, dict) and set(value) == {"fare"}:
        f = value["fare"]
        flight = state.get("flights", f["flight"])
        day = (flight or {}).get("dates", {}).get(f["date"])
        if day is None or f["cabin"] not in day.get("prices", {}):
            raise StaleSpec(f"no fare {f}")
        return float(day["prices"][f["cabin"]])
    if isinstance(value, dict) and set(value) == {"item_price"}:  # what the order paid for one of its items
        ref = value["item_price"]
        order = state.get("orders", ref["order"])
        item = next((i for i in (order or {}).get("items", []) if i["item_id"] == ref["item"]), None)
        if item is None:
            raise StaleSpec(f"no item {ref['item']} in order {ref['order']}")
        return float(item["price"])
    if isinstance(value, dict) and set(value) == {"mul"}:
        a, b = value["mul"]
        return _number(a, state) * _number(b, state)
    if isinstance(value, dict) and set(value) == {"add"}:
        return sum(_number(v, state) for v in value["add"])
    if isinstance(value, dict) and set(value) == {"sub"}:
        a, b = value["sub"]
        return _number(a, state) - _number(b, state)
    raise StaleSpec(f"not a number: {value!r}")


_NUMBERS = ("price", "fare", "item_price", "mul", "add", "sub")


def _amount(x: float) -> int | float:
    """A computed amount as the data writes it: an int when whole (fares), else cents."""
    return int(x) if float(x).is_integer() else round(x, 2)


def evaluate(pred: dict[str, Any], state: State) -> bool:
    """Evaluate a predicate (see the module doc) on ``state``."""
    ((op, arg),) = pred.items()
    if op == "exists_available":
        return bool(_available(state, arg))
    if op == "count_available_at_least":
        sel, k = arg
        return len(_available(state, sel)) >= k
    if op == "less_than":
        return _number(arg[0], state) < _number(arg[1], state)
    if op == "greater_than":
        return _number(arg[0], state) > _number(arg[1], state)
    if op == "all":
        return all(evaluate(p, state) for p in arg)
    if op == "any":
        return any(evaluate(p, state) for p in arg)
    if op == "not":
        return not evaluate(arg, state)
    raise StaleSpec(f"unknown predicate {op!r}")


_SELECTORS = ("select", "select_pref", "select_min_price", "select_max_price")


def _resolve(value: Any, state: State) -> Any:
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _NUMBERS:
        return _amount(_number(value, state))
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _SELECTORS:
        ((kind, sel),) = value.items()
        hits = _available(state, sel)
        if kind in ("select_min_price", "select_max_price"):
            if not hits:
                raise StaleSpec(f"selector {sel} matches no available variant")
            variants = _variants(state, sel["product"])
            pick = min if kind == "select_min_price" else max
            return pick(hits, key=lambda i: (variants[i]["price"], i))
        if kind == "select_pref":  # each preference narrows the choice where it leaves something
            variants = _variants(state, sel["product"])
            for pref in sel.get("prefer", []):
                narrowed = [i for i in hits if _matches(variants[i], {"options": pref})]
                if narrowed:
                    hits = narrowed
        if len(hits) != 1:
            raise StaleSpec(f"selector {sel} matches {len(hits)} available variants, expected 1")
        return hits[0]
    if isinstance(value, list):
        return [_resolve(v, state) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, state) for k, v in value.items()}
    return value


def _price_difference(action: dict[str, Any], state: State) -> float:
    """New minus old price of an exchange / item modification (what the customer pays)."""
    kw = action["kwargs"]
    order = state.get("orders", kw["order_id"])
    if order is None:
        raise StaleSpec(f"order {kw['order_id']} not found")
    diff = 0.0
    for old, new in zip(kw["item_ids"], kw["new_item_ids"], strict=True):
        item = next((i for i in order["items"] if i["item_id"] == old), None)
        if item is None:
            raise StaleSpec(f"item {old} not in order {kw['order_id']}")
        diff += _variants(state, item["product_id"])[new]["price"] - item["price"]
    return round(diff, 2)


def _first_covering(spec: dict[str, Any], actions: list[dict[str, Any]], state: State) -> str:
    """The first listed payment method that can pay the action's price difference (a gift card
    needs the balance; other methods always can)."""
    action = actions[spec["action"]]
    diff = _price_difference(action, state)
    order = state.get("orders", action["kwargs"]["order_id"])
    user = state.get("users", order["user_id"]) if order else None
    methods = user["payment_methods"] if user else {}
    for pm in spec["methods"]:
        m = methods.get(pm)
        if m is None:
            raise StaleSpec(f"payment method {pm} not found")
        if m["source"] != "gift_card" or m["balance"] >= diff:
            return pm
    raise StaleSpec(f"no listed payment method covers {diff}")


def _apply(actions: list[dict[str, Any]], edits: list[dict[str, Any]], state: State) -> list[dict[str, Any]]:
    out = loads(dumps(actions))  # a deep copy (JSON data), in C
    deleted: set[int] = set()
    late: list[tuple[Any, Any, dict[str, Any]]] = []
    try:
        for edit in edits:
            if "set" in edit:
                *path, last = edit["set"]
                node: Any = out
                for step in path:
                    node = node[step]
                if isinstance(edit["value"], dict) and set(edit["value"]) == {"first_covering"}:
                    late.append((node, last, edit["value"]["first_covering"]))  # after the items are final
                    continue
                node[last] = _resolve(edit["value"], state)
            elif "replace" in edit:
                out[edit["replace"]] = _resolve(edit["value"], state)
            elif "delete" in edit:
                deleted.update(edit["delete"])
            else:
                raise StaleSpec(f"unknown edit {edit}")
        for node, last, spec in late:
            node[last] = _first_covering(spec, out, state)
    except (IndexError, KeyError, TypeError) as e:
        raise StaleSpec(f"edit does not fit the shipped actions: {e!r}") from None
    return [a for i, a in enumerate(out) if i not in deleted]


def _output(expr: dict[str, Any], actions: list[dict[str, Any]], state: State) -> str:
    if "price_difference" in expr:  # the amount paid (or refunded) for action i
        return str(abs(_price_difference(actions[expr["price_difference"]], state)))
    if "price" in expr:
        return str(_number(expr, state))
    if "number" in expr:  # an amount computed from the catalog (money saved, ...)
        return str(round(_number(expr["number"], state), 2))
    if "option" in expr:
        sel, name = expr["option"]
        ((_kind, arg),) = sel.items()
        value = _variants(state, arg["product"])[_resolve(sel, state)]["options"][name]
        return value.split()[0] if expr.get("first_word") else value
    raise StaleSpec(f"unknown output {expr!r}")


def _draw(spec: dict[str, Any], rng: random.Random) -> tuple[dict[str, bool], dict[str, float]]:
    avail: dict[str, bool] = {}
    prices: dict[str, float] = {}
    for r in spec["resample"]:
        if r.get("mode") == "nonempty_subset":  # every non-empty subset of the items equally likely
            items = r["items"]
            mask = rng.randrange(1, 2 ** len(items))
            for b, item in enumerate(items):
                avail[f"{r['product']}/{item}"] = bool(mask >> b & 1)
        elif "flight" in r:  # an airline fare in whole dollars, uniform on [lo, hi]
            lo, hi = r["price"]
            prices[f"{r['flight']}/{r['date']}/{r['cabin']}"] = rng.randrange(lo, hi + 1)
        elif "price" in r:  # a price in cents, uniform on [lo, hi]
            lo, hi = r["price"]
            prices[f"{r['product']}/{r['item']}"] = rng.randrange(round(lo * 100), round(hi * 100) + 1) / 100
            if "p_available" in r:
                avail[f"{r['product']}/{r['item']}"] = rng.random() < r["p_available"]
        else:
            avail[f"{r['product']}/{r['item']}"] = rng.random() < r.get("p_available", 0.5)
    return avail, prices


def derive(domain: str, index: int, seed: int | None) -> Derivation:
    """Re-derive task ``index``'s program at ``seed`` (``None``: the shipped catalog, unpatched)."""
    spec = SPECS.get((domain, index))
    shipped = list(load_tasks(domain)[index]["actions"])
    if spec is None:
        return Derivation(None, {}, shipped, "")
    avail: dict[str, bool] = {}
    prices: dict[str, float] = {}
    if seed is not None:
        rng = random.Random(int.from_bytes(hashlib.sha256(f"branch|{domain}|{index}|{seed}".encode()).digest()[:8], "big"))
        avail, prices = _draw(spec, rng)
    d = Derivation(None, avail, [], "", prices=prices)
    state = State(load_world(domain), None, d.patches())
    if "cases" in spec:
        case = next((c for c in spec["cases"] if "when" not in c or evaluate(c["when"], state)), None)
        if case is None:
            raise StaleSpec(f"no case of task {index} holds")
        branch, edits = case["name"], case["edits"]
    else:
        branch = "then" if evaluate(spec["predicate"], state) else "else"
        edits = spec[branch]
    actions = _apply(shipped, [*edits, *spec.get("finally", [])], state)
    if "name_by" in spec:  # the decision is made by a value (a payment method that covers the amount)
        node: Any = actions
        for step in spec["name_by"]:
            node = node[step]
        branch = f"{branch}:{node}"
    outputs = None
    out_spec = spec.get("outputs")
    if out_spec and "prices" in out_spec:  # e.g. the prices of every available option, as the user asks for them
        sel = out_spec["prices"]
        variants = _variants(state, sel["product"])
        outputs = [str(p) for p in sorted(variants[i]["price"] for i in _available(state, sel))]
    elif out_spec and "list" in out_spec:
        outputs = [_output(e, actions, state) for e in out_spec["list"]]
    key = hashlib.sha256(json.dumps(sorted(d.catalog_patch.items())).encode()).hexdigest()[:16] if d.catalog_patch else ""
    return Derivation(branch, avail, actions, key, outputs, prices)
