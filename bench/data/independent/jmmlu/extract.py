#!/usr/bin/env python3
"""Extract JMMLU (nlp-waseda/JMMLU) Japanese MMLU translations aligned to English MMLU test ids.

usage: extract.py JMMLU_GIT_DIR HENDRYCKS_TEST_GIT_DIR [--out DIR] [--n 400]
  JMMLU: JMMLU/<subject>.csv at HEAD (CC BY-SA 4.0 part only; JMMLU_NC_ND is not read).
  English: data/test/<subject>_test.csv at hendrycks/test commit b3e6029 (has all 57).
JMMLU keeps, per subject, an order-preserving subset of the MMLU test items (up to 150,
some removed by the translators). Alignment per subject: monotone dynamic programming
over (JMMLU row -> MMLU row) that requires equal answer letters and maximises lexical
overlap of language-independent tokens (numbers, Latin-script words, symbols) in
question+options. A pair is kept only if it is confident:
  (a) strong: >= 3 shared anchor tokens and Jaccard >= 0.3, or
  (b) forced: it lies between two strong pairs with no skipped MMLU row between them
      (so position alone determines the match) and the answer letters agree.
Ids: mmlu/<subject>/<0-based test row>.
"""

import argparse
import csv
import hashlib
import io
import json
import os
import random
import re
import subprocess

EN_COMMIT = "b3e602987386c51b454172d21f376dc8e8661674"
TOK = re.compile(r"[A-Za-z][A-Za-z0-9_']+|\d+(?:\.\d+)?|[=+\-*/^<>()|\[\]{}%$∈∀∃→↔¬∧∨⊕]")


def git_show(d, ref):
    return subprocess.run(["git", "--git-dir", d, "show", ref], check=True, capture_output=True).stdout.decode("utf-8-sig")


def git_ls(d, ref, prefix):
    out = subprocess.run(["git", "--git-dir", d, "ls-tree", "--name-only", ref, prefix], check=True, capture_output=True).stdout.decode()
    return [l for l in out.splitlines() if l.endswith(".csv")]


def rows(text):
    return [r for r in csv.reader(io.StringIO(text)) if len(r) == 6]


def toks(r):
    return set(t.lower() for t in TOK.findall(" ".join(r[:5])))


def layout(r):
    return r[0].strip() + "\n" + "\n".join(f"{k}. {v.strip()}" for k, v in zip("ABCD", r[1:5]))


def align(J, E):
    m, n = len(J), len(E)
    NEG = float("-inf")
    tj = [toks(r) for r in J]
    te = [toks(r) for r in E]

    def sim(j, e):
        if J[j][5].strip() != E[e][5].strip():
            return None
        a, b = tj[j], te[e]
        inter = len(a & b)
        return inter, inter / max(1, len(a | b))

    # dp[j][e]: best score aligning J[:j] within E[:e]
    dp = [[NEG] * (n + 1) for _ in range(m + 1)]
    bk = [[0] * (n + 1) for _ in range(m + 1)]
    for e in range(n + 1):
        dp[0][e] = 0.0
    S = {}
    for j in range(1, m + 1):
        for e in range(j, n + 1):
            best, how = dp[j][e - 1], 0  # skip E[e-1]
            s = sim(j - 1, e - 1)
            if s is not None and dp[j - 1][e - 1] > NEG:
                S[(j - 1, e - 1)] = s
                v = dp[j - 1][e - 1] + 1.0 + s[1]
                if v > best:
                    best, how = v, 1
            dp[j][e], bk[j][e] = best, how
    if dp[m][n] == NEG:
        return {}, {}
    pairs = {}
    j, e = m, n
    while j > 0:
        if bk[j][e] == 1:
            pairs[j - 1] = e - 1
            j, e = j - 1, e - 1
        else:
            e -= 1
    return pairs, S


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jmmlu_git")
    ap.add_argument("en_git")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20240611)
    a = ap.parse_args()
    kept, stats = {}, {}
    for path in git_ls(a.jmmlu_git, "HEAD", "JMMLU/"):
        subj = os.path.basename(path)[:-4]
        J = rows(git_show(a.jmmlu_git, "HEAD:" + path))
        try:
            E = rows(git_show(a.en_git, f"{EN_COMMIT}:data/test/{subj}_test.csv"))
        except subprocess.CalledProcessError:
            stats[subj] = {"jmmlu": len(J), "note": "no English file"}
            continue
        pairs, S = align(J, E)
        strong = sorted(j for j, e in pairs.items() if S[(j, e)][0] >= 3 and S[(j, e)][1] >= 0.3)
        ok = set(strong)
        for x, y in zip(strong, strong[1:]):
            if pairs[y] - pairs[x] == y - x:
                ok.update(range(x + 1, y))
        for j in ok:
            kept[(subj, pairs[j])] = layout(J[j])
        stats[subj] = {"jmmlu": len(J), "english": len(E), "aligned": len(pairs), "strong": len(strong), "kept": len(ok)}
    keys = sorted(kept)
    pick = sorted(random.Random(a.seed).sample(keys, min(a.n, len(keys))))
    en_cache = {}
    with (
        open(os.path.join(a.out, "sources.jsonl"), "w", encoding="utf-8") as fs,
        open(os.path.join(a.out, "variants.jsonl"), "w", encoding="utf-8") as fv,
    ):
        for subj, i in pick:
            if subj not in en_cache:
                en_cache[subj] = rows(git_show(a.en_git, f"{EN_COMMIT}:data/test/{subj}_test.csv"))
            sid = f"mmlu/{subj}/{i}"
            fs.write(json.dumps({"id": sid, "text": layout(en_cache[subj][i])}, ensure_ascii=False) + "\n")
            fv.write(json.dumps({"source": sid, "kind": "translation", "lang": "ja", "text": kept[(subj, i)]}, ensure_ascii=False) + "\n")
    tot = {k: sum(s.get(k, 0) for s in stats.values()) for k in ("jmmlu", "aligned", "strong", "kept")}
    print(json.dumps({"total": tot, "sampled": len(pick)}))
    with open(os.path.join(a.out, "alignment_stats.json"), "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
    for f in ("sources.jsonl", "variants.jsonl"):
        print(f, hashlib.sha256(open(os.path.join(a.out, f), "rb").read()).hexdigest())


if __name__ == "__main__":
    main()
