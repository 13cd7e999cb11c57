"""Performance-cliff detection (paper 001, Level 4): accuracy on the original items against the
mean accuracy over K semantically equivalent variants of each; a paired t-test decides whether
the drop exceeds natural variation, and the benchmark is flagged at p < 0.05.

    Δ_cliff = Acc(B_orig) − (1/K) Σ_k Acc(B_para^(k))                       (paper 001, Eq. 5)

:func:`performance_cliff` is the pure statistic (what the data-side cascade's L4 hook calls with
correctness it already has); :class:`CliffProbe` asks a model for the answers first.

>>> r = performance_cliff([1, 1, 1, 1, 1, 0, 1, 1], [[0, 1], [0, 0], [1, 0], [0, 0], [0, 1], [0, 0], [0, 0], [1, 0]])
>>> round(r.delta, 3), r.flagged
(0.625, True)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from contam.data import Item
from contam.errors import ConfigError
from contam.models.base import LanguageModel, Messages
from contam.outputs import JsonlCheckpoint
from contam.probe.answers import answers_equal, extract_answer
from contam.progress import make_progress
from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.results import TestResult
from contam.stats.tests import paired_ttest


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

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigError("the cliff needs K >= 1 variants per item")
        if not 0.0 < self.alpha < 1.0:
            raise ConfigError(f"alpha must be in (0, 1), got {self.alpha}")


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


def performance_cliff(
    original_correct: Sequence[float],
    variant_correct: Sequence[Sequence[float]],
    *,
    alpha: float = 0.05,
    prior: float = 0.5,
    confidence: float = 0.95,
) -> CliffResult:
    """Paired t-test (one-sided, original > variants) of per-item original correctness against
    the item's mean variant correctness; items without variants are left out. Correctness may
    be 0/1 or any score in [0, 1]."""
    if len(original_correct) != len(variant_correct):
        raise ValueError("one list of variant results per original item is needed")
    keep = [i for i, v in enumerate(variant_correct) if len(v) > 0]
    o = np.array([float(original_correct[i]) for i in keep])
    v = np.array([float(np.mean(variant_correct[i])) for i in keep])
    k = max((len(variant_correct[i]) for i in keep), default=0)
    per_variant = tuple(
        float(np.mean([variant_correct[i][j] for i in keep if len(variant_correct[i]) > j])) for j in range(k)
    )
    test = paired_ttest(o, v, "greater", confidence)
    delta = float(o.mean() - v.mean()) if keep else float("nan")
    return CliffResult(
        n_items=len(keep), k=k,
        acc_original=float(o.mean()) if keep else float("nan"),
        acc_variants=float(v.mean()) if keep else float("nan"),
        acc_per_variant=per_variant, delta=delta, test=test,
        flagged=test.significant(alpha) and delta > 0, alpha=alpha,
        calibration=Calibration.from_p(test.p_value, delta, prior),
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
            outs = model.generate([ask_messages(it, self.config.system_prompt) for it in items],
                                  max_new_tokens=self.config.max_new_tokens, temperature=0.0, seed=self.config.seed)
        finally:
            self.model_seconds += time.perf_counter() - t0
        return [extract_answer(o[0].text) for o in outs]

    def measure(self, model: LanguageModel, items: Sequence[Item], reference: dict[str, list[Item]],
                checkpoint: JsonlCheckpoint | None = None) -> list[CliffItem]:
        """Answers for each item that has variants (resumable; key = original id)."""
        done: dict[str, CliffItem] = {}
        if checkpoint is not None:
            done = {str(r["key"]): CliffItem.from_dict(r) for r in checkpoint.records if isinstance(r, dict) and "key" in r}
        groups = [(it, reference[it.id][: self.config.k]) for it in items if reference.get(it.id)]
        todo = [g for g in groups if g[0].id not in done]
        with make_progress() as prog:
            task = prog.add_task("performance cliff", total=len(groups), completed=len(groups) - len(todo))
            for s in range(0, len(todo), self.config.batch_size):
                chunk = todo[s : s + self.config.batch_size]
                flat = [x for it, vs in chunk for x in (it, *vs)]
                answers = iter(self._answer(model, flat))
                for it, vs in chunk:
                    a0 = next(answers)
                    va = [next(answers) for _ in vs]
                    rec = CliffItem(it.id, a0, int(answers_equal(a0, it.answer)), tuple(v.id for v in vs), tuple(va),
                                    tuple(int(answers_equal(a, v.answer)) for a, v in zip(va, vs, strict=True)))
                    done[it.id] = rec
                    if checkpoint is not None:
                        checkpoint.write(rec)
                prog.advance(task, len(chunk))
        return [done[it.id] for it, _ in groups if it.id in done]

    def analyze(self, records: Sequence[CliffItem], model: str = "") -> CliffResult:
        cfg = self.config
        res = performance_cliff([r.original_correct for r in records], [r.variant_correct for r in records],
                                alpha=cfg.alpha, prior=cfg.prior, confidence=cfg.confidence)
        return CliffResult(**{**{f: getattr(res, f) for f in res.__dataclass_fields__}, "model": model, "config": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items()}})

    def run(self, model: LanguageModel, items: Sequence[Item], reference: dict[str, list[Item]],
            checkpoint: JsonlCheckpoint | None = None) -> CliffResult:
        self.model_seconds = 0.0
        t0 = time.perf_counter()
        recs = self.measure(model, items, reference, checkpoint)
        wall = time.perf_counter() - t0
        res = self.analyze(recs, getattr(model, "spec", ""))
        return CliffResult(**{**{f: getattr(res, f) for f in res.__dataclass_fields__},
                              "timing": {"wall_s": wall, "model_s": self.model_seconds}})
