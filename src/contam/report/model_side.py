"""Renderers for model-side results: the log-prob family, the Zero-CoT Probe, the performance
cliff, the generation probes, the SWE-bench diagnostics, probe validation (``eval-probes``) and
the statistics commands (``stats power``, ``stats mcnemar``).

Every verdict is shown with its test, p-value, interval and Contamination Confidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contam.report.data_side import RenderOptions, clip
from contam.report.inputs import Result, iter_jsonl
from contam.report.model import Section, SectionBuilder, code, evidence_status, interval, num, pct, pval, strong, test_words, text, wilson


def _cc(cal: dict[str, Any] | None) -> str:
    if not cal:
        return "—"
    return f"{num(cal.get('confidence'))} (prior {num(cal.get('prior'), 2)}, Bayes factor bound {num(cal.get('bayes_factor'), 2)})"


def render_minkprob(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    methods = s.get("methods", [])
    primary = s.get("primary") or (methods[0]["method"] if methods else "?")
    head = next((m for m in methods if m.get("method") == primary), methods[0] if methods else {})
    test = head.get("test", {})
    status, words = evidence_status(test.get("p_value"), (head.get("auc") or 0.5) - 0.5)
    b = SectionBuilder(
        f"Log-prob probes: {s.get('model')} on {s.get('benchmark')} vs control", kind="minkprob", source=r.path, status=status
    )
    b.headline(
        strong(words + ". "),
        text(
            f"{primary}: AUC {num(head.get('auc'))}, {test_words(test)}; Contamination Confidence {num(s.get('contamination_confidence'))}."
        ),
    )
    b.para(
        f"{num(s.get('n_benchmark'))} benchmark items vs {num(s.get('n_control'))} control texts ({s.get('control')}). AUC > 0.5 means "
        "the model finds benchmark texts more likely than the control; the confidence is the calibrated posterior (0 when AUC ≤ 0.5)."
    )
    b.figures.update(
        {
            "primary": primary,
            "auc": head.get("auc"),
            "p_value": test.get("p_value"),
            "ci": test.get("ci"),
            "contamination_confidence": s.get("contamination_confidence"),
        }
    )
    b.table(
        ["score", "benchmark mean", "control mean", "AUC", "95% CI", "test", "p", "confidence"],
        [
            [
                code(m["method"]),
                num(m.get("benchmark_mean"), 4),
                num(m.get("control_mean"), 4),
                num(m.get("auc")),
                interval(m.get("test", {}).get("ci")).removeprefix("95% CI "),
                m.get("test", {}).get("method", ""),
                pval(m.get("test", {}).get("p_value")),
                num(m.get("calibration", {}).get("confidence")),
            ]
            for m in methods
        ],
        caption="Every score (one-sided, benchmark > control)",
    )
    return b.build()


def render_zerocot(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    metrics = s.get("metrics", [])
    primary = s.get("primary_metric", "accuracy")
    head = next((m for m in metrics if m.get("metric") == primary), metrics[0] if metrics else {})
    test = head.get("test", {})
    status, words = evidence_status(test.get("p_value"), head.get("gap"))
    b = SectionBuilder(f"Zero-CoT Probe: {s.get('model')} on {s.get('benchmark')}", kind="zerocot", source=r.path, status=status)
    b.headline(
        strong(words + ". "),
        text(f"{primary} gap original − reference {num(head.get('gap'))}, {test_words(test)}; "),
        strong(f"Contamination Confidence {num(s.get('contamination_confidence'))}"),
        text(f" ({_cc(head.get('calibration'))})."),
    )
    b.para(f"{num(s.get('n_pairs'))} item/reference pairs, forced answers by {s.get('mode')}; reference set: {s.get('reference')}.")
    b.figures.update(
        {
            "primary": primary,
            "gap": head.get("gap"),
            "ci": head.get("ci"),
            "p_value": test.get("p_value"),
            "contamination_confidence": s.get("contamination_confidence"),
            "n_pairs": s.get("n_pairs"),
        }
    )
    b.table(
        ["metric", "original", "reference", "gap", "95% CI", "test", "p", "confidence"],
        [
            [
                code(m["metric"]),
                num(m.get("original")),
                num(m.get("reference")),
                f"{m.get('gap', 0):+.3f}",
                interval(m.get("ci")).removeprefix("95% CI "),
                m.get("test", {}).get("method", ""),
                pval(m.get("test", {}).get("p_value")),
                num(m.get("calibration", {}).get("confidence")),
            ]
            for m in metrics
        ],
        caption="All four metrics (one-sided, original > reference)",
    )
    items = Path(r.folder) / "items.jsonl" if r.folder else None
    if items is not None and items.is_file():
        rows = []
        for _, rec in iter_jsonl(items, limit=opt.max_rows):
            o, f = rec.get("original") or {}, rec.get("reference") or {}
            rows.append(
                [
                    code(str(o.get("id", rec.get("key")))),
                    code(str(o.get("gold", ""))),
                    code(clip(o.get("zero_answer"), 60)),
                    "yes" if o.get("accuracy") else "no",
                    code(str(f.get("gold", ""))),
                    code(clip(f.get("zero_answer"), 60)),
                    "yes" if f.get("accuracy") else "no",
                ]
            )
        b.table(
            ["item", "gold", "forced answer", "right", "reference gold", "forced answer", "right"],
            rows,
            align="lllrllr",
            caption=f"First {len(rows)} pairs: answers forced with no reasoning",
        )
    fc = s.get("full_cot")
    if fc:
        b.para(
            f"Difficulty check — full-CoT accuracy gap {fc.get('effect', 0):+.3f} ({test_words(fc)}); near 0 means the reference set is as hard as the originals."
        )
    if s.get("curve"):
        b.table(
            ["CoT kept", "original", "reference", "gap"],
            [[pct(p.get("kept"), 0), num(p.get("original")), num(p.get("reference")), f"{p.get('gap', 0):+.3f}"] for p in s["curve"]],
            caption="Truncation curve",
        )
    return b.build()


def render_cliff(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    test = s.get("test", {})
    status, words = evidence_status(test.get("p_value"), s.get("delta"), float(s.get("alpha", 0.05)))
    b = SectionBuilder(f"Performance cliff: {s.get('model')} on {s.get('benchmark')}", kind="cliff", source=r.path, status=status)
    b.headline(
        strong(words + ". "),
        text(
            f"Δ = accuracy on originals {num(s.get('acc_original'))} − on variants {num(s.get('acc_variants'))} "
            f"= {num(s.get('delta'))}, {test_words(test)}; "
            f"flagged: {'yes' if s.get('flagged') else 'no'} (α {s.get('alpha')}); "
            f"Contamination Confidence {_cc(s.get('calibration'))}."
        ),
    )
    b.figures.update({"delta": s.get("delta"), "p_value": test.get("p_value"), "ci": test.get("ci"), "flagged": s.get("flagged")})
    b.table(
        ["variant", "accuracy"],
        [[f"variant {i + 1}", num(a)] for i, a in enumerate(s.get("acc_per_variant", []))],
        caption=f"{num(s.get('n_items'))} items, K = {s.get('k')} variants each",
    )
    return b.build()


_GROUPED = {
    "cdd": ("CDD (output peakedness)", ("flagged", "mean_peak"), ("test",)),
    "reconstruct": ("Prefix reconstruction", ("mean_rouge_l", "exact_rate", "verbatim_rate"), ("rouge_test", "verbatim_test")),
    "ts-guess": ("TS-Guessing", ("exact_rate", "mean_rouge_l"), ("test",)),
}


def _label(key: str) -> str:
    words = {"mean_rouge_l": "mean ROUGE-L", "rouge_test": "ROUGE-L test", "flagged": "share flagged (peak > ξ)"}
    return words.get(key, key.replace("_", " "))


def render_grouped(r: Result, opt: RenderOptions) -> Section:
    """``cdd``, ``reconstruct``, ``ts-guess``: per-group rates, and tests when a reference set was given."""
    s = r.data
    title, metrics, tests = _GROUPED[r.kind]
    present = [s[t] for t in tests if s.get(t)]
    status, words = (
        evidence_status(present[0].get("p_value"), present[0].get("effect"))
        if present
        else ("info", "No verdict (no reference set to compare with)")
    )
    b = SectionBuilder(f"{title}: {s.get('model')} on {s.get('benchmark')}", kind=r.kind, source=r.path, status=status)
    groups = list(s.get("n", {}))
    if present:
        detail = "; ".join(f"{_label(t)}: effect {num(s[t].get('effect'))}, {test_words(s[t])}" for t in tests if s.get(t)) + "."
    else:
        detail = (
            "; ".join(f"{g} ({s['n'][g]} items): " + ", ".join(f"{_label(m)} {num(s.get(m, {}).get(g))}" for m in metrics) for g in groups)
            + "."
        )
    b.headline(strong(words + ". "), text(detail))
    rows = []
    for g in groups:
        row: list[Any] = [g, s["n"][g]]
        for m in metrics:
            row.append(num(s.get(m, {}).get(g)))
        if r.kind == "ts-guess":
            row.append(interval(s.get("exact_ci", {}).get(g)).removeprefix("95% CI "))
        rows.append(row)
    b.table(["group", "n", *[_label(m) for m in metrics], *(["exact 95% CI"] if r.kind == "ts-guess" else [])], rows)
    b.figures.update({t: s.get(t) for t in tests})
    return b.build()


def render_guided(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    test = s.get("test") or {}
    need = int(s.get("config", {}).get("min_items", 0) or 0)
    if s.get("contaminated"):
        status, words = "evidence", "Evidence of contamination"
    elif not test or int(s.get("n", 0)) < need:
        status, words = "info", f"No verdict (only {num(s.get('n'))} items; at least {need} needed)" if need else "No verdict (no test)"
    else:
        status, words = "no evidence", "No significant evidence of contamination"
    b = SectionBuilder(
        f"Guided vs general instruction: {s.get('model')} on {s.get('benchmark')}", kind="guided", source=r.path, status=status
    )
    b.headline(
        strong(words + ". "),
        text(
            f"ROUGE-L guided {num(s.get('mean_guided'))} vs general {num(s.get('mean_general'))} over "
            f"{num(s.get('n'))} items; {test_words(test) if test else 'no test'}."
        ),
    )
    b.figures.update({"contaminated": s.get("contaminated"), "test": test or None})
    return b.build()


def render_swe(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    task = r.kind
    metric = "accuracy" if task == "swe-filepath" else "verbatim rate"
    n, k = int(s.get("n", 0)), int(s.get("hits", 0))
    cmp = s.get("comparison")
    status, words = evidence_status(cmp["test"].get("p_value"), cmp.get("gap")) if cmp else ("info", "No verdict (no control set)")
    b = SectionBuilder(f"SWE-bench diagnostic {task}: {s.get('model')} on {s.get('benchmark')}", kind=task, source=r.path, status=status)
    b.headline(strong(words + ". "), text(f"{metric} {num(s.get('rate'))} ({k} of {n}; {interval(wilson(k, n))})."))
    if cmp:
        mde = f"minimum detectable gap {num(cmp['mde'])}" if cmp.get("mde") is not None else str(cmp.get("note", ""))
        b.para(
            f"Control ({s['control'].get('path')}): {num(s['control'].get('rate'))} ({s['control'].get('hits')} of {s['control'].get('n')}); "
            f"gap {num(cmp.get('gap'))}, {test_words(cmp.get('test'))}; power: {mde} at these sizes (α 0.05, 80% power)."
        )
    if task == "swe-filepath":
        b.para(
            f"Filtered accuracy (issues naming a gold file removed): {num(s.get('rate_filtered'))} ({s.get('hits_filtered')} of {s.get('n_filtered')})."
        )
    else:
        b.para(f"Mean consecutive 5-gram overlap with the gold: {num(s.get('mean_score'))}.")
    b.figures.update({"rate": s.get("rate"), "rate_ci": wilson(k, n), "comparison": cmp})
    return b.build()


def render_eval_probes(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    seps, verdicts = s.get("separations", []), s.get("verdicts", [])
    vmap = {(v["set"], v["probe"], v["method"]): v for v in verdicts}
    b = SectionBuilder(
        f"Probe validation: {s.get('model')} ({s.get('mode')} ×{s.get('epochs')}) on {s.get('benchmark')}",
        kind="eval-probes",
        source=r.path,
    )
    lp = [x for x in seps if x.get("probe") == "logprob" and x.get("auroc") == x.get("auroc")]
    if lp:
        best = max(lp, key=lambda x: (x["auroc"], x["tpr_at_fpr"]))
        vm = "did_diff" if ("seen", "logprob", "did_diff") in vmap else best["method"]
        vs, vu = vmap.get(("seen", "logprob", vm)), vmap.get(("unseen", "logprob", vm))
        b.status = "evidence" if vs and vs.get("gate") else "no evidence"
        line = f"Best log-prob score {best['method']}: AUROC {num(best['auroc'])}, TPR {num(best['tpr_at_fpr'])} at 5% FPR (seen vs unseen items). "
        if vs:
            line += f"Verdict ({vm}): seen set p = {pval(vs['p_value'])}, confidence {num(vs['confidence'])}, flagged {'yes' if vs['gate'] else 'no'}"
        if vu:
            line += f"; unseen set p = {pval(vu['p_value'])}, confidence {num(vu['confidence'])}, flagged {'yes' if vu['gate'] else 'no'}"
        b.headline(text(line + "."))
    b.para(
        f"{num(s.get('n_seen'))} seen vs {num(s.get('n_unseen'))} unseen items. Flagged = effect toward contamination and one-sided p < "
        f"{s.get('config', {}).get('alpha', 0.05)}."
    )
    rows = []
    for x in seps:
        vs, vu = vmap.get(("seen", x["probe"], x["method"])), vmap.get(("unseen", x["probe"], x["method"]))
        rows.append(
            [
                x["probe"],
                code(x["method"]),
                num(x.get("auroc")),
                num(x.get("tpr_at_fpr")),
                num(x.get("seen_mean"), 4),
                num(x.get("unseen_mean"), 4),
                pval(vs["p_value"]) if vs else None,
                num(vs["confidence"]) if vs else None,
                ("yes" if vs["gate"] else "no") if vs else None,
                pval(vu["p_value"]) if vu else None,
                num(vu["confidence"]) if vu else None,
                ("yes" if vu["gate"] else "no") if vu else None,
            ]
        )
    b.table(
        [
            "probe",
            "score",
            "AUROC",
            "TPR@5%FPR",
            "seen mean",
            "unseen mean",
            "seen p",
            "seen CC",
            "seen flagged",
            "unseen p",
            "unseen CC",
            "unseen flagged",
        ],
        rows,
        align="llrrrrrrrrrr",
    )
    tests = sorted({v.get("test", "") for v in verdicts if v.get("test")})
    if tests:
        b.note("Tests: " + "; ".join(tests) + ".")
    return b.build()


def render_eval_probes_sweep(r: Result, opt: RenderOptions) -> Section:
    rows = r.data
    b = SectionBuilder("Probe validation sweep (exposure × form)", kind="eval-probes-sweep", source=r.path)
    cols = [
        "model",
        "mode",
        "epochs",
        "best_logprob",
        "auroc",
        "tpr@5%fpr",
        "verdict",
        "seen_p",
        "seen_cc",
        "seen_gate",
        "unseen_p",
        "unseen_cc",
        "unseen_gate",
    ]
    b.headline(text(f"{len(rows)} models; flagged (gate 1) = effect toward contamination and one-sided p < 0.05."))
    b.table(
        cols,
        [
            [pval(x.get(c)) if c.endswith("_p") else (num(x.get(c)) if isinstance(x.get(c), float) else x.get(c)) for c in cols]
            for x in rows
        ],
    )
    return b.build()


def render_power(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    b = SectionBuilder(f"Power: n = {s.get('n')}, α = {s.get('alpha')}, power {s.get('power')}", kind="power", source=r.path)
    gap = float(s.get("gap", 0))
    b.headline(
        strong(
            f"Minimum detectable gap at n = {s.get('n')}: {100 * s['mde_unpaired_wald']:.1f} points unpaired, "
            f"{100 * s['mde_paired']:.1f} paired. "
        ),
        text(
            f"A {100 * gap:.0f}-point gap needs {num(s.get('n_unpaired_for_gap'))} instances per arm unpaired or "
            f"{num(s.get('n_paired_for_gap'))} common instances paired (discordance {s.get('discordance')}); "
            f"at n = {s.get('n')} the exact McNemar test has power {num(s.get('exact_mcnemar_power_at_n'))} for it."
        ),
    )
    b.table(
        ["quantity", "value"],
        [
            ["MDE unpaired (two-proportion z, Wald)", f"{100 * s['mde_unpaired_wald']:.1f} points at baseline {s.get('baseline')}"],
            ["MDE unpaired (Cohen's h)", f"{100 * s['mde_unpaired_arcsine']:.1f} points"],
            ["MDE paired (McNemar, Connor)", f"{100 * s['mde_paired']:.1f} points at discordance {s.get('discordance')}"],
            [f"n per arm for a {100 * gap:.0f}-point gap", num(s.get("n_unpaired_for_gap"))],
            [f"n common instances for a {100 * gap:.0f}-point gap", num(s.get("n_paired_for_gap"))],
            [f"exact McNemar power at n = {s.get('n')}", num(s.get("exact_mcnemar_power_at_n"))],
        ],
    )
    return b.build()


def render_mcnemar(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    b = SectionBuilder("Two systems on common instances (exact McNemar)", kind="mcnemar", source=r.path)
    b.headline(
        strong(f"Pass rates {num(s.get('pass_first'))} vs {num(s.get('pass_second'))} on {num(s.get('n_common'))} common instances; "),
        text(f"{s.get('only_first')} pass only for the first, {s.get('only_second')} only for the second; {test_words(s)}."),
    )
    b.figures.update({"p_value": s.get("p_value"), "ci": s.get("ci")})
    return b.build()


def render_contaminate(r: Result, opt: RenderOptions) -> Section:
    s = r.data
    b = SectionBuilder(f"Contaminated model: {s.get('base_model')} on {s.get('benchmark')}", kind="contaminate", source=r.path)
    b.headline(
        text(
            f"{len(s.get('seen', []))} items trained {s.get('epochs')} time(s) in {s.get('mode')} form; "
            f"{len(s.get('skipped', {}) or {})} skipped; final loss {num((s.get('final_loss') or {}).get('last_epoch_mean'), 4)}."
        )
    )
    b.table(
        ["field", "value"],
        [
            [k, num(s.get(k)) if isinstance(s.get(k), float) else s.get(k)]
            for k in ("base_identity", "n_filler_docs", "train_tokens", "train_seconds", "seconds_per_100_items_epoch", "created")
        ],
    )
    return b.build()
