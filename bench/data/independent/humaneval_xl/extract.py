#!/usr/bin/env python3
"""Extract HumanEval-XL: HumanEval problems ported to other programming languages *and* their
docstrings translated into other natural languages, aligned to the HumanEval items they come from.

usage: extract.py HUMANEVAL_XL_GIT_DIR HUMANEVAL_X_SOURCES [--out DIR]
  HumanEval-XL (FloatAI/humaneval-xl, MIT; Peng et al., LREC-COLING 2024): data/<programming
  language>/<Natural language>.jsonl, 80 problems each, parallel across the 23 natural languages
  and 12 programming languages (the natural-language descriptions machine translated by GPT-4 and
  checked, per the paper). A problem is aligned to its HumanEval item by its Python entry point
  (``below_zero`` is HumanEval/3; of two tasks of one name, the one whose prompt shares most words),
  read from HUMANEVAL_X_SOURCES (../humaneval_x/sources.jsonl, HumanEval's Python prompts).
Kept: the ports to Java, Go, JavaScript and Python in ten natural languages (de, es, ru, zh, ar, he,
fi, vi, id, fa): code port and translation at once, which no other set holds. Sources: the matched
HumanEval prompts (ids humaneval/HumanEval/<n>, as in ../humaneval_x).
"""

import argparse
import json
import os
import re
import subprocess

PROGRAMMING = ("java", "go", "javascript", "python")
NATURAL = {
    "German": "de",
    "Spanish": "es",
    "Russian": "ru",
    "Chinese": "zh",
    "Arabic": "ar",
    "Hebrew": "he",
    "Finnish": "fi",
    "Vietnamese": "vi",
    "Indonesian": "id",
    "Persian": "fa",
}
_DEF = re.compile(r"^def (\w+)\(", re.M)


def _jaccard(a, b):
    x, y = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(x & y) / max(1, len(x | y))


def rows(git_dir, path):
    raw = subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], check=True, capture_output=True).stdout.decode("utf-8-sig")
    return [json.loads(x) for x in raw.splitlines() if x.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xl")
    ap.add_argument("humaneval_x_sources")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    he = [json.loads(x) for x in open(a.humaneval_x_sources, encoding="utf-8") if x.strip()]
    by_entry = {}
    for r in he:
        names = _DEF.findall(r["text"])
        if names:
            by_entry.setdefault(names[-1], []).append(r)  # the last def of a prompt is the task's function
    english = rows(a.xl, "data/python/English.jsonl")
    # Two HumanEval tasks share a name (triangle_area: 45 and 71; solve: 84 and 161): the one whose
    # prompt shares most words with the English Python prompt of HumanEval-XL.
    source_of = {
        r["task_id"].split("/")[1]: max(by_entry[r["entry_point"]], key=lambda h, r=r: _jaccard(h["text"], r["prompt"]))["id"]
        for r in english
        if r["entry_point"] in by_entry
    }
    assert len(set(source_of.values())) == len(source_of), "two problems aligned to one HumanEval task"
    sources = {sid: next(r["text"] for r in he if r["id"] == sid) for sid in source_of.values()}
    variants = []
    for pl in PROGRAMMING:
        for nl, code in NATURAL.items():
            for r in rows(a.xl, f"data/{pl}/{nl}.jsonl"):
                n = r["task_id"].split("/")[1]
                if n in source_of:
                    variants.append({"source": source_of[n], "kind": f"xl_{pl}", "lang": code, "text": r["prompt"]})
    with open(os.path.join(a.out, "sources.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": k, "text": v}, ensure_ascii=False) + "\n" for k, v in sorted(sources.items()))
    with open(os.path.join(a.out, "variants.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(v, ensure_ascii=False) + "\n" for v in variants)
    print(len(english), "problems;", len(source_of), "matched to HumanEval;", len(variants), "variants")


if __name__ == "__main__":
    main()
