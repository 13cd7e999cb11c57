"""Renderers for data-side and fresh-instance results: scan, decontamination, variant sets,
scenarios, detector evaluation, regeneration (audit, replay, grading, equivariance).

Each takes a :class:`~contam.report.inputs.Result` and :class:`RenderOptions` and returns a
:class:`~contam.report.model.Section`; none writes markup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contam.report.inputs import Result, iter_jsonl
from contam.report.model import Run, Section, SectionBuilder, code, interval, num, pct, strong, text, wilson
from contam.report.scan_evidence import (
    QUOTING,
    FlagSource,
    RenderOptions,
    ScannedRecord,
    add_flag_excerpt,
    clip,
    find_corpus,
    flag_sources,
    read_records,
)
from contam.scan.flags import passed, rule_text


def _items(ids: list[str], n: int = 3) -> list[Run]:
    runs: list[Run] = []
    for i, x in enumerate(ids[:n]):
        runs += [text(", ")] * bool(i) + [code(x)]
    if len(ids) > n:
        runs.append(text(f" +{len(ids) - n} more"))
    return runs


# ---- scan ---------------------------------------------------------------------------------------


def render_scan(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    n, k = int(s.get("documents", 0)), int(s.get("flagged", 0))
    benches = ", ".join(s.get("benchmarks", [])) or "the benchmarks"
    b = SectionBuilder(
        f"Data-side scan: {s.get('corpus', '?')} against {benches}", kind="scan", source=r.path, status="flagged" if k else "clean"
    )
    ci = interval(wilson(k, n), percent=True)
    if k:
        b.headline(
            strong(f"Contaminated documents found: {k:,} of {n:,}"),
            text(
                f" ({pct(k / n if n else None)}; {ci}) share text with {benches}; "
                f"{num(s.get('items_flagged'))} of {num(s.get('items'))} benchmark items matched."
            ),
        )
    else:
        b.headline(
            strong(f"No contaminated document among {n:,}"), text(f" (flag rate 0; {ci}) against {num(s.get('items'))} items of {benches}.")
        )
    cfg = s.get("config", {})
    b.para(
        f"Levels: {', '.join(s.get('levels', ['token']))}. Token level: {cfg.get('n', '?')}-grams, IDF-weighted coverage of an item part "
        f"≥ {cfg.get('threshold', '?')} (seam ≥ {cfg.get('seam_threshold', '?')}), skip budget {cfg.get('skip', 0)}. "
        f"{num(s.get('bytes'))} bytes in {num(s.get('seconds'), 2)} s ({num(s.get('mb_per_s'), 2)} MB/s)."
    )
    b.figures.update(
        {
            "documents": n,
            "flagged": k,
            "flag_rate": s.get("flag_rate"),
            "flag_rate_ci": wilson(k, n),
            "items_flagged": s.get("items_flagged"),
        }
    )
    b.table(
        ["benchmark", "documents", "flags"],
        [[code(name), c.get("documents", 0), c.get("flags", 0)] for name, c in s.get("by_benchmark", {}).items()],
        caption="Flags by benchmark",
    )
    b.table(["part", "flags"], [[name, v] for name, v in s.get("by_part", {}).items()], caption="Flags by matched part")
    bad = s.get("bad_input", {})
    if bad.get("skipped"):
        b.para(
            f"Skipped bad input: {bad['skipped']:,} lines (" + ", ".join(f"{k2}: {v}" for k2, v in bad.get("reasons", {}).items()) + ")."
        )
    sources = flag_sources(s, r.folder)
    if not sources:
        b.note("flags.jsonl not found next to the summary: no per-document evidence shown.")
        return b.build()
    shown: list[tuple[FlagSource, dict[str, Any]]] = []
    for src in sources:
        for _, rec in iter_jsonl(src.flags):
            # one rule for what a flag is (contam.scan.flags.passed): below its own threshold it is not listed
            passing = [f for f in rec.get("flags") or [] if passed(f)]
            if rec.get("contaminated") and passing:
                shown.append((src, {**rec, "flags": passing}))
                if len(shown) >= opt.max_rows:
                    break
        if len(shown) >= opt.max_rows:
            break
    sharded = any(src.shard for src in sources)
    rows = []
    for src, rec in shown:
        f = rec["flags"][0]
        row = [
            num(rec.get("line")),
            code(str(rec.get("doc_id"))),
            code(str(f.get("item_id"))),
            str(f.get("benchmark", "")),
            str(f.get("part", "")),
            rule_text(f),
            str(f.get("level", rec.get("level", ""))),
            len(rec["flags"]),
        ]
        rows.append([code(src.shard), *row] if sharded else row)
    b.table(
        (["shard"] if sharded else []) + ["line", "document", "item", "benchmark", "part", "rule that fired", "level", "flags"],
        rows,
        align=("l" if sharded else "") + "rllllrlr",
        caption=f"First {len(shown)} flagged documents (of {k:,}), best flag each",
    )
    records: dict[str, dict[int, ScannedRecord]] = {}
    looked: list[str] = []
    for src in dict.fromkeys(src for src, _ in shown):
        corpus, tried = find_corpus(src.summary, src.folder)
        lines = {int(x["line"]) for s2, x in shown if s2 is src and isinstance(x.get("line"), int)}
        records[src.folder] = read_records(corpus, lines, src.summary)
        if not records[src.folder]:
            looked += tried or [f"no corpus path in {src.folder}/summary.json"]
    for src, rec in shown:
        line = rec.get("line")
        f = rec["flags"][0]
        add_flag_excerpt(b, rec, f, records[src.folder].get(line) if isinstance(line, int) else None, opt, shard=src.shard)
        scored = [e for e in f.get("evidence", []) if not e.get("doc_span") or e.get("kind") not in QUOTING]
        if scored:  # level-2/3 evidence: what was compared, with its weight
            b.note(
                "; ".join(
                    f"{e.get('kind')} {num(e.get('weight'))}" + (f": {clip(e.get('text'), 120)}" if e.get("text") else "") for e in scored
                )
            )
    if looked:
        b.note(
            "Corpus not readable from here (looked at: " + ", ".join(dict.fromkeys(looked)) + "): "
            "only text that quotes the records is shown; rebuild the report where the corpus is."
        )
    return b.build()


# ---- decontamination ----------------------------------------------------------------------------


def render_decontaminate(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    dropped, masked = int(s.get("dropped", 0)), int(s.get("masked", 0))
    b = SectionBuilder(f"Decontaminated copy: {s.get('out', r.path)}", kind="decontaminate", source=r.path, status="info")
    total = s.get("documents_in")
    kept = f"; {num(s.get('documents_out'))} of {num(total)} documents written" if total is not None else ""
    b.headline(
        strong(f"{dropped:,} documents dropped, {masked:,} masked"), text(f" ({num(s.get('chars_masked', 0))} characters masked){kept}.")
    )
    b.figures.update({k: s.get(k) for k in ("documents_in", "documents_out", "dropped", "masked", "chars_masked")})
    entries = s.get("entries")
    if entries is None and s.get("log") and Path(str(s["log"])).is_file():
        entries = [rec for _, rec in iter_jsonl(Path(str(s["log"])), limit=opt.max_rows)]
    rows = [
        [
            num(e.get("line")),
            code(str(e.get("doc_id"))),
            str(e.get("action", "")),
            _items([str(x) for x in e.get("items", [])]),
            ", ".join(e.get("levels", [])),
            (e.get("rules") or [None])[0] or num(e.get("score")),
        ]
        for e in (entries or [])[: opt.max_rows]
    ]
    b.table(
        ["line", "document", "action", "items", "levels", "rule that fired"],
        rows,
        align="rlllll",
        caption=f"First {len(rows)} log entries" + (f" of {len(entries)}" if entries and len(entries) > len(rows) else ""),
    )
    b.note(f"Log: {s.get('log', r.path)}. Unflagged lines are copied byte for byte.")
    return b.build()


# ---- variant sets -------------------------------------------------------------------------------


def render_perturb(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    items, with_v = int(s.get("items", 0)), int(s.get("items_with_variants", s.get("covered", 0)))
    fails = sum(int(v) for v in s.get("audit_failures", {}).values())
    b = SectionBuilder(
        f"Reference set: {s.get('benchmark', '?')} ({s.get('kind', '?')}, seed {s.get('seed', '?')})",
        kind="perturb",
        source=r.path,
        status="failures" if fails else "clean",
    )
    checks = s.get("audit_checks", [])
    b.headline(
        strong(f"{with_v:,} of {items:,} items have audited variants"),
        text(
            f" ({pct(with_v / items if items else None)}; {interval(wilson(with_v, items), percent=True)}): "
            f"{num(s.get('instances'))} instances, {fails} audit failures"
            + (f" over {len(checks)} checks ({', '.join(checks)})." if checks else ".")
        ),
    )
    if "template_share" in s:
        b.para(
            f"Templated: {num(s.get('templated'))} ({pct(s.get('template_share'))}); with {s.get('variants_per_item')} audited "
            f"variant(s): {num(s.get('covered'))} ({pct(s.get('coverage'))}). Answers are computed by the lifted program, never guessed; "
            "an instance failing any check is never written."
        )
    if "similarity_metric" in s:
        b.para(f"Paraphrases by {s.get('model')}: kept at {s['similarity_metric']} ≥ {s.get('floor')}.")
    b.figures.update({"items": items, "items_with_variants": with_v, "instances": s.get("instances"), "audit_failures": fails})
    b.table(["check", "failed"], [[c, s.get("audit_failures", {}).get(c, 0)] for c in checks], caption="Audit of every generated instance")
    folder = Path(r.folder) if r.folder else None
    examples: dict[str, tuple[str, str]] = {}
    if folder is not None and (folder / "rejections.jsonl").is_file():
        for _, rec in iter_jsonl(folder / "rejections.jsonl"):
            examples.setdefault(str(rec.get("reason")), (str(rec.get("item_id", "")), str(rec.get("detail", ""))))
    b.table(
        ["reason", "items", "example", "detail"],
        [
            [code(k), v, code(examples.get(k, ("", ""))[0]) if k in examples else None, clip(examples.get(k, ("", ""))[1], 120)]
            for k, v in s.get("rejections", {}).items()
        ],
        caption="Items without variants, by reason",
        align="lrll",
    )
    if folder is not None and (folder / "variants.jsonl").is_file():
        rows = [
            [code(str(v.get("variant_id", v.get("original_id")))), clip(v.get("question"), 220), code(str(v.get("answer", "")))]
            for _, v in iter_jsonl(folder / "variants.jsonl", limit=min(opt.max_rows, 5))
        ]
        b.table(["variant", "question", "answer"], rows, caption="First variants", align="lll")
    return b.build()


def render_scenarios(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    b = SectionBuilder(f"Contamination scenarios: {s.get('benchmark')} (seed {s.get('seed')})", kind="scenarios", source=r.path)
    counts = s.get("counts", {})
    b.headline(strong(f"{sum(int(v) for v in counts.values()):,} labelled samples"), text(f" in {len(counts)} scenario/split cells."))
    b.table(["scenario/split", "samples"], [[code(k), v] for k, v in counts.items()])
    b.table(["generator", "samples"], [[code(k), v] for k, v in s.get("generators", {}).items()], caption="Generators")
    return b.build()


def render_eval_detectors(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    b = SectionBuilder("Detector evaluation (paper 001 Tables 1–2)", kind="eval-detectors", source=r.path)
    t2 = s.get("table2_s3", [])
    if t2:
        words = "; ".join(
            f"{x['benchmark']}: cascade {num(x['cascade_f1'])} vs best baseline {num(x['best_baseline_f1'])} ({x['improvement']:+.3f})"
            for x in t2
        )
        b.headline(strong("S3 (isomorphic) F1 on the test split: "), text(words + "."))
    b.note(
        "F1 on the test split with thresholds calibrated on the disjoint calib split; "
        "precision and recall carry Wilson 95% intervals from the confusion counts."
    )
    b.table(
        ["benchmark", "best baseline F1", "cascade F1", "improvement"],
        [[code(x["benchmark"]), x["best_baseline_f1"], x["cascade_f1"], f"{x['improvement']:+.3f}"] for x in t2],
        caption="S3 F1 per benchmark",
    )
    for rep in s.get("reports", []):
        scen = sorted({row["scenario"] for row in rep.get("rows", [])})
        methods = list(dict.fromkeys(row["method"] for row in rep.get("rows", [])))
        cell = {(row["method"], row["scenario"]): row for row in rep.get("rows", [])}
        f1_rows = []
        for m in methods:
            f1_rows.append([m] + [num(cell[(m, sc)]["metrics"]["f1"]) if (m, sc) in cell else None for sc in scen])
        b.table(["method", *[f"{sc} F1" for sc in scen]], f1_rows, caption=f"{rep.get('benchmark')}: F1 per method and scenario")
        detail = []
        for (m, sc), row in cell.items():
            mt = row["metrics"]
            tp, fp, fn = int(mt.get("tp", 0)), int(mt.get("fp", 0)), int(mt.get("fn", 0))
            detail.append(
                [
                    m,
                    sc,
                    tp,
                    fp,
                    fn,
                    f"{num(mt.get('precision'))} {interval(wilson(tp, tp + fp)).removeprefix('95% CI ')}",
                    f"{num(mt.get('recall'))} {interval(wilson(tp, tp + fn)).removeprefix('95% CI ')}",
                    num(mt.get("f1")),
                ]
            )
        b.table(
            ["method", "scenario", "TP", "FP", "FN", "precision [95% CI]", "recall [95% CI]", "F1"],
            detail,
            align="llrrrrrr",
            caption=f"{rep.get('benchmark')}: confusion counts",
        )
        th = rep.get("thresholds", {})
        b.table(
            ["method", "calibrated settings"],
            [[m, ", ".join(f"{k}={num(v) if isinstance(v, float) else v}" for k, v in d.items())] for m, d in th.items()],
            caption=f"{rep.get('benchmark')}: thresholds",
            align="ll",
        )
    return b.build()


# ---- regeneration -------------------------------------------------------------------------------


def render_regen(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    n, bad = int(s.get("n", 0)), int(s.get("n_invalid", 0))
    b = SectionBuilder(
        f"Fresh tool-agent instances: {', '.join(s.get('domains', []))}", kind="regen", source=r.path, status="failures" if bad else "clean"
    )
    ci = wilson(bad, n)
    b.headline(
        strong(f"{bad:,} of {n:,} regenerated instances invalid"),
        text(
            f" (rate {num(s.get('invalid_rate'), 4)}; {interval(ci, 4)}) over {s.get('n_seeds')} seeds; every instance audited "
            "(injective, covered, deterministic, faithful, solvable) against a replayed goal state."
        ),
    )
    b.figures.update({"n": n, "n_invalid": bad, "invalid_rate_ci": ci})
    b.table(["check", "failed"], [[k, v] for k, v in s.get("failures", {}).items()], caption="Audit checks")
    b.table(["domain", "instances"], [[k, v] for k, v in s.get("by_domain", {}).items()])
    b.table(["task/branch", "instances"], [[code(k), v] for k, v in s.get("branches", {}).items()], caption="Branch selection")
    b.table(
        ["invalid instance", "problems"],
        [
            [
                code(str(x.get("key", x))) if isinstance(x, dict) else code(str(x)),
                clip("; ".join(map(str, x.get("problems", []))) if isinstance(x, dict) else "", 200),
            ]
            for x in s.get("invalid_examples", [])
        ],
        caption="Invalid examples",
        align="ll",
    )
    inst = Path(r.folder) / "instances.jsonl" if r.folder else None
    if inst is not None and inst.is_file():
        rows = [
            [
                code(f"{v.get('domain')}/{v.get('task_index')}/{v.get('seed')}"),
                str(v.get("branch") or "—"),
                clip(v.get("instruction"), 220),
                len(v.get("actions", [])),
            ]
            for _, v in iter_jsonl(inst, limit=min(opt.max_rows, 3))
        ]
        b.table(["instance", "branch", "instruction", "actions"], rows, caption="First instances", align="lllr")
    return b.build()


def render_regen_replay(r: Result, opt: RenderOptions) -> Section:
    b = SectionBuilder("Replay of the shipped reference programs", kind="regen-replay", source=r.path)
    rows = r.data
    b.headline(text("; ".join(f"{x['domain']}: {x['clean']} of {x['tasks']} replay clean" for x in rows) + "."))
    b.table(["domain", "tasks", "clean", "with errors"], [[x["domain"], x["tasks"], x["clean"], x.get("with_errors")] for x in rows])
    return b.build()


def render_grade(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    n, k = int(s.get("episodes", 0)), int(s.get("passed", 0))
    b = SectionBuilder("Agent episodes graded on fresh instances", kind="grade", source=r.path)
    b.headline(strong(f"{k:,} of {n:,} episodes passed"), text(f" (pass rate {num(s.get('pass_rate'))}; {interval(wilson(k, n))})."))
    b.figures.update({"episodes": n, "passed": k, "pass_rate_ci": wilson(k, n)})
    return b.build()


def render_equivariance(r: Result, opt: RenderOptions) -> Section:
    rows = r.data.get("rows", [])
    b = SectionBuilder("Scored-target equivariance: which leaked artifact survives regeneration", kind="equivariance", source=r.path)
    b.headline(
        text("Pass rate of a perfectly leaked artifact on fresh instances (Wilson 95% intervals on the instances whose goal moved).")
    )
    out = []
    for x in rows:
        nm = int(x.get("n_moved") or 0)
        pm = x.get("pass_moved")
        k = round(float(pm) * nm) if nm and pm is not None and pm == pm else None
        out.append(
            [
                x.get("substrate"),
                x.get("scored_target"),
                x.get("leaked_artifact"),
                x.get("adversary"),
                x.get("n"),
                num(x.get("pass_all")),
                nm,
                f"{num(pm)} {interval(wilson(k, nm)) if k is not None else ''}".strip(),
                x.get("regeneration_holds"),
            ]
        )
    b.table(
        ["substrate", "scored", "leaked artifact", "adversary", "n", "pass", "moved", "pass | moved", "regeneration holds?"],
        out,
        align="llllrrrrl",
    )
    return b.build()
