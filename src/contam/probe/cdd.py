"""CDD: contamination detection from the peakedness of a model's output distribution.

Dong et al. 2024, "Generalization or Memorization: Data Contamination and Trustworthy
Evaluation for Large Language Models" (ACL Findings), Section 3. For each item the model answers
once greedily (``s_0``) and ``n`` times at temperature 0.8 (``s_1 .. s_n``). With ``ED`` the
*token-level* edit distance between the first 100 tokens of ``s_i`` and ``s_0``, and ``l`` the
length in tokens of the longest of those (truncated) outputs,

    Peak(M; x) = (1/n) · #{ i : ED(s_i, s_0) ≤ α·l },      CDD(M; x) = [ Peak > ξ ].

A memorized item makes the sampled outputs collapse onto the greedy one, so the share of
near-identical samples (the peak of the edit-distance distribution) is high. Defaults α = 0.05,
ξ = 0.01 (Section 4); the paper's "real-world" setting uses α = 0, ξ = 0.2
(:meth:`CDDConfig.real_world`). Distances are in tokens and the peak is a *share* of the n
samples, as in the original; a character-level, unnormalised count is a different statistic.

Tokens are the backend's own (the model's ``tokenize`` on the output text, as the original
code re-encodes outputs, else ``Completion.tokens``); only when a backend gives neither (some remote APIs) do we fall back to lexical tokens, and the record says so.

>>> cfg = CDDConfig(n_samples=4)
>>> peak_share([0, 0, 3, 9], max_length=40, alpha=cfg.alpha)
0.5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from contam.constraints import Constraints, Interval, validate
from contam.data.items import Item
from contam.models.base import Completion, LanguageModel, Messages
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import comparison_set, run_groups
from contam.probe.textsim import lexical_tokens, token_edit_distance
from contam.records import Record
from contam.stats.results import TestResult


@dataclass(frozen=True)
class CDDConfig:
    """Settings of CDD (Dong et al. 2024, §3–4): ``n_samples`` samples at ``temperature``
    against the greedy answer, edit distance on the first ``max_tokens`` tokens, peak threshold
    ``alpha`` (share of the longest output's length), verdict threshold ``xi``.

    ``chat=True`` asks the question as a user turn; ``False`` feeds it as raw text to continue.

    >>> CDDConfig().alpha, CDDConfig.real_world().xi
    (0.05, 0.2)
    """

    n_samples: int = 50
    temperature: float = 0.8
    max_tokens: int = 100
    alpha: float = 0.05
    xi: float = 0.01
    chat: bool = True
    seed: int = 0

    @classmethod
    def real_world(cls, **kw: Any) -> CDDConfig:
        """The paper's real-world setting: exact agreement only (α = 0), verdict at ξ = 0.2."""
        return cls(alpha=0.0, xi=0.2, **kw)

    _constraints: ClassVar[Constraints] = {
        "n_samples": Interval(int, 1, None),
        "temperature": Interval(float, 0, None),
        "max_tokens": Interval(int, 1, None),
        "alpha": Interval(float, 0, 1),
        "xi": Interval(float, 0, 1, closed="left"),
        "seed": Interval(int, 0, None),
    }
    _flags: ClassVar[dict[str, str]] = {"n_samples": "--samples"}

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class CDDItem(Record):
    """One item's CDD reading: ``peak`` in [0, 1], ``contaminated`` = peak > ξ."""

    key: str
    id: str
    group: str
    peak: float
    contaminated: bool
    distances: tuple[int, ...]
    max_length: int
    greedy: str
    token_source: str = "model"


@dataclass(frozen=True)
class CDDResult(Record):
    """Benchmark-level CDD: the share of items flagged, per group (``original``, ``reference``),
    and when a comparison set is given a one-sided two-proportion test original > reference."""

    config: dict[str, Any]
    items: tuple[CDDItem, ...]
    flagged: dict[str, float] = field(default_factory=dict)
    mean_peak: dict[str, float] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    test: TestResult | None = None


def peak_share(distances: Sequence[int], *, max_length: int, alpha: float) -> float:
    """Share of ``distances`` at most ``alpha * max_length`` (0 for no samples)."""
    if not distances:
        return 0.0
    limit = alpha * max_length
    return sum(1 for d in distances if d <= limit) / len(distances)


def clean_output(text: str) -> str:
    """An output as the authors' implementation compares it (``strip_code`` in Dong et al.'s
    code): stripped, then cut at the first blank-line triple (``\\n\\n\\n``) when there is one, else
    at the first code fence. Trailing whitespace, a second answer after blank lines, or a fence
    the model closes would otherwise count as edits.

    Two deviations: the text before a fence is right-stripped (the authors' code keeps the newline
    before it, one token of difference from an unfenced greedy output); and an output that *opens* with a fence (chat models answering in a code block)
    keeps the block's content; the authors' code cuts it to the empty string, which makes every such
    output identical (distance 0, a full peak) whatever the code says.

    >>> clean_output("  x = 1\\n\\n\\n\\nmore")
    'x = 1'
    """
    s = text.strip()
    if "\n\n\n" in s:
        return s.split("\n\n\n")[0]
    if s.startswith("```"):
        body = s[3:]
        body = body.split("\n", 1)[1] if "\n" in body else ""  # drop the language tag line
        return body.split("```")[0].strip()
    return s.split("```")[0].rstrip()


def completion_tokens(model: LanguageModel, completion: Completion) -> tuple[list[Any], str]:
    """The token sequence of a completion and where it came from (``model`` or ``lexical``).

    As in the original code, the output *text* is cleaned (:func:`clean_output`) and re-encoded
    with the model's tokenizer (no BOS);
    backends without ``tokenize`` give their generated token strings; failing both, lexical tokens.
    """
    text = clean_output(completion.text)
    # An optional backend method, outside the LanguageModel protocol (llama.cpp and hf have it).
    tokenize: Callable[..., Iterable[Any]] | None = getattr(model, "tokenize", None)
    if callable(tokenize):
        try:
            return list(tokenize(text, add_bos=False)), "model"
        except TypeError:  # a tokenize without the add_bos switch
            return list(tokenize(text)), "model"
    if completion.tokens and text == completion.text:
        return list(completion.tokens), "model"
    return lexical_tokens(text), "lexical"


class CDD:
    """Run CDD over items (and optionally a comparison set).

    >>> # result = CDD(CDDConfig(n_samples=50)).run(load("smollm2"), items)
    """

    def __init__(self, config: CDDConfig | None = None) -> None:
        self.config = config or CDDConfig()

    def prompt(self, item: Item) -> str | Messages:
        return [{"role": "user", "content": item.question}] if self.config.chat else item.question

    def score_item(self, model: LanguageModel, item: Item, group: str = "original") -> CDDItem:
        return self.score_batch(model, [item], group)[0]

    def score_batch(self, model: LanguageModel, items: Sequence[Item], group: str = "original") -> list[CDDItem]:
        """Greedy answers for all ``items`` in one call, then their samples in another."""
        cfg = self.config
        prompts = [self.prompt(it) for it in items]
        greedy = model.generate(prompts, max_new_tokens=cfg.max_tokens, temperature=0.0, n=1, seed=cfg.seed)
        sampled = model.generate(prompts, max_new_tokens=cfg.max_tokens, temperature=cfg.temperature, n=cfg.n_samples, seed=cfg.seed)
        return [self._record(model, it, group, g[0], s) for it, g, s in zip(items, greedy, sampled, strict=True)]

    def _record(self, model: LanguageModel, item: Item, group: str, greedy: Completion, samples: Sequence[Completion]) -> CDDItem:
        cfg = self.config
        g_tokens, source = completion_tokens(model, greedy)
        g_tokens = g_tokens[: cfg.max_tokens]
        lengths = [len(g_tokens)]
        dists: list[int] = []
        for s in samples:
            toks, src = completion_tokens(model, s)
            if src != "model":
                source = src
            toks = toks[: cfg.max_tokens]
            lengths.append(len(toks))
            dists.append(token_edit_distance(toks, g_tokens))
        l_max = max(lengths)
        peak = peak_share(dists, max_length=l_max, alpha=cfg.alpha)
        return CDDItem(
            key=f"{group}/{item.id}",
            id=item.id,
            group=group,
            peak=peak,
            contaminated=peak > cfg.xi,
            distances=tuple(dists),
            max_length=l_max,
            greedy=greedy.text,
            token_source=source,
        )

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        reference: Sequence[Item] | None = None,
        *,
        checkpoint: JsonlCheckpoint | None = None,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> CDDResult:
        """Score every item; with a comparison set (``variants`` or ``control``; ``reference`` is the
        old name of ``control``), also its items (group ``reference``) and the test between them."""
        from contam.stats.tests import two_proportion_ztest

        comparison = comparison_set(items, reference, variants, control)
        groups, records = run_groups(self, model, items, comparison, CDDItem, checkpoint=checkpoint, name="CDD")
        flagged, mean_peak, n = {}, {}, {}
        for group, _ in groups:
            rs = [r for r in records if r.group == group]
            n[group] = len(rs)
            flagged[group] = sum(r.contaminated for r in rs) / len(rs) if rs else float("nan")
            mean_peak[group] = sum(r.peak for r in rs) / len(rs) if rs else float("nan")
        test = None
        if comparison:
            k1 = sum(r.contaminated for r in records if r.group == "original")
            k2 = sum(r.contaminated for r in records if r.group == "reference")
            test = two_proportion_ztest(k1, n["original"], k2, n["reference"], alternative="greater")
        return CDDResult(config=asdict(self.config), items=tuple(records), flagged=flagged, mean_peak=mean_peak, n=n, test=test)
