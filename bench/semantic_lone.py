"""One rephrased benchmark item hidden in a corpus of same-genre questions, ten times (issue 30, target 4).

Each of 10 corpora holds 999 GSM8K *train* questions and one GPT-4 rewrite of a GSM8K *test*
question made by other people (MathCheck-GSM's "problem understanding" rewrites, the ones that move
the wording furthest; ``bench/data/independent/mathcheck_gsm``). Every corpus is scanned the way a
user would, ``contam scan -b gsm8k -c CORPUS --levels all`` with the defaults, and the bench counts
the corpora whose rewrite is flagged *against its own source item*, and the false flags among the
train questions.

Held out: the rewrites are of test-half items and the train questions are the test half of GSM8K
train (the halves of ``bench/semantic_independent.py``), so none of them was in the fit of the
shipped combiner or threshold. The test half holds about 3,700 train questions, so the 10 windows of
999 overlap: the false-flag rate is counted once per distinct question. Train questions that are
re-skins of a test item (``gsm8k_cross_split``, or one template sharing >= 60 % of the words) are
set apart, as in the other tables.

    python bench/semantic_lone.py [--corpora 10] [--size 999] [--rewrites mathcheck|benbench]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
sys.path.insert(0, str(ROOT))

from semantic_independent import DATA, _hash, gsm8k_train_corpus, half_of, read_jsonl  # noqa: E402

CONTAM = str(Path(sys.executable).with_name("contam"))


#: Where the hidden rewrites come from: (set, subtype).
REWRITES = {"mathcheck": ("mathcheck_gsm", "mathcheck_problem_understanding"), "benbench": ("benbench_gsm8k", "benbench_gsm8k")}


def rewrites(n: int, kind: str = "mathcheck") -> list[dict]:
    name, subtype = REWRITES[kind]
    rows = read_jsonl(DATA / name / "variants.jsonl")
    rows = [r for r in rows if r.get("subtype") == subtype and half_of(r["source"]) == "test"]
    return sorted(rows, key=lambda r: _hash(r["source"] + r["text"]))[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=int, default=10)
    ap.add_argument("--size", type=int, default=999, help="train questions per corpus")
    ap.add_argument(
        "--rewrites",
        choices=sorted(REWRITES),
        default="mathcheck",
        help="MathCheck's far GPT-4 rewrites (the target) or BenBench's LLM rewrites",
    )
    ap.add_argument("--out", default=str(ROOT / "results" / "semantic_lone.json"))
    args = ap.parse_args()
    train = gsm8k_train_corpus("test")
    negatives = [(text, twin) for text, twin in zip(train.texts, train.cross_split, strict=True)]
    picks = rewrites(args.corpora, args.rewrites)
    step = max(1, (len(negatives) - args.size) // max(1, args.corpora - 1))
    found, per_corpus, false_texts, twins_flagged = 0, [], set(), 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="contam-lone-") as tmp:
        for k, pick in enumerate(picks):
            window = negatives[k * step : k * step + args.size]
            docs = [{"id": f"train{k * step + i}", "text": t} for i, (t, _) in enumerate(window)]
            at = _hash(pick["text"]) % (len(docs) + 1)
            docs.insert(at, {"id": "rewrite", "text": pick["text"]})
            corpus = Path(tmp) / f"c{k}.jsonl"
            corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
            out = Path(tmp) / f"scan{k}"
            cmd = [CONTAM, "scan", "-b", "gsm8k", "-c", str(corpus), "--levels", "all", "--all", "-o", str(out)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            rows = {r["doc_id"]: r for r in map(json.loads, (out / "flags.jsonl").read_text(encoding="utf-8").splitlines())}
            hit = pick["source"] in {f.get("item_id") for f in rows.get("rewrite", {}).get("flags", ())}
            found += hit
            false_here = 0
            for i, (text, twin) in enumerate(window):
                if rows.get(f"train{k * step + i}", {}).get("contaminated"):
                    if twin:
                        twins_flagged += 1
                    else:
                        false_here += 1
                        false_texts.add(text)
            per_corpus.append({"source": pick["source"], "found": hit, "false_flags": false_here})
            print(f"corpus {k}: {pick['source']} {'found' if hit else 'MISSED'}, {false_here} false flags", flush=True)
    distinct = {t for t, tw in negatives[: (args.corpora - 1) * step + args.size] if not tw}
    res = {
        "date": date.today().isoformat(),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "rewrites": args.rewrites,
        "corpora": len(picks),
        "found": found,
        "false_flags_distinct": len(false_texts),
        "distinct_train_questions": len(distinct),
        "false_flags_per_10k": round(1e4 * len(false_texts) / max(1, len(distinct)), 2),
        "twins_flagged": twins_flagged,
        "wall_s": round(time.perf_counter() - t0, 1),
        "per_corpus": per_corpus,
        "false_flag_texts": sorted(false_texts),
    }
    print(json.dumps({k: v for k, v in res.items() if k != "false_flag_texts"}, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
