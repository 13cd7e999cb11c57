"""Issue 32.13: an ``--out`` inside the ``--corpus`` folder is never read back as corpus shards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from contam.data import load_benchmark
from contam.data.webtext import build_demo_corpus
from contam.scan.shards import resolve_corpus, run_sharded

CONTAM = str(Path(sys.executable).with_name("contam"))


def test_a_rerun_with_out_inside_the_corpus_folder_reads_the_same_shards(tmp_path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    build_demo_corpus(corpus / "a.jsonl", seed=1)
    items = load_benchmark("gsm8k")
    first = run_sharded([corpus], items, corpus / "scan", workers=1)
    assert (corpus / "scan" / "manifest.json").is_file()
    again = run_sharded([corpus], items, corpus / "scan", workers=1)
    assert again["documents"] == first["documents"] == 200 and again["flagged"] == first["flagged"], again
    # another run folder in the corpus folder (a manifest of its own) is no corpus either
    assert [s.name for s in resolve_corpus([corpus])] == ["a.jsonl"]
    assert [s.name for s in resolve_corpus([str(corpus / "**" / "*.jsonl")])] == ["a.jsonl"]
    p = subprocess.run([CONTAM, "scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(corpus / "scan2"), "--json"],
                       capture_output=True, text=True)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["documents"] == 200
