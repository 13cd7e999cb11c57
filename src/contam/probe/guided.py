"""Guided vs general instruction (Golchin & Surdeanu, "Time Travel in LLMs: Tracing Data
Contamination in Large Language Models", ICLR 2024, §3).

Each item is split into a first piece (a random-length initial segment) and a second piece. The
model completes the first piece twice, greedily: once under the *guided* instruction, which names
the dataset and split the instance comes from and asks for the second piece "as exactly appeared
in the dataset", and once under the *general* instruction, which only asks for a plausible
ending. A model that saw the partition reproduces more of the true second piece when reminded of
its source, so the per-item ROUGE-L difference (guided − general) is tested with a paired
bootstrap (10,000 resamples, one-sided); the partition is flagged when p < ``alpha``.

**Pairing, and where contam differs from the authors' code.** Golchin & Surdeanu's code resamples
the guided and the general scores *independently* (two bootstrap samples, difference of their
means). Here the two scores of one item are a pair -- the same first piece, the same true second
piece, the same model -- so contam resamples the per-item *differences*. Items differ far more
in how predictable their second piece is than the two instructions differ, and that shared
per-item part cancels in the difference: independent resampling counts it as noise, so its p is
larger (it loses power), while the pairing keeps the test's level exact under H0 (the two
instructions exchangeable per item). The price of pairing is the small-sample optimism of any
bootstrap of a mean: at n = 10 it can give p = 1e-4, below what *any* exact test on 10 pairs can
give. Hence the guard: p = max(bootstrap p, exact sign-flip permutation p), as in the Zero-CoT
Probe, and no verdict below ``min_items``.

>>> GuidedConfig().n_resamples
10000
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

from contam.constraints import Constraints, Interval, Options, validate
from contam.data.items import Item
from contam.errors import ConfigError
from contam.models.base import LanguageModel, Prompt
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import batch_size_for, generate_texts, run_items
from contam.probe.reconstruct import item_part
from contam.probe.textsim import rouge_l, word_prefix
from contam.records import Record
from contam.stats.results import TestResult

GUIDED = (
    "Instruction: You are provided with the first piece of an instance from the {split} split of the {dataset} dataset. "
    "Finish the second piece of the instance as exactly appeared in the dataset. Only rely on the original form of the "
    "instance in the dataset to finish the second piece.\n\n{label}First Piece: {first}\n\nSecond Piece:"
)
GENERAL = (
    "Instruction: Finish the second piece based on the first piece, such that these two pieces become a single "
    "instance{with_label}.\n\n{label}First Piece: {first}\n\nSecond Piece:"
)

#: Dataset and split names the guided prompt uses for the built-in benchmarks.
KNOWN_NAMES: dict[str, tuple[str, str]] = {
    "gsm8k": ("GSM8K", "test"),
    "gsm8k-train": ("GSM8K", "train"),
    "humaneval": ("HumanEval", "test"),
    "mmlu": ("MMLU", "test"),
    "swebench-lite": ("SWE-bench Lite", "test"),
    "swebench-verified": ("SWE-bench Verified", "test"),
}


@dataclass(frozen=True)
class GuidedConfig:
    """Guided-instruction settings (Golchin & Surdeanu 2024 §3).

    ``dataset``/``split`` fill the guided prompt. ``split_low``/``split_high`` bound the random
    length of the first piece (share of the words, drawn per item from ``seed``).
    ``use_label`` adds the item's short answer as ``Label:`` (the paper does for classification).
    ``min_items``: below this many probed items no verdict is given (the paper samples 10 per
    partition; a bootstrap over two or three differences says nothing, whatever its p).
    """

    dataset: str = "the benchmark"
    split: str = "test"
    part: str = "question"
    split_low: float = 0.3
    split_high: float = 0.7
    use_label: bool = False
    max_new_tokens: int = 0  # 0: 2 tokens per word of the second piece + 16
    n_resamples: int = 10_000
    alpha: float = 0.05
    min_items: int = 10
    seed: int = 0
    #: p = max(paired bootstrap p, exact sign-flip permutation p); see the module docstring.
    small_sample_guard: bool = True

    _constraints: ClassVar[Constraints] = {
        "part": Options("question", "text", "solution"),
        "split_low": Interval(float, 0, 1, closed="neither"),
        "split_high": Interval(float, 0, 1, closed="neither"),
        "max_new_tokens": Interval(int, 0, None),  # 0: 2 tokens per word of the second piece + 16
        "n_resamples": Interval(int, 1, None),
        "alpha": Interval(float, 0, 1, closed="neither"),
        "min_items": Interval(int, 0, None),
        "seed": Interval(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)
        if self.split_low > self.split_high:
            raise ConfigError(f"need 0 < split_low <= split_high < 1, got {self.split_low} and {self.split_high}")

    @classmethod
    def for_benchmark(cls, name: str, **kw: Any) -> GuidedConfig:
        """Config with the dataset and split names of a built-in benchmark (else the spec itself)."""
        dataset, split = KNOWN_NAMES.get(name, (name, "test"))
        return cls(dataset=kw.pop("dataset", None) or dataset, split=kw.pop("split", None) or split, **kw)


@dataclass(frozen=True)
class GuidedItem(Record):
    key: str
    id: str
    first: str
    second: str
    guided: str
    general: str
    rouge_guided: float
    rouge_general: float
    skipped: str = ""


@dataclass(frozen=True)
class GuidedResult(Record):
    config: dict[str, Any]
    items: tuple[GuidedItem, ...]
    mean_guided: float
    mean_general: float
    n: int
    test: TestResult | None
    contaminated: bool

    @property
    def note(self) -> str:
        m = self.config.get("min_items", 0)
        return f"no verdict: {self.n} items probed, at least {m} needed" if self.n < m else ""


class Guided:
    """>>> # Guided(GuidedConfig.for_benchmark("gsm8k")).run(model, items)"""

    def __init__(self, config: GuidedConfig | None = None) -> None:
        self.config = config or GuidedConfig()

    def split_item(self, item: Item) -> tuple[str, str]:
        cfg = self.config
        h = int.from_bytes(hashlib.sha256(f"{cfg.seed}:{item.id}".encode()).digest()[:8], "big")
        frac = random.Random(h).uniform(cfg.split_low, cfg.split_high)
        return word_prefix(item_part(item, cfg.part), frac)

    def prompts(self, item: Item, first: str) -> tuple[str, str]:
        cfg = self.config
        label = f"Label: {item.answer}\n\n" if cfg.use_label and item.answer else ""
        with_label = " with the following label" if label else ""
        return (
            GUIDED.format(split=cfg.split, dataset=cfg.dataset, label=label, first=first),
            GENERAL.format(with_label=with_label, label=label, first=first),
        )

    def score_item(self, model: LanguageModel, item: Item) -> GuidedItem:
        return self.score_batch(model, [item])[0]

    def score_batch(self, model: LanguageModel, items: Sequence[Item]) -> list[GuidedItem]:
        """Records for several items: their guided and general prompts go out together."""
        splits = [self.split_item(it) for it in items]
        live = [i for i, (_, second) in enumerate(splits) if second.strip()]
        reqs: list[tuple[Prompt, int]] = []
        for i in live:
            budget = self.config.max_new_tokens or 2 * len(splits[i][1].split()) + 16
            g_prompt, n_prompt = self.prompts(items[i], splits[i][0])
            reqs += [([{"role": "user", "content": g_prompt}], budget), ([{"role": "user", "content": n_prompt}], budget)]
        texts = generate_texts(model, reqs, temperature=0.0, seed=self.config.seed)
        by = {i: (texts[2 * j], texts[2 * j + 1]) for j, i in enumerate(live)}
        out = []
        for i, item in enumerate(items):
            first, second = splits[i]
            key = f"original/{item.id}"
            if i not in by:
                out.append(GuidedItem(key, item.id, first, second, "", "", 0.0, 0.0, skipped="fewer than two words"))
                continue
            guided, general = by[i]
            ref = second.strip()
            out.append(GuidedItem(key, item.id, first, second, guided, general, rouge_l(guided, ref), rouge_l(general, ref)))
        return out

    def analyze(self, records: Sequence[GuidedItem]) -> GuidedResult:
        """The statistics on scored records (no model calls): paired bootstrap of guided −
        general ROUGE-L, floored by the exact sign-flip permutation p; no verdict below ``min_items``."""
        from contam.stats.tests import paired_bootstrap, paired_permutation

        cfg = self.config
        rs = [r for r in records if not r.skipped]
        test = None
        if len(rs) >= 2:
            g, n = [r.rouge_guided for r in rs], [r.rouge_general for r in rs]
            test = paired_bootstrap(g, n, alternative="greater", n_resamples=cfg.n_resamples, seed=cfg.seed)
            if cfg.small_sample_guard:
                perm = paired_permutation(g, n, "greater", n_resamples=cfg.n_resamples, seed=cfg.seed)
                test = replace(
                    test,
                    p_value=max(test.p_value, perm.p_value),
                    details={**test.details, "p_bootstrap": test.p_value, "p_permutation": perm.p_value},
                )
        mean_g = sum(r.rouge_guided for r in rs) / len(rs) if rs else float("nan")
        mean_n = sum(r.rouge_general for r in rs) / len(rs) if rs else float("nan")
        flagged = bool(test is not None and len(rs) >= cfg.min_items and test.p_value < cfg.alpha and mean_g > mean_n)
        return GuidedResult(asdict(cfg), tuple(records), mean_g, mean_n, len(rs), test, flagged)

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        *,
        checkpoint: JsonlCheckpoint | None = None,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> GuidedResult:
        """Score every item (resumable) and :meth:`analyze`. The comparison is within each item
        (guided vs general instruction), so there are no ``variants`` or ``control``."""
        if variants is not None or control is not None:
            raise ConfigError("the guided probe compares two instructions on the same items; it takes no variants or control set")
        records = run_items(
            items,
            lambda it: self.score_item(model, it),
            GuidedItem,
            key=lambda it: f"original/{it.id}",
            checkpoint=checkpoint,
            description="guided vs general",
            batch=lambda chunk: self.score_batch(model, chunk),
            batch_size=batch_size_for(model),
        )
        return self.analyze(records)
