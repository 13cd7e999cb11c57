"""Token-level (L1) n-gram overlap between a corpus and a benchmark, IDF-weighted.

The GPT-3 / lm-eval convention (Brown et al. 2020, appendix C): 13-grams of lowercased words
with punctuation stripped. The Llama-2 convention (Touvron et al. 2023, appendix A.6): shorter
token n-grams (8 here; our tokens are the same normalised words) with a skip budget, so a
matched span may differ from the item in a few positions. Following datatrove's
``find_overlap_ngrams`` every item is indexed in three parts: the question (with its options),
the answer (solution, or gold answer), and the seam, the n-grams that span the end of the
question and the start of the answer. Following allenai/decon, n-grams are weighted by their
inverse document frequency over the benchmark, so boilerplate shared by many items ("how many
... does she have left") carries almost no weight, and each (document, item part) pair is
scored by the IDF-weighted fraction of the part's tokens that matched n-grams cover.

Parts shorter than ``n`` words (but at least ``min_words``) are indexed by their first and
last ``min_words`` words and checked as exact, or near-exact by the longest-common-substring
ratio, around the anchor (:mod:`contam.scan.exact`).

>>> from contam.data import Document, load_benchmark
>>> scanner = NGramScanner(NGramConfig()).fit(load_benchmark("gsm8k"))
>>> leak = "Worksheet 3. " + load_benchmark("gsm8k")[7].question + " Show your work."
>>> r = scanner.scan_one(Document(id="page-1", text=leak))
>>> r.contaminated, r.best.item_id, r.best.part, round(r.best.score, 2)
(True, 'gsm8k/test/7', 'question', 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import ClassVar

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from contam.constraints import Constraints, Each, Interval, Options, validate
from contam.data import Document, Item
from contam.errors import ConfigError
from contam.scan.exact import lcs_ratio
from contam.scan.flags import DocResult, Evidence, Flag
from contam.scan.hashing import normalized_words, window_hashes, word_hashes, word_spans
from contam.scan.ngram_index import PART_NAMES, NGramIndex, match_runs, unique
from contam.scan.prefilter import Prefilter


@dataclass(frozen=True)
class NGramConfig:
    """Settings of the n-gram scan. Defaults are the GPT-3 / lm-eval style.

    ``n``: words per n-gram (13 in GPT-3 and lm-eval). ``threshold``: least IDF-weighted token
    coverage of an item part for a flag. ``skip``: unmatched tokens tolerated between matched
    ones (Llama 2's skip budget; 0 = strict). ``min_words``: shortest part that is indexed at all.
    ``seam_threshold``: least coverage of the seam (it is only ``2n - 2`` tokens long,
    so two chance n-grams would cover half of it). ``anchor_words``: parts shorter than this are also compared whole around anchor hits (their
    first, middle and last ``min_words`` words): exact, near-exact (rapidfuzz alignment ratio at
    least ``near_exact``) or by longest-common-substring ratio (at least ``lcs_threshold``). ``max_df``: n-grams
    found in more than this fraction of items (and in more than 20 items) do not generate
    candidates (they still count once a pair is a candidate). ``idf=False`` weighs all n-grams 1.
    ``prefilter``: pass only the documents that can be flagged to the exact scorer (same
    results, several times faster; off only to check that claim).

    >>> NGramConfig.llama2().n, NGramConfig.llama2().skip
    (8, 4)
    """

    n: int = 13
    threshold: float = 0.5
    skip: int = 0
    min_words: int = 8
    lcs_threshold: float = 0.8
    near_exact: float = 0.9
    seam_threshold: float = 0.8
    anchor_words: int = 80
    max_df: float = 0.05
    idf: bool = True
    parts: tuple[str, ...] = PART_NAMES
    batch_bytes: int = 2 << 20
    prefilter: bool = True
    #: Corpus-side boilerplate (:mod:`contam.scan.stopgrams`): benchmark n-grams found in at least
    #: this share of a corpus sample become stop-grams (0 = off); and n-grams mostly inside a
    #: match of ``reject_patterns`` (regexes, e.g. ``stopgrams.DEFAULT_REJECT_PATTERNS``).
    stopgram_df: float = 0.0
    stopgram_min_docs: int = 3
    reject_patterns: tuple[str, ...] = ()

    _constraints: ClassVar[Constraints] = {
        "n": Interval(int, 2, None),
        "threshold": Interval(float, 0, 1, closed="right"),
        "skip": Interval(int, 0, None),
        "min_words": Interval(int, 2, None),
        "lcs_threshold": Interval(float, 0, 1),
        "near_exact": Interval(float, 0, 1),
        "seam_threshold": Interval(float, 0, 1),
        "anchor_words": Interval(int, 0, None),  # 0: no whole-part comparison around anchors
        "max_df": Interval(float, 0, 1),
        "parts": Each(Options(*PART_NAMES)),
        "batch_bytes": Interval(int, 1, None),
        "stopgram_df": Interval(float, 0, 1),  # 0: off
        "stopgram_min_docs": Interval(int, 0, None),
    }

    def __post_init__(self) -> None:
        validate(self)
        if self.reject_patterns:
            from contam.scan.stopgrams import compile_patterns

            compile_patterns(self.reject_patterns)

    @classmethod
    def gpt3(cls, **overrides: object) -> NGramConfig:
        """13-grams, no skips (GPT-3, lm-eval-harness decontamination)."""
        return cls(**{"n": 13, "skip": 0, **overrides})

    @classmethod
    def llama2(cls, **overrides: object) -> NGramConfig:
        """8-grams with a skip budget of 4 tokens (Llama 2, appendix A.6)."""
        return cls(**{"n": 8, "skip": 4, **overrides})


class NGramScanner:
    """``NGramScanner(NGramConfig()).fit(items).scan(documents)`` yields one
    :class:`~contam.scan.flags.DocResult` per document."""

    def __init__(self, config: NGramConfig | None = None) -> None:
        self.config = config or NGramConfig()
        self.index: NGramIndex | None = None

    def fit(self, items: Iterable[Item], corpus_sample: Iterable[str] | None = None) -> NGramScanner:
        """Index ``items``; with ``stopgram_df`` > 0, n-grams common in ``corpus_sample`` (texts of
        the corpus to be scanned) are dropped, as are those inside ``reject_patterns``."""
        from contam.scan.stopgrams import learn_stopgrams, reject_ngrams

        cfg = self.config
        self.index = NGramIndex.build(list(items), cfg)
        if cfg.reject_patterns:
            self.index.drop_ngrams(reject_ngrams(self.index, cfg.reject_patterns))
        if cfg.stopgram_df > 0 and corpus_sample is not None:
            self.index.drop_ngrams(learn_stopgrams(self.index, corpus_sample, cfg.stopgram_df, cfg.stopgram_min_docs))
        return self

    def scan(self, docs: Iterable[Document]) -> Iterator[DocResult]:
        """One result per document, in input order; documents are hashed in batches."""
        batch: list[Document] = []
        size = 0
        for doc in docs:
            batch.append(doc)
            size += len(doc.text)
            if size >= self.config.batch_bytes:
                yield from self.scan_batch(batch, keep_all=True)
                batch, size = [], 0
        if batch:
            yield from self.scan_batch(batch, keep_all=True)

    def scan_one(self, doc: Document) -> DocResult:
        return self.scan_batch([doc], keep_all=True)[0]

    @property
    def prefilter(self) -> Prefilter:
        """The recall-safe candidate filter in front of the exact scorer (:mod:`contam.scan.prefilter`)."""
        return self._fitted().prefilter

    def scan_batch(self, docs: list[Document], keep_all: bool = False, prefiltered: bool = False) -> list[DocResult]:
        """Scan a batch; returns results of flagged documents only unless ``keep_all``.

        Only the prefilter's candidates reach the exact scorer (``prefiltered``: ``docs`` are
        candidates already); the results are the same as scoring every document.
        """
        idx = self._fitted()
        if self.config.prefilter and not prefiltered and docs:
            cand = idx.prefilter.candidates([d.text for d in docs])
            if len(cand) < len(docs):
                picked = cand.tolist()
                found = self._scan_exact([docs[i] for i in picked], keep_all=keep_all)
                if not keep_all:
                    return found
                out = [_clean(d) for d in docs]  # documents the prefilter cleared
                for i, r in zip(picked, found, strict=True):
                    out[i] = r
                return out
        return self._scan_exact(docs, keep_all=keep_all)

    def _scan_exact(self, docs: list[Document], keep_all: bool = False) -> list[DocResult]:
        idx = self._fitted()
        cfg = self.config
        wh, starts, ends, doc_of_word, offsets = word_hashes([d.text for d in docs], with_offsets=True)
        word_start = np.searchsorted(doc_of_word, np.arange(len(docs) + 1))
        self._spans = _SpanSource(docs, starts, ends, word_start, offsets)
        flags: dict[int, list[Flag]] = {}
        h, first = window_hashes(wh, doc_of_word, cfg.n)
        hit, pos = idx.lookup(h, first)
        if len(hit):
            for d, part_flags in self._score_ngrams(docs, hit, pos, doc_of_word, word_start).items():
                flags.setdefault(d, []).extend(part_flags)
        if idx.has_anchors:
            ha, fa = window_hashes(wh, doc_of_word, cfg.min_words)
            for d, f in self._score_anchors(docs, ha, fa, wh, doc_of_word, word_start).items():
                flags.setdefault(d, []).extend(f)
        out: list[DocResult] = []
        for d in range(len(docs)) if keep_all else sorted(flags):
            doc = docs[d]
            fl = _dedupe(flags[d]) if d in flags else []
            if fl:
                out.append(
                    DocResult(
                        doc_id=doc.id,
                        contaminated=True,
                        level="token",
                        flags=tuple(fl),
                        source=doc.source,
                        line=doc.line,
                        scores={"max_coverage": fl[0].score},
                    )
                )
            elif keep_all:
                out.append(_clean(doc))
        return out

    # -- n-gram coverage ---------------------------------------------------------------
    def _score_ngrams(
        self, docs: list[Document], hit: np.ndarray, pos: np.ndarray, doc_of_word: np.ndarray, word_start: np.ndarray
    ) -> dict[int, list[Flag]]:
        idx = self._fitted()
        cfg = self.config
        # ``pos`` ascends (lookup keeps the windows' order), so hits come grouped by document.
        hit_doc = doc_of_word[pos]
        cuts = [0, *(np.flatnonzero(np.diff(hit_doc)) + 1).tolist(), len(hit)]
        seam_threshold = max(cfg.threshold, cfg.seam_threshold)
        out: dict[int, list[Flag]] = {}
        for lo, hi in pairwise(cuts):
            d = int(hit_doc[lo])
            doc_u = unique(hit[lo:hi])
            # item -> part name -> (coverage, n-gram index of each matched window of the part)
            by_item: dict[int, dict[str, tuple[float, np.ndarray]]] = {}
            for p in idx.reachable_parts(doc_u, cfg.threshold):
                cov, matched = idx.coverage(p, doc_u)
                kind = int(idx.part_kind[p])
                if cov >= (cfg.threshold if kind != 2 else seam_threshold):
                    by_item.setdefault(int(idx.part_item[p]), {})[PART_NAMES[kind]] = (cov, idx.window_ngrams(p)[matched])
            if not by_item:
                continue
            local_hits = (hit[lo:hi], pos[lo:hi] - word_start[d])
            out[d] = [self._ngram_flag(docs[d], d, item, parts, local_hits) for item, parts in by_item.items()]
        return out

    def _ngram_flag(
        self,
        doc: Document,
        doc_index: int,
        item_idx: int,
        parts: dict[str, tuple[float, np.ndarray]],
        local_hits: tuple[np.ndarray, np.ndarray],
    ) -> Flag:
        idx = self._fitted()
        item = idx.items[item_idx]
        best = max(parts, key=lambda k: (parts[k][0], k == "question"))
        # The question and anything of the answer (its own n-grams or the seam into it): the whole item.
        part = "item" if "question" in parts and ("answer" in parts or "seam" in parts) else best
        spans = self._spans.get(doc_index)
        hit_u, hit_pos = local_hits  # n-gram index and word position (ascending, distinct) of the document's hits
        evidence: list[Evidence] = []
        for name, (_, matched_u) in parts.items():
            # The hits on the part's matched n-grams (their positions ascend), merged into runs.
            distinct, run_a, run_b, windows = match_runs(hit_u, hit_pos, matched_u, self.config.n)
            evidence.extend(_runs(doc.text, spans, run_a.tolist(), run_b.tolist(), windows, name, float(idx.hash_idf[distinct].sum())))
        evidence.sort(key=lambda e: e.doc_span or (0, 0))
        scores = {f"coverage_{k}": round(v[0], 4) for k, v in parts.items()}
        scores["coverage"] = round(parts[best][0], 4)
        scores["ngrams"] = float(sum(len(v[1]) for v in parts.values()))
        return Flag(
            doc_id=doc.id,
            item_id=item.id,
            level="token",
            score=parts[best][0],
            threshold=self.config.threshold,
            part=part,
            benchmark=item.benchmark,
            scores=scores,
            evidence=tuple(evidence),
        )

    # -- short parts: anchors, then exact or LCS -------------------------------------------
    def _score_anchors(
        self, docs: list[Document], ha: np.ndarray, fa: np.ndarray, wh: np.ndarray, doc_of_word: np.ndarray, word_start: np.ndarray
    ) -> dict[int, list[Flag]]:
        idx = self._fitted()
        cfg = self.config
        out: dict[int, list[Flag]] = {}
        parts, starts, at = idx.anchor_hits(ha, fa)
        if not len(parts):
            return out
        # Python ints throughout the loop: indexing numpy arrays per hit makes a scalar object each time.
        # The document holding the anchor window (where the part would start may lie before
        # it: then it is compared from the document's start), so a document's result does
        # not depend on its neighbours in the batch.
        hit_doc = doc_of_word[at].tolist()
        bounds = word_start.tolist()
        seen: set[tuple[int, int]] = set()  # (document, part) pairs flagged
        # (document, part, start) comparisons that failed: the outcome depends on nothing else,
        # so another anchor of the part implying the same start would only fail again.
        failed: set[tuple[int, int, int]] = set()
        spans_of = self._spans.get
        thresholds = {"exact": 1.0, "near_exact": cfg.near_exact, "lcs": cfg.lcs_threshold}
        # A ratio below both bounds used below is only compared and loses, so rapidfuzz may stop
        # early there (it returns 0; at or above the cutoff, the same ratio as without one). A
        # hair under the bound, so that rounding never cuts a ratio right at it.
        near_cutoff = max(0.0, min(cfg.near_exact, cfg.lcs_threshold - 0.05) * 100.0 - 1e-3)

        for p, start, d in zip(parts.tolist(), starts.tolist(), hit_doc, strict=True):
            if (d, p) in seen:
                continue
            lo, hi = bounds[d], bounds[d + 1]
            start = max(start, lo)
            if (d, p, start) in failed:
                continue
            key = idx.short_key(p)
            end = start + len(key) // 8  # 8 bytes per word hash
            spans = spans_of(d)
            if end <= hi and wh[start:end].tobytes() == key:
                kind, score, a, b = "exact", 1.0, start - lo, end - lo - 1
            else:
                a, b = max(0, start - lo - 2), min(hi - lo - 1, end - lo + 1)
                if b < a:
                    failed.add((d, p, start))
                    continue
                # The folded words of the window (the part's are folded the same way).
                window = " ".join(normalized_words(docs[d].text[spans.start(a) : spans.end(b)]))
                part_norm = idx.short_norm[p]
                if near_cutoff and _near_bound(part_norm, window) < near_cutoff:
                    near = 0.0  # what partial_ratio with the cutoff returns, found without its search
                else:
                    near = fuzz.partial_ratio(part_norm, window, score_cutoff=near_cutoff) / 100.0
                if near >= cfg.near_exact:
                    kind, score = "near_exact", near
                else:
                    # A common substring of ratio r aligns at least as well as r, so a poor alignment
                    # rules the (pure-Python, quadratic) substring search out.
                    lcs = lcs_ratio(part_norm, window) if near >= cfg.lcs_threshold - 0.05 else 0.0
                    if lcs < cfg.lcs_threshold:
                        failed.add((d, p, start))
                        continue
                    kind, score = "lcs", lcs
            seen.add((d, p))
            item = idx.items[int(idx.part_item[p])]
            name = PART_NAMES[idx.part_kind[p]]
            s0, s1 = spans.start(a), spans.end(b)
            ev = Evidence(kind=kind, text=docs[d].text[s0:s1][:1000], doc_span=(s0, s1), item_span=None, part=name, weight=score)
            out.setdefault(d, []).append(
                Flag(
                    doc_id=docs[d].id,
                    item_id=item.id,
                    level="token",
                    score=score,
                    threshold=thresholds[kind],
                    part=name,
                    benchmark=item.benchmark,
                    scores={kind: round(score, 4)},
                    evidence=(ev,),
                )
            )
        return out

    def _fitted(self) -> NGramIndex:
        if self.index is None:
            raise ConfigError("NGramScanner.fit(items) must be called before scanning")
        return self.index


class _ArraySpans:
    """Word spans of a document: words ``base`` to ``base + length - 1`` of two arrays, moved
    by ``-shift`` (ASCII: straight from the batch's byte offsets, without copying them)."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray, base: int = 0, shift: int = 0, length: int | None = None) -> None:
        self.starts, self.ends, self.base, self.shift = starts, ends, base, shift
        self.length = len(starts) if length is None else length

    def __len__(self) -> int:
        return self.length

    def start(self, i: int) -> int:
        """Where word ``i`` (0 <= i < len) starts."""
        return int(self.starts[self.base + i]) - self.shift

    def end(self, i: int) -> int:
        """Where word ``i`` (0 <= i < len) ends."""
        return int(self.ends[self.base + i]) - self.shift

    def __getitem__(self, i: int) -> tuple[int, int]:
        return self.start(i), self.end(i)


class _SpanSource:
    """Character spans of the words of a batch's documents, computed only for flagged ones."""

    def __init__(self, docs: list[Document], starts: np.ndarray, ends: np.ndarray, word_start: np.ndarray, offsets: np.ndarray) -> None:
        self.docs, self.starts, self.ends, self.word_start, self.offsets = docs, starts, ends, word_start, offsets
        self.cache: dict[int, _ArraySpans] = {}

    def get(self, d: int) -> _ArraySpans:
        if d not in self.cache:
            text = self.docs[d].text
            if text.isascii():  # lowercasing kept every character at its place
                a, b = int(self.word_start[d]), int(self.word_start[d + 1])
                self.cache[d] = _ArraySpans(self.starts, self.ends, a, int(self.offsets[d]), b - a)
            else:
                self.cache[d] = _ArraySpans(*word_spans(text))
        return self.cache[d]


def _runs(text: str, spans: _ArraySpans, run_a: list[int], run_b: list[int], windows: int, part: str, weight: float) -> list[Evidence]:
    """Evidence for runs of matched words (:func:`~contam.scan.ngram_index.match_runs`) with their
    character spans; the part's matched ``weight`` is shared out by ``windows``."""
    if not windows or not spans:
        return []
    per = weight / windows
    return [_evidence(text, spans, a, b, part, per) for a, b in zip(run_a, run_b, strict=True)]


def _evidence(text: str, spans: _ArraySpans, a: int, b: int, part: str, per_window: float) -> Evidence:
    b = min(b, len(spans) - 1)
    s0, s1 = spans.start(a), spans.end(b)
    snippet = text[s0:s1]
    if len(snippet) > 1000:
        snippet = snippet[:1000] + "…"
    return Evidence(kind="ngram", text=snippet, doc_span=(s0, s1), part=part, weight=round(per_window * float(b - a + 1), 4))


def _near_bound(a: str, b: str) -> float:
    """An upper bound of ``fuzz.partial_ratio(a, b)`` in one bit-parallel LCS (~50x cheaper).

    Every alignment partial_ratio scores is ``200 l / (|x| + |w|)`` for the shorter string ``x``
    and a substring ``w`` of the other, where ``l``, the longest common subsequence of ``x``
    and ``w``, is at most ``|w|`` and at most ``L = LCSseq(a, b)``: so at most
    ``200 L / (min(|a|, |b|) + L)``.
    """
    common = LCSseq.similarity(a, b)
    shorter = min(len(a), len(b))
    return 200.0 * common / (shorter + common) if shorter else 100.0


def _clean(doc: Document) -> DocResult:
    return DocResult(doc_id=doc.id, contaminated=False, level="", flags=(), source=doc.source, line=doc.line, scores={})


def _dedupe(flags: list[Flag]) -> list[Flag]:
    """One flag per item (the best score), best first, carrying the evidence of all its matches
    (so masking removes every matched span, not only the best matcher's)."""
    groups: dict[str, list[Flag]] = {}
    for f in flags:
        groups.setdefault(f.item_id, []).append(f)
    out: list[Flag] = []
    for group in groups.values():
        best = max(group, key=lambda f: f.score)
        if len(group) > 1:
            evidence = tuple(sorted((e for f in group for e in f.evidence), key=lambda e: e.doc_span or (0, 0)))
            scores = {k: v for f in group for k, v in f.scores.items()}
            scores.update(best.scores)
            best = replace(best, evidence=evidence, scores=scores)
        out.append(best)
    return sorted(out, key=lambda f: (-f.score, f.item_id))
