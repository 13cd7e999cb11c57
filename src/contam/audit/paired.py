"""The paired verdict against a reference model (``--ref-model``), resumable per item.

Per item and its first isomorphic variant: d = [s_M(orig) - s_M(ref)] - [s_base(orig) - s_base(ref)],
with s the log-prob per character of the words where the two texts differ (``did_diff`` of
:mod:`contam.probe.paired`, ``unit="char"``: the reference model may have another tokenizer,
e.g. ``--ref-model gemma3-270m``); tested d > 0 with a one-sided Wilcoxon signed-rank test. The
reference model's own preference for the original texts (its pre-training, more natural numbers)
cancels out, which the unpaired Min-K% comparison cannot do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contam.errors import ConfigError
from contam.probe.runfolder import OnItem, run_in_folder

#: Pairs scored per checkpoint write (a kill loses at most this many).
CHUNK = 8


def run_paired(
    model_spec: str,
    ref_spec: str,
    benchmark: str,
    reference: str,
    n: int,
    out: Path,
    alpha: float = 0.05,
    on_item: OnItem | None = None,
    api_key_env: str | None = None,
) -> dict:
    """Score every (item, variant) pair under both models into ``out/items.jsonl``; ``out/summary.json``."""
    from contam.data import load_benchmark
    from contam.probe.evalprobes import PairScore, pair_scores, paired_verdict
    from contam.probe.runs import load_model
    from contam.probe.variantset import load_variants, pair_items
    from contam.textsafe import redact_url

    items = load_benchmark(benchmark)
    items = items[:n] if n > 0 else items
    pairs = pair_items(items, load_variants(reference))
    if not pairs:
        raise ConfigError(f"paired verdict: none of the {len(items)} items of {benchmark} has a reference variant")

    def work(ck: Any) -> dict[str, Any]:
        todo = [p for p in pairs if p[0].id not in ck.done]
        if todo:
            model, base = load_model(model_spec, api_key_env=api_key_env), load_model(ref_spec, api_key_env=api_key_env)
            for s in range(0, len(todo), CHUNK):
                for rec in pair_scores(model, base, todo[s : s + CHUNK]):
                    ck.write(rec)
        keep = {p[0].id for p in pairs}
        recs = [r for r in (PairScore.from_dict(r) for r in ck.records if isinstance(r, dict)) if r.id in keep]
        v = paired_verdict(benchmark, "did_diff", [r.d("did_diff", "char") for r in recs], alpha=alpha)
        return {
            "command": "paired",
            "benchmark": benchmark,
            "model": redact_url(model_spec),
            "ref_model": redact_url(ref_spec),
            "method": "did_diff",
            "unit": "char",
            "n_pairs": len(recs),
            "verdict": v.to_dict(),
        }

    # No run.json: the audit's own fingerprint guards this folder (audit.json).
    return run_in_folder(out, None, work, key="id", on_item=on_item)
