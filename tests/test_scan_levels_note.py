"""A token-only scan is no all-clear for paraphrases (issue 32.1): `contam scan` without --levels
says in its table which levels ran and that paraphrases were not checked (single file and
sharded); with --levels all it says they were; the docs' SFT examples ask for --levels all."""

from __future__ import annotations

import json
import re
from pathlib import Path

from contam.audit.demo_data import dcq_rows, write_benchmark
from contam.cli.common import console
from contam.cli.main import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _chat_file(path: Path) -> None:
    """A small SFT chat file: hand-made records and one GPT-4 rephrasing of a benchmark question."""
    rows = dcq_rows()
    recs = [
        {"messages": [{"role": "user", "content": f"Write a short note about topic {i}."}, {"role": "assistant", "content": "Sure."}]}
        for i in range(6)
    ]
    recs.insert(3, {"messages": [{"role": "user", "content": rows[0].rephrasings[0]}, {"role": "assistant", "content": "Let me see."}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")


def _scan(capsys, *argv: str) -> str:
    saved = console._width
    console.width = 200  # one table row per line
    try:
        capsys.readouterr()
        assert main(["scan", *argv]) == 0
    finally:
        console._width = saved
    return capsys.readouterr().out


def test_token_only_scan_says_paraphrases_were_not_checked(tmp_path, capsys):
    bench = write_benchmark(tmp_path / "bench.jsonl")
    sft = tmp_path / "sft.jsonl"
    _chat_file(sft)
    out = _scan(capsys, "-b", str(bench), "--corpus", str(sft), "--out", str(tmp_path / "s1"))
    (row,) = [x for x in out.splitlines() if re.search(r"\blevels\b", x)]
    assert "token only" in row and "paraphrases NOT checked" in row and "--levels all" in row
    shards = tmp_path / "shards"
    shards.mkdir()
    texts = [m["content"] for r in map(json.loads, sft.read_text(encoding="utf-8").splitlines()) for m in r["messages"]]
    (shards / "part-0.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    out = _scan(capsys, "-b", str(bench), "--corpus", str(shards), "--out", str(tmp_path / "s2"))
    assert "paraphrases NOT checked" in out
    out = _scan(capsys, "-b", str(bench), "--corpus", str(sft), "--out", str(tmp_path / "s3"), "--levels", "all", "--embedder", "static")
    (row,) = [x for x in out.splitlines() if re.search(r"\blevels\b", x)]
    assert "token, semantic, reasoning" in row and "paraphrases checked" in row and "NOT" not in row


def test_docs_scan_sft_and_chat_files_at_every_level():
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    commands = [ln for ln in text.splitlines() if ln.startswith("contam scan")]
    assert commands and all("--levels all" in ln for ln in commands), commands
