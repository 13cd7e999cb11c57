"""The audit report: verdict first, then the figures, then every step's own section.

``report.html`` is one self-contained page (inline CSS and SVG, no script, no external
request, a Content-Security-Policy forbidding both); ``summary.md`` is short enough for a CI
comment; ``figures/*.png`` are the same figures for slides. Everything shown is escaped; in
Markdown, control characters (terminal escapes, bidirectional overrides) are removed too.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from contam.audit.plots import Figure
from contam.audit.verdict import AuditVerdict, SideVerdict
from contam.outputs import atomic_write

VERDICT_CSS = """
.verdicts{display:grid;grid-template-columns:repeat(auto-fill,minmax(20rem,1fr));gap:.8rem;margin:1rem 0 1.4rem}
.card{border:1px solid #d0d7de;border-radius:8px;padding:.7rem .9rem;border-top:6px solid #8c959f}
.card h3{margin:.1rem 0 .3rem;font-size:1rem}.card p{margin:.25rem 0;font-size:.9rem}
.v{display:inline-block;font-weight:700;font-size:1.05rem;padding:.05rem .6rem;border-radius:1rem;background:#eaeef2}
.v-contaminated{background:#ffebe9;color:#a40e26}.c-contaminated{border-top-color:#cf222e}
.v-suspect{background:#fff8c5;color:#7d4e00}.c-suspect{border-top-color:#d4a72c}
.v-clean{background:#dafbe1;color:#116329}.c-clean{border-top-color:#1a7f37}
.v-inconclusive{background:#eaeef2;color:#424a53}.c-inconclusive{border-top-color:#8c959f}
.lim{color:#7d4e00}.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(28rem,1fr));gap:.8rem}
.figs figure{border:1px solid #d0d7de;border-radius:6px;padding:.5rem;margin:0}
.figs svg{display:block;width:100%;height:auto}.figs .source{overflow-wrap:anywhere}.overall{font-size:1.15rem}
"""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def plain(s: object) -> str:
    """Text without control characters: terminal escapes, zero-width and bidi overrides."""
    return _CONTROL.sub("", str(s))


def md_escape(s: object) -> str:
    """Text safe inside Markdown (and the HTML a Markdown viewer makes of it)."""
    t = plain(s).replace("\n", " ")
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#!~])", r"\\\1", t)


def _num(x: float, d: int = 2) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def measure_text(v: SideVerdict) -> str:
    """What a verdict rests on, in words: leaked items (data side) or Contamination Confidence
    (model side), with its 95% interval."""
    return v.measure or "—"


def _card(v: SideVerdict) -> str:
    from contam.report.html_writer import esc

    rows = [
        f'<div class="card c-{esc(v.verdict)}"><h3>{esc(v.benchmark)} · {esc(v.side)} side</h3>',
        f'<p><span class="v v-{esc(v.verdict)}">{esc(v.verdict)}</span>'
        + (f' <span class="lim">(lowered from {esc(v.raw_verdict)})</span>' if v.raw_verdict != v.verdict else "")
        + "</p>",
        f"<p><strong>{esc(measure_text(v))}</strong>"
        + (" <small>(benchmark items found in the dataset, Wilson 95% interval)</small>" if v.leaked_items is not None else "")
        + "</p>",
        f"<p>agreed: {esc(', '.join(v.agreed) or 'none')} (of {esc(', '.join(c.probe for c in v.claims) or 'none')})</p>",
        f"<p>holds against: {esc(', '.join(v.holds_against) or '—')}; not against: {esc(', '.join(v.not_against) or '—')}</p>",
    ]
    for lim in v.limitations:
        rows.append(f'<p class="lim">lowered: {esc(lim.what)} — {esc(lim.detail)}</p>')
    if v.lacks:
        rows.append(f'<p class="lim">inconclusive for lack of: {esc("; ".join(v.lacks))}</p>')
    for sk in v.skipped:
        rows.append(f'<p class="lim">not run: {esc(sk.probe)} — {esc(sk.reason)}</p>')
    rows.append(f'<p class="note">{esc(v.summary)}</p></div>')
    return "\n".join(rows)


def _claims_table(verdict: AuditVerdict) -> str:
    from contam.report.html_writer import esc

    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "benchmark",
            "side",
            "probe / level",
            "what",
            "n",
            "effect",
            "p",
            "Contamination Confidence [95% CI]",
            "evidence",
            "holds against",
            "detail",
        )
    )
    body = []
    for v in verdict.verdicts:
        for c in v.claims:
            ci = f"{_num(c.confidence)} [{_num(c.ci_low)}, {_num(c.ci_high)}]" if not math.isnan(c.confidence) else "—"
            cells = [
                v.benchmark,
                v.side,
                c.probe,
                c.metric,
                str(c.n),
                _num(c.effect, 3),
                "—" if math.isnan(c.p_value) else f"{c.p_value:.3g}",
                ci,
                "yes" if c.evidence else "no",
                ", ".join(c.holds_against),
                c.detail,
            ]
            body.append("<tr>" + "".join(f"<td>{esc(x)}</td>" for x in cells) + "</tr>")
    return f"<table><caption>Every claim behind the verdicts</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(verdict: AuditVerdict, figs: list[Figure], notes: list[str], sections_html: str | None, run: Path) -> str:
    """The whole page; ``sections_html`` is the per-step report (contam report) spliced in below."""
    from contam import __version__
    from contam.report.html_writer import CSS, esc

    cards = "\n".join(_card(v) for v in verdict.verdicts)
    fig_html = "\n".join(
        f'<figure id="{esc(f.key)}"><figcaption>{esc(f.caption)}</figcaption>{f.svg}<p class="source">data: {esc(f.source)} · '
        f"PNG: <code>{esc(Path(f.png).name)}</code></p></figure>"
        for f in figs
    )
    note_html = "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
    cfg = verdict.config
    what = [f"benchmark(s) {', '.join(cfg.get('benchmarks', []))}"]
    if cfg.get("dataset"):
        what.append(f"dataset {cfg['dataset']}")
    if cfg.get("model"):
        what.append(f"model {cfg['model']}" + (f" vs reference model {cfg['ref_model']}" if cfg.get("ref_model") else ""))
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'\">\n"
        '<meta name="referrer" content="no-referrer">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(verdict.title)}</title>\n<style>{CSS}{VERDICT_CSS}</style></head>\n<body>\n"
    )
    body = [
        f"<h1>{esc(verdict.title)}</h1>",
        f'<p class="meta">contam {esc(__version__)} · {esc("; ".join(what))} · run folder <code>{esc(str(run))}</code> · config {esc(verdict.fingerprint)}</p>',
        f'<p class="overall">Overall: <span class="v v-{esc(verdict.worst)}">{esc(verdict.worst)}</span></p>',
        f'<section id="verdict" class="verdicts">{cards}</section>',
        '<p class="note">Verdicts: <strong>contaminated</strong> = two or more probes agree (model side) or verbatim / repeated paraphrase '
        "matches (data side); <strong>suspect</strong> = one probe or one paraphrase match; <strong>clean</strong> = no evidence with enough "
        "items; <strong>inconclusive</strong> = not enough to say. A verdict is lowered one step for each weak input listed on its card.</p>",
        '<h2 id="figures">Figures</h2>',
        f'<div class="figs">{fig_html}</div>',
        note_html,
        '<h2 id="claims">Claims</h2>',
        _claims_table(verdict),
    ]
    if sections_html:
        body += ['<h2 id="steps">Every step in detail</h2>', sections_html]
    return head + "\n".join(body) + "\n</body></html>\n"


def sections_html(paths: list[Path]) -> tuple[str, Any]:
    """The existing per-result sections (contam report) of the run's step folders, as HTML."""
    from contam.report.build import build_report
    from contam.report.html_writer import render_html as page

    if not paths:
        return "", None
    rep, results = build_report(paths, title="steps", skip_unknown=True)
    html = page(rep)
    start = html.index('<ol class="toc">')
    end = html.rindex("</body>")
    return html[start:end], (rep, results)


def render_summary(verdict: AuditVerdict, report_path: str, figs: list[Figure]) -> str:
    """``summary.md``: the verdict table and what lowered it; fits a CI comment."""
    lines = [
        f"### {md_escape(verdict.title)}: **{verdict.worst}**",
        "",
        "| benchmark | side | verdict | measure [95% CI] | agreed | holds against |",
        "|---|---|---|---|---|---|",
    ]
    for v in verdict.verdicts:
        ver = v.verdict + (f" (from {v.raw_verdict})" if v.raw_verdict != v.verdict else "")
        lines.append(
            f"| {md_escape(v.benchmark)} | {v.side} | **{ver}** | {md_escape(measure_text(v))} | "
            f"{md_escape(', '.join(v.agreed) or 'none')} | {md_escape(', '.join(v.holds_against) or '—')} |"
        )
    extra = []
    for v in verdict.verdicts:
        for lim in v.limitations:
            extra.append(f"- {md_escape(v.benchmark)} {v.side}: lowered ({md_escape(lim.what)}): {md_escape(lim.detail)}")
        if v.lacks:
            extra.append(f"- {md_escape(v.benchmark)} {v.side}: inconclusive for lack of {md_escape('; '.join(v.lacks))}")
        for sk in v.skipped:
            extra.append(f"- {md_escape(v.benchmark)} {v.side}: not run: {md_escape(sk.probe)}: {md_escape(sk.reason)}")
    if extra:
        lines += ["", *extra[:12]]
    lines += ["", f"Full report: `{md_escape(report_path)}` ({len(figs)} figures as PNG in `figures/`)."]
    return "\n".join(lines) + "\n"


def write_text(path: Path, text: str) -> None:
    with atomic_write(path) as fh:
        fh.write(text)


def show_verdict(verdict: AuditVerdict, run: Path, console: Any) -> None:
    """The verdict table, the overall verdict and where the report is, printed on ``console`` (a
    :class:`rich.console.Console`; every text escaped and stripped of control characters)."""
    from rich.markup import escape
    from rich.table import Table

    colors = {"contaminated": "bold red", "suspect": "bold yellow", "clean": "bold green", "inconclusive": "bold"}
    t = Table(title=f"audit verdict: {escape(plain(verdict.title))}")
    for col in ("benchmark", "side", "verdict", "measure [95% CI]", "agreed", "holds against", "lowered by / lacks"):
        t.add_column(col)
    for v in verdict.verdicts:
        why = "; ".join([lim.what for lim in v.limitations] + list(v.lacks))
        t.add_row(
            escape(plain(v.benchmark)),
            v.side,
            f"[{colors[v.verdict]}]{v.verdict}[/]",
            escape(measure_text(v)),
            escape(", ".join(v.agreed) or "none"),
            escape(", ".join(v.holds_against) or "—"),
            escape(plain(why)) or "—",
        )
    console.print(t)
    for v in verdict.verdicts:
        for sk in v.skipped:
            console.print(f"{escape(plain(v.benchmark))} {v.side} side: {escape(plain(sk.line()))}")
    console.print(f"overall: [{colors[verdict.worst]}]{verdict.worst}[/]")
    console.print(
        f"report: {escape(str(run / 'report.html'))} · summary: {escape(str(run / 'summary.md'))} · figures: {escape(str(run / 'figures'))}/"
    )
