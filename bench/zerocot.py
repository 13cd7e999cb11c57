"""Benchmark: the Zero-CoT Probe on GSM8K items and their isomorphic references with the
embedded model. Prints wall time, the time spent inside model calls and their share (target
>= 90%: the probe's own work -- prompts, answer extraction, checkpointing, statistics -- must add
no real overhead), measured in the same run.

    .venv/bin/python bench/zerocot.py --n 200 --max-cot-tokens 64 --out /tmp/zcp-bench

Resumable: pairs finished in ``--out`` are not measured again (their time is not counted);
``--budget-s`` stops measuring after that many seconds and reports what was done.
The response cache is off so every call really reaches the model.
"""

from __future__ import annotations

import argparse
import platform
import time
from datetime import UTC, datetime
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200, help="GSM8K test items that have a reference variant")
    ap.add_argument("--max-cot-tokens", type=int, default=64)
    ap.add_argument("--max-answer-tokens", type=int, default=32)
    ap.add_argument("--truncation", default="0,0.25,0.5,0.75,1")
    ap.add_argument("--budget-s", type=float, default=0.0, help="stop measuring after this many seconds (0 = no limit)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/contam-bench-zerocot"))
    args = ap.parse_args()

    from contam.data import load_benchmark
    from contam.models import load
    from contam.outputs import JsonlCheckpoint, ensure_dir
    from contam.perturb import make_reference_set
    from contam.probe.reference import pair_items, variants_as_reference
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe

    t0 = time.perf_counter()
    items = load_benchmark("gsm8k")[: max(args.n * 2, args.n + 100)]
    ref = variants_as_reference(make_reference_set(items, variants=1, seed=0))
    pairs = pair_items(items, ref)[: args.n]
    t_ref = time.perf_counter() - t0
    model = load("smollm2", cache=False)
    cfg = ZeroCoTConfig(
        max_cot_tokens=args.max_cot_tokens,
        max_answer_tokens=args.max_answer_tokens,
        truncation=tuple(float(x) for x in args.truncation.split(",") if x),
    )
    probe = ZeroCoTProbe(cfg)
    ensure_dir(args.out)
    ck = JsonlCheckpoint(args.out / "items.jsonl", key="key")
    done_before = len(ck.done)
    t1 = time.perf_counter()
    model_s = 0.0
    measured = 0
    for start in range(0, len(pairs), cfg.batch_size):
        if args.budget_s and time.perf_counter() - t1 > args.budget_s:
            break
        chunk = pairs[start : start + cfg.batch_size]
        todo = [p for p in chunk if p[0].id not in ck.done]
        probe.measure(model, chunk, ck)
        model_s += probe.model_seconds
        measured += len(todo)
    wall = time.perf_counter() - t1
    recs = probe.measure(model, [p for p in pairs if p[0].id in ck.done], ck)  # all from the checkpoint
    t2 = time.perf_counter()
    res = probe.analyze(recs, "smollm2", probe.mode_for(model))
    t_stats = time.perf_counter() - t2
    ck.close()

    print(f"zero-CoT probe bench  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {platform.machine()} {platform.processor() or ''}")
    print(f"pairs requested {args.n}, available {len(pairs)}, measured now {measured} (already done before: {done_before})")
    print(f"config: max_cot_tokens={cfg.max_cot_tokens} max_answer_tokens={cfg.max_answer_tokens} truncation={cfg.truncation}")
    print(f"reference set built in {t_ref:.1f} s")
    if measured:
        print(f"wall {wall:.1f} s, inside model calls {model_s:.1f} s -> share {model_s / wall:.1%} (target >= 90%)")
        print(f"per pair {wall / measured:.2f} s wall, probe overhead {(wall - model_s) / measured * 1000:.1f} ms/pair")
    print(f"statistics on {res.n_pairs} pairs: {t_stats:.2f} s (McNemar x2, paired bootstrap x2 with {cfg.n_resamples} resamples)")
    for m in res.metrics:
        print(
            f"  {m.metric:17s} original {m.original:.3f} reference {m.reference:.3f} gap {m.gap:+.3f} p {m.test.p_value:.3g} conf {m.calibration.confidence:.3f}"
        )
    print(f"  contamination confidence ({res.primary_metric}): {res.contamination_confidence:.3f}")
    for c in res.curve:
        print(f"  curve kept {c.kept:.0%}: original {c.original:.3f} reference {c.reference:.3f}")


if __name__ == "__main__":
    main()
