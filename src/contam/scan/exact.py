"""Exact and near-exact matching after normalisation, and the longest-common-substring ratio.

These are the checks for items too short for n-gram coverage to mean much (an MMLU stem of
nine words, a one-line answer) and for corpora of short samples (synthetic QA pairs) where a
whole document either is a benchmark item or is not.

>>> round(lcs_ratio("the cat sat on the mat", "yesterday the cat sat on a mat"), 3)
0.682
>>> items = load_benchmark("mmlu-abstract-algebra")
>>> m = ExactScanner().fit(items)
>>> doc = Document(id="d", text="Quiz: " + item_parts(items[0])["question"].upper())
>>> r = next(m.scan([doc])); r.contaminated, r.best.item_id, r.best.part, r.best.evidence[0].kind
(True, 'mmlu/abstract_algebra/0', 'question', 'exact')
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from rapidfuzz import fuzz, process

from contam.constraints import Constraints, Interval, validate
from contam.data import Document, Item, load_benchmark  # noqa: F401  (load_benchmark: doctest)
from contam.scan.flags import DocResult, Evidence, Flag
from contam.scan.hashing import normalized_words


def lcs_ratio(a: str, b: str) -> float:
    """Length of the longest common substring of ``a`` and ``b`` over the length of ``a``.

    ``a`` is the (short) benchmark text, ``b`` the corpus text around the candidate.
    """
    if not a:
        return 0.0
    match = difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size / len(a)


def item_parts(item: Item) -> dict[str, str]:
    """The texts a leak of ``item`` shows: the question (with its options, if any) and the answer.

    Options are lettered as in the MMLU / lm-eval prompt; after normalisation "A.", "(A)" and
    "a)" are all the word "a", so any lettered layout matches.

    For a multiple-choice item the gold option's text is already among the options, so the
    answer part is the answer line itself ("Answer: B"): too short to index alone, it shows up
    in the seam when a leak puts the answer right after the options.

    >>> item_parts(Item(id="x", question="2+2?", choices=("3", "4"), answer="B"))
    {'question': '2+2?\\nA. 3\\nB. 4', 'answer': 'Answer: B'}
    """
    q = item.question
    if item.choices:
        q += "\n" + "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(item.choices))
        return {"question": q, "answer": f"Answer: {item.answer}" if item.answer else ""}
    return {"question": q, "answer": item.answer_text}


@dataclass(frozen=True)
class ExactConfig:
    """Exact / near-exact matching of whole normalised texts (the GPT-3 paper's exact-match check,
    with the longest-common-substring ratio for short items).

    ``near_exact`` is the least rapidfuzz ``ratio`` (0-100) between a normalised document and
    a normalised item part for a near-exact flag; ``lcs_threshold`` the least longest-common-
    substring ratio for parts of at most ``short_words`` words; parts shorter than ``min_words``
    words are ignored (a four-word answer is not evidence of anything).
    """

    near_exact: float = 90.0
    lcs_threshold: float = 0.8
    short_words: int = 12
    min_words: int = 5

    _constraints: ClassVar[Constraints] = {
        "near_exact": Interval(float, 0, 100),
        "lcs_threshold": Interval(float, 0, 1),
        "short_words": Interval(int, 0, None),
        "min_words": Interval(int, 1, None),
    }

    def __post_init__(self) -> None:
        validate(self)


class ExactScanner:
    """Flags documents equal (after normalisation) or nearly equal to a benchmark item part,
    or that contain it verbatim. Meant for corpora of short samples; the n-gram scanner uses the
    same checks on its candidates for long corpora.
    """

    def __init__(self, config: ExactConfig | None = None) -> None:
        self.config = config or ExactConfig()
        self._keys: list[tuple[int, str]] = []
        self._norm: list[str] = []
        self._items: list[Item] = []

    def fit(self, items: Iterable[Item]) -> ExactScanner:
        self._items = list(items)
        for idx, item in enumerate(self._items):
            for part, text in item_parts(item).items():
                words = normalized_words(text)
                if len(words) >= self.config.min_words:
                    self._keys.append((idx, part))
                    self._norm.append(" ".join(words))
        return self

    def scan(self, docs: Iterable[Document]) -> Iterator[DocResult]:
        for doc in docs:
            yield self.scan_one(doc)

    def scan_one(self, doc: Document) -> DocResult:
        norm = " ".join(normalized_words(doc.text))
        flags: list[Flag] = []
        if norm:
            padded = f" {norm} "
            for k, part_norm in enumerate(self._norm):
                if f" {part_norm} " in padded:
                    flags.append(self._flag(doc, k, 1.0, "exact", part_norm))
            if not flags:
                best = process.extractOne(norm, self._norm, scorer=fuzz.ratio, score_cutoff=self.config.near_exact)
                if best is not None:
                    flags.append(self._flag(doc, best[2], best[1] / 100.0, "near_exact", self._norm[best[2]]))
            if not flags and len(norm.split()) <= 4 * self.config.short_words:
                for k, part_norm in enumerate(self._norm):
                    if part_norm.count(" ") + 1 <= self.config.short_words:
                        r = lcs_ratio(part_norm, norm)
                        if r >= self.config.lcs_threshold:
                            flags.append(self._flag(doc, k, r, "lcs", part_norm))
        flags.sort(key=lambda f: -f.score)
        return DocResult(
            doc_id=doc.id, contaminated=bool(flags), level="token" if flags else "", flags=tuple(flags), source=doc.source, line=doc.line
        )

    def _flag(self, doc: Document, k: int, score: float, kind: str, text: str) -> Flag:
        idx, part = self._keys[k]
        item = self._items[idx]
        threshold = {"exact": 1.0, "near_exact": self.config.near_exact / 100.0, "lcs": self.config.lcs_threshold}[kind]
        return Flag(
            doc_id=doc.id,
            item_id=item.id,
            level="token",
            score=score,
            threshold=threshold,
            part=part,
            benchmark=item.benchmark,
            scores={kind: score},
            evidence=(Evidence(kind=kind, text=text[:1000], part=part, weight=score),),
        )
