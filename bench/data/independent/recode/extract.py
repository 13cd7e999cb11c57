#!/usr/bin/env python3
"""Extract ReCode (amazon-science/recode) HumanEval perturbations of the docstring
(nlaugmenter) and of the function name (func_name) as English rephrase variants.

usage: extract.py RECODE_GIT_DIR [--humaneval PATH] [--out DIR]

Reads dataset-release/nominal/HumanEval.jsonl and the seed-0 files under
dataset-release/perturbed_finalized/humaneval/full/{nlaugmenter,func_name}/.
"""

import argparse
import gzip
import hashlib
import json
import os
import subprocess
from collections import Counter

BASE = "dataset-release/perturbed_finalized/humaneval/full"
GROUPS = ("nlaugmenter", "func_name")


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
    he = {r["task_id"]: r for r in read_jsonl(gzip.open(a.humaneval).read())}
    sources = [{"id": f"humaneval/{t}", "text": r["prompt"]} for t, r in he.items()]
    nominal = {r["task_id"]: r["prompt"] for r in read_jsonl(git(a.gitdir, "show", "HEAD:dataset-release/nominal/HumanEval.jsonl"))}
    nominal_same = sum(nominal[t] == he[t]["prompt"] for t in he)

    variants, counts, unchanged, paths = [], Counter(), Counter(), []
    for g in GROUPS:
        names = git(a.gitdir, "ls-tree", "--name-only", f"HEAD:{BASE}/{g}").decode().split("\n")
        for fn in sorted(n for n in names if n.endswith("_s0.jsonl")):
            paths.append(f"{BASE}/{g}/{fn}")
            sub = "recode_" + fn[len("humaneval_") : -len("_s0.jsonl")]
            for r in read_jsonl(git(a.gitdir, "show", f"HEAD:{BASE}/{g}/{fn}")):
                tid = r["task_id"]
                assert tid in he, tid
                if r["prompt"] == nominal[tid]:  # perturbation left this prompt as is
                    unchanged[sub] += 1
                    continue
                variants.append({"source": f"humaneval/{tid}", "kind": "rephrase", "lang": "en", "subtype": sub, "text": r["prompt"]})
                counts[sub] += 1

    os.makedirs(a.out, exist_ok=True)
    for name, rows in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    lic = git(a.gitdir, "show", "HEAD:LICENSE") + b"\n\n---- NOTICE ----\n" + git(a.gitdir, "show", "HEAD:NOTICE")
    open(os.path.join(a.out, "LICENSE.txt"), "wb").write(lic)

    lines = (
        [
            "# recode: ReCode perturbations of HumanEval prompts (English, rule/model-based)",
            "",
            f"- Source repository: https://github.com/amazon-science/recode @ `{commit}`",
            "- Paths: `dataset-release/nominal/HumanEval.jsonl` and",
        ]
        + [f"  `{p}`" for p in paths]
        + [
            "- Licence: Apache-2.0 (repository `LICENSE` + `NOTICE`, copied to `LICENSE.txt`).",
            '- Who made the variants: Wang et al. (2023), "ReCode: Robustness Evaluation of Code',
            '  Generation Models" (ACL). Automatic transformations, no human or GPT-4 writing:',
            "  - nlaugmenter (docstring prose only): BackTranslation (NL-Augmenter's en->de->en",
            "    machine back-translation; the most free-form rephrase here),",
            "    SynonymSubstitution / SynonymInsertion (WordNet), EnglishInflectionalVariation,",
            "    TenseTransformationPast/Future, ButterFingersPerturbation / SwapCharacters /",
            "    ChangeCharCase / WhitespacePerturbation (typo-like noise).",
            "  - func_name (function name in signature and doctests): FuncRenameSynonymSub,",
            "    FuncRenameInflectionalVariation, FuncRenameCamelCase, FuncRenameButterFinger,",
            "    FuncRenameSwapChar, FuncRenameChangeChar.",
            "  `subtype` = `recode_<transformation>`; use the BackTranslation / Synonym* / Tense* /",
            "  Inflectional subtypes for 'paraphrase', the rest are noise-type perturbations.",
            "- Sampling: seed 0 (`_s0`) of each transformation only (ReCode ships s0..s9 for the",
            "  randomised ones). Records whose prompt equals ReCode's nominal prompt (transformation",
            f"  did not fire) are dropped: {sum(unchanged.values())} dropped in total (all 164 of",
            "  FuncRenameSynonymSub s0 are unchanged, so that subtype is absent).",
            f"- ReCode's nominal prompts equal the official HumanEval prompts for {nominal_same}/164 tasks.",
            "- `sources.jsonl`: the 164 English HumanEval prompts from",
            f"  `{a.humaneval}` (openai/human-eval, MIT).",
            "- `variants.jsonl`: the perturbed `prompt` field, unmodified.",
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
            f"Generated by `extract.py {os.path.basename(a.gitdir.rstrip('/'))}`.",
            "",
        ]
    )
    open(os.path.join(a.out, "PROVENANCE.md"), "w").write("\n".join(lines))
    print(
        len(sources), "sources;", len(variants), "variants;", dict(counts), "unchanged", dict(unchanged), "nominal==official", nominal_same
    )


if __name__ == "__main__":
    main()
