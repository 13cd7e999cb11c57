#!/usr/bin/env python3
"""Extract MSVAMP (MathOctopus) translations of the SVAMP test set, aligned to English.

usage: extract.py GIT_DIR [--out DIR] [--n 400]
Reads step1_supervised_finetuning/data/msvamp/test_<Language>.json at HEAD.
Every non-English row carries the English SVAMP text in `query` plus `equation` and
`response`; a row is kept only if all three equal the English file's row at the same
index (the English file stores the English text in `m_query`). Source id:
svamp/<0-based index in test_English.json>.
"""

import argparse
import hashlib
import json
import os
import random
import subprocess

BASE = "step1_supervised_finetuning/data/msvamp/test_{}.json"
LANGS = {
    "Bengali": "bn",
    "Chinese": "zh",
    "French": "fr",
    "German": "de",
    "Japanese": "ja",
    "Russian": "ru",
    "Spanish": "es",
    "Swahili": "sw",
    "Thai": "th",
}


def load(git_dir, name):
    raw = (
        subprocess.run(["git", "--git-dir", git_dir, "show", "HEAD:" + BASE.format(name)], check=True, capture_output=True)
        .stdout.decode("utf-8")
        .strip()
    )
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return [json.loads(x) for x in raw.splitlines() if x.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("git_dir")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20240611)
    a = ap.parse_args()
    en = load(a.git_dir, "English")
    per = {}
    stats = {}
    for name, code in LANGS.items():
        rows = load(a.git_dir, name)
        ok = {}
        for i, (e, r) in enumerate(zip(en, rows)):
            t = (r.get("m_query") or "").strip()
            if (
                r.get("query") == e["m_query"]
                and r.get("equation") == e["equation"]
                and r.get("response") == e["response"]
                and t
                and t != e["m_query"]
            ):
                ok[i] = t
        per[code] = ok
        stats[code] = {"rows": len(rows), "aligned": len(ok)}
    common = sorted(set.intersection(*(set(v) for v in per.values())))
    pick = sorted(random.Random(a.seed).sample(common, min(a.n, len(common))))
    with (
        open(os.path.join(a.out, "sources.jsonl"), "w", encoding="utf-8") as fs,
        open(os.path.join(a.out, "variants.jsonl"), "w", encoding="utf-8") as fv,
    ):
        for i in pick:
            sid = f"svamp/{i}"
            fs.write(json.dumps({"id": sid, "text": en[i]["m_query"]}, ensure_ascii=False) + "\n")
            for code in sorted(per):
                fv.write(json.dumps({"source": sid, "kind": "translation", "lang": code, "text": per[code][i]}, ensure_ascii=False) + "\n")
    print(json.dumps({"per_lang": stats, "common": len(common), "sampled": len(pick)}))
    for f in ("sources.jsonl", "variants.jsonl"):
        print(f, hashlib.sha256(open(os.path.join(a.out, f), "rb").read()).hexdigest())


if __name__ == "__main__":
    main()
