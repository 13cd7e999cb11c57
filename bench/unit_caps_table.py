"""Write the plausible-range table of ``contam.perturb.guards.unit_caps`` from GSM8K itself.

    PYTHONPATH=src python bench/unit_caps_table.py [--percentile 99] [--min-count 20] [--show KEY ...]

Every number of GSM8K's train and test questions (the mention finder's numbers) and of their
solutions (digits of the prose, calculator annotations removed) is keyed by what it measures
(:func:`contam.perturb.guards.unit_key`: "5 hours a day" -> ``hour/day``, "a movie costs $8" ->
``$/movie``, "a 15% tip" -> ``%tip``, "9 years old" -> ``year old``, else the counted noun). A
solution that restates a whole period ("5 hours a day * 7 days a week") states a definition, not a
value of the rate, and is left out; a question's "open 24 hours a day" is kept. For every rate,
price, percent or age key seen at least ``--min-count`` times (20) the table keeps the
``--percentile``-th percentile (99, nearest rank) and the count (section ``keyed``). Section
``nouns`` keeps the counted-noun caps as they were computed before (95th percentile of the train
questions). The packaged GSM8K files are byte-identical copies of openai/grade-school-math (see
gsm8k/PROVENANCE.md). About 15 s.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import defaultdict
from fractions import Fraction

from contam.data import load_benchmark
from contam.data.registry import data_path
from contam.perturb import guards
from contam.perturb.mentions import find_mentions

OUT = "gsm8k/unit_caps.json"
_NUM = re.compile(r"(?<![\w.])(\$\s*)?(\d[\d,]*(?:\.\d+)?|\.\d+)(?![\d/:])(\s*%|\s*percent\b)?")


def values(question: str, solution: str) -> list[tuple[str, Fraction]]:
    """(key, value) for every keyed number of one item's question and solution."""
    out: list[tuple[str, Fraction, bool]] = []  # (key, value, stated in the solution)
    for m in find_mentions(question):
        if m.kind not in ("int", "decimal", "money", "percent", "word", "cents"):
            continue
        key = guards.unit_key(question, m.start, m.end, money=m.kind in ("money", "cents"), percent=m.kind == "percent")
        if m.kind == "cents" and key.startswith("$"):
            out.append((key, Fraction(m.value) / 100, False))
        else:
            out.append((key, Fraction(m.value), False))
    prose = re.sub(r"<<[^<>]*>>", "", solution.rsplit("####", 1)[0])
    for m in _NUM.finditer(prose):
        raw = m.group(2).replace(",", "")
        key = guards.unit_key(prose, m.start(2), m.end(2), money=bool(m.group(1)), percent=bool(m.group(3)))
        out.append((key, Fraction(raw), True))
    kept = []
    for key, v, in_solution in out:
        if not key or v <= 0:
            continue
        unit, _, per = key.partition("/")
        whole = guards.PERIODS.get((unit, per))
        if whole is not None and v >= whole and in_solution:
            continue  # "5 hours a day * 7 days a week": a solution restating the period's length, not a rate
        kept.append((key, v))
    return kept


def keyed_table(percentile: float, min_count: int) -> tuple[dict[str, list], dict[str, list[Fraction]]]:
    """Rates, prices, percents and ages: ``percentile`` of train+test questions and solutions."""
    seen: dict[str, list[Fraction]] = defaultdict(list)
    for split in ("gsm8k-train", "gsm8k"):
        for item in load_benchmark(split):
            for key, v in values(item.question, item.solution):
                if guards.is_keyed(key):
                    seen[key].append(v)
    out = {}
    for key, vs in sorted(seen.items()):
        if len(vs) < min_count:
            continue
        vs.sort()
        rank = max(1, math.ceil(percentile / 100 * len(vs)))  # nearest-rank percentile
        out[key] = [str(vs[rank - 1]), len(vs)]
    return out, seen


def noun_table() -> dict[str, list]:
    """Counted nouns (as before issue 16's keyed caps): the 95th percentile of the train questions'
    perturbable values per head noun, nouns seen at least 20 times."""
    seen: dict[str, list[Fraction]] = defaultdict(list)
    for item in load_benchmark("gsm8k-train"):
        q = item.question
        for m in find_mentions(q):
            if not m.perturbable:
                continue
            noun = guards.head_noun(q, m)
            if m.kind == "percent":
                w = re.findall(r"[A-Za-z]+", q[m.end : m.end + 30])
                skip = ("of", "more", "less", "off", "per", "percent")
                noun = "%" + (guards.singular(w[0].lower()) if w and w[0].lower() not in skip else "")
            if noun:
                seen[noun].append(Fraction(m.value))
    return {k: [str(sorted(v)[int(0.95 * (len(v) - 1))]), len(v)] for k, v in sorted(seen.items()) if len(v) >= 20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--percentile", type=float, default=99.0)
    ap.add_argument("--min-count", type=int, default=20)
    ap.add_argument("--show", nargs="*", default=[])
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    keyed, seen = keyed_table(args.percentile, args.min_count)
    for key in args.show:
        vs = sorted(seen.get(key, []))
        print(key, len(vs), "cap", keyed.get(key), "top", [str(v) for v in vs[-8:]], "median", str(vs[len(vs) // 2]) if vs else None)
    doc = {
        "about": "Plausible caps of contam.perturb (guards.unit_caps, guards.keyed_caps), from GSM8K's own distribution; "
        "each entry is [cap, number of values seen]. Regenerate: PYTHONPATH=src python bench/unit_caps_table.py",
        "script": "bench/unit_caps_table.py",
        "nouns": {
            "about": "counted nouns (guards.head_noun) of the train questions' perturbable numbers; 95th percentile "
            "(index int(0.95*(n-1)) of the sorted values), nouns seen at least 20 times",
            "source": ["gsm8k/train.jsonl.gz (questions)"],
            "percentile": 95,
            "min_count": 20,
            "caps": noun_table(),
        },
        "keyed": {
            "about": "rates, prices, percents by kind and ages (guards.unit_key) of every number of the questions "
            "(mention finder) and solutions (prose digits, <<annotations>> removed); nearest-rank percentile; "
            "a period's own length restated by a solution ('5 hours a day * 7 days a week') is left out",
            "source": ["gsm8k/train.jsonl.gz (questions, solutions)", "gsm8k/test.jsonl.gz (questions, solutions)"],
            "percentile": args.percentile,
            "min_count": args.min_count,
            "caps": keyed,
        },
    }
    print(json.dumps({"keyed": len(keyed), "keyed_values": sum(len(v) for v in seen.values()), "nouns": len(doc["nouns"]["caps"])}))
    if not args.dry_run:
        path = data_path(OUT)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)


if __name__ == "__main__":
    main()
