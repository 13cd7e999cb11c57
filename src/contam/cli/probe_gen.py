"""``contam probe cdd|reconstruct|ts-guess|guided|swe-filepath|swe-funcrepro|swe-prefix``: the
generation-based probes and the SWE-bench memorization diagnostics.

Every command is resumable: with ``--out DIR`` finished items stream to ``DIR/items.jsonl`` (and
``DIR/control_items.jsonl``) and are skipped on a rerun; model calls go through the response
cache, so even an unfinished item costs nothing the second time. ``DIR/summary.json`` is written
atomically at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from contam.cli.common import console, emit_json, err_console, probe_app
from contam.cli.probe_opts import (
    ControlOpt,
    JsonFlag,
    LimitOpt,
    NAlias,
    OutOpt,
    ReferenceAlias,
    RefModelOpt,
    SeedOpt,
    VariantsOpt,
    limit_of,
    not_used,
    reference_alias,
)
from contam.errors import ConfigError
from contam.textsafe import escape, redact_url

ModelOpt = Annotated[str, typer.Option("--model", "-m", help="Model spec: smollm2, llamacpp:PATH, hf:PATH, openai:URL#MODEL, vllm:NAME.")]
ShuffleOpt = Annotated[bool, typer.Option("--shuffle", help="With --limit: a random subset (seeded by --seed) instead of the first N.")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Bypass the model response cache.")]
Fresh = Annotated[bool, typer.Option("--fresh", help="Discard finished items in --out and start over.")]
SweControlOpt = Annotated[
    str | None, typer.Option("--control", "-c", help="Control instances from repositories outside SWE-bench (SWE-bench JSONL format).")
]


def _items(spec: str, limit: int, sample_seed: int | None = None) -> list[Any]:
    """The benchmark's items: the first ``limit``, or with ``sample_seed`` a seeded random ``limit`` (:func:`contam.probe.runs.load_items`)."""
    from contam.probe.runs import load_items

    return load_items(spec, limit, sample_seed)


def _finish(out: Path | None, summary: dict[str, Any], json_out: bool, show: Callable[[dict[str, Any]], None]) -> None:
    if json_out:
        emit_json(summary)
    else:
        show(summary)
        if summary.get("note"):  # a caveat the probe's result carries
            err_console.print(f"note: {summary['note']}", markup=False, highlight=False)
        if out is not None:
            console.print(f"results: {escape(str(out / 'items.jsonl'))}, {escape(str(out / 'summary.json'))}")


def _table(title: str, rows: list[tuple[str, str]]) -> None:
    t = Table(title=escape(title), show_header=False)
    for k, v in rows:
        t.add_row(escape(k), escape(v))
    console.print(t)


def _fmt(x: Any) -> str:
    return "—" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))


def _test_rows(name: str, test: dict[str, Any] | None) -> list[tuple[str, str]]:
    if not test:
        return []
    return [(name, f"effect {_fmt(test['effect'])}, p = {test['p_value']:.4g} ({test['method']}, {test['alternative']})")]


def _comparison(items: list[Any], variants: Path | None, control: str | None, limit: int, sample_seed: int | None) -> dict[str, Any]:
    """The comparison group of a generation probe, as keyword arguments of its ``run``: the
    items' variants from a ``contam perturb`` set (``--variants``; the probe takes each item's
    first), or a clean benchmark (``--control``), or none."""
    if variants is not None and control is not None:
        raise ConfigError("give one comparison set: --variants or --control")
    if control is not None:
        return {"control": _items(control, limit, sample_seed)}
    if variants is not None:
        from contam.probe.variantset import load_variants

        ref = load_variants(variants)
        if not any(ref.get(it.id) for it in items):
            raise ConfigError(f"none of the {len(items)} items has a variant in {variants} (ids must match its original_id)")
        return {"variants": ref}
    return {}


def _run_grouped(
    probe: Any,
    model_spec: str,
    benchmark: str,
    control: str | None,
    limit: int,
    out: Path | None,
    no_cache: bool,
    fresh: bool,
    command: str,
    sample_seed: int | None = None,
    variants: Path | None = None,
) -> dict[str, Any]:
    from dataclasses import asdict

    from contam.probe.runfolder import no_nan, run_in_folder
    from contam.probe.runs import load_model

    items = _items(benchmark, limit, sample_seed)
    comparison = _comparison(items, variants, control, limit, sample_seed)
    settings = {
        "command": command,
        "model": redact_url(model_spec),
        "benchmark": benchmark,
        "reference": control,  # the key that run folders already hold
        "limit": limit,
        "sample_seed": sample_seed,
        "config": asdict(probe.config),
    }
    if variants is not None:
        settings["variants"] = str(variants)

    def work(ck: Any) -> dict[str, Any]:
        model = load_model(model_spec, no_cache)
        result = probe.run(model, items, checkpoint=ck, **comparison)
        summary = result.to_dict()
        summary.pop("items")
        return no_nan(
            {
                "command": command,
                "model": redact_url(model_spec),
                "benchmark": benchmark,
                "control": control,
                "variants": str(variants) if variants else None,
                **summary,
            }
        )

    return run_in_folder(out, settings, work, fresh=fresh)


def cdd(
    model: ModelOpt = "smollm2",
    benchmark: Annotated[str, typer.Option("--benchmark", "-b", help="Benchmark name or file.")] = "gsm8k",
    samples: Annotated[int, typer.Option("--samples", help="Samples at temperature 0.8 per item (paper: 50).")] = 50,
    alpha: Annotated[float, typer.Option("--alpha", help="Peak radius as a share of the longest output (paper: 0.05).")] = 0.05,
    xi: Annotated[float, typer.Option("--xi", help="Flag an item when its peak exceeds this (paper: 0.01).")] = 0.01,
    real_world: Annotated[bool, typer.Option("--real-world", help="The paper's real-world setting: alpha 0, xi 0.2.")] = False,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Tokens per output compared (paper: 100).")] = 100,
    variants: VariantsOpt = None,
    control: ControlOpt = None,
    ref_model: RefModelOpt = None,
    limit: LimitOpt = 0,
    shuffle: ShuffleOpt = False,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
    reference_old: ReferenceAlias = None,
) -> None:
    """CDD (Dong et al. 2024): share of sampled answers within edit distance alpha*l of the greedy answer.

    Example: contam probe cdd --model smollm2 --benchmark gsm8k --limit 20 --samples 20 --out runs/cdd
    """
    from contam.probe.cdd import CDD, CDDConfig

    not_used("cdd", ref_model=ref_model)
    limit = limit_of(limit, n_alias)
    control = reference_alias(reference_old, "--control", control)
    if real_world:
        cfg = CDDConfig.real_world(n_samples=samples, max_tokens=max_tokens, seed=seed)
    else:
        cfg = CDDConfig(alpha=alpha, xi=xi, n_samples=samples, max_tokens=max_tokens, seed=seed)
    s = _run_grouped(CDD(cfg), model, benchmark, control, limit, out, no_cache, fresh, "cdd", seed if shuffle else None, variants)
    _finish(
        out,
        s,
        json_out,
        lambda s: _table(
            f"CDD on {s['benchmark']}",
            [
                *((f"{g}: flagged", f"{_fmt(s['flagged'][g])} of {s['n'][g]} items (mean peak {_fmt(s['mean_peak'][g])})") for g in s["n"]),
                ("alpha / xi", f"{cfg.alpha} / {cfg.xi}"),
                *_test_rows("original > reference", s.get("test")),
            ],
        ),
    )


def reconstruct(
    model: ModelOpt = "smollm2",
    benchmark: Annotated[str, typer.Option("--benchmark", "-b", help="Benchmark name or file.")] = "gsm8k",
    samples: Annotated[int, typer.Option("--samples", help="Completions per item (paper 004: 16; 1 = greedy).")] = 16,
    prefix: Annotated[float, typer.Option("--prefix", help="Share of the words shown (paper 004: 0.4).")] = 0.4,
    part: Annotated[str, typer.Option("--part", help="question, text (question+options+solution) or solution.")] = "question",
    variants: VariantsOpt = None,
    control: ControlOpt = None,
    ref_model: RefModelOpt = None,
    limit: LimitOpt = 0,
    shuffle: ShuffleOpt = False,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
    reference_old: ReferenceAlias = None,
) -> None:
    """Prefix completion: show the first 40% of each item, compare completions with the rest (max ROUGE-L, exact, verbatim).

    Example: contam probe reconstruct --benchmark gsm8k --control gsm8k-train --limit 50 --samples 4 --out runs/rec
    """
    from contam.probe.reconstruct import Reconstruct, ReconstructConfig

    not_used("reconstruct", ref_model=ref_model)
    limit = limit_of(limit, n_alias)
    control = reference_alias(reference_old, "--control", control)
    cfg = ReconstructConfig(prefix_fraction=prefix, n_samples=samples, part=part, seed=seed)
    s = _run_grouped(
        Reconstruct(cfg), model, benchmark, control, limit, out, no_cache, fresh, "reconstruct", seed if shuffle else None, variants
    )
    _finish(
        out,
        s,
        json_out,
        lambda s: _table(
            f"reconstruction on {s['benchmark']}",
            [
                *(
                    (
                        f"{g}",
                        f"max ROUGE-L {_fmt(s['mean_rouge_l'][g])}, exact {_fmt(s['exact_rate'][g])}, verbatim {_fmt(s['verbatim_rate'][g])} (n={s['n'][g]})",
                    )
                    for g in s["n"]
                ),
                *_test_rows("ROUGE-L original > reference", s.get("rouge_test")),
                *_test_rows("verbatim original > reference", s.get("verbatim_test")),
            ],
        ),
    )


def ts_guess(
    model: ModelOpt = "smollm2",
    benchmark: Annotated[str, typer.Option("--benchmark", "-b", help="Benchmark name or file.")] = "mmlu",
    mode: Annotated[str, typer.Option("--mode", help="question (mask a key word) or choice (mask a wrong option).")] = "choice",
    variants: VariantsOpt = None,
    control: ControlOpt = None,
    ref_model: RefModelOpt = None,
    limit: LimitOpt = 0,
    shuffle: ShuffleOpt = False,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
    reference_old: ReferenceAlias = None,
) -> None:
    """TS-Guessing (Deng et al. 2024): can the model fill in a masked key word or a masked wrong option?

    Example: contam probe ts-guess --benchmark mmlu --mode choice --limit 50 --out runs/tsg
    """
    from contam.probe.tsguess import TSGuess, TSGuessConfig

    not_used("ts-guess", ref_model=ref_model)
    limit = limit_of(limit, n_alias)
    control = reference_alias(reference_old, "--control", control)
    cfg = TSGuessConfig(mode=mode, seed=seed)
    s = _run_grouped(TSGuess(cfg), model, benchmark, control, limit, out, no_cache, fresh, "ts-guess", seed if shuffle else None, variants)
    _finish(
        out,
        s,
        json_out,
        lambda s: _table(
            f"TS-Guessing ({mode}) on {s['benchmark']}",
            [
                *((f"{g}", f"exact {_fmt(s['exact_rate'][g])}, ROUGE-L {_fmt(s['mean_rouge_l'][g])} (n={s['n'][g]})") for g in s["n"]),
                ("skipped", str(s["skipped"])),
                *_test_rows("exact original > reference", s.get("test")),
            ],
        ),
    )


def guided(
    model: ModelOpt = "smollm2",
    benchmark: Annotated[str, typer.Option("--benchmark", "-b", help="Benchmark name or file.")] = "gsm8k",
    dataset: Annotated[
        str | None, typer.Option("--dataset-name", help="Dataset name in the guided prompt (default from the benchmark).")
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help="Split name in the guided prompt (default test).")] = None,
    label: Annotated[bool, typer.Option("--label", help="Show the item's short answer as Label: (classification data).")] = False,
    variants: VariantsOpt = None,
    control: ControlOpt = None,
    ref_model: RefModelOpt = None,
    limit: LimitOpt = 0,
    shuffle: ShuffleOpt = False,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    n_alias: NAlias = None,
    reference_old: ReferenceAlias = None,
) -> None:
    """Guided vs general instruction (Golchin & Surdeanu): paired bootstrap on the ROUGE-L difference.

    Example: contam probe guided --benchmark gsm8k --limit 30 --out runs/guided
    """
    from contam.probe.guided import Guided, GuidedConfig

    not_used("guided", variants=variants, control=control, ref_model=ref_model, reference=reference_old)
    limit = limit_of(limit, n_alias)
    cfg = GuidedConfig.for_benchmark(benchmark, dataset=dataset, split=split, use_label=label, seed=seed)
    s = _run_grouped(Guided(cfg), model, benchmark, None, limit, out, no_cache, fresh, "guided", seed if shuffle else None)
    _finish(
        out,
        s,
        json_out,
        lambda s: _table(
            f"guided vs general on {s['benchmark']}",
            [
                ("ROUGE-L guided", _fmt(s["mean_guided"])),
                ("ROUGE-L general", _fmt(s["mean_general"])),
                ("items", str(s["n"])),
                *_test_rows("guided > general", s.get("test")),
                (
                    "contaminated",
                    "yes" if s["contaminated"] else ("no" if s["n"] >= cfg.min_items else f"no verdict (fewer than {cfg.min_items} items)"),
                ),
            ],
        ),
    )


def _swe(
    task: str,
    model_spec: str,
    benchmark: str,
    control_spec: str | None,
    limit: int,
    out: Path | None,
    no_cache: bool,
    fresh: bool,
    json_out: bool,
    max_issue_chars: int,
    seed: int = 0,
    shuffle: bool = False,
    variants: Path | None = None,
    ref_model: str | None = None,
    n_alias: int | None = None,
) -> None:
    from dataclasses import asdict

    from contam.probe.runfolder import no_nan, run_in_folder
    from contam.probe.runs import load_model, subset
    from contam.probe.swe import TASKS, SweConfig, compare, load_instances

    not_used(task, variants=variants, ref_model=ref_model)
    limit = limit_of(limit, n_alias)
    control = Path(control_spec) if control_spec else None

    probe = TASKS[task](SweConfig(max_issue_chars=max_issue_chars, seed=seed))
    items = _items(benchmark, limit, seed if shuffle else None)
    ctrl = subset(load_instances(control), limit, seed if shuffle else None) if control else None
    settings = {
        "command": task,
        "model": redact_url(model_spec),
        "benchmark": benchmark,
        "control": str(control) if control else None,
        "limit": limit,
        "sample_seed": seed if shuffle else None,
        "config": asdict(probe.config),
    }

    def work(ck: Any, ck2: Any = None) -> dict[str, Any]:
        model = load_model(model_spec, no_cache)
        res = probe.run(model, items, checkpoint=ck)
        cres = probe.run(model, ctrl, checkpoint=ck2) if ctrl is not None else None
        s: dict[str, Any] = {"command": task, "model": redact_url(model_spec), "benchmark": benchmark, **res.summary()}
        if cres is not None:
            s["control"] = {"path": str(control), **cres.summary()}
            s["comparison"] = compare(res, cres).to_dict()
            if task == "swe-filepath" and res.n_filtered and cres.n_filtered:
                s["comparison_filtered"] = compare(res, cres, filtered=True).to_dict()
        return no_nan(s)

    files = ("items.jsonl", "control_items.jsonl") if ctrl is not None else ("items.jsonl",)
    s = run_in_folder(out, settings, work, files=files, fresh=fresh)
    metric = "accuracy" if task == "swe-filepath" else "verbatim rate"

    def show(s: dict[str, Any]) -> None:
        rows = [(metric, f"{_fmt(s['rate'])} ({s['hits']} of {s['n']})")]
        if task != "swe-filepath":
            rows.append(("mean 5-gram overlap", _fmt(s["mean_score"])))
        else:
            rows.append(
                (
                    "filtered accuracy",
                    f"{_fmt(s['rate_filtered'])} ({s['hits_filtered']} of {s['n_filtered']}; issues naming the file removed)",
                )
            )
        if "control" in s:
            c, cmp = s["control"], s["comparison"]
            rows += [
                (f"control {metric}", f"{_fmt(c['rate'])} ({c['hits']} of {c['n']})"),
                ("gap", f"{_fmt(cmp['gap'])}, p = {cmp['test']['p_value']:.4g} (two-proportion z, one-sided)"),
                ("minimum detectable gap", _fmt(cmp["mde"]) if cmp["mde"] is not None else escape(cmp["note"])),
            ]
        _table(f"{task} on {s['benchmark']}", rows)

    _finish(out, s, json_out, show)


SweBench = Annotated[str, typer.Option("--benchmark", "-b", help="swebench-verified, swebench-lite, or a SWE-bench-format JSONL.")]
IssueChars = Annotated[int, typer.Option("--max-issue-chars", help="Truncate issue texts beyond this many characters (0 = never).")]


def swe_filepath(
    model: ModelOpt = "smollm2",
    benchmark: SweBench = "swebench-verified",
    control: SweControlOpt = None,
    limit: LimitOpt = 0,
    shuffle: ShuffleOpt = False,
    out: OutOpt = None,
    max_issue_chars: IssueChars = 6000,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    variants: VariantsOpt = None,
    ref_model: RefModelOpt = None,
    n_alias: NAlias = None,
) -> None:
    """File-path identification from the issue text alone: accuracy and filtered accuracy (paper 002).

    Example: contam probe swe-filepath --benchmark swebench-verified --limit 50 --control my_control.jsonl --out runs/fp
    """
    _swe(
        "swe-filepath",
        model,
        benchmark,
        control,
        limit,
        out,
        no_cache,
        fresh,
        json_out,
        max_issue_chars,
        seed,
        shuffle,
        variants,
        ref_model,
        n_alias,
    )


def swe_funcrepro(
    model: ModelOpt = "smollm2",
    benchmark: SweBench = "swebench-verified",
    control: SweControlOpt = None,
    limit: LimitOpt = 0,
    shuffle: ShuffleOpt = False,
    out: OutOpt = None,
    max_issue_chars: IssueChars = 6000,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    variants: VariantsOpt = None,
    ref_model: RefModelOpt = None,
    n_alias: NAlias = None,
) -> None:
    """Function reproduction from the issue text and the function name: 5-gram overlap and verbatim rate (paper 002).

    Example: contam probe swe-funcrepro --benchmark swebench-lite --limit 50 --out runs/fr
    """
    _swe(
        "swe-funcrepro",
        model,
        benchmark,
        control,
        limit,
        out,
        no_cache,
        fresh,
        json_out,
        max_issue_chars,
        seed,
        shuffle,
        variants,
        ref_model,
        n_alias,
    )


def swe_prefix(
    model: ModelOpt = "smollm2",
    benchmark: SweBench = "swebench-verified",
    control: SweControlOpt = None,
    limit: LimitOpt = 0,
    shuffle: ShuffleOpt = False,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    no_cache: NoCache = False,
    fresh: Fresh = False,
    json_out: JsonFlag = False,
    variants: VariantsOpt = None,
    ref_model: RefModelOpt = None,
    n_alias: NAlias = None,
) -> None:
    """Prefix completion of the gold patch's changed functions: verbatim rate (paper 002).

    Example: contam probe swe-prefix --benchmark swebench-verified --limit 50 --out runs/prefix
    """
    _swe("swe-prefix", model, benchmark, control, limit, out, no_cache, fresh, json_out, 0, seed, shuffle, variants, ref_model, n_alias)


def register(app: typer.Typer) -> None:
    """Add the generation probes to the ``contam probe`` group."""
    probe_app.command("cdd")(cdd)
    probe_app.command("reconstruct")(reconstruct)
    probe_app.command("ts-guess")(ts_guess)
    probe_app.command("guided")(guided)
    probe_app.command("swe-filepath")(swe_filepath)
    probe_app.command("swe-funcrepro")(swe_funcrepro)
    probe_app.command("swe-prefix")(swe_prefix)
