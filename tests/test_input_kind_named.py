"""Issue 32.17 (rest): a Parquet ``text`` column of integers and a scan folder passed as
``--variants`` each get one line saying what the input is and what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam.data import load_benchmark

CONTAM = str(Path(sys.executable).with_name("contam"))


def _contam(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CONTAM, *argv], capture_output=True, text=True, timeout=300)


def _one_line(p: subprocess.CompletedProcess[str]) -> str:
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    return lines[0]


@pytest.mark.parametrize("fmt", ["auto", "text"])
def test_parquet_integer_text_column_says_what_it_is(fmt, tmp_path) -> None:
    q = load_benchmark("gsm8k")[3].question
    corpus = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": [1, 2], "body": [q, "A note on gardening."]}), corpus)
    line = _one_line(_contam("scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(tmp_path / "o"), "--format", fmt))
    assert str(corpus) in line and "'text' column holds integers" in line, line
    assert "--text-field" in line and "'body'" in line, line
    # what it says to do works
    p = _contam("scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(tmp_path / "o2"), "--text-field", "body", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["flagged"] == 1, p.stderr


@pytest.fixture(scope="module")
def scan_folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("scan")
    q = load_benchmark("gsm8k")[3].question
    (d / "c.jsonl").write_text(json.dumps({"text": "hello " + q}) + "\n" + json.dumps({"text": "nothing here"}) + "\n")
    p = _contam("scan", "-b", "gsm8k", "--corpus", str(d / "c.jsonl"), "--out", str(d / "scan"))
    assert p.returncode == 0, p.stderr
    return d / "scan"


@pytest.mark.parametrize(
    "argv",
    [
        ["zerocot", "--variants", "{s}"],
        ["minkprob", "--variants", "{s}"],
        ["minkprob", "--variants", "{s}/flags.jsonl"],
        ["minkprob", "--control", "{s}"],
    ],
)
def test_a_scan_folder_as_a_comparison_set_says_what_it_is(argv, scan_folder) -> None:
    args = [a.format(s=scan_folder) for a in argv]
    line = _one_line(_contam("probe", *args[:1], "--model", "smollm2", "-b", "gsm8k", "--limit", "2", *args[1:]))
    assert args[-1] in line and "contam scan" in line and "not a comparison set" in line, line
    assert "contam perturb --benchmark B --out DIR" in line, line
