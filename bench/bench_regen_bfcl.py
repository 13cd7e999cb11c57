"""Audited regenerated instances per second per core: BFCL v4 multi-turn next to τ-bench, in one
run, plus BFCL's regeneration coverage by category and rejection reason.

    python bench/bench_regen_bfcl.py                 # 10 seeds x 800 BFCL tasks, 10 seeds x 165 τ-bench tasks
    python bench/bench_regen_bfcl.py --seeds 2       # a quick look

One process, one core. Each instance is generated and fully audited (BFCL: injective, covered,
deterministic with a full second regeneration, faithful with a fresh replay of the written
calls through BFCL's classes, solvable; τ-bench: contam's Auditor). Per-task work done once
(BFCL: the shipped replay and the probing of which state fields may be resampled; τ-bench: the
per-domain caches) is timed separately and not counted per instance.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter

os.environ.setdefault("CONTAM_PROGRESS", "0")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10, help="seeds per benchmark (BFCL: x 800 tasks; τ-bench: x 165)")
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.seeds)

    from contam.regen.audit import Auditor
    from contam.regen.bfcl.audit import audit
    from contam.regen.bfcl.reseed import Generated, generate, plan
    from contam.regen.bfcl.world import CATEGORIES, load_tasks
    from contam.regen.generate import generate_full, world_map
    from contam.regen.world import load_tasks as tau_tasks
    from contam.regen.world import load_world

    load0 = os.getloadavg()[0]
    # --- BFCL: per-task plans (shipped replay + field probing), once
    t0 = time.process_time()
    tasks = load_tasks()
    for t in tasks:
        plan(t.id)
    plan_cpu = time.process_time() - t0

    t0, w0 = time.process_time(), time.perf_counter()
    clean, invalid = Counter(), 0
    total = Counter()
    reasons: Counter[tuple[str, str]] = Counter()
    n_bfcl = 0
    for seed in seeds:
        for t in tasks:
            total[t.category] += 1
            g = generate(t.id, seed)
            if not isinstance(g, Generated):
                reasons[(t.category, g.reason)] += 1
                continue
            row = audit(g)
            n_bfcl += 1
            if row.valid:
                clean[t.category] += 1
            else:
                invalid += 1
    bfcl_cpu, bfcl_wall = time.process_time() - t0, time.perf_counter() - w0

    # --- τ-bench, same process, same seeds
    for d in ("retail", "airline"):
        load_world(d)
        Auditor().audit(d, 0, 10**6)
    auditor = Auditor()
    t0 = time.process_time()
    n_tau = tau_invalid = 0
    for seed in seeds:
        for d in ("retail", "airline"):
            km = world_map(d, seed)
            for i in range(len(tau_tasks(d))):
                inst, skm, deriv = generate_full(d, i, seed, km)
                n_tau += 1
                tau_invalid += not auditor.check(inst, skm, deriv, km).valid
    tau_cpu = time.process_time() - t0

    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, one process; "
        f"load average at start {load0:.2f}, at end {os.getloadavg()[0]:.2f}"
    )
    print(f"seeds {seeds.start}:{seeds.stop}")
    print(f"BFCL per-task plans (800 shipped replays + field probing): {plan_cpu:.1f} CPU-s once")
    print(
        f"BFCL: {n_bfcl:,} audited instances (invalid {invalid}) in {bfcl_cpu:.1f} CPU-s ({bfcl_wall:.1f} s wall) "
        f"-> {n_bfcl / bfcl_cpu:,.0f} instances/s/core"
    )
    print(
        f"tau-bench: {n_tau:,} audited instances (invalid {tau_invalid}) in {tau_cpu:.1f} CPU-s -> {n_tau / tau_cpu:,.0f} instances/s/core"
    )
    n_all = sum(total.values())
    print(
        f"BFCL coverage: {sum(clean.values()):,} of {n_all:,} (task, seed) regenerate with a clean audit ({sum(clean.values()) / n_all:.2%})"
    )
    for c in CATEGORIES:
        print(f"  {c:13s} {clean[c]:5d} / {total[c]:5d}  ({clean[c] / total[c]:.2%})")
    by_reason = Counter()
    for (_c, r), n in reasons.items():
        by_reason[r] += n
    for r, n in by_reason.most_common():
        cats = {c: reasons[(c, r)] for c in CATEGORIES if reasons[(c, r)]}
        tasks_hit = n // len(seeds) if n % len(seeds) == 0 else f"~{n / len(seeds):.1f}"
        print(f"  rejected {r}: {n} ({tasks_hit} tasks per seed) {cats}")
    return 0 if invalid == 0 and tau_invalid == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
