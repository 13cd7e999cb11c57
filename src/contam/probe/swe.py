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

import re
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
_FENCE_LINE = re.compile(r"^[ \t]*```[\w+.#-]*[ \t]*$", re.M)


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


#: Words with dots that are not file names: abbreviations a path regex would otherwise take.
_NOT_FILES = frozenset({"i.e", "e.g", "etc", "vs", "cf", "a.k.a", "et.al", "approx", "no"})
#: Path-like tokens: runs of path characters holding a ``/`` or a ``.`` (``django/db/models/base.py``,
#: ``base.py``, ``django/db``), with URLs handled first.
_CANDIDATE = re.compile(r"[A-Za-z0-9_.\-~]+(?:/[A-Za-z0-9_.\-~]+)+/?|[A-Za-z0-9_\-~]+(?:\.[A-Za-z0-9_\-~]+)+")
_URL = re.compile(r"https?://[^\s`'\"<>()\[\]]+")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9_+\-]{0,9}$")


@dataclass(frozen=True)
class PathChoice(Record):
    """Which file path a model answer names, and why.

    ``rule``: ``known`` (the candidate is one of the repository's files the benchmark's patches
    name), ``known-suffix`` (it is the unique known file ending with the candidate), ``extension``
    (the first candidate whose last part has a file extension; one with a directory first),
    ``first`` (the first path-like candidate: no extension anywhere), or ``""`` (no candidate).
    ``candidates``: every normalised path-like token of the answer, in order.
    """

    path: str
    rule: str
    candidates: tuple[str, ...] = ()


def _normalise(p: str, repo: str) -> list[str]:
    """Spellings of one candidate; the first is the one used without known files: no ``./``, no
    diff-style ``a/``/``b/``, no leading ``owner/name/``. Later ones (the literal token, and
    without a leading ``name/``) only count when they are a known file."""
    p = p.strip("/").rstrip(".,;:")
    while p.startswith("./"):
        p = p[2:]
    literal, default = p, p
    for pre in ("a/", "b/", f"{repo}/" if repo else ""):
        if pre and default.startswith(pre) and len(default) > len(pre):
            default = default[len(pre) :]
    out = [default, literal]
    name = repo.split("/")[-1] if repo else ""
    if name and literal.startswith(f"{name}/") and len(literal) > len(name) + 1:
        out.append(literal[len(name) + 1 :])
    return list(dict.fromkeys(out))


def _url_path(url: str, repo: str) -> str:
    """The repository path inside a GitHub URL (``.../blob/<ref>/PATH``, ``.../tree/<ref>/PATH``);
    other URLs name no repository file."""
    m = re.search(r"github\.com/[^/]+/[^/]+/(?:blob|tree|raw)/[^/]+/([^#?]+)", url)
    if m:
        return m.group(1)
    m = re.search(r"raw\.githubusercontent\.com/[^/]+/[^/]+/[^/]+/([^#?]+)", url)
    return m.group(1) if m else ""


def _has_ext(p: str) -> bool:
    last = p.rsplit("/", 1)[-1]
    return bool(_EXT.search(last)) and last.casefold().rstrip(".") not in _NOT_FILES and not last.startswith(".")


def path_candidates(answer: str, repo: str = "") -> list[list[str]]:
    """Every path-like token of ``answer`` in order, each as its list of spellings
    (:func:`_normalise`). URLs give the repository path inside them, or nothing; version numbers
    (``3.2``, ``v4.0``) and abbreviations (``i.e.``, ``e.g.``) are not paths."""
    text = answer.replace("\\", "/")
    found: list[tuple[int, str]] = []
    for m in _URL.finditer(text):
        inner = _url_path(m.group(0), repo)
        if inner:
            found.append((m.start(), inner))
    text = _URL.sub(lambda m: " " * len(m.group(0)), text)
    for m in _CANDIDATE.finditer(text):
        tok = m.group(0).rstrip(".")
        last = tok.rsplit("/", 1)[-1]
        if "/" not in tok and (not _has_ext(tok) or re.fullmatch(r"v?\d+(?:\.\d+)*[a-z]?\d*", last, re.I)):
            continue  # a bare dotted word without a real extension: a version, a number, an abbreviation
        if last.casefold() in _NOT_FILES:
            continue
        found.append((m.start(), tok))
    return [_normalise(t, repo) for _, t in sorted(found, key=lambda x: x[0])]


def choose_path(answer: str, repo: str = "", known: frozenset[str] | set[str] | None = None) -> PathChoice:
    """The file path an answer names, from **every** path-like candidate (not the first match).

    Preference: a spelling that is one of the repository's ``known`` files (the files the
    benchmark's gold patches touch in that repository); else the unique known file that ends with
    a candidate; else the first candidate with a file extension (one with a directory first);
    else the first candidate. ``rule`` says which preference chose.

    >>> choose_path("In Django 3.2 the bug is in django/db/models/base.py", "django/django").path
    'django/db/models/base.py'
    >>> choose_path("See base.py, i.e. models", "django/django", {"django/db/models/base.py"}).rule
    'known-suffix'
    """
    cands = path_candidates(answer, repo)
    flat = tuple(dict.fromkeys(sp[0] for sp in cands))
    if not cands:
        return PathChoice("", "", ())
    if known:
        for spellings in cands:
            for sp in spellings:
                if sp in known:
                    return PathChoice(sp, "known", flat)
        for spellings in cands:
            hits = {k for k in known for sp in spellings if _has_ext(sp) and k.endswith("/" + sp)}
            if len(hits) == 1:
                return PathChoice(hits.pop(), "known-suffix", flat)
    with_ext = [sp[0] for sp in cands if _has_ext(sp[0])]
    if with_ext:
        return PathChoice(next((p for p in with_ext if "/" in p), with_ext[0]), "extension", flat)
    return PathChoice(cands[0][0], "first", flat)


def predicted_path(answer: str, repo: str = "", known: frozenset[str] | set[str] | None = None) -> str:
    """The file path a model answer names, normalised (no ``./``, ``a/``/``b/`` or ``owner/name/``
    prefix); see :func:`choose_path` for the rules.

    >>> predicted_path("The bug is in `./django/db/models/base.py`.", "django/django")
    'django/db/models/base.py'
    >>> predicted_path("In Django 3.2 the bug is in django/db/models/base.py", "django/django")
    'django/db/models/base.py'
    """
    return choose_path(answer, repo, known).path


def extract_code(answer: str) -> str:
    """The code in a model answer; the one normaliser of function reproduction **and** prefix
    completion, so a fenced continuation counts the same as a bare one.

    The first fence line opens a block when nothing but blanks precede it, when it carries a
    language tag (```` ```python ````), or when the text before it ends with a colon ("Here is the
    function:"); the block's content is the code (up to its closing fence or the end). Otherwise
    the fence closes code the answer began bare (a continuation that ends its imagined block),
    and the code is the text before it. No fence: the answer itself.

    >>> extract_code("```python\\n    return x\\n```\\nDone")
    '    return x\\n'
    >>> extract_code("    return x\\n```\\nMore prose")
    '    return x\\n'
    """
    m = _FENCE_LINE.search(answer)
    if not m:
        return answer
    before = answer[: m.start()]
    tag = m.group(0).strip()[3:]
    if before.strip() and not tag and not before.rstrip().endswith(":"):
        return before
    rest = answer[m.end() + 1 :]
    end = _FENCE_LINE.search(rest)
    return rest[: end.start()] if end else rest


def _lines(text: str | Sequence[str]) -> list[str]:
    seq = text.splitlines() if isinstance(text, str) else list(text)
    return [ln.strip() for ln in seq if ln.strip()]


def lines_in_order(gold: Sequence[str], output: str) -> bool:
    """Every non-blank gold line (indentation ignored) occurs in ``output``, in order.

    >>> lines_in_order(["def f():", "    return 1"], "def f():\\n    x = 0\\n    return 1")
    True
    """
    want, have = _lines(gold), iter(_lines(output))
    return bool(want) and all(any(w == h for h in have) for w in want)


def starts_with_lines(gold: Sequence[str], output: str) -> bool:
    """The output's first non-blank lines are the gold lines (indentation ignored)."""
    want, have = _lines(gold), _lines(output)
    return bool(want) and have[: len(want)] == want


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
