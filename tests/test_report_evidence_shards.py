"""Issue 32.3 for sharded runs: every shard's summary stores its input's absolute path (and the
run's summary maps each shard folder to it), so the report of a sharded run, rebuilt from a copy
of the run folder moved elsewhere, shows the flagged record's own text, shard by shard."""

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
from contam.scan.shards import run_sharded

CONTAM = str(Path(sys.executable).with_name("contam"))
QUESTION = load_benchmark("gsm8k")[5].question


@pytest.fixture(scope="module")
def moved_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A sharded scan of two real web-text shards (one record a leaked GSM8K question in its own
    words), the corpus given relative as a user types it; the run folder copied elsewhere."""
    d = tmp_path_factory.mktemp("shev")
    corpus = d / "data" / "corpus"
    corpus.mkdir(parents=True)
    for k in range(2):
        build_demo_corpus(corpus / f"part-{k}.jsonl", seed=k, n_docs=60)
    lines = (corpus / "part-1.jsonl").read_text(encoding="utf-8").splitlines()
    lines.insert(3, json.dumps({"id": "leak-1", "text": f"Homework dump. Solve: {QUESTION} Thanks!"}))
    (corpus / "part-1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(d / "data")
    try:
        s = run_sharded(["corpus"], ["gsm8k"], "run", workers=1)
    finally:
        os.chdir(cwd)
    assert s["shards"] == 2 and s["flagged"] >= 1
    assert sorted(s["corpus_paths"].values()) == [str((corpus / f"part-{k}.jsonl").resolve()) for k in range(2)]
    for folder, path in s["corpus_paths"].items():
        shard = json.loads((d / "data" / "run" / "shards" / folder / "summary.json").read_text())
        assert shard["corpus_path"] == path and shard["text_field"] == "text"
    moved = d / "elsewhere" / "runs" / "run"
    shutil.copytree(d / "data" / "run", moved)
    (d / "cwd").mkdir()
    return moved, d / "cwd", corpus


def _report(run: Path, cwd: Path) -> str:
    p = subprocess.run([CONTAM, "report", str(run), "--out", "r.html"], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return (cwd / "r.html").read_text(encoding="utf-8")


def _excerpts(html: str) -> list[tuple[str, str]]:
    """The caption and text of every record excerpt (the left side of each pair)."""
    return re.findall(r'<div class="beside"><figure><figcaption>(.*?)</figcaption><blockquote>(.*?)</blockquote>', html, re.S)


def _excerpt(html: str, doc_id: str) -> tuple[str, str]:
    """The caption and text of the record excerpt of ``doc_id``."""
    for label, body in _excerpts(html):
        if doc_id in label:
            return label, body
    raise AssertionError(f"no excerpt of {doc_id} in the report:\n{html}")


def test_the_run_report_shows_each_shards_records(moved_run: tuple[Path, Path, Path]) -> None:
    run, cwd, _ = moved_run
    html = _report(run, cwd)
    assert "flags.jsonl not found" not in html and "Corpus not readable" not in html, html
    label, record = _excerpt(html, "leak-1")
    assert "line 4 of part-1.jsonl" in label, label
    # the record's own words around the marked span, read back from its shard
    assert record.startswith("Homework dump. Solve: <mark>Kylar went to the store"), record
    assert "Thanks!" in record


def test_one_shard_folder_alone_finds_its_input(moved_run: tuple[Path, Path, Path], tmp_path: Path) -> None:
    run, _, corpus = moved_run
    folder = json.loads((run / "summary.json").read_text())["corpus_paths"]
    shard = next(f for f, p in folder.items() if p == str((corpus / "part-1.jsonl").resolve()))
    copy = tmp_path / "one-shard"
    shutil.copytree(run / "shards" / shard, copy)
    html = _report(copy, tmp_path)
    assert "Corpus not readable" not in html, html
    assert _excerpt(html, "leak-1")[1].startswith("Homework dump. Solve: <mark>Kylar"), html


def test_a_shard_whose_input_is_gone_says_where_it_looked(moved_run: tuple[Path, Path, Path], tmp_path: Path) -> None:
    run, _, _ = moved_run
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    summary = json.loads((copy / "summary.json").read_text())
    gone = str(tmp_path / "gone" / "part-1.jsonl")
    for folder in summary["corpus_paths"]:
        p = copy / "shards" / folder / "summary.json"
        s = json.loads(p.read_text())
        if s["corpus_path"].endswith("part-1.jsonl"):
            p.write_text(json.dumps({**s, "corpus_path": gone}))
            summary["corpus_paths"][folder] = gone
    (copy / "summary.json").write_text(json.dumps(summary))
    html = _report(copy, tmp_path)
    assert f"Corpus not readable from here (looked at: {gone}" in html, html
    # the gone shard's record shows only what quotes it; the other shard's are still read back whole
    assert _excerpt(html, "leak-1")[1].startswith("<mark>Kylar") and "Homework" not in html
    other = [body for label, body in _excerpts(html) if "of part-0.jsonl" in label]
    assert other and all(re.sub(r"<mark>.*?</mark>", "", body, flags=re.S).strip(" …") for body in other), other
