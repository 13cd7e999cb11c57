"""The Zero-CoT Probe, the Min-K% family and the performance cliff run from specs into a folder:
what ``contam probe zerocot|minkprob|cliff`` and the audit's model-side steps both call.

Each ``run_*`` loads the benchmark's first ``n`` items (0 = all) and the model from its spec,
pairs the items with their variants (a ``contam perturb`` set, or one built now), and runs the
probe through :func:`~contam.probe.runfolder.run_in_folder`: resumable in ``out``, ``on_item``
told of every finished record; it returns the summary (also ``out/summary.json``).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contam.errors import ConfigError
from contam.probe.runfolder import OnItem, run_in_folder
from contam.textsafe import redact_url

if TYPE_CHECKING:  # the probes load numpy and friends: imported where a run starts
    from contam.data import Item
    from contam.models.base import LanguageModel
    from contam.probe.cliff import CliffConfig
    from contam.probe.logprob import LogProbConfig
    from contam.probe.zerocot import ZeroCoTConfig

log = logging.getLogger(__name__)

Say = Callable[[str], None]


def load_items(spec: str, limit: int, sample_seed: int | None = None) -> list[Item]:
    """The benchmark's items: the first ``limit`` (0 = all), or with ``sample_seed`` a seeded
    random ``limit`` in benchmark order (the first items of a file are often one repository or subject)."""
    from contam.data import load_benchmark

    return subset(load_benchmark(spec), limit, sample_seed)


def subset(items: list[Any], limit: int, sample_seed: int | None = None) -> list[Any]:
    """``limit`` of ``items`` (all when ``limit`` is 0 or more than there are): the first, or a seeded random choice."""
    if limit <= 0 or limit >= len(items):
        return items
    if sample_seed is None:
        return items[:limit]
    keep = sorted(random.Random(sample_seed).sample(range(len(items)), limit))
    return [items[i] for i in keep]


def load_model(spec: str, no_cache: bool = False, api_key_env: str | None = None) -> LanguageModel:
    """The model of ``spec``, its calls through the response cache unless ``no_cache``;
    ``api_key_env`` names the variable holding an ``openai:`` model's key (other backends ignore it)."""
    from contam.models import load

    if api_key_env and spec.startswith("openai:"):
        return load(spec, cache=not no_cache, api_key_env=api_key_env)
    return load(spec, cache=not no_cache)


def variants_for(path: Path | None, items: Sequence[Item], k: int, seed: int, say: Say | None = None) -> dict[str, list[Item]]:
    """Variants by original id: read from ``path`` (a ``contam perturb`` set), or built now with :mod:`contam.perturb`."""
    from contam.probe.variantset import load_variants, variants_by_item

    if path is not None:
        return load_variants(path)
    try:
        from contam.perturb import make_variant_set
    except ImportError:
        raise ConfigError("no --variants given and contam.perturb is not available to build one; run `contam perturb` first") from None
    (say or log.info)(
        f"building a variant set ({k} variant(s) per item, seed {seed}); save one with `contam perturb` and pass --variants to reuse it"
    )
    ref = variants_by_item(make_variant_set(list(items), variants=k, seed=seed))
    if not ref:
        raise ConfigError("no reference variants could be built for these items; pass --variants")
    return ref


def is_variant_file(path: Path) -> bool:
    """Whether ``path`` looks like a variant set (rows naming an ``original_id``)."""
    from contam.probe.variantset import resolve_variant_file

    try:
        file = resolve_variant_file(path)
        import gzip

        opener: Any = gzip.open if file.name.endswith(".gz") else open
        with opener(file, "rt", encoding="utf-8-sig") as fh:
            first = next((ln for ln in fh if ln.strip()), "")
        row = json.loads(first) if first else {}
    except Exception:  # not JSONL: then it is a benchmark file for the loader to judge
        return False
    return isinstance(row, dict) and any(k in row for k in ("original_id", "orig_id", "source_id", "parent_id"))


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    import csv

    from contam.outputs import atomic_write

    with atomic_write(path) as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["id"])
        w.writeheader()
        w.writerows(rows)


def run_zerocot(
    model: str,
    benchmark: str,
    config: ZeroCoTConfig,
    *,
    variants: str | Path | None = None,
    n: int = 0,
    out: Path | None = None,
    fresh: bool = False,
    no_cache: bool = False,
    on_item: OnItem | None = None,
    say: Say | None = None,
    api_key_env: str | None = None,
) -> dict[str, Any]:
    """The Zero-CoT Probe of ``model`` on ``benchmark`` against each item's first variant; with
    ``out`` also ``out/table.csv`` (one row per pair, for a spreadsheet)."""
    from contam.probe.variantset import pair_items
    from contam.probe.zerocot import ZeroCoTPair, ZeroCoTProbe, table_row

    variant_path = Path(variants) if variants else None
    items = load_items(benchmark, n)
    pairs = pair_items(items, variants_for(variant_path, items, 1, config.seed, say))
    if not pairs:
        raise ConfigError(f"none of the {len(items)} items has a variant (ids must match the --variants set's original_id)")
    settings = {
        "command": "zerocot",
        "model": redact_url(model),
        "benchmark": benchmark,
        "reference": str(variant_path),
        "n": n,
        "config": asdict(config),
    }

    def work(ck: Any) -> dict[str, Any]:
        result = ZeroCoTProbe(config).run(load_model(model, no_cache, api_key_env), pairs, checkpoint=ck)
        if ck is not None and out is not None:
            keep = {p[0].id for p in pairs}
            _write_csv(out / "table.csv", [table_row(ZeroCoTPair.from_dict(r)) for r in ck.records if r.get("key") in keep])
        return {
            "command": "zerocot",
            "benchmark": benchmark,
            "reference": str(variant_path) if variant_path else "built",
            **result.to_dict(),
        }

    return run_in_folder(out, settings, work, fresh=fresh, on_item=on_item)


def run_minkprob(
    model: str,
    benchmark: str,
    config: LogProbConfig,
    *,
    control: str | None = None,
    ref_model: str | None = None,
    n: int = 0,
    seed: int = 0,
    out: Path | None = None,
    fresh: bool = False,
    no_cache: bool = False,
    on_item: OnItem | None = None,
    say: Say | None = None,
    api_key_env: str | None = None,
) -> dict[str, Any]:
    """The Min-K% family of ``model`` on ``benchmark`` against ``control``: a variant set (each
    item's first variant), a clean benchmark, or with None a variant set built now (``seed``)."""
    from contam.probe.logprob import LogProbProbe
    from contam.probe.variantset import load_variants, refuse_other_output

    items = load_items(benchmark, n)
    if control is not None:  # a scan folder or a probe run is no comparison set: say so before reading it as items
        refuse_other_output(control)
    if control is None:
        ctrl = [v[0] for v in variants_for(None, items, 1, seed, say).values()]
    elif Path(control).exists() and is_variant_file(Path(control)):
        ref = load_variants(control)
        # the variants of the items under test when there are any, so both sets share topics
        ctrl = [ref[it.id][0] for it in items if it.id in ref] or [v[0] for v in ref.values()]
    else:
        ctrl = load_items(control, n)
    settings = {
        "command": "minkprob",
        "model": redact_url(model),
        "ref_model": redact_url(ref_model) if ref_model else ref_model,
        "benchmark": benchmark,
        "control": control,
        "n": n,
        "config": asdict(config),
    }

    def work(ck: Any) -> dict[str, Any]:
        ref = load_model(ref_model, no_cache, api_key_env) if ref_model else None
        result = LogProbProbe(config).run(load_model(model, no_cache, api_key_env), items, ctrl, ref_model=ref, checkpoint=ck)
        return {"command": "minkprob", "benchmark": benchmark, "control": control or "built", **result.to_dict()}

    return run_in_folder(out, settings, work, fresh=fresh, on_item=on_item)


def run_cliff(
    model: str,
    benchmark: str,
    config: CliffConfig,
    *,
    variants: str | Path | None = None,
    n: int = 0,
    out: Path | None = None,
    fresh: bool = False,
    no_cache: bool = False,
    on_item: OnItem | None = None,
    say: Say | None = None,
    api_key_env: str | None = None,
) -> dict[str, Any]:
    """The performance cliff of ``model`` on ``benchmark``: originals against their ``config.k`` variants."""
    from contam.probe.cliff import CliffProbe

    variant_path = Path(variants) if variants else None
    items = load_items(benchmark, n)
    ref = variants_for(variant_path, items, config.k, config.seed, say)
    settings = {
        "command": "cliff",
        "model": redact_url(model),
        "benchmark": benchmark,
        "reference": str(variant_path),
        "n": n,
        "config": asdict(config),
    }

    def work(ck: Any) -> dict[str, Any]:
        result = CliffProbe(config).run(load_model(model, no_cache, api_key_env), items, ref, checkpoint=ck)
        return {"command": "cliff", "benchmark": benchmark, "reference": str(variant_path) if variant_path else "built", **result.to_dict()}

    return run_in_folder(out, settings, work, fresh=fresh, on_item=on_item)
