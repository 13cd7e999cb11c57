"""SWE-bench memorization diagnostics (paper 002: Liang, Garg & Zilouchian Moghaddam 2025,
"The SWE-Bench Illusion: When State-of-the-Art LLMs Remember Instead of Reason").

Three tasks that withhold what honest problem solving needs, so success points at memory:

(a) **File-path identification** (:class:`FilePath`): only the issue text (and the repository
    name) is shown; the model names the file to change. Accuracy = the named path is one of the
    gold patch's files. *Filtered accuracy* drops the instances whose issue text already names a
    gold file (full path, file name or dotted module path: :func:`~contam.probe.patches.mentions_path`).
(b) **Function reproduction** (:class:`FuncRepro`): the issue text and a changed function's
    name only; the model writes the function. Scores: consecutive 5-gram overlap with the gold
    function and instance-level verbatim match.
(c) **Prefix completion** (:class:`PrefixCompletion`): the first part of a changed function is
    shown as raw code to continue; verbatim rate of the continuation.

Gold files and functions come from the ``patch`` field (:mod:`contam.probe.patches`). SWE-bench
ships the patch, not the repository, so a function's gold text is its **post-image lines visible
in the patch** (context and added lines of its hunks), not the whole function. Hence
"verbatim" means: every non-blank gold line comes back, stripped of indentation, in order (other
lines may sit between them, since the patch shows the function with gaps). Prefix completion uses
only the function's first gap-free block, so its continuation is compared with real
consecutive file lines.

Cross-benchmark comparison (paper 002 §4, the "repository-bias" check): run the same task on a
control set from repositories outside SWE-bench; :func:`compare` reports the gap with a
one-sided two-proportion z-test and the minimum detectable effect at those sizes.

Control set format: JSONL, one instance a line, the SWE-bench fields
``{"instance_id": str, "repo": "owner/name", "problem_statement": str, "patch": str}``
(``base_commit`` optional, ignored): the issue text and the unified diff of the fixing commit
without test files. :func:`load_instances` checks each line and names file, line and field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from contam.constraints import Constraints, Interval, validate
from contam.data.items import Item
from contam.errors import ConfigError, InputError
from contam.models.base import LanguageModel, Prompt
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import batch_size_for, generate_texts, run_items
from contam.probe.patches import ChangedFunction, mentions_path, parse_patch

# Re-exported: these moved to sweanswers and are still imported from here.
from contam.probe.sweanswers import PathChoice as PathChoice
from contam.probe.sweanswers import _lines
from contam.probe.sweanswers import choose_path as choose_path
from contam.probe.sweanswers import extract_code as extract_code
from contam.probe.sweanswers import lines_in_order as lines_in_order
from contam.probe.sweanswers import path_candidates as path_candidates
from contam.probe.sweanswers import predicted_path as predicted_path
from contam.probe.sweanswers import starts_with_lines as starts_with_lines
from contam.probe.textsim import ngram_overlap, rouge_l
from contam.records import Record
from contam.stats.results import TestResult

# The instruction follows the issue: a backend that must cut an over-long prompt cuts from the
# left, and then loses part of the issue rather than the question.
FILEPATH_PROMPT = (
    "Issue reported on the GitHub repository {repo}:\n\n{issue}\n\n"
    "You cannot see the repository. Based on the issue above alone, which file must be modified to resolve it? "
    "Reply with the single file path, relative to the repository root, and nothing else.\n\nFile path:"
)
FUNCREPRO_PROMPT = (
    "GitHub issue:\n\n{issue}\n\n"
    "Write the complete Python implementation of the function `{name}` as it should be after the issue above "
    "is resolved. Output only the code of that function.\n\nFunction: {name}"
)


def load_instances(path: str | Path) -> list[Item]:
    """Read a SWE-bench-format JSONL (a control set) into items, checking every line."""
    from contam.data.loaders import iter_records

    items: list[Item] = []
    seen: set[str] = set()
    for line, rec in iter_records(path):
        given = {
            "instance_id": rec.get("instance_id", rec.get("id")),
            "problem_statement": rec.get("problem_statement"),
            "patch": rec.get("patch"),
        }
        text: dict[str, str] = {}
        for fld, val in given.items():
            if not isinstance(val, str) or not val.strip():
                raise InputError("missing or empty (expected a string)", path=path, line=line, field=fld)
            text[fld] = val
        iid = text["instance_id"]
        if iid in seen:
            raise InputError(f"duplicate instance_id {iid!r}", path=path, line=line, field="instance_id")
        seen.add(iid)
        try:
            parse_patch(text["patch"])
        except InputError as e:
            raise InputError(e.message, path=path, line=line, field="patch") from None
        items.append(
            Item(
                id=iid,
                question=text["problem_statement"],
                solution=text["patch"],
                benchmark=Path(path).stem,
                metadata={"repo": str(rec.get("repo", "")), "base_commit": str(rec.get("base_commit", ""))},
            )
        )
    if not items:
        raise InputError("no instances found", path=path)
    return items


def _issue(item: Item, max_chars: int) -> str:
    text = item.question.strip()
    return text if not max_chars or len(text) <= max_chars else text[:max_chars] + "\n[... issue truncated ...]"


@dataclass(frozen=True)
class SweConfig:
    """Settings of the three diagnostics. ``max_issue_chars`` keeps long issues inside small context
    windows (0: never truncate); ``functions_per_instance`` caps (b) and (c); ``prefix_fraction`` is
    the share of the first block's lines shown in (c); ``max_rest_lines`` caps the lines that must
    come back for a verbatim hit; ``n`` = 5 for the n-gram overlap."""

    max_issue_chars: int = 6000
    functions_per_instance: int = 1
    prefix_fraction: float = 0.5
    max_rest_lines: int = 10
    n: int = 5
    max_new_tokens: int = 384
    seed: int = 0

    _constraints: ClassVar[Constraints] = {
        "max_issue_chars": Interval(int, 0, None),  # 0: never truncate
        "functions_per_instance": Interval(int, 1, None),
        "prefix_fraction": Interval(float, 0, 1, closed="neither"),
        "max_rest_lines": Interval(int, 1, None),
        "n": Interval(int, 1, None),
        "max_new_tokens": Interval(int, 1, None),
        "seed": Interval(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class SweItem(Record):
    """One probe of one instance. ``hit`` is the binary outcome the task's rate counts (correct
    path, or verbatim); ``score`` the graded one (5-gram overlap; 1/0 for file paths)."""

    key: str
    id: str
    task: str
    repo: str
    target: str  # gold file(s) or function qualname
    answer: str
    hit: bool
    score: float = 0.0
    rouge_l: float = 0.0
    mentioned: bool = False  # (a): the issue already names a gold file
    skipped: str = ""
    rule: str = ""  # (a): which rule of choose_path picked the predicted path
    predicted: str = ""  # (a): the path taken from the answer


@dataclass(frozen=True)
class SweResult(Record):
    task: str
    config: dict[str, Any]
    items: tuple[SweItem, ...]
    n: int
    hits: int
    rate: float
    mean_score: float
    n_filtered: int = 0
    hits_filtered: int = 0
    rate_filtered: float = float("nan")

    def summary(self) -> dict[str, Any]:
        d = self.to_dict()
        d.pop("items")
        return d


Unit = tuple[Item, str, Any]  # (instance, key suffix, payload such as the changed function)


class _Task:
    """One diagnostic: ``units`` of an instance → a prompt each (``request``) → a record (``finish``)."""

    task = ""

    def __init__(self, config: SweConfig | None = None) -> None:
        self.config = config or SweConfig()

    def units(self, item: Item) -> list[tuple[str, Any]]:  # (key suffix, payload)
        return [("", None)]

    # ``payload`` is positional-only: each task names it for what its units carry (``fn``).
    def request(self, item: Item, payload: Any, /) -> tuple[Prompt, int] | str:
        """``(prompt, max_new_tokens)``, or why the unit is skipped."""
        raise NotImplementedError

    def finish(self, item: Item, payload: Any, /, key: str, answer: str) -> SweItem:
        raise NotImplementedError

    def _key(self, u: Unit) -> str:
        return f"{self.task}/{u[0].id}{u[1]}"

    def score_units(self, model: LanguageModel, units: Sequence[Unit]) -> list[SweItem]:
        """Records for several units with one batched ``generate`` call."""
        reqs = [self.request(item, payload) for item, _, payload in units]
        live = [(i, r) for i, r in enumerate(reqs) if not isinstance(r, str)]  # a str says why a unit is skipped
        answers = generate_texts(model, [r for _, r in live], temperature=0.0, seed=self.config.seed)
        by_unit = dict(zip([i for i, _ in live], answers, strict=True))
        out = []
        for i, (item, _suffix, payload) in enumerate(units):
            r = reqs[i]
            if isinstance(r, str):
                out.append(SweItem(self._key(units[i]), item.id, self.task, str(item.metadata.get("repo", "")), "", "", False, skipped=r))
            else:
                out.append(self.finish(item, payload, self._key(units[i]), by_unit[i]))
        return out

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        *,
        checkpoint: JsonlCheckpoint | None = None,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> SweResult:
        """Every unit of every instance (resumable). A control set is run the same way on its own
        and compared with :func:`compare`; there are no variants of SWE-bench instances."""
        if variants is not None or control is not None:
            raise ConfigError(
                "run the control set through the same task on its own and compare() the two results; SWE-bench instances have no variants"
            )
        units: list[Unit] = [(it, suffix, payload) for it in items for suffix, payload in self.units(it)]
        records = run_items(
            units,
            lambda u: self.score_units(model, [u])[0],
            SweItem,
            key=self._key,
            checkpoint=checkpoint,
            description=self.task,
            batch=lambda us: self.score_units(model, us),
            batch_size=batch_size_for(model),
        )
        return summarize(self.task, asdict(self.config), records)


def summarize(task: str, config: dict[str, Any], records: Sequence[SweItem]) -> SweResult:
    rs = [r for r in records if not r.skipped]
    hits = sum(r.hit for r in rs)
    kept = [r for r in rs if not r.mentioned]
    return SweResult(
        task=task,
        config=config,
        items=tuple(records),
        n=len(rs),
        hits=hits,
        rate=hits / len(rs) if rs else float("nan"),
        mean_score=sum(r.score for r in rs) / len(rs) if rs else float("nan"),
        n_filtered=len(kept),
        hits_filtered=sum(r.hit for r in kept),
        rate_filtered=sum(r.hit for r in kept) / len(kept) if kept else float("nan"),
    )


def _chat(text: str) -> Prompt:
    return [{"role": "user", "content": text}]


class FilePath(_Task):
    """(a) File-path identification from the issue text alone."""

    task = "swe-filepath"

    def request(self, item: Item, payload: Any) -> tuple[Prompt, int] | str:
        repo = str(item.metadata.get("repo", "")) or "(unknown)"
        return _chat(FILEPATH_PROMPT.format(repo=repo, issue=_issue(item, self.config.max_issue_chars))), 48

    def __init__(self, config: SweConfig | None = None, known_files: dict[str, frozenset[str]] | None = None) -> None:
        super().__init__(config)
        #: Files of each repository the benchmark's gold patches name (``repo -> paths``): an answer's
        #: candidate that is one of them wins (:func:`choose_path`). :meth:`run` adds the items' own.
        self.known_files: dict[str, frozenset[str]] = dict(known_files or {})

    def run(
        self,
        model: LanguageModel,
        items: Sequence[Item],
        *,
        checkpoint: JsonlCheckpoint | None = None,
        variants: dict[str, list[Item]] | None = None,
        control: Sequence[Item] | None = None,
    ) -> SweResult:
        for repo, files in known_files(items).items():
            self.known_files[repo] = self.known_files.get(repo, frozenset()) | files
        return super().run(model, items, checkpoint=checkpoint, variants=variants, control=control)

    def finish(self, item: Item, payload: Any, key: str, answer: str) -> SweItem:
        repo = str(item.metadata.get("repo", ""))
        gold = parse_patch(item.solution, source=item.id).files
        choice = choose_path(answer, repo, self.known_files.get(repo))
        hit = choice.path in gold
        return SweItem(
            key,
            item.id,
            self.task,
            repo,
            " ".join(gold),
            answer,
            hit,
            float(hit),
            mentioned=any(mentions_path(item.question, f) for f in gold),
            rule=choice.rule,
            predicted=choice.path,
        )


def known_files(items: Sequence[Item]) -> dict[str, frozenset[str]]:
    """``repo -> files`` named by the gold patches of ``items`` (SWE-bench ships patches, not
    repositories, so these are the repository files the benchmark knows of)."""
    out: dict[str, set[str]] = {}
    for it in items:
        try:
            files = parse_patch(it.solution, source=it.id).files
        except InputError:
            continue
        out.setdefault(str(it.metadata.get("repo", "")), set()).update(files)
    return {k: frozenset(v) for k, v in out.items()}


def _functions(item: Item, limit: int) -> list[ChangedFunction]:
    return [f for f in parse_patch(item.solution, source=item.id).defs if f.post_lines][:limit]


class FuncRepro(_Task):
    """(b) Function reproduction from the issue text and the function's name."""

    task = "swe-funcrepro"

    def units(self, item: Item) -> list[tuple[str, Any]]:
        fs = _functions(item, self.config.functions_per_instance)
        return [(f"::{f.path}::{f.qualname}", f) for f in fs] or [("", None)]

    def request(self, item: Item, fn: ChangedFunction | None) -> tuple[Prompt, int] | str:
        if fn is None:
            return "patch changes no function"
        prompt = FUNCREPRO_PROMPT.format(name=fn.qualname, issue=_issue(item, self.config.max_issue_chars))
        return _chat(prompt), self.config.max_new_tokens

    def finish(self, item: Item, fn: ChangedFunction, key: str, answer: str) -> SweItem:
        code = extract_code(answer)
        return SweItem(
            key,
            item.id,
            self.task,
            str(item.metadata.get("repo", "")),
            f"{fn.path}::{fn.qualname}",
            answer,
            hit=lines_in_order(fn.post_lines, code),
            score=ngram_overlap(code, fn.gold, n=self.config.n),
            rouge_l=rouge_l(code, fn.gold, code=True),
        )


class PrefixCompletion(_Task):
    """(c) Prefix completion of a changed function's first gap-free block."""

    task = "swe-prefix"

    def units(self, item: Item) -> list[tuple[str, Any]]:
        fs = [f for f in _functions(item, self.config.functions_per_instance) if len(_lines(f.first_block())) >= 2]
        return [(f"::{f.path}::{f.qualname}", f) for f in fs] or [("", None)]

    def split(self, fn: ChangedFunction) -> tuple[list[str], list[str]]:
        block = list(fn.first_block())
        k = min(max(1, round(len(block) * self.config.prefix_fraction)), len(block) - 1)
        while k < len(block) - 1 and not block[k - 1].strip():
            k += 1  # do not end the prefix on a blank line
        return block[:k], block[k:][: self.config.max_rest_lines]

    def request(self, item: Item, fn: ChangedFunction | None) -> tuple[Prompt, int] | str:
        if fn is None:
            return "no changed function with two or more lines"
        prefix, _ = self.split(fn)
        return f"# {fn.path}\n" + "\n".join(prefix) + "\n", self.config.max_new_tokens

    def finish(self, item: Item, fn: ChangedFunction, key: str, answer: str) -> SweItem:
        _, rest = self.split(fn)
        gold = "\n".join(rest)
        code = extract_code(answer)  # the same normaliser as function reproduction: a fenced continuation counts
        return SweItem(
            key,
            item.id,
            self.task,
            str(item.metadata.get("repo", "")),
            f"{fn.path}::{fn.qualname}",
            answer,
            hit=starts_with_lines(rest, code),
            score=ngram_overlap(code, gold, n=self.config.n),
            rouge_l=rouge_l(code, gold, code=True),
        )


TASKS: dict[str, type[_Task]] = {t.task: t for t in (FilePath, FuncRepro, PrefixCompletion)}


@dataclass(frozen=True)
class Comparison(Record):
    """Benchmark vs control: rates, gap, one-sided two-proportion test, minimum detectable effect."""

    task: str
    metric: str
    benchmark_rate: float
    control_rate: float
    gap: float
    test: TestResult
    mde: float | None
    note: str = ""


def compare(bench: SweResult, control: SweResult, *, filtered: bool = False, alpha: float = 0.05, power: float = 0.8) -> Comparison:
    """Is the task's rate on the benchmark above the control's? (``filtered``: file-path filtered accuracy.)"""
    from contam.stats.tests import two_proportion_ztest

    if filtered:
        k1, n1, k2, n2 = bench.hits_filtered, bench.n_filtered, control.hits_filtered, control.n_filtered
    else:
        k1, n1, k2, n2 = bench.hits, bench.n, control.hits, control.n
    if n1 == 0 or n2 == 0:
        raise InputError(f"{bench.task}: nothing to compare (benchmark n={n1}, control n={n2})")
    test = two_proportion_ztest(k1, n1, k2, n2, alternative="greater")
    mde, note = _mde(k2 / n2, n1, n2, alpha, power)
    metric = "filtered accuracy" if filtered else ("accuracy" if bench.task == "swe-filepath" else "verbatim rate")
    return Comparison(bench.task, metric, k1 / n1, k2 / n2, k1 / n1 - k2 / n2, test, mde, note)


def _mde(p_control: float, n1: int, n2: int, alpha: float, power: float) -> tuple[float | None, str]:
    """Smallest rate gap above the control's that a one-sided test detects with ``power``, from
    :func:`contam.stats.power.mde_unpaired`. Unequal arms enter as the equivalent per-arm size
    ``2·n1·n2/(n1+n2)`` (same ``1/n1 + 1/n2`` variance factor)."""
    from contam.stats.power import mde_unpaired

    n_eq = 2 * n1 * n2 / (n1 + n2)
    mde = mde_unpaired(n_eq, baseline=p_control, alpha=alpha, power=power, two_sided=False)
    if mde != mde:  # NaN: no gap up to a rate of 1 reaches the power
        return None, f"no gap is detectable with power {power} at n={n1} vs n={n2}"
    return float(mde), f"equivalent per-arm n = {n_eq:.1f}"
