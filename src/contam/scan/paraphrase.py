"""Paraphrasers for the S2 scenario: an LLM backend behind a similarity floor, and a rule-based fallback.

The rule-based paraphraser is deterministic given its ``random.Random``: synonym substitution
from a fixed table (case kept), small numbers spelled out in questions, and the final question
sentence moved to the front. It changes wording enough to break most 13-grams while keeping
every fact, so what it makes is a real (if plain) paraphrase; samples it made are labelled
``rule-paraphrase``.

>>> import random
>>> rule_paraphrase("Tom buys 3 apples. How many apples does Tom have in total?", random.Random(0), question=True)
'What number of apples does Tom own altogether? Consider this: Tom purchases three apples.'
>>> swap_names("Tom met Ann. Tom left.", random.Random(1))[0]
'Ashley met David. Ashley left.'
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from contam.data import Item

SYNONYMS: dict[str, tuple[str, ...]] = {
    "buys": ("purchases",),
    "bought": ("purchased",),
    "buy": ("purchase",),
    "sells": ("vends",),
    "sold": ("vended",),
    "has": ("owns",),
    "have": ("own",),
    "had": ("owned",),
    "gets": ("receives",),
    "got": ("received",),
    "gives": ("hands",),
    "gave": ("handed",),
    "each": ("every",),
    "every": ("each",),
    "in total": ("altogether",),
    "how many": ("what number of",),
    "how much": ("what amount",),
    "makes": ("earns",),
    "needs": ("requires",),
    "need": ("require",),
    "wants": ("wishes",),
    "want": ("wish",),
    "uses": ("utilizes",),
    "spends": ("pays out",),
    "spent": ("paid out",),
    "costs": ("is priced at",),
    "cost": ("price",),
    "left": ("remaining",),
    "takes": ("requires",),
    "more than": ("in excess of",),
    "less than": ("fewer than",),
    "per": ("for each",),
    "day": ("day",),
    "week": ("week",),
    "so": ("therefore",),
    "then": ("after that",),
    "also": ("as well",),
    "which": ("that",),
    "following": ("next",),
    "find": ("determine",),
    "show": ("demonstrate",),
    "large": ("big",),
    "small": ("little",),
    "begin": ("start",),
    "started": ("began",),
    "rest": ("remainder",),
    "half": ("one half",),
    "twice": ("two times",),
    "only": ("just",),
    "about": ("regarding",),
    "because": ("since",),
    "however": ("but",),
    "important": ("significant",),
    "describe": ("characterize",),
    "statement": ("claim",),
    "given": ("provided",),
    "believed": ("held",),
    "which of the following": ("which one of these",),
    "most": ("most",),
    "primarily": ("mainly",),
    "main": ("principal",),
    "considered": ("regarded",),
    "argued": ("claimed",),
}
_NUM_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()
_SYN_RE = re.compile(r"\b(" + "|".join(sorted((re.escape(k) for k in SYNONYMS), key=len, reverse=True)) + r")\b", re.IGNORECASE)
FIRST_NAMES = (
    "James Mary John Linda Robert Susan Michael Karen David Lisa Daniel Nancy Mark Betty Paul Sandra Steven Ashley Kevin Emily "
    "Brian Donna George Carol Edward Ruth Jason Sharon Ryan Laura Jacob Amy Gary Anna Eric Angela Omar Maria Carlos Sofia Ahmed "
    "Priya Chen Mei Hiro Yuki Ivan Olga Lars Ingrid Tom Ann Janet Jack Jill Sam Ben Tim Kate Joe Max Leo Mia Zoe Eva Ian Liz"
).split()
_NAME_SET = frozenset(FIRST_NAMES) | frozenset(
    "Natalia Weng Betty Julie James Albert Ken Alexis Tina Randy Kylar Toulouse Charleston Seattle Carla".split()
)


def _case_like(src: str, word: str) -> str:
    return word[:1].upper() + word[1:] if src[:1].isupper() else word


def rule_paraphrase(text: str, rng: random.Random, question: bool = True) -> str:
    """Deterministic paraphrase (see the module docstring); calculator annotations are kept."""
    protected: list[str] = []

    def protect(m: re.Match[str]) -> str:
        protected.append(m.group(0))
        return f"\x00{len(protected) - 1}\x00"

    s = re.sub(r"<<[^<>]*>>|####.*$", protect, text, flags=re.MULTILINE)
    s = _SYN_RE.sub(lambda m: _case_like(m.group(0), rng.choice(SYNONYMS[m.group(0).lower()])), s)
    if question:
        s = re.sub(r"(?<![\w.$,])([0-9]|1[0-2])(?![\w.,%])", lambda m: _NUM_WORDS[int(m.group(1))], s)
        sents = re.split(r"(?<=[.!?])\s+", s.strip())
        if len(sents) >= 2 and sents[-1].endswith("?"):
            s = sents[-1] + " Consider this: " + " ".join(sents[:-1])
    return re.sub(r"\x00(\d+)\x00", lambda m: protected[int(m.group(1))], s)


def paraphrase_docstrings(code: str, rng: random.Random) -> str:
    """Rule-paraphrase the prose inside a function's docstrings; code and ``>>>`` examples stay.

    >>> paraphrase_docstrings("def f(x):\\n    \'\'\'Return the total of each item.\'\'\'\\n", random.Random(0))
    "def f(x):\\n    \'\'\'Return the total of every item.\'\'\'\\n"
    """

    def fix(m: re.Match[str]) -> str:
        lines = m.group(2).split("\n")
        out, skip = [], False
        for ln in lines:
            if ">>>" in ln or skip:
                out.append(ln)
                skip = ">>>" in ln
                continue
            out.append(rule_paraphrase(ln, rng, question=False))
        return m.group(1) + "\n".join(out) + m.group(1)

    return re.sub(r'("""|\'\'\')(.*?)\1', fix, code, flags=re.DOTALL)


def swap_names(text: str, rng: random.Random, mapping: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """Replace known first names consistently (``mapping`` carries choices across texts)."""
    mapping = dict(mapping or {})
    used = set(mapping.values())

    def repl(m: re.Match[str]) -> str:
        name = m.group(0)
        if name not in _NAME_SET:
            return name
        if name not in mapping:
            choices = [n for n in FIRST_NAMES if n != name and n not in used and n not in text]
            mapping[name] = rng.choice(choices) if choices else name
            used.add(mapping[name])
        return mapping[name]

    return re.sub(r"\b[A-Z][a-z]+\b", repl, text), mapping


class LLMParaphraser:
    """S2 paraphrases from a :class:`~contam.models.base.LanguageModel`, accepted by the same rule as the
    variant sets' paraphrases (:meth:`contam.perturb.paraphrase.Paraphraser.judge`: embedding cosine ≥
    ``floor``, length within ``max_ratio``, the same multiset of stated numbers, not a copy); items whose
    paraphrase fails it fall back to :func:`rule_paraphrase` in the scenario.

    One prompt and one acceptance rule for both uses: a scenario's "LLM paraphrase" and a variant
    set's paraphrase variant mean the same thing.

    >>> from contam.models import load                                     # doctest: +SKIP
    >>> p = LLMParaphraser(load("smollm2"), floor=0.8)                      # doctest: +SKIP
    """

    def __init__(self, model: Any, embedder: Any | None = None, floor: float = 0.8, max_new_tokens: int = 200) -> None:
        from contam.perturb.paraphrase import ParaphraseConfig, Paraphraser

        self.model = model
        self.embedder = embedder
        # Greedy, one candidate per item: a scenario is built once and must be reproducible.
        self.judge = Paraphraser(ParaphraseConfig(k=1, tries=1, floor=floor, temperature=0.0, max_new_tokens=max_new_tokens))
        self.floor = floor
        self.max_new_tokens = max_new_tokens
        self.kept = 0
        self.rejected = 0

    def paraphrase_items(self, items: Sequence[Item], seed: int) -> dict[str, tuple[str, str]]:
        """``{item_id: (sample text, generator label)}`` for the items whose paraphrase passed the rule."""
        from contam.models.embed import load_embedder
        from contam.perturb.paraphrase import PROMPT, clean_generation
        from contam.progress import track

        emb = self.embedder or load_embedder("minilm")
        result: dict[str, tuple[str, str]] = {}
        for it in track(items, "paraphrasing"):
            prompt = [{"role": "user", "content": PROMPT.format(question=it.question)}]
            gen = self.model.generate([prompt], max_new_tokens=self.max_new_tokens, temperature=0.0, seed=seed)[0][0]
            out = clean_generation(gen.text)
            verdict = self.judge.judge(it.question, [out], emb) if out and out != it.question.strip() else []
            if not verdict or verdict[0][2]:
                self.rejected += 1
                continue
            self.kept += 1
            rng = random.Random(f"{seed}:{it.id}:s2")
            body = it.solution or it.answer_text
            tail = body if it.benchmark == "humaneval" else rule_paraphrase(body, rng, question=False)
            opts = "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(it.choices))
            result[it.id] = ("\n".join(x for x in (out, opts, tail) if x), f"llm-paraphrase:{getattr(self.model, 'spec', 'model')}")
        return result
