#!/usr/bin/env python3
"""Extract MMLU-SR (symbol-replaced MMLU) variants for the 5 local MMLU subjects.

Usage: python extract.py <git-dir of Wang-ML-Lab/MMLU-SR> [--mmlu /work/shared/data/mmlu] [--rev HEAD]

Writes sources.jsonl / variants.jsonl next to this script.  MMLU-SR rows are in the
same order as the MMLU test CSVs (verified here: same row count and same gold letter
on every row), so variant row i of subject s is paired with MMLU item mmlu/<s>/<i>.
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys

SUBJECTS = ["abstract_algebra", "college_mathematics", "high_school_us_history", "sociology", "world_religions"]
KINDS = [("question_only", "mmlusr_question_only"), ("question_and_answer", "mmlusr_question_and_answer")]


def git_show(gitdir, rev, path):
    out = subprocess.run(["git", "--git-dir", gitdir, "show", f"{rev}:{path}"], check=True, capture_output=True).stdout
    return out.decode("utf-8-sig")


def fmt(row):
    q, a, b, c, d = (x.strip() for x in row[:5])
    return "\n".join([q, f"A. {a}", f"B. {b}", f"C. {c}", f"D. {d}"])


# MMLU-SR's CSVs went through a spreadsheet/codepage round trip: en dashes became
# "\u00a8C" or "\u7bd3C", and fractions such as 1/30 became dates ("1\u670830\u65e5").
MOJIBAKE = [("\u7bd3C", "\u2013"), ("\u00a8C", "\u2013")]


def repair(text):
    for bad, good in MOJIBAKE:
        text = text.replace(bad, good)
    return text


def merge(orig, sr):
    """Variant row: SR question; an option is taken from SR only where SR
    symbol-replaced it (contains "Suppose '"), otherwise the original option is
    kept (undoes the spreadsheet damage to untouched options)."""
    out = [repair(sr[0])]
    for j in range(1, 5):
        out.append(repair(sr[j]) if "Suppose '" in sr[j] else orig[j])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--mmlu", default="/work/shared/data/mmlu")
    ap.add_argument("--rev", default="HEAD")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    sources, variants = [], []
    skipped_identical = 0
    for s in SUBJECTS:
        with open(os.path.join(args.mmlu, f"{s}_test.csv"), encoding="utf-8", newline="") as fh:
            orig = list(csv.reader(fh))
        sr = {}
        for kind, _ in KINDS:
            text = git_show(args.gitdir, args.rev, f"dataset/{kind}_test/{kind}_{s}_test.csv")
            rows = list(csv.reader(io.StringIO(text, newline="")))
            if len(rows) != len(orig):
                sys.exit(f"row count mismatch {s} {kind}: {len(rows)} vs {len(orig)}")
            for i, (o, r) in enumerate(zip(orig, rows)):
                if o[5].strip() != r[5].strip():
                    sys.exit(f"gold letter mismatch {s} {kind} row {i}")
            sr[kind] = rows
        for i, o in enumerate(orig):
            sid = f"mmlu/{s}/{i}"
            otext = fmt(o)
            sources.append({"id": sid, "text": otext})
            seen = {otext}
            for kind, subtype in KINDS:
                vtext = fmt(merge(o, sr[kind][i]))
                if vtext in seen:
                    skipped_identical += 1
                    continue
                seen.add(vtext)
                variants.append({"source": sid, "kind": "rephrase", "lang": "en", "subtype": subtype, "text": vtext})
    for name, rows in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"sources={len(sources)} variants={len(variants)} skipped_identical={skipped_identical}")


if __name__ == "__main__":
    main()
