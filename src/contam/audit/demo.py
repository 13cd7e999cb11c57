"""``make demo``: ``contam audit`` on a synthetic dataset with real GPT-4 rephrasings injected,
and on the embedded SmolLM2 model, offline, in minutes on 2 cores.

    python -m contam.audit.demo --out demo-out

It writes the benchmark (a packaged sample of GSM8K train items), the dataset (real prose with
six of the items' GPT-4 rephrasings and two verbatim copies injected) and its ground truth, then
runs the audit that the ``contam audit`` command it prints would run (:func:`contam.audit.run_audit`
on the same config) and prints the verdicts and the report's path.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

#: Benchmark items per model-side probe in the demo (see ``main``).
DEMO_LIMIT = 24


def replace_if_changed(new: Path, final: Path) -> bool:
    """Move ``new`` onto ``final`` unless ``final`` already holds the same bytes (then ``new`` is
    removed and ``final`` keeps its modification time); whether ``final`` changed.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a.new").write_text("x"), (d / "a").write_text("x")
    >>> replace_if_changed(d / "a.new", d / "a"), (d / "a.new").exists()
    (False, False)
    >>> _ = (d / "a.new").write_text("y")
    >>> replace_if_changed(d / "a.new", d / "a"), (d / "a").read_text()
    (True, 'y')
    """
    if final.is_file() and final.read_bytes() == new.read_bytes():
        new.unlink()
        return False
    new.replace(final)
    return True


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    from contam.audit import AuditConfig, run_audit
    from contam.audit.demo_data import build_dataset, write_benchmark
    from contam.audit.report import show_verdict
    from contam.audit.runner import holds_another_audit
    from contam.errors import ContamError, as_contam_error
    from contam.outputs import atomic_write, ensure_dir

    console, err_console = Console(highlight=False), Console(stderr=True, highlight=False, soft_wrap=True)
    ap = argparse.ArgumentParser(prog="python -m contam.audit.demo", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", default="demo-out", help="folder for everything the demo writes")
    # 24: the variant builder gives 21 of the sample's first 24 items an audited variant, and a
    # model-side verdict needs at least 20 items per probe (AuditConfig.min_items); with 20 items
    # (19 pairs) the verdict was "inconclusive: too few items".
    ap.add_argument("--limit", type=int, default=DEMO_LIMIT, help="benchmark items per model-side probe")
    ap.add_argument("--model", default="smollm2", help="model spec")
    args = ap.parse_args(argv)
    out = ensure_dir(args.out)
    # Written beside and moved in only when they differ: an input rewritten with the same bytes
    # would still look changed to the audit (it checks size and modification time) and stop it.
    bench, dataset_path = out / "dcq-gsm8k-train.jsonl", out / "dataset.jsonl"
    with tempfile.TemporaryDirectory(dir=out, prefix=".inputs.") as tmp:
        staging = Path(tmp)
        write_benchmark(staging / bench.name)
        truth = build_dataset(staging / dataset_path.name, rephrased=6, verbatim=2)
        for final in (bench, dataset_path):
            replace_if_changed(staging / final.name, final)
    with atomic_write(out / "injections.jsonl") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in truth)
    console.print(
        f"dataset {out / 'dataset.jsonl'}: real prose + 20 same-genre GSM8K train items outside the benchmark, with "
        f"{sum(t['kind'] == 'rephrasing' for t in truth)} GPT-4 rephrasings (DCQ) and {sum(t['kind'] == 'verbatim' for t in truth)} "
        f"verbatim copies of benchmark items injected (ground truth: {out / 'injections.jsonl'})",
        markup=False,
    )
    dataset = str(dataset_path)
    cfg = AuditConfig(
        benchmarks=(str(bench),),
        dataset=dataset,
        model=args.model,
        limit=args.limit,
        per_item=1,
        max_cot_tokens=96,
        probes=("zerocot", "minkprob"),
        out=str(out / "audit"),
        title="contam demo audit",
    )
    cmd = ["audit", "-b", str(bench), "--dataset", dataset, "--model", args.model, "--limit", str(args.limit), "--per-item", "1",
           "--max-cot-tokens", "96", "--probes", "zerocot,minkprob", "--out", cfg.out, "--title", str(cfg.title)]  # fmt: skip
    console.print("$ contam " + " ".join(cmd), style="dim", markup=False)
    t0 = time.perf_counter()
    rc = 0
    try:
        # The demo owns its folder: an audit there of other inputs or settings (another version of
        # contam wrote them) is started afresh, where `contam audit` would refuse it; the same resumes.
        fresh = holds_another_audit(cfg)
        if fresh:
            err_console.print(f"{cfg.out}: the demo's inputs changed since its last run: starting its audit afresh", markup=False)
        verdict = run_audit(cfg, fresh=fresh, say=lambda s: err_console.print(s, markup=False, highlight=False))
        show_verdict(verdict, Path(cfg.out), console)
    except (ContamError, OSError) as e:
        err = as_contam_error(e)
        if err is None:
            raise
        err_console.print("error: " + " ".join(str(err).split("\n")), markup=False)
        rc = err.exit_code
    console.print(
        f"audit finished in {time.perf_counter() - t0:.0f} s (exit code {rc}); open {out / 'audit' / 'report.html'} in a browser",
        markup=False,
    )
    return rc


if __name__ == "__main__":
    sys.exit(main())
