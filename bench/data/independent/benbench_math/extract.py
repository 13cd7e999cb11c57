#!/usr/bin/env python3
"""Extract BenBench's ChatGPT rewrites of MATH problems.

Usage: python extract.py <git-dir of GAIR-NLP/benbench> [--rev 40b08af799c24a856fc82002f1389f9912b2c67f]

The commit's "All codes so far (roughly organized)/datasets/meta/" folder holds two samples of
1,000 MATH *train* problems ("seen" and "unseen" in BenBench's own meta-experiment, a split this
bench does not use) and, for each sample, three independent rewrites of every problem
(MATH-<sample>-rewritten-<1..3>.jsonl, row i rewriting row i of MATH-<sample>-orgn.jsonl:
fields "problem" and "rewritten_question"). Every problem is matched to its line of the same
commit's datasets/original/MATH-train.jsonl (exact text) for a stable id; its solution is kept (MATH
items carry one). Each rewrite gives two variants: the rewritten question alone
(``benbench_math``) and the rewritten question followed by the rewritten solution
(``benbench_math_with_solution``, field "rewritten_answer": a rephrased training sample). A rewrite
equal to its problem after whitespace normalisation, or empty, is dropped.
"""

import argparse
import json
import os
import re
import subprocess
import sys

META = "All codes so far (roughly organized)/datasets/meta"
ORIGINAL = "All codes so far (roughly organized)/datasets/original/MATH-train.jsonl"


def show(gitdir: str, rev: str, path: str) -> list[dict]:
    raw = subprocess.run(["git", "--git-dir", gitdir, "show", f"{rev}:{path}"], check=True, capture_output=True).stdout
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


def norm(t: str) -> str:
    return re.sub(r"\s+", " ", t).strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--rev", default="40b08af799c24a856fc82002f1389f9912b2c67f")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    line_of = {}
    for i, r in enumerate(show(args.gitdir, args.rev, ORIGINAL)):
        line_of.setdefault(r["problem"], i)
    sources, variants, dropped = {}, [], 0
    for sample in ("seen", "unseen"):
        orgn = show(args.gitdir, args.rev, f"{META}/MATH-{sample}-orgn.jsonl")
        for r in orgn:
            if r["problem"] not in line_of:
                sys.exit(f"MATH-{sample}-orgn.jsonl: a problem not in {ORIGINAL}")
            sid = f"math/train/{line_of[r['problem']]}"
            sources[sid] = {"id": sid, "text": r["problem"], "solution": r["solution"], "type": r["type"], "level": r["level"]}
        for k in (1, 2, 3):
            rows = show(args.gitdir, args.rev, f"{META}/MATH-{sample}-rewritten-{k}.jsonl")
            if len(rows) != len(orgn):
                sys.exit(f"MATH-{sample}-rewritten-{k}.jsonl: {len(rows)} rows for {len(orgn)} problems")
            for o, r in zip(orgn, rows):
                if r["problem"] != o["problem"]:
                    sys.exit(f"MATH-{sample}-rewritten-{k}.jsonl: rows out of step with the originals")
                text = (r.get("rewritten_question") or "").strip()
                if not text or norm(text) == norm(o["problem"]):
                    dropped += 1
                    continue
                sid = f"math/train/{line_of[o['problem']]}"
                variants.append({"source": sid, "kind": "rephrase", "lang": "en", "subtype": "benbench_math", "round": k, "text": text})
                answer = (r.get("rewritten_answer") or "").strip()
                if answer:  # the rewrite as a training sample holds it: question and worked solution
                    variants.append(
                        {
                            "source": sid,
                            "kind": "rephrase",
                            "lang": "en",
                            "subtype": "benbench_math_with_solution",
                            "round": k,
                            "text": f"{text}\n\n{answer}",
                        }
                    )
    for name, rs in (("sources.jsonl", list(sources.values())), ("variants.jsonl", variants)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as fh:
            for r in rs:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"sources={len(sources)} variants={len(variants)} dropped={dropped}")


if __name__ == "__main__":
    main()
