"""How much batched decoding could speed up the model side on this CPU (issue 34, target 1).

After prefix reuse and the box stop (``bench/model_speed.py``) what is left of the Zero-CoT Probe
and the cliff is the chain of thought decoded one token at a time, and of Min-K% the scored
texts' prompt evaluation. Decoding B sequences together costs one forward pass over B tokens per
step, so its throughput is bounded by what llama.cpp evaluates in batches of B tokens. This prints
tokens per second for batches of 1..64 tokens with the embedded SmolLM2 as the probes run it
(``logits_all``, the default thread count), in one process, alternating sizes over rounds so a
change in load hits every size alike, and the ratio of each to B = 1: the ceiling of batched
decoding's speed-up on the decode share of the probes.

    .venv/bin/python bench/decode_batching.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, datetime

SIZES = (1, 2, 4, 8, 16, 64)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=128, help="tokens evaluated per size and round")
    args = ap.parse_args()

    from contam.models import load
    from contam.models.llamacpp import LlamaCppModel

    model = load("smollm2", cache=False)
    assert isinstance(model, LlamaCppModel)
    llm = model._llm  # the probes' own context: same threads, n_batch, logits_all
    ids = model.tokenize("Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. " * 40)
    start = 64
    rates: dict[int, list[float]] = {b: [] for b in SIZES}
    load0 = os.getloadavg()[0]
    for _ in range(args.rounds):
        for b in SIZES:
            llm.reset()
            llm.eval(ids[:start])  # a context to attend to, as after a prompt
            n = max(b, args.tokens - args.tokens % b)
            t = time.perf_counter()
            for s in range(start, start + n, b):
                llm.eval(ids[s : s + b])
            rates[b].append(n / (time.perf_counter() - t))
    model.kv.forget()
    one = statistics.median(rates[1])
    print(f"decode batching bench  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {len(os.sched_getaffinity(0))} CPUs, threads {llm.n_threads}")
    print(f"load average {load0:.1f} at start, {os.getloadavg()[0]:.1f} at end; median of {args.rounds} rounds")
    for b in SIZES:
        med = statistics.median(rates[b])
        print(f"  batch {b:3d}: {med:7.1f} tokens/s  x{med / one:.2f} of one token at a time")


if __name__ == "__main__":
    main()
