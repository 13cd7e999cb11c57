"""Performance-cliff detection (paper 001, Level 4): accuracy on the original items against the
mean accuracy over K semantically equivalent variants of each; a paired t-test decides whether
the drop exceeds natural variation, and the benchmark is flagged at p < 0.05.

    Δ_cliff = Acc(B_orig) − (1/K) Σ_k Acc(B_para^(k))                       (paper 001, Eq. 5)

:func:`performance_cliff` is the pure statistic (what the data-side cascade's L4 hook calls with
correctness it already has); :class:`CliffProbe` asks a model for the answers first.

>>> r = performance_cliff([1, 1, 1, 1, 1, 0, 1, 1, 1, 1], [[0, 1], [0, 0], [1, 0], [0, 0], [0, 1], [0, 0], [0, 0], [1, 0], [0, 0], [0, 1]])
>>> round(r.delta, 3), r.flagged
(0.65, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import ClassVar

import numpy as np

from contam.constraints import Constraints, Interval, validate
from contam.data import Item
from contam.errors import ConfigError
from contam.models.base import LanguageModel, Messages
from contam.outputs import JsonlCheckpoint
from contam.probe.answers import answers_equal, extract_answer
from contam.probe.itemloop import run_items
from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.results import TestResult
from contam.stats.tests import paired_permutation, paired_ttest

#: Sign flips enumerated for the exact small-sample floor (2^13 = 8192 <= 10,000: exact up to 13 items).
PERMUTATION_RESAMPLES = 10_000


@dataclass(frozen=True)
class CliffConfig:
    """Paper 001 App. A Table 3, L4: K = 5 variants, p-value threshold 0.05. Answers are greedy
    chain-of-thought answers in ``\\boxed{}`` (a standard evaluation, not a forced one)."""

    k: int = 5
    alpha: float = 0.05
    system_prompt: str = "Please reason step by step, and put your final answer within \\boxed{}."
    max_new_tokens: int = 512
    prior: float = 0.5
    confidence: float = 0.95
    batch_size: int = 8
    seed: int = 0
    #: Below this many items with variants there is no verdict (``flagged`` stays false and
    #: ``note`` says why): a t-test over a handful of 0/1 differences says nothing, whatever its p.
    min_items: int = 10
    #: p = max(t-test p, exact sign-flip permutation p) up to 13 items, max(t-test p, 2^-n) above:
    #: the t-test gives p = 0 on zero-variance differences (every item right on the original,
    #: wrong on every variant); no sign-flip test goes below 2^-n. Above 13 items the floor only
    #: acts on such degenerate differences, so the t-test of the paper is unchanged.
    small_sample_guard: bool = True

    _constraints: ClassVar[Constraints] = {
        "k": Interval(int, 1, None),
        "alpha": Interval(float, 0, 1, closed="neither"),
        "max_new_tokens": Interval(int, 1, None),
        "prior": Interval(float, 0, 1),
        "confidence": Interval(float, 0, 1, closed="neither"),
        "batch_size": Interval(int, 1, None),
        "seed": Interval(int, 0, None),
        "min_items": Interval(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class CliffItem(Record):
    """One original and its variants: answers and correctness."""

    key: str
    original_answer: str | None
    original_correct: int
    variant_ids: tuple[str, ...]
    variant_answers: tuple[str | None, ...]
    variant_correct: tuple[int, ...]


@dataclass(frozen=True)
class CliffResult(Record):
    """Benchmark-level performance cliff."""

    n_items: int
    k: int
    acc_original: float
    acc_variants: float  # mean over items of the per-item mean over its variants
    acc_per_variant: tuple[float, ...]  # Acc(B_para^(k)) for k = 1..K (items having a k-th variant)
    delta: float
    test: TestResult
    flagged: bool
    alpha: float
    calibration: Calibration
    model: str = ""
    timing: dict[str, float] = field(default_factory=dict)
    config: dict[str, object] = field(default_factory=dict)
    #: Why there is no verdict (too few items), else empty.
    note: str = ""


def performance_cliff(
    original_correct: Sequence[float],
    variant_correct: Sequence[Sequence[float]],
    *,
    alpha: float = 0.05,
    prior: float = 0.5,
    confidence: float = 0.95,
    min_items: int = 10,
    small_sample_guard: bool = True,
    seed: int = 0,
) -> CliffResult:
    """Paired t-test (one-sided, original > variants) of per-item original correctness against
    the item's mean variant correctness; items without variants are left out. Correctness may
    be 0/1 or any score in [0, 1].

    With ``small_sample_guard`` the p-value is at least the exact sign-flip permutation p of the
    same differences (the t-test's p is 0 on zero-variance differences); below ``min_items``
    items there is no verdict (``flagged`` false, ``note`` says so).

    >>> performance_cliff([1, 1], [[0] * 5, [0] * 5]).note
    'no verdict: 2 items with variants, at least 10 needed'
    """
    if len(original_correct) != len(variant_correct):
        raise ConfigError("one list of variant results per original item is needed")
    keep = [i for i, v in enumerate(variant_correct) if len(v) > 0]
    o = np.array([float(original_correct[i]) for i in keep])
    v = np.array([float(np.mean(variant_correct[i])) for i in keep])
    k = max((len(variant_correct[i]) for i in keep), default=0)
    per_variant = tuple(float(np.mean([variant_correct[i][j] for i in keep if len(variant_correct[i]) > j])) for j in range(k))
    test = paired_ttest(o, v, "greater", confidence)
    if small_sample_guard and keep:
        # Floor: the exact sign-flip permutation p where all 2^n flips can be enumerated
        # (n <= 13 at 10,000); above that, the smallest p any sign-flip test can give, 2^-(non-zero
        # differences), which only bites on zero-variance differences (where the t-test says 0).
        nz = int(np.count_nonzero(o - v))
        if 2 ** len(keep) <= PERMUTATION_RESAMPLES:
            floor, kind = paired_permutation(o, v, "greater", n_resamples=PERMUTATION_RESAMPLES, seed=seed).p_value, "exact sign-flip"
        else:
            floor, kind = 2.0 ** -max(nz, 1), "sign-flip minimum 2^-n"
        p = test.p_value if math.isnan(test.p_value) else max(test.p_value, floor)
        test = replace(test, p_value=p, details={**test.details, "p_ttest": test.p_value, "p_floor": floor, "floor": kind})
    delta = float(o.mean() - v.mean()) if keep else float("nan")
    note = f"no verdict: {len(keep)} items with variants, at least {min_items} needed" if len(keep) < min_items else ""
    return CliffResult(
        n_items=len(keep),
        k=k,
        acc_original=float(o.mean()) if keep else float("nan"),
        acc_variants=float(v.mean()) if keep else float("nan"),
        acc_per_variant=per_variant,
        delta=delta,
        test=test,
        flagged=not note and test.significant(alpha) and delta > 0,
        alpha=alpha,
        calibration=Calibration.from_p(test.p_value, delta, prior),
        note=note,
    )


def ask_messages(item: Item, system_prompt: str) -> Messages:
    """The standard CoT question (options listed for multiple choice)."""
    q = item.question
    if item.choices:
        q += "\n" + "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(item.choices)) + "\nAnswer with the letter of the correct option."
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": q}]


class CliffProbe:
    """Answers every original and up to K of its variants with the model, then :func:`performance_cliff`."""

    def __init__(self, config: CliffConfig | None = None) -> None:
        self.config = config or CliffConfig()
        self.model_seconds = 0.0

    def _answer(self, model: LanguageModel, items: Sequence[Item]) -> list[str | None]:
        t0 = time.perf_counter()
        try:
            outs = model.generate(
                [ask_messages(it, self.config.system_prompt) for it in items],
                max_new_tokens=self.config.max_new_tokens,
                temperature=0.0,
                seed=self.config.seed,
            )
        finally:
            self.model_seconds += time.perf_counter() - t0
        return [extract_answer(o[0].text) for o in outs]

    def measure(
        self, model: LanguageModel, items: Sequence[Item], variants: dict[str, list[Item]], checkpoint: JsonlCheckpoint | None = None
    ) -> list[CliffItem]:
        """Answers for each item that has variants (resumable through the shared loop,
        :func:`contam.probe.itemloop.run_items`; key = original id)."""
        groups = [(it, variants[it.id][: self.config.k]) for it in items if variants.get(it.id)]

        def batch(chunk: list[tuple[Item, list[Item]]]) -> list[CliffItem]:
            flat = [x for it, vs in chunk for x in (it, *vs)]
            answers = iter(self._answer(model, flat))
            out = []
            for it, vs in chunk:
                a0 = next(answers)
                va = [next(answers) for _ in vs]
                out.append(
                    CliffItem(
                        it.id,
                        a0,
                        int(answers_equal(a0, it.answer)),
                        tuple(v.id for v in vs),
                        tuple(va),
                        tuple(int(answers_equal(a, v.answer)) for a, v in zip(va, vs, strict=True)),
                    )
                )
            return out

        return run_items(
            groups,
            lambda g: batch([g])[0],
            CliffItem,
            key=lambda g: g[0].id,
            checkpoint=checkpoint,
            description="performance cliff",
            batch=batch,
            batch_size=max(2, self.config.batch_size),
        )

    def analyze(self, records: Sequence[CliffItem], model: str = "") -> CliffResult:
        cfg = self.config
        res = performance_cliff(
            [r.original_correct for r in records],
            [r.variant_correct for r in records],
            alpha=cfg.alpha,
            prior=cfg.prior,
            confidence=cfg.confidence,
            min_items=cfg.min_items,
            small_sample_guard=cfg.small_sample_guard,
            seed=cfg.seed,
        )
        return CliffResult(
            **{
                **{f: getattr(res, f) for f in res.__dataclass_fields__},
                "model": model,
                "config": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items()},
            }
        )

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        reference: dict[str, list[Item]] | None = None,
        checkpoint: JsonlCheckpoint | None = None,
        *,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> CliffResult:
        """Answer every item and up to K of its ``variants`` (``reference`` is the old name), then
        :func:`performance_cliff`. No ``control``: the cliff is paired per item."""
        if control is not None:
            raise ConfigError("the performance cliff compares each item with its own variants; pass variants, not a control set")
        variants = variants if variants is not None else reference
        if not variants:
            raise ConfigError("the performance cliff needs variants (K isomorphic or paraphrased variants per item)")
        self.model_seconds = 0.0
        t0 = time.perf_counter()
        recs = self.measure(model, items, variants, checkpoint)
        wall = time.perf_counter() - t0
        res = self.analyze(recs, getattr(model, "spec", ""))
        return CliffResult(
            **{**{f: getattr(res, f) for f in res.__dataclass_fields__}, "timing": {"wall_s": wall, "model_s": self.model_seconds}}
        )
