"""The audit's figures: matplotlib's SVG backend (inline in the HTML) and PNG next to the report.

Text in the figures is drawn as paths (``svg.fonttype = path``), labels are reduced to a safe
character set before they reach matplotlib, and the SVG is cleaned (no comments, no XML
prolog, ids prefixed per figure so several can share one page) and checked to hold no script,
event handler or external reference before it is inlined.
"""

from __future__ import annotations

import io
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from contam.audit.claims import dataset_flags
from contam.audit.verdict import read_json_or_none, read_jsonl_lenient
from contam.outputs import atomic_write, ensure_dir, read_json_dict

#: Figure size (inches) and PNG resolution: readable on a slide and in a PR comment.
SIZE = (6.4, 3.6)
DPI = 110


@dataclass(frozen=True)
class Figure:
    """One figure: ``key`` (file stem), caption, data source, the cleaned SVG and the PNG path."""

    key: str
    caption: str
    source: str
    svg: str
    png: str


def safe_label(s: object, limit: int = 60) -> str:
    """Only letters, digits, spaces and harmless punctuation reach a figure (no markup, no controls)."""
    t = re.sub(r"[^A-Za-z0-9 _.,:;/()+=%#\[\]'-]", "?", str(s))
    t = t.replace("--", "-")
    return t[:limit]


_BAD = re.compile(r"<script|\bon[a-z]+\s*=|javascript:|<foreignObject|<iframe|<image|href=\"(?!#)|url\((?!#)", re.I)


def clean_svg(svg: str, prefix: str) -> str:
    """The ``<svg>`` element alone, comments removed, ids made unique with ``prefix``; raises if
    anything active or external is left."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", svg)
    # a fixed pixel size would overflow narrow screens: scale with the page instead
    svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 style="max-width:100%;height:auto"', svg, count=1)
    if _BAD.search(svg):
        raise ValueError("figure SVG holds active or external content")
    return svg


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    matplotlib.rcParams.update(
        {
            "svg.fonttype": "path",
            "svg.hashsalt": "contam",
            "font.size": 9,
            "axes.titlesize": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, key: str, caption: str, source: str, folder: Path, n: int) -> Figure:
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    png = folder / f"{key}.png"
    with atomic_write(png, mode="wb", encoding=None) as fh:
        fig.savefig(fh, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return Figure(key, caption, source, clean_svg(buf.getvalue(), f"f{n}"), str(png))


def _wilson(k: float, n: int) -> tuple[float, float]:
    from contam.stats.intervals import wilson_interval

    if n <= 0:
        return math.nan, math.nan
    ci = wilson_interval(round(k), n)
    return ci.low, ci.high


def figures(run: Path, cfg: dict[str, Any], out: Path) -> tuple[list[Figure], list[str]]:
    """Every figure the run's files support; returns them and notes on what could not be drawn."""
    from contam.audit.runner import slug

    notes: list[str] = []
    try:
        plt = _plt()
    except ImportError:
        return [], ["matplotlib is not installed: no figures (pip install 'matplotlib==3.11.2')"]
    ensure_dir(out)
    figs: list[Figure] = []

    def add(fig: Any, key: str, caption: str, source: str) -> None:
        figs.append(_save(fig, key, caption, source, out, len(figs) + 1))

    # data side: per level, score distribution flagged vs not with the threshold; flags per item
    if cfg.get("dataset"):
        from contam.audit.data_figures import data_figures, scan_source

        scan = run / "data" / "scan"
        data_figures(
            dataset_flags(run),
            read_json_dict(scan / "summary.json"),
            scan_source(run, cfg.get("dataset"), sharded=(scan / "shards").is_dir() and not (scan / "flags.jsonl").is_file()),
            plt,
            add,
            notes,
            SIZE,
            safe_label,
        )
    else:
        notes.append("data side: no figures: no dataset was given (--dataset)")
    if not cfg.get("model"):
        notes.append("model side: no figures (accuracy on variants, truncation curve, Min-K%): no model was given (--model)")
        return figs, notes
    for b in cfg["benchmarks"]:
        bdir = run / slug(b)
        lab = safe_label(b, 30)
        bars: list[tuple[str, float, float, float, str]] = []  # (label, acc, lo, hi, color)
        zc = read_json_or_none(bdir / "zerocot" / "summary.json")
        zitems = read_jsonl_lenient(bdir / "zerocot" / "items.jsonl")
        if isinstance(zc, dict) and zitems:
            n = len(zitems)
            for side, col in (("original", "#cf222e"), ("reference", "#8c959f")):
                k = sum(int(r[side]["accuracy"]) for r in zitems)
                lo, hi = _wilson(k, n)
                bars.append((f"zero-CoT\n{'original' if side == 'original' else 'variant'}", k / n, lo, hi, col))
        cl = read_json_or_none(bdir / "cliff" / "summary.json")
        citems = read_jsonl_lenient(bdir / "cliff" / "items.jsonl")
        if isinstance(cl, dict) and citems:
            n = len(citems)
            k = sum(int(r["original_correct"]) for r in citems)
            lo, hi = _wilson(k, n)
            bars.append(("CoT\noriginal", k / n, lo, hi, "#cf222e"))
            vs = [x for r in citems for x in r.get("variant_correct", [])]
            if vs:
                lo, hi = _wilson(sum(vs), len(vs))
                bars.append((f"CoT variants\n(K={cl.get('k')})", sum(vs) / len(vs), lo, hi, "#8c959f"))
        if bars:
            fig, ax = plt.subplots(figsize=SIZE)
            xs = np.arange(len(bars))
            acc = np.array([x[1] for x in bars])
            err = np.array([[max(0.0, x[1] - x[2]) for x in bars], [max(0.0, x[3] - x[1]) for x in bars]])
            ax.bar(xs, acc, color=[x[4] for x in bars], yerr=err, capsize=4)
            ax.set_xticks(xs, [x[0] for x in bars])
            ax.set_ylim(0, 1)
            ax.set_ylabel("accuracy (95% Wilson CI)")
            ax.set_title(f"{lab}: original vs variant accuracy")
            add(
                fig,
                f"{slug(b)}-accuracy",
                f"{b}: accuracy on the original items vs their isomorphic variants, per probe, with 95% intervals",
                ", ".join(str(bdir / p / "items.jsonl") for p in ("zerocot", "cliff") if (bdir / p / "items.jsonl").exists())
                + f" (model {cfg.get('model')})",
            )
        if isinstance(zc, dict) and zc.get("curve"):
            cur = zc["curve"]
            fig, ax = plt.subplots(figsize=SIZE)
            kept = [100 * p["kept"] for p in cur]
            ax.plot(kept, [p["original"] for p in cur], "o-", color="#cf222e", label="original items")
            ax.plot(kept, [p["reference"] for p in cur], "s--", color="#57606a", label="isomorphic variants")
            ax.set_xlabel("share of the model's own chain of thought kept (%)")
            ax.set_ylabel("forced-answer accuracy")
            ax.set_ylim(0, 1)
            ax.set_title(f"{lab}: truncation curve (Zero-CoT Probe)")
            ax.legend(frameon=False)
            add(
                fig,
                f"{slug(b)}-truncation",
                f"{b}: forced-answer accuracy by share of the chain of thought kept; a memorized benchmark is answered "
                "without reasoning (high at 0%)",
                f"{bdir / 'zerocot' / 'summary.json'}",
            )
        mk = read_json_or_none(bdir / "minkprob" / "summary.json")
        mitems = read_jsonl_lenient(bdir / "minkprob" / "items.jsonl")
        if isinstance(mk, dict) and mitems:
            prim = mk.get("primary", "mink")
            x = [r["scores"].get(prim) for r in mitems if r.get("group") == "benchmark"]
            y = [r["scores"].get(prim) for r in mitems if r.get("group") == "control"]
            x = [v for v in x if isinstance(v, int | float) and math.isfinite(v)]
            y = [v for v in y if isinstance(v, int | float) and math.isfinite(v)]
            if x and y:
                auc = next((m["auc"] for m in mk.get("methods", []) if m.get("method") == prim), math.nan)
                fig, ax = plt.subplots(figsize=SIZE)
                bins = np.linspace(min(x + y), max(x + y), 25)
                ax.hist(y, bins=bins, alpha=0.6, color="#8c959f", label=f"control ({len(y)})")
                ax.hist(x, bins=bins, alpha=0.6, color="#cf222e", label=f"benchmark ({len(x)})")
                ax.set_xlabel(f"{safe_label(prim)} score (higher = more likely seen)")
                ax.set_ylabel("items")
                ax.set_title(f"{lab}: Min-K% benchmark vs control, AUC {auc:.3f}")
                ax.legend(frameon=False)
                add(
                    fig,
                    f"{slug(b)}-minkprob",
                    f"{b}: {prim} scores of the benchmark items vs the control set (AUC {auc:.3f}; 0.5 = no difference)",
                    f"{bdir / 'minkprob' / 'items.jsonl'} (control: {mk.get('control')})",
                )
    cal = cfg.get("calibration")
    if cal:
        f = calibration_figure(Path(cal), plt)
        if f is None:
            notes.append(f"calibration: {cal} holds no measured calibration (an eval-probes summary.json)")
        else:
            add(
                f,
                "calibration",
                "Contamination Confidence vs the known truth on models contaminated on purpose (controlled-contamination harness)",
                str(cal),
            )
    else:
        notes.append(
            'calibration of the Contamination Confidence: not measured in this run (give calibration = "EVAL_PROBES_DIR" '
            "from `contam eval-probes` to plot it)"
        )
    return figs, notes


def calibration_figure(path: Path, plt: Any) -> Any:
    """Confidence of every benchmark-level verdict of ``contam eval-probes`` runs vs the truth
    (seen = contaminated, unseen = clean): a calibrated confidence is high on seen, low on unseen."""
    paths = [path] if path.is_file() else sorted(path.rglob("summary.json"))
    pts: list[tuple[float, int, str]] = []
    for p in paths:
        s = read_json_or_none(p)
        if not isinstance(s, dict):
            continue
        for v in s.get("verdicts", []) or []:
            if isinstance(v, dict) and v.get("set") in ("seen", "unseen") and isinstance(v.get("confidence"), int | float):
                pts.append((float(v["confidence"]), int(v["set"] == "seen"), str(v.get("probe", ""))))
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    edges = np.linspace(0, 1, 6)
    conf = np.array([p[0] for p in pts])
    truth = np.array([p[1] for p in pts])
    mids, rates, ns = [], [], []
    for lo, hi in itertools.pairwise(edges):
        m = (conf >= lo) & ((conf < hi) | (hi == 1.0))
        if m.any():
            mids.append(float(conf[m].mean()))
            rates.append(float(truth[m].mean()))
            ns.append(int(m.sum()))
    ax.plot([0, 1], [0, 1], ":", color="#8c959f", label="perfect calibration")
    ax.plot(mids, rates, "o-", color="#0969da", label="measured")
    for x, y, n in zip(mids, rates, ns, strict=True):
        ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel("Contamination Confidence")
    ax.set_ylabel("share truly contaminated")
    ax.set_title(f"Calibration ({len(pts)} verdicts)")
    ax.legend(frameon=False)
    return fig
