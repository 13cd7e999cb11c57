"""An optional judge for variant sets: a model solves each variant; disagreements are dropped.

Paper 004 builds its reference set (our variant set) with a generator and two judges and keeps a
question only when they agree. Here the generator is the program (its answer is computed, never guessed), and
a judge model, any spec :func:`contam.models.load` accepts, solves each variant question on its
own. With a judge the set keeps only variants whose judged answer equals the computed one: a
variant the judge reads differently is dropped, whoever is wrong. A weak judge (the embedded
SmolLM2) drops many correct variants; that costs coverage, never correctness, and the summary
reports the agreement rate so the cost is visible.

Calls go through the response cache (``load(spec)`` wraps it), so a rerun costs nothing.

>>> VariantJudgeConfig().max_new_tokens
384
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from contam.constraints import Constraints, Interval, validate
from contam.perturb.records import Variant

PROMPT = (
    "Solve this math word problem. Think step by step, then give the final answer as a number "
    'on the last line in the form "#### <number>".\n\nProblem: {question}'
)


@dataclass(frozen=True)
class VariantJudgeConfig:
    """How the judge is asked: greedy decoding, a step-by-step prompt ending in ``#### N``."""

    max_new_tokens: int = 384
    batch: int = 8
    prompt: str = PROMPT

    _constraints: ClassVar[Constraints] = {
        "max_new_tokens": Interval(int, 1, None),
        "batch": Interval(int, 1, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass
class JudgeResult:
    """What judging a set gave: the kept variants, each verdict, and the agreement rate."""

    kept: list[Variant]
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def judged(self) -> int:
        return len(self.verdicts)

    @property
    def agreed(self) -> int:
        return sum(1 for v in self.verdicts if v["agrees"])

    @property
    def agreement(self) -> float:
        return self.agreed / self.judged if self.judged else 0.0

    def summary(self, spec: str) -> dict[str, Any]:
        return {
            "judge": spec,
            "judged": self.judged,
            "agreed": self.agreed,
            "agreement_rate": round(self.agreement, 4),
            "dropped": self.judged - self.agreed,
        }


class VariantJudge:
    """Solve each variant with a model and keep the ones whose answer matches the computed one."""

    def __init__(self, model: Any, config: VariantJudgeConfig | None = None) -> None:
        self.model = model
        self.config = config or VariantJudgeConfig()

    def run(self, variants: Sequence[Variant]) -> JudgeResult:
        """Judge every numeric variant; multiple-choice and masked variants pass through untouched."""
        from contam.probe.answers import answers_equal, extract_answer

        cfg = self.config
        kept: list[Variant] = []
        verdicts: list[dict[str, Any]] = []
        todo = [v for v in variants if v.kind == "symbolic"]
        passthrough = {v.variant_id for v in variants if v.kind != "symbolic"}
        agrees: dict[str, bool] = {}
        for start in range(0, len(todo), cfg.batch):
            chunk = todo[start : start + cfg.batch]
            prompts = [[{"role": "user", "content": cfg.prompt.format(question=v.question)}] for v in chunk]
            outs = self.model.generate(prompts, max_new_tokens=cfg.max_new_tokens, temperature=0.0)
            for v, comps in zip(chunk, outs, strict=True):
                text = comps[0].text if comps else ""
                said = extract_answer(text)
                ok = answers_equal(said, v.answer)
                agrees[v.variant_id] = ok
                verdicts.append({"variant_id": v.variant_id, "computed": v.answer, "judged": said, "agrees": ok})
        for v in variants:
            if v.variant_id in passthrough or agrees.get(v.variant_id, False):
                kept.append(v)
        return JudgeResult(kept, verdicts)
