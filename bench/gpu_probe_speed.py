"""Model-side throughput on an accelerator against the CPU, same run (issue 34, target 3).

The three probes of the model side (Zero-CoT with its truncation curve, the performance cliff
with one isomorphic variant per item, Min-K% and its family) on the same GSM8K test items with
the embedded SmolLM2-135M through the transformers backend (``hf:smollm2``: the package's GGUF
dequantized), once on each ``--devices`` entry. Items go to each probe as one list, so a backend
that batches (the transformers one batches greedy prompts, left-padded) can. Printed per device:
seconds per probe, items per second over all three, and the ratio to the first device; and
whether the devices agree on the forced answers (bf16 on CUDA against fp32 on CPU may differ on
a near tie, so this is reported, not required).

    python bench/gpu_probe_speed.py --n 32 --devices cuda,cpu --cpu-n 8 --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("CONTAM_PROGRESS", "0")


def run_device(device: str, n: int, cot_tokens: int) -> dict:
    import torch

    from contam.data import load_benchmark
    from contam.models.hf import HFModel
    from contam.perturb import make_reference_set
    from contam.probe.cliff import CliffConfig, CliffProbe
    from contam.probe.logprob import LogProbConfig, LogProbProbe
    from contam.probe.reference import pair_items, variants_as_reference
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe

    items = load_benchmark("gsm8k")[: 3 * n]
    ref = variants_as_reference(make_reference_set(items, variants=1, seed=0))
    pairs = pair_items(items, ref)[:n]
    origs = [o for o, _ in pairs]
    varis = [v for _, v in pairs]
    t = time.perf_counter()
    lm = HFModel("smollm2", device=device)
    load_s = time.perf_counter() - t
    zc = ZeroCoTProbe(ZeroCoTConfig(max_cot_tokens=cot_tokens, max_answer_tokens=32))
    cliff = CliffProbe(CliffConfig(k=1, max_new_tokens=cot_tokens))
    mink = LogProbProbe(LogProbConfig())
    zc.measure_items(lm, origs[:2], "prefill")  # warm-up (kernels, allocator), outside the clock
    secs: dict[str, float] = {}

    def clock(name: str, fn):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        secs[name] = round(time.perf_counter() - t0, 2)
        print(f"  [{device}] {name}: {secs[name]} s for {len(pairs)} items", flush=True)
        return out

    z = clock("zerocot", lambda: zc.measure_items(lm, origs + varis, "prefill"))
    c = clock("cliff", lambda: cliff.measure(lm, origs, {o.id: [v] for o, v in pairs}))
    clock("minkprob", lambda: mink.measure(lm, {"benchmark": origs, "control": varis}))
    total = sum(secs.values())
    return {
        "device": device,
        "name": torch.cuda.get_device_name(0) if device.startswith("cuda") else f"{os.cpu_count()} CPU threads",
        "dtype": str(lm.dtype),
        "items": len(pairs),
        "load_s": round(load_s, 1),
        "seconds": secs,
        "items_per_s": round(len(pairs) / total, 3),
        "ids": [m.id for m in z],
        "forced_answers": [m.zero_answer for m in z],
        "cot_answers": [m.full_answer for m in z],
        "cliff_original_correct": [x.original_correct for x in c],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--n", type=int, default=32, help="GSM8K test items (each with one variant) on the accelerator")
    ap.add_argument("--cpu-n", type=int, default=8, help="items on a CPU device (the first of the same items)")
    ap.add_argument("--devices", default="cuda,cpu")
    ap.add_argument("--cot-tokens", type=int, default=96, help="the demo's chain-of-thought budget")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    for dev in args.devices.split(","):
        rows.append(run_device(dev, args.cpu_n if dev == "cpu" else args.n, args.cot_tokens))
        if args.json:  # after each device: a run stopped at its time limit keeps what finished
            args.json.write_text(json.dumps({"rows": rows, "cot_tokens": args.cot_tokens}, indent=2, default=str) + "\n", encoding="utf-8")
    first = rows[0]
    print(f"\nmodel-side throughput  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  smollm2 via transformers, CoT {args.cot_tokens} tokens")
    for r in rows:
        print(f"  {r['device']:6s} {r['name']:28s} {r['dtype']:15s} {r['items']:3d} items  {r['items_per_s']:7.3f} items/s  "
              f"ratio {r['items_per_s'] / first['items_per_s']:.3f}  {r['seconds']}")  # fmt: skip
    for r in rows[1:]:
        a = dict(zip(first["ids"], zip(first["forced_answers"], first["cot_answers"], strict=True), strict=True))
        b = dict(zip(r["ids"], zip(r["forced_answers"], r["cot_answers"], strict=True), strict=True))
        common = sorted(set(a) & set(b))
        same_forced = sum(a[k][0] == b[k][0] for k in common)
        same_cot = sum(a[k][1] == b[k][1] for k in common)
        print(
            f"  {first['device']} vs {r['device']} on {len(common)} common items: forced answers equal {same_forced}, CoT answers equal {same_cot}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
