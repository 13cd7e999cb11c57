"""Level 3, second part: eq. 4 scored one pair at a time (paper 001 §3.2-3.3, Table 3).

    sim_reasoning = α·StructSim + β·StepSim + γ·ArgSim        (α .4, β .3, γ .3)

each part a weighted Jaccard similarity on n-gram multisets: the step types (1- to 3-grams,
longer ones weighing more), each step's words (word 1-2-grams, every step matched to its best
counterpart in the other trace, averaged both ways) and the arguments (numbers, operand/operator
pairs, entities, identifiers). :class:`ReasoningScorer` compares two traces in plain Python;
:mod:`contam.scan.reasoning.matcher` computes the same numbers, to the last bit, for many
pairs at once.

>>> weighted_jaccard(Counter({"a": 2}), Counter({"a": 1, "b": 1}))
0.3333333333333333
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import ClassVar

from contam.constraints import Constraints, Interval, NoneOr, validate
from contam.records import Record
from contam.scan.reasoning.steps import ReasoningStep, step_words


@dataclass(frozen=True)
class ReasoningConfig:
    """Level-3 settings (paper 001 §3.2 eq. 4, §3.3, Table 3: α .4, β .3, γ .3).

    ``threshold`` is τ3; the paper gives no value, 0.6 is ours (calibrate it with
    :mod:`contam.scan.calibrate`). ``shortlist`` is how many benchmark items are compared exactly
    per candidate after a sparse pre-selection; ``min_steps`` skips traces too short to carry a
    pattern (a one-step chain matches half the benchmark). ``n_jobs`` is how many processes
    :meth:`ReasoningMatcher.match` uses: ``None`` means all cores for inputs of 25,000 texts or
    more and one below (a worker costs a second or two to start), ``1`` never more; the results
    do not depend on it. Workers are spawned, so a script calling ``match`` with more than one
    needs the usual ``if __name__ == "__main__":`` guard (without it, matching falls back to one
    process with a warning).

    >>> ReasoningConfig().alpha + ReasoningConfig().beta + ReasoningConfig().gamma
    1.0
    """

    alpha: float = 0.4
    beta: float = 0.3
    gamma: float = 0.3
    threshold: float = 0.6
    struct_n: int = 3
    step_n: int = 2
    min_steps: int = 2
    shortlist: int = 20
    n_jobs: int | None = None

    _constraints: ClassVar[Constraints] = {
        "alpha": Interval(float, 0, 1),
        "beta": Interval(float, 0, 1),
        "gamma": Interval(float, 0, 1),
        "threshold": Interval(float, 0, 2),  # 2.0: the level is off (contam.scan.calibrate.OFF)
        "struct_n": Interval(int, 1, None),
        "step_n": Interval(int, 1, None),
        "min_steps": Interval(int, 0, None),
        "shortlist": Interval(int, 1, None),
        "n_jobs": NoneOr(Interval(int, 1, None)),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class ReasoningSim(Record):
    """The three parts and their weighted total (eq. 4)."""

    struct: float
    step: float
    arg: float
    total: float


def weighted_jaccard(a: Counter[str], b: Counter[str]) -> float:
    """Σ min(a, b) / Σ max(a, b) over the union of keys; 0 when both are empty.

    >>> weighted_jaccard(Counter({"x": 2, "y": 1}), Counter({"x": 1, "z": 1}))
    0.25
    """
    keys = a.keys() | b.keys()
    den = sum(max(a[k], b[k]) for k in keys)
    return sum(min(a[k], b[k]) for k in keys) / den if den else 0.0


def ngram_counter(seq: Sequence[str], n_max: int, weight_by_n: bool = True) -> Counter[str]:
    """All 1..n_max-grams of ``seq``, an n-gram weighing ``n`` (longer shared runs count more).
    Each length is counted by ``Counter``'s C loop (this runs for every step of every trace)."""
    c: Counter[str] = Counter()
    for n in range(1, n_max + 1):
        grams = seq if n == 1 else ["\x1f".join(seq[i : i + n]) for i in range(len(seq) - n + 1)]
        for g, v in Counter(grams).items():
            c[g] += v * (n if weight_by_n else 1)
    return c


Features = tuple[Counter[str], list[Counter[str]], Counter[str]]


def features_and_tokens(steps: Sequence[ReasoningStep], config: ReasoningConfig) -> tuple[Features, list[str]]:
    """The features eq. 4 compares (struct n-grams, per-step word n-grams, argument multiset) and
    the flat tokens of the sparse shortlist index, in one pass: the step words, the costliest
    part, are found once. :meth:`ReasoningScorer.features` and :func:`feature_tokens` are its halves."""
    words = [step_words(s) for s in steps]
    kinds = [s.kind for s in steps]
    struct = ngram_counter(kinds, config.struct_n)
    per_step = [ngram_counter(w, config.step_n) for s, w in zip(steps, words, strict=True) if s.kind != "answer"]
    args: Counter[str] = Counter()
    toks = ["k:" + k for k in kinds] + ["kk:" + a + ">" + b for a, b in pairwise(kinds)]
    for s, w in zip(steps, words, strict=True):
        nums = ["n:" + n for n in s.numbers]
        ops = ["o:" + o for o in s.operands]
        ents = ["e:" + e for e in s.entities]
        args.update(nums)
        args.update(ops)
        args.update(ents)
        toks += nums + ops + ents
        toks += ["w:" + x for x in w]
    return (struct, per_step, args), toks


class ReasoningScorer:
    """Compares two step lists with eq. 4.

    >>> from contam.scan.reasoning.steps import extract_steps
    >>> s = ReasoningScorer()
    >>> s.similarity(extract_steps("x = 1\\ny = x + 2\\nreturn y"), extract_steps("a = 1\\nb = a + 2\\nreturn b")).struct
    1.0
    """

    def __init__(self, config: ReasoningConfig | None = None) -> None:
        self.config = config or ReasoningConfig()

    def features(self, steps: Sequence[ReasoningStep]) -> Features:
        """Pre-computed (struct n-grams, per-step word n-grams, argument multiset) of a trace."""
        return features_and_tokens(steps, self.config)[0]

    def similarity(self, a: Sequence[ReasoningStep], b: Sequence[ReasoningStep]) -> ReasoningSim:
        return self.similarity_features(self.features(a), self.features(b))

    def similarity_features(self, fa: Features, fb: Features) -> ReasoningSim:
        cfg = self.config
        struct = weighted_jaccard(fa[0], fb[0])
        step = _aligned_step_sim(fa[1], fb[1])
        arg = weighted_jaccard(fa[2], fb[2])
        total = cfg.alpha * struct + cfg.beta * step + cfg.gamma * arg
        return ReasoningSim(struct=round(struct, 6), step=round(step, 6), arg=round(arg, 6), total=round(total, 6))


def _aligned_step_sim(a: list[Counter[str]], b: list[Counter[str]]) -> float:
    """Mean over each trace's steps of the best weighted Jaccard with a step of the other, both ways."""
    if not a or not b:
        return 0.0
    m = [[weighted_jaccard(x, y) for y in b] for x in a]
    ab = sum(max(row) for row in m) / len(a)
    ba = sum(max(m[i][j] for i in range(len(a))) for j in range(len(b))) / len(b)
    return (ab + ba) / 2


def feature_tokens(steps: Sequence[ReasoningStep]) -> list[str]:
    """Flat tokens for the sparse shortlist index: step kinds, kind bigrams, numbers, operand pairs, entities."""
    return features_and_tokens(steps, ReasoningConfig())[1]
