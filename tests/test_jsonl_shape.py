"""Issue 32.17 (part): a ``.jsonl`` that is no JSON Lines is named for what it is, with what to do,
instead of "not valid UTF-8" or "not valid JSON" on its first line."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

CONTAM = str(Path(sys.executable).with_name("contam"))
RECORDS = [{"text": "Natalia sold clips to 48 of her friends."}, {"text": "A note on gardening."}]
CASES = {
    "gzip bytes": (gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in RECORDS)), "gzip-compressed data", "c.jsonl.gz"),
    "pretty-printed array": (json.dumps(RECORDS, indent=2).encode(), "a JSON array", "name it .json"),
    "CR-only line ends": (b"".join(json.dumps(r).encode() + b"\r" for r in RECORDS), "carriage return alone", "convert them to LF"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_jsonl_that_is_something_else_says_what_it_is(case, tmp_path) -> None:
    data, what, todo = CASES[case]
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(data)
    for argv in (
        ["scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(tmp_path / "o")],
        ["decontaminate", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(tmp_path / "clean.jsonl")],
    ):
        p = subprocess.run([CONTAM, *argv], capture_output=True, text=True, timeout=300)
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        assert p.returncode == 2 and len(lines) == 1, p.stderr
        assert str(corpus) in lines[0] and what in lines[0] and todo in lines[0], lines[0]


def test_what_the_message_says_to_do_works(tmp_path) -> None:
    array = tmp_path / "c.json"
    array.write_text(json.dumps(RECORDS, indent=2))
    p = subprocess.run([CONTAM, "scan", "-b", "gsm8k", "--corpus", str(array), "--out", str(tmp_path / "o"), "--json"],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert p.returncode == 0 and json.loads(p.stdout)["documents"] == 2, p.stderr
