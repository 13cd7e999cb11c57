"""Issue 16, item 1's last clause: plausible ranges per unit kind come from GSM8K's own distribution.

The packaged table (``gsm8k/unit_caps.json``) is read by :func:`guards.unit_caps` (counted nouns)
and :func:`guards.keyed_caps` (rates, prices, kinds of percent, ages); ``bench/unit_caps_table.py``
writes it. These tests run the real loader, the real lifter and sampler on real GSM8K items.
"""

from __future__ import annotations

import importlib.util
import json
import re
from fractions import Fraction
from pathlib import Path

from contam.data import load_benchmark
from contam.data.registry import data_path
from contam.perturb import guards, instances, lift
from contam.perturb.instantiate import check_constraints
from contam.perturb.mentions import find_mentions
from contam.perturb.records import Template
from contam.perturb.variantset import build_variant_set

GSM = load_benchmark("gsm8k")
ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("unit_caps_table", ROOT / "bench" / "unit_caps_table.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_table_loader_reads_the_packaged_table() -> None:
    with open(data_path(guards.UNIT_CAPS_TABLE), encoding="utf-8") as fh:
        doc = json.load(fh)
    assert doc["keyed"]["percentile"] == 99 and doc["nouns"]["percentile"] == 95
    assert doc["script"] == "bench/unit_caps_table.py"
    keyed, nouns = guards.keyed_caps(), guards.unit_caps()
    assert len(keyed) == len(doc["keyed"]["caps"]) and len(nouns) == len(doc["nouns"]["caps"])
    assert all(isinstance(v, Fraction) and v > 0 for v in [*keyed.values(), *nouns.values()])
    assert all(guards.is_keyed(k) for k in keyed)
    assert all(n >= doc["keyed"]["min_count"] for _, n in doc["keyed"]["caps"].values())
    # A person's day: 99 % of the hours a day GSM8K states are at most 23 (its two 24s are a
    # machine and a website); 7 days a week is a value GSM8K's questions state, so it stays in.
    assert keyed["hour/day"] == 23 and keyed["day/week"] == 7
    assert keyed["hour/week"] < 168 and keyed["hour/night"] <= 12
    assert keyed["%tip"] < 50 and keyed["mile/gallon"] < 75


def test_packaged_table_is_what_the_script_computes() -> None:
    """The shipped JSON is not stale: the bench script recomputes it from the packaged GSM8K."""
    mod = _script()
    with open(data_path(guards.UNIT_CAPS_TABLE), encoding="utf-8") as fh:
        doc = json.load(fh)
    keyed, _ = mod.keyed_table(doc["keyed"]["percentile"], doc["keyed"]["min_count"])
    assert keyed == doc["keyed"]["caps"]
    assert mod.noun_table() == doc["nouns"]["caps"]


def test_unit_key_reads_rates_prices_percents_and_ages() -> None:
    q = GSM[32].question  # "Each dog takes .5 hours a day to walk ..."
    m = next(m for m in find_mentions(q) if m.value == "1/2")
    assert guards.unit_key(q, m.start, m.end) == "hour/day"
    q = GSM[938].question  # "how many 25 dollar pens ... 5 pencils that cost 10 dollars each?"
    keys = {m.value: guards.unit_key(q, m.start, m.end, money=m.kind == "money") for m in find_mentions(q)}
    assert keys["25"] == "$/pen" and keys["10"] == "$/pencil"
    q = GSM[905].question  # "Harold sleeps for 10 hours a night."
    m = next(m for m in find_mentions(q) if m.value == "10")
    assert guards.unit_key(q, m.start, m.end) == "hour/night"
    assert guards.plausible_cap(q, m) == guards.keyed_caps()["hour/night"]


def _hours_a_day(t: Template, results: list[Fraction]) -> list[Fraction]:
    """The results the solution states as hours a day ("5 hours per day")."""
    out = []
    for st, r in zip(t.steps, results, strict=True):
        end = st.echo_end if st.echo_end >= 0 else st.end
        if re.match(r"^\s*hours?\s+(?:a|per|each)\s+day\b", t.solution[end : end + 20]):
            out.append(r)
    return out


def test_item_32_never_cares_for_dogs_all_day() -> None:
    """Item 32 ("10 dogs, .5 hours a day each"): the graded variant "60 dogs x .4 h" made 24 hours
    of care a day. No instance, over every seed tried, reaches the table's cap of hours a day."""
    t = lift(GSM[32])
    assert isinstance(t, Template)
    cap = guards.keyed_caps()["hour/day"]
    assert ("stmax", "0", str(cap)) in {(c.kind, c.target, c.arg) for c in t.constraints}
    # The graded draw itself breaks a constraint now.
    assert check_constraints(t, {"s0": Fraction(60), "s1": Fraction(2, 5)}, [Fraction(24), Fraction(168)]) == "stmax"
    seen = 0
    for seed in range(20):
        for v in instances(t, 5, seed):
            per_day = Fraction(v.values["s0"]) * Fraction(v.values["s1"])
            assert 0 < per_day <= cap < 24, (seed, v.question)
            assert int(v.answer) == per_day * 7
            seen += 1
    assert seen == 100
    ref = build_variant_set([GSM[32]], variants=5, seed=0)
    assert len(ref.variants) == 5 and not ref.rejections


def test_keyed_cap_applies_to_step_results_and_free_slots() -> None:
    """Item 905 ("sleeps for 10 hours a night"): the free slot never exceeds GSM8K's hours a night
    (the graded variant slept 15); item 64's derived miles per gallon stay within GSM8K's."""
    t = lift(GSM[905])
    assert isinstance(t, Template)
    night = guards.keyed_caps()["hour/night"]
    for seed in range(5):
        for v in instances(t, 5, seed):
            assert Fraction(v.values["s0"]) <= max(night, Fraction(10)), v.question
    t = lift(GSM[64])
    assert isinstance(t, Template)
    mpg = guards.keyed_caps()["mile/gallon"]
    assert any(c.kind == "stmax" and Fraction(c.arg) == max(mpg, Fraction(25)) for c in t.constraints)
    for seed in range(5):
        for v in instances(t, 5, seed):
            got = re.search(r"(\d+) miles per gallon", v.solution)
            assert got and int(got.group(1)) <= max(mpg, 25), v.solution
