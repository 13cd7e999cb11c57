"""Generation + audit of every task at several seeds; branch selection by predicate."""

from __future__ import annotations

import pytest

from contam.regen import branch
from contam.regen.audit import Auditor, RegenAuditReport
from contam.regen.generate import generate, world_state
from contam.regen.replay import ReplayOracle
from contam.regen.world import State, load_tasks, load_world


def test_every_task_at_three_seeds_is_valid():
    auditor = Auditor()
    rows = [auditor.audit(d, i, s) for s in (0, 1, 2) for d in ("retail", "airline") for i in range(len(load_tasks(d)))]
    report = RegenAuditReport.of(rows)
    assert report.n == 3 * 165
    assert report.n_invalid == 0, report.invalid_examples


def test_determinism_and_seed_sensitivity():
    a, b = generate("retail", 5, 42), generate("retail", 5, 42)
    assert a == b and a.goal_hash == b.goal_hash
    c = generate("retail", 5, 43)
    assert c.instruction != a.instruction and c.goal_hash != a.goal_hash


def test_fresh_goal_is_reached_by_fresh_reference_only():
    inst = generate("retail", 0, 7)
    oracle = ReplayOracle("retail")
    # the re-keyed reference reaches the goal from the instance's world ...
    from contam.regen.replay import run_actions

    assert run_actions("retail", world_state(inst), inst.actions).goal_hash == inst.goal_hash
    # ... the shipped literal actions do not (they name ids that no longer exist)
    shipped = load_tasks("retail")[0]["actions"]
    assert run_actions("retail", world_state(inst), shipped).goal_hash != inst.goal_hash
    assert oracle.replay(shipped).goal_hash != inst.goal_hash


def test_branch_spec_reproduces_shipped_and_follows_the_predicate():
    for idx in (0, 1, 29, 30):
        assert branch.derive("retail", idx, None).actions == list(load_tasks("retail")[idx]["actions"])
    seen = set()
    for seed in range(40):
        d = branch.derive("retail", 0, seed)
        seen.add(d.branch)
        # the branch is what the predicate says on the reseeded catalog, not what the seed "chose"
        state = State(load_world("retail"), None, d.patches())
        fires = branch.evaluate(branch.SPECS[("retail", 0)]["predicate"], state)
        assert d.branch == ("then" if fires else "else")
        new = d.actions[4]["kwargs"]["new_item_ids"][0]
        assert new == ("9025753381" if fires else "7706410293")  # clicky+RGB+full, else clicky+no backlight
    assert seen == {"then", "else"}


def test_audit_catches_a_wrong_goal_and_a_wrong_error_pattern():
    import dataclasses

    from contam.regen.generate import generate_full, world_map

    km = world_map("retail", 3)
    inst, skm, deriv = generate_full("retail", 0, 3, km)
    auditor = Auditor(determinism=False)
    assert auditor.check(inst, skm, deriv, km).valid
    # a goal delta that is not the re-keyed shipped goal (the exchange went to another item)
    table, key, text = inst.goal_delta[0]
    wrong = dataclasses.replace(inst, goal_delta=[[table, key, text.replace('"exchange requested"', '"delivered"')]])
    row = auditor.check(wrong, skm, deriv, km)
    assert not row.solvable and not row.valid
    # an error pattern that differs from the shipped one at some position
    wrong = dataclasses.replace(inst, errors=["not_found", *inst.errors[1:]])
    assert not auditor.check(wrong, skm, deriv, km).faithful


def test_branch_outputs_are_rederived():
    # task 29: "choose the most expensive shorter bamboo skateboard; tell me all options and prices"
    assert branch.derive("retail", 29, None).outputs == list(load_tasks("retail")[29]["outputs"])
    for seed in range(12):
        d = branch.derive("retail", 29, seed)
        prices = {"6843647669": 180.1, "6673921677": 189.57, "8176740019": 208.6}
        avail = [i for i in prices if d.availability[f"1968349452/{i}"]]
        assert avail, "the resampler keeps at least one option"
        assert d.outputs == [str(p) for p in sorted(prices[i] for i in avail)]
        assert d.actions[4]["kwargs"]["new_item_ids"] == [max(avail, key=prices.__getitem__)]
        assert generate("retail", 29, seed).outputs == d.outputs


def test_stale_spec_is_loud():
    state = State(load_world("retail"))
    with pytest.raises(branch.StaleSpec):
        branch._resolve({"select": {"product": "1656367028", "options": {"switch type": "clicky", "size": "huge"}}}, state)


def test_audit_catches_the_users_zip_in_an_action_string_but_not_in_an_amount():
    import dataclasses

    from contam.regen.generate import generate_full, world_map

    km = world_map("retail", 4)
    inst, skm, deriv = generate_full("retail", 3, 4, km)  # task 3: the user finds herself by name + zip
    auditor = Auditor(determinism=False)
    assert auditor.check(inst, skm, deriv, km).valid
    zip_code = load_world("retail").tables["users"][load_tasks("retail")[3]["user_id"]]["address"]["zip"]
    act = inst.actions[0]
    assert "zip" in act["kwargs"]
    leaked = [{**act, "kwargs": {**act["kwargs"], "zip": zip_code}}, *inst.actions[1:]]
    row = auditor.check(dataclasses.replace(inst, actions=leaked), skm, deriv, km)
    assert not row.covered and any("zip/last-four" in p for p in row.problems)
    # the same digits as a number (an amount) are content, not the id
    amount = [*inst.actions, {"name": "calculate", "kwargs": {"expression": "1 + 1", "n": int(zip_code)}}]
    row = auditor.check(dataclasses.replace(inst, actions=amount), skm, deriv, km)
    assert not any("zip/last-four" in p for p in row.problems)


def test_audit_catches_a_shipped_id_in_the_catalog_patch():
    import dataclasses

    from contam.regen.generate import generate_full, world_map

    km = world_map("retail", 5)
    inst, skm, deriv = generate_full("retail", 0, 5, km)  # a branch task: its patch names a keyboard variant
    auditor = Auditor(determinism=False)
    assert inst.catalog_patch and auditor.check(inst, skm, deriv, km).valid
    leaked = dataclasses.replace(inst, catalog_patch=deriv.catalog_patch)  # the shipped ids, as older versions wrote
    row = auditor.check(leaked, skm, deriv, km)
    assert not row.covered
