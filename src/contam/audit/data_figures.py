"""The data side's figures in an audit: per level, the score distribution of the dataset's
records, flagged vs not, with the threshold marked; and the flags per benchmark item.

A level's score is the one its threshold is applied to: the score of its flags (for the
semantic level's learned rule the probability, for the ``nn`` rule the cosine), read from
every record's ``scores`` (a conversation record's turns as ``turnN.<key>``: the record's score
is its best turn's). A flag counts only when it passed its threshold
(:func:`contam.scan.flags.passed`). Every figure that cannot be drawn gets a note saying why.

>>> recs = [{"scores": {"turn0.probability": 0.2, "turn1.probability": 0.9}, "flags": [
...     {"level": "semantic", "score": 0.9, "threshold": 0.5, "scores": {"probability": 0.9, "cosine": 0.7}}]}]
>>> score_key(recs, "semantic", {}), record_score(recs[0], "probability")
('probability', 0.9)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contam.scan.flags import passed

#: A level's score key when no flag says which score its threshold was applied to.
DEFAULT_KEY = {"token": "token_coverage", "semantic": "cosine", "reasoning": "reasoning"}
DEFAULT_THRESHOLD = {"token": 0.5, "reasoning": 0.6}
LEVELS = ("token", "semantic", "reasoning")


def score_key(records: Sequence[dict[str, Any]], level: str, thresholds: dict[str, Any]) -> str:
    """The ``scores`` key holding the score ``level``'s threshold is applied to."""
    for r in records:
        for f in r.get("flags") or []:
            if f.get("level") != level or not isinstance(f.get("score"), int | float):
                continue
            pref = [DEFAULT_KEY[level], "probability", *sorted(f.get("scores") or {})]
            key = next((k for k in pref if (f.get("scores") or {}).get(k) == f["score"]), None)
            if key is not None:
                return key
    if level == "semantic" and thresholds.get("semantic_rule") == "learned":
        return "probability"
    return DEFAULT_KEY[level]


def threshold_of(records: Sequence[dict[str, Any]], level: str, thresholds: dict[str, Any]) -> float | None:
    """The threshold ``level``'s flags carry; else the scan's own (``summary.json``)."""
    for r in records:
        for f in r.get("flags") or []:
            if f.get("level") == level and isinstance(f.get("threshold"), int | float):
                return float(f["threshold"])
    if level == "semantic" and thresholds.get("semantic_rule") == "learned":
        return 0.5
    v = thresholds.get(level, DEFAULT_THRESHOLD.get(level))
    return float(v) if isinstance(v, int | float) else None


def record_score(r: dict[str, Any], key: str) -> float | None:
    """A record's score under ``key``: its own, or its best turn's (``turnN.key``); ``None`` when
    the level did not score it (the cascade stopped before it)."""
    s = r.get("scores") or {}
    vals = [v for k, v in s.items() if (k == key or k.endswith("." + key)) and isinstance(v, int | float) and math.isfinite(v)]
    return float(max(vals)) if vals else None


def flagged_at(r: dict[str, Any], level: str) -> bool:
    return any(f.get("level") == level and passed(f) for f in r.get("flags") or [])


def data_figures(
    records: list[dict[str, Any]],
    summary: dict[str, Any],
    source: str,
    plt: Any,
    add: Callable[..., None],
    notes: list[str],
    size: tuple[float, float],
    label: Callable[[str, int], str],
) -> None:
    """Draw the data side's figures with ``add(fig, key, caption, source)`` (``size`` inches, item
    ids through ``label``, the figures' safe character set); why one is absent goes to ``notes``."""
    ran = [lv for lv in LEVELS if lv in (summary.get("levels") or ["token"])]
    thresholds = summary.get("thresholds") or {}
    if not records:
        notes.append(f"data side: no figure: {source} holds no scored record (the scan wrote no flags.jsonl rows)")
        return
    for lv in LEVELS:
        if lv not in ran:
            notes.append(f"data side, {lv} level: no score distribution: the level did not run (levels: {', '.join(ran)})")
            continue
        key = score_key(records, lv, thresholds)
        pairs = [(s, flagged_at(r, lv)) for r in records if (s := record_score(r, key)) is not None]
        if not pairs:
            notes.append(f"data side, {lv} level: no score distribution: no record was scored at this level (no {key!r} score)")
            continue
        clean = np.array([s for s, f in pairs if not f])
        flg = np.array([s for s, f in pairs if f])
        th = threshold_of(records, lv, thresholds)
        allv = np.array([s for s, _ in pairs])
        lo, hi = min(0.0, float(allv.min())), max(1.0, float(allv.max()), th or 0.0)
        bins = np.linspace(lo, hi, 41)
        fig, ax = plt.subplots(figsize=size)
        if clean.size:
            ax.hist(clean, bins=bins, color="#8c959f", label=f"not flagged ({clean.size})")
        if flg.size:
            ax.hist(flg, bins=bins, color="#cf222e", label=f"flagged at this level ({flg.size})")
        if th is not None:
            ax.axvline(th, color="#0969da", linestyle="--", label=f"threshold {th:.2f}")
        if len(allv) > 50:  # a few flagged records stay visible next to thousands of clean ones
            from matplotlib.ticker import FuncFormatter, NullFormatter

            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"{lv}-level score ({key})")
        ax.set_ylabel("records")
        ax.set_title(f"Data side, {lv} level: score distribution")
        ax.legend(frameon=False)
        shortlisted = sum(
            1 for r in records if lv == "semantic" and record_score(r, key) is None and record_score(r, "shortlist_probability") is not None
        )
        caption = f"{lv} level: {key} of every record of the dataset, flagged (red) vs not (grey), the threshold dashed"
        if shortlisted:  # judged by the cheap first stage only: no MiniLM probability to draw
            caption += f"; {shortlisted} record(s) the shortlist passed over (never embedded, not flagged) are not drawn"
        add(fig, f"scan-{lv}", caption, source)
    per_item: Counter[str] = Counter()
    for r in records:
        for item in {str(f.get("item_id")) for f in r.get("flags") or [] if passed(f)}:
            per_item[item] += 1
    if not per_item:
        notes.append("data side: no flags-per-item figure: no record was flagged")
        return
    top = per_item.most_common(20)
    fig, ax = plt.subplots(figsize=(size[0], max(size[1], 0.25 * len(top) + 1)))
    ys = np.arange(len(top))
    ax.barh(ys, [n for _, n in top], color="#cf222e")
    ax.set_yticks(ys, [label(i, 40) for i, _ in top])
    ax.invert_yaxis()
    ax.set_xlabel("flagged records")
    ax.set_title(f"Flags per benchmark item ({len(per_item)} items flagged" + (", top 20)" if len(per_item) > 20 else ")"))
    shown = f", the top {len(top)} shown" if len(per_item) > len(top) else ""
    add(
        fig,
        "scan-items",
        f"records flagged per benchmark item ({len(per_item)} items flagged{shown}): an item matched by many records is a repeated leak",
        source,
    )


def scan_source(run: Path, dataset: object, sharded: bool = False) -> str:
    flags = run / "data" / "scan" / ("shards/*/flags.jsonl" if sharded else "flags.jsonl")
    return f"{flags} (the dataset {dataset}{', every shard' if sharded else ''})"
