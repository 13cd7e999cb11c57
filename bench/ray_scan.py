"""The Ray Data executor against the local engine on the same sharded corpus (issue 19).

Builds ``--gb`` GB of JSONL in ``--shards`` shards (web-like paragraphs with real GSM8K /
HumanEval / MMLU items injected, as ``bench/l1_scan.py`` does), then scans it against the three
benchmarks with ``run_sharded`` on the local engine and on a local Ray cluster
(``ray.init(num_cpus=CORES)``), in alternation, ``--repeat`` times each; prints wall seconds,
MB/s, the Ray/local wall ratio, and checks that both engines wrote byte-identical flags.
Also prints the size of the fitted token-level index per benchmark set (pickled: what each
worker holds and what Ray puts in its object store).

    flock /tmp/cpu.lock nice -n 5 .venv/bin/python bench/ray_scan.py --gb 1.0 --shards 8 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("CONTAM_PROGRESS", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from contam.data import load_benchmarks
from contam.scan.ngram import NGramConfig, NGramScanner
from contam.scan.shards import resolve_corpus, run_sharded
from l1_scan import BENCHMARKS, build


def index_sizes() -> None:
    for names in (["gsm8k"], ["humaneval"], ["mmlu"], BENCHMARKS):
        items = load_benchmarks(names)
        t0 = time.process_time()
        scanner = NGramScanner(NGramConfig()).fit(items)
        fit = time.process_time() - t0
        size = len(pickle.dumps(scanner, protocol=5))
        print(f"index {'+'.join(names)}: {len(items):,} items, pickled {size / 1e6:.1f} MB, fitted in {fit:.2f} CPU-s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    import ray

    index_sizes()
    tmp = Path(tempfile.mkdtemp(prefix="contam-ray-bench-"))
    try:
        t0 = time.perf_counter()
        (tmp / "in").mkdir()
        for k in range(args.shards):
            build(tmp / "in" / f"part-{k:03d}.jsonl", int(args.gb * 1e9 / args.shards), seed=k, every=500)
        size = sum(p.stat().st_size for p in (tmp / "in").iterdir())
        print(f"built {size / 1e9:.2f} GB in {args.shards} shards in {time.perf_counter() - t0:.0f} s")
        items = load_benchmarks(BENCHMARKS)
        ray.init(num_cpus=args.cores, include_dashboard=False, log_to_driver=False)
        walls: dict[str, list[float]] = {"local": [], "ray": []}
        for r in range(args.repeat):
            for engine in ("local", "ray"):
                out = tmp / f"{engine}-{r}"
                t0 = time.perf_counter()
                s = run_sharded([tmp / "in"], items, out, engine=engine, workers=args.cores)
                walls[engine].append(time.perf_counter() - t0)
                print(
                    f"{engine} run {r + 1}: {walls[engine][-1]:.1f} s wall, {size / 1e6 / walls[engine][-1]:.1f} MB/s, {s['documents']:,} documents, {s['flagged']:,} flagged"
                )
        same = all(
            (tmp / f"local-{r}" / "shards" / sh.folder / "flags.jsonl").read_bytes() == (tmp / f"ray-{r}" / "shards" / sh.folder / "flags.jsonl").read_bytes()
            for r in range(args.repeat) for sh in resolve_corpus([tmp / "in"])
        )  # fmt: skip
        loc, ray_w = statistics.median(walls["local"]), statistics.median(walls["ray"])
        print(
            f"median wall: local {loc:.1f} s ({size / 1e6 / loc / args.cores:.1f} MB/s per core), ray {ray_w:.1f} s; ray/local = {ray_w / loc:.2f}x; flags identical: {same}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
