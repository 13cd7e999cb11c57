"""Built-in benchmarks shipped inside the package, and resolution of any benchmark spec.

>>> items = load_benchmark("gsm8k")
>>> len(items), items[0].id, items[0].answer
(1319, 'gsm8k/test/0', '18')

A spec is a registry name (``contam benchmarks`` lists them), a path to a JSONL / JSON / CSV /
Parquet file or a ``save_to_disk`` folder, or ``hf:NAME[:SPLIT]``.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from contam.data.items import Item
from contam.data.loaders import BadInputStats, FieldMap, load_items
from contam.errors import ConfigError

MMLU_SUBJECTS = ("abstract_algebra", "college_mathematics", "high_school_us_history", "sociology", "world_religions")


def data_path(relative: str) -> Path:
    """Absolute path of a file shipped under ``contam/data/benchmarks/``."""
    return Path(str(resources.files("contam.data").joinpath("benchmarks", relative)))


def _jsonl(relative: str) -> list[dict]:
    opener = gzip.open if relative.endswith(".gz") else open
    with opener(data_path(relative), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def gsm8k_final_answer(solution: str) -> str:
    """The number after ``####`` in a GSM8K solution, commas removed.

    >>> gsm8k_final_answer("... so 5 + 3 = <<5+3=8>>8\\n#### 1,008")
    '1008'
    """
    return solution.rsplit("####", 1)[-1].strip().replace(",", "")


def gsm8k_cross_split_pairs() -> dict[str, str]:
    """GSM8K test id -> train id of a genuine near duplicate between the two splits, as shipped
    in ``gsm8k/cross_split.json`` (recomputed by ``contam.scan.dcq.gsm8k_cross_split``).

    >>> gsm8k_cross_split_pairs()["gsm8k/test/1291"]
    'gsm8k/train/936'
    """
    with open(data_path("gsm8k/cross_split.json"), encoding="utf-8") as fh:
        return dict(json.load(fh)["pairs"])


def _gsm8k(split: str) -> list[Item]:
    # Each twin names the other split's item, so a flag between them says it is a split overlap
    # of the benchmark itself (evidence kind ``cross_split``), not a detector error.
    pairs = gsm8k_cross_split_pairs()
    twin = pairs if split == "test" else {train: test for test, train in pairs.items()}
    return [
        Item(
            id=f"gsm8k/{split}/{i}",
            question=r["question"],
            answer=gsm8k_final_answer(r["answer"]),
            solution=r["answer"],
            benchmark=f"gsm8k-{split}" if split != "test" else "gsm8k",
            metadata={"near_duplicate_in": twin[f"gsm8k/{split}/{i}"]} if f"gsm8k/{split}/{i}" in twin else {},
        )
        for i, r in enumerate(_jsonl(f"gsm8k/{split}.jsonl.gz"))
    ]


def _humaneval() -> list[Item]:
    return [
        Item(
            id=r["task_id"],
            question=r["prompt"],
            solution=r["canonical_solution"],
            benchmark="humaneval",
            metadata={"entry_point": r["entry_point"], "test": r["test"]},
        )
        for r in _jsonl("humaneval/HumanEval.jsonl.gz")
    ]


def _mmlu(subjects: tuple[str, ...]) -> list[Item]:
    items: list[Item] = []
    for subject in subjects:
        with open(data_path(f"mmlu/{subject}_test.csv"), encoding="utf-8", newline="") as fh:
            for i, row in enumerate(csv.reader(fh)):
                q, *choices, gold = row
                items.append(
                    Item(
                        id=f"mmlu/{subject}/{i}",
                        question=q,
                        answer=gold.strip(),
                        choices=tuple(choices),
                        benchmark="mmlu",
                        metadata={"subject": subject},
                    )
                )
    return items


def _swebench(which: str) -> list[Item]:
    return [
        Item(
            id=r["instance_id"],
            question=r["problem_statement"],
            solution=r["patch"],
            benchmark=f"swebench-{which}",
            metadata={"repo": r["repo"], "base_commit": r["base_commit"]},
        )
        for r in _jsonl(f"swebench/swebench_{which}.jsonl.gz")
    ]


@dataclass(frozen=True)
class BenchmarkInfo:
    name: str
    description: str
    records: int
    license: str
    folder: str
    loader: Callable[[], list[Item]]


BENCHMARKS: dict[str, BenchmarkInfo] = {
    b.name: b
    for b in [
        BenchmarkInfo(
            "gsm8k", "GSM8K test: grade-school math word problems with annotated solutions", 1319, "MIT", "gsm8k", lambda: _gsm8k("test")
        ),
        BenchmarkInfo("gsm8k-train", "GSM8K train split (same genre, not test items)", 7473, "MIT", "gsm8k", lambda: _gsm8k("train")),
        BenchmarkInfo(
            "humaneval", "HumanEval: Python function synthesis (prompt + canonical solution)", 164, "MIT", "humaneval", _humaneval
        ),
        BenchmarkInfo("mmlu", "MMLU test, 5 subjects: " + ", ".join(MMLU_SUBJECTS), 776, "MIT", "mmlu", lambda: _mmlu(MMLU_SUBJECTS)),
        *[
            BenchmarkInfo(f"mmlu-{s.replace('_', '-')}", f"MMLU test, {s.replace('_', ' ')}", n, "MIT", "mmlu", (lambda s=s: _mmlu((s,))))
            for s, n in zip(MMLU_SUBJECTS, (100, 100, 204, 201, 171), strict=True)
        ],
        BenchmarkInfo(
            "swebench-lite", "SWE-bench Lite test: GitHub issues with gold patches", 300, "MIT", "swebench", lambda: _swebench("lite")
        ),
        BenchmarkInfo(
            "swebench-verified",
            "SWE-bench Verified test: GitHub issues with gold patches",
            500,
            "MIT",
            "swebench",
            lambda: _swebench("verified"),
        ),
    ]
}


@lru_cache(maxsize=16)
def _builtin(name: str) -> tuple[Item, ...]:
    return tuple(BENCHMARKS[name].loader())


def load_benchmark(
    spec: str | os.PathLike[str],
    *,
    fields: FieldMap | None = None,
    skip_bad: bool = False,
    stats: BadInputStats | None = None,
) -> list[Item]:
    """Items of a built-in benchmark, a benchmark file, or a Hugging Face dataset."""
    s = str(spec)
    if s in BENCHMARKS:
        return list(_builtin(s))
    if s.startswith("hf:") or Path(s).exists():
        return load_items(s, fields=fields, skip_bad=skip_bad, stats=stats)
    known = ", ".join(BENCHMARKS)
    raise ConfigError(f"unknown benchmark {s!r}: not a built-in name ({known}) and no such file")


def load_benchmarks(
    specs: Sequence[str],
    *,
    fields: FieldMap | None = None,
    skip_bad: bool = False,
    stats: BadInputStats | None = None,
) -> list[Item]:
    """Items of several benchmarks together; ids must stay unique across them."""
    out: list[Item] = []
    seen: set[str] = set()
    for spec in specs:
        for item in load_benchmark(spec, fields=fields, skip_bad=skip_bad, stats=stats):
            if item.id in seen:
                raise ConfigError(f"benchmark {spec!r} repeats item id {item.id!r} already loaded from an earlier benchmark")
            seen.add(item.id)
            out.append(item)
    return out


def as_items(benchmarks: Sequence[str] | Sequence[Item]) -> list[Item]:
    """``benchmarks`` as items: items pass through, specs are loaded (:func:`load_benchmarks`).

    The scan entry points take either; a mixed list is refused rather than half-loaded.

    >>> [it.id for it in as_items(["gsm8k"])[:1]]
    ['gsm8k/test/0']
    """
    items = [b for b in benchmarks if isinstance(b, Item)]
    if len(items) == len(benchmarks):
        return items
    if items:
        raise ConfigError("benchmarks: give either benchmark specs or Item records, not a mix of both")
    return load_benchmarks([str(b) for b in benchmarks])
