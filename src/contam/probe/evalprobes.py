"""Detection quality of every model-side probe on a model contaminated on purpose.

Given a folder written by :mod:`contam.probe.contaminate` (weights + ``manifest.json`` naming
the seen items), run the probes on the *seen* items and on as many *unseen* items of the same
benchmark (the items that follow the trained subset), each with its audited isomorphic
variant (:mod:`contam.perturb`, seed 0, never the trained instance):

* the log-prob family (:mod:`contam.probe.logprob`: Min-K%, Min-K%++, perplexity, zlib,
  lowercase, and the reference-model ratio against the un-fine-tuned base model);
* the Zero-CoT Probe (:mod:`contam.probe.zerocot`, paper 004) with a short CoT budget;
* greedy prefix reconstruction (:mod:`contam.probe.reconstruct`), the cheap generation probe.

Two kinds of figures come out. **Item level**: for every probe score, the AUROC of seen vs
unseen items and the TPR at 5% FPR (how well the score ranks the trained items above the
others). **Benchmark level**: the verdict a user would get auditing each set on its own, i.e.
the set against its variants -- p, effect and Contamination Confidence (calibrated
posterior, gated to 0 when the effect has the wrong sign); seen should be flagged, unseen not.

The log-prob verdict that counts is paired and corrected by the base model (the manifest names
it): per item, d = [s_M(orig) - s_M(var)] - [s_base(orig) - s_base(var)] with s the mean
log-prob of the tokens where original and variant differ, tested d > 0 with a one-sided
Wilcoxon signed-rank test (``did_diff``). The base model's own preference for the original texts
(its pre-training, or simply more natural numbers) cancels, and so does the boost that training
on an original gives its variant's shared template. The unpaired per-score tests (set vs
variants, Mann-Whitney) are kept for comparison. A verdict's ``gate`` is 1 only with evidence
(effect > 0 and p < ``alpha``); ``direction`` is the bare sign, a coin flip under the null.

>>> result = EvalProbes().run("models/gsm8k-c3")                  # doctest: +SKIP
>>> result.best("logprob").auroc >= 0.9                             # doctest: +SKIP
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from contam.constraints import Constraints, Each, Interval, Options, validate
from contam.data import Item, load_benchmark
from contam.errors import ConfigError
from contam.outputs import JsonlCheckpoint, ensure_dir, write_json
from contam.probe.contaminate import read_manifest

# Re-exported: these moved to evalresults / evalpairs and are still imported from here.
from contam.probe.evalpairs import PAIRED_METHODS as PAIRED_METHODS
from contam.probe.evalpairs import VERDICT_METHOD as VERDICT_METHOD
from contam.probe.evalpairs import PairLogProbs as PairLogProbs
from contam.probe.evalpairs import PairScore as PairScore
from contam.probe.evalpairs import char_diff_spans as char_diff_spans
from contam.probe.evalpairs import diff_masks as diff_masks
from contam.probe.evalpairs import pair_logprobs as pair_logprobs
from contam.probe.evalpairs import pair_scores as pair_scores
from contam.probe.evalpairs import paired_difference as paired_difference
from contam.probe.evalpairs import paired_verdict as paired_verdict
from contam.probe.evalpairs import per_char as per_char
from contam.probe.evalpairs import refs_by_id as refs_by_id
from contam.probe.evalresults import EvalProbesResult as EvalProbesResult
from contam.probe.evalresults import Separation as Separation
from contam.probe.evalresults import SetVerdict as SetVerdict
from contam.probe.evalresults import _sep
from contam.probe.evalresults import make_verdict as make_verdict
from contam.probe.evalresults import roc_figures as roc_figures
from contam.stats.calibration import Calibration

#: The old name of :class:`SetVerdict` (issue 33: ``Verdict`` also named a judge's answer).
Verdict = SetVerdict

PROBES = ("logprob", "zerocot", "reconstruct")


@dataclass(frozen=True)
class EvalProbesConfig:
    """``n_unseen`` unseen items (0: as many as seen), taken right after the trained subset;
    ``reference_seed`` of the isomorphic variant set (the field keeps its old name, which configs
    written to disk use; the contaminator trains on seed 1000);
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


def unseen_items(items: Sequence[Item], seen_ids: set[str], subset: tuple[int, int], n: int) -> list[Item]:
    """``n`` items outside the trained set: those after the subset, then those before it."""
    start, stop = subset
    order = list(items[stop:]) + list(items[:start])
    out = [it for it in order if it.id not in seen_ids][:n]
    if len(out) < n:
        raise ConfigError(f"only {len(out)} unseen items available, {n} requested")
    return out


def eval_sets(model_dir: str | Path, n_unseen: int = 0, seed: int = 0) -> tuple[list[Item], list[Item], dict[str, list[Item]]]:
    """The seen items of the contaminated model in ``model_dir`` (its manifest), ``n_unseen`` unseen
    ones (0: as many as seen) and one audited isomorphic variant of each (seed ``seed``), by id."""
    from contam.perturb import make_variant_set
    from contam.probe.variantset import variants_by_item

    manifest = read_manifest(model_dir)
    items = load_benchmark(manifest.benchmark)
    by_id = {it.id: it for it in items}
    seen = [by_id[i] for i in manifest.seen_ids if i in by_id]
    unseen = unseen_items(items, set(manifest.seen_ids), manifest.subset, n_unseen or len(seen))
    return seen, unseen, variants_by_item(make_variant_set(seen + unseen, variants=1, seed=seed))


class EvalProbes:
    """Runs every model-side probe on seen vs unseen items of a contaminated model."""

    def __init__(self, config: EvalProbesConfig | None = None) -> None:
        self.config = config or EvalProbesConfig()
        #: Per-pair token-level scores of the last run, by set (``pairs.json`` in ``out``).
        self.pair_scores: dict[str, list[PairScore]] = {}

    def run(self, model_dir: str | Path, out: str | Path | None = None) -> EvalProbesResult:
        """Evaluate ``model_dir``; with ``out``, per-item JSONL per probe (resumable) and ``summary.json``."""
        from contam.models import load

        cfg = self.config
        t0 = time.perf_counter()
        manifest = read_manifest(model_dir)
        seen, unseen, variants = eval_sets(model_dir, cfg.n_unseen, cfg.reference_seed)
        sets = {"seen": seen, "unseen": unseen}
        refs = {name: [variants[it.id][0] for it in its if it.id in variants] for name, its in sets.items()}
        model = load(f"hf:{Path(model_dir).resolve()}", cache=cfg.cache)
        outdir = ensure_dir(out) if out is not None else None
        ckpt = (lambda name: JsonlCheckpoint(outdir / f"{name}.jsonl")) if outdir is not None else (lambda name: None)

        seps: list[Separation] = []
        verdicts: list[SetVerdict] = []
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
            s, v = self._zerocot(model, sets, variants, ckpt("zerocot"), base)
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
    ) -> tuple[list[Separation], list[SetVerdict]]:
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
        self, model: Any, sets: dict[str, list[Item]], variants: dict[str, list[Item]], ckpt: Any, base: Any = None
    ) -> tuple[list[Separation], list[SetVerdict]]:
        from contam.probe.variantset import pair_items
        from contam.probe.zerocot import CONTINUOUS, METRICS, ZeroCoTConfig, ZeroCoTProbe

        cfg = self.config
        probe = ZeroCoTProbe(
            ZeroCoTConfig(
                max_cot_tokens=cfg.zerocot_cot_tokens, max_answer_tokens=cfg.zerocot_answer_tokens, truncation=(), prior=cfg.prior
            )
        )
        pairs = {name: pair_items(its, variants) for name, its in sets.items()}
        measured = probe.measure(model, pairs["seen"] + pairs["unseen"], ckpt)
        got = {p.key: p for p in measured}
        per = {name: [got[o.id] for o, _ in ps if o.id in got] for name, ps in pairs.items()}
        seps: list[Separation] = []
        for metric in METRICS:
            val = lambda m, metric=metric: float(getattr(m, metric)) if getattr(m, metric) is not None else math.nan  # noqa: E731
            seps.append(_sep("zerocot", metric, [val(p.original) for p in per["seen"]], [val(p.original) for p in per["unseen"]], cfg.fpr))
            if metric in CONTINUOUS:  # the paired original - variant gap, per item
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
            # The gold answer's log-prob gap has a null bias of its own (a variant's answer is
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
    ) -> tuple[list[Separation], list[SetVerdict]]:
        from contam.probe.reconstruct import Reconstruct, ReconstructConfig

        probe = Reconstruct(ReconstructConfig(n_samples=1))  # greedy: one generation per item keeps it cheap
        results = {name: probe.run(model, its, control=refs[name], checkpoint=ckpt) for name, its in sets.items()}
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
