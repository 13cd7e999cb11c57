"""Re-keying: injectivity and substring-level coverage (hypothesis), and the paper's known leak."""

from __future__ import annotations

import copy
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from contam.regen.audit import Auditor
from contam.regen.generate import generate, generate_full
from contam.regen.rekey import SUBSTRING_CLASSES, KeyMap, map_digest, originals
from contam.regen.world import State, load_tasks, load_world

SEEDS = st.integers(min_value=0, max_value=10**9)


@settings(max_examples=6, deadline=None)
@given(seed=SEEDS, domain=st.sampled_from(["retail", "airline"]))
def test_map_is_injective_disjoint_and_leak_free(seed, domain):
    km = KeyMap.build(domain, seed)
    orig = originals(domain)
    for cls, fwd in km.forward.items():
        fresh = list(fwd.values())
        assert len(set(fresh)) == len(fresh), cls
        assert not orig.by_class.get(cls, frozenset()).intersection(fresh), cls
        assert all(km.inv(cls, v) == k for k, v in fwd.items())
    assert orig.leaks("\n".join(v for cls in SUBSTRING_CLASSES for v in km.forward.get(cls, {}).values())) == []
    # fresh user ids / emails never spell an original zip or card last-four as a digit group
    assert not any(orig.clashes(v) for cls in ("user", "email") for v in km.forward[cls].values())
    assert map_digest(km) == map_digest(KeyMap.build(domain, seed))  # determinism


@settings(max_examples=8, deadline=None)
@given(seed=SEEDS, pick=st.integers(min_value=0, max_value=10**6), domain=st.sampled_from(["retail", "airline"]))
def test_instance_texts_carry_no_original(seed, pick, domain):
    index = pick % len(load_tasks(domain))
    inst = generate(domain, index, seed)
    orig = originals(domain)
    for text in (inst.instruction, json.dumps(inst.actions), *inst.outputs, inst.user_id):
        assert orig.leaks(text) == [], (index, text[:80])


def test_fresh_database_is_covered_as_a_whole():
    # Materialise one whole fresh database per domain and scan every byte of it.
    for domain in ("retail", "airline"):
        db = State(load_world(domain), KeyMap.build(domain, 11)).materialize()
        text = json.dumps(db)
        assert originals(domain).leaks(text) == []
        assert len(db["users"]) == len(load_world(domain).tables["users"])


def test_formats_are_preserved():
    km = KeyMap.build("airline", 3)
    for code, fresh in list(km.forward["reservation"].items())[:200]:
        assert len(fresh) == len(code)
        assert [c.isdigit() for c in fresh] == [c.isdigit() for c in code]
    assert all(f.startswith("HAT") and len(f) == 6 for f in km.forward["flight"].values())
    r = KeyMap.build("retail", 3)
    assert all(v.startswith("#W") and len(v) == 9 for v in r.forward["order"].values())
    uid = r.fwd("user", "yusuf_rossi_9620")
    first, last, digits = uid.split("_")
    assert first == r.fwd("name", "Yusuf").lower() and last == r.fwd("name", "Rossi").lower() and len(digits) == 4


def test_known_leak_is_caught():
    """The paper's leak: a mint that appends a suffix to digit-less reservation codes
    (XEWRD9 -> XEWRD9_3602 style) keeps the original as a substring. The audit must catch it."""
    orig = originals("airline")
    assert orig.leaks("MDCLVA_3602") == ["MDCLVA"]
    good = KeyMap.build("airline", 5)
    leaky = KeyMap("airline", 5, copy.deepcopy(good.forward), copy.deepcopy(good.backward))
    for code in [c for c in leaky.forward["reservation"] if not any(ch.isdigit() for ch in c)]:
        bad = f"{code}_3602"
        del leaky.backward["reservation"][leaky.forward["reservation"][code]]
        leaky.forward["reservation"][code] = bad
        leaky.backward["reservation"][bad] = code
    auditor = Auditor(determinism=False)
    problems, _ = auditor.seed_problems("airline", 5, leaky)
    assert any(p.startswith("covered:") for p in problems)
    # and per instance: task 49 names the digit-less code MDCLVA in its instruction
    inst, skm, deriv = generate_full("airline", 49, 5, leaky)
    assert "MDCLVA_3602" in inst.instruction
    row = Auditor(determinism=False).check(inst, skm, deriv, leaky)
    assert not row.covered and not row.valid
    # the real mint never does this
    assert not any(not any(ch.isdigit() for ch in c) and v.startswith(c) for c, v in good.forward["reservation"].items())
