"""Benchmark (issue 34, target 1): the model side -- Zero-CoT Probe (with its truncation curve),
performance cliff and Min-K% -- on the same GSM8K items and their isomorphic variants with the
embedded SmolLM2, on the plain path (every prompt evaluated from scratch, every forced answer
generated to ``\\]`` or its token budget) and on the prefix-reusing path (the KV cache of the
previous prompt reused, forced answers stopped where the box closes), in one run.

    .venv/bin/python bench/model_speed.py --n 10 --max-cot-tokens 96

Both paths run on one model instance (``reuse_prefix`` switched), pair by pair, alternating which
goes first so a drift in machine load hits both alike; the response cache is off so every call
reaches the model. It checks that the two paths give the same records -- chains of thought,
forced answers, curves, cliff answers exactly; log-prob scores within 1e-4 -- prints the time of
each probe on each path and the ratio, and counts the forced answers that stopping at the closing
brace changes against the text the plain path generates on (a later box the model opens).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "unknown CPU"
    return next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "unknown CPU")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10, help="GSM8K test items that have a variant")
    ap.add_argument("--max-cot-tokens", type=int, default=96, help="CoT budget of the Zero-CoT Probe and the cliff (the demo's)")
    ap.add_argument("--max-answer-tokens", type=int, default=32)
    args = ap.parse_args()

    import numpy as np

    from contam.data import load_benchmark
    from contam.models import load
    from contam.models.base import box_close
    from contam.models.llamacpp import LlamaCppModel
    from contam.perturb import make_reference_set
    from contam.probe.answers import extract_boxed
    from contam.probe.cliff import CliffConfig, CliffProbe
    from contam.probe.logprob import LogProbConfig, LogProbProbe
    from contam.probe.reference import pair_items, variants_as_reference
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe

    items = load_benchmark("gsm8k")[: 3 * args.n]
    ref = variants_as_reference(make_reference_set(items, variants=1, seed=0))
    pairs = pair_items(items, ref)[: args.n]
    model = load("smollm2", cache=False)
    assert isinstance(model, LlamaCppModel)
    zc = ZeroCoTProbe(ZeroCoTConfig(max_cot_tokens=args.max_cot_tokens, max_answer_tokens=args.max_answer_tokens))
    cliff = CliffProbe(CliffConfig(k=1, max_new_tokens=args.max_cot_tokens))
    mink = LogProbProbe(LogProbConfig())

    # On the plain path the forced answers come from generate(); keep its full texts to see what the cut changes.
    full_texts: list[tuple[str, str]] = []
    plain_generate = model.generate

    def recording_generate(prompts, **kw):
        outs = plain_generate(prompts, **kw)
        if kw.get("stop") == ["\\]"] and not model.reuse_prefix:
            full_texts.extend((str(p), o[0].text) for p, o in zip(prompts, outs, strict=True))
        return outs

    model.generate = recording_generate

    def run(reuse: bool, orig, var) -> tuple[dict[str, float], tuple]:
        model.reuse_prefix = reuse
        model.kv.forget()
        secs: dict[str, float] = {}
        t = time.perf_counter()
        z = zc.measure_items(model, [orig, var], "prefill")
        secs["zerocot"] = time.perf_counter() - t
        t = time.perf_counter()
        c = cliff.measure(model, [orig], {orig.id: [var]})
        secs["cliff"] = time.perf_counter() - t
        t = time.perf_counter()
        m = mink.measure(model, {"benchmark": [orig], "control": [var]})
        secs["minkprob"] = time.perf_counter() - t
        return secs, (z, c, m)

    load_start = os.getloadavg()[0]
    t_old: Counter[str] = Counter()
    t_new: Counter[str] = Counter()
    same_records = True
    worst_score = 0.0
    kv0 = (model.kv.reused, model.kv.evaluated)
    for i, (orig, var) in enumerate(pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        out = {}
        for reuse in order:
            secs, recs = run(reuse, orig, var)
            (t_new if reuse else t_old).update(secs)
            out[reuse] = recs
        (z0, c0, m0), (z1, c1, m1) = out[False], out[True]
        same_records &= z0 == z1 and c0 == c1
        for a, b in zip(m0, m1, strict=True):
            for k in a.scores:
                worst_score = max(worst_score, abs(a.scores[k] - b.scores[k]) if np.isfinite(a.scores[k]) else 0.0)
        print(
            f"pair {i + 1}/{len(pairs)}: plain {sum(t_old.values()):.0f} s, prefix-reusing {sum(t_new.values()):.0f} s so far", flush=True
        )
    reused, evaluated = model.kv.reused - kv0[0], model.kv.evaluated - kv0[1]
    # The answer on the pre-issue-34 path was the last box in (prompt + full text); now it is the forced box.
    changed = 0
    for p, full in full_texts:
        end = box_close(full)
        if end is not None and extract_boxed(p + full) != extract_boxed(p + full[:end]):
            changed += 1

    old, new = sum(t_old.values()), sum(t_new.values())
    print()
    print(f"model-side speed bench  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {cpu_name()}, {len(os.sched_getaffinity(0))} CPUs")
    print(f"threads {os.environ.get('CONTAM_THREADS', 'default')}, load average {load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end")
    print(f"{len(pairs)} GSM8K test items with one variant each, smollm2, max_cot_tokens={args.max_cot_tokens}, cliff K=1, cache off")
    for probe in ("zerocot", "cliff", "minkprob"):
        print(f"  {probe:9s} plain {t_old[probe]:7.1f} s  prefix-reusing {t_new[probe]:7.1f} s  ratio {t_old[probe] / t_new[probe]:.2f}x")
    print(f"  {'all':9s} plain {old:7.1f} s  prefix-reusing {new:7.1f} s  ratio {old / new:.2f}x")
    print(f"prompt tokens on the prefix-reusing path: {reused} from the KV cache, {evaluated} decoded")
    print(f"same records on both paths (CoTs, forced answers, curves, cliff answers): {same_records}")
    print(f"largest Min-K% family score difference: {worst_score:.2e} (must be <= 1e-4)")
    print(f"forced answers whose extraction the stop at the closing brace changes: {changed} of {len(full_texts)}")
    if not same_records or worst_score > 1e-4:
        raise SystemExit("the two paths disagree")


if __name__ == "__main__":
    main()
