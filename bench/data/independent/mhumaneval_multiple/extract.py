#!/usr/bin/env python3
"""Extract the English (eng_Latn) MultiPL-E-style prompts that mHumanEval ships for 15
programming languages, as code-translation variants of the English HumanEval prompts.

usage: extract.py MHUMANEVAL_GIT_DIR [--humaneval PATH] [--out DIR]

MHUMANEVAL_GIT_DIR: bare git dir of github.com/mraihan-gmu/mHumanEval-Benchmark.
Reads only "mHumanEval-{PL}/<pl>/*eng_Latn-<pl>.json" and LICENSE.
"""

import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
from collections import Counter

ROOT = "mHumanEval-{PL}"
# repository file -> language code used in variants.jsonl (Python and C# [csv only] skipped)
FILES = {
    "cpp/mHumanEval-eng_Latn-cpp.json": "cpp",
    "go/mHumanEval-eng_Latn-go.json": "go",
    "hs/mHumanEval-eng_Latn-hs.json": "hs",
    "java/mHumanEval-eng_Latn-java.json": "java",
    "js/mHumanEval-eng_Latn-js.json": "js",
    "lua/humaneval-eng_Latn-lua.json": "lua",
    "php/mHumanEval-eng_Latn-php.json": "php",
    "pl/mHumanEval-eng_Latn-pl.json": "perl",
    "r/mHumanEval-eng_Latn-r.json": "r",
    "rkt/mHumanEval-eng_Latn-rkt.json": "rkt",
    "rs/mHumanEval-eng_Latn-rs.json": "rs",
    "ruby/mHumanEval-eng_Latn-rb.json": "rb",
    "scala/mHumanEval-eng_Latn-scala.json": "scala",
    "swift/mHumanEval-eng_Latn-swift.json": "swift",
    "ts/mHumanEval-eng_Latn-ts.json": "ts",
}


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def read_json_or_jsonl(raw):
    s = raw.decode("utf-8")
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        return [json.loads(l) for l in s.splitlines() if l.strip()]


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--humaneval", default="/work/shared/data/humaneval/HumanEval.jsonl.gz")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    commit = git(a.gitdir, "rev-parse", "HEAD").decode().strip()
    he = {}
    for l in gzip.open(a.humaneval).read().decode().splitlines():
        if l.strip():
            r = json.loads(l)
            he[r["task_id"]] = r
    sources = [{"id": f"humaneval/{t}", "text": r["prompt"]} for t, r in he.items()]

    variants, counts, dup = [], Counter(), Counter()
    for fn, code in FILES.items():
        seen = set()
        for r in read_json_or_jsonl(git(a.gitdir, "show", f"HEAD:{ROOT}/{fn}")):
            assert r["nl"] == "eng_Latn", (fn, r["nl"])
            m = re.fullmatch(r"HumanEval[_/](\d+)", r["task_id"])
            tid = f"HumanEval/{int(m.group(1))}"
            assert tid in he, r["task_id"]
            if tid in seen:
                dup[code] += 1
                continue
            seen.add(tid)
            variants.append(
                {
                    "source": f"humaneval/{tid}",
                    "kind": "code_translation",
                    "lang": code,
                    "subtype": "multipl_e_via_mhumaneval",
                    "text": r["prompt"],
                }
            )
            counts[code] += 1

    os.makedirs(a.out, exist_ok=True)
    for name, rows in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    open(os.path.join(a.out, "LICENSE.txt"), "wb").write(git(a.gitdir, "show", "HEAD:LICENSE"))

    lines = (
        [
            "# mhumaneval_multiple: MultiPL-E-style English HumanEval prompts in 15 languages",
            "",
            f"- Source repository: https://github.com/mraihan-gmu/mHumanEval-Benchmark @ `{commit}`",
            f"- Paths: `{ROOT}/` " + ", ".join(f"`{f}`" for f in FILES),
            "- Licence: Apache-2.0 (repository `LICENSE`, copied to `LICENSE.txt`). MultiPL-E itself",
            "  (nuprl/MultiPL-E) is MIT-licensed; its prompts derive from openai/human-eval (MIT).",
            "- Who made the variants: the prompts are in MultiPL-E's format (Cassano et al., 2023,",
            "  rule-based compilers that translate the signature, turn the docstring into a comment and",
            '  translate doctest values; "reworded" terminology e.g. list->array/vector). The mHumanEval',
            "  authors ship them as the eng_Latn column of their PL files. No human or LLM rewriting of the",
            "  English text as far as the format shows. nuprl/MultiPL-E itself could not be fetched here",
            "  (snapshot over the 500 MB limit), so these are MultiPL-E prompts as redistributed by",
            "  mHumanEval; they were not byte-compared to MultiPL-E's own release.",
            "- Tasks MultiPL-E cannot translate for a language are absent (154-161 of 164 per language).",
            f"  Duplicate task ids dropped: {dict(dup) or 0}.",
            "- `sources.jsonl`: the 164 English HumanEval prompts from",
            f"  `{a.humaneval}` (openai/human-eval, MIT).",
            "- `variants.jsonl`: the `prompt` field, unmodified. No sampling.",
            "",
            "## Counts",
            "",
            f"- sources: {len(sources)}",
            f"- variants: {len(variants)} (kind=code_translation, subtype=multipl_e_via_mhumaneval)",
        ]
        + [f"  - {k}: {v}" for k, v in sorted(counts.items())]
        + [
            "",
            "## sha256",
            "",
        ]
        + [f"- `{n}`: `{sha256(os.path.join(a.out, n))}`" for n in ("sources.jsonl", "variants.jsonl", "LICENSE.txt")]
        + [
            "",
            f"Generated by `extract.py {os.path.basename(a.gitdir.rstrip('/'))}`.",
            "",
        ]
    )
    open(os.path.join(a.out, "PROVENANCE.md"), "w").write("\n".join(lines))
    print(len(sources), "sources;", len(variants), "variants;", dict(counts), "dup", dict(dup))


if __name__ == "__main__":
    main()
