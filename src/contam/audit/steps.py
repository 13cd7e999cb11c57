"""The work of each audit step: library calls with the settings a step's folder records.

Every function here writes exactly what the matching ``contam`` command writes for the same
settings (``contam scan --all``, ``contam decontaminate --scan``, ``contam perturb``, ``contam
probe zerocot|cliff|minkprob``), so a step's folder reads the same whichever made it; the
command-line options the audit has no knob for keep the commands' defaults. Each takes
``on_item``, called with every per-item record as it is written (the audit's progress bar).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from contam.audit.config import AuditConfig
from contam.errors import ConfigError, InputError
from contam.probe.runfolder import OnItem

log = logging.getLogger(__name__)


def scan_dataset(cfg: AuditConfig, out: Path, on_item: OnItem | None = None) -> dict[str, Any]:
    """Scan ``cfg.dataset`` against every benchmark at ``cfg.levels``, every document's result
    kept (``flags.jsonl``, ``summary.json``, ``manifest.json`` in ``out``); a sharded dataset (a
    folder of files) per shard in ``out/shards/``, each with its decontaminated copy."""
    from contam.scan.ngram import NGramConfig
    from contam.scan.options import ScanOptions, load_thresholds, parse_levels
    from contam.scan.shard_inputs import is_sharded

    benchmarks = list(cfg.benchmarks)
    corpus = str(cfg.dataset)
    sharded = is_sharded([corpus])
    # `contam scan --all` with the audit's settings; every other option at the command's default.
    # Sharded data is `contam decontaminate --corpus DIR -b ... --mode MODE`: each shard scanned,
    # then its decontaminated copy written beside its flags (shards/<folder>/clean.jsonl).
    opts = ScanOptions(
        config=NGramConfig.gpt3(), text_field=cfg.text_field, keep_all=True, levels=parse_levels(cfg.levels),
        thresholds=load_thresholds(cfg.thresholds, benchmarks), embedder=cfg.embedder,
        clean=cfg.decontaminate_mode if sharded else None,
    )  # fmt: skip
    if sharded:
        from contam.scan.shards import run_sharded

        summary = run_sharded([corpus], benchmarks, out, opts)
    else:
        from contam.data import load_benchmarks
        from contam.scan.records import no_records_reason, scan_records
        from contam.scan.shards import write_single_manifest

        items = load_benchmarks(benchmarks)
        summary = scan_records(corpus, items, out, opts, fmt="auto", roles=None, judge=None)
        if not summary["documents"]:
            raise InputError(no_records_reason(summary), path=corpus)
        write_single_manifest(out, corpus, items, command="scan", options=opts)
    log.info("scanned %s documents: %s flagged", summary.get("documents"), summary.get("flagged"))
    return summary


def decontaminate_dataset(cfg: AuditConfig, scan: Path, out: Path, on_item: OnItem | None = None) -> dict[str, Any]:
    """``cfg.dataset`` without what the scan in ``scan`` flagged (``cfg.decontaminate_mode``), to ``out`` and ``out.log.jsonl``."""
    from contam.scan.decontaminate import decontaminate
    from contam.scan.shard_inputs import is_sharded

    corpus = str(cfg.dataset)
    if is_sharded([corpus]):
        raise ConfigError("sharded input is decontaminated with --benchmark (each shard is scanned, then cleaned, on its own)")
    summary = decontaminate(Path(corpus), out, scan=scan, mode=cfg.decontaminate_mode, text_field=cfg.text_field)
    log.info("%s documents in, %s out", summary.get("documents_in"), summary.get("documents_out"))
    return summary


def variant_set(cfg: AuditConfig, benchmark: str, n: int, out: Path, on_item: OnItem | None = None) -> dict[str, Any]:
    """``cfg.per_item`` isomorphic variants of each of the benchmark's first ``n`` items (seed ``cfg.seed``)."""
    from contam.perturb.folder import build_variant_folder

    return build_variant_folder(benchmark, out, variants=cfg.per_item, seed=cfg.seed, limit=n, on_item=on_item)


def zerocot(cfg: AuditConfig, benchmark: str, n: int, variants: str, out: Path, on_item: OnItem | None = None) -> dict[str, Any]:
    """The Zero-CoT Probe of ``cfg.model`` on the first ``n`` items against their variants."""
    from contam.probe.runs import run_zerocot
    from contam.probe.zerocot import ZeroCoTConfig

    # Rounded as `contam probe zerocot --truncation` has always received them (%g).
    truncation = tuple(float(f"{x:g}") for x in cfg.truncation)
    zc = ZeroCoTConfig(max_cot_tokens=cfg.max_cot_tokens, truncation=truncation, n_resamples=cfg.resamples, seed=cfg.seed)
    model, _ = _specs(cfg)
    return run_zerocot(model, benchmark, zc, variants=variants, n=n, out=out, on_item=on_item, say=log.info, api_key_env=cfg.api_key_env)


def cliff(cfg: AuditConfig, benchmark: str, n: int, variants: str, out: Path, on_item: OnItem | None = None) -> dict[str, Any]:
    """The performance cliff of ``cfg.model``: originals against their ``cfg.per_item`` variants."""
    from contam.probe.cliff import CliffConfig
    from contam.probe.runs import run_cliff

    cc = CliffConfig(k=cfg.per_item, alpha=cfg.alpha, max_new_tokens=cfg.max_cot_tokens, seed=cfg.seed)
    model, _ = _specs(cfg)
    return run_cliff(model, benchmark, cc, variants=variants, n=n, out=out, on_item=on_item, say=log.info, api_key_env=cfg.api_key_env)


def minkprob(cfg: AuditConfig, benchmark: str, n: int, variants: str, out: Path, on_item: OnItem | None = None) -> dict[str, Any]:
    """The Min-K% family of ``cfg.model`` against ``cfg.control`` (default: the variant set), with
    the reference-model ratio when ``cfg.ref_model`` is set."""
    from contam.audit.skips import skip_unless_scoring
    from contam.probe.logprob import LogProbConfig
    from contam.probe.runs import run_minkprob

    model, ref_model = _specs(cfg)
    if (skipped := skip_unless_scoring("minkprob", out, model, ref_model, api_key_env=cfg.api_key_env)) is not None:
        return skipped  # a model behind an API that cannot score: the other probes still run
    return run_minkprob(
        model,
        benchmark,
        LogProbConfig(),
        control=cfg.control or variants,
        ref_model=ref_model,
        api_key_env=cfg.api_key_env,
        n=n,
        seed=cfg.seed,
        out=out,
        on_item=on_item,
        say=log.info,
    )


def paired(cfg: AuditConfig, benchmark: str, n: int, variants: str, out: Path, on_item: OnItem | None = None) -> dict[str, Any]:
    """The paired verdict of ``cfg.model`` against ``cfg.ref_model`` (see :mod:`contam.audit.paired`)."""
    from contam.audit.paired import run_paired
    from contam.audit.skips import skip_unless_scoring

    model, ref_model = _specs(cfg)
    if (skipped := skip_unless_scoring("paired", out, model, ref_model, api_key_env=cfg.api_key_env)) is not None:
        return skipped
    return run_paired(model, str(ref_model), benchmark, variants, n, out, cfg.alpha, on_item=on_item, api_key_env=cfg.api_key_env)


def _specs(cfg: AuditConfig) -> tuple[str, str | None]:
    """The model and reference model specs to load (credentials included: never write them)."""
    return cfg.spec_to_load("model"), cfg.spec_to_load("ref_model") if cfg.ref_model else None
