"""Build a variant set into a folder, resumably: what ``contam perturb --out`` and the audit's
variant-set step both call.

Layout::

    OUT/variants.jsonl    one variant per line, appended as they are made (a rerun skips items already there)
    OUT/summary.json      the set's settings and the audit of every generated instance
    OUT/rejections.jsonl  items without variants and why (symbolic, permute, mask)
    OUT/judge.jsonl       each judged variant (with a judge model)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contam.errors import ConfigError
from contam.textsafe import redact_url

log = logging.getLogger(__name__)

KINDS = ("auto", "symbolic", "permute", "mask", "paraphrase")

#: The fields of a variant that a variant set's line holds.
ROW_FIELDS = (
    "original_id",
    "variant_id",
    "kind",
    "seed",
    "question",
    "answer",
    "solution",
    "choices",
    "template_id",
    "audit_hash",
    "original_answer",
    "values",
    "metadata",
)


def build_variant_folder(
    benchmark: str,
    out: Path | None,
    *,
    variants: int = 1,
    seed: int = 0,
    kind: str = "auto",
    limit: int | None = None,
    model: str = "smollm2",
    floor: float = 0.8,
    budget: int = 400,
    fresh: bool = False,
    swap_names: bool = False,
    judge: str | None = None,
    on_item: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """``variants`` variants per item of ``benchmark`` (its first ``limit``; None or 0 = all) into
    ``out`` (None: nothing written); returns the summary. ``on_item`` is told of every variant
    written. A folder made with another benchmark, kind, seed or count is refused unless ``fresh``."""
    from contam.data import load_benchmark
    from contam.outputs import JsonlCheckpoint, ensure_dir, write_json

    if kind not in KINDS:
        raise ConfigError(f"--kind {kind!r}: choose one of {', '.join(KINDS)}")
    items = load_benchmark(benchmark)
    if limit:
        items = items[:limit]
    ck = None
    if out is not None:
        ensure_dir(out)
        _check_resume(out, fresh, {"benchmark": benchmark, "kind": kind, "seed": seed, "variants_per_item": variants})
        ck = JsonlCheckpoint(out / "variants.jsonl", key="original_id", resume=not fresh, on_write=on_item)
        log.info("%s: %d variant line(s) already there", out, len(ck.records))
    if kind == "paraphrase":  # model calls are costly: items already written are skipped
        summary = _paraphrase([it for it in items if ck is None or it.id not in ck.done], model, variants, seed, floor, ck)
    else:
        summary = _computed(items, variants, seed, kind, budget, ck, out, swap_names, judge)
    summary.update({"benchmark": benchmark, "kind": kind, "seed": seed, "variants_per_item": variants})
    if ck is not None:
        ck.close()
    if out is not None:
        if not (out / "variants.jsonl").exists():  # a judge may keep none: the set is empty, not missing
            (out / "variants.jsonl").touch()
        write_json(out / "summary.json", summary)
    return summary


#: The old name of :func:`build_variant_folder` (issue 33: the reference set is now the variant set).
build_reference_folder = build_variant_folder


def _check_resume(out: Path, fresh: bool, settings: dict[str, Any]) -> None:
    """Refuse to append to a folder made with other settings (the set would mix seeds or kinds)."""
    prev = out / "summary.json"
    if fresh or not prev.exists() or not (out / "variants.jsonl").exists():
        return
    try:
        old = json.loads(prev.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    for k, v in settings.items():
        if k in old and old[k] != v:
            raise ConfigError(f"{out}: was built with {k}={old[k]!r}, not {v!r}; use the same settings to resume, or --fresh to start over")


def _computed(
    items: list, variants: int, seed: int, kind: str, budget: int, ck: Any, out: Path | None, names: bool, judge: str | None = None
) -> dict[str, Any]:
    from contam.outputs import atomic_write, dumps_line
    from contam.perturb.variantset import build_variant_set

    # Generation is deterministic and cheap, so a resumed run rebuilds the whole set (the summary
    # covers every item) and appends only the items not written before.
    ref = build_variant_set(items, variants, seed, kind=kind, budget=budget, names=names)
    kept = ref.variants
    judged: dict[str, Any] = {}
    if judge:
        from contam.models import load
        from contam.perturb.judge import VariantJudge

        # Judged answers come from the response cache on a rerun, so resuming costs no model calls.
        result = VariantJudge(load(judge)).run(ref.variants)
        kept = result.kept
        judged = result.summary(judge)
        per_item: dict[str, int] = {}
        for v in kept:
            per_item[v.original_id] = per_item.get(v.original_id, 0) + 1
        judged["covered_after_judge"] = sum(1 for n in per_item.values() if n >= variants)
        if out is not None:
            with atomic_write(out / "judge.jsonl") as fh:
                for row in result.verdicts:
                    fh.write(dumps_line(row) + "\n")
    if ck is not None:
        done = set(ck.done)
        for v in kept:
            if v.original_id not in done:
                ck.write(variant_row(v))
    if out is not None:
        with atomic_write(out / "rejections.jsonl") as fh:
            for r in ref.rejections:
                fh.write(dumps_line(r.to_dict()) + "\n")
    rep = ref.report
    return {
        "items": rep.items,
        "templated": rep.templated,
        "covered": rep.covered,
        "instances": rep.instances,
        "template_share": round(rep.template_share, 4),
        "coverage": round(rep.coverage, 4),
        "audit_checks": list(rep.checks),
        "audit_failures": rep.failures,
        "rejections": rep.rejections,
        "items_with_variants": len({v.original_id for v in kept}),
        "frozen_by_guard": rep.frozen,
        "written": len(kept),
        **({"judge": judged} if judged else {}),
    }


def _paraphrase(items: list, model_spec: str, variants: int, seed: int, floor: float, ck: Any) -> dict[str, Any]:
    from contam.models import load, load_embedder
    from contam.perturb.paraphrase import ParaphraseConfig, Paraphraser

    cfg = ParaphraseConfig(k=variants, tries=max(2 * variants, 4), floor=floor, seed=seed)
    para = Paraphraser(cfg)
    got = para.run(load(model_spec), items, load_embedder("minilm"))
    if ck is not None:
        for v in got:
            ck.write(variant_row(v))
    return {
        "items": len(items),
        "instances": len(got),
        "items_with_variants": len({v.original_id for v in got}),
        "similarity_metric": "cosine:minilm (BLEURT has no offline checkpoint on PyPI)",
        "floor": floor,
        "model": redact_url(model_spec),
        "rejections": dict(para.rejected),
    }


def variant_row(v: Any) -> dict[str, Any]:
    """The line of a variant set's ``variants.jsonl`` for variant ``v``."""
    d = v.to_dict()
    return {k: d[k] for k in ROW_FIELDS}
