"""Issue 32.14: a FIFO as ``--corpus`` is refused at once (it used to hang: opened twice), and what
a killed decontamination leaves (corpus-sized hidden temporaries) is removed by the rerun."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contam.data.webtext import build_demo_corpus
from contam.scan.decontaminate import decontaminate
from contam.scan.job import run_scan

CONTAM = str(Path(sys.executable).with_name("contam"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_corpus_is_refused_not_waited_on(tmp_path) -> None:
    fifo = tmp_path / "corpus.jsonl"
    os.mkfifo(fifo)
    for argv in (
        ["scan", "-b", "gsm8k", "--corpus", str(fifo), "--out", str(tmp_path / "o")],
        ["scan", "-b", "gsm8k", "--corpus", str(fifo), "--out", str(tmp_path / "o2"), "--levels", "all", "--format", "chat"],
        ["decontaminate", "-b", "gsm8k", "--corpus", str(fifo), "--out", str(tmp_path / "clean.jsonl")],
    ):
        p = subprocess.run([CONTAM, *argv], capture_output=True, text=True, timeout=120)  # it used to wait for ever
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        assert p.returncode == 2 and len(lines) == 1 and "named pipe (FIFO)" in lines[0] and str(fifo) in lines[0], p.stderr


def test_a_rerun_removes_what_a_killed_decontamination_left(tmp_path) -> None:
    corpus = tmp_path / "c.jsonl"
    build_demo_corpus(corpus, seed=0)
    run_scan(corpus, ["gsm8k"], tmp_path / "scan", workers=1)
    out = tmp_path / "clean.jsonl"
    # What kill -9 leaves mid-write: atomic_write's hidden temporaries of the output and of its log.
    for target in (out, Path(str(out) + ".log.jsonl")):
        code = (
            "import os, signal, sys\nfrom contam.outputs import atomic_write\n"
            "with atomic_write(sys.argv[1]) as fh:\n    fh.write('x' * 100000); fh.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
        )
        p = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, timeout=120)
        assert p.returncode == -9
    left = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 2 and all(p.stat().st_size == 100000 for p in left), left
    s = decontaminate(corpus, out, scan=tmp_path / "scan")
    assert s["dropped"] >= 1 and out.is_file()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
