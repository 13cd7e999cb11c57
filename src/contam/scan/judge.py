"""An optional LLM judge over the semantic and reasoning levels' candidate pairs (off by default).

As in llm-decontaminator (Yang et al. 2023, "Rethinking Benchmark and Contamination for
Language Models with Rephrased Samples"), a language model is shown the corpus text and the
benchmark item side by side with a fixed prompt and asked whether they are the same question,
possibly reworded; it answers ``True`` or ``False``. Here the judge only re-checks what the
embedding and reasoning levels flagged: a ``False`` removes that semantic / reasoning flag, a
``True`` confirms it, a reply with neither word leaves it as it was. It never touches a
token-level flag (an exact n-gram hit is evidence no judge can overrule). Its answer and its raw
reply go into the flag's evidence (``kind="judge"``) and scores (``judge`` 1 / 0).

Any model spec :func:`contam.models.load` accepts works (``smollm2``, the embedded 135M model,
whatever its quality; ``llamacpp:PATH.gguf``; ``openai:BASE_URL#MODEL``, any OpenAI-compatible
server); calls go through the on-disk response cache, so a rerun asks nothing twice.

>>> parse_verdict("True."), parse_verdict(" false"), parse_verdict("I think so")
(True, False, None)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from contam.constraints import Constraints, Interval, validate
from contam.data.items import Item
from contam.records import Record
from contam.scan.flags import LEVELS, DocResult, Evidence, Flag

#: The levels whose flags the judge re-checks.
JUDGED_LEVELS = ("semantic", "reasoning")

SYSTEM = "You are a careful annotator who compares two texts and answers only True or False."
#: The fixed prompt (after llm-decontaminator's): the two parts, then the question.
PROMPT = (
    "Help me determine whether the following two texts are the same question (or problem, or task).\n\n"
    "Part 1: {corpus}\n\nPart 2: {item}\n\n"
    "Disregard names, word order, wording and formatting. If Part 1 is the same question as Part 2, "
    "or a rephrasing or a translation of it (the same quantities, entities and answer), answer True; "
    "otherwise answer False. Answer with True or False only."
)

_VERDICT = re.compile(r"\b(true|false|yes|no)\b", re.IGNORECASE)


def parse_verdict(reply: str) -> bool | None:
    """The first True/False (or Yes/No) in a reply; None when it has neither."""
    m = _VERDICT.search(reply or "")
    if not m:
        return None
    return m.group(1).lower() in ("true", "yes")


@dataclass(frozen=True)
class JudgeConfig:
    """``spec``: the model (any :func:`contam.models.load` spec). ``max_chars``: each text is cut
    to this many characters (a small model's context is short). ``max_new_tokens``: the reply
    needs one word. ``cache``: the response cache (True: the default file; a path; False)."""

    spec: str = "smollm2"
    max_chars: int = 1500
    max_new_tokens: int = 8
    cache: Any = True

    _constraints: ClassVar[Constraints] = {
        "max_chars": Interval(int, 1, None),
        "max_new_tokens": Interval(int, 1, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class JudgeVerdict(Record):
    """One judged pair: the parsed answer (None: neither True nor False) and the raw reply."""

    answer: bool | None
    reply: str


class Judge:
    """``Judge(JudgeConfig("smollm2")).check([(corpus_text, item_text), ...])`` -> verdicts;
    :meth:`apply` re-checks the semantic / reasoning flags of scan results."""

    def __init__(self, config: JudgeConfig | None = None, model: Any = None) -> None:
        self.config = config or JudgeConfig()
        if model is None:
            from contam.models import load

            model = load(self.config.spec, cache=self.config.cache)
        self.model = model
        self.asked = 0

    def messages(self, corpus_text: str, item_text: str) -> list[dict[str, str]]:
        """The chat prompt of one pair (texts cut to ``max_chars``)."""
        cut = self.config.max_chars
        return [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": PROMPT.format(corpus=corpus_text[:cut].strip(), item=item_text[:cut].strip())}]  # fmt: skip

    def check(self, pairs: Sequence[tuple[str, str]]) -> list[JudgeVerdict]:
        if not pairs:
            return []
        outs = self.model.generate([self.messages(a, b) for a, b in pairs], max_new_tokens=self.config.max_new_tokens, temperature=0.0)
        self.asked += len(pairs)
        replies = [cs[0].text if cs else "" for cs in outs]
        return [JudgeVerdict(parse_verdict(r), r) for r in replies]

    def apply(self, results: Sequence[DocResult], text_of: Callable[[DocResult, Flag], str], items: dict[str, Item]) -> list[DocResult]:
        """``results`` with every semantic / reasoning flag judged: its verdict in the evidence and
        scores, the flags judged False removed (a document left without flags is clean). Token
        flags are never judged. ``text_of(result, flag)`` gives the corpus text a flag is about."""
        asks: list[tuple[int, int]] = []
        pairs: list[tuple[str, str]] = []
        for r_i, res in enumerate(results):
            for f_i, f in enumerate(res.flags):
                if f.level in JUDGED_LEVELS and f.item_id in items:
                    asks.append((r_i, f_i))
                    item = items[f.item_id]
                    # The semantic level matched the question; the reasoning level the worked solution.
                    pairs.append((text_of(res, f), item.question if f.level == "semantic" else item.text))
        verdicts = dict(zip(asks, self.check(pairs), strict=True))
        out: list[DocResult] = []
        for r_i, res in enumerate(results):
            kept: list[Flag] = []
            rejected: list[str] = []
            for f_i, f in enumerate(res.flags):
                v = verdicts.get((r_i, f_i))
                if v is None:
                    kept.append(f)
                    continue
                ev = Evidence(kind="judge", text=f"{self.config.spec}: {v.reply.strip()[:500]}", part=f.part,
                              weight=-1.0 if v.answer is None else float(v.answer))  # fmt: skip
                judged = replace(f, evidence=(*f.evidence, ev), scores={**f.scores, "judge": -1.0 if v.answer is None else float(v.answer)})
                if v.answer is False:
                    rejected.append(f.item_id)
                else:
                    kept.append(judged)
            if not rejected:
                out.append(replace(res, flags=tuple(kept)))
                continue
            scores = {**res.scores, "judge_rejected": rejected}
            if kept:
                level = min((f.level for f in kept), key=lambda lv: LEVELS.index(lv) if lv in LEVELS else len(LEVELS))
                out.append(replace(res, flags=tuple(kept), level=level, scores=scores))
            else:
                out.append(replace(res, contaminated=False, level="", flags=(), scores=scores))
        return out
