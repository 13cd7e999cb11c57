#!/usr/bin/env python3
"""Extract MBXP (amazon-science/mxeval): MBPP problems converted to 12 other programming
languages, as code-translation variants of MBPP (200-problem deterministic sample).

usage: extract.py MXEVAL_GIT_DIR --mbpp-gitdir MBPP_GIT_DIR [--mbpp-path mbpp.jsonl] [--out DIR]
"""

import argparse
import hashlib
import json
import os
import subprocess
from collections import Counter

DIR = "data/mbxp"
FILES = {  # the versions data/mbxp/metadata.json points to
    "mbcpp_release_v1.2.jsonl": "cpp",
    "mbcsp_release_v1.2.jsonl": "cs",
    "mbgp_release_v1.1.jsonl": "go",
    "mbjp_release_v1.2.jsonl": "java",
    "mbjsp_release_v1.2.jsonl": "js",
    "mbkp_release_v1.2.jsonl": "kt",
    "mbphp_release_v1.2.jsonl": "php",
    "mbplp_release_v1.jsonl": "perl",
    "mbrbp_release_v1.2.jsonl": "rb",
    "mbscp_release_v1.jsonl": "scala",
    "mbswp_release_v1.jsonl": "swift",
    "mbtsp_release_v1.2.jsonl": "ts",
}
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
    ids = sample_ids(sorted(mbpp))
    idset = set(ids)
    sources = [{"id": f"mbpp/{i}", "text": mbpp[i]["text"].strip() + "\n" + mbpp[i]["test_list"][0].strip()} for i in ids]

    variants, counts, desc_mismatch = [], Counter(), Counter()
    for fn, code in FILES.items():
        for r in read_jsonl(git(a.gitdir, "show", f"HEAD:{DIR}/{fn}")):
            i = int(r["task_id"].rsplit("/", 1)[1])
            if i not in idset:
                continue
            if r.get("description", "").strip() != mbpp[i]["text"].strip():
                desc_mismatch[code] += 1
            variants.append({"source": f"mbpp/{i}", "kind": "code_translation", "lang": code, "subtype": "mbxp", "text": r["prompt"]})
            counts[code] += 1

    os.makedirs(a.out, exist_ok=True)
    for name, rows in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    lic = (
        b"data/mbxp/LICENSE (applies to the MBXP data files):\n\n"
        + git(a.gitdir, "show", f"HEAD:{DIR}/LICENSE")
        + b"\n\n----------------------------------------------------------------\n"
        + b"Repository LICENSE (amazon-science/mxeval):\n\n"
        + git(a.gitdir, "show", "HEAD:LICENSE")
    )
    open(os.path.join(a.out, "LICENSE.txt"), "wb").write(lic)

    lines = (
        [
            "# mbxp: MBPP problems converted to 12 programming languages (MBXP)",
            "",
            f"- Variants: https://github.com/amazon-science/mxeval @ `{commit}`; paths",
            "  " + ", ".join(f"`{DIR}/{f}`" for f in FILES) + " (the versions `data/mbxp/metadata.json` names).",
            f"- Sources: original MBPP `mbpp.jsonl` read from https://github.com/muitiiifruckt/ASE @ `{mcommit}`",
            "  (a third-party copy of google-research's mbpp.jsonl, texts cross-checked against MBXP; see ../mbpp/PROVENANCE.md);",
            '  `text` = MBPP problem statement + "\\n" + first assert of `test_list` (same as ../mbpp).',
            "- Licence: MBXP data CC BY 4.0 (`data/mbxp/LICENSE`); repository Apache-2.0; MBPP CC BY 4.0.",
            '- Who made the variants: Athiwaratkun et al. (2022), "Multi-lingual Evaluation of Code',
            '  Generation Models": rule-based conversion of MBPP (signature, doctest-style examples from',
            "  the tests, and the MBPP sentence kept verbatim inside a doc comment); function names are",
            "  camelCased in several languages. Not human- or LLM-written.",
            f'- Sampling: {N} problems of the MBPP test split (ids 11..510), smallest sha256("mbpp/<id>")',
            "  (same sample as ../recode_mbpp); every language record for those ids.",
            f"- Records whose `description` differs from the MBPP text: {dict(desc_mismatch) or 0}",
            '  (MBXP replaces "Write a python function" by "Write a <Language> function"; otherwise verbatim).',
            "",
            "## Counts",
            "",
            f"- sources: {len(sources)}",
            f"- variants: {len(variants)} (kind=code_translation, subtype=mbxp)",
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
            f"Generated by `extract.py {os.path.basename(a.gitdir.rstrip('/'))} --mbpp-gitdir "
            f"{os.path.basename(a.mbpp_gitdir.rstrip('/'))}`.",
            "",
        ]
    )
    open(os.path.join(a.out, "PROVENANCE.md"), "w").write("\n".join(lines))
    print(len(sources), "sources;", len(variants), "variants;", dict(counts), "desc_mismatch", dict(desc_mismatch))


if __name__ == "__main__":
    main()
