"""contam decontaminate refuses what would give a wrong or lost output (issue 32.12): a corpus
that is not the one the scan read (the scan's manifest holds its size and sha256), and a --log
that is the --out file itself."""

from __future__ import annotations

import json

import pytest

from contam.cli.main import main
from contam.data.webtext import build_demo_corpus
from contam.errors import InputError
from contam.scan.decontaminate import decontaminate


@pytest.fixture()
def scanned(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    build_demo_corpus(corpus, seed=7, n_docs=60)
    assert main(["scan", "-b", "gsm8k", "-b", "humaneval", "-b", "mmlu", "--corpus", str(corpus), "--out", str(tmp_path / "scan")]) == 0
    return corpus, tmp_path / "scan"


def _decon(corpus, scan, out, *extra):
    return main(["decontaminate", "--corpus", str(corpus), "--scan", str(scan), "--out", str(out), *extra])


def test_a_corpus_changed_since_the_scan_is_refused(scanned, tmp_path, capsys):
    corpus, scan = scanned
    assert _decon(corpus, scan, tmp_path / "ok.jsonl") == 0
    lines = corpus.read_bytes().splitlines(keepends=True)
    # two unflagged documents swapped: same size, same flagged lines, other documents on two lines
    flagged = {json.loads(x)["line"] for x in (scan / "flags.jsonl").read_text(encoding="utf-8").splitlines()}
    a, b = [i for i in range(len(lines)) if i + 1 not in flagged][:2]
    lines[a], lines[b] = lines[b], lines[a]
    corpus.write_bytes(b"".join(lines))
    capsys.readouterr()
    assert _decon(corpus, scan, tmp_path / "swapped.jsonl") == 2
    err = capsys.readouterr().err
    assert "corpus.jsonl" in err and "not the corpus the scan" in err and "sha256" in err
    assert not (tmp_path / "swapped.jsonl").exists()
    # a line added: another size, refused before reading it
    corpus.write_bytes(b"".join(lines) + b'{"id": "new", "text": "a document added after the scan"}\n')
    with pytest.raises(InputError, match="bytes, the scan's manifest says"):
        decontaminate(corpus, tmp_path / "grown.jsonl", scan=scan)
    assert not (tmp_path / "grown.jsonl").exists()


def test_log_equal_to_out_is_refused(scanned, tmp_path, capsys):
    corpus, scan = scanned
    out = tmp_path / "clean.jsonl"
    assert _decon(corpus, scan, out, "--log", str(out)) == 2
    assert "--log" in capsys.readouterr().err and not out.exists()
    assert _decon(corpus, scan, out, "--log", str(tmp_path / "." / "clean.jsonl")) == 2
    assert _decon(corpus, scan, out, "--log", str(tmp_path / "clean.log.jsonl")) == 0 and out.exists()
