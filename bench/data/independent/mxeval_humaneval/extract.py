#!/usr/bin/env python3
"""Extract Multilingual HumanEval (amazon-science/mxeval, Athiwaratkun et al. 2022) prompts
as code-translation variants of the English HumanEval prompts.

usage: extract.py MXEVAL_GIT_DIR [--humaneval PATH] [--out DIR]

Reads only data/multilingual_humaneval/*.jsonl and its LICENSE from the bare git dir.
"""

import argparse
import gzip
import hashlib
import json
import os
import subprocess
from collections import Counter

# file -> language code used in variants.jsonl
FILES = {
    "HumanEval_csharp_v1.jsonl": "cs",
    "HumanEval_go_v1.jsonl": "go",
    "HumanEval_java_v1.1.jsonl": "java",
    "HumanEval_javascript_v1.1.jsonl": "js",
    "HumanEval_kotlin_v1.1.jsonl": "kt",
    "HumanEval_perl_v1.1.jsonl": "perl",
    "HumanEval_php_v1.1.jsonl": "php",
    "HumanEval_ruby_v1.1.jsonl": "rb",
    "HumanEval_scala_v1.1.jsonl": "scala",
    "HumanEval_swift_v1.1.jsonl": "swift",
    "HumanEval_typescript_v1.jsonl": "ts",
}
DIR = "data/multilingual_humaneval"


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

    variants, counts = [], Counter()
    for fn, code in FILES.items():
        for r in read_jsonl(git(a.gitdir, "show", f"HEAD:{DIR}/{fn}")):
            num = int(r["task_id"].rsplit("/", 1)[1])
            tid = f"HumanEval/{num}"
            assert tid in he, r["task_id"]
            variants.append(
                {
                    "source": f"humaneval/{tid}",
                    "kind": "code_translation",
                    "lang": code,
                    "subtype": "mxeval_multilingual_humaneval",
                    "text": r["prompt"],
                }
            )
            counts[code] += 1

    os.makedirs(a.out, exist_ok=True)
    for name, rows in (("sources.jsonl", sources), ("variants.jsonl", variants)):
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    lic = (
        b"data/multilingual_humaneval/LICENSE (applies to these data files):\n\n"
        + git(a.gitdir, "show", f"HEAD:{DIR}/LICENSE")
        + b"\n\n----------------------------------------------------------------\n"
        + b"Repository LICENSE (amazon-science/mxeval):\n\n"
        + git(a.gitdir, "show", "HEAD:LICENSE")
    )
    open(os.path.join(a.out, "LICENSE.txt"), "wb").write(lic)

    lines = (
        [
            "# mxeval_humaneval: Multilingual HumanEval (MBXP paper) prompts as code translations",
            "",
            f"- Source repository: https://github.com/amazon-science/mxeval @ `{commit}`",
            f"- Paths: `{DIR}/` " + ", ".join(f"`{f}`" for f in FILES),
            "- Licence: the data folder carries an MIT licence (`data/multilingual_humaneval/LICENSE`,",
            "  inherited from openai/human-eval); the repository is Apache-2.0. Both are in `LICENSE.txt`.",
            '- Who made the variants: Athiwaratkun et al. (2022), "Multi-lingual Evaluation of Code',
            '  Generation Models" (MBXP / Multilingual HumanEval). Made by their rule-based conversion',
            "  framework (transpiles signature, docstring-as-comment, doctest examples, tests), not by",
            "  humans or an LLM. The English docstring text is kept; function names are camelCased in",
            "  some languages; type annotations converted. A few tasks per language could not be converted",
            "  (161 of 164 for most languages). The v1.1 prompts of several languages (e.g. Kotlin, Java,",
            '  Swift) start with a line such as "You are an expert Kotlin programmer, and here is your task."',
            "  added by the dataset authors; kept as given.",
            "- `sources.jsonl`: the 164 English HumanEval prompts from",
            f"  `{a.humaneval}` (openai/human-eval, MIT).",
            "- `variants.jsonl`: the `prompt` field of every record, unmodified; `HumanEval_<lang>/<n>`",
            "  mapped to `humaneval/HumanEval/<n>`. No sampling. `lang` codes: cs, go, java, js, kt, perl,",
            "  php, rb, scala, swift, ts.",
            "- Overlap warning: this is a different, independent translation from HumanEval-X",
            "  (`../humaneval_x`) and from MultiPL-E (`../mhumaneval_multiple`).",
            "",
            "## Counts",
            "",
            f"- sources: {len(sources)}",
            f"- variants: {len(variants)} (kind=code_translation, subtype=mxeval_multilingual_humaneval)",
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
    print(len(sources), "sources;", len(variants), "variants;", dict(counts))


if __name__ == "__main__":
    main()
