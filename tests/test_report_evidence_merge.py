"""Issue 32.3 for merged runs: ``contam merge A B --out M`` keeps, for every shard, the folder its
flags lie in (in the run it came from) and the absolute path of the input it scanned, so
``contam report M``, run from any folder, shows each flagged record's own text beside the
benchmark item, as the report of a one-file or a sharded scan does."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contam.data import load_benchmark
from contam.data.webtext import build_demo_corpus
from contam.scan.shard_inputs import shard_hash
from contam.scan.shards import run_sharded

CONTAM = str(Path(sys.executable).with_name("contam"))
GSM8K = load_benchmark("gsm8k")
#: One leaked question per input shard; the shard names split between the two tasks of --num-shards 2.
LEAKS = {"part-1.jsonl": ("leak-1", GSM8K[5].question), "part-2.jsonl": ("leak-2", GSM8K[7].question)}


def _contam(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([CONTAM, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two tasks of one sharded scan (``--num-shards 2``), each given the corpus as a relative path,
    merged with ``contam merge`` from the same folder: the merged folder and an unrelated folder."""
    d = tmp_path_factory.mktemp("mergeev")
    corpus = d / "data" / "corpus"
    corpus.mkdir(parents=True)
    assert sorted(shard_hash(n) % 2 for n in LEAKS) == [0, 1]  # one shard for each task
    for k, (name, (doc_id, question)) in enumerate(LEAKS.items()):
        build_demo_corpus(corpus / name, seed=k, n_docs=40)
        lines = (corpus / name).read_text(encoding="utf-8").splitlines()
        lines.insert(2, json.dumps({"id": doc_id, "text": f"Homework dump. Solve: {question} Thanks!"}))
        (corpus / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(d / "data")
    try:
        for i in range(2):
            assert run_sharded(["corpus"], ["gsm8k"], f"runs/t{i}", shard_index=i, num_shards=2, workers=1)["flagged"] >= 1
    finally:
        os.chdir(cwd)
    _contam(d / "data", "merge", "runs/t0", "runs/t1", "--out", "runs/merged")
    (d / "cwd").mkdir()
    return d / "data" / "runs" / "merged", d / "cwd"


def _report(run: Path, cwd: Path) -> str:
    _contam(cwd, "report", run, "--out", "r.html")
    return (cwd / "r.html").read_text(encoding="utf-8")


def _excerpts(html: str) -> dict[str, tuple[str, str]]:
    """The caption and text of the record excerpt of every flagged leak, by its id."""
    pairs = re.findall(r'<div class="beside"><figure><figcaption>(.*?)</figcaption><blockquote>(.*?)</blockquote>', html, re.S)
    return {doc_id: (label, body) for label, body in pairs for doc_id, _ in LEAKS.values() if doc_id in label}


def _shows_both_records(html: str) -> None:
    assert "flags.jsonl not found" not in html and "Corpus not readable" not in html, html
    found = _excerpts(html)
    assert sorted(found) == ["leak-1", "leak-2"], html
    for name, (doc_id, question) in LEAKS.items():
        label, record = found[doc_id]
        assert f"line 3 of {name}" in label, label
        # the record's own words around the marked span, read back from the shard it is in
        assert record.startswith(f"Homework dump. Solve: <mark>{question[:20]}"), record
        assert "Thanks!" in record


def test_the_merged_report_shows_each_records_own_text(merged: tuple[Path, Path]) -> None:
    run, cwd = merged
    _shows_both_records(_report(run, cwd))
    s = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    corpus = run.parent.parent / "corpus"
    assert sorted(s["corpus_paths"].values()) == [str((corpus / n).resolve()) for n in LEAKS]
    assert all(Path(v["path"]).is_absolute() and (Path(v["path"]) / "flags.jsonl").is_file() for v in s["shard_dirs"].values())
    assert s["benchmarks"] == ["gsm8k"] and s["flagged"] >= 2


def test_merged_runs_moved_together_are_read_where_they_are(merged: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = merged
    moved = tmp_path / "archive" / "runs"
    shutil.copytree(run.parent, moved)
    summary = json.loads((moved / "merged" / "summary.json").read_text(encoding="utf-8"))
    for where in summary["shard_dirs"].values():  # the runs' old folders are gone: only the relative path leads there
        where["path"] = str(tmp_path / "gone" / Path(where["path"]).name)
    (moved / "merged" / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    _shows_both_records(_report(moved / "merged", tmp_path))
