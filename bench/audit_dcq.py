"""contam audit, data side, on real GPT-4 rephrasings (DCQ sample, 40 GSM8K train items):
which injected rephrasings and verbatim copies the audit finds, at which level, its verdict,
and the wall time of the whole audit (scan every level + decontaminate + report with figures).

    PYTHONPATH=src python bench/audit_dcq.py --out /tmp/audit-dcq

Prints one JSON line per scenario: injected rephrasings (r) and verbatim copies (v) in 140
documents (120 of real prose, 20 same-genre GSM8K train items outside the benchmark).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from contam.audit.demo_data import build_dataset, write_benchmark
from contam.cli.main import main


def run(out: Path, r: int, v: int, seed: int) -> dict:
    ds = out / f"ds-r{r}-v{v}-s{seed}.jsonl"
    truth = build_dataset(ds, rephrased=r, verbatim=v, seed=seed)
    bench = out / "bench.jsonl"
    run_dir = out / f"run-r{r}-v{v}-s{seed}"
    t0 = time.perf_counter()
    rc = main(["audit", "-b", str(bench), "--dataset", str(ds), "--out", str(run_dir), "--fresh", "--fail-on", "contaminated"])
    wall = time.perf_counter() - t0
    flags = [json.loads(x) for x in (run_dir / "data" / "scan" / "flags.jsonl").read_text(encoding="utf-8").splitlines()]
    by_doc = {f["doc_id"]: f for f in flags if f["contaminated"]}
    found = {"rephrasing": 0, "verbatim": 0}
    levels: dict[str, int] = {}
    for t in truth:
        d = by_doc.get(t["doc_id"])
        if d and any(fl["item_id"] == t["item_id"] for fl in d["flags"]):
            found[t["kind"]] += 1
            levels[d["level"]] = levels.get(d["level"], 0) + 1
    truth_docs = {t["doc_id"] for t in truth}
    (data,) = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))["verdicts"]
    return {
        "rephrasings": r,
        "verbatim": v,
        "seed": seed,
        "found_rephrasings": found["rephrasing"],
        "found_verbatim": found["verbatim"],
        "found_by_level": levels,
        "false_positive_docs": sum(1 for d in by_doc if d not in truth_docs),
        "verdict": data["verdict"],
        "exit_code": rc,
        "wall_s": round(wall, 1),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/audit-dcq")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    write_benchmark(out / "bench.jsonl")
    for r, v, seed in ((0, 0, 0), (1, 0, 0), (6, 0, 0), (0, 2, 0), (6, 2, 0), (6, 0, 1)):
        print(json.dumps(run(out, r, v, seed)), flush=True)
