"""Worlds, tools and the replay oracle on the real shipped τ-bench data."""

from __future__ import annotations

import json

import pytest

from contam.regen import tools_airline, tools_retail
from contam.regen.calc import evaluate
from contam.regen.replay import ReplayOracle, run_actions
from contam.regen.tools_retail import InsufficientBalance, NotFound, WrongStatus
from contam.regen.world import State, load_tasks, load_world


def test_shipped_replay_counts():
    # The faithfulness baseline: which shipped references run clean (see the README section).
    retail = [ReplayOracle("retail").replay(t["actions"]) for t in load_tasks("retail")]
    airline = [ReplayOracle("airline").replay(t["actions"]) for t in load_tasks("airline")]
    assert len(retail) == 115 and len(airline) == 50
    assert sum(r.clean for r in retail) == 96
    assert sum(r.clean for r in airline) == 50
    # task 2 asks for a product by an item id first; task 64 tries to exchange a pending order
    assert retail[2].errors[1] == "not_found"
    assert retail[64].errors[6] == "wrong_status"


def test_replay_reproduces_goal_hash_and_grades():
    oracle = ReplayOracle("retail")
    task = load_tasks("retail")[0]
    first, second = oracle.replay(task["actions"]), oracle.replay(task["actions"])
    assert first.goal_hash == second.goal_hash
    assert first.goal_hash != oracle.fresh_state().state_hash()  # the exchange changes the world
    assert oracle.grade(task["actions"], first.goal_hash, [], []).passed
    # an agent that stops before the write does not reach the goal
    assert not oracle.grade(task["actions"][:-1], first.goal_hash, [], []).passed
    # required outputs must be said (τ-bench: case-insensitive, commas dropped)
    t2 = load_tasks("retail")[2]
    goal = oracle.replay(t2["actions"]).goal_hash
    assert not oracle.grade(t2["actions"], goal, t2["outputs"], ["I cannot tell"]).passed
    assert oracle.grade(t2["actions"], goal, t2["outputs"], [f"There are {t2['outputs'][0]} options"]).passed


def test_hash_is_order_insensitive_and_reads_are_free():
    w = load_world("retail")
    a, b = State(w), State(w)
    tools_retail.get_order_details(a, order_id="#W2378156")
    tools_retail.get_user_details(b, user_id="yusuf_rossi_9620")
    assert a.state_hash() == b.state_hash() == State(w).state_hash()


def test_retail_write_tools_semantics():
    w = load_world("retail")
    s = State(w)
    pending = next(
        o
        for o in w.tables["orders"].values()
        if o["status"] == "pending"
        and w.tables["users"][o["user_id"]]["payment_methods"][o["payment_history"][0]["payment_method_id"]]["source"] == "gift_card"
    )
    uid, pm = pending["user_id"], pending["payment_history"][0]["payment_method_id"]
    before = w.tables["users"][uid]["payment_methods"][pm]["balance"]
    out = json.loads(tools_retail.cancel_pending_order(s, order_id=pending["order_id"], reason="no longer needed"))
    assert out["status"] == "cancelled" and out["payment_history"][-1]["transaction_type"] == "refund"
    assert s.get("users", uid)["payment_methods"][pm]["balance"] == round(before + pending["payment_history"][0]["amount"], 2)
    with pytest.raises(WrongStatus):
        tools_retail.cancel_pending_order(s, order_id=pending["order_id"], reason="no longer needed")
    with pytest.raises(NotFound):
        tools_retail.get_order_details(s, order_id="#W0000000")


def test_failed_write_leaves_state_unchanged():
    # task 106's shipped reference: the gift card cannot cover the price difference
    oracle = ReplayOracle("retail")
    s = oracle.fresh_state()
    act = load_tasks("retail")[106]["actions"][0]
    with pytest.raises(InsufficientBalance):
        tools_retail.exchange_delivered_order_items(s, **act["kwargs"])
    assert s.state_hash() == oracle.fresh_state().state_hash()
    assert s.diff(full=True) == []


def test_airline_booking_and_cancel():
    s = State(load_world("airline"))
    task = load_tasks("airline")[0]
    run = run_actions("airline", s, task["actions"])
    assert run.clean
    res = s.get("reservations", "HATHAT")
    assert res is not None and res["user_id"] == "mia_li_3668"
    assert "certificate_7504069" not in s.get("users", "mia_li_3668")["payment_methods"]  # a certificate is used up
    json.loads(tools_airline.cancel_reservation(s, reservation_id="HATHAT"))
    assert s.get("reservations", "HATHAT")["status"] == "cancelled"
    assert s.diff() == s.diff(full=True)


def test_calculate_is_safe():
    assert evaluate("2 * (3 + 4) / 7") == 2.0
    for bad in ("__import__('os').system('x')", "open('f')", "1 if 1 else 2", "2 ** 1000"):
        with pytest.raises(ValueError):
            evaluate(bad)
