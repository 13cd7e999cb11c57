"""The paired difference-in-differences verdict as a probe of its own: a verdict for any model.

Per item, an original x and its isomorphic variant x' (``contam perturb``: numbers, names and the
answer changed, the wording kept), scored by the model under audit M and by a reference model R:

    d = [s_M(x) − s_M(x')] − [s_R(x) − s_R(x')]

where s is the log-prob per character of the words where x and x' differ (``unit="char"``, the
default): the summed log-prob of every token overlapping those words, divided by their
characters (:func:`contam.probe.evalprobes.char_diff_spans`, :func:`~contam.probe.evalprobes.per_char`).
A sum of token log-probs is the log-prob of a string whatever the tokenizer, and both models
divide by the same characters, so M and R are in one unit even when their vocabularies differ
(Gemma's and SmolLM2's). ``unit="token"`` is ``contam eval-probes``' original: the mean over each
model's own differing tokens (:func:`~contam.probe.evalprobes.diff_masks`) -- right for a model
and its own base checkpoint (one tokenizer), not across tokenizers: a per-token mean over "1234"
is a four-digit number's log-prob divided by 1 under one tokenizer and by 4 under another, so
the two models' gaps are on different scales and do not cancel. The benchmark is tested d > 0 with
a one-sided Wilcoxon signed-rank test (exact for n ≤ 50), and p is calibrated into the
Contamination Confidence (SBB bound, prior 0.5), gated to 0 unless the Hodges–Lehmann shift is
positive. ``method="did"`` uses the mean over the whole text, ``pair_diff`` leaves R out.

**The assumption.** R's preference for the original over its variant is what M's would be had M
never seen the benchmark: the two models agree on how natural the original numbers and names are
compared with the variant's, so the difference cancels everything but memorisation. That holds
for M's own base checkpoint (the model before the fine-tune under suspicion), and roughly for a
reference model that predates the benchmark and was trained on similar text (contamcheck's
approach with GPT-2-era models).

**How it fails.** A reference trained on different data breaks it both ways: if R itself saw
the benchmark (or lots of text like it), its own gap subtracts M's and hides contamination (a
false negative); if R's data makes the original numbers *less* natural than M's pre-training
does (a smaller, older, or differently-sourced model), M's ordinary preference for them shows up
as d > 0 on a clean benchmark (a false positive). The control: run the same probe on items M
cannot have seen (post-cutoff, or ``contam perturb`` variants of a second seed used as
"originals") -- the verdict there must be no.

>>> PairedConfig().method, PairedConfig().unit, PairedConfig().alpha
('did_diff', 'char', 0.05)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np

from contam.constraints import Constraints, Interval, Options, validate
from contam.data import Item
from contam.errors import ConfigError, ModelError
from contam.models.base import LanguageModel
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import run_items
from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.results import TestResult
from contam.stats.tests import wilcoxon_signed_rank

METHODS = ("did_diff", "did", "pair_diff")
UNITS = ("char", "token")


@dataclass(frozen=True)
class PairedConfig:
    """``method``: ``did_diff`` (differing tokens, the verdict of ``contam eval-probes``), ``did``
    (whole texts) or ``pair_diff`` (no reference model: biased by the model's own taste for the
    originals; kept for comparison). ``unit``: ``char`` (log-prob per character: comparable
    across tokenizers, the default) or ``token`` (mean per token: only for a reference with the
    model's own tokenizer, as in ``contam eval-probes``). ``field``: which text of an item is
    scored (``text`` = question and solution). ``min_items``: no verdict below it (an exact signed-rank test on
    fewer than 5 pairs cannot reach p < 0.05; 10 keeps some power)."""

    method: str = "did_diff"
    unit: str = "char"
    field: str = "text"
    alpha: float = 0.05
    prior: float = 0.5
    min_items: int = 10
    batch_size: int = 8

    _constraints: ClassVar[Constraints] = {
        "method": Options(*METHODS),
        "unit": Options(*UNITS),
        "field": Options("text", "question", "answer"),
        "alpha": Interval(float, 0, 1, closed="neither"),
        "prior": Interval(float, 0, 1),
        "min_items": Interval(int, 0, None),
        "batch_size": Interval(int, 1, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class PairedItem(Record):
    """One original and its variant under the model and the reference model: mean token log-prob
    of the differing tokens (``model_orig`` ...) and of the whole text (``*_all``), the same per
    character (``*_c``: the differing words, the whole text), and the per-item d."""

    key: str
    id: str
    variant_id: str
    n_diff_model: int
    model_orig: float
    model_var: float
    model_orig_all: float
    model_var_all: float
    n_diff_ref: int = 0
    ref_orig: float = math.nan
    ref_var: float = math.nan
    ref_orig_all: float = math.nan
    ref_var_all: float = math.nan
    model_orig_c: float = math.nan
    model_var_c: float = math.nan
    model_orig_all_c: float = math.nan
    model_var_all_c: float = math.nan
    ref_orig_c: float = math.nan
    ref_var_c: float = math.nan
    ref_orig_all_c: float = math.nan
    ref_var_all_c: float = math.nan

    def d(self, method: str, unit: str = "token") -> float:
        """The per-item difference of ``method`` in ``unit`` (``token``: per-token means, what
        ``contam eval-probes`` reports; ``char``: per character); > 0 points to contamination."""
        from contam.probe.evalprobes import paired_difference

        if unit not in UNITS:
            raise ConfigError(f"unknown paired unit {unit!r}; choose from {', '.join(UNITS)}")
        if method not in METHODS:
            raise ConfigError(f"unknown paired method {method!r}; choose from {', '.join(METHODS)}")
        if unit == "char":
            return paired_difference(method, self.model_orig_c, self.model_var_c, self.model_orig_all_c, self.model_var_all_c,
                                     self.ref_orig_c, self.ref_var_c, self.ref_orig_all_c, self.ref_var_all_c)  # fmt: skip
        return paired_difference(method, self.model_orig, self.model_var, self.model_orig_all, self.model_var_all,
                                 self.ref_orig, self.ref_var, self.ref_orig_all, self.ref_var_all)  # fmt: skip


@dataclass(frozen=True)
class PairedResult(Record):
    """The verdict: ``test`` (one-sided Wilcoxon signed-rank of d > 0, Hodges–Lehmann shift as
    effect), ``contamination_confidence``, ``flagged`` (effect > 0 and p < alpha, with at least
    ``min_items`` pairs), ``note`` (why there is no verdict), the per-item records."""

    model: str
    ref_model: str
    method: str
    n_pairs: int
    test: TestResult
    contamination_confidence: float
    flagged: bool
    calibration: Calibration
    items: tuple[PairedItem, ...] = ()
    note: str = ""
    assumption: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)


ASSUMPTION = (
    "the reference model's preference for each original over its variant equals the audited model's had it never "
    "seen the benchmark (true for its base checkpoint; a reference trained on different data can hide contamination "
    "or fake it)"
)


def _text(item: Item, which: str) -> str:
    return {"text": item.text, "question": item.question, "answer": item.answer_text}[which] or " "


class PairedProbe:
    """``run(model, items, variants=..., ref_model=...)``: score every (original, variant) pair
    with both models (resumable) and test d > 0."""

    def __init__(self, config: PairedConfig | None = None) -> None:
        self.config = config or PairedConfig()
        self.model_seconds = 0.0

    def _score(self, model: LanguageModel, pairs: Sequence[tuple[Item, Item]]) -> list[Any]:
        from contam.probe.evalprobes import pair_logprobs

        t0 = time.perf_counter()
        try:
            return pair_logprobs(model, pairs, lambda it: _text(it, self.config.field))
        finally:
            self.model_seconds += time.perf_counter() - t0

    def score_batch(self, model: LanguageModel, ref_model: LanguageModel | None, pairs: Sequence[tuple[Item, Item]]) -> list[PairedItem]:
        """Records for several pairs: one ``score`` call per model."""
        main = self._score(model, pairs)
        ref = self._score(ref_model, pairs) if ref_model is not None else None
        out = []
        for k, (o, v) in enumerate(pairs):
            m = main[k]
            extra: dict[str, Any] = {}
            if ref is not None:
                r = ref[k]
                extra = {
                    "n_diff_ref": r.n_diff_orig,
                    "ref_orig": r.orig,
                    "ref_var": r.var,
                    "ref_orig_all": r.orig_all,
                    "ref_var_all": r.var_all,
                    "ref_orig_c": r.orig_c,
                    "ref_var_c": r.var_c,
                    "ref_orig_all_c": r.orig_all_c,
                    "ref_var_all_c": r.var_all_c,
                }
            chars = {"model_orig_c": m.orig_c, "model_var_c": m.var_c, "model_orig_all_c": m.orig_all_c, "model_var_all_c": m.var_all_c}
            out.append(PairedItem(f"pair/{o.id}", o.id, v.id, m.n_diff_orig, m.orig, m.var, m.orig_all, m.var_all, **extra, **chars))
        return out

    def analyze(self, records: Sequence[PairedItem], model: str = "", ref_model: str = "") -> PairedResult:
        """The verdict on scored pairs (no model calls). NaN differences (a pair whose texts do not
        differ under a tokenizer) are left out."""
        cfg = self.config
        d = np.asarray([r.d(cfg.method, cfg.unit) for r in records], dtype=float)
        d = d[~np.isnan(d)]
        test = wilcoxon_signed_rank(d, np.zeros_like(d), "greater")
        cal = Calibration.from_p(test.p_value, test.effect, cfg.prior)
        note = f"no verdict: {d.size} usable pairs, at least {cfg.min_items} needed" if d.size < cfg.min_items else ""
        positive = not math.isnan(test.effect) and test.effect > 0
        flagged = bool(not note and positive and test.significant(cfg.alpha))
        return PairedResult(
            model,
            ref_model,
            cfg.method,
            int(d.size),
            test,
            cal.confidence if not note else 0.0,
            flagged,
            cal,
            tuple(records),
            note,
            ASSUMPTION if cfg.method != "pair_diff" else "no reference model: the model's own taste for the originals is not removed",
            asdict(cfg),
        )

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        *,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
        ref_model: LanguageModel | None = None,
        checkpoint: JsonlCheckpoint | None = None,
    ) -> PairedResult:
        """Pair each item with its first variant, score both texts with both models, test d > 0.

        ``variants`` is required (the probe is paired); ``control`` is not used (pass clean items
        as ``items`` to check the null); ``ref_model`` is required except for ``pair_diff``."""
        from contam.probe.variantset import pair_items

        if control is not None:
            raise ConfigError("the paired probe compares each item with its own variant; it takes no control set")
        if not variants:
            raise ConfigError("the paired probe needs --variants (an isomorphic reference set from `contam perturb`)")
        if ref_model is None and self.config.method != "pair_diff":
            raise ConfigError(
                "the paired probe needs --ref-model (the model's base checkpoint, or a reference model that predates the benchmark)"
            )
        for m in (model, ref_model):
            if m is not None and not m.supports_scoring:
                raise ModelError(f"model {m.spec} cannot score text; the paired probe needs log-probs (llamacpp:, hf:, smollm2)")
        pairs = pair_items(items, variants)
        if not pairs:
            raise ConfigError(f"none of the {len(items)} items has a variant (ids must match the variant set's original_id)")
        self.model_seconds = 0.0
        t0 = time.perf_counter()
        records = run_items(
            pairs,
            lambda p: self.score_batch(model, ref_model, [p])[0],
            PairedItem,
            key=lambda p: f"pair/{p[0].id}",
            checkpoint=checkpoint,
            description="paired probe",
            batch=lambda chunk: self.score_batch(model, ref_model, chunk),
            batch_size=self.config.batch_size,
        )
        wall = time.perf_counter() - t0
        res = self.analyze(records, getattr(model, "spec", ""), getattr(ref_model, "spec", "") if ref_model is not None else "")
        return PairedResult(
            **{**{f: getattr(res, f) for f in res.__dataclass_fields__}, "timing": {"wall_s": wall, "model_s": self.model_seconds}}
        )
