"""TS-Guessing (Deng et al. 2024, "Investigating Data Contamination in Modern Benchmarks for
Large Language Models", NAACL, §3): ask the model to fill in a hidden piece of a benchmark item
that cannot be inferred from the rest. Guessing it exactly points at memorization.

* **Question-based**: one key word of the question is replaced by ``[MASK]``. The key word is
  chosen with a part-of-speech tagger: candidates are nouns, then adjectives, then verbs (Penn
  tags ``NN*``, ``JJ*``, ``VB*``), alphabetic, at least 3 letters, not a stop word, and occurring
  only once in the question (a repeated word would give itself away); the first non-empty class
  wins and one word of it is picked with a per-item seeded draw.
* **Multiple-choice**: one *wrong* option is replaced by ``[MASK]`` (seeded draw among the wrong
  ones); the model must produce that option's text while the others stay visible.

Metrics per item: exact match (case and surrounding punctuation ignored) and ROUGE-L F of the
model's answer against the hidden text; benchmark level: their means (EM rate with a Wilson
interval) and, with a comparison set, a one-sided two-proportion z-test of the EM rates.

The tagger: Matthew Honnibal's averaged-perceptron English tagger (Penn Treebank tags, trained on
WSJ), whose trained weights ship inside the PyPI package ``textblob-aptagger==0.2.0``
(``trontagger-0.1.0.pickle``, MIT). That package's own code no longer imports with current
TextBlob, so the weights are read from its folder and run by NLTK's implementation of the same
tagger (``nltk.tag.perceptron.PerceptronTagger``), which needs no downloaded NLTK data and no Java.
No other offline option ships its model inside a PyPI package from the model's authors (spaCy's
``en_core_web_sm`` is distributed outside PyPI; NLTK's tagger data is a runtime download).

>>> tokens_with_spans("What is 2+2, Bob?")[:3]
[('What', 0, 4), ('is', 5, 7), ('2', 8, 9)]
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from contam.constraints import Constraints, Options, validate
from contam.constraints import Interval as Range
from contam.data.items import Item
from contam.errors import ConfigError
from contam.models.base import LanguageModel
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import comparison_set, generate_texts, run_groups
from contam.probe.textsim import rouge_l
from contam.records import Record
from contam.stats.results import ConfidenceInterval, TestResult

MASK = "[MASK]"
TAGGER_PACKAGE = "textblob_aptagger"
TAGGER_FILE = "trontagger-0.1.0.pickle"

QUESTION_PROMPT = (
    "Fill in the [MASK] in the following question with the single word it stands for. "
    "Reply with that word only.\n\nQuestion: {masked}\n\nWord:"
)
CHOICE_PROMPT = (
    "Please fill in the [MASK] in option {letter} based on your benchmark knowledge. The crucial rule is that "
    "you should provide a different answer from the other options below.\n\nQuestion: {question}\nOptions:\n{options}\n\n"
    "Reply with the text of option {letter} only."
)

_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*|[^\sA-Za-z\d]")
# Small closed-class list: the tagger already excludes most function words; these slip through as VB*/NN*.
STOPWORDS = frozenset(
    "be is are was were been being am do does did doing have has had having get got make made let "
    "thing things way lot one ones someone something anything everything nothing following".split()
)


def tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Word, number and punctuation tokens of ``text`` with their character spans."""
    return [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


@lru_cache(maxsize=1)
def pos_tagger() -> Any:
    """NLTK's averaged-perceptron tagger loaded with the weights shipped in ``textblob-aptagger``."""
    import pickle

    from nltk.tag.perceptron import PerceptronTagger

    spec = importlib.util.find_spec(TAGGER_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(locations[0]) / TAGGER_FILE if locations else None
    if path is None or not path.is_file():
        raise ConfigError("the part-of-speech tagger needs the package textblob-aptagger (pip install textblob-aptagger==0.2.0)")
    with open(path, "rb") as fh:
        # A Python 2 pickle of plain dicts and a set, from the installed package (trusted like its code).
        weights, tagdict, classes = pickle.load(fh, encoding="latin1")
    tagger = PerceptronTagger(load=False)
    tagger.model.weights, tagger.tagdict, tagger.classes = weights, tagdict, classes
    tagger.model.classes = classes
    return tagger


def pos_tags(words: Sequence[str]) -> list[str]:
    """Penn Treebank tags for ``words``.

    >>> pos_tags(["Janet", "sells", "eggs"])
    ['NNP', 'VBZ', 'NNS']
    """
    return [t for _, t in pos_tagger().tag(list(words))] if words else []


def _draw(seed: int, item_id: str, k: int) -> int:
    """A stable per-item choice in ``range(k)`` (same seed and id → same pick on every machine)."""
    h = int.from_bytes(hashlib.sha256(f"{seed}:{item_id}".encode()).digest()[:8], "big")
    return random.Random(h).randrange(k)


def choose_keyword(question: str, *, seed: int = 0, item_id: str = "") -> tuple[int, int] | None:
    """Character span of the key word to mask, or ``None`` when the question has no candidate.

    >>> q = "Janet sells duck eggs at the market."
    >>> s = choose_keyword(q); q[s[0]:s[1]] in {"Janet", "duck", "eggs", "market"}
    True
    """
    toks = tokens_with_spans(question)
    tags = pos_tags([t for t, _, _ in toks])
    counts: dict[str, int] = {}
    for t, _, _ in toks:
        counts[t.casefold()] = counts.get(t.casefold(), 0) + 1
    classes: dict[str, list[int]] = {"NN": [], "JJ": [], "VB": []}
    for i, ((tok, _, _), tag) in enumerate(zip(toks, tags, strict=True)):
        low = tok.casefold()
        if not tok.isalpha() or len(tok) < 3 or low in STOPWORDS or counts[low] > 1:
            continue
        cls = tag[:2]
        if cls in classes:
            classes[cls].append(i)
    for cls in ("NN", "JJ", "VB"):
        if classes[cls]:
            i = classes[cls][_draw(seed, item_id, len(classes[cls]))]
            return toks[i][1], toks[i][2]
    return None


def _clean(text: str) -> str:
    """First line of an answer, without a leading label, quotes and surrounding punctuation, casefolded."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^\s*(?:answer|word|option\s+[A-Z])\s*[:\-]\s*", "", line, flags=re.I)
    line = re.sub(r"^\s*[A-Z]\s*[:.)]\s+", "", line) if re.match(r"^\s*[A-Z]\s*[:.)]\s+", line) else line
    return re.sub(r"\s+", " ", line.strip().strip("\"'`*[]().,;:!?")).casefold()


def _first_word(text: str) -> str:
    m = re.search(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+", _clean(text))
    return m.group(0).casefold() if m else ""


@dataclass(frozen=True)
class TSGuessConfig:
    """TS-Guessing settings (Deng et al. 2024 §3): ``mode`` ``question`` (mask a key word) or
    ``choice`` (mask a wrong option); greedy decoding; ``seed`` drives the per-item picks."""

    mode: str = "question"
    max_new_tokens: int = 24
    seed: int = 0

    _constraints: ClassVar[Constraints] = {
        "mode": Options("question", "choice"),
        "max_new_tokens": Range(int, 1, None),
        "seed": Range(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class TSGuessItem(Record):
    key: str
    id: str
    group: str
    masked: str  # the hidden word or option text
    prompt: str
    answer: str
    exact: bool
    rouge_l: float
    skipped: str = ""


@dataclass(frozen=True)
class TSGuessResult(Record):
    config: dict[str, Any]
    items: tuple[TSGuessItem, ...]
    exact_rate: dict[str, float] = field(default_factory=dict)
    exact_ci: dict[str, ConfidenceInterval] = field(default_factory=dict)
    mean_rouge_l: dict[str, float] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    test: TestResult | None = None  # exact-match rate original > reference (two-proportion z)


class TSGuess:
    """>>> # TSGuess(TSGuessConfig(mode="choice")).run(model, load_benchmark("mmlu"))"""

    def __init__(self, config: TSGuessConfig | None = None) -> None:
        self.config = config or TSGuessConfig()

    def build(self, item: Item) -> tuple[str, str] | str:
        """``(prompt, hidden text)`` for an item, or the reason it cannot be probed."""
        cfg = self.config
        if cfg.mode == "question":
            span = choose_keyword(item.question, seed=cfg.seed, item_id=item.id)
            if span is None:
                return "no maskable key word"
            hidden = item.question[span[0] : span[1]]
            masked = item.question[: span[0]] + MASK + item.question[span[1] :]
            return QUESTION_PROMPT.format(masked=masked), hidden
        if len(item.choices) < 2:
            return "not a multiple-choice item"
        gold = ord(item.answer.strip()[:1].upper()) - 65 if item.answer.strip() else -1
        wrong = [i for i in range(len(item.choices)) if i != gold]
        pick = wrong[_draw(cfg.seed, item.id, len(wrong))]
        letter = chr(65 + pick)
        options = "\n".join(f"{chr(65 + i)}: {MASK if i == pick else c}" for i, c in enumerate(item.choices))
        return CHOICE_PROMPT.format(letter=letter, question=item.question, options=options), item.choices[pick]

    def score_item(self, model: LanguageModel, item: Item, group: str = "original") -> TSGuessItem:
        return self.score_batch(model, [item], group)[0]

    def score_batch(self, model: LanguageModel, items: Sequence[Item], group: str = "original") -> list[TSGuessItem]:
        """Records for several items with one ``generate`` call (batched or concurrent backends)."""
        built = [self.build(it) for it in items]
        live = [i for i, b in enumerate(built) if not isinstance(b, str)]
        answers = generate_texts(
            model,
            [([{"role": "user", "content": built[i][0]}], self.config.max_new_tokens) for i in live],
            temperature=0.0,
            seed=self.config.seed,
        )
        by = dict(zip(live, answers, strict=True))
        out = []
        for i, item in enumerate(items):
            key, b = f"{group}/{item.id}", built[i]
            if isinstance(b, str):
                out.append(TSGuessItem(key, item.id, group, "", "", "", False, 0.0, skipped=b))
                continue
            prompt, hidden = b
            answer = by[i]
            exact = _first_word(answer) == hidden.casefold() if self.config.mode == "question" else _clean(answer) == _clean(hidden)
            out.append(TSGuessItem(key, item.id, group, hidden, prompt, answer, exact, rouge_l(_clean(answer), hidden)))
        return out

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        reference: Sequence[Item] | None = None,
        *,
        checkpoint: JsonlCheckpoint | None = None,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> TSGuessResult:
        from contam.stats.intervals import wilson_interval
        from contam.stats.tests import two_proportion_ztest

        comparison = comparison_set(items, reference, variants, control)
        groups, records = run_groups(self, model, items, comparison, TSGuessItem, checkpoint=checkpoint, name="TS-Guessing")
        by = {g: [r for r in records if r.group == g and not r.skipped] for g, _ in groups}
        em = {g: (sum(r.exact for r in rs) / len(rs) if rs else float("nan")) for g, rs in by.items()}
        ci = {g: wilson_interval(sum(r.exact for r in rs), len(rs)) for g, rs in by.items() if rs}
        rl = {g: (sum(r.rouge_l for r in rs) / len(rs) if rs else float("nan")) for g, rs in by.items()}
        test = None
        if comparison and by["original"] and by.get("reference"):
            o, r = by["original"], by["reference"]
            test = two_proportion_ztest(sum(x.exact for x in o), len(o), sum(x.exact for x in r), len(r))
        return TSGuessResult(
            config=asdict(self.config),
            items=tuple(records),
            exact_rate=em,
            exact_ci=ci,
            mean_rouge_l=rl,
            n={g: len(rs) for g, rs in by.items()},
            skipped=sum(1 for r in records if r.skipped),
            test=test,
        )
