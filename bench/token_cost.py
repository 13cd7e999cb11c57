"""CPU of the token level against an earlier commit's, same corpus, same flags (issue 31 target 3).

Builds a slice of the L1 bench corpus (``bench/l1_scan.py``'s builder: web-like paragraphs with
GSM8K, HumanEval and MMLU items injected every 500 lines; seed fixed), extracts the reference
commit's ``src`` (``git archive REF src``, default ``bd0891d``: before the token-level fold) into
a temporary folder (and ``--head``'s, to time an earlier commit instead of the checkout), and runs ``contam.scan.job.run_scan`` on the slice against gsm8k + humaneval
+ mmlu with the default levels (the token level) and the same settings, once with the reference
tree and once with this checkout's ``src``, each in a fresh interpreter (``PYTHONPATH``), in
pairs whose order alternates. One untimed run of each first (the reference tree compiles its
numba kernels into its own cache). Per run: the CPU of the ``run_scan`` call (``process_time``
plus its workers' ``getrusage(RUSAGE_CHILDREN)``), the same less the index setup, and the whole
process (``getrusage(RUSAGE_CHILDREN)`` of this script around it: imports included). Prints the
medians, the median of the per-pair ratios HEAD / REF, and whether the two trees wrote the same
flags (documents, items, and ``flags.jsonl`` byte for byte).

    .venv/bin/python bench/token_cost.py [--mb 100] [--pairs 3] [--workers 1] [--ref bd0891d] [--head REV] [--corpus FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ["gsm8k", "humaneval", "mmlu"]

# One scan in a fresh interpreter; prints a JSON line (imports not timed here, the caller's
# rusage counts them).
_RUN = """
import json, os, resource, sys, time
os.environ["CONTAM_PROGRESS"] = "0"
import contam
from contam.scan.job import run_scan
c0 = time.process_time()
s = run_scan(sys.argv[1], sys.argv[3].split(","), sys.argv[2], workers=int(sys.argv[4]))
cpu = time.process_time() - c0
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"scan": cpu + ch.ru_utime + ch.ru_stime, "setup": s["setup_cpu_seconds"], "flagged": s["flagged"], "src": contam.__file__}))
"""


def run_once(src: Path, corpus: Path, out: Path, workers: int) -> dict:
    """One scan with the package at ``src``; adds ``process`` (the interpreter's whole CPU)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(src), "CONTAM_PROGRESS": "0"}
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(corpus), str(out), ",".join(BENCHMARKS), str(workers)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # not the repository: its src must not shadow PYTHONPATH's
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    if not r["src"].startswith(str(src)):
        raise RuntimeError(f"ran {r['src']}, not the tree at {src}")
    r["process"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    r["scan_less_setup"] = r["scan"] - r["setup"]
    return r


def flags_of(out: Path) -> list[tuple[str, list[str]]]:
    """(document id, its flagged item ids) per flagged document of a scan folder."""
    with open(out / "flags.jsonl", encoding="utf-8") as fh:
        return [(r["doc_id"], sorted(f["item_id"] for f in r["flags"])) for r in map(json.loads, fh)]


def extract(rev: str, tmp: Path) -> Path:
    """The ``src`` folder of commit ``rev``, extracted under ``tmp`` once."""
    root = tmp / f"src-{rev}"
    if not (root / "src" / "contam").exists():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root / "src"


def build_slice(path: Path, mb: float, seed: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from l1_scan import build  # the L1 bench corpus builder

    build(path, int(mb * 1e6), seed, 500)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--mb", type=float, default=100.0, help="size of the corpus slice to build (1e6 bytes)")
    ap.add_argument("--corpus", type=Path, default=None, help="scan this JSONL corpus instead of building one")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs", type=int, default=3, help="timed pairs (REF, HEAD), order alternating")
    ap.add_argument("--workers", type=int, default=1, help="run_scan's workers (1: in-process, the least noisy)")
    ap.add_argument("--ref", default="bd0891d", help="the reference commit")
    ap.add_argument("--head", default=None, help="time this commit's src instead of the checkout's (e.g. an earlier figure)")
    ap.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="contam-token-cost-"))
    tmp.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus
    if corpus is None:
        corpus = tmp / f"corpus-{args.mb:g}mb-seed{args.seed}.jsonl"
        if not corpus.exists():
            t0 = time.perf_counter()
            build_slice(corpus, args.mb, args.seed)
            print(f"built {corpus} ({corpus.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.0f} s")
    head = args.head or "HEAD"
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", head], check=True, capture_output=True, text=True).stdout.strip()
    trees = {"ref": extract(args.ref, tmp), "head": extract(args.head, tmp) if args.head else ROOT / "src"}
    mb = corpus.stat().st_size / 1e6
    print(
        f"corpus {corpus} ({mb:.0f} MB); {args.ref} vs HEAD = {head} ({rev}{'' if args.head else ', the checkout'}); workers={args.workers}; {args.pairs} pairs, CPU-seconds"
    )
    for side, src in trees.items():  # untimed: the reference tree compiles its kernels here
        run_once(src, corpus, tmp / f"out-{side}", args.workers)
    runs: dict[str, list[dict]] = {"ref": [], "head": []}
    for i in range(args.pairs):
        for side in ("ref", "head") if i % 2 == 0 else ("head", "ref"):
            r = run_once(trees[side], corpus, tmp / f"out-{side}", args.workers)
            runs[side].append(r)
            print(
                f"  pair {i + 1} {side:4s}: scan {r['scan']:.3f}, less setup {r['scan_less_setup']:.3f}, process {r['process']:.3f}, flagged {r['flagged']}"
            )
    print(f"{'measure':18s} {args.ref + ' (median)':>18s} {'HEAD (median)':>14s} {'HEAD/' + args.ref:>14s} {'pair ratios':>22s}")
    for key in ("scan", "scan_less_setup", "process"):
        a = [r[key] for r in runs["ref"]]
        b = [r[key] for r in runs["head"]]
        ratios = [y / x for x, y in zip(a, b, strict=True)]
        print(
            f"{key:18s} {statistics.median(a):18.3f} {statistics.median(b):14.3f} {statistics.median(ratios):13.3f}x"
            f"  {', '.join(f'{q:.3f}' for q in ratios):>20s}"
        )
    fa, fb = flags_of(tmp / "out-ref"), flags_of(tmp / "out-head")
    same_bytes = (tmp / "out-ref" / "flags.jsonl").read_bytes() == (tmp / "out-head" / "flags.jsonl").read_bytes()
    print(
        f"flags: {args.ref} {len(fa)} documents / {sum(len(x[1]) for x in fa)} items, HEAD {len(fb)} / {sum(len(x[1]) for x in fb)};"
        f" same documents and items: {fa == fb}; flags.jsonl byte-identical: {same_bytes}"
    )
    return 0 if fa == fb else 1


if __name__ == "__main__":
    sys.exit(main())
