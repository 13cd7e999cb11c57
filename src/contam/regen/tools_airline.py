"""The τ-bench airline tools, written from the semantics the data and gold actions imply.

Same contract as :mod:`contam.regen.tools_retail`: read tools return JSON text, write tools
validate first and then change the state, raising a typed ``ToolError`` on invalid calls.

>>> from contam.regen.world import State, load_world
>>> s = State(load_world("airline"))
>>> cancel_reservation(s, reservation_id="NOPE00")
Traceback (most recent call last):
...
contam.regen.tools_retail.NotFound: reservation not found
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from datetime import date as _date
from datetime import timedelta
from typing import Any

from contam.regen.tools_retail import (
    InsufficientBalance,
    InvalidArgument,
    NotFound,
    WrongStatus,
    _dump,
    _user,
    calculate,
    lookup,
    think,
    transfer_to_human_agents,
)
from contam.regen.world import State

# Booking fixed fees (the airline policy's numbers): travel insurance per passenger, per extra bag.
INSURANCE_FEE = 30
BAG_FEE = 50
#: Codes a new booking takes, in order (the first one not already used).
NEW_RESERVATION_CODES = ("HATHAT", "HATHAU", "HATHAV")
#: The ids τ-bench's send_certificate gives, in order (the first one the user does not hold);
#: with all three held it adds nothing.
TAU_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
#: τ-bench's list_all_airports answer (a fixed table, not read from the flights).
AIRPORTS = {
    "SFO": "San Francisco",
    "JFK": "New York",
    "LAX": "Los Angeles",
    "ORD": "Chicago",
    "DFW": "Dallas",
    "DEN": "Denver",
    "SEA": "Seattle",
    "ATL": "Atlanta",
    "MIA": "Miami",
    "BOS": "Boston",
    "PHX": "Phoenix",
    "IAH": "Houston",
    "LAS": "Las Vegas",
    "MCO": "Orlando",
    "EWR": "Newark",
    "CLT": "Charlotte",
    "MSP": "Minneapolis",
    "DTW": "Detroit",
    "PHL": "Philadelphia",
    "LGA": "LaGuardia",
}


def _reservation(st: State, reservation_id: str, edit: bool = False) -> dict[str, Any]:
    return lookup(st, "reservations", reservation_id, "reservation", edit)


def _flight_on(st: State, flight_number: str, day: str) -> tuple[dict[str, Any], dict[str, Any]]:
    flight = st.get("flights", flight_number)
    if flight is None:
        raise NotFound(f"flight {flight_number} not found")
    data = flight["dates"].get(day)
    if data is None:
        raise NotFound(f"flight {flight_number} not found on date {day}")
    if data["status"] != "available":
        raise WrongStatus(f"flight {flight_number} not available on date {day}")
    return flight, data


def _new_leg(st: State, leg: dict[str, Any], flight: dict[str, Any], price: Any) -> dict[str, Any]:
    """A reservation leg. τ-bench copies the agent's leg as given (extra keys kept) and adds price,
    origin and destination; ``fixed`` stores those five fields only."""
    out = {"flight_number": leg["flight_number"], "date": leg["date"]} if st.fixed else copy.deepcopy(leg)
    out.update(price=price, origin=flight["origin"], destination=flight["destination"])
    return out


def _money(st: State, amount: Any) -> Any:
    """A gift-card balance after a charge: τ-bench stores the raw float, ``fixed`` rounds to cents."""
    return round(amount, 2) if st.fixed else amount


def _charge_method(st: State, user: dict[str, Any], payment_id: str) -> dict[str, Any]:
    method = user["payment_methods"].get(payment_id)
    if method is None:
        raise NotFound("payment method not found")
    return method


# ----------------------------------------------------------------------------- read tools
def get_user_details(st: State, /, user_id: str) -> str:
    text = st.text("users", user_id)
    if text is None:
        raise NotFound("user not found")
    return text


def get_reservation_details(st: State, /, reservation_id: str) -> str:
    text = st.text("reservations", reservation_id)
    if text is None:
        # τ-bench's message for a missing reservation says "user" (a copy-paste slip there).
        raise NotFound("reservation not found" if st.fixed else "user not found")
    return text


def list_all_airports(st: State, /) -> str:
    return _dump(AIRPORTS)


def _leg(flight: dict[str, Any], data: dict[str, Any], day: str | None = None) -> dict[str, Any]:
    out = {k: v for k, v in flight.items() if k != "dates"}
    out.update(data)
    if day is not None:
        out["date"] = day
    return out


def _indexed_flight(st: State, orig_fn: str) -> dict[str, Any]:
    """The live flight behind a number from the world's route index (shipped, so always present)."""
    flight = st.get("flights", st.to_fresh("flight", orig_fn))
    if flight is None:  # the index is built from the shipped flights table: a broken world
        raise RuntimeError(f"indexed flight {orig_fn} is missing from the state")
    return flight


def search_direct_flight(st: State, /, origin: str, destination: str, date: str) -> str:
    found = []
    for orig_fn in st.world.index["route"].get((origin, destination), []):
        flight = _indexed_flight(st, orig_fn)
        data = flight["dates"].get(date)
        if data is not None and data["status"] == "available":
            found.append(_leg(flight, data))
    return _dump(found)


def search_onestop_flight(st: State, /, origin: str, destination: str, date: str) -> str:
    if not st.fixed:
        return _tau_onestop(st, origin, destination, date)
    found = []
    for fn1 in st.world.index["by_origin"].get(origin, []):
        f1 = _indexed_flight(st, fn1)
        d1 = f1["dates"].get(date)
        if d1 is None or d1["status"] != "available" or f1["destination"] == destination:
            continue
        day2 = date
        if "+1" in f1["scheduled_arrival_time_est"]:
            day2 = (_date.fromisoformat(date) + timedelta(days=1)).isoformat()
        for fn2 in st.world.index["route"].get((f1["destination"], destination), []):
            f2 = _indexed_flight(st, fn2)
            d2 = f2["dates"].get(day2)
            if d2 is None or d2["status"] != "available":
                continue
            if "+1" not in f1["scheduled_arrival_time_est"] and f1["scheduled_arrival_time_est"] > f2["scheduled_departure_time_est"]:
                continue
            found.append([_leg(f1, d1, date), _leg(f2, d2, day2)])
    return _dump(found)


def _tau_onestop(st: State, origin: str, destination: str, date: str) -> str:
    """τ-bench's one-stop search, quirks included: the next day is ``2024-05-{day + 1}`` (no zero
    padding, no month end), the first leg must arrive (as text) no later than the second departs
    even across midnight, and the second leg shows its seats, prices and status on the *first*
    leg's date (a second leg without that date fails the whole search, as τ-bench's KeyError does)."""
    found = []
    for fn1 in st.world.index["by_origin"].get(origin, []):
        f1 = _indexed_flight(st, fn1)
        arrival = f1["scheduled_arrival_time_est"]
        day2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
        for fn2 in st.world.index["route"].get((f1["destination"], destination), []):
            f2 = _indexed_flight(st, fn2)
            if arrival > f2["scheduled_departure_time_est"]:
                continue
            d1, d2 = f1["dates"].get(date), f2["dates"].get(day2)
            if d1 is None or d2 is None or d1["status"] != "available" or d2["status"] != "available":
                continue
            shown = f2["dates"].get(date)
            if shown is None:
                raise InvalidArgument(repr(date))
            found.append([_leg(f1, d1, date), _leg(f2, shown, day2)])
    return _dump(found)


# ---------------------------------------------------------------------------- write tools
def book_reservation(
    st: State,
    /,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, Any]],
    payment_methods: list[dict[str, Any]],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: str,
) -> str:
    user = _user(st, user_id, edit=True)
    code = next((c for c in NEW_RESERVATION_CODES if not st.exists("reservations", c)), None)
    if code is None:
        if st.fixed:
            raise InvalidArgument("no reservation code left")
        code = NEW_RESERVATION_CODES[-1]  # τ-bench's fourth booking overwrites HATHAV
    legs, total = [], 0  # an int total, as in τ-bench (it shows in the mismatch message)
    for leg in flights:
        flight, data = _flight_on(st, leg["flight_number"], leg["date"])
        if data["available_seats"][cabin] < len(passengers):
            raise WrongStatus(f"not enough seats on flight {leg['flight_number']}")
        price = data["prices"][cabin]
        legs.append(_new_leg(st, leg, flight, price))
        total += price * len(passengers)
    if insurance == "yes":
        total += INSURANCE_FEE * len(passengers)
    total += BAG_FEE * nonfree_baggages
    for pm in payment_methods:
        method = user["payment_methods"].get(pm["payment_id"])
        if method is None:
            raise NotFound(f"payment method {pm['payment_id']} not found")
        if method["source"] in ("gift_card", "certificate") and method["amount"] < pm["amount"]:
            raise InsufficientBalance(f"not enough balance in payment method {pm['payment_id']}")
    paid = sum(pm["amount"] for pm in payment_methods)
    # τ-bench compares the float sums exactly; ``fixed`` compares them in cents.
    if (round(paid, 2) != round(total, 2)) if st.fixed else (paid != total):
        raise InvalidArgument(f"payment amount does not add up, total price is {total}, but paid {paid}")
    for pm in payment_methods:
        method = user["payment_methods"][pm["payment_id"]]
        if method["source"] == "gift_card":
            method["amount"] = _money(st, method["amount"] - pm["amount"])
        elif method["source"] == "certificate":
            del user["payment_methods"][pm["payment_id"]]
    reservation = {
        "reservation_id": code,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": legs,
        "passengers": copy.deepcopy(passengers),
        "payment_history": copy.deepcopy(payment_methods),
        "created_at": "2024-05-15T15:00:00",
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    st.put("reservations", code, reservation)
    user["reservations"].append(code)
    return _dump(reservation)


def cancel_reservation(st: State, /, reservation_id: str) -> str:
    res = _reservation(st, reservation_id, edit=True)
    # τ-bench cancels a cancelled reservation again (refunding every payment, refunds included, once more).
    if st.fixed and res.get("status") == "cancelled":
        raise WrongStatus("reservation already cancelled")
    refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in res["payment_history"]]
    res["payment_history"].extend(refunds)
    res["status"] = "cancelled"
    return _dump(res)


def send_certificate(st: State, /, user_id: str, amount: float) -> str:
    user = _user(st, user_id, edit=True)
    methods = user["payment_methods"]
    if st.fixed:
        # A deterministic id from the call (amount, how many methods the user holds), the next
        # free one on a clash: never runs out, and the same call in the shipped and in a re-keyed
        # world mints the same id (ids are not inputs, so the audit's transport leaves them be).
        n = len(methods)
        digest = int(hashlib.sha256(f"certificate|{amount}|{n}".encode()).hexdigest(), 16) % 9000000
        payment_id = f"certificate_{1000000 + digest}"
        while payment_id in methods:
            digest = (digest + 1) % 9000000
            payment_id = f"certificate_{1000000 + digest}"
    else:
        payment_id = next((c for c in TAU_CERTIFICATE_IDS if c not in methods), None)
        if payment_id is None:  # τ-bench adds nothing and returns None (an empty observation here)
            return ""
    methods[payment_id] = {"source": "certificate", "amount": amount, "id": payment_id}
    return f"Certificate {payment_id} added to user {user_id} with amount {amount}."


def update_reservation_baggages(st: State, /, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str) -> str:
    res = _reservation(st, reservation_id, edit=True)
    user = _user(st, res["user_id"], edit=True)
    price = BAG_FEE * max(0, nonfree_baggages - res["nonfree_baggages"])
    method = _charge_method(st, user, payment_id)
    if method["source"] == "certificate":
        raise InvalidArgument("certificate cannot be used to update reservation")
    if method["source"] == "gift_card" and method["amount"] < price:
        raise InsufficientBalance("gift card balance is not enough")
    res["total_baggages"] = total_baggages
    res["nonfree_baggages"] = nonfree_baggages
    if method["source"] == "gift_card":
        method["amount"] = _money(st, method["amount"] - price)
    if price:
        res["payment_history"].append({"payment_id": payment_id, "amount": price})
    return _dump(res)


def update_reservation_flights(st: State, /, reservation_id: str, cabin: str, flights: list[dict[str, Any]], payment_id: str) -> str:
    res = _reservation(st, reservation_id, edit=True)
    user = _user(st, res["user_id"], edit=True)
    n = len(res["passengers"])
    legs, total = [], 0  # int, as in τ-bench: a whole-dollar difference is stored as an int
    for leg in flights:
        kept = next(
            (
                f
                for f in res["flights"]
                if f["flight_number"] == leg["flight_number"] and f["date"] == leg["date"] and cabin == res["cabin"]
            ),
            None,
        )
        if kept is not None:  # an unchanged leg keeps the price paid for it
            legs.append(_new_leg(st, leg, kept, kept["price"]))
            total += kept["price"] * n
            continue
        flight, data = _flight_on(st, leg["flight_number"], leg["date"])
        if data["available_seats"][cabin] < n:
            raise WrongStatus(f"not enough seats on flight {leg['flight_number']}")
        legs.append(_new_leg(st, leg, flight, data["prices"][cabin]))
        total += data["prices"][cabin] * n
    total -= sum(f["price"] for f in res["flights"]) * n
    method = _charge_method(st, user, payment_id)
    if method["source"] == "certificate":
        raise InvalidArgument("certificate cannot be used to update reservation")
    if method["source"] == "gift_card" and method["amount"] < total:
        raise InsufficientBalance("gift card balance is not enough")
    if method["source"] == "gift_card":
        method["amount"] = _money(st, method["amount"] - total)
    res["flights"] = legs
    if total != 0:
        res["payment_history"].append({"payment_id": payment_id, "amount": total})
    if st.fixed:
        # τ-bench leaves the reservation's cabin as it was, so a cabin change is recorded only in
        # the legs' prices; ``fixed`` records the new cabin.
        res["cabin"] = cabin
    return _dump(res)


def update_reservation_passengers(st: State, /, reservation_id: str, passengers: list[dict[str, Any]]) -> str:
    res = _reservation(st, reservation_id, edit=True)
    if len(passengers) != len(res["passengers"]):
        raise InvalidArgument("number of passengers does not match")
    res["passengers"] = copy.deepcopy(passengers)
    return _dump(res)


TOOLS: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        get_user_details,
        get_reservation_details,
        list_all_airports,
        search_direct_flight,
        search_onestop_flight,
        book_reservation,
        cancel_reservation,
        send_certificate,
        update_reservation_baggages,
        update_reservation_flights,
        update_reservation_passengers,
        calculate,
        think,
        transfer_to_human_agents,
    )
}

WRITE_TOOLS = frozenset(
    {
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    }
)
