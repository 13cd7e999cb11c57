"""The level cascade of paper 001 (Algorithm 1): token → semantic → reasoning, plus a benchmark-level L4 hook.

Each candidate goes through the levels in order and stops at the first that flags it
(Algorithm 1's ``continue``); the :class:`~contam.scan.flags.DocResult` says which level fired,
the nearest benchmark item, and every score computed on the way. Level 1 is the n-gram scan
(:mod:`contam.scan.ngram`, IDF-weighted 13-gram coverage), level 2 :mod:`contam.scan.semantic`,
level 3 :mod:`contam.scan.reasoning`. Level 4 (performance cliff) judges the benchmark, not a
document: pass any callable as ``cliff`` and :meth:`Hierarchy.check_benchmark` calls it.

Thresholds are the paper's defaults unless calibrated (:mod:`contam.scan.calibrate`) on a
labelled validation set: ``Hierarchy(config.with_thresholds(calibration.thresholds))``.

>>> from contam.data import Document, load_benchmark                         # doctest: +SKIP
>>> items = load_benchmark("gsm8k")                                           # doctest: +SKIP
>>> h = Hierarchy(HierarchyConfig(levels=("token", "semantic"))).fit(items)   # doctest: +SKIP
>>> [r.level for r in h.scan([Document("d0", items[0].text)])]                # doctest: +SKIP
['token']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from contam.constraints import Constraints, Interval, validate
from contam.data import Document, Item
from contam.errors import ConfigError, InputError
from contam.models.base import Embedder
from contam.records import Record
from contam.scan.flags import LEVELS, DocResult, Evidence, Flag
from contam.scan.reasoning import ReasoningConfig, ReasoningMatch, ReasoningMatcher
from contam.scan.semantic import RULES as SEMANTIC_RULES
from contam.scan.semantic import SemanticConfig, SemanticScanner, SemanticScores, semantic_score_dict
from contam.scan.windows import score_windows

if TYPE_CHECKING:
    from contam.scan.options import ScanOptions

#: Least n-gram coverage the token level records at all (its own τ1 is applied afterwards).
TOKEN_FLOOR = 0.05


def parse_levels(levels: str | Sequence[str]) -> tuple[str, ...]:
    """``"all"``, ``"token,semantic"`` or a sequence, validated and put in cascade order.

    >>> parse_levels("reasoning,token")
    ('token', 'reasoning')
    """
    names = [s.strip() for s in (levels.split(",") if isinstance(levels, str) else levels) if s.strip()]
    if names == ["all"]:
        return LEVELS
    bad = [n for n in names if n not in LEVELS]
    if bad or not names:
        raise ConfigError(f"unknown level(s) {bad or names}: choose from {', '.join(LEVELS)} or 'all'")
    return tuple(lv for lv in LEVELS if lv in names)


@dataclass(frozen=True)
class Thresholds(Record):
    """One threshold per level and the semantic rule; the output of calibration. ``semantic_shortlist``
    false embeds every English document instead of those the shortlist keeps (recall on a genre the
    shortlist was not fitted on, at the full level's cost)."""

    token: float = 0.5
    semantic: float = SemanticConfig().threshold
    reasoning: float = 0.6
    semantic_rule: str = "nn"
    semantic_shortlist: bool = True

    @classmethod
    def load(cls, path: str | os.PathLike[str], benchmark: str | None = None) -> Thresholds:
        """Read thresholds written by ``contam eval-detectors --out`` (``{benchmark: {...}}``) or a
        single ``{"token": ..., "semantic": ..., ...}`` object; ``benchmark`` picks the entry."""
        import json

        p = Path(path)
        try:
            raw = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{p}: thresholds file not found (write one with `contam eval-detectors --out DIR`)") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            line = getattr(e, "lineno", None)
            raise InputError(f"not valid JSON ({type(e).__name__})", path=str(p), line=line) from None
        if not isinstance(raw, dict):
            raise InputError("expected a JSON object of thresholds", path=str(p))
        entry: Any = raw
        allowed = {f.name for f in fields(cls)}
        if not (set(raw) & allowed):  # not one thresholds object: one per benchmark
            keys = sorted(raw)
            if benchmark is None and len(keys) == 1:
                benchmark = keys[0]
            if benchmark not in raw:
                want = f"no entry for benchmark {benchmark!r}" if benchmark else "several benchmarks in the file"
                raise ConfigError(f"{p}: {want}; it holds {', '.join(keys) or 'nothing'} (name one benchmark)")
            entry = raw[benchmark]
        if not isinstance(entry, dict) or set(entry) - allowed:
            bad = sorted(set(entry) - allowed) if isinstance(entry, dict) else [type(entry).__name__]
            raise InputError(
                f"unknown threshold field(s) {', '.join(bad)} (expected {', '.join(sorted(allowed))})", path=str(p), field=benchmark
            )
        t = cls(**entry)
        for name in ("token", "semantic", "reasoning"):
            v = getattr(t, name)
            if not isinstance(v, int | float) or not 0.0 <= float(v) <= 1.0:
                raise InputError(f"threshold must be a number in [0, 1], got {v!r}", path=str(p), field=name)
        if not isinstance(t.semantic_shortlist, bool):
            raise InputError(f"expected true or false, got {t.semantic_shortlist!r}", path=str(p), field="semantic_shortlist")
        if t.semantic_rule not in SEMANTIC_RULES:
            raise InputError(
                f"unknown semantic rule {t.semantic_rule!r} (choose from {', '.join(SEMANTIC_RULES)})", path=str(p), field="semantic_rule"
            )
        return t


@dataclass(frozen=True)
class HierarchyConfig:
    """Which levels run and their settings (paper 001 Algorithm 1, Table 3 defaults).

    ``token`` is an :class:`~contam.scan.ngram.NGramConfig` (13-grams by default); ``stop_at_first``
    follows Algorithm 1 (a document flagged at one level skips the later ones).

    >>> HierarchyConfig(levels="all").levels
    ('token', 'semantic', 'reasoning')
    """

    levels: tuple[str, ...] | str = LEVELS
    token: Any = None
    semantic: SemanticConfig = field(default_factory=SemanticConfig)
    reasoning: ReasoningConfig = field(default_factory=ReasoningConfig)
    stop_at_first: bool = True
    chunk_size: int = 200_000

    _constraints: ClassVar[Constraints] = {"chunk_size": Interval(int, 1, None)}

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", parse_levels(self.levels))
        validate(self)

    @property
    def thresholds(self) -> Thresholds:
        tok = self.token.threshold if self.token is not None else 0.5
        return Thresholds(tok, self.semantic.threshold, self.reasoning.threshold, self.semantic.rule, self.semantic.shortlist)

    @classmethod
    def for_embedder(cls, embedder: Any, **fields: Any) -> HierarchyConfig:
        """The settings ``fields`` with the semantic level's calibrated defaults for ``embedder``
        (:data:`contam.scan.semantic.EMBEDDER_DEFAULTS`: rule ``nn``, its own cosine thresholds),
        kept unless ``fields`` sets ``semantic``. :class:`Hierarchy` uses it when given no config."""
        config = cls(**fields)
        if "semantic" not in fields:
            config = replace(config, semantic=SemanticConfig.for_embedder(embedder))
        return config

    @classmethod
    def for_scan(cls, embedder: Any, opts: ScanOptions) -> HierarchyConfig:
        """What a scan with ``opts`` runs (the local and the Ray engine alike): :meth:`for_embedder`
        with its levels and token settings, the semantic level's windows, and its thresholds file."""
        config = cls.for_embedder(embedder, levels=opts.levels, token=opts.config)
        config = replace(config, semantic=replace(config.semantic, max_windows=opts.semantic_windows))
        return config.with_thresholds(opts.thresholds) if opts.thresholds is not None else config

    def with_thresholds(self, t: Thresholds) -> HierarchyConfig:
        """A copy using calibrated thresholds."""
        from contam.scan.ngram import NGramConfig

        token = replace(self.token or NGramConfig(), threshold=max(min(t.token, 1.0), 1e-6))
        return replace(
            self,
            token=token,
            semantic=replace(self.semantic, threshold=t.semantic, rule=t.semantic_rule, shortlist=t.semantic_shortlist),
            reasoning=replace(self.reasoning, threshold=t.reasoning),
        )


@dataclass
class LevelScores:
    """Every level's scores for every document (no early exit): what calibration and evaluation need."""

    token: np.ndarray  # (n,) best n-gram coverage, 0 when nothing matched
    token_results: list[DocResult]
    semantic: SemanticScores | None
    reasoning: list[ReasoningMatch] | None

    def decisions(self, t: Thresholds, levels: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """Cascade verdict and first firing level per document under thresholds ``t``."""
        n = len(self.token)
        hit = np.zeros(n, dtype=bool)
        level = [""] * n
        for lv in levels:
            fired = self.level_decision(lv, t)
            new = fired & ~hit
            for i in np.flatnonzero(new):
                level[i] = lv
            hit |= fired
        return hit, level

    def level_decision(self, lv: str, t: Thresholds) -> np.ndarray:
        n = len(self.token)
        if lv == "token":
            return self.token >= t.token
        if lv == "semantic" and self.semantic is not None:
            return self.semantic.flagged(t.semantic, t.semantic_rule)
        if lv == "reasoning" and self.reasoning is not None:
            return np.array([m.index >= 0 and m.sim.total > t.reasoning for m in self.reasoning], dtype=bool)
        return np.zeros(n, dtype=bool)


@dataclass(frozen=True)
class BenchmarkVerdict(Record):
    """Level 4's answer about the whole benchmark (filled by a performance-cliff probe)."""

    level: str
    contaminated: bool
    p_value: float | None = None
    delta: float | None = None
    details: dict[str, Any] = field(default_factory=dict)


#: Level-4 hook: called with the benchmark items, returns an object or dict with ``p_value``
#: (and optionally ``delta``/``contaminated``), e.g. a :mod:`contam.probe.cliff` result.
BenchmarkCheck = Callable[[Sequence[Item]], Any]


class Hierarchy:
    """The cascade: ``Hierarchy(HierarchyConfig(levels=...)).fit(items).scan(docs)``."""

    def __init__(
        self,
        config: HierarchyConfig | None = None,
        embedder: Embedder | None = None,
        cliff: BenchmarkCheck | None = None,
        trace_model: Any | None = None,
    ) -> None:
        self.config = config or HierarchyConfig.for_embedder(embedder)
        self.embedder = embedder
        self.cliff = cliff
        #: A LanguageModel that writes a chain of thought for texts without one (Algorithm 1's
        #: ``ExtractReasoning(M(x))``); without it, level 3 reads the text's own solution.
        self.trace_model = trace_model
        self.items: list[Item] = []
        #: Benchmark-level semantic signal of the last scan: DBSCAN clusters where several
        #: candidates gather around benchmark items (:meth:`SemanticScores.cluster_summary`).
        self.cluster_summary: list[dict[str, Any]] = []

    def fit(
        self,
        items: Iterable[Item],
        clean: Sequence[str] | None = None,
        item_embeddings: np.ndarray | None = None,
        corpus_sample: Sequence[str] | None = None,
    ) -> Hierarchy:
        """Index the benchmark for every configured level (``clean``: clean same-genre text for L2's
        anomaly model; ``corpus_sample``: corpus texts for L1's stop-grams when
        ``token.stopgram_df > 0``)."""
        from contam.scan.ngram import NGramConfig, NGramScanner

        self.items = list(items)
        if not self.items:
            raise ConfigError("the cascade needs at least one benchmark item")
        cfg = self.config
        self.token = self.semantic = self.reasoning = None
        self.cluster_summary = []
        if "token" in cfg.levels:
            # Record coverage from a low floor so calibration sees scores below τ1 too.
            self.token = NGramScanner(replace(cfg.token or NGramConfig(), threshold=TOKEN_FLOOR)).fit(
                self.items, corpus_sample=corpus_sample
            )
        if "semantic" in cfg.levels:
            self.semantic = SemanticScanner(cfg.semantic, self.embedder).fit(self.items, clean=clean, item_embeddings=item_embeddings)
        if "reasoning" in cfg.levels:
            self.reasoning = ReasoningMatcher(cfg.reasoning).fit(self._traces([it.text for it in self.items]))
        return self

    def language_summary(self) -> dict[str, Any]:
        """Documents per detected language at the semantic level, the embedder non-English text went
        to, and the languages that embedder was not trained on (scored, but named: their flags and
        misses are less certain); for a benchmark mostly not in English, its languages. Empty when
        the level did not route by language."""
        sem = self.semantic
        if sem is None or not sem.language_counts:
            return {}
        out: dict[str, Any] = {
            "documents_by_language": dict(sem.language_counts.most_common()),
            "non_english_embedder": sem.config.multilingual,
        }
        if sem.foreign_benchmark:
            out["benchmark_languages"] = dict(sem.item_languages.most_common())
            out["benchmark_note"] = (
                f"the benchmark is mostly not English ({', '.join(out['benchmark_languages'])}): "
                f"every document was compared with {sem.config.multilingual}"
            )
        if sem.uncovered:
            out["not_covered"] = dict(sem.uncovered.most_common())
            out["warning"] = (
                f"{sum(sem.uncovered.values())} document(s) in language(s) {', '.join(sorted(sem.uncovered))} that "
                f"{sem.config.multilingual} was not trained on: their semantic scores are less reliable"
            )
        return out

    # -- scoring ------------------------------------------------------------------------
    def _token_scores(self, docs: Sequence[Document]) -> tuple[np.ndarray, list[DocResult]]:
        if self.token is None:
            return np.zeros(len(docs)), [DocResult(doc_id=d.id, contaminated=False) for d in docs]
        res = list(self.token.scan(docs))
        return np.array([r.flags[0].score if r.flags else 0.0 for r in res], dtype=np.float64), res

    def score_levels(self, docs: Sequence[Document], embeddings: np.ndarray | None = None) -> LevelScores:
        """Every configured level on every document (for calibration and evaluation)."""
        tok, tres = self._token_scores(docs)
        sem = self.semantic.score([d.text for d in docs], embeddings) if self.semantic is not None else None
        rea = None
        if self.reasoning is not None:
            extra = sem.nearest if sem is not None else None
            rea = self.reasoning.match(self._traces([d.text for d in docs]), extra=extra)
        return LevelScores(tok, tres, sem, rea)

    def _traces(self, texts: list[str]) -> list[str]:
        """Texts for level 3: unchanged when they carry a chain; with a ``trace_model``, texts
        too short of steps get the model's step-by-step solution appended."""
        if self.trace_model is None:
            return texts
        from contam.scan.reasoning import extract_steps

        need = [i for i, t in enumerate(texts) if sum(s.kind != "answer" for s in extract_steps(t)) < self.config.reasoning.min_steps]
        if not need:
            return texts
        prompts = [
            [{"role": "user", "content": "Solve this step by step, one numbered step per line.\n\n" + texts[i][:2000]}] for i in need
        ]
        outs = self.trace_model.generate(prompts, max_new_tokens=256, temperature=0.0, seed=0)
        done = list(texts)
        for i, o in zip(need, outs, strict=True):
            done[i] = texts[i] + "\n" + (o[0].text if o else "")
        return done

    def scan(self, docs: Iterable[Document]) -> Iterator[DocResult]:
        """Verdicts in input order. Documents are taken in chunks of ``chunk_size`` (DBSCAN
        clusters a chunk at once); within a chunk each level only sees what earlier levels passed."""
        chunk: list[Document] = []
        for d in docs:
            chunk.append(d)
            if len(chunk) >= self.config.chunk_size:
                yield from self.scan_chunk(chunk)
                chunk = []
        if chunk:
            yield from self.scan_chunk(chunk)

    def scan_chunk(self, docs: list[Document]) -> list[DocResult]:
        """Verdicts for one chunk of documents (what :meth:`scan` runs on each chunk; the cascade's
        worker processes call it on their batches, :mod:`contam.scan.cascade_pool`)."""
        cfg = self.config
        th = cfg.thresholds
        n = len(docs)
        scores: list[dict[str, Any]] = [{} for _ in range(n)]
        flags: list[tuple[Flag, ...]] = [() for _ in range(n)]
        level = [""] * n
        todo = np.ones(n, dtype=bool)
        nearest: list[np.ndarray | None] = [None] * n
        if self.token is not None:
            tok, tres = self._token_scores(docs)
            for i in range(n):
                scores[i]["token_coverage"] = round(float(tok[i]), 6)
                if tok[i] >= th.token:
                    level[i], flags[i] = "token", tuple(replace(f, threshold=th.token) for f in tres[i].flags if f.score >= th.token)
                    todo[i] = not cfg.stop_at_first
        if self.semantic is not None and todo.any():
            idx = np.flatnonzero(todo)
            # A long document is read in windows, the one the rule rates highest kept (contam.scan.windows).
            ws = score_windows(self.semantic, [docs[i].text for i in idx], th.semantic_rule)
            sem = ws.scores
            hit = sem.flagged(th.semantic, th.semantic_rule)
            self.cluster_summary.extend(ws.per_window.cluster_summary(self.items, [docs[idx[d]].id for d in ws.owner]))
            located = ws.passing(th.semantic, th.semantic_rule) if ws.per_window is not sem and hit.any() else None
            for k, i in enumerate(idx):
                scores[i].update(semantic_score_dict(sem, k))
                scores[i]["nearest_item"] = self.items[int(sem.nearest[k, 0])].id
                nearest[i] = sem.nearest[k]
                if hit[k]:
                    if not level[i]:
                        level[i] = "semantic"
                    start, _, seen = ws.kept(k)
                    flag = self.semantic.flag(docs[i].id, k, sem, th.semantic, th.semantic_rule, text=seen)
                    if located is not None and len(docs[i].text) > self.semantic.config.max_chars:
                        # Every window that passes for the item, with its span (what --mode mask masks).
                        n = len(docs[i].text)
                        where = [
                            Evidence(kind="window", text=f"characters {a}-{b} of {n}", doc_span=(a, b), weight=float(a))
                            for a, b in located[k]
                        ]
                        flag = replace(flag, evidence=(*flag.evidence, *where), scores={**flag.scores, "window_start": float(start)})
                    flags[i] = flags[i] + (flag,)
                    todo[i] = not cfg.stop_at_first
        if self.reasoning is not None and todo.any():
            idx = np.flatnonzero(todo)
            extra = [row if (row := nearest[i]) is not None else () for i in idx]
            matches = self.reasoning.match(self._traces([docs[i].text for i in idx]), extra=extra)
            for k, i in enumerate(idx):
                m = matches[k]
                scores[i].update(
                    {"reasoning": m.sim.total, "struct": m.sim.struct, "step": m.sim.step, "arg": m.sim.arg, "steps": float(m.n_steps)}
                )
                if m.index >= 0 and m.sim.total > th.reasoning:
                    if not level[i]:
                        level[i] = "reasoning"
                    flags[i] = flags[i] + (self._reasoning_flag(docs[i].id, m, th.reasoning),)
        out = []
        for i, d in enumerate(docs):
            for f in flags[i]:  # every flag carries every score computed for the document
                f.scores.update({k: v for k, v in scores[i].items() if isinstance(v, float)})
            out.append(
                DocResult(
                    doc_id=d.id, contaminated=bool(level[i]), level=level[i], flags=flags[i], source=d.source, line=d.line, scores=scores[i]
                )
            )
        return out

    def _reasoning_flag(self, doc_id: str, m: ReasoningMatch, threshold: float) -> Flag:
        item = self.items[m.index]
        return Flag(
            doc_id=doc_id,
            item_id=item.id,
            level="reasoning",
            score=m.sim.total,
            threshold=threshold,
            part="answer",
            benchmark=item.benchmark,
            scores={"struct": m.sim.struct, "step": m.sim.step, "arg": m.sim.arg},
            evidence=(
                Evidence(kind="struct", weight=m.sim.struct),
                Evidence(kind="step", weight=m.sim.step),
                Evidence(kind="arg", text=(item.solution or item.text)[:200], weight=m.sim.arg),
            ),
        )

    # -- level 4 ------------------------------------------------------------------------
    def check_benchmark(self, alpha: float = 0.05) -> BenchmarkVerdict | None:
        """Run the level-4 hook on the fitted benchmark; ``None`` when no hook was given."""
        if self.cliff is None:
            return None
        res = self.cliff(self.items)
        get = res.get if isinstance(res, dict) else (lambda k, d=None: getattr(res, k, d))
        p = get("p_value")
        if p is None and get("test") is not None:  # a contam.probe.cliff.CliffResult
            p = getattr(get("test"), "p_value", None)
        delta = get("delta")
        contaminated = get("contaminated", get("flagged"))
        if contaminated is None:
            contaminated = p is not None and float(p) < alpha
        to_dict: Callable[[], dict[str, Any]] | None = getattr(res, "to_dict", None)  # a Record (CliffResult), or a dict
        details = to_dict() if callable(to_dict) else (dict(res) if isinstance(res, dict) else {})
        return BenchmarkVerdict(
            level="performance",
            contaminated=bool(contaminated),
            p_value=None if p is None else float(p),
            delta=None if delta is None else float(delta),
            details=details,
        )


def cliff_check(model: Any, k: int = 5, seed: int = 0) -> BenchmarkCheck:
    """The level-4 hook backed by :class:`contam.probe.cliff.CliffProbe`: ``k`` audited variants
    per item from :func:`contam.perturb.make_variant_set`, answered by ``model``, paired t-test.

    >>> h = Hierarchy(cliff=cliff_check(load("smollm2"), k=5))   # doctest: +SKIP
    >>> h.fit(items).check_benchmark().p_value                    # doctest: +SKIP
    """

    def run(items: Sequence[Item]) -> Any:
        from contam.perturb import make_variant_set
        from contam.probe.cliff import CliffConfig, CliffProbe

        variants: dict[str, list[Item]] = {}
        for v in make_variant_set(items, variants=k, seed=seed):
            variants.setdefault(v.original_id, []).append(
                Item(id=v.variant_id, question=v.question, answer=v.answer, solution=v.solution, choices=v.choices, benchmark="variant")
            )
        return CliffProbe(CliffConfig(k=k, seed=seed)).run(model, items, variants=variants)

    return run
