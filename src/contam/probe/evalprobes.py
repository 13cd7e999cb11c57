"""Detection quality of every model-side probe on a model contaminated on purpose.

Given a folder written by :mod:`contam.probe.contaminate` (weights + ``manifest.json`` naming
the seen items), run the probes on the *seen* items and on as many *unseen* items of the same
benchmark (the items that follow the trained subset), each with its audited isomorphic
reference variant (:mod:`contam.perturb`, seed 0, never the trained instance):

* the log-prob family (:mod:`contam.probe.logprob`: Min-K%, Min-K%++, perplexity, zlib,
  lowercase, and the reference-model ratio against the un-fine-tuned base model);
* the Zero-CoT Probe (:mod:`contam.probe.zerocot`, paper 004) with a short CoT budget;
* greedy prefix reconstruction (:mod:`contam.probe.reconstruct`), the cheap generation probe.

Two kinds of figures come out. **Item level**: for every probe score, the AUROC of seen vs
unseen items and the TPR at 5% FPR (how well the score ranks the trained items above the
others). **Benchmark level**: the verdict a user would get auditing each set on its own, i.e.
the set against its reference variants -- p, effect and Contamination Confidence (calibrated
posterior, gated to 0 when the effect has the wrong sign); seen should be flagged, unseen not.

The log-prob verdict that counts is paired and corrected by the base model (the manifest names
it): per item, d = [s_M(orig) - s_M(ref)] - [s_base(orig) - s_base(ref)] with s the mean
log-prob of the tokens where original and reference differ, tested d > 0 with a one-sided
Wilcoxon signed-rank test (``did_diff``). The base model's own preference for the original texts
(its pre-training, or simply more natural numbers) cancels, and so does the boost that training
on an original gives its reference's shared template. The unpaired per-score tests (set vs
references, Mann-Whitney) are kept for comparison. A verdict's ``gate`` is 1 only with evidence
(effect > 0 and p < ``alpha``); ``direction`` is the bare sign, a coin flip under the null.

>>> result = EvalProbes().run("models/gsm8k-c3")                  # doctest: +SKIP
>>> result.best("logprob").auroc >= 0.9                             # doctest: +SKIP
True
"""

from __future__ import annotations

import difflib
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from contam.constraints import Constraints, Each, Interval, Options, validate
from contam.data import Item, load_benchmark
from contam.errors import ConfigError
from contam.outputs import JsonlCheckpoint, ensure_dir, write_json
from contam.probe.contaminate import read_manifest
from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.tests import wilcoxon_signed_rank

PROBES = ("logprob", "zerocot", "reconstruct")


@dataclass(frozen=True)
class EvalProbesConfig:
    """``n_unseen`` unseen items (0: as many as seen), taken right after the trained subset;
    ``reference_seed`` of the isomorphic reference set (the contaminator trains on seed 1000);
    ``zerocot_cot_tokens`` caps the full-CoT pass of the Zero-CoT Probe (only its consistency
    metric uses it; 64 keeps CPU runs short); ``fpr`` for the TPR figure (5%). ``probes``: the
    default leaves out ``reconstruct``, whose per-item generation of ~100 tokens is the slowest
    probe on a CPU (add it explicitly)."""

    n_unseen: int = 0
    reference_seed: int = 0
    probes: tuple[str, ...] = ("logprob", "zerocot")
    base_reference: bool = True
    k: float = 0.2
    zerocot_cot_tokens: int = 64
    zerocot_answer_tokens: int = 12
    fpr: float = 0.05
    prior: float = 0.5
    alpha: float = 0.05
    cache: bool = True

    _constraints: ClassVar[Constraints] = {
        "n_unseen": Interval(int, 0, None),
        "reference_seed": Interval(int, 0, None),
        "probes": Each(Options(*PROBES)),
        "k": Interval(float, 0, 1, closed="right"),
        "zerocot_cot_tokens": Interval(int, 1, None),
        "zerocot_answer_tokens": Interval(int, 1, None),
        "fpr": Interval(float, 0, 1, closed="neither"),
        "prior": Interval(float, 0, 1),
        "alpha": Interval(float, 0, 1, closed="neither"),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class Separation(Record):
    """Item level: how well one score tells seen from unseen items (higher = more likely seen)."""

    probe: str
    method: str
    auroc: float
    tpr_at_fpr: float
    seen_mean: float
    unseen_mean: float
    n_seen: int
    n_unseen: int


@dataclass(frozen=True)
class Verdict(Record):
    """Benchmark level: one set (``seen``/``unseen``) against its reference variants.

    ``direction`` is the sign gate of the Contamination Confidence (1 when the effect points
    toward contamination). Under the null it is a coin flip, so it cannot be what "flagged"
    means: ``gate`` is the *evidence* gate, 1 only when the effect is positive **and** the
    one-sided test rejects at ``alpha`` (0.05; the same as CC >= 0.71 with prior 0.5)."""

    set: str
    probe: str
    method: str
    n: int
    effect: float
    p_value: float
    confidence: float
    gate: int
    direction: int = 0
    test: str = ""


def make_verdict(
    set_name: str, probe: str, method: str, n: int, effect: float, p_value: float, confidence: float, alpha: float = 0.05, test: str = ""
) -> Verdict:
    """A :class:`Verdict` with both gates filled in from ``effect`` and ``p_value``."""
    positive = not math.isnan(effect) and effect > 0
    flagged = positive and not math.isnan(p_value) and p_value < alpha
    return Verdict(set_name, probe, method, n, effect, p_value, confidence, int(flagged), int(positive), test)


@dataclass(frozen=True)
class EvalProbesResult(Record):
    model: str
    benchmark: str
    mode: str
    epochs: int
    n_seen: int
    n_unseen: int
    separations: tuple[Separation, ...]
    verdicts: tuple[Verdict, ...]
    config: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)

    def best(self, probe: str) -> Separation | None:
        """The score of ``probe`` with the highest AUROC (ties: higher TPR, then the higher
        Contamination Confidence on the seen set, then the lower one on the unseen set)."""
        rows = [s for s in self.separations if s.probe == probe and not math.isnan(s.auroc)]

        def key(s: Separation) -> tuple[float, float, float, float]:
            seen, unseen = self.verdict("seen", s.probe, s.method), self.verdict("unseen", s.probe, s.method)
            return (round(s.auroc, 6), round(s.tpr_at_fpr, 6), seen.confidence if seen else -1.0, -(unseen.confidence if unseen else 1.0))

        return max(rows, key=key) if rows else None

    def verdict(self, set_name: str, probe: str, method: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.set == set_name and v.probe == probe and v.method == method), None)


def roc_figures(seen: Sequence[float], unseen: Sequence[float], fpr: float = 0.05) -> tuple[float, float]:
    """``(AUROC, TPR at FPR <= fpr)`` of scores where seen items are the positives (NaNs dropped)."""
    from sklearn.metrics import roc_auc_score, roc_curve

    pos = [x for x in seen if x is not None and not math.isnan(x)]
    neg = [x for x in unseen if x is not None and not math.isnan(x)]
    if not pos or not neg:
        return float("nan"), float("nan")
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    s = np.r_[pos, neg].astype(float)
    f, t, _ = roc_curve(y, s)
    return float(roc_auc_score(y, s)), float(t[f <= fpr + 1e-12].max())


def unseen_items(items: Sequence[Item], seen_ids: set[str], subset: tuple[int, int], n: int) -> list[Item]:
    """``n`` items outside the trained set: those after the subset, then those before it."""
    start, stop = subset
    order = list(items[stop:]) + list(items[:start])
    out = [it for it in order if it.id not in seen_ids][:n]
    if len(out) < n:
        raise ConfigError(f"only {len(out)} unseen items available, {n} requested")
    return out


def _sep(probe: str, method: str, seen: Sequence[float], unseen: Sequence[float], fpr: float) -> Separation:
    auc, tpr = roc_figures(seen, unseen, fpr)
    clean = lambda xs: [x for x in xs if x is not None and not math.isnan(x)]  # noqa: E731
    return Separation(
        probe,
        method,
        auc,
        tpr,
        float(np.mean(clean(seen))) if clean(seen) else float("nan"),
        float(np.mean(clean(unseen))) if clean(unseen) else float("nan"),
        len(clean(seen)),
        len(clean(unseen)),
    )


#: Paired per-item differences, all oriented so that > 0 points to contamination:
#: ``pair_diff`` = s_M(orig) - s_M(ref) on the tokens where the two texts differ (no base model);
#: ``did`` = [s_M(orig) - s_M(ref)] - [s_base(orig) - s_base(ref)] with s = mean log-prob of the
#: whole text; ``did_diff`` = the same on the differing tokens only (numbers, names and the
#: answer: the shared template tokens carry no signal about the item, only noise and the
#: template boost that training on the original gives the reference too). ``did_diff`` is the
#: benchmark-level verdict when a base model is known.
PAIRED_METHODS = ("pair_diff", "did", "did_diff")


def paired_difference(
    method: str, orig: float, other: float, orig_all: float, other_all: float,
    base_orig: float, base_other: float, base_orig_all: float, base_other_all: float,
) -> float:  # fmt: skip
    """One item's paired difference, in whatever unit its log-probs are (per token or per
    character): ``pair_diff`` the model's original minus its variant on the differing words,
    ``did`` the whole texts' difference minus the base/reference model's, ``did_diff`` the
    differing words' difference minus the base/reference model's. > 0 points to contamination.

    >>> paired_difference("did_diff", -1.0, -2.0, -5.0, -5.5, -1.5, -2.0, -6.0, -6.0)
    0.5
    """
    if method == "pair_diff":
        return orig - other
    if method == "did":
        return (orig_all - other_all) - (base_orig_all - base_other_all)
    if method == "did_diff":
        return (orig - other) - (base_orig - base_other)
    raise ConfigError(f"unknown paired method {method!r}; choose from {', '.join(PAIRED_METHODS)}")


VERDICT_METHOD = "did_diff"


def diff_masks(a: Sequence[Any], b: Sequence[Any]) -> tuple[list[bool], list[bool]]:
    """Which tokens of ``a`` and of ``b`` lie outside their longest common alignment
    (``difflib`` opcodes other than ``equal``): the tokens where two texts differ."""
    ma, mb = [False] * len(a), [False] * len(b)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, list(a), list(b), autojunk=False).get_opcodes():
        if tag != "equal":
            ma[i1:i2] = [True] * (i2 - i1)
            mb[j1:j2] = [True] * (j2 - j1)
    return ma, mb


def _masked_mean(logprobs: Sequence[float], mask: Sequence[bool]) -> float:
    vals = [lp for lp, m in zip(logprobs, mask, strict=True) if m]
    return float(np.mean(vals)) if vals else float("nan")


@dataclass(frozen=True)
class PairScore(Record):
    """One original and its reference variant under the model and the base model: mean token
    log-prob of the whole text (``*_all``) and of the tokens where the two texts differ; the same
    per character (``*_c``: comparable when the base model has another tokenizer)."""

    id: str
    reference_id: str
    n_diff_orig: int
    n_diff_ref: int
    model_orig: float
    model_ref: float
    model_orig_all: float
    model_ref_all: float
    base_orig: float = math.nan
    base_ref: float = math.nan
    base_orig_all: float = math.nan
    base_ref_all: float = math.nan
    model_orig_c: float = math.nan
    model_ref_c: float = math.nan
    model_orig_all_c: float = math.nan
    model_ref_all_c: float = math.nan
    base_orig_c: float = math.nan
    base_ref_c: float = math.nan
    base_orig_all_c: float = math.nan
    base_ref_all_c: float = math.nan

    def d(self, method: str, unit: str = "token") -> float:
        """The per-item difference; ``unit="char"`` per character (any two tokenizers), else per token."""
        if unit == "char":
            return paired_difference(method, self.model_orig_c, self.model_ref_c, self.model_orig_all_c, self.model_ref_all_c,
                                     self.base_orig_c, self.base_ref_c, self.base_orig_all_c, self.base_ref_all_c)  # fmt: skip
        return paired_difference(method, self.model_orig, self.model_ref, self.model_orig_all, self.model_ref_all,
                                 self.base_orig, self.base_ref, self.base_orig_all, self.base_ref_all)  # fmt: skip


def refs_by_id(refs: Sequence[Item], original_id: str) -> list[Item]:
    """The reference variants of one original (first one only: one pair per item)."""
    return [r for r in refs if r.metadata.get("original_id") == original_id][:1]


@dataclass(frozen=True)
class PairLogProbs:
    """One (original, variant) pair scored under one model: how many tokens of each text differ
    from the other, the mean log-prob of those tokens, and of the whole texts."""

    n_diff_orig: int
    n_diff_var: int
    orig: float
    var: float
    orig_all: float
    var_all: float
    # The same in a unit every tokenizer shares: nats per character of the differing words
    # (:func:`char_diff_spans`) and of the whole text (see :func:`per_char`).
    orig_c: float = math.nan
    var_c: float = math.nan
    orig_all_c: float = math.nan
    var_all_c: float = math.nan


def pair_logprobs(model: Any, pairs: Sequence[tuple[Item, Item]], text: Callable[[Item], str] = lambda it: it.text) -> list[PairLogProbs]:
    """Every pair's :class:`PairLogProbs` under ``model``, in one ``score`` call (the scoring that
    ``eval-probes``' paired verdict and ``contam probe paired`` share)."""
    texts = [text(x) for o, v in pairs for x in (o, v)]
    scores = model.score([("", t) for t in texts])
    out = []
    for k in range(len(pairs)):
        so, sv = scores[2 * k], scores[2 * k + 1]
        to, tv = texts[2 * k], texts[2 * k + 1]
        mo, mv = diff_masks(so.token_ids or so.tokens, sv.token_ids or sv.tokens)
        co, cv = char_diff_spans(to, tv)
        out.append(
            PairLogProbs(
                sum(mo),
                sum(mv),
                _masked_mean(so.logprobs, mo),
                _masked_mean(sv.logprobs, mv),
                so.mean,
                sv.mean,
                per_char(so, to, co),
                per_char(sv, tv, cv),
                per_char(so, to, [(0, len(to))]),
                per_char(sv, tv, [(0, len(tv))]),
            )
        )
    return out


# A word with the whitespace before it: most vocabularies glue a space to the word after it
# (" 1234"), some keep it apart (" ", "1234"); with the space inside the span, both spell it.
_WORD = re.compile(r"\s*(?:\w+|[^\w\s])")


def char_diff_spans(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character spans of the words of ``a`` and of ``b`` outside their longest common alignment
    (words: runs of letters/digits, or one punctuation mark, each with the whitespace before it). Unlike :func:`diff_masks` this needs
    no tokenizer, so two models with different vocabularies are compared on the same characters.

    >>> char_diff_spans("Tom has 12 apples.", "Ann has 7 apples.")
    ([(0, 3), (7, 10)], [(0, 3), (7, 9)])
    """
    wa = [(m.start(), m.end()) for m in _WORD.finditer(a)]
    wb = [(m.start(), m.end()) for m in _WORD.finditer(b)]
    sa, sb = [], []
    ops = difflib.SequenceMatcher(None, [a[i:j] for i, j in wa], [b[i:j] for i, j in wb], autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag != "equal":
            sa += wa[i1:i2]
            sb += wb[j1:j2]
    return sa, sb


def per_char(scores: Any, text: str, spans: Sequence[tuple[int, int]]) -> float:
    """Log-prob per character of ``spans`` of ``text``: the summed log-prob of every token that
    overlaps a span, divided by the spans' characters. A sum of token log-probs is the log-prob
    of the characters those tokens spell, whatever the tokenizer, so the value is in the same unit
    for any two models (a per-token mean is not: one tokenizer's "1234" is one token, another's
    four). NaN without spans or without the backend's character offsets."""
    n_chars = sum(j - i for i, j in spans)
    offsets = list(scores.offsets)
    if n_chars == 0 or not scores.logprobs or len(offsets) != len(scores.logprobs):
        return float("nan")
    ends = [*offsets[1:], len(text)]
    total = 0.0
    for lp, start, end in zip(scores.logprobs, offsets, ends, strict=True):
        # a token with no characters of its own (end <= start) counts where it stands
        end = max(end, start + 1)
        if any(start < j and i < end for i, j in spans):
            total += lp
    return total / n_chars


def pair_scores(model: Any, base: Any, pairs: Sequence[tuple[Item, Item]]) -> list[PairScore]:
    """Token-level scores of every (original, reference) pair under ``model`` (and ``base``)."""
    if not pairs:
        return []
    main = pair_logprobs(model, pairs)
    ref = pair_logprobs(base, pairs) if base is not None else None
    out = []
    for k, (o, r) in enumerate(pairs):
        m = main[k]
        extra: dict[str, float] = {}
        if ref is not None:
            b = ref[k]
            extra = {"base_orig": b.orig, "base_ref": b.var, "base_orig_all": b.orig_all, "base_ref_all": b.var_all}
            extra |= {"base_orig_c": b.orig_c, "base_ref_c": b.var_c, "base_orig_all_c": b.orig_all_c, "base_ref_all_c": b.var_all_c}
        chars = {"model_orig_c": m.orig_c, "model_ref_c": m.var_c, "model_orig_all_c": m.orig_all_c, "model_ref_all_c": m.var_all_c}
        out.append(PairScore(o.id, r.id, m.n_diff_orig, m.n_diff_var, m.orig, m.var, m.orig_all, m.var_all, **extra, **chars))
    return out


def paired_verdict(set_name: str, method: str, d: Sequence[float], prior: float = 0.5, alpha: float = 0.05) -> Verdict:
    """One-sided Wilcoxon signed-rank test of the per-item differences ``d`` > 0 (NaNs dropped),
    calibrated into the Contamination Confidence with its Hodges-Lehmann shift as the effect."""
    x = np.asarray([v for v in d if not math.isnan(v)], dtype=float)
    t = wilcoxon_signed_rank(x, np.zeros_like(x), "greater")
    c = Calibration.from_p(t.p_value, t.effect, prior)
    return make_verdict(
        set_name, "logprob", method, t.n, float(t.effect), float(t.p_value), c.confidence, alpha, "Wilcoxon signed-rank, paired per item"
    )


class EvalProbes:
    """Runs every model-side probe on seen vs unseen items of a contaminated model."""

    def __init__(self, config: EvalProbesConfig | None = None) -> None:
        self.config = config or EvalProbesConfig()
        #: Per-pair token-level scores of the last run, by set (``pairs.json`` in ``out``).
        self.pair_scores: dict[str, list[PairScore]] = {}

    def run(self, model_dir: str | Path, out: str | Path | None = None) -> EvalProbesResult:
        """Evaluate ``model_dir``; with ``out``, per-item JSONL per probe (resumable) and ``summary.json``."""
        from contam.models import load
        from contam.perturb import make_reference_set
        from contam.probe.reference import variants_as_reference

        cfg = self.config
        t0 = time.perf_counter()
        manifest = read_manifest(model_dir)
        items = load_benchmark(manifest.benchmark)
        by_id = {it.id: it for it in items}
        seen = [by_id[i] for i in manifest.seen_ids if i in by_id]
        unseen = unseen_items(items, set(manifest.seen_ids), manifest.subset, cfg.n_unseen or len(seen))
        reference = variants_as_reference(make_reference_set(seen + unseen, variants=1, seed=cfg.reference_seed))
        sets = {"seen": seen, "unseen": unseen}
        refs = {name: [reference[it.id][0] for it in its if it.id in reference] for name, its in sets.items()}
        model = load(f"hf:{Path(model_dir).resolve()}", cache=cfg.cache)
        outdir = ensure_dir(out) if out is not None else None
        ckpt = (lambda name: JsonlCheckpoint(outdir / f"{name}.jsonl")) if outdir is not None else (lambda name: None)

        seps: list[Separation] = []
        verdicts: list[Verdict] = []
        timing: dict[str, float] = {}
        base = (
            load(manifest.base_model if manifest.base_model.startswith("hf:") else f"hf:{manifest.base_model}", cache=cfg.cache)
            if cfg.base_reference and {"logprob", "zerocot"} & set(cfg.probes)
            else None
        )
        if "logprob" in cfg.probes:
            t = time.perf_counter()
            s, v = self._logprob(model, base, sets, refs, ckpt("logprob"))
            seps += s
            verdicts += v
            timing["logprob_s"] = time.perf_counter() - t
        if "zerocot" in cfg.probes:
            t = time.perf_counter()
            s, v = self._zerocot(model, sets, reference, ckpt("zerocot"), base)
            seps += s
            verdicts += v
            timing["zerocot_s"] = time.perf_counter() - t
        if "reconstruct" in cfg.probes:
            t = time.perf_counter()
            s, v = self._reconstruct(model, sets, refs, ckpt("reconstruct"))
            seps += s
            verdicts += v
            timing["reconstruct_s"] = time.perf_counter() - t
        timing["wall_s"] = time.perf_counter() - t0
        result = EvalProbesResult(
            model=str(model_dir),
            benchmark=manifest.benchmark,
            mode=manifest.mode,
            epochs=manifest.epochs,
            n_seen=len(seen),
            n_unseen=len(unseen),
            separations=tuple(seps),
            verdicts=tuple(verdicts),
            config=asdict(cfg),
            timing=timing,
        )
        if outdir is not None:
            write_json(outdir / "summary.json", result.to_dict())
            write_json(outdir / "pairs.json", {k: [p.to_dict() for p in v] for k, v in self.pair_scores.items()})
        return result

    # ------------------------------------------------------------------ probes
    def _logprob(
        self, model: Any, base: Any, sets: dict[str, list[Item]], refs: dict[str, list[Item]], ckpt: Any
    ) -> tuple[list[Separation], list[Verdict]]:
        from contam.probe.logprob import ItemLogProb, LogProbConfig, LogProbProbe

        probe = LogProbProbe(LogProbConfig(k=self.config.k, prior=self.config.prior))
        groups: dict[str, Sequence[Item]] = {**sets, **{f"{k}_ref": v for k, v in refs.items()}}
        records = probe.measure(model, groups, ref_model=base, checkpoint=ckpt)
        by = {g: [r for r in records if r.group == g] for g in groups}
        methods = [m for m in probe.methods(base is not None) if any(m in r.scores for r in records)]
        seps = [
            _sep(
                "logprob",
                m,
                [r.scores.get(m, math.nan) for r in by["seen"]],
                [r.scores.get(m, math.nan) for r in by["unseen"]],
                self.config.fpr,
            )
            for m in methods
        ]
        verdicts = []
        for name in sets:
            relabeled = [ItemLogProb(r.key, r.id, "benchmark", r.n_tokens, r.scores) for r in by[name]] + [
                ItemLogProb(r.key, r.id, "control", r.n_tokens, r.scores) for r in by[f"{name}_ref"]
            ]
            res = probe.analyze(relabeled)
            for mt in res.methods:
                c = mt.calibration
                verdicts.append(
                    make_verdict(
                        name,
                        "logprob",
                        mt.method,
                        res.n_benchmark,
                        float(mt.auc - 0.5),
                        c.p_value,
                        c.confidence,
                        self.config.alpha,
                        "Mann-Whitney, set vs references",
                    )
                )
        # The paired verdicts (difference-in-differences against the base model): model calls
        # above are cached, so the token-level scores below cost no second forward pass.
        pairs = {name: [(it, r) for it in its for r in refs_by_id(refs[name], it.id)] for name, its in sets.items()}
        pscores = {name: pair_scores(model, base, ps) for name, ps in pairs.items()}
        for method in PAIRED_METHODS:
            if method != "pair_diff" and base is None:
                continue
            d = {name: [ps.d(method) for ps in pscores[name]] for name in sets}
            seps.append(_sep("logprob", method, d["seen"], d["unseen"], self.config.fpr))
            for name in sets:
                verdicts.append(paired_verdict(name, method, d[name], self.config.prior, self.config.alpha))
        self.pair_scores = pscores
        return seps, verdicts

    def _zerocot(
        self, model: Any, sets: dict[str, list[Item]], reference: dict[str, list[Item]], ckpt: Any, base: Any = None
    ) -> tuple[list[Separation], list[Verdict]]:
        from contam.probe.reference import pair_items
        from contam.probe.zerocot import CONTINUOUS, METRICS, ZeroCoTConfig, ZeroCoTProbe

        cfg = self.config
        probe = ZeroCoTProbe(
            ZeroCoTConfig(
                max_cot_tokens=cfg.zerocot_cot_tokens, max_answer_tokens=cfg.zerocot_answer_tokens, truncation=(), prior=cfg.prior
            )
        )
        pairs = {name: pair_items(its, reference) for name, its in sets.items()}
        measured = probe.measure(model, pairs["seen"] + pairs["unseen"], ckpt)
        got = {p.key: p for p in measured}
        per = {name: [got[o.id] for o, _ in ps if o.id in got] for name, ps in pairs.items()}
        seps: list[Separation] = []
        for metric in METRICS:
            val = lambda m, metric=metric: float(getattr(m, metric)) if getattr(m, metric) is not None else math.nan  # noqa: E731
            seps.append(_sep("zerocot", metric, [val(p.original) for p in per["seen"]], [val(p.original) for p in per["unseen"]], cfg.fpr))
            if metric in CONTINUOUS:  # the paired original - reference gap, per item
                seps.append(
                    _sep(
                        "zerocot",
                        f"{metric}_gap",
                        [val(p.original) - val(p.reference) for p in per["seen"]],
                        [val(p.original) - val(p.reference) for p in per["unseen"]],
                        cfg.fpr,
                    )
                )
        verdicts = []
        for name, ps in per.items():
            res = probe.analyze(ps)
            for g in res.metrics:
                c = g.calibration
                verdicts.append(
                    make_verdict(name, "zerocot", g.metric, g.n, float(g.gap), c.p_value, c.confidence, cfg.alpha, g.test.method)
                )
        if base is not None:
            # The gold answer's log-prob gap has a null bias of its own (a reference's answer is
            # often a longer, rarer number), so correct it by the base model's gap on the same
            # forced prompt, as for the log-prob verdict: one teacher-forced call per text.
            mode = probe.mode_for(model)
            d: dict[str, list[float]] = {}
            for name, ps in pairs.items():
                texts = [(probe.scoring_prompt(base, it.question, mode), it.answer.strip()) for pair in ps for it in pair]
                scored = base.score(texts) if texts else []
                d[name] = []
                for k, (o, _) in enumerate(ps):
                    m = got.get(o.id)
                    bo, br = scored[2 * k], scored[2 * k + 1]
                    if m is None or not m.original.all_token_prob or not m.reference.all_token_prob or not bo.logprobs or not br.logprobs:
                        continue
                    d[name].append((math.log(m.original.all_token_prob) - math.log(m.reference.all_token_prob)) - (bo.mean - br.mean))
            seps.append(_sep("zerocot", "all_token_prob_did", d["seen"], d["unseen"], cfg.fpr))
            for name in sets:
                v = paired_verdict(name, "all_token_prob_did", d[name], cfg.prior, cfg.alpha)
                verdicts.append(replace(v, probe="zerocot"))
        return seps, verdicts

    def _reconstruct(
        self, model: Any, sets: dict[str, list[Item]], refs: dict[str, list[Item]], ckpt: Any
    ) -> tuple[list[Separation], list[Verdict]]:
        from contam.probe.reconstruct import Reconstruct, ReconstructConfig

        probe = Reconstruct(ReconstructConfig(n_samples=1))  # greedy: one generation per item keeps it cheap
        results = {name: probe.run(model, its, reference=refs[name], checkpoint=ckpt) for name, its in sets.items()}
        score = {name: [r.max_rouge_l for r in res.items if r.group == "original" and not r.skipped] for name, res in results.items()}
        seps = [_sep("reconstruct", "max_rouge_l", score["seen"], score["unseen"], self.config.fpr)]
        verdicts = []
        for name, res in results.items():
            if res.rouge_test:
                p, auc = float(res.rouge_test.p_value), float(res.rouge_test.effect)
                c = Calibration.from_p(p, auc - 0.5, self.config.prior)
                verdicts.append(
                    make_verdict(
                        name,
                        "reconstruct",
                        "max_rouge_l",
                        res.n.get("original", 0),
                        auc - 0.5,
                        p,
                        c.confidence,
                        self.config.alpha,
                        "Mann-Whitney, set vs references",
                    )
                )
        return seps, verdicts


def verdict_method(res: EvalProbesResult) -> str | None:
    """The log-prob score behind the benchmark-level verdict: the paired difference-in-differences
    against the base model on the differing tokens (``did_diff``) when it was measured, else the
    paired model-only difference (``pair_diff``)."""
    for m in (VERDICT_METHOD, "pair_diff"):
        if res.verdict("seen", "logprob", m) is not None:
            return m
    return None


def sweep_row(res: EvalProbesResult) -> dict[str, Any]:
    """One line of the exposure x form table: the best item-level score of each probe, and the
    benchmark-level log-prob verdict (:func:`verdict_method`) on the seen and the unseen set."""
    row: dict[str, Any] = {
        "model": Path(res.model).name,
        "mode": res.mode,
        "epochs": res.epochs,
        "n_seen": res.n_seen,
        "n_unseen": res.n_unseen,
    }
    best = res.best("logprob")
    if best is not None:
        row.update({"best_logprob": best.method, "auroc": best.auroc, "tpr@5%fpr": best.tpr_at_fpr})
    vm = verdict_method(res)
    if vm is not None:
        row["verdict"] = vm
        for name in ("seen", "unseen"):
            v = res.verdict(name, "logprob", vm)
            if v is not None:
                row[f"{name}_p"], row[f"{name}_cc"], row[f"{name}_dir"], row[f"{name}_gate"] = v.p_value, v.confidence, v.direction, v.gate
    for probe in ("zerocot", "reconstruct"):
        b = res.best(probe)
        if b is not None:
            row[f"{probe}_best"], row[f"{probe}_auroc"] = b.method, b.auroc
    for metric in ("accuracy", "all_token_prob", "all_token_prob_did"):
        for name in ("seen", "unseen"):
            v = res.verdict(name, "zerocot", metric)
            if v is not None:
                row[f"zerocot_{metric}_{name}_cc"], row[f"zerocot_{metric}_{name}_gate"] = v.confidence, v.gate
    return row
