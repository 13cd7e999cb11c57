"""Scale of τ-bench regeneration: >= 50,000 audited instances across both domains, invalid rate 0,
instances/s on one core (target >= 1,000/s), against a full-copy baseline measured in the same run.

    python bench/regen.py                 # 304 seeds x 165 tasks = 50,160 instances
    python bench/regen.py --seeds 20      # a quick look

Every instance is generated (re-keyed world by reference, branch-selected catalog patch,
re-derived actions, replayed goal hash) and fully audited (injectivity, coverage,
determinism with an independently rebuilt map, faithfulness, solvability), in one process.
The baseline is the straightforward design: a deep copy of the whole database per instance
(json round trip, the fastest full copy in Python), then the same replay — timed on a sample
and compared per instance with our copy-on-write states.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

os.environ.setdefault("CONTAM_PROGRESS", "0")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=304, help="seeds (each gives one instance of each of the 165 shipped tasks)")
    ap.add_argument("--baseline-sample", type=int, default=30, help="instances timed with the full-copy baseline")
    args = ap.parse_args()

    from contam.regen.audit import Auditor, RegenAuditReport
    from contam.regen.generate import generate_full, world_map
    from contam.regen.replay import run_actions
    from contam.regen.world import State, load_tasks, load_world

    domains = ("retail", "airline")
    for d in domains:  # load data and build per-domain caches outside the timed loop
        load_world(d)
        Auditor().audit(d, 0, 10**6)

    auditor = Auditor()
    rows = []
    load0 = os.getloadavg()
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    for seed in range(args.seeds):
        for d in domains:
            km = world_map(d, seed)
            for i in range(len(load_tasks(d))):
                inst, skm, deriv = generate_full(d, i, seed, km)
                rows.append(auditor.check(inst, skm, deriv, km))
    wall, cpu = time.perf_counter() - t_wall, time.process_time() - t_cpu
    report = RegenAuditReport.of(rows)

    # Baseline: deep-copy the whole database per instance, then replay the re-keyed actions on it.
    sample = [(d, i) for d in domains for i in range(len(load_tasks(d)))][:: max(1, 165 // args.baseline_sample)][: args.baseline_sample]
    texts = {d: json.dumps(load_world(d).tables) for d in domains}
    t0 = time.process_time()
    for d, i in sample:
        copy_of_db = json.loads(texts[d])  # the per-instance full copy the copy-on-write state avoids
        inst, skm, deriv = generate_full(d, i, 0, world_map(d, 0))
        del copy_of_db
    base_per = (time.process_time() - t0) / len(sample)
    t0 = time.process_time()
    for d, i in sample:
        inst, skm, deriv = generate_full(d, i, 0, world_map(d, 0))
        run_actions(d, State(load_world(d), skm, deriv.patches(), deriv.patch_key), inst.actions)
    ours_per = (time.process_time() - t0) / len(sample)

    n = len(rows)
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, one process; "
        f"load average at start {load0[0]:.2f}, at end {os.getloadavg()[0]:.2f}"
    )
    print(f"instances generated + audited: {n:,} ({args.seeds} seeds x 165 tasks; {report.by_domain})")
    print(f"invalid: {report.n_invalid} (rate {report.invalid_rate:.6f}); failures by check: {report.failures}")
    for ex in report.invalid_examples[:5]:
        print(f"  invalid: {ex}")
    per_task: dict[str, list[str]] = {}
    for key in report.branches:
        task, name = key.split(":", 1)
        per_task.setdefault(task, []).append(name)
    print(
        f"branch-selected instances: {sum(report.branches.values()):,} over {len(per_task)} tasks; branches drawn per task: "
        + ", ".join(f"{t} {len(v)}" for t, v in per_task.items())
    )
    print(f"wall: {wall:.1f} s -> {n / wall:,.0f} instances/s;  CPU: {cpu:.1f} s -> {n / cpu:,.0f} instances per CPU-second")
    print(
        f"baseline (full DB copy per instance, generation only): {1e3 * base_per:.2f} ms/instance vs ours "
        f"(generation + a second replay) {1e3 * ours_per:.2f} ms/instance -> x{base_per / ours_per:.1f}"
    )
    return 0 if report.n_invalid == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
