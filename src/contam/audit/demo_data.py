"""A synthetic dataset with real rephrasings injected, for ``make demo`` and the audit's tests.

The benchmark is a packaged sample of GSM8K train items (``contam/data/dcq``); the rephrasings
are GPT-4's, from the Data Contamination Quiz (Golchin & Surdeanu, EMNLP 2024), not ours. The
filler is :mod:`contam.data.webtext` (real prose). A *clean* dataset holds the filler and other
GSM8K train items of the same genre that are not in the benchmark (hard negatives).
"""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from contam.outputs import atomic_write, ensure_dir

SAMPLE = "gsm8k_train_sample.csv"


@dataclass(frozen=True)
class DcqRow:
    question: str
    solution: str
    rephrasings: tuple[str, ...]


def dcq_rows() -> list[DcqRow]:
    """The packaged DCQ rows: original GSM8K train item and its four GPT-4 rephrasings."""
    csv.field_size_limit(1 << 24)
    # Binary open wrapped by hand: Traversable.open("r") takes no `newline`, and csv needs newline="" so that
    # line breaks inside quoted fields survive.
    with io.TextIOWrapper(resources.files("contam.data").joinpath("dcq", SAMPLE).open("rb"), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [DcqRow(r["question"], r["answer"], tuple(r[f"option_{c}"].removeprefix("question:").strip() for c in "abcd")) for r in rows]


def write_benchmark(path: Path, rows: list[DcqRow] | None = None) -> Path:
    """The sample's original items as a benchmark JSONL (``id``, ``question``, ``answer``, ``solution``)."""
    rows = rows if rows is not None else dcq_rows()
    with atomic_write(path) as fh:
        for i, r in enumerate(rows):
            ans = r.solution.rsplit("####", 1)[-1].strip().replace(",", "")
            fh.write(json.dumps({"id": f"dcq-gsm8k-train/{i}", "question": r.question, "answer": ans, "solution": r.solution}) + "\n")
    return path


def build_dataset(path: Path, *, rephrased: int = 6, verbatim: int = 0, n_docs: int = 120, seed: int = 0) -> list[dict]:
    """Filler documents with ``verbatim`` exact copies of benchmark items injected, GSM8K train items
    outside the benchmark, and ``rephrased`` rows each holding one GPT-4 rephrasing of a benchmark
    question; returns the ground truth."""
    from contam.data import load_benchmark
    from contam.data.webtext import make_document

    rng = random.Random(seed)
    rows = dcq_rows()
    docs = [{"id": f"web-{i}", "text": make_document(rng)} for i in range(n_docs)]
    # same genre, not in the benchmark: GSM8K train items whose questions differ from every sample item
    sample_q = {r.question.strip() for r in rows}
    others = [it for it in load_benchmark("gsm8k-train")[-400:] if it.question.strip() not in sample_q]
    for j, it in enumerate(rng.sample(others, 20)):
        docs.append({"id": f"other-gsm8k-{j}", "text": f"Practice problem. {it.question}\nSolution: {it.solution}"})
    truth: list[dict] = []
    picks = rng.sample(range(len(rows)), rephrased + verbatim)
    for k, i in enumerate(picks):
        r = rows[i]
        if k < rephrased:
            # a row of its own, as in a synthetic training set: the rephrased question alone
            # (its solution would be a verbatim copy of the benchmark's)
            docs.append({"id": f"synth-{k}", "text": r.rephrasings[k % 4]})
            truth.append({"doc_id": f"synth-{k}", "item_id": f"dcq-gsm8k-train/{i}", "kind": "rephrasing"})
        else:
            host = rng.randrange(n_docs)  # a verbatim copy inside a longer web page
            docs[host]["text"] += f"\n\n{r.question}\n{r.solution}"
            truth.append({"doc_id": docs[host]["id"], "item_id": f"dcq-gsm8k-train/{i}", "kind": "verbatim"})
    rng.shuffle(docs)
    ensure_dir(path.parent)
    with atomic_write(path) as fh:
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    return truth
