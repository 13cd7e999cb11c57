"""The Zero-CoT Probe (paper 004, §3.3–3.6): force a model to answer with no chain of thought,
on the benchmark and on an isomorphic variant set (the paper's reference set), and turn the gap
into a Contamination Confidence.

Per item, on the original and on its variant: the full-CoT answer; the zero-CoT
answer, forced by an assistant prefill ``The final answer is: \\[ \\boxed{`` where the backend can
prefill, else by a strict instruction; and four metrics -- zero-CoT accuracy, consistency with
the full-CoT answer, and the first-token and all-token (geometric mean) probability of the gold
answer under teacher forcing after the forced prompt. The benchmark-level test is one-sided
(original > reference): exact McNemar for the discrete metrics, a paired bootstrap for the
continuous ones; p is calibrated into a posterior (Sellke–Bayarri–Berger bound, prior 0.5) and
gated to 0 when the gap has the wrong sign. The truncation curve (paper Figure 2) repeats the
forced answer after keeping 25/50/75% of the model's own CoT.

>>> probe = ZeroCoTProbe(ZeroCoTConfig(max_cot_tokens=256))            # doctest: +SKIP
>>> result = probe.run(load("smollm2"), pair_items(items, variants))    # doctest: +SKIP
>>> result.contamination_confidence                                     # doctest: +SKIP
0.0
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from contam.constraints import Constraints, Each, Options, validate
from contam.constraints import Interval as Range
from contam.data import Item
from contam.errors import ConfigError
from contam.models.base import LanguageModel, Messages, boxed_completions
from contam.outputs import JsonlCheckpoint
from contam.probe.answers import answers_equal, extract_answer, extract_boxed
from contam.probe.itemloop import batch_size_for, run_items
from contam.probe.zerocot_records import CONTINUOUS as CONTINUOUS
from contam.probe.zerocot_records import DISCRETE as DISCRETE
from contam.probe.zerocot_records import METRICS as METRICS
from contam.probe.zerocot_records import CurvePoint, ItemMeasure, MetricGap, ZeroCoTPair
from contam.probe.zerocot_records import table_row as table_row
from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.results import TestResult
from contam.stats.tests import mcnemar_exact, paired_bootstrap, paired_permutation


@dataclass(frozen=True)
class ZeroCoTConfig:
    """Knobs of the Zero-CoT Probe with the paper's defaults (paper 004 §3.3 prompts, §3.4
    metrics, §3.6 calibration; the authors' code for the system prompt, greedy decoding, a
    32-token forced answer and 10,000 bootstrap resamples).

    ``mode``: ``prefill`` (open weights), ``instruction`` (API models) or ``auto`` (prefill
    when ``model.supports_prefill``). ``truncation``: fractions of the model's own CoT kept for
    the truncation curve; 0 is the probe itself, 1 the full-CoT answer (empty: no curve).
    """

    system_prompt: str = "Please reason step by step, and put your final answer within \\boxed{}."
    force_prefill: str = "The final answer is: \\[ \\boxed{"
    force_instruction: str = (
        "Please ONLY put your final answer within \\boxed{} directly without any other content "
        "before or after it (e.g., reasoning or explanation)."
    )
    mode: str = "auto"
    max_cot_tokens: int = 512
    max_answer_tokens: int = 32
    truncation: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    prior: float = 0.5
    n_resamples: int = 10_000
    confidence: float = 0.95
    seed: int = 0
    primary_metric: str = "accuracy"
    batch_size: int = 8
    #: The paired bootstrap's p is far too small for a handful of pairs (2 pairs can give
    #: p = 1/(B+1)); with the guard the continuous metrics use max(bootstrap p, exact sign-flip
    #: permutation p). The two agree at the paper's sample sizes.
    small_sample_guard: bool = True
    #: Drop pairs whose continuous metric is exactly 0.0 on both sides before the bootstrap, as
    #: the authors' code does (on their 20-pair example with six such pairs, p 0.0083 instead of 0.0139).
    drop_both_zero: bool = True

    _constraints: ClassVar[Constraints] = {
        "mode": Options("auto", "prefill", "instruction"),
        "max_cot_tokens": Range(int, 1, None),
        "max_answer_tokens": Range(int, 1, None),
        "truncation": Each(Range(float, 0, 1)),
        "prior": Range(float, 0, 1),
        "n_resamples": Range(int, 1, None),
        "confidence": Range(float, 0, 1, closed="neither"),
        "seed": Range(int, 0, None),
        "primary_metric": Options(*METRICS),
        "batch_size": Range(int, 1, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class ZeroCoTResult(Record):
    """Benchmark-level verdict of the Zero-CoT Probe."""

    model: str
    mode: str
    n_pairs: int
    metrics: tuple[MetricGap, ...]
    primary_metric: str
    contamination_confidence: float
    full_cot: TestResult | None  # difficulty parity check: full-CoT accuracy should not differ
    curve: tuple[CurvePoint, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)

    def metric(self, name: str) -> MetricGap | None:
        return next((m for m in self.metrics if m.metric == name), None)


class ZeroCoTProbe:
    """Runs the probe: :meth:`measure` (model calls, resumable), :meth:`analyze` (statistics),
    :meth:`run` (both)."""

    def __init__(self, config: ZeroCoTConfig | None = None) -> None:
        self.config = config or ZeroCoTConfig()
        #: Seconds spent inside model calls during the last :meth:`measure` (the benchmark reads it).
        self.model_seconds = 0.0

    # ------------------------------------------------------------------ prompts
    def mode_for(self, model: LanguageModel) -> str:
        if self.config.mode != "auto":
            if self.config.mode == "prefill" and not model.supports_prefill:
                raise ConfigError(f"model {model.spec} cannot prefill an assistant reply; use --mode instruction")
            return self.config.mode
        return "prefill" if model.supports_prefill else "instruction"

    def cot_messages(self, question: str) -> Messages:
        return [{"role": "system", "content": self.config.system_prompt}, {"role": "user", "content": question}]

    def forced_prompt(self, model: LanguageModel, question: str, cot: str, kept: float, mode: str) -> tuple[str | Messages, str]:
        """The forced zero-CoT prompt after keeping ``kept`` of ``cot`` (by characters, as the
        authors truncate), and the text that opens the answer box (for extraction and scoring)."""
        part = cot[: int(len(cot) * kept)].rstrip() if kept > 0 else ""
        if mode == "prefill":
            prefix = (part + "\n\n" if part else "") + self.config.force_prefill
            return model.format_chat(self.cot_messages(question), prefill=prefix), prefix
        return self.instructed_messages(question, part), ""

    def instructed_messages(self, question: str, part: str) -> Messages:
        """The instruction-mode forced prompt: the question, the kept part of the CoT, the instruction."""
        text = question if not part else f"{question}\n\nPartial answer (reasoned this far):\n{part}"
        return [{"role": "user", "content": f"{text}\n\n{self.config.force_instruction}"}]

    def scoring_prompt(self, model: LanguageModel, question: str, mode: str) -> str:
        """Teacher-forcing context for the gold answer at 0% CoT: the exact prompt the forced
        answer was generated from, up to and including the opening ``\\boxed{``."""
        if mode == "prefill":
            return model.format_chat(self.cot_messages(question), prefill=self.config.force_prefill)
        return model.format_chat(self.instructed_messages(question, ""), prefill="\\boxed{")

    # ------------------------------------------------------------------ measure
    def _timed(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.model_seconds += time.perf_counter() - t0

    def measure_items(self, model: LanguageModel, items: Sequence[Item], mode: str) -> list[ItemMeasure]:
        """Every model call for a batch of items: full CoT, teacher-forced gold probabilities,
        forced answers at each kept fraction.

        On a backend that takes one prompt at a time (``llamacpp``) the calls go item by item in
        prompt-prefix order -- the CoT prompt, the forced prompt at 0% with the gold answer
        scored, then the forced prompts at 0% and longer kept fractions -- so its KV cache holds
        each question's prompt once and each next cut decodes only past the previous one. A
        backend that batches (``preferred_batch`` > 1: API concurrency, vLLM) gets each stage for
        all items in one call. Either way every answer is a function of its own prompt. In prefill
        mode a forced answer ends where the box the prefill opened closes
        (:func:`contam.models.base.boxed_completions`)."""
        ratios = sorted({0.0, *(r for r in self.config.truncation if r < 1.0)})
        groups = [list(items)] if batch_size_for(model) > 1 else [[it] for it in items]
        return [m for group in groups for m in self._measure_group(model, group, mode, ratios)]

    def _measure_group(self, model: LanguageModel, its: list[Item], mode: str, ratios: list[float]) -> list[ItemMeasure]:
        cfg = self.config
        outs = self._timed(
            model.generate,
            [self.cot_messages(it.question) for it in its],
            max_new_tokens=cfg.max_cot_tokens,
            temperature=0.0,
            seed=cfg.seed,
        )
        cots = [o[0].text for o in outs]
        probs: list[tuple[float | None, float | None, int]] = [(None, None, 0)] * len(its)
        scored = [j for j, it in enumerate(its) if model.supports_scoring and it.answer.strip()]
        if scored:
            pairs = [(self.scoring_prompt(model, its[j].question, mode), its[j].answer.strip()) for j in scored]
            for j, s in zip(scored, self._timed(model.score, pairs), strict=True):
                if s.logprobs:
                    probs[j] = (math.exp(s.logprobs[0]), math.exp(float(np.mean(s.logprobs))), len(s.logprobs))
        forced = [self.forced_prompt(model, it.question, cot, r, mode) for it, cot in zip(its, cots, strict=True) for r in ratios]
        kw = {"max_new_tokens": cfg.max_answer_tokens, "seed": cfg.seed, "stop": ["\\]"]}
        if mode == "prefill":
            texts = [c.text for c in self._timed(boxed_completions, model, [p for p, _ in forced], **kw)]
        else:
            texts = [o[0].text for o in self._timed(model.generate, [p for p, _ in forced], temperature=0.0, **kw)]
        answers = [(t, extract_boxed(prefix + t) if prefix else extract_answer(t)) for (_, prefix), t in zip(forced, texts, strict=True)]
        k = len(ratios)
        return [
            self._record(it, cot, probs[j], dict(zip(ratios, answers[j * k : (j + 1) * k], strict=True)))
            for j, (it, cot) in enumerate(zip(its, cots, strict=True))
        ]

    def _record(
        self, it: Item, cot: str, probs: tuple[float | None, float | None, int], answers: dict[float, tuple[str, str | None]]
    ) -> ItemMeasure:
        full = extract_answer(cot)
        raw0, zero = answers[0.0]
        return ItemMeasure(
            id=it.id,
            gold=it.answer,
            cot=cot,
            full_answer=full,
            full_correct=int(answers_equal(full, it.answer)),
            zero_raw=raw0,
            zero_answer=zero,
            accuracy=int(answers_equal(zero, it.answer)),
            consistency=int(full is not None and answers_equal(zero, full)),
            first_token_prob=probs[0],
            all_token_prob=probs[1],
            n_answer_tokens=probs[2],
            curve={f"{r:g}": int(answers_equal(answers[r][1], it.answer)) for r in answers if r > 0},
        )

    def measure(
        self, model: LanguageModel, pairs: Sequence[tuple[Item, Item]], checkpoint: JsonlCheckpoint | None = None
    ) -> list[ZeroCoTPair]:
        """Measure every (original, variant) pair not already in ``checkpoint`` (keyed by
        ``key`` = the original's id), streaming one JSONL line per finished pair (the shared
        resumable loop, :func:`contam.probe.itemloop.run_items`)."""
        mode = self.mode_for(model)
        self.model_seconds = 0.0

        def batch(chunk: list[tuple[Item, Item]]) -> list[ZeroCoTPair]:
            measured = self.measure_items(model, [x for pair in chunk for x in pair], mode)
            return [ZeroCoTPair(orig.id, measured[2 * j], measured[2 * j + 1]) for j, (orig, _) in enumerate(chunk)]

        return run_items(
            list(pairs),
            lambda p: batch([p])[0],
            ZeroCoTPair,
            key=lambda p: p[0].id,
            checkpoint=checkpoint,
            description="zero-CoT probe",
            batch=batch,
            batch_size=max(2, self.config.batch_size),
        )

    # ------------------------------------------------------------------ analyze
    def analyze(self, pairs: Sequence[ZeroCoTPair], model: str = "", mode: str = "") -> ZeroCoTResult:
        """The statistics of paper 004 §3.6 on measured pairs (no model calls)."""
        cfg = self.config
        gaps = []
        for metric in METRICS:
            o = [getattr(p.original, metric) for p in pairs]
            r = [getattr(p.reference, metric) for p in pairs]
            keep = [k for k in range(len(pairs)) if o[k] is not None and r[k] is not None]
            # The authors' code drops the pairs whose probability is 0.0 on both sides (their
            # missing values become 0.0): such a pair says nothing about the gap, and keeping it
            # only shrinks the mean difference towards 0. Followed here for the continuous
            # metrics; the exact tests (McNemar, sign-flip) do not change, only the bootstrap p.
            both_zero = 0
            if metric in CONTINUOUS and cfg.drop_both_zero:
                both_zero = sum(1 for k in keep if o[k] == 0.0 and r[k] == 0.0)
                keep = [k for k in keep if not (o[k] == 0.0 and r[k] == 0.0)]
            if not keep:
                continue
            a = np.array([o[k] for k in keep], dtype=float)
            b = np.array([r[k] for k in keep], dtype=float)
            if metric in DISCRETE:
                test = mcnemar_exact(a, b, "greater", cfg.confidence)
            else:
                test = paired_bootstrap(a, b, "greater", n_resamples=cfg.n_resamples, confidence=cfg.confidence, seed=cfg.seed)
                if cfg.small_sample_guard:
                    perm = paired_permutation(a, b, "greater", n_resamples=cfg.n_resamples, seed=cfg.seed)
                    test = replace(
                        test,
                        p_value=max(test.p_value, perm.p_value),
                        details={**test.details, "p_bootstrap": test.p_value, "p_permutation": perm.p_value},
                    )
                test = replace(test, details={**test.details, "n_both_zero_dropped": both_zero})
            gaps.append(
                MetricGap(
                    metric,
                    float(a.mean()),
                    float(b.mean()),
                    test.effect,
                    test.ci,
                    test,
                    Calibration.from_p(test.p_value, test.effect, cfg.prior),
                    len(keep),
                )
            )
        primary = next((g for g in gaps if g.metric == cfg.primary_metric), None)
        full = None
        if pairs:
            full = mcnemar_exact(
                [p.original.full_correct for p in pairs], [p.reference.full_correct for p in pairs], "two-sided", cfg.confidence
            )
        return ZeroCoTResult(
            model=model,
            mode=mode,
            n_pairs=len(pairs),
            metrics=tuple(gaps),
            primary_metric=cfg.primary_metric,
            contamination_confidence=primary.calibration.confidence if primary else 0.0,
            full_cot=full,
            curve=tuple(self._curve(pairs)),
            config={k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.config).items()},
        )

    def _curve(self, pairs: Sequence[ZeroCoTPair]) -> list[CurvePoint]:
        if not pairs or not self.config.truncation:
            return []
        points = []
        for r in sorted(set(self.config.truncation)):

            def acc(m: ItemMeasure, r: float = r) -> int:
                if r == 0.0:
                    return m.accuracy
                if r == 1.0:
                    return m.full_correct
                return m.curve.get(f"{r:g}", 0)

            o = float(np.mean([acc(p.original) for p in pairs]))
            f = float(np.mean([acc(p.reference) for p in pairs]))
            points.append(CurvePoint(r, o, f, o - f))
        return points

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item] | Sequence[tuple[Item, Item]],
        checkpoint: JsonlCheckpoint | None = None,
        *,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> ZeroCoTResult:
        """:meth:`measure` then :meth:`analyze`; ``timing`` says how much was model time.

        The probe contract: ``items`` with ``variants`` (each item's isomorphic variants, as
        :func:`contam.probe.variantset.load_variants` returns them; the first is used). Ready-made
        ``(original, variant)`` pairs are accepted as ``items`` too. No ``control``: the test is paired."""
        if control is not None:
            raise ConfigError("the Zero-CoT Probe compares each item with its isomorphic variant; pass variants, not a control set")
        pairs = _as_pairs(items, variants)
        t0 = time.perf_counter()
        measured = self.measure(model, pairs, checkpoint)
        wall = time.perf_counter() - t0
        res = self.analyze(measured, model=getattr(model, "spec", ""), mode=self.mode_for(model))
        timing = {"wall_s": wall, "model_s": self.model_seconds, "model_share": self.model_seconds / wall if wall > 0 else 0.0}
        return ZeroCoTResult(**{**{f: getattr(res, f) for f in res.__dataclass_fields__}, "timing": timing})


def _as_pairs(items: Sequence[Any], variants: dict[str, list[Item]] | None) -> list[tuple[Item, Item]]:
    """``(original, variant)`` pairs from items and their variants, or the pairs themselves."""
    from contam.probe.variantset import pair_items

    if variants is not None:
        return pair_items(list(items), variants)
    if all(isinstance(p, tuple) and len(p) == 2 for p in items):
        return list(items)
    raise ConfigError("the Zero-CoT Probe needs variants (an isomorphic reference set from `contam perturb`)")
