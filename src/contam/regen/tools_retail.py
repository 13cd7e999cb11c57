"""The τ-bench retail tools, written from the semantics the data and gold actions imply.

Read tools return JSON text; write tools validate everything first and only then change
the :class:`~contam.regen.world.State`, raising a typed :class:`ToolError` on an invalid
call (so a failed call never half-changes the world). Where τ-bench's exact behaviour is not
implied by the data we follow its published tool descriptions; the README lists those
guesses.

>>> from contam.regen.world import State, load_world
>>> s = State(load_world("retail"))
>>> find_user_id_by_name_zip(s, first_name="Yusuf", last_name="Rossi", zip="19122")
'yusuf_rossi_9620'
>>> cancel_pending_order(s, order_id="#W2378156", reason="no longer needed")
Traceback (most recent call last):
...
contam.regen.tools_retail.WrongStatus: non-pending order cannot be cancelled
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from contam.regen.calc import evaluate
from contam.regen.world import State, dumps


class ToolError(Exception):
    """An invalid tool call; the world is left unchanged. ``kind`` names the error class."""

    kind = "invalid"


class NotFound(ToolError):
    kind = "not_found"


class WrongStatus(ToolError):
    kind = "wrong_status"


class InsufficientBalance(ToolError):
    kind = "insufficient_balance"


class InvalidArgument(ToolError):
    kind = "invalid_argument"


def _dump(obj: Any) -> str:
    return dumps(obj)


def lookup(st: State, table: str, key: str, what: str, edit: bool = False) -> dict[str, Any]:
    """The row ``key`` of ``table`` (a writable copy when ``edit``); ``NotFound("<what> not found")`` if absent."""
    row = st.edit(table, key) if edit else st.get(table, key)
    if row is None:
        raise NotFound(f"{what} not found")
    return row


def _order(st: State, order_id: str, edit: bool = False) -> dict[str, Any]:
    return lookup(st, "orders", order_id, "order", edit)


def _user(st: State, user_id: str, edit: bool = False) -> dict[str, Any]:
    return lookup(st, "users", user_id, "user", edit)


def _payment(st: State, user_id: str, payment_method_id: str, edit: bool = False) -> dict[str, Any]:
    method = _user(st, user_id, edit)["payment_methods"].get(payment_method_id)
    if method is None:
        raise NotFound("payment method not found")
    return method


def _check_items(order: dict[str, Any], item_ids: list[str]) -> None:
    have = Counter(i["item_id"] for i in order["items"])
    for item_id, n in Counter(item_ids).items():
        if have[item_id] < n:
            raise NotFound(f"{item_id} not found")


def _price_diff(st: State, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]) -> tuple[float, list]:
    if len(item_ids) != len(new_item_ids):
        raise InvalidArgument("the number of items to be exchanged should match")
    diff, plan = 0.0, []
    for item_id, new_id in zip(item_ids, new_item_ids, strict=True):
        item = next(i for i in order["items"] if i["item_id"] == item_id)
        product = st.get("products", item["product_id"])
        variant = product["variants"].get(new_id) if product else None
        if variant is None or not variant["available"]:
            raise NotFound(f"new item {new_id} not found or available")
        diff += variant["price"] - item["price"]
        plan.append((item_id, variant))
    return diff, plan  # the raw float sum; each caller rounds (or not) as τ-bench does


# ----------------------------------------------------------------------------- read tools
def find_user_id_by_email(st: State, /, email: str) -> str:
    # τ-bench compares emails case-insensitively; every stored email (shipped or minted) is lower case.
    orig = st.to_orig("email", email) or st.to_orig("email", email.lower())
    uid = st.world.index["email"].get(orig.lower()) if orig else None
    if uid is None:
        raise NotFound("user not found")
    return st.to_fresh("user", uid)


def find_user_id_by_name_zip(st: State, /, first_name: str, last_name: str, zip: str) -> str:
    # Names match case-insensitively; the map renames capitalised name tokens.
    first = st.to_orig("name", first_name.strip().capitalize())
    last = st.to_orig("name", last_name.strip().capitalize())
    z = st.to_orig("zip", zip.strip())
    uid = st.world.index["name_zip"].get(((first or "").lower(), (last or "").lower(), z))
    if uid is None:
        raise NotFound("user not found")
    return st.to_fresh("user", uid)


def get_user_details(st: State, /, user_id: str) -> str:
    text = st.text("users", user_id)
    if text is None:
        raise NotFound("user not found")
    return text


def get_order_details(st: State, /, order_id: str) -> str:
    text = st.text("orders", order_id)
    if text is None:
        raise NotFound("order not found")
    return text


def get_product_details(st: State, /, product_id: str) -> str:
    text = st.text("products", product_id)
    if text is None:
        raise NotFound("product not found")
    return text


def list_all_product_types(st: State, /) -> str:
    # Product names are never renamed or patched, so the shipped catalog gives the listing.
    names = {p["name"]: st.to_fresh("product", pid) for pid, p in st.world.tables["products"].items()}
    return _dump(dict(sorted(names.items())))


def calculate(st: State, /, expression: str) -> str:
    try:
        return str(round(evaluate(expression), 2))
    except ValueError as e:
        raise InvalidArgument(str(e)) from None


def think(st: State, /, thought: str) -> str:
    return ""


def transfer_to_human_agents(st: State, /, summary: str) -> str:
    return "Transfer successful"


# ---------------------------------------------------------------------------- write tools
def cancel_pending_order(st: State, /, order_id: str, reason: str) -> str:
    order = _order(st, order_id, edit=True)
    if order["status"] != "pending":
        raise WrongStatus("non-pending order cannot be cancelled")
    if reason not in ("no longer needed", "ordered by mistake"):
        raise InvalidArgument("invalid reason")
    refunds = []
    for pay in order["payment_history"]:
        refunds.append({"transaction_type": "refund", "amount": pay["amount"], "payment_method_id": pay["payment_method_id"]})
        method = _user(st, order["user_id"], edit=True)["payment_methods"].get(pay["payment_method_id"])
        if method is not None and method["source"] == "gift_card":
            method["balance"] = round(method["balance"] + pay["amount"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return _dump(order)


def modify_pending_order_address(
    st: State, /, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> str:
    order = _order(st, order_id, edit=True)
    if order["status"] != "pending":
        raise WrongStatus("non-pending order cannot be modified")
    order["address"] = {"address1": address1, "address2": address2, "city": city, "state": state, "country": country, "zip": zip}
    return _dump(order)


def modify_user_address(st: State, /, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> str:
    user = _user(st, user_id, edit=True)
    user["address"] = {"address1": address1, "address2": address2, "city": city, "state": state, "country": country, "zip": zip}
    return _dump(user)


def modify_pending_order_payment(st: State, /, order_id: str, payment_method_id: str) -> str:
    order = _order(st, order_id, edit=True)
    if order["status"] != "pending":
        raise WrongStatus("non-pending order cannot be modified")
    method = _payment(st, order["user_id"], payment_method_id, edit=True)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise InvalidArgument("there should be exactly one payment for a pending order")
    if history[0]["payment_method_id"] == payment_method_id:
        raise InvalidArgument("the new payment method should be different from the current one")
    amount = history[0]["amount"]
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise InsufficientBalance("insufficient gift card balance to pay for the order")
    old = _user(st, order["user_id"], edit=True)["payment_methods"].get(history[0]["payment_method_id"])
    history.append({"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id})
    history.append({"transaction_type": "refund", "amount": amount, "payment_method_id": history[0]["payment_method_id"]})
    if method["source"] == "gift_card":
        method["balance"] = round(method["balance"] - amount, 2)
    if old is not None and old["source"] == "gift_card":
        old["balance"] = round(old["balance"] + amount, 2)
    return _dump(order)


def modify_pending_order_items(st: State, /, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> str:
    order = _order(st, order_id, edit=True)
    if order["status"] != "pending":
        raise WrongStatus("non-pending order cannot be modified")
    _check_items(order, item_ids)
    diff, plan = _price_diff(st, order, item_ids, new_item_ids)
    if st.fixed:
        # τ-bench records (and checks the gift card against) the raw float sum of the price
        # differences, e.g. 0.04999999999999716 for a 5-cent difference; ``fixed`` rounds to cents.
        diff = round(diff, 2)
    method = _payment(st, order["user_id"], payment_method_id, edit=True)
    if method["source"] == "gift_card" and method["balance"] < diff:
        raise InsufficientBalance("insufficient gift card balance to pay for the new item")
    order["payment_history"].append(
        {"transaction_type": "payment" if diff > 0 else "refund", "amount": abs(diff), "payment_method_id": payment_method_id}
    )
    if method["source"] == "gift_card":
        method["balance"] = round(method["balance"] - diff, 2)
    for item_id, variant in plan:
        item = next(i for i in order["items"] if i["item_id"] == item_id)
        item["item_id"] = variant["item_id"]
        item["price"] = variant["price"]
        item["options"] = dict(variant["options"])
    order["status"] = "pending (item modified)"
    return _dump(order)


def exchange_delivered_order_items(
    st: State, /, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> str:
    order = _order(st, order_id, edit=True)
    if order["status"] != "delivered":
        raise WrongStatus("non-delivered order cannot be exchanged")
    _check_items(order, item_ids)
    diff, _ = _price_diff(st, order, item_ids, new_item_ids)
    diff = round(diff, 2)  # an exchange rounds in τ-bench too
    method = _payment(st, order["user_id"], payment_method_id, edit=True)
    if method["source"] == "gift_card" and method["balance"] < diff:
        raise InsufficientBalance("insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff
    return _dump(order)


def return_delivered_order_items(st: State, /, order_id: str, item_ids: list[str], payment_method_id: str) -> str:
    order = _order(st, order_id, edit=True)
    if order["status"] != "delivered":
        raise WrongStatus("non-delivered order cannot be returned")
    method = _payment(st, order["user_id"], payment_method_id, edit=True)
    if method["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise InvalidArgument("payment method should be either the original payment method or a gift card")
    have = Counter(i["item_id"] for i in order["items"])
    if any(have[i] < n for i, n in Counter(item_ids).items()):
        raise NotFound("some item not found")  # τ-bench's message for a return (no item named)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return _dump(order)


TOOLS: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        find_user_id_by_email,
        find_user_id_by_name_zip,
        get_user_details,
        get_order_details,
        get_product_details,
        list_all_product_types,
        calculate,
        think,
        transfer_to_human_agents,
        cancel_pending_order,
        modify_pending_order_address,
        modify_user_address,
        modify_pending_order_payment,
        modify_pending_order_items,
        exchange_delivered_order_items,
        return_delivered_order_items,
    )
}

#: Tools that can change the state (the rest only read).
WRITE_TOOLS = frozenset(
    {
        "cancel_pending_order",
        "modify_pending_order_address",
        "modify_user_address",
        "modify_pending_order_payment",
        "modify_pending_order_items",
        "exchange_delivered_order_items",
        "return_delivered_order_items",
    }
)
