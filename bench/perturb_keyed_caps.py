"""How many GSM8K test templates gain a cap from the keyed table (issue 16, plausible ranges).

    PYTHONPATH=src python bench/perturb_keyed_caps.py

Lifts every GSM8K test item once (no sampling) and counts the templates with a free slot whose
rate, price, percent or age key (:func:`contam.perturb.guards.unit_key`) has a cap in
:func:`contam.perturb.guards.keyed_caps`, and those with such a step result; prints the counts and
the most common keys (about 15 s).
"""

from __future__ import annotations

import collections
import json

from contam.data import load_benchmark
from contam.perturb import guards
from contam.perturb.records import Template
from contam.perturb.symbolic import _result_key, lift


def main() -> None:
    keyed = guards.keyed_caps()
    slot_keys: collections.Counter[str] = collections.Counter()
    step_keys: collections.Counter[str] = collections.Counter()
    templates = with_slot = with_step = either = 0
    for item in load_benchmark("gsm8k"):
        t = lift(item)
        if not isinstance(t, Template):
            continue
        templates += 1
        got_slot = got_step = False
        for s in t.slots:
            if s.role != "free":
                continue
            for i in s.mentions:
                m = t.mentions[i]
                if m.kind == "cents":
                    continue
                key = guards.unit_key(t.question, m.start, m.end, money=m.kind == "money", percent=m.kind == "percent")
                if guards.is_keyed(key) and key in keyed:
                    slot_keys[key] += 1
                    got_slot = True
        for st in t.steps:
            key = _result_key(t.solution, st)
            if guards.is_keyed(key) and key in keyed and any(c.kind == "stmax" for c in t.constraints):
                step_keys[key] += 1
                got_step = True
        with_slot += got_slot
        with_step += got_step
        either += got_slot or got_step
    print(
        json.dumps(
            {
                "templates": templates,
                "with_keyed_slot_cap": with_slot,
                "with_keyed_result_cap": with_step,
                "with_either": either,
                "slot_keys": slot_keys.most_common(15),
                "result_keys": step_keys.most_common(15),
            }
        )
    )


if __name__ == "__main__":
    main()
