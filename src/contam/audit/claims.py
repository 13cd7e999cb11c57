"""Each probe's finished folder read back as one :class:`Claim`: its test, p-value, Contamination
Confidence with a bootstrap interval over items, and the adversaries it holds against.

The readers are lenient: a run folder written by an older contam, or a probe killed mid-way,
gives a claim over the items that finished (or no claim), never an exception.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from contam.outputs import read_json_dict
from contam.records import Record

#: What each probe's positive claim evidences and a negative claim rules out.
HOLDS_AGAINST: dict[str, tuple[str, ...]] = {
    "zerocot": ("verbatim", "paraphrase"),  # the answer is memorized; the isomorphic variant changes it
    "cliff": ("verbatim", "paraphrase"),
    "minkprob": ("verbatim",),  # token probabilities of the exact text
    "paired": ("verbatim",),  # same, with the reference model's pre-training cancelled
    "token": ("verbatim", "per-class leak"),
    "semantic": ("paraphrase", "per-class leak"),
    "reasoning": ("paraphrase", "per-class leak"),
}
ADVERSARIES = ("verbatim", "paraphrase", "per-class leak")
BOOTSTRAP = 400


@dataclass(frozen=True)
class Claim(Record):
    """One probe's (or one scan level's) finding on one benchmark."""

    probe: str
    metric: str
    n: int
    effect: float
    p_value: float
    confidence: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    evidence: bool = False
    holds_against: tuple[str, ...] = ()
    test: str = ""
    detail: str = ""
    source: str = ""


def read_json_or_none(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_jsonl_lenient(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for raw in fh:
                if raw.endswith("\n") and raw.strip():
                    try:
                        d = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(d, dict):
                        out.append(d)
    except OSError:
        pass
    return out


def dataset_flags(run: Path) -> list[dict[str, Any]]:
    """Every record the audit's dataset scan wrote: its ``flags.jsonl``, or for a sharded dataset
    each shard's (:func:`contam.report.scan_evidence.flag_sources`), tagged with its shard's name
    (``shard``: an id-less record's ``doc_id`` is its line, the same in every shard)."""
    from contam.report.scan_evidence import flag_sources

    scan = run / "data" / "scan"
    out: list[dict[str, Any]] = []
    for src in flag_sources(read_json_dict(scan / "summary.json"), str(scan)):
        out += [{**r, "shard": src.shard} if src.shard else r for r in read_jsonl_lenient(src.flags)]
    return out


def to_float(x: Any) -> float:
    """``x`` as a float; NaN where it is missing or not a number (older or partial records)."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


# ---- Contamination Confidence intervals: resample items, recompute the test and its posterior --------------
def _cc_interval(stat: Any, arrays: Sequence[np.ndarray], seed: int = 0, paired: bool = True) -> tuple[float, float]:
    """2.5/97.5 percentiles of the Contamination Confidence over item resamples (``stat`` maps
    resampled arrays to (p, effect)); paired arrays are resampled together."""
    from contam.stats.calibration import contamination_confidence

    rng = np.random.default_rng(seed)
    vals = []
    n = len(arrays[0])
    if n < 2:
        return math.nan, math.nan
    for _ in range(BOOTSTRAP):
        if paired:
            idx = rng.integers(0, n, n)
            sample = [a[idx] for a in arrays]
        else:
            sample = [a[rng.integers(0, len(a), len(a))] for a in arrays]
        try:
            p, eff = stat(*sample)
            vals.append(contamination_confidence(p, eff))
        except (ValueError, ZeroDivisionError, FloatingPointError):
            continue
    vals = [v for v in vals if not math.isnan(v)]
    if not vals:
        return math.nan, math.nan
    return float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))


def _zc_stat(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from contam.stats.tests import mcnemar_exact

    t = mcnemar_exact(a, b, "greater")
    return t.p_value, float(a.mean() - b.mean())


def _cliff_stat(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from contam.stats.tests import paired_ttest

    if np.all(a - b == (a - b)[0]):  # no variance: the t-test is undefined; the sign decides
        d = float((a - b)[0])
        return (0.0 if d > 0 else 1.0), d
    t = paired_ttest(a, b, "greater")
    return t.p_value, float(a.mean() - b.mean())


def _mw_stat(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from contam.stats.tests import mann_whitney

    t = mann_whitney(x, y, "greater")
    return t.p_value, t.effect - 0.5


def _wil_stat(d: np.ndarray) -> tuple[float, float]:
    from contam.stats.tests import wilcoxon_signed_rank

    t = wilcoxon_signed_rank(d, np.zeros_like(d), "greater")
    return t.p_value, float(t.effect)


# ---- model side ---------------------------------------------------------------------------------------
def zerocot_claim(folder: Path, alpha: float) -> tuple[Claim, dict[str, Any]] | None:
    s = read_json_or_none(folder / "summary.json")
    if not isinstance(s, dict) or s.get("command") != "zerocot":
        return None
    prim = s.get("primary_metric", "accuracy")
    m = next((x for x in s.get("metrics", []) if x.get("metric") == prim), None)
    if m is None:
        return None
    items = read_jsonl_lenient(folder / "items.jsonl")
    a = np.array([to_float(r["original"]["accuracy"]) for r in items if "original" in r])
    b = np.array([to_float(r["reference"]["accuracy"]) for r in items if "reference" in r])
    lo, hi = _cc_interval(_zc_stat, [a, b]) if prim == "accuracy" and len(a) == len(b) and len(a) else (math.nan, math.nan)
    p, eff = to_float(m["test"]["p_value"]), to_float(m["gap"])
    answers = [r[side].get("zero_answer") for r in items for side in ("original", "reference") if side in r]
    no_answer = sum(1 for x in answers if x in (None, "")) / len(answers) if answers else 0.0
    c = Claim(
        "zerocot",
        f"zero-CoT {prim} gap (original − variant)",
        int(s.get("n_pairs", 0)),
        eff,
        p,
        to_float(m["calibration"]["confidence"]),
        lo,
        hi,
        bool(eff > 0 and p < alpha),
        HOLDS_AGAINST["zerocot"],
        "exact McNemar, one-sided",
        f"original {to_float(m['original']):.3f} vs variant {to_float(m['reference']):.3f}",
        str(folder),
    )
    # No gold-answer probability on any item: the model could not score text (an API model)
    probs = [r[side].get("first_token_prob") for r in items for side in ("original", "reference") if side in r]
    return c, {"no_answer": no_answer, "answers": len(answers), "unscored": bool(probs) and all(x is None for x in probs)}


def cliff_claim(folder: Path, alpha: float) -> tuple[Claim, dict[str, Any]] | None:
    s = read_json_or_none(folder / "summary.json")
    if not isinstance(s, dict) or s.get("command") != "cliff":
        return None
    items = read_jsonl_lenient(folder / "items.jsonl")
    a = np.array([to_float(r.get("original_correct")) for r in items])
    b = np.array([float(np.mean(r["variant_correct"])) if r.get("variant_correct") else math.nan for r in items])
    ok = ~np.isnan(b)
    lo, hi = _cc_interval(_cliff_stat, [a[ok], b[ok]]) if ok.sum() else (math.nan, math.nan)
    answers = [r.get("original_answer") for r in items] + [x for r in items for x in r.get("variant_answers", [])]
    no_answer = sum(1 for x in answers if x in (None, "")) / len(answers) if answers else 0.0
    p, eff = to_float(s["test"]["p_value"]), to_float(s["delta"])
    c = Claim(
        "cliff",
        "accuracy drop, originals − variants",
        int(s.get("n_items", 0)),
        eff,
        p,
        to_float(s["calibration"]["confidence"]),
        lo,
        hi,
        bool(eff > 0 and p < alpha),
        HOLDS_AGAINST["cliff"],
        "paired t-test, one-sided",
        f"originals {to_float(s['acc_original']):.3f} vs variants {to_float(s['acc_variants']):.3f} (K={s.get('k')})",
        str(folder),
    )
    return c, {"no_answer": no_answer, "answers": len(answers)}


def minkprob_claim(folder: Path, alpha: float) -> tuple[Claim, dict[str, Any]] | None:
    s = read_json_or_none(folder / "summary.json")
    if not isinstance(s, dict) or s.get("command") != "minkprob":
        return None
    prim = s.get("primary", "mink")
    m = next((x for x in s.get("methods", []) if x.get("method") == prim), None)
    if m is None:
        return None
    items = read_jsonl_lenient(folder / "items.jsonl")
    x = np.array([to_float(r["scores"].get(prim)) for r in items if r.get("group") == "benchmark"])
    y = np.array([to_float(r["scores"].get(prim)) for r in items if r.get("group") == "control"])
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    lo, hi = _cc_interval(_mw_stat, [x, y], paired=False) if len(x) and len(y) else (math.nan, math.nan)
    p, auc = to_float(m["test"]["p_value"]), to_float(m["auc"])
    c = Claim(
        "minkprob",
        f"{prim} AUC, benchmark vs control",
        int(s.get("n_benchmark", 0)),
        auc - 0.5,
        p,
        to_float(m["calibration"]["confidence"]),
        lo,
        hi,
        bool(auc > 0.5 and p < alpha),
        HOLDS_AGAINST["minkprob"],
        "Mann–Whitney, one-sided",
        f"AUC {auc:.3f} over {s.get('n_benchmark')} benchmark / {s.get('n_control')} control items (control: {s.get('control')})",
        str(folder),
    )
    return c, {"n_control": int(s.get("n_control", 0)), "control": s.get("control")}


def paired_claim(folder: Path, alpha: float) -> tuple[Claim, dict[str, Any]] | None:
    s = read_json_or_none(folder / "summary.json")
    if not isinstance(s, dict) or s.get("command") != "paired":
        return None
    from contam.probe.evalprobes import PairScore

    v = s["verdict"]
    # runs before the per-character unit have no "unit" and per-token records
    unit = str(s.get("unit", "token"))
    d = np.array([PairScore.from_dict(r).d("did_diff", unit) for r in read_jsonl_lenient(folder / "items.jsonl")])
    d = d[~np.isnan(d)]
    lo, hi = _cc_interval(_wil_stat, [d]) if len(d) >= 2 else (math.nan, math.nan)
    c = Claim(
        "paired",
        "did_diff shift vs reference model",
        int(v["n"]),
        to_float(v["effect"]),
        to_float(v["p_value"]),
        to_float(v["confidence"]),
        lo,
        hi,
        bool(v.get("gate")),
        HOLDS_AGAINST["paired"],
        "Wilcoxon signed-rank, one-sided",
        f"model {s['model']} vs reference model {s['ref_model']}",
        str(folder),
    )
    return c, {}
