"""Reconstruction (prefix completion): can the model finish an item it was only shown the start of?

Following the data-reconstruction probes (Carlini et al. 2023; Wu et al. 2025) as paper 004
§3.2 runs them as a baseline: give the model the first 40% of an item's question, sample 16
completions, and compare each with the true rest. Per item: the maximum ROUGE-L F over the
samples, whether any sample equals the rest (exact) and whether any reproduces it word for word
at its start (verbatim). At benchmark level the same is done on a comparison set (rewritten or
post-cutoff items a model cannot have seen) and the two are compared: Mann–Whitney on the
per-item max ROUGE-L (original > reference) and a two-proportion z-test on the verbatim rate.

The prompt is the raw prefix for the model to continue (``chat=False``, what base models and
memorized text respond to); ``chat=True`` asks an instruct model to continue it instead.

>>> ReconstructConfig().prefix_fraction, ReconstructConfig().n_samples
(0.4, 16)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from contam.constraints import Constraints, Interval, Options, validate
from contam.data.items import Item
from contam.models.base import LanguageModel, Prompt
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import comparison_set, generate_grouped, run_groups
from contam.probe.textsim import exact_match, rouge_l, verbatim_match, word_prefix
from contam.records import Record
from contam.stats.results import TestResult

#: Why a set of isomorphic variants is a weak comparison group here (``ReconstructResult.note``).
VARIANTS_NOTE = (
    "a numbers-changed variant keeps its item's opening words, so a memorised item reconstructs its variants "
    "too; a clean --control set is the stronger comparison (docs/model-side.md)"
)
CHAT_INSTRUCTION = "Continue the following text exactly as it continues in its original source. Output only the continuation.\n\n"


@dataclass(frozen=True)
class ReconstructConfig:
    """Prefix completion settings (paper 004 §3.2: 40% prefix, 16 samples).

    ``part`` picks the text: ``question`` (the default, as in the paper), ``text`` (question,
    options and solution as a leaked document would show them) or ``solution``.
    ``max_new_tokens=0`` sizes the budget from the length of the rest (2 tokens a word + 16).
    ``n_samples=1`` decodes greedily.
    """

    prefix_fraction: float = 0.4
    n_samples: int = 16
    temperature: float = 0.8
    part: str = "question"
    max_new_tokens: int = 0
    chat: bool = False
    code: bool = False  # ROUGE-L with the lexical (code) tokenizer
    seed: int = 0

    _constraints: ClassVar[Constraints] = {
        "prefix_fraction": Interval(float, 0, 1, closed="neither"),
        "n_samples": Interval(int, 1, None),
        "temperature": Interval(float, 0, None),
        "part": Options("question", "text", "solution"),
        "max_new_tokens": Interval(int, 0, None),  # 0: sized from the rest of the item
        "seed": Interval(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class ReconstructItem(Record):
    key: str
    id: str
    group: str
    prefix: str
    rest: str
    max_rouge_l: float
    exact: bool
    verbatim: bool
    best: str
    skipped: str = ""  # why the item could not be probed (too short), else empty


@dataclass(frozen=True)
class ReconstructResult(Record):
    config: dict[str, Any]
    items: tuple[ReconstructItem, ...]
    mean_rouge_l: dict[str, float] = field(default_factory=dict)
    exact_rate: dict[str, float] = field(default_factory=dict)
    verbatim_rate: dict[str, float] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    rouge_test: TestResult | None = None
    verbatim_test: TestResult | None = None
    #: a caveat on the comparison group (:data:`VARIANTS_NOTE` when it is the items' variants), else empty
    note: str = ""


def item_part(item: Item, part: str) -> str:
    return {"question": item.question, "text": item.text, "solution": item.answer_text}[part]


class Reconstruct:
    """>>> # Reconstruct(ReconstructConfig(n_samples=16)).run(model, items, reference=ref_items)"""

    def __init__(self, config: ReconstructConfig | None = None) -> None:
        self.config = config or ReconstructConfig()

    def _prompt(self, prefix: str) -> Prompt:
        if self.config.chat:
            return [{"role": "user", "content": CHAT_INSTRUCTION + prefix}]
        return prefix

    def score_item(self, model: LanguageModel, item: Item, group: str = "original") -> ReconstructItem:
        return self.score_batch(model, [item], group)[0]

    def score_batch(self, model: LanguageModel, items: Sequence[Item], group: str = "original") -> list[ReconstructItem]:
        """Records for several items; prompts with the same token budget share one ``generate`` call."""
        cfg = self.config
        splits = [word_prefix(item_part(it, cfg.part), cfg.prefix_fraction) for it in items]
        live = [i for i, (_, rest) in enumerate(splits) if rest.strip()]
        reqs = [(self._prompt(splits[i][0]), cfg.max_new_tokens or 2 * len(splits[i][1].split()) + 16) for i in live]
        temp = cfg.temperature if cfg.n_samples > 1 else 0.0
        outs = dict(zip(live, generate_grouped(model, reqs, temperature=temp, n=cfg.n_samples, seed=cfg.seed), strict=True))
        records = []
        for i, item in enumerate(items):
            prefix, rest = splits[i]
            key = f"{group}/{item.id}"
            if i not in outs:
                records.append(ReconstructItem(key, item.id, group, prefix, rest, 0.0, False, False, "", skipped="fewer than two words"))
                continue
            texts = [o.text for o in outs[i]]
            # The rest starts where the prefix stopped; the model may or may not emit the joining space.
            ref = rest.strip()
            scores = [rouge_l(t, ref, code=cfg.code) for t in texts]
            best = max(range(len(texts)), key=lambda k: scores[k]) if texts else 0
            records.append(
                ReconstructItem(
                    key=key,
                    id=item.id,
                    group=group,
                    prefix=prefix,
                    rest=rest,
                    max_rouge_l=max(scores, default=0.0),
                    exact=any(exact_match(t, ref) for t in texts),
                    verbatim=any(verbatim_match(t, ref) for t in texts),
                    best=texts[best] if texts else "",
                )
            )
        return records

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        reference: Sequence[Item] | None = None,
        *,
        checkpoint: JsonlCheckpoint | None = None,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> ReconstructResult:
        from contam.stats.tests import mann_whitney, two_proportion_ztest

        comparison = comparison_set(items, reference, variants, control)
        groups, records = run_groups(self, model, items, comparison, ReconstructItem, checkpoint=checkpoint, name="reconstruct")
        by = {g: [r for r in records if r.group == g and not r.skipped] for g, _ in groups}
        mean = {g: _mean([r.max_rouge_l for r in rs]) for g, rs in by.items()}
        exact = {g: _mean([float(r.exact) for r in rs]) for g, rs in by.items()}
        verb = {g: _mean([float(r.verbatim) for r in rs]) for g, rs in by.items()}
        rouge_test = verbatim_test = None
        if comparison and by["original"] and by["reference"]:
            o, r = by["original"], by["reference"]
            rouge_test = mann_whitney([x.max_rouge_l for x in o], [x.max_rouge_l for x in r], alternative="greater")
            verbatim_test = two_proportion_ztest(sum(x.verbatim for x in o), len(o), sum(x.verbatim for x in r), len(r))
        return ReconstructResult(
            config=asdict(self.config),
            items=tuple(records),
            mean_rouge_l=mean,
            exact_rate=exact,
            verbatim_rate=verb,
            n={g: len(rs) for g, rs in by.items()},
            rouge_test=rouge_test,
            verbatim_test=verbatim_test,
            # Measured in bench/evasive.py: after verbatim training, seen vs unseen AUROC .91, seen vs variants p .45.
            note=VARIANTS_NOTE if variants is not None else "",
        )


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")
