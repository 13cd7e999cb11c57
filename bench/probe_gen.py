"""Speed of the generation probes: how much of a probe's wall time is the model's own.

Runs CDD, reconstruction and the SWE-bench file-path task with the embedded model (response cache
off, so every call is real) and reports wall time, the time spent inside ``model.generate`` and
the ratio (target: the probe adds no real overhead, model share >= 90%). Also: gold-patch parsing
throughput over all 800 shipped SWE-bench Verified + Lite patches (baseline: unidiff's bare parse
of the same patches, measured in the same run).

    .venv/bin/python bench/probe_gen.py [--items 3]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Sequence
from typing import Any

from contam.data import load_benchmark
from contam.models import load
from contam.probe.cdd import CDD, CDDConfig
from contam.probe.patches import parse_patch
from contam.probe.reconstruct import Reconstruct, ReconstructConfig
from contam.probe.swe import FilePath, SweConfig
from contam.probe.textsim import rouge_l


class TimedModel:
    """The real model, with the seconds spent inside ``generate`` added up."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def generate(self, prompts: Sequence[Any], **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return self.inner.generate(prompts, **kw)
        finally:
            self.seconds += time.perf_counter() - t
            self.calls += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=3)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")

    swe = load_benchmark("swebench-verified") + load_benchmark("swebench-lite")
    t = time.perf_counter()
    from unidiff import PatchSet

    for it in swe:
        PatchSet(it.solution)
    base = time.perf_counter() - t
    t = time.perf_counter()
    n_fn = sum(len(parse_patch(it.solution).functions) for it in swe)
    ours = time.perf_counter() - t
    print(
        f"patch parsing: {len(swe)} patches, {n_fn} changed functions, {len(swe) / ours:,.0f} patches/s "
        f"(unidiff alone {len(swe) / base:,.0f}/s; ratio {base / ours:.2f})"
    )

    model = load("smollm2", cache=False)
    rouge_l("warm up", "the imports")  # rouge-score/nltk import once, outside the timings
    gsm = load_benchmark("gsm8k")[: args.items]
    runs = [
        ("cdd (n=10, 32 tokens)", lambda m: CDD(CDDConfig(n_samples=10, max_tokens=32)).run(m, gsm)),
        ("reconstruct (n=4)", lambda m: Reconstruct(ReconstructConfig(n_samples=4, max_new_tokens=32)).run(m, gsm)),
        ("swe-filepath", lambda m: FilePath(SweConfig(max_issue_chars=1500)).run(m, swe[: args.items])),
    ]
    for name, fn in runs:
        timed = TimedModel(model)
        t = time.perf_counter()
        fn(timed)
        wall = time.perf_counter() - t
        print(
            f"{name}: {args.items} items, wall {wall:.1f} s, inside the model {timed.seconds:.1f} s "
            f"({timed.calls} calls), model share {100 * timed.seconds / wall:.1f}%"
        )


if __name__ == "__main__":
    main()
