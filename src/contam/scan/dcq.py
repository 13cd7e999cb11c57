"""Real paraphrases for the semantic level: DCQ's GPT-4 perturbations against same-genre hard negatives.

The DCQ data (Golchin & Surdeanu, EMNLP 2024; Apache-2.0, shipped in
``contam/data/benchmarks/dcq/`` with its provenance) holds four GPT-4 word-level perturbations of
100 GSM8K *train* items and of all 164 HumanEval items. They were made by another project, for
another purpose, so they are an honest test of how the semantic level judges real rephrasings.

:func:`dcq_task` builds a labelled set for one benchmark, split by item id into ``calib`` and
``test`` halves so a threshold chosen on one half is measured on items it never saw:

* **gsm8k** — benchmark: the 100 DCQ source items plus other GSM8K train items up to 1,319 (the
  size of GSM8K test); positives: the 400 perturbations (question only, as DCQ wrote them);
  negatives: the 1,319 GSM8K **test** questions (same genre, a different split). Test questions
  that genuinely near-duplicate a train item (:func:`gsm8k_cross_split`, :func:`near_twins`)
  are marked ``cross_split`` and counted apart.
* **humaneval** — benchmark: the HumanEval tasks of one half; positives: the perturbations of
  those tasks; negatives: the *other* half's prompts and their perturbations (same genre, other
  tasks). The halves swap between ``calib`` and ``test``.
* **mmlu** — no real paraphrases exist here; negatives only (one half of the shipped MMLU items
  against the other half, same and other subjects), for a false-positive rate.

Everywhere, a negative whose question shares most of its words with a benchmark item
(:func:`near_twins`: HumanEval/56 vs /61, MMLU's templated items) is a genuine near duplicate
inside the benchmark's genre: marked in ``cross_split`` and counted apart, not as an error.

>>> t = dcq_task("gsm8k", "test")                        # doctest: +SKIP
>>> len(t.items), sum(t.labels), len(t.labels) - sum(t.labels)   # doctest: +SKIP
(1319, 200, 660)
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from dataclasses import dataclass, field
from functools import lru_cache

from contam.data import Item, load_benchmark
from contam.data.registry import data_path
from contam.errors import ConfigError

SPLITS = ("calib", "test")
TASKS = ("gsm8k", "humaneval", "mmlu")
_PREFIX = re.compile(r"^\s*(question|prompt):\s*", re.I)


@dataclass(frozen=True)
class DCQRow:
    """One DCQ source item and its four GPT-4 perturbations (the ``question:``/``prompt:`` prefix removed)."""

    item_id: str
    original: str
    perturbations: tuple[str, ...]


@lru_cache(maxsize=2)
def load_dcq(name: str) -> tuple[DCQRow, ...]:
    """The shipped DCQ rows of ``gsm8k`` (mapped to GSM8K train ids) or ``humaneval`` (task ids)."""
    files = {"gsm8k": "dcq/gsm8k_train.csv.gz", "humaneval": "dcq/humaneval_test.csv.gz"}
    if name not in files:
        raise ConfigError(f"no DCQ data for {name!r}: choose gsm8k or humaneval")
    with gzip.open(data_path(files[name]), "rb") as fh:
        rows = list(csv.DictReader(io.StringIO(fh.read().decode("utf-8"))))
    out = []
    if name == "gsm8k":
        by_q = {it.question.strip(): it.id for it in load_benchmark("gsm8k-train")}
        for r in rows:
            iid = by_q.get(r["question"].strip())
            if iid is None:  # every DCQ row is a GSM8K train question (checked); skip rather than guess
                continue
            out.append(DCQRow(iid, r["question"], tuple(_PREFIX.sub("", r[f"option_{c}"]).strip() for c in "abcd")))
    else:
        for r in rows:
            out.append(DCQRow(r["task_id"], r["prompt"], tuple(_PREFIX.sub("", r[f"option_{c}"]).strip("\n") for c in "abcd")))
    return tuple(out)


@dataclass
class DcqTask:
    """A labelled candidate set against a benchmark: ``texts[i]`` with ``labels[i]`` (1 = a paraphrase
    of ``truth[i]``), ``kinds[i]`` names where the text comes from; ``cross_split[i]`` marks a
    negative that is a genuine near duplicate of a benchmark item from another split."""

    name: str
    split: str
    items: list[Item]
    texts: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    truth: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    cross_split: list[str] = field(default_factory=list)

    def add(self, text: str, label: int, truth: str, kind: str, cross: str = "") -> None:
        self.texts.append(text)
        self.labels.append(label)
        self.truth.append(truth)
        self.kinds.append(kind)
        self.cross_split.append(cross)


#: The old name of :class:`DcqTask` (issue 33: ``Task`` also named a BFCL task); ``bench/`` scripts import it.
Task = DcqTask


def _half(i: int, split: str) -> bool:
    return (i % 2 == 0) == (split == "calib")


_NUM = re.compile(r"\d+(?:[.,]\d+)*")


def numbers(text: str) -> frozenset[str]:
    """The numbers written in ``text`` (commas dropped, trailing ``.0`` kept as written).

    >>> sorted(numbers("She had 1,200 apples and ate 3.5 of them in 2 days."))
    ['1200', '2', '3.5']
    """
    return frozenset(m.group().replace(",", "").rstrip(".") for m in _NUM.finditer(text))


@lru_cache(maxsize=1)
def gsm8k_cross_split() -> dict[str, str]:
    """GSM8K test ids whose question has a twin in GSM8K train: the same final answer, numbers
    with Jaccard >= 0.6 and words with Jaccard >= 0.4 (the same problem re-skinned: "Timothy has
    three times George's 18 pens" / "Bobbie has three times Billie's 18 crayons"). A train item
    matched to such a test item is a near duplicate between two benchmark splits, not a detector
    error; the DCQ evaluation counts those apart."""
    from contam.data.normalize import words

    by_answer: dict[str, list[tuple[Item, frozenset[str], set[str]]]] = {}
    for it in load_benchmark("gsm8k-train"):
        by_answer.setdefault(it.answer, []).append((it, numbers(it.question), set(words(it.question))))
    out = {}
    for it in load_benchmark("gsm8k"):
        n, w = numbers(it.question), set(words(it.question))
        for cand, cn, cw in by_answer.get(it.answer, []):
            if len(n & cn) >= 0.6 * max(1, len(n | cn)) and len(w & cw) >= 0.4 * max(1, len(w | cw)):
                out[it.id] = cand.id
                break
    return out


def near_twins(sources: list[str], items: list[Item], least: float = 0.6) -> list[str]:
    """For each text of ``sources``, the id of a benchmark item whose question shares at least
    ``least`` of their words (Jaccard of word sets), else "": a *genuine* near duplicate inside
    the benchmark's genre (HumanEval/56 and /61 are both "correct_bracketing", one with "<>",
    one with "()"; MMLU abstract algebra repeats "Find the degree for the given field extension
    ..." with other radicals). Decided on the texts alone, never by the detector under test."""
    from contam.data.normalize import words

    iw = [set(words(it.question)) for it in items]
    out = []
    for src in sources:
        w = set(words(src))
        best, arg = 0.0, ""
        for it, s in zip(items, iw, strict=True):
            u = len(w | s)
            j = len(w & s) / u if u else 0.0
            if j > best:
                best, arg = j, it.id
        out.append(arg if best >= least else "")
    return out


def dcq_task(name: str, split: str) -> DcqTask:
    """The labelled set of ``name`` (gsm8k, humaneval, mmlu) for ``split`` (calib or test)."""
    if split not in SPLITS:
        raise ConfigError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    if name == "gsm8k":
        rows = load_dcq("gsm8k")
        train = load_benchmark("gsm8k-train")
        src = {r.item_id for r in rows}
        by_id = {it.id: it for it in train}
        # The benchmark: the DCQ items plus other train items, as large as GSM8K test (1,319).
        items = [by_id[r.item_id] for r in rows] + [it for it in train if it.id not in src][: 1319 - len(rows)]
        t = DcqTask(name, split, items)
        for i, r in enumerate(rows):
            if _half(i, split):
                for p in r.perturbations:
                    t.add(p, 1, r.item_id, "dcq")
        twins = gsm8k_cross_split()
        bench_ids = {it.id for it in items}
        negs = [it for i, it in enumerate(load_benchmark("gsm8k")) if _half(i, split)]
        for it, wt in zip(negs, near_twins([it.question for it in negs], items), strict=True):
            twin = twins.get(it.id, "")
            t.add(it.question, 0, "", "gsm8k-test", (twin if twin in bench_ids else "") or wt)
        return t
    if name == "humaneval":
        rows = load_dcq("humaneval")
        he = {it.id: it for it in load_benchmark("humaneval")}
        mine = [r for i, r in enumerate(rows) if _half(i, split)]
        other = [r for i, r in enumerate(rows) if not _half(i, split)]
        t = DcqTask(name, split, [he[r.item_id] for r in mine])
        for r in mine:
            for p in r.perturbations:
                t.add(p, 1, r.item_id, "dcq")
        for r, twin in zip(other, near_twins([he[r.item_id].question for r in other], t.items), strict=True):
            t.add(he[r.item_id].question, 0, "", "humaneval-other", twin)
            for p in r.perturbations:
                t.add(p, 0, "", "dcq-other", twin)  # a perturbation of a twin is a twin's perturbation
        return t
    if name == "mmlu":
        allm = load_benchmark("mmlu")
        items = [it for i, it in enumerate(allm) if _half(i, split)]
        t = DcqTask(name, split, items)
        negs = [it for i, it in enumerate(allm) if not _half(i, split)]
        for it, twin in zip(negs, near_twins([it.question for it in negs], items), strict=True):
            t.add(it.question, 0, "", "mmlu-other", twin)
        return t
    raise ConfigError(f"unknown DCQ task {name!r}: choose from {', '.join(TASKS)}")
