"""Paired per-item scoring of originals against their variants: token masks and character
spans where two texts differ, per-pair log-probs under a model (and a base model), the paired
differences (``pair_diff``, ``did``, ``did_diff``) and their one-sided Wilcoxon verdict."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam.data import Item
from contam.errors import ConfigError
from contam.probe.evalresults import SetVerdict, make_verdict
from contam.records import Record
from contam.stats.calibration import Calibration
from contam.stats.tests import wilcoxon_signed_rank

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
    """One original and its variant under the model and the base model: mean token
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
    """The variants of one original (first one only: one pair per item)."""
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
    """Token-level scores of every (original, variant) pair under ``model`` (and ``base``)."""
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


def paired_verdict(set_name: str, method: str, d: Sequence[float], prior: float = 0.5, alpha: float = 0.05) -> SetVerdict:
    """One-sided Wilcoxon signed-rank test of the per-item differences ``d`` > 0 (NaNs dropped),
    calibrated into the Contamination Confidence with its Hodges-Lehmann shift as the effect."""
    x = np.asarray([v for v in d if not math.isnan(v)], dtype=float)
    t = wilcoxon_signed_rank(x, np.zeros_like(x), "greater")
    c = Calibration.from_p(t.p_value, t.effect, prior)
    return make_verdict(
        set_name, "logprob", method, t.n, float(t.effect), float(t.p_value), c.confidence, alpha, "Wilcoxon signed-rank, paired per item"
    )
