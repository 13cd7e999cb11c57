#!/usr/bin/env python3
"""Extract PertEval's knowledge-invariant rewrites of MMLU test questions.

Usage: python extract.py <git-dir of aigc-apps/PertEval> [--rev 34263d68852513a0b16b97cc902009ce0e5c87ff]

``eval_data/mmlu_processed/test.jsonl`` holds the MMLU test items of four subjects (college
mathematics, high-school world history, professional psychology, professional medicine) and
``test_knowledge_invariant_all_cwpp.jsonl`` the same items after PertEval's composite perturbation
(an LLM paraphrase of the question, options permuted and relabelled, options moved in front of the
question). Rows pair by (subject, id); the id is the row of the subject's MMLU test CSV
(``eval_data/mmlu_original/<subject>_test.csv``, checked here question by question). Each rewrite
gives two variants: the rewritten question alone (``perteval_question_only``) and the whole
perturbed item as a model would read it, options in their new order and place
(``perteval_with_options``). The correct option's text must agree between the two files.
"""

import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys


def git_show(gitdir: str, rev: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, "show", f"{rev}:{path}"], check=True, capture_output=True).stdout.decode("utf-8-sig")


def norm(t: str) -> str:
    return re.sub(r"\s+", " ", t).strip()


def with_options(question: str, ids: list[str], options: list[str], question_first: bool) -> str:
    block = "\n".join(f"{i.rstrip(').')}. {str(o).strip()}" for i, o in zip(ids, options))
    return f"{question.strip()}\n{block}" if question_first else f"{block}\n{question.strip()}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--rev", default="34263d68852513a0b16b97cc902009ce0e5c87ff")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))

    def rows(path: str) -> list[dict]:
        return [json.loads(line) for line in git_show(args.gitdir, args.rev, path).splitlines() if line.strip()]

    orig = {(r["subject"], r["id"]): r for r in rows("eval_data/mmlu_processed/test.jsonl")}
    csvs: dict[str, list[list[str]]] = {}
    sources, variants = [], []
    for key, o in sorted(orig.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        subj = key[0].removesuffix("_test")
        if subj not in csvs:
            csvs[subj] = list(
                csv.reader(io.StringIO(git_show(args.gitdir, args.rev, f"eval_data/mmlu_original/{subj}_test.csv"), newline=""))
            )
        line = csvs[subj][o["id"]]
        if norm(line[0]) != norm(o["question"]):
            sys.exit(f"{subj} row {o['id']}: question differs from the MMLU test CSV")
        # The source is the MMLU row itself (the processed file parsed some options as numbers).
        sources.append({"id": f"mmlu/{subj}/{o['id']}", "text": with_options(line[0], ["A", "B", "C", "D"], line[1:5], True)})
    dropped = 0
    for n, r in enumerate(rows("eval_data/mmlu_processed/test_knowledge_invariant_all_cwpp.jsonl"), 1):
        o = orig.get((r["subject"], r["id"]))
        if o is None:
            sys.exit(f"perturbed row {n}: no original {r['subject']} {r['id']}")
        right_o = [str(x).strip() for x, c in zip(o["options"], o["correct"]) if c]
        right_p = [str(x).strip() for x, c in zip(r["options"], r["correct"]) if c]
        if right_o != right_p:
            sys.exit(f"perturbed row {n}: correct option differs from the original")
        q = r["question"].strip()
        if not q or norm(q) == norm(o["question"]):
            dropped += 1
            continue
        sid = f"mmlu/{r['subject'].removesuffix('_test')}/{r['id']}"
        base = {"source": sid, "kind": "rephrase", "lang": "en"}
        variants.append({**base, "subtype": "perteval_question_only", "text": q})
        variants.append(
            {**base, "subtype": "perteval_with_options", "text": with_options(q, r["option_ids"], r["options"], bool(r["question_first"]))}
        )
    for name, data in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as fh:
            for row in data:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"sources {len(sources)}, variants {len(variants)} ({dropped} rewrites equal to their question dropped)")


if __name__ == "__main__":
    main()
