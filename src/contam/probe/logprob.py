"""The log-probability family of membership scores, and a benchmark-level test against a
control set (paper 001 Level 1: Min-K% Prob with K = 20%).

Per item, from teacher-forced token log-probs of the item text (every score oriented so that
*higher means more likely seen in training*):

- ``ppl``: −log perplexity (mean token log-prob);
- ``zlib``: −log perplexity / zlib-compressed length in bytes (Carlini et al. 2021);
- ``lowercase``: −log ppl(text) / log ppl(lowercased text) (Carlini et al. 2021);
- ``ref``: log ppl under a reference model − log ppl under the target (needs ``ref_model``);
- ``mink``: Min-K% Prob, the mean of the lowest K% token log-probs (Shi et al. 2024), K = 20%;
- ``minkpp``: Min-K%++, the same over ``(log p(x_t) − μ_t) / σ_t`` with μ, σ the mean and std
  of log p over the vocabulary at step t (Zhang et al. 2024).

The benchmark-level test asks whether the benchmark's scores exceed the control set's
(variants, or any clean set such as post-cutoff items): one-sided Mann–Whitney U, the
AUC as effect, and the calibrated posterior (effect gated on AUC > 0.5).

>>> round(min_k_prob([-0.1, -5.0, -0.2, -3.0, -0.3], 0.4), 2)
-4.0
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from contam.constraints import Constraints, Each, Interval, Options, validate
from contam.data import Item
from contam.errors import ConfigError, ModelError
from contam.models.base import LanguageModel, TokenScores
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import run_items
from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.results import TestResult
from contam.stats.tests import mann_whitney

BASE_METHODS = ("mink", "minkpp", "ppl", "zlib", "lowercase")


def min_k_prob(logprobs: Sequence[float] | np.ndarray, k: float = 0.2) -> float:
    """Mean of the lowest ``k`` share of token log-probs (at least one token)."""
    lp = np.sort(np.asarray(logprobs, dtype=float))
    if lp.size == 0:
        return float("nan")
    n = max(1, int(lp.size * k))
    return float(lp[:n].mean())


def min_k_plus_plus(ts: TokenScores, k: float = 0.2) -> float:
    """Min-K%++: Min-K% over token log-probs standardized by the vocabulary's mean and std."""
    if ts.vocab_mean is None or ts.vocab_std is None:
        raise ModelError("Min-K%++ needs the vocabulary mean/std per position; this backend did not return them")
    lp = np.asarray(ts.logprobs, dtype=float)
    mu, sd = np.asarray(ts.vocab_mean, dtype=float), np.asarray(ts.vocab_std, dtype=float)
    z = (lp - mu) / np.maximum(sd, 1e-8)  # sd = 0 only for a one-hot distribution
    return min_k_prob(z, k)


def zlib_bytes(text: str) -> int:
    return len(zlib.compress(text.encode("utf-8")))


@dataclass(frozen=True)
class LogProbConfig:
    """Min-K% family settings. ``k`` = 20% (paper 001 §3.3, App. A Table 3); ``k_sweep`` adds
    ``mink@K`` / ``minkpp@K`` scores for other K; ``field``: which text of an item is scored
    (``text`` = question and solution as a leak would show them, ``question``, ``answer``)."""

    k: float = 0.2
    k_sweep: tuple[float, ...] = ()
    field: str = "text"
    primary: str = "mink"
    prior: float = 0.5
    confidence: float = 0.95
    batch_size: int = 16
    #: Whether the first token of the text is scored. The authors' code (Shi et al.) scores
    #: ``input_ids[1:]``: every text token after the tokenizer's BOS, so on a model *without*
    #: a BOS token (SmolLM2) the first text token is not scored at all. Our backends score an
    #: empty-prompt text after a start token (``<|im_start|>`` on SmolLM2), whose first text
    #: token then costs ~10 nats and sits in the lowest 20% of every text. ``auto``: drop it
    #: exactly when the model adds no BOS (as the authors' code does); ``keep``; ``drop``.
    first_token: str = "auto"

    _constraints: ClassVar[Constraints] = {
        "k": Interval(float, 0, 1, closed="right"),
        "k_sweep": Each(Interval(float, 0, 1, closed="right")),
        "field": Options("text", "question", "answer"),
        "prior": Interval(float, 0, 1),
        "confidence": Interval(float, 0, 1, closed="neither"),
        "batch_size": Interval(int, 1, None),
        "first_token": Options("auto", "keep", "drop"),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class ItemLogProb(Record):
    """Scores of one item (``group`` = ``benchmark`` or ``control``)."""

    key: str
    id: str
    group: str
    n_tokens: int
    scores: dict[str, float]


@dataclass(frozen=True)
class MethodTest(Record):
    """Benchmark vs control for one score: means, Mann–Whitney test with AUC, confidence."""

    method: str
    benchmark_mean: float
    control_mean: float
    auc: float
    test: TestResult
    calibration: Calibration


@dataclass(frozen=True)
class LogProbResult(Record):
    model: str
    n_benchmark: int
    n_control: int
    methods: tuple[MethodTest, ...]
    primary: str
    contamination_confidence: float
    config: dict[str, object] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)

    def method(self, name: str) -> MethodTest | None:
        return next((m for m in self.methods if m.method == name), None)


def adds_bos(model: object) -> bool | None:
    """Whether ``model``'s tokenizer puts a BOS token before a text (``None``: cannot tell).

    >>> adds_bos(object()) is None
    True
    """
    for name in ("adds_bos", "_add_bos"):  # llama.cpp backend (through a cache wrapper too)
        v = getattr(model, name, None)
        if isinstance(v, bool):
            return v
    tok: Callable[[str], Any] | None = getattr(model, "tokenizer", None)  # Hugging Face backend
    if tok is not None and callable(tok):
        bos = getattr(tok, "bos_token_id", None)
        try:
            ids = list(tok("a")["input_ids"])
        except Exception:  # a tokenizer that cannot encode a lone letter cannot tell us either
            return None
        return bool(bos is not None and ids and ids[0] == bos)
    return None


def drop_first(ts: TokenScores) -> TokenScores:
    """The token scores without the first token (unchanged when it is the only one)."""
    if len(ts.logprobs) < 2:
        return ts
    return replace(
        ts,
        tokens=ts.tokens[1:],
        logprobs=ts.logprobs[1:],
        offsets=ts.offsets[1:],
        token_ids=ts.token_ids[1:],
        vocab_mean=ts.vocab_mean[1:] if ts.vocab_mean is not None else None,
        vocab_std=ts.vocab_std[1:] if ts.vocab_std is not None else None,
    )


def item_text(item: Item, which: str) -> str:
    if which == "question":
        return item.question
    if which == "answer":
        return item.answer_text
    return item.text


class LogProbProbe:
    """Scores items with a model (and optionally a reference model) and tests benchmark vs control."""

    def __init__(self, config: LogProbConfig | None = None) -> None:
        self.config = config or LogProbConfig()
        self.model_seconds = 0.0

    def methods(self, with_ref: bool) -> list[str]:
        ks = [k for k in self.config.k_sweep if k != self.config.k]
        extra = [f"mink@{k:g}" for k in ks] + [f"minkpp@{k:g}" for k in ks]
        return [*BASE_METHODS, *(["ref"] if with_ref else []), *extra]

    def features(self, text: str, ts: TokenScores, lower: TokenScores | None, ref: TokenScores | None) -> dict[str, float]:
        """All scores of one text from its token scores (pure; no model calls)."""
        cfg = self.config
        mean_lp = ts.mean
        out = {
            "mink": min_k_prob(ts.logprobs, cfg.k),
            "ppl": mean_lp,
            "zlib": mean_lp / max(1, zlib_bytes(text)),
        }
        out["minkpp"] = min_k_plus_plus(ts, cfg.k) if ts.vocab_mean is not None else float("nan")
        if lower is not None:
            loss, lower_loss = -mean_lp, -lower.mean
            out["lowercase"] = -loss / lower_loss if lower_loss > 0 else float("nan")
        if ref is not None:
            out["ref"] = (-ref.mean) - (-mean_lp)
        for k in cfg.k_sweep:
            if k != cfg.k:
                out[f"mink@{k:g}"] = min_k_prob(ts.logprobs, k)
                out[f"minkpp@{k:g}"] = min_k_plus_plus(ts, k) if ts.vocab_mean is not None else float("nan")
        return out

    def drops_first(self, model: object) -> bool:
        """Whether the first scored token of each text is left out for ``model`` (``first_token``)."""
        if self.config.first_token == "auto":
            return adds_bos(model) is False
        return self.config.first_token == "drop"

    def _score(self, model: LanguageModel, texts: list[str], vocab_stats: bool = False) -> list[TokenScores]:
        t0 = time.perf_counter()
        try:
            return model.score([("", t) for t in texts], vocab_stats=vocab_stats)
        finally:
            self.model_seconds += time.perf_counter() - t0

    def measure(
        self,
        model: LanguageModel,
        groups: dict[str, Sequence[Item]],
        *,
        ref_model: LanguageModel | None = None,
        checkpoint: JsonlCheckpoint | None = None,
    ) -> list[ItemLogProb]:
        """Scores for every item of every group (``{"benchmark": [...], "control": [...]}``),
        resuming from ``checkpoint`` (key ``key`` = ``group/id``)."""
        if not model.supports_scoring:
            raise ModelError(f"model {model.spec} cannot score text; the log-prob probes need a local model (llamacpp:, hf:, smollm2)")
        drop = self.drops_first(model)
        drop_ref = self.drops_first(ref_model) if ref_model is not None else False
        jobs = [(g, it) for g, items in groups.items() for it in items]

        def batch(chunk: list[tuple[str, Item]]) -> list[ItemLogProb]:
            texts = [item_text(it, self.config.field) or " " for _, it in chunk]
            main = self._score(model, texts, vocab_stats=True)
            lower = self._score(model, [t.lower() for t in texts])
            ref: list[TokenScores | None] = list(self._score(ref_model, texts)) if ref_model is not None else [None] * len(texts)
            if drop:
                main, lower = [drop_first(t) for t in main], [drop_first(t) for t in lower]
            if drop_ref:
                ref = [drop_first(t) if t is not None else None for t in ref]
            return [
                ItemLogProb(f"{g}/{it.id}", it.id, g, len(ts.logprobs), self.features(text, ts, lo, rf))
                for (g, it), text, ts, lo, rf in zip(chunk, texts, main, lower, ref, strict=True)
            ]

        return run_items(
            jobs,
            lambda j: batch([j])[0],
            ItemLogProb,
            key=lambda j: f"{j[0]}/{j[1].id}",
            checkpoint=checkpoint,
            description="log-prob scores",
            batch=batch,
            batch_size=max(2, self.config.batch_size),
        )

    def analyze(self, records: Sequence[ItemLogProb], model: str = "") -> LogProbResult:
        """Mann–Whitney (benchmark > control) per score, AUC and calibrated confidence."""
        cfg = self.config
        bench = [r for r in records if r.group == "benchmark"]
        ctrl = [r for r in records if r.group == "control"]
        names = [m for m in self.methods(True) if any(m in r.scores for r in records)]
        tests = []
        for m in names:
            x = np.array([r.scores.get(m, math.nan) for r in bench], dtype=float)
            y = np.array([r.scores.get(m, math.nan) for r in ctrl], dtype=float)
            x, y = x[~np.isnan(x)], y[~np.isnan(y)]
            if x.size == 0 or y.size == 0:
                continue
            t = mann_whitney(x, y, "greater", cfg.confidence)
            cal = Calibration.from_p(t.p_value, t.effect - 0.5, cfg.prior)
            tests.append(MethodTest(m, float(x.mean()), float(y.mean()), t.effect, t, cal))
        prim = next((t for t in tests if t.method == cfg.primary), None)
        return LogProbResult(
            model,
            len(bench),
            len(ctrl),
            tuple(tests),
            cfg.primary,
            prim.calibration.confidence if prim else 0.0,
            {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items()},
        )

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        control: Sequence[Item] | None = None,
        *,
        variants: dict[str, list[Item]] | None = None,
        ref_model: LanguageModel | None = None,
        checkpoint: JsonlCheckpoint | None = None,
    ) -> LogProbResult:
        """Score the items and a comparison set and test items > comparison: ``control`` (a
        clean set) or ``variants`` (each item's first isomorphic variant)."""
        benchmark = items
        if control is not None and variants is not None:
            raise ConfigError("give one comparison set: variants or control")
        if variants is not None:
            control = [variants[it.id][0] for it in items if variants.get(it.id)]
        if not control:
            raise ConfigError("the log-prob probes need a comparison set: variants or a clean control set")
        self.model_seconds = 0.0
        t0 = time.perf_counter()
        recs = self.measure(model, {"benchmark": benchmark, "control": control}, ref_model=ref_model, checkpoint=checkpoint)
        wall = time.perf_counter() - t0
        res = self.analyze(recs, getattr(model, "spec", ""))
        timing = {"wall_s": wall, "model_s": self.model_seconds}
        return LogProbResult(**{**{f: getattr(res, f) for f in res.__dataclass_fields__}, "timing": timing})
