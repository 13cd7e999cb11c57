"""Branch specs (specs/retail.json): every branch is reachable, the program follows the catalog the
seed drew (checked here against the patched catalog directly, not through the spec), and the
re-derived program replays to the instance's goal on the fresh world."""

from __future__ import annotations

from typing import Any

import pytest

from contam.regen import branch
from contam.regen.generate import generate, world_state
from contam.regen.rekey import originals
from contam.regen.replay import ReplayOracle, run_actions
from contam.regen.world import State, load_tasks, load_world

SEEDS = range(48)
SPEC_KEYS = sorted(branch.SPECS)


def _variants(d: branch.Derivation, product: str) -> dict[str, Any]:
    """The product's variants in the catalog the seed drew (shipped ids)."""
    return State(load_world("retail"), None, d.patches()).get("products", product)["variants"]


def _avail(variants: dict[str, Any], **options: Any) -> list[str]:
    return [i for i, v in variants.items() if v["available"] and all(v["options"][k] == x for k, x in options.items())]


def _branches(spec: dict[str, Any]) -> set[str]:
    names = {c["name"] for c in spec["cases"]} if "cases" in spec else {"then", "else"}
    if "name_by" in spec:  # labelled by the payment method first_covering picked: every listed one comes up
        methods = next(
            e["value"]["first_covering"]["methods"]
            for e in spec["finally"]
            if isinstance(e.get("value"), dict) and "first_covering" in e["value"]
        )
        names = {f"{n}:{m}" for n in names for m in methods}
    return names


@pytest.mark.parametrize("key", SPEC_KEYS, ids=[f"{d}-{i}" for d, i in SPEC_KEYS])
def test_spec_rederives_shipped_and_every_reachable_branch_replays(key: tuple[str, int]) -> None:
    domain, index = key
    task = load_tasks(domain)[index]
    shipped = branch.derive(domain, index, None)
    assert shipped.actions == list(task["actions"])
    assert shipped.outputs in (None, list(task["outputs"]))
    shipped_clean = ReplayOracle(domain).replay(task["actions"]).clean
    seen = set()
    for seed in SEEDS:
        d = branch.derive(domain, index, seed)
        seen.add(d.branch)
        # the predicate, evaluated again on a state built from the drawn catalog, picks the same branch
        state = State(load_world(domain), None, d.patches())
        spec = branch.SPECS[key]
        if "cases" in spec:
            expect = next(c["name"] for c in spec["cases"] if "when" not in c or branch.evaluate(c["when"], state))
        else:
            expect = "then" if branch.evaluate(spec["predicate"], state) else "else"
        assert d.branch.split(":")[0] == expect  # name_by specs append the chosen value
        inst = generate(domain, index, seed)
        assert inst.branch == d.branch and list(inst.catalog_patch.values()) == list(d.catalog_patch.values())
        assert not originals(domain).leaks(" ".join(inst.catalog_patch))  # recorded in the fresh id space
        run = run_actions(domain, world_state(inst), inst.actions)
        assert run.goal_hash == inst.goal_hash
        if shipped_clean:
            assert run.clean, (seed, d.branch, run.errors)
    # both branches (all reachable cases) come up; 58 has no 8 bar / 7 bar variant and 90's cases are 3
    reachable = _branches(branch.SPECS[key]) - ({"8 bar", "7 bar"} if key == ("retail", 58) else set())
    assert seen == reachable


def test_89_cheapest_keyboard_decides_exchange_or_return() -> None:
    flips = set()
    for seed in SEEDS:
        d = branch.derive("retail", 89, seed)
        variants = _variants(d, "1656367028")
        assert variants["3616838507"]["price"] == d.prices["1656367028/3616838507"]  # the drawn price is in the catalog
        cheapest = min(_avail(variants), key=lambda i: variants[i]["price"])
        price = variants[cheapest]["price"]
        if price < 200:
            assert d.actions[0]["name"] == "exchange_delivered_order_items"
            assert d.actions[0]["kwargs"]["new_item_ids"] == [cheapest]
        else:
            assert d.actions == list(load_tasks("retail")[89]["actions"])
        opts = variants[cheapest]["options"]
        assert d.outputs == [str(price), opts["switch type"], opts["backlight"], opts["size"].split()[0]]
        flips.add(price < 200)
    assert flips == {True, False}


def test_19_the_larger_saving_decides_return_or_exchange() -> None:
    flips = set()
    for seed in SEEDS:
        d = branch.derive("retail", 19, seed)
        beds, chairs = _variants(d, "2747247837"), _variants(d, "4794339885")
        bed = min(_avail(beds), key=lambda i: beds[i]["price"])
        chair = min(_avail(chairs), key=lambda i: chairs[i]["price"])
        exchange = 195.11 + 499.28 - beds[bed]["price"] - chairs[chair]["price"]
        assert d.outputs == ["54.04", str(round(exchange, 2))]
        if exchange > 54.04:
            assert d.actions[6]["name"] == "exchange_delivered_order_items"
            assert d.actions[6]["kwargs"]["new_item_ids"] == [bed, chair]
        else:
            assert d.actions == list(load_tasks("retail")[19]["actions"])
        flips.add(exchange > 54.04)
    assert flips == {True, False}


def test_20_gift_card_if_it_covers_the_upgrade_else_paypal() -> None:
    order = load_world("retail").tables["orders"]["#W9911714"]
    paid = {i["item_id"]: i["price"] for i in order["items"]}
    for seed in SEEDS:
        d = branch.derive("retail", 20, seed)
        kw = d.actions[8]["kwargs"]
        diff = 0.0
        for old, new, product in zip(
            kw["item_ids"], kw["new_item_ids"], ("8310926033", "1656367028", "6938111410", "5149340237"), strict=True
        ):
            variants = _variants(d, product)
            pool = _avail(variants, size="9") if product == "6938111410" else _avail(variants)
            assert new == max(pool, key=lambda i: variants[i]["price"])
            diff += variants[new]["price"] - paid[old]
        assert kw["payment_method_id"] == ("gift_card_4332117" if round(diff, 2) <= 86 else "paypal_3798357")


@pytest.mark.parametrize(("index", "target"), [(36, 1131), (37, 1150)])
def test_36_37_cheapest_options_total_decides_modify_or_cancel(index: int, target: int) -> None:
    order = load_world("retail").tables["orders"]["#W9348897"]
    flips = set()
    for seed in SEEDS:
        d = branch.derive("retail", index, seed)
        cheapest = {}
        for item in order["items"]:
            variants = _variants(d, item["product_id"])
            cheapest[item["item_id"]] = min(_avail(variants), key=lambda i, v=variants: v[i]["price"])
            cheapest[item["item_id"] + "/price"] = variants[cheapest[item["item_id"]]]["price"]
        total = sum(v for k, v in cheapest.items() if k.endswith("/price"))
        act = d.actions[9]
        if total <= target:
            assert act["name"] == "modify_pending_order_items"
            assert act["kwargs"]["new_item_ids"] == [cheapest[i] for i in act["kwargs"]["item_ids"]]
        else:
            assert act == {"name": "cancel_pending_order", "kwargs": {"order_id": "#W9348897", "reason": "no longer needed"}}
        flips.add(total <= target)
    assert flips == {True, False}


def test_74_i9_with_storage_then_color_preference() -> None:
    for seed in SEEDS:
        d = branch.derive("retail", 74, seed)
        laptops = _variants(d, "4760268021")
        hits = _avail(laptops, processor="i9")
        for key, value in (("storage", "256GB SSD"), ("color", "silver")):
            narrowed = [i for i in hits if laptops[i]["options"][key] == value]
            hits = narrowed or hits
        assert len(hits) == 1 and d.actions[1]["kwargs"]["new_item_ids"] == hits


def test_90_camera_availability_and_price() -> None:
    for seed in SEEDS:
        d = branch.derive("retail", 90, seed)
        v = _variants(d, "8940227892")["9228757377"]
        act = d.actions[0]
        if not v["available"]:
            assert act == {"name": "cancel_pending_order", "kwargs": {"order_id": "#W9284598", "reason": "no longer needed"}}
        elif v["price"] > 3000:
            assert act == {"name": "cancel_pending_order", "kwargs": {"order_id": "#W9284598", "reason": "ordered by mistake"}}
        else:
            assert act["name"] == "modify_pending_order_items" and act["kwargs"]["new_item_ids"] == ["9228757377"]


def test_58_pressure_chain_and_gift_card_cover() -> None:
    user = load_world("retail").tables["users"]["ivan_hernandez_6923"]
    for seed in SEEDS:
        d = branch.derive("retail", 58, seed)
        machines = _variants(d, "4354588079")
        laptops = _variants(d, "4760268021")
        nine = _avail(machines, pressure="9 bar", capacity="1.5L", type="capsule")
        kw = d.actions[5]["kwargs"]
        cheapest_i7 = min(
            (i for i in laptops if laptops[i]["available"] and laptops[i]["options"]["processor"] in ("i7", "i9")),
            key=lambda i: laptops[i]["price"],
        )
        if nine:
            assert kw["item_ids"] == ["7441167885", "3478699712"] and kw["new_item_ids"] == [nine[0], cheapest_i7]
            diff = machines[nine[0]]["price"] - 2866.37 + laptops[cheapest_i7]["price"] - 2291.87
        else:
            assert kw["item_ids"] == ["3478699712"] and kw["new_item_ids"] == [cheapest_i7]
            diff = laptops[cheapest_i7]["price"] - 2291.87
        gc = user["payment_methods"]["gift_card_9368765"]["balance"]
        assert kw["payment_method_id"] == ("gift_card_9368765" if gc >= round(diff, 2) else "credit_card_7455506")


@pytest.mark.parametrize(
    ("index", "product", "position", "options", "prefer"),
    [
        (70, "7765186836", (0, 0), {"size": "M", "ventilation": "high"}, ("color", "blue")),
        (99, "1808611083", (1, 1), {"pieces": "1500", "difficulty level": "intermediate"}, ("theme", "animals")),
        (100, "1808611083", (1, 1), {"pieces": "1500", "difficulty level": "intermediate"}, ("theme", "art")),
        (102, "6066914160", (1, 0), {"strap material": "metal"}, ("dial color", "white")),
        (103, "6066914160", (1, 0), {"strap material": "metal"}, ("dial color", "white")),
        (107, "9523456873", (0, 0), {"size": "XL", "material": "cotton"}, ("color", "black")),
    ],
)
def test_preference_among_available_options(
    index: int, product: str, position: tuple[int, int], options: dict[str, str], prefer: tuple[str, str]
) -> None:
    for seed in SEEDS:
        d = branch.derive("retail", index, seed)
        variants = _variants(d, product)
        hits = _avail(variants, **options)
        preferred = [i for i in hits if variants[i]["options"][prefer[0]] == prefer[1]]
        want = preferred or hits
        assert len(want) == 1
        act, slot = position
        assert d.actions[act]["kwargs"]["new_item_ids"][slot] == want[0]


def test_70_rederives_the_amount_to_pay() -> None:
    for seed in SEEDS:
        d = branch.derive("retail", 70, seed)
        new = d.actions[0]["kwargs"]["new_item_ids"][0]
        assert d.outputs == [str(abs(round(_variants(d, "7765186836")[new]["price"] - 197.33, 2)))]
        assert generate("retail", 70, seed).outputs == d.outputs


def test_79_and_91_exact_item_or_fallback() -> None:
    for seed in SEEDS:
        d = branch.derive("retail", 79, seed)
        bottles = _variants(d, "8310926033")
        want = "2439754078" if bottles["2439754078"]["available"] else "1434748144"
        assert bottles[want]["available"] and d.actions[0]["kwargs"]["new_item_ids"] == [want]
        d = branch.derive("retail", 91, seed)
        if _variants(d, "3801771308")["9494281769"]["available"]:
            assert d.actions[1]["name"] == "exchange_delivered_order_items"
        else:
            assert d.actions[1] == {
                "name": "return_delivered_order_items",
                "kwargs": {"order_id": "#W3239882", "item_ids": ["9494281769"], "payment_method_id": "credit_card_5902940"},
            }


def test_airline_32_fare_decides_the_second_passenger() -> None:
    flips = set()
    for seed in SEEDS:
        d = branch.derive("airline", 32, seed)
        fare = State(load_world("airline"), None, d.patches()).get("flights", "HAT271")["dates"]["2024-05-26"]["prices"]["economy"]
        assert fare == d.prices["HAT271/2024-05-26/economy"]
        kw = d.actions[3]["kwargs"]
        n = 1 if 2 * fare > 500 else 2
        assert len(kw["passengers"]) == n and kw["passengers"][0]["first_name"] == "Sophia"
        assert kw["payment_methods"] == [{"payment_id": "certificate_8045380", "amount": n * fare}]
        flips.add(n)
    assert flips == {1, 2}


def test_airline_11_certificate_unless_more_than_100_is_wasted() -> None:
    flips = set()
    for seed in SEEDS:
        d = branch.derive("airline", 11, seed)
        state = State(load_world("airline"), None, d.patches())
        total = sum(state.get("flights", f)["dates"]["2024-05-17"]["prices"]["economy"] for f in ("HAT097", "HAT251"))
        pay = d.actions[0]["kwargs"]["payment_methods"]
        if 500 - total > 100:
            assert pay == [{"payment_id": "gift_card_8516878", "amount": 128}, {"payment_id": "credit_card_3563913", "amount": total - 128}]
        else:
            assert pay == [{"payment_id": "certificate_8998287", "amount": total}]
        flips.add(500 - total > 100)
    assert flips == {True, False}


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_spec_file_is_data_and_quotes_each_condition(domain: str) -> None:
    specs = branch.load_specs(domain)
    assert specs and set(specs) == {i for d, i in branch.SPECS if d == domain}
    for index, spec in specs.items():
        # the quoted condition is the instruction's (modulo our bracketed glosses)
        first = spec["condition"].split(".")[0].split("(")[0].strip()
        assert first.lower()[:25] in load_tasks(domain)[index]["instruction"].lower(), index


def test_every_conditional_is_classified_and_the_covered_ones_have_specs() -> None:
    import json
    import re
    from pathlib import Path

    path = Path(branch.__file__).with_name("specs") / "conditionals.json"
    with open(path, encoding="utf-8") as fh:
        table = json.load(fh)
    word = re.compile(r"\b(if|otherwise|unless|in case|as long as|only when|whether|either)\b", re.I)
    for domain in ("retail", "airline"):
        rows = {int(k): v for k, v in table[domain].items()}
        # every shipped instruction with a conditional word is classified, and nothing else is
        assert set(rows) == {t["index"] for t in load_tasks(domain) if word.search(t["instruction"])}
        assert {v["kind"] for v in rows.values()} <= {"world", "dialogue", "policy", "none"}
        covered = {i for i, v in rows.items() if v["covered"]}
        assert all(rows[i]["kind"] == "world" for i in covered)
        # a task is marked covered exactly when it has a branch spec (19/20 included: their conditionals are data-decided)
        assert covered == {i for d, i in branch.SPECS if d == domain}
        assert all(v["why"] for v in rows.values())


def test_a_malformed_spec_file_names_the_task_and_field(tmp_path: Any) -> None:
    from contam.errors import InputError

    bad = tmp_path / "retail.json"
    bad.write_text('{"tasks": {"7": {"condition": "If x.", "resample": [{"product": "1"}], "predicate": {}, "then": [], "else": []}}}')
    with pytest.raises(InputError, match=r"tasks\.7\.resample\[0\]"):
        branch.read_spec_file(bad)
    bad.write_text('{"tasks": {"7": {"condition": "If x.", "resample": []}}}')
    with pytest.raises(InputError, match=r"tasks\.7\.predicate.*missing"):
        branch.read_spec_file(bad)
    bad.write_text("{not json")
    with pytest.raises(InputError, match=r"retail\.json"):
        branch.read_spec_file(bad)
