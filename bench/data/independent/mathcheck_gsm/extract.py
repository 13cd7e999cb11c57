#!/usr/bin/env python3
"""Extract MathCheck-GSM rewrites of GSM8K test problems.

Usage: python extract.py <git-dir of PremiLab-Math/MathCheck> [--gsm8k /work/shared/data/gsm8k/test.jsonl] [--rev HEAD]

gsm_checklist.json holds 129 GSM8K-test seed problems (task_type "solving",
question_type "seed_question"), each with rewritten versions in the same group_id.
We keep, per seed, the "problem_understanding_question" (a meaning-preserving
rewording) and the "distractor_insertion_question" (reworded + irrelevant details).
"scenario_understanding" (asks for a different unknown) is not kept.
Each seed is matched to its GSM8K test line by whitespace/quote-normalised text.
"""

import argparse
import difflib
import json
import os
import re
import subprocess
import sys

KEEP = [
    ("problem_understanding_question", "mathcheck_problem_understanding"),
    ("distractor_insertion_question", "mathcheck_distractor_insertion"),
]


def norm(t):
    t = t.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", " ", t).strip().lower()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--gsm8k", default="/work/shared/data/gsm8k/test.jsonl")
    ap.add_argument("--rev", default="HEAD")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    raw = subprocess.run(
        ["git", "--git-dir", args.gitdir, "show", f"{args.rev}:gsm_checklist.json"], check=True, capture_output=True
    ).stdout
    rows = [r for r in json.loads(raw) if r["task_type"] == "solving"]
    with open(args.gsm8k, encoding="utf-8") as fh:
        test = [json.loads(l)["question"] for l in fh]
    index = {}
    for i, q in enumerate(test):
        index.setdefault(norm(q), i)
    normed = list(index)
    groups = {}
    for r in rows:
        groups.setdefault(r["group_id"], {})[r["question_type"]] = r
    sources, variants, fuzzy = [], [], []
    for gid in sorted(groups, key=int):
        g = groups[gid]
        seed = g["seed_question"]["question"]
        line = index.get(norm(seed))
        if line is None:
            best = difflib.get_close_matches(norm(seed), normed, n=1, cutoff=0.9)
            if not best:
                sys.exit(f"group {gid}: seed not found in GSM8K test")
            line = index[best[0]]
            fuzzy.append((gid, line))
        sid = f"gsm8k/test/{line}"
        sources.append({"id": sid, "text": test[line]})
        for qt, subtype in KEEP:
            if qt in g and norm(g[qt]["question"]) != norm(test[line]):
                variants.append({"source": sid, "kind": "rephrase", "lang": "en", "subtype": subtype, "text": g[qt]["question"].strip()})
    if len({s["id"] for s in sources}) != len(sources):
        sys.exit("duplicate GSM8K lines among seeds")
    for name, rs in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as fh:
            for r in rs:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"sources={len(sources)} variants={len(variants)} fuzzy_matched={fuzzy}")


if __name__ == "__main__":
    main()
