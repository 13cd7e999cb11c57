"""`contam verify` reads only the run's own files (issue 32.16): an output path in a manifest that
leads out of the run folder (``../../etc/hostname``, an absolute path, a file next to the run) is
reported and never hashed; a merged run's outputs in the runs it was merged from still verify."""

from __future__ import annotations

import json

from contam.cli.main import main
from contam.data.webtext import build_demo_corpus
from contam.scan.shards import verify_run


def test_verify_reads_no_file_outside_the_run(tmp_path, capsys):
    build_demo_corpus(tmp_path / "in" / "s0.jsonl", n_docs=30, seed=0)
    build_demo_corpus(tmp_path / "in" / "s1.jsonl", n_docs=30, seed=1)
    for i in range(2):
        argv = ["scan", "-b", "gsm8k", "--corpus", str(tmp_path / "in"), "--num-shards", "2", "--shard-index", str(i)]
        assert main([*argv, "--out", str(tmp_path / f"t{i}")]) == 0
    assert main(["merge", str(tmp_path / "t0"), str(tmp_path / "t1"), "--out", str(tmp_path / "merged")]) == 0
    assert verify_run(tmp_path / "merged")["ok"]  # outputs in the runs it was merged from are read
    secret = tmp_path / "secret.txt"
    secret.write_text("not a contam output\n", encoding="utf-8")
    run = tmp_path / "t0"
    m = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    evil = ["../secret.txt", str(secret), "../../../../../../etc/hostname", "../t1/summary.json"]
    m["outputs"] += [{"path": p, "size": 1, "sha256": "0" * 64} for p in evil]
    (run / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    r = verify_run(run, inputs=False)
    assert not r["ok"]
    for p in evil:
        (line,) = [x for x in r["problems"] if x.startswith(f"output {p}:")]
        assert "outside the run folder" in line and "sha256" not in line  # reported, not hashed
    assert len(r["problems"]) == len(evil)  # the run's own outputs still match
    capsys.readouterr()
    assert main(["verify", str(run), "--outputs-only"]) == 1
    assert "../secret.txt: outside the run folder" in capsys.readouterr().err
