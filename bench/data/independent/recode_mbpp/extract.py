#!/usr/bin/env python3
"""Extract ReCode (amazon-science/recode) MBPP docstring/function-name perturbations as
English rephrase variants of MBPP problems (200-problem deterministic sample).

usage: extract.py RECODE_GIT_DIR --mbpp-gitdir MBPP_GIT_DIR [--mbpp-path mbpp.jsonl] [--out DIR]

Sources are the original MBPP problems (text + first test assert, as in ../mbpp), read
from a git dir holding the original mbpp.jsonl.
"""

import argparse
import hashlib
import json
import os
import subprocess
from collections import Counter

BASE = "dataset-release/perturbed_finalized/mbpp/full"
GROUPS = ("nlaugmenter", "func_name")
N = 200


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def read_jsonl(raw):
    return [json.loads(l) for l in raw.decode("utf-8").splitlines() if l.strip()]


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def sample_ids(ids):
    """Deterministic: the N test-split ids (11..510) with the smallest sha256('mbpp/<id>')."""
    pool = [i for i in ids if 11 <= i <= 510]
    return sorted(sorted(pool, key=lambda i: hashlib.sha256(f"mbpp/{i}".encode()).hexdigest())[:N])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--mbpp-gitdir", required=True)
    ap.add_argument("--mbpp-path", default="mbpp.jsonl")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    commit = git(a.gitdir, "rev-parse", "HEAD").decode().strip()
    mcommit = git(a.mbpp_gitdir, "rev-parse", "HEAD").decode().strip()
    mbpp = {r["task_id"]: r for r in read_jsonl(git(a.mbpp_gitdir, "show", f"HEAD:{a.mbpp_path}"))}
    nominal = {
        int(r["task_id"].split("/")[1]): r for r in read_jsonl(git(a.gitdir, "show", "HEAD:dataset-release/nominal/mbpp_wtest.jsonl"))
    }
    ids = sample_ids(sorted(set(mbpp) & set(nominal)))
    sources = [{"id": f"mbpp/{i}", "text": mbpp[i]["text"].strip() + "\n" + mbpp[i]["test_list"][0].strip()} for i in ids]
    idset = set(ids)

    variants, counts, unchanged, paths = [], Counter(), Counter(), []
    for g in GROUPS:
        names = git(a.gitdir, "ls-tree", "--name-only", f"HEAD:{BASE}/{g}").decode().split("\n")
        for fn in sorted(n for n in names if n.endswith("_s0.jsonl")):
            paths.append(f"{BASE}/{g}/{fn}")
            sub = "recode_" + fn[len("mbpp_") : -len("_s0.jsonl")]
            for r in read_jsonl(git(a.gitdir, "show", f"HEAD:{BASE}/{g}/{fn}")):
                i = int(r["task_id"].split("/")[1])
                if i not in idset:
                    continue
                if r["prompt"] == nominal[i]["prompt"]:
                    unchanged[sub] += 1
                    continue
                variants.append({"source": f"mbpp/{i}", "kind": "rephrase", "lang": "en", "subtype": sub, "text": r["prompt"]})
                counts[sub] += 1

    os.makedirs(a.out, exist_ok=True)
    for name, rows in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    lic = (
        git(a.gitdir, "show", "HEAD:LICENSE")
        + b"\n\n---- NOTICE ----\n"
        + git(a.gitdir, "show", "HEAD:NOTICE")
        + b"\n\n---- MBPP (sources.jsonl) ----\nMBPP (Austin et al., 2021) is CC BY 4.0, "
        b"https://github.com/google-research/google-research/tree/master/mbpp\n"
    )
    open(os.path.join(a.out, "LICENSE.txt"), "wb").write(lic)

    lines = (
        [
            "# recode_mbpp: ReCode perturbations of MBPP prompts (English, automatic)",
            "",
            f"- Variants: https://github.com/amazon-science/recode @ `{commit}`; paths",
            "  `dataset-release/nominal/mbpp_wtest.jsonl` (to detect no-op perturbations) and",
        ]
        + [f"  `{p}`" for p in paths]
        + [
            f"- Sources: original MBPP `mbpp.jsonl` read from https://github.com/muitiiifruckt/ASE @ `{mcommit}`",
            "  (a third-party copy of google-research's mbpp.jsonl, texts cross-checked against MBXP; see ../mbpp/PROVENANCE.md).",
            '  `text` = MBPP problem statement + "\\n" + first assert of `test_list` (same as ../mbpp).',
            "- Licence: ReCode data Apache-2.0 (+NOTICE); MBPP CC BY 4.0. See `LICENSE.txt`.",
            "- Who made the variants: Wang et al. (2023), ReCode (ACL); automatic transformations",
            "  (NL-Augmenter back-translation, WordNet synonyms, tense/inflection changes, typo noise;",
            "  function-name renames). Note ReCode's MBPP prompts are in MBXP's HumanEval-like format",
            "  (Python signature + docstring holding the MBPP text and doctest examples built from the",
            "  tests), so every variant also differs from the source in format, not only in wording.",
            f"- Sampling: {N} problems of the MBPP test split (ids 11..510), those with the smallest",
            '  sha256("mbpp/<id>") (deterministic); seed-0 file of each transformation; records whose',
            f"  prompt equals ReCode's nominal prompt are dropped ({sum(unchanged.values())} in total).",
            "",
            "## Counts",
            "",
            f"- sources: {len(sources)}",
            f"- variants: {len(variants)} (kind=rephrase, lang=en)",
        ]
        + [f"  - {k}: {v} (unchanged, dropped: {unchanged[k]})" for k, v in sorted(counts.items())]
        + [
            "",
            "## sha256",
            "",
        ]
        + [f"- `{n}`: `{sha256(os.path.join(a.out, n))}`" for n in ("sources.jsonl", "variants.jsonl", "LICENSE.txt")]
        + [
            "",
            f"Generated by `extract.py {os.path.basename(a.gitdir.rstrip('/'))} --mbpp-gitdir "
            f"{os.path.basename(a.mbpp_gitdir.rstrip('/'))}`.",
            "",
        ]
    )
    open(os.path.join(a.out, "PROVENANCE.md"), "w").write("\n".join(lines))
    print(len(sources), "sources;", len(variants), "variants;", dict(counts), "unchanged", dict(unchanged))


if __name__ == "__main__":
    main()
