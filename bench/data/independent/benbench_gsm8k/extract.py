#!/usr/bin/env python3
"""Extract BenBench's ChatGPT rewrites of GSM8K test questions.

Usage: python extract.py <git-dir of GAIR-NLP/benbench> [--rev 8cbb7fd341f0efe840ed5d9b148b87287362d9e9] [--gsm8k /work/shared/data/gsm8k/test.jsonl]

src/data/rewritten/GSM8K_rewritten-test-<1..3>.jsonl each rewrite all 1,319 GSM8K test
questions once (fields "question", "rewritten_question" and "rewritten_answer", rows in their own
order). Every question is matched to its line of GSM8K test by exact text, and keeps GSM8K's worked
answer as its solution. Each rewrite gives two variants: the rewritten question alone
(``benbench_gsm8k``) and the rewritten question followed by the rewritten answer
(``benbench_gsm8k_with_solution``). A rewrite equal to its question after whitespace normalisation,
or empty, is dropped.
"""

import argparse
import json
import os
import re
import subprocess
import sys


def norm(t: str) -> str:
    return re.sub(r"\s+", " ", t).strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--rev", default="8cbb7fd341f0efe840ed5d9b148b87287362d9e9")
    ap.add_argument("--gsm8k", default="/work/shared/data/gsm8k/test.jsonl")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    with open(args.gsm8k, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    test = [r["question"] for r in rows]
    line_of = {}
    for i, q in enumerate(test):
        line_of.setdefault(q, i)
    variants, dropped, used = [], 0, set()
    for k in (1, 2, 3):
        path = f"src/data/rewritten/GSM8K_rewritten-test-{k}.jsonl"
        raw = subprocess.run(["git", "--git-dir", args.gitdir, "show", f"{args.rev}:{path}"], check=True, capture_output=True).stdout
        for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if r["question"] not in line_of:
                sys.exit(f"{path}:{n}: question not in GSM8K test")
            text = (r.get("rewritten_question") or "").strip()
            if not text or norm(text) == norm(r["question"]):
                dropped += 1
                continue
            sid = f"gsm8k/test/{line_of[r['question']]}"
            used.add(sid)
            variants.append({"source": sid, "kind": "rephrase", "lang": "en", "subtype": "benbench_gsm8k", "round": k, "text": text})
            answer = (r.get("rewritten_answer") or "").strip()
            if answer:  # the rewrite as a training sample holds it: question and worked solution
                variants.append(
                    {
                        "source": sid,
                        "kind": "rephrase",
                        "lang": "en",
                        "subtype": "benbench_gsm8k_with_solution",
                        "round": k,
                        "text": f"{text}\n{answer}",
                    }
                )
    sources = [
        {"id": f"gsm8k/test/{i}", "text": test[i], "solution": rows[i]["answer"]} for i in sorted(int(s.rsplit("/", 1)[1]) for s in used)
    ]
    for name, rs in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as fh:
            for r in rs:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"sources={len(sources)} variants={len(variants)} dropped={dropped}")


if __name__ == "__main__":
    main()
