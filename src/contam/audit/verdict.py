"""From the files an audit wrote to one verdict per benchmark and side, in words.

Every probe's result becomes a :class:`Claim` (its test, p-value, Contamination Confidence with a
bootstrap interval, and the adversaries it holds against); the claims of one benchmark and side
make a :class:`SideVerdict`: *clean*, *suspect*, *contaminated* or *inconclusive* (with what it
lacks). A verdict is never stronger than its weakest input: too few items, a reference set with
rejected items, a model that gives no answer, skipped dataset lines -- each is a
:class:`Limitation` that lowers the verdict one step (contaminated -> suspect -> inconclusive,
clean -> inconclusive), and the report says which.

Adversaries (paper 003: say which adversary every claim holds against):

* ``verbatim`` -- the benchmark items themselves were trained on / are in the dataset;
* ``paraphrase`` -- reworded items with the same numbers and answer;
* ``per-class leak`` -- only some items or one class (an MMLU subject, only the answers) leaked.
  A set-level model test dilutes a few leaked items among clean ones, so a model-side *clean*
  does not hold against it; the data-side scan judges every item on its own, so it does.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contam.audit.claims import (
    ADVERSARIES,
    HOLDS_AGAINST,
    Claim,
    cliff_claim,
    dataset_flags,
    minkprob_claim,
    paired_claim,
    read_json_or_none,
    read_jsonl_lenient,
    to_float,
    zerocot_claim,
)
from contam.audit.skips import SkippedProbe, read_skip
from contam.records import Record

__all__ = [
    "ADVERSARIES",
    "HOLDS_AGAINST",
    "AuditVerdict",
    "Claim",
    "Limitation",
    "SideVerdict",
    "SkippedProbe",
    "build_verdict",
    "cliff_claim",
    "minkprob_claim",
    "paired_claim",
    "read_json_or_none",
    "read_jsonl_lenient",
    "zerocot_claim",
]

VERDICTS = ("clean", "suspect", "contaminated", "inconclusive")
#: Strength order for --fail-on and for combining (an inconclusive side fails a gate of its own
#: accord, see :meth:`AuditVerdict.gate`).
SEVERITY = {"inconclusive": 0, "clean": 0, "suspect": 1, "contaminated": 2}


@dataclass(frozen=True)
class Limitation(Record):
    """An input weakness that lowered (or would have lowered) a verdict, said in words."""

    what: str
    detail: str


@dataclass(frozen=True)
class SideVerdict(Record):
    """The verdict of one side (``data`` or ``model``) on one benchmark."""

    benchmark: str
    side: str
    verdict: str
    raw_verdict: str
    confidence: float
    ci_low: float
    ci_high: float
    confidence_kind: str
    agreed: tuple[str, ...]
    holds_against: tuple[str, ...]
    not_against: tuple[str, ...]
    claims: tuple[Claim, ...] = ()
    limitations: tuple[Limitation, ...] = ()
    lacks: tuple[str, ...] = ()
    summary: str = ""
    #: What the verdict rests on, in words: the data side's "21 of 1,319 items leaked, 1.6 %
    #: [1.0, 2.4]" (no Contamination Confidence: ``confidence`` stays null there), the model
    #: side's "Contamination Confidence (zerocot) 0.83 [0.70, 0.90]".
    measure: str = ""
    leaked_items: int | None = None
    benchmark_items: int | None = None
    leaked_share: float = math.nan
    leaked_ci_low: float = math.nan
    leaked_ci_high: float = math.nan
    #: Probes (or parts of one) the model could not run, with the reason: a model behind an API
    #: that cannot score text skips Min-K%. Said on the card; a verdict is not lowered for them.
    skipped: tuple[SkippedProbe, ...] = ()


def _num(x: float, fmt: str = ".2f") -> str:
    return "—" if math.isnan(x) else format(x, fmt)


def confidence_measure(kind: str, c: float, lo: float, hi: float) -> str:
    """``Contamination Confidence (zerocot) 0.83 [0.70, 0.90]``."""
    if math.isnan(c):
        return "—"
    ci = f" [{_num(lo)}, {_num(hi)}]" if not math.isnan(lo) else " [interval: too few items]"
    return f"{kind} {_num(c)}{ci}"


def leak_measure(k: int, n: int, lo: float, hi: float) -> str:
    """``21 of 1,319 items leaked, 1.6 % [1.0, 2.4]`` (the share with its Wilson interval)."""
    if not n:
        return f"{k:,} items leaked (benchmark size unknown)"
    ci = f" [{100 * lo:.1f}, {100 * hi:.1f}]" if not math.isnan(lo) else ""
    return f"{k:,} of {n:,} items leaked, {100 * k / n:.1f} %{ci}"


@dataclass(frozen=True)
class AuditVerdict(Record):
    """Everything ``verdict.json`` holds."""

    title: str
    fingerprint: str
    verdicts: tuple[SideVerdict, ...]
    worst: str
    config: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def fails(self, fail_on: str | None, allow_inconclusive: bool = False) -> bool:
        """Whether the ``--fail-on`` gate fails (see :meth:`gate`)."""
        return self.gate(fail_on, allow_inconclusive) is not None

    def gate(self, fail_on: str | None, allow_inconclusive: bool = False) -> str | None:
        """Why the ``--fail-on`` gate fails, or ``None`` when it passes (always without ``fail_on``).

        It fails when any verdict reaches ``fail_on`` (``contaminated`` or ``suspect``), and when
        a side is *inconclusive* (an empty dataset, too few items, a probe that did not finish):
        a gate must not pass what was never checked, unless ``allow_inconclusive``.
        """
        if fail_on is None:
            return None
        if SEVERITY[self.worst] >= SEVERITY[fail_on]:
            return f"overall verdict {self.worst}"
        if allow_inconclusive:
            return None
        unsure = [v for v in self.verdicts if v.verdict == "inconclusive"]
        if unsure or not self.verdicts:
            what = "; ".join(f"{v.benchmark} {v.side} side lacks {', '.join(v.lacks) or 'stronger inputs'}" for v in unsure)
            return f"inconclusive ({what or 'no verdict'}): nothing shows it is not {fail_on} (--allow-inconclusive lets it pass)"
        return None


def lower(v: str) -> str:
    """One step weaker: contaminated -> suspect -> inconclusive; clean -> inconclusive."""
    return {"contaminated": "suspect", "suspect": "inconclusive", "clean": "inconclusive"}.get(v, v)


def model_verdict(run: Path, benchmark: str, bslug: str, cfg: dict[str, Any]) -> SideVerdict:
    alpha, min_items = float(cfg.get("alpha", 0.05)), int(cfg.get("min_items", 20))
    bdir = run / bslug
    claims: list[Claim] = []
    info: dict[str, dict[str, Any]] = {}
    skipped: list[SkippedProbe] = []
    for name, fn in (("zerocot", zerocot_claim), ("cliff", cliff_claim), ("minkprob", minkprob_claim), ("paired", paired_claim)):
        got = fn(bdir / name, alpha)
        if got is not None:
            claims.append(got[0])
            info[name] = got[1]
        elif (skip := read_skip(bdir / name)) is not None:
            skipped.append(skip)
    if info.get("zerocot", {}).get("unscored"):
        skipped.append(
            SkippedProbe(
                "zerocot probability metrics",
                "the gold answer's first-token and all-token probabilities were not measured (the model cannot score given text); "
                "the Zero-CoT claim rests on accuracy and consistency",
            )
        )
    not_run = "".join(f"; {sk.line()}" for sk in skipped)
    lim: list[Limitation] = []
    lacks: list[str] = []
    if not claims:
        return SideVerdict(
            benchmark,
            "model",
            "inconclusive",
            "inconclusive",
            math.nan,
            math.nan,
            math.nan,
            "Contamination Confidence",
            (),
            (),
            ADVERSARIES,
            (),
            (),
            ("a model-side probe this model can run (zerocot or cliff: they only generate)",)
            if skipped
            else ("a finished model-side probe (run with --model)",),
            "no model-side probe finished" + not_run,
            skipped=tuple(skipped),
        )
    small = [c for c in claims if c.n < min_items]
    if small:
        lim.append(Limitation("too few items", ", ".join(f"{c.probe} ran on {c.n}" for c in small) + f" (at least {min_items} needed)"))
        lacks.append(f"more items (at least {min_items}; raise --limit)")
    ref_sum = read_json_or_none(bdir / "reference" / "summary.json") if (bdir / "reference").exists() else None
    if isinstance(ref_sum, dict) and ref_sum.get("items"):
        got, tot = int(ref_sum.get("items_with_variants", 0)), int(ref_sum["items"])
        rej = sum(ref_sum["rejections"].values()) if isinstance(ref_sum.get("rejections"), dict) else 0
        if tot and got / tot < 0.8:
            lim.append(
                Limitation(
                    "reference set with rejected items",
                    f"only {got} of {tot} items got an audited variant ({rej} rejection(s)); the paired probes compare the rest only",
                )
            )
    for name in ("zerocot", "cliff"):
        na = info.get(name, {}).get("no_answer", 0.0)
        if na > 0.2:
            lim.append(
                Limitation(
                    "model gives no answer", f"{name}: {na:.0%} of answers had no parseable final answer (refusal or ran out of tokens)"
                )
            )
    mk = info.get("minkprob")
    if mk is not None and (mk.get("control") in (None, "built") or not cfg.get("control")):
        # Not a lowering: the variant set is a fair control, but it says where the control came from.
        pass
    positives = [c for c in claims if c.evidence]
    raw = "contaminated" if len(positives) >= 2 else "suspect" if len(positives) == 1 else "clean"
    if not cfg.get("ref_model") and raw != "clean":
        lacks.append("a reference model (--ref-model) for the paired verdict")
    verdict = lower(raw) if lim else raw
    if verdict == "inconclusive" and not lacks:
        lacks.append("stronger inputs (see the limitations)")
    best = max(claims, key=lambda c: c.confidence if not math.isnan(c.confidence) else -1)
    against = sorted({a for c in (positives or claims) for a in c.holds_against}, key=ADVERSARIES.index)
    not_against = tuple(a for a in ADVERSARIES if a not in against)
    summ = (
        f"{len(positives)} of {len(claims)} probe(s) show evidence ({', '.join(c.probe for c in positives) or 'none'}); "
        f"strongest: {best.probe} with Contamination Confidence {best.confidence:.2f}" + not_run
    )
    return SideVerdict(
        benchmark,
        "model",
        verdict,
        raw,
        best.confidence,
        best.ci_low,
        best.ci_high,
        f"Contamination Confidence ({best.probe})",
        tuple(c.probe for c in positives),
        tuple(against),
        not_against,
        tuple(claims),
        tuple(lim),
        tuple(lacks if verdict == "inconclusive" else ()),
        summ,
        confidence_measure(f"Contamination Confidence ({best.probe})", best.confidence, best.ci_low, best.ci_high),
        skipped=tuple(skipped),
    )


# ---- data side ------------------------------------------------------------------------------------------
def data_verdict(
    run: Path, benchmark: str, bench_names: Sequence[str], cfg: dict[str, Any], records: list[dict[str, Any]] | None = None
) -> SideVerdict:
    """Flags of the dataset scan that name this benchmark, turned into a verdict."""
    from contam.stats.intervals import wilson_interval

    s = read_json_or_none(run / "data" / "scan" / "summary.json")
    if not isinstance(s, dict):
        return SideVerdict(
            benchmark,
            "data",
            "inconclusive",
            "inconclusive",
            math.nan,
            math.nan,
            math.nan,
            "",
            (),
            (),
            ADVERSARIES,
            (),
            (),
            ("a finished dataset scan (run with --dataset)",),
            "no dataset scan finished",
        )
    records = dataset_flags(run) if records is None else records
    names = set(bench_names)
    by_level: dict[str, set[str]] = defaultdict(set)
    items: dict[str, set[str]] = defaultdict(set)
    parts: Counter[str] = Counter()
    best: dict[str, float] = {}
    for r in records:
        if not r.get("contaminated"):
            continue
        for f in r.get("flags", []):
            if f.get("benchmark") and f["benchmark"] not in names:
                continue
            lv = f.get("level", "token")
            by_level[lv].add(f"{r.get('shard', '')}\x00{r['doc_id']}")  # one document per shard and id
            items[lv].add(f["item_id"])
            parts[f.get("part", "item")] += 1
            best[lv] = max(best.get(lv, 0.0), to_float(f.get("score")))
    n_items = _bench_items(benchmark, cfg, s)
    all_items = set().union(*items.values()) if items else set()
    claims = []
    for lv in ("token", "semantic", "reasoning"):
        if lv not in by_level and lv not in (s.get("levels") or ("token",)):
            continue
        k = len(items.get(lv, ()))
        claims.append(
            Claim(
                lv,
                f"{lv}-level flags",
                len(by_level.get(lv, ())),
                k / n_items if n_items else math.nan,
                math.nan,
                math.nan,
                evidence=bool(by_level.get(lv)),
                holds_against=HOLDS_AGAINST[lv],
                test="threshold per document",
                detail=f"{len(by_level.get(lv, ()))} document(s) flagged, {k} item(s) matched, best score {best.get(lv, 0.0):.3f}",
                source=str(run / "data" / "scan"),
            )
        )
    docs = int(s.get("documents", 0))
    lim: list[Limitation] = []
    skipped = int((s.get("bad_input") or {}).get("skipped", 0))
    if docs and skipped / (docs + skipped) > 0.05:
        lim.append(Limitation("dataset lines skipped", f"{skipped} bad line(s) of {docs + skipped} were not scanned"))
    n_tok = len(by_level.get("token", ()))
    n_para = len(by_level.get("semantic", set()) | by_level.get("reasoning", set()))
    if docs == 0:
        raw = "inconclusive"
    elif n_tok >= 1 or n_para >= 2:
        raw = "contaminated"
    elif n_para == 1:
        raw = "suspect"  # one paraphrase-level flag alone may be a near-duplicate topic, not a leak
    else:
        raw = "clean"
    verdict = lower(raw) if lim and raw != "inconclusive" else raw
    share = len(all_items) / n_items if n_items else math.nan
    ci = wilson_interval(len(all_items), n_items) if n_items else None
    lo, hi = (ci.low, ci.high) if ci else (math.nan, math.nan)
    positives = [c for c in claims if c.evidence]
    against = sorted({a for c in (positives or claims) for a in c.holds_against}, key=ADVERSARIES.index)
    cls = ", ".join(f"{k} {v}" for k, v in parts.most_common()) or "none"
    summ = (
        f"{docs} document(s) scanned; {n_tok} flagged verbatim (token level), {n_para} as paraphrase (semantic/reasoning); "
        f"{len(all_items)} of {n_items} benchmark item(s) found; matched parts: {cls}"
    )
    return SideVerdict(
        benchmark,
        "data",
        verdict,
        raw,
        math.nan,  # the data side has no Contamination Confidence: its measure is the leaked items
        math.nan,
        math.nan,
        "",
        tuple(c.probe for c in positives),
        tuple(against),
        tuple(a for a in ADVERSARIES if a not in against),
        tuple(claims),
        tuple(lim),
        ("documents in the dataset",) if docs == 0 else (),
        summ,
        leak_measure(len(all_items), n_items, lo, hi) if docs else "—",
        len(all_items),
        n_items,
        share,
        lo,
        hi,
    )


def _bench_items(benchmark: str, cfg: dict[str, Any], scan_summary: dict[str, Any]) -> int:
    from contam.data import load_benchmark

    try:
        return len(load_benchmark(benchmark))
    except Exception:  # the run folder may outlive a benchmark file; the scan's own count is the fallback
        return int(scan_summary.get("items", 0))


def build_verdict(run: Path, cfg: dict[str, Any], fingerprint: str = "", seconds: dict[str, float] | None = None) -> AuditVerdict:
    """Every side verdict of a run folder, from its files alone."""
    from contam.audit.runner import slug

    out: list[SideVerdict] = []
    records = dataset_flags(run) if cfg.get("dataset") else []
    for b in cfg["benchmarks"]:
        if cfg.get("dataset"):
            out.append(data_verdict(run, b, _bench_aliases(b), cfg, records))
        if cfg.get("model"):
            out.append(model_verdict(run, b, slug(b), cfg))
    worst = max((v.verdict for v in out), key=lambda v: SEVERITY[v], default="inconclusive")
    if SEVERITY[worst] == 0:  # no evidence anywhere: clean only if every side could say so
        worst = "clean" if out and all(v.verdict == "clean" for v in out) else "inconclusive"
    return AuditVerdict(str(cfg.get("title", "contam audit")), fingerprint, tuple(out), worst, cfg, dict(seconds or {}))


def _bench_aliases(b: str) -> list[str]:
    """Names a flag's ``benchmark`` field may carry for the spec ``b``."""
    from contam.data import load_benchmark

    names = {b, Path(b).stem}
    try:
        its = load_benchmark(b)
        names |= {str(it.benchmark) for it in its[:5] if getattr(it, "benchmark", None)}
    except Exception:
        pass
    return sorted(names)
