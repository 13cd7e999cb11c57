"""Paraphrase variants through any language model, kept only when they mean the same thing.

Paper 004 builds its reference questions by paraphrasing and keeps a paraphrase when BLEURT
exceeds 0.7. No PyPI package ships a BLEURT checkpoint usable offline (``bleurt-pytorch``
downloads its weights from the hub at run time), so the similarity floor here is the cosine
of the embedded sentence embedder (all-MiniLM-L6-v2); every variant records which metric
judged it (``metadata["similarity_metric"]``).

Answer preservation where it is computable: a paraphrase of a word problem must state the
same numbers (digits and number words, as a multiset), so the same program still computes
the same answer; a multiple-choice stem keeps its options, so its gold letter stands.

>>> cfg = ParaphraseConfig(k=2)                                          # doctest: +SKIP
>>> from contam.models import load, load_embedder                         # doctest: +SKIP
>>> Paraphraser(cfg).run(load("smollm2"), items, load_embedder("minilm"))  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from contam.constraints import Constraints, Interval, validate
from contam.data.items import Item
from contam.errors import ConfigError
from contam.models.base import Embedder, LanguageModel
from contam.perturb.mentions import find_mentions
from contam.perturb.records import Variant
from contam.progress import track

PROMPT = (
    "Rewrite the following problem in different words. Keep every number, every quantity and the question "
    "exactly the same in meaning. Reply with the rewritten problem only.\n\nProblem: {question}"
)


@dataclass(frozen=True)
class ParaphraseConfig:
    """Paraphrase generation and the acceptance floor.

    ``k`` paraphrases are kept per item at most, from ``tries`` sampled generations;
    ``floor`` is the least cosine similarity to the original (paper 004 keeps BLEURT > 0.7;
    MiniLM cosine of a faithful paraphrase is typically above 0.8, of a different problem
    on the same topic below 0.7); ``max_ratio`` bounds the length change.
    """

    k: int = 3
    tries: int = 6
    floor: float = 0.8
    temperature: float = 0.8
    max_new_tokens: int = 256
    max_ratio: float = 2.0
    seed: int = 0

    _constraints: ClassVar[Constraints] = {
        "k": Interval(int, 1, None),
        "tries": Interval(int, 1, None),
        "floor": Interval(float, -1, 1),  # a cosine similarity
        "temperature": Interval(float, 0, None),
        "max_new_tokens": Interval(int, 1, None),
        "max_ratio": Interval(float, 1, None),  # longest / shortest of paraphrase and original
        "seed": Interval(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)


def numbers_of(text: str) -> Counter[str]:
    """The multiset of values a text states (digits and cardinal words; "three" and "3" agree).

    >>> sorted(numbers_of("Tom has three apples and 12 pears, $1.50 each.").elements())
    ['12', '3', '3/2']
    """
    return Counter(m.value for m in find_mentions(text) if m.kind in ("int", "decimal", "money", "percent", "word", "cents"))


def clean_generation(text: str) -> str:
    """A model's rewrite without the chatter around it ("Here is the rewritten problem:", quotes)."""
    t = text.strip()
    t = re.sub(r"^(?:here is|here's|sure|rewritten problem|problem)[^:\n]*:\s*", "", t, flags=re.IGNORECASE)
    return t.strip().strip('"').strip()


class Paraphraser:
    """``run(model, items, embedder)`` → accepted paraphrase :class:`Variant` records (kind ``paraphrase``)."""

    def __init__(self, config: ParaphraseConfig | None = None) -> None:
        self.config = config or ParaphraseConfig()
        if self.config.k < 1 or self.config.tries < self.config.k:
            raise ConfigError("paraphrase: need k >= 1 and tries >= k")
        #: Why generated candidates were dropped, over this paraphraser's life.
        self.rejected: Counter[str] = Counter()

    def judge(self, question: str, candidates: Sequence[str], embedder: Embedder) -> list[tuple[str, float, str]]:
        """``(candidate, similarity, reason)`` best first; ``reason`` is empty for an accepted paraphrase,
        else ``similarity``, ``length`` or ``numbers`` (the stated numbers differ, so the answer may too).

        >>> Paraphraser().judge("Tom has 3 apples.", ["Tom owns three apples."], load_embedder("minilm"))  # doctest: +SKIP
        [('Tom owns three apples.', 0.93, '')]
        """
        cfg = self.config
        if not candidates:
            return []
        vecs = embedder.embed([question, *candidates])
        sims = (vecs[1:] @ vecs[0]).astype(float)
        want = numbers_of(question)
        out: list[tuple[str, float, str]] = []
        for c, sim in sorted(zip(candidates, sims, strict=True), key=lambda cs: -cs[1]):
            ratio = len(c) / max(1, len(question))
            reason = ""
            if sim < cfg.floor:
                reason = "similarity"
            elif not (1 / cfg.max_ratio <= ratio <= cfg.max_ratio):
                reason = "length"
            elif numbers_of(c) != want:
                reason = "numbers"
            out.append((c, round(float(sim), 4), reason))
        return out

    def run(self, model: LanguageModel, items: Sequence[Item], embedder: Embedder) -> list[Variant]:
        cfg = self.config
        out: list[Variant] = []
        metric = f"cosine:{embedder.spec} (BLEURT has no offline checkpoint on PyPI)"
        for item in track(items, "paraphrasing"):
            prompts = [[{"role": "user", "content": PROMPT.format(question=item.question)}]]
            gens = model.generate(prompts, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, n=cfg.tries, seed=cfg.seed)[0]
            cands: list[str] = []
            for g in gens:
                c = clean_generation(g.text)
                if c and c != item.question.strip() and c not in cands:
                    cands.append(c)
            if not cands:
                self.rejected["empty"] += cfg.tries
                continue
            kept = 0
            for c, sim, reason in self.judge(item.question, cands, embedder):
                if kept >= cfg.k:
                    break
                if reason:
                    self.rejected[reason] += 1
                    continue
                preserved = True
                digest = hashlib.sha256(json.dumps([item.id, c], ensure_ascii=False).encode()).hexdigest()
                out.append(
                    Variant(
                        original_id=item.id,
                        variant_id=f"{item.id}#para{cfg.seed}.{kept}",
                        kind="paraphrase",
                        seed=cfg.seed,
                        question=c,
                        answer=item.answer,
                        solution=item.solution,
                        choices=item.choices,
                        audit_hash=digest,
                        original_answer=item.answer,
                        metadata={
                            "similarity": round(float(sim), 4),
                            "similarity_metric": metric,
                            "numbers_preserved": preserved,
                            "model": model.spec,
                        },
                    )
                )
                kept += 1
        return out


def similarity(embedder: Embedder, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Row-wise cosine similarity of two equally long lists of texts."""
    va, vb = embedder.embed(list(a)), embedder.embed(list(b))
    return np.sum(va * vb, axis=1)
