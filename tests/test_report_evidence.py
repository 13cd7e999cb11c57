"""Issue 32.3: the report's evidence is the flagged record's own text (the turn, the matching span
marked) beside the benchmark item, found through the corpus path the scan stores, so the report
can be rebuilt from another folder; without the corpus, the item's text never stands in for it."""

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
from contam.scan.records import scan_records

CONTAM = str(Path(sys.executable).with_name("contam"))
QUESTION = load_benchmark("gsm8k")[5].question


@pytest.fixture(scope="module")
def moved_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A chat-format scan whose run folder was moved away from the corpus afterwards."""
    d = tmp_path_factory.mktemp("ev")
    recs = [
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
        {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Solve: " + QUESTION},
                      {"role": "assistant", "content": "He pays 64."}]},
    ]  # fmt: skip
    (d / "data").mkdir()
    (d / "data" / "chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    cwd = os.getcwd()
    os.chdir(d / "data")  # the corpus given as a relative path, as a user types it
    try:
        s = scan_records("chat.jsonl", ["gsm8k"], d / "data" / "scan")
    finally:
        os.chdir(cwd)
    assert s["flagged"] == 1 and s["corpus_path"] == str((d / "data" / "chat.jsonl").resolve())
    moved = d / "elsewhere" / "runs" / "scan"
    moved.parent.mkdir(parents=True)
    shutil.move(str(d / "data" / "scan"), moved)
    (d / "cwd").mkdir()
    return moved, d / "cwd"


def _report(run: Path, cwd: Path) -> str:
    p = subprocess.run([CONTAM, "report", str(run), "--out", "r.html"], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return (cwd / "r.html").read_text(encoding="utf-8")


def test_the_record_turn_is_shown_beside_the_item(moved_run: tuple[Path, Path]) -> None:
    run, cwd = moved_run
    html = _report(run, cwd)
    assert "Corpus not readable" not in html
    pair = re.search(r'<div class="beside">(.*?)</div>', html, re.S)
    assert pair, html
    record, item = re.findall(r"<figcaption>(.*?)</figcaption><blockquote>(.*?)</blockquote>", pair.group(1), re.S)
    assert "line 2" in record[0] and "turn 1 (user)" in record[0], record[0]
    # the record's own turn: its words around the marked span, not the item's text alone
    assert record[1].startswith("Solve: <mark>Kylar went to the store"), record[1]
    assert "He pays 64" not in record[1] and "Be brief" not in record[1]  # only the turn the evidence lies in
    assert "gsm8k/test/5" in item[0] and "question" in item[0]
    assert item[1].startswith("Kylar went to the store") and "Solve:" not in item[1]


def test_without_the_corpus_the_item_does_not_stand_in_for_the_record(moved_run: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = moved_run
    copy = tmp_path / "scan"
    shutil.copytree(run, copy)
    summary = json.loads((copy / "summary.json").read_text())
    summary["corpus_path"] = str(tmp_path / "gone.jsonl")
    summary["corpus"] = "gone.jsonl"
    (copy / "summary.json").write_text(json.dumps(summary))
    rec = json.loads((copy / "flags.jsonl").read_text())
    ev = rec["flags"][0]["evidence"][0]
    turn = len("Be brief.\n\n"), len("Be brief.\n\nSolve: " + QUESTION)  # the user turn in the joined text
    # what a semantic flag of a chat turn holds (merge_turns): the whole turn as its span, the item's question as its text
    rec["flags"][0]["evidence"] = [
        {**ev, "kind": "embedding", "text": QUESTION[:200], "doc_span": list(turn), "turn_span": [0, turn[1] - turn[0]]}
    ]
    (copy / "flags.jsonl").write_text(json.dumps(rec) + "\n")
    html = _report(copy, tmp_path)
    record = re.search(r'<div class="beside"><figure><figcaption>.*?</figcaption><blockquote>(.*?)</blockquote>', html, re.S)
    assert record and "Kylar" not in record.group(1) and "record text not available" in record.group(1), html
    assert "Corpus not readable from here (looked at: " in html and "gone.jsonl" in html
