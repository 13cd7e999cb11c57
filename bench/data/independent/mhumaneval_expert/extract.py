#!/usr/bin/env python3
"""Extract mHumanEval-Expert (human translations of HumanEval docstrings into 14 natural
languages) as nl_translation variants of the English HumanEval prompts.

usage: extract.py MHUMANEVAL_GIT_DIR [--humaneval PATH] [--out DIR]

MHUMANEVAL_GIT_DIR: bare git dir of github.com/mraihan-gmu/mHumanEval-Benchmark.
Reads only mHuamnEval-Expert/Human_Expert_*.json (JSON lines, 164 records in HumanEval order,
no task_id field) and LICENSE.
"""

import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
from collections import Counter

DIR = "mHuamnEval-Expert"  # sic, the repository's spelling
# FLORES-200 code -> ISO 639-1
ISO = {
    "arb_Arab": "ar",
    "ben_Beng": "bn",
    "fra_Latn": "fr",
    "hin_Deva": "hi",
    "ita_Latn": "it",
    "jpn_Jpan": "ja",
    "kor_Hang": "ko",
    "por_Latn": "pt",
    "sin_Sinh": "si",
    "spa_Latn": "es",
    "swh_Latn": "sw",
    "tel_Telu": "te",
    "zho_Hans": "zh",
    "zul_Latn": "zu",
}


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def read_jsonl(raw):
    return [json.loads(l) for l in raw.decode("utf-8").splitlines() if l.strip()]


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("--humaneval", default="/work/shared/data/humaneval/HumanEval.jsonl.gz")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    commit = git(a.gitdir, "rev-parse", "HEAD").decode().strip()
    he_rows = read_jsonl(gzip.open(a.humaneval).read())
    sources = [{"id": f"humaneval/{r['task_id']}", "text": r["prompt"]} for r in he_rows]

    names = git(a.gitdir, "ls-tree", "--name-only", f"HEAD:{DIR}").decode().split("\n")
    files = sorted(n for n in names if n.startswith("Human_Expert_") and n.endswith(".json"))
    variants, counts, dropped, unchanged = [], Counter(), Counter(), Counter()
    for fn in files:
        flores = fn[len("Human_Expert_") : -len(".json")]
        iso = ISO[flores]
        rows = read_jsonl(git(a.gitdir, "show", f"HEAD:{DIR}/{fn}"))
        assert len(rows) == len(he_rows), (fn, len(rows))
        for i, (r, h) in enumerate(zip(rows, he_rows)):
            assert r["nl"] == flores and r["pl"] == "python"
            # records carry no task_id: align by position and check the entry point
            if not re.search(r"def\s+%s\s*\(" % re.escape(h["entry_point"]), r["prompt"]):
                dropped[iso] += 1
                continue
            if r["prompt"].strip() == h["prompt"].strip():
                unchanged[iso] += 1
                continue
            variants.append(
                {
                    "source": f"humaneval/{h['task_id']}",
                    "kind": "nl_translation",
                    "lang": iso,
                    "subtype": "mhumaneval_expert_human",
                    "text": r["prompt"],
                }
            )
            counts[iso] += 1

    os.makedirs(a.out, exist_ok=True)
    for name, rows in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    open(os.path.join(a.out, "LICENSE.txt"), "wb").write(git(a.gitdir, "show", "HEAD:LICENSE"))

    lines = (
        [
            "# mhumaneval_expert: human translations of HumanEval prompts into 14 languages",
            "",
            f"- Source repository: https://github.com/mraihan-gmu/mHumanEval-Benchmark @ `{commit}`",
            f"- Paths: `{DIR}/` " + ", ".join(f"`{f}`" for f in files),
            "- Licence: Apache-2.0 (repository `LICENSE`, copied to `LICENSE.txt`).",
            '- Who made the variants: per the repository README (Raihan et al., "mHumanEval", NAACL',
            "  2025), mHumanEval-Expert holds human translations by native speakers with computer-science",
            "  backgrounds. Only the docstring prose is translated; signature, identifiers and doctest",
            "  examples stay in Python/English.",
            "- Mapping: the files have no task_id; records are in HumanEval order (164 per file). Record i",
            "  is mapped to HumanEval/i and kept only if `def <entry_point>(` of that task occurs in it.",
            f"  Dropped for a failed check: {dict(dropped) or 0}. Dropped as identical to the English",
            f"  prompt (untranslated): {dict(unchanged) or 0}.",
            "- `sources.jsonl`: the 164 English HumanEval prompts from",
            f"  `{a.humaneval}` (openai/human-eval, MIT).",
            "- `variants.jsonl`: the `prompt` field, unmodified. `lang` = ISO 639-1 (from FLORES-200 codes:",
            "  " + ", ".join(f"{k}->{v}" for k, v in ISO.items()) + ").",
            "- Not included: the machine-translated mHumanEval-{NL} files (204 languages; best of 13 MT",
            "  candidates from NLLB/GPT-4o etc.); extend with them if machine translations are wanted.",
            "",
            "## Counts",
            "",
            f"- sources: {len(sources)}",
            f"- variants: {len(variants)} (kind=nl_translation, subtype=mhumaneval_expert_human)",
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
    print(len(sources), "sources;", len(variants), "variants;", dict(counts), "dropped", dict(dropped), "unchanged", dict(unchanged))


if __name__ == "__main__":
    main()
