#!/usr/bin/env python3
"""Extract Korean GSM8K test translations (xfactlab/kt-ai-challenge) aligned to English GSM8K ids.

usage: extract.py GIT_DIR [--gsm8k /work/shared/data/gsm8k] [--out DIR] [--n 400]
Reads data/reasoning-data/kor-gsm8k/kor-gsm8k-test.jsonl at HEAD of the fetched git dir.
Each row carries the English `question`; it is matched by exact string to
gsm8k/test.jsonl. Items gsm8k/test/0..249 (the MGSM source items) are excluded.
"""

import argparse
import hashlib
import json
import os
import random
import re
import subprocess

PATH = "data/reasoning-data/kor-gsm8k/kor-gsm8k-test.jsonl"
NUM = re.compile(r"\d+(?:\.\d+)?")


def nums(s):
    return set(NUM.findall(s.replace(",", "")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("git_dir")
    ap.add_argument("--gsm8k", default="/work/shared/data/gsm8k")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20240611)
    a = ap.parse_args()
    raw = subprocess.run(["git", "--git-dir", a.git_dir, "show", "HEAD:" + PATH], check=True, capture_output=True).stdout.decode("utf-8")
    eng = [json.loads(l)["question"] for l in open(os.path.join(a.gsm8k, "test.jsonl"), encoding="utf-8")]
    idx = {}
    for i, q in enumerate(eng):
        idx.setdefault(q, i)
    stats = dict(rows=0, unmatched=0, mgsm_excluded=0, dropped_quality=0, kept=0)
    cand = {}
    for line in raw.splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        stats["rows"] += 1
        i = idx.get(d["question"])
        if i is None:
            stats["unmatched"] += 1
            continue
        if i < 250:
            stats["mgsm_excluded"] += 1
            continue
        ko = (d.get("kor_question") or "").strip()
        en = eng[i]
        en_n = nums(en)
        bad = (
            not ko
            or "Answer" in ko
            or "답:" in ko
            or "답변:" in ko
            or len(ko) > 2.0 * len(en)
            or len(ko) < 0.25 * len(en)
            or (en_n and len(en_n & nums(ko)) < 0.5 * len(en_n))
        )
        if bad:
            stats["dropped_quality"] += 1
            continue
        cand[i] = ko
    stats["kept"] = len(cand)
    ids = sorted(cand)
    rng = random.Random(a.seed)
    pick = sorted(rng.sample(ids, min(a.n, len(ids))))
    with (
        open(os.path.join(a.out, "sources.jsonl"), "w", encoding="utf-8") as fs,
        open(os.path.join(a.out, "variants.jsonl"), "w", encoding="utf-8") as fv,
    ):
        for i in pick:
            sid = f"gsm8k/test/{i}"
            fs.write(json.dumps({"id": sid, "text": eng[i]}, ensure_ascii=False) + "\n")
            fv.write(json.dumps({"source": sid, "kind": "translation", "lang": "ko", "text": cand[i]}, ensure_ascii=False) + "\n")
    stats["sampled"] = len(pick)
    print(json.dumps(stats))
    for f in ("sources.jsonl", "variants.jsonl"):
        print(f, hashlib.sha256(open(os.path.join(a.out, f), "rb").read()).hexdigest())


if __name__ == "__main__":
    main()
