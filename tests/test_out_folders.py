"""An --out that would destroy other results is refused (issue 32.11): `contam merge A B --out A`,
and `contam scan --out` into a folder another command wrote (a variant set, a merged run, an
audit run); a rerun into a command's own folder still works."""

from __future__ import annotations

import json

import pytest

from contam.cli.main import main
from contam.data.webtext import build_demo_corpus


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    """The two --out folders of a sharded scan of two small shards."""
    d = tmp_path_factory.mktemp("shards")
    (d / "in").mkdir()
    for i in range(2):
        build_demo_corpus(d / "in" / f"s{i}.jsonl", n_docs=40, seed=i)
    for i in range(2):
        argv = ["scan", "-b", "gsm8k", "--corpus", str(d / "in"), "--num-shards", "2", "--shard-index", str(i), "--out", str(d / f"t{i}")]
        assert main(argv) == 0
    return d


def test_merge_refuses_to_write_over_one_of_its_inputs(tasks, capsys):
    t0, t1 = tasks / "t0", tasks / "t1"
    before = {p.name: p.read_bytes() for p in (t0 / "summary.json", t0 / "manifest.json")}
    assert main(["merge", str(t0), str(t1), "--out", str(t0)]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (t0 / "summary.json", t0 / "manifest.json")} == before
    # through another spelling of the same folder, too
    assert main(["merge", str(t0), str(t1), "--out", str(t1 / ".." / "t1")]) == 2
    merged = tasks / "merged"
    assert main(["merge", str(t0), str(t1), "--out", str(merged)]) == 0
    assert main(["merge", str(t0), str(t1), "--out", str(merged)]) == 0  # rerun into its own folder


def test_scan_refuses_a_folder_another_command_wrote(tasks, tmp_path, capsys):
    corpus = tasks / "in" / "s0.jsonl"
    variants = tmp_path / "variants"
    assert main(["perturb", "-b", "gsm8k", "--limit", "2", "--out", str(variants)]) == 0
    summary = (variants / "summary.json").read_bytes()
    capsys.readouterr()
    assert main(["scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(variants)]) == 2
    assert "`contam perturb`" in capsys.readouterr().err
    assert (variants / "summary.json").read_bytes() == summary and not (variants / "flags.jsonl").exists()
    merged = tasks / "merged-for-scan"
    assert main(["merge", str(tasks / "t0"), str(tasks / "t1"), "--out", str(merged)]) == 0
    assert main(["scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(merged)]) == 2
    assert "`contam merge`" in capsys.readouterr().err
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "audit.toml").write_text('benchmarks = ["gsm8k"]\ndataset = "x.jsonl"\n', encoding="utf-8")
    assert main(["scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(tmp_path / "audit")]) == 2
    assert "audit run folder" in capsys.readouterr().err
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "summary.json").write_text(json.dumps({"accuracy": 0.9}), encoding="utf-8")
    assert main(["scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(foreign)]) == 2
    assert "no contam result" in capsys.readouterr().err
    # a scan's own folder (and a sharded task's) may be scanned into again
    own = tmp_path / "scan"
    assert main(["scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(own)]) == 0
    assert main(["scan", "-b", "gsm8k", "--corpus", str(corpus), "--out", str(own)]) == 0
