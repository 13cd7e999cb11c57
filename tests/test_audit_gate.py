"""contam audit on bad data and after a failure (issue 32.7, 32.8): an empty dataset is bad input
(exit 2 naming it), an inconclusive verdict does not pass a --fail-on gate unless
--allow-inconclusive, and a failed audit leaves no state that refuses the corrected command.
Token level only: these are about the run folder and the gate, not the detectors."""

from __future__ import annotations

import gzip
import json

import pytest

from contam.audit import build_outputs
from contam.audit.demo_data import build_dataset, write_benchmark
from contam.audit.runner import STATE
from contam.audit.verdict import build_verdict
from contam.cli.main import main


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_benchmark(tmp_path_factory.mktemp("bench") / "dcq-gsm8k-train.jsonl")


def _audit(bench, dataset, out, *extra):
    return main(["audit", "-b", str(bench), "--dataset", str(dataset), "--out", str(out), "--levels", "token", *extra])


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", None], ids=["empty", "blank-lines", "truncated-gzip"])
def test_a_dataset_without_records_is_bad_input_naming_the_file(tmp_path, bench, capsys, content):
    if content is None:
        ds = tmp_path / "train.jsonl.gz"
        whole = gzip.compress(b'{"text": "a document that the copy cut short"}\n' * 50)
        ds.write_bytes(whole[: len(whole) // 2])
    else:
        ds = tmp_path / "train.jsonl"
        ds.write_bytes(content)
    run = tmp_path / "run"
    assert _audit(bench, ds, run, "--fail-on", "contaminated") == 2
    err = capsys.readouterr().err
    assert ds.name in err and "error:" in err
    assert not (run / "verdict.json").exists()  # no verdict (least of all a passing one) on no data
    # the same through `contam scan`: no summary of nothing passes for a clean scan
    assert main(["scan", "-b", str(bench), "--corpus", str(ds), "--out", str(tmp_path / "scan")]) == 2
    assert ds.name in capsys.readouterr().err


def test_inconclusive_fails_the_gate_unless_allowed(tmp_path, bench):
    ds = tmp_path / "clean.jsonl"
    build_dataset(ds, rephrased=0, verbatim=0, n_docs=30, seed=3)
    run = tmp_path / "run"
    assert _audit(bench, ds, run, "--fail-on", "suspect") == 0  # clean data passes
    cfg = json.loads((run / "verdict.json").read_text(encoding="utf-8"))["config"]
    clean = build_verdict(run, cfg)
    assert clean.worst == "clean" and clean.gate("suspect") is None
    # the same folder read as an audit whose model side never finished: that side is inconclusive
    unfinished = build_verdict(run, {**cfg, "model": "smollm2"})
    assert [v.verdict for v in unfinished.verdicts] == ["clean", "inconclusive"] and unfinished.worst == "inconclusive"
    why = unfinished.gate("suspect")
    assert why is not None and "model side lacks a finished model-side probe" in why and "--allow-inconclusive" in why
    assert unfinished.fails("contaminated")
    assert unfinished.gate("suspect", allow_inconclusive=True) is None
    assert unfinished.gate(None) is None  # no gate asked for: nothing fails
    # --allow-inconclusive is a gate option: it does not change the run's fingerprint (resumes)
    assert _audit(bench, ds, run, "--fail-on", "contaminated", "--allow-inconclusive") == 0


def test_a_failed_audit_does_not_refuse_the_corrected_command(tmp_path, bench, capsys):
    ds = tmp_path / "train.jsonl"
    build_dataset(ds, rephrased=0, verbatim=1, n_docs=20, seed=4)
    run = tmp_path / "run"
    # a typo in the dataset path: refused before anything is written
    assert _audit(bench, tmp_path / "trian.jsonl", run) == 2
    assert "trian.jsonl" in capsys.readouterr().err
    assert not (run / STATE).exists()
    # a wrong --text-field: the scan step fails, no step finished
    assert _audit(bench, ds, run, "--text-field", "body") == 2
    assert "body" in capsys.readouterr().err
    assert json.loads((run / STATE).read_text(encoding="utf-8"))["done"] == {}
    # the corrected command runs in the same folder (no "another configuration", no --fresh)
    assert _audit(bench, ds, run, "--fail-on", "contaminated") == 1
    assert "scan" in json.loads((run / STATE).read_text(encoding="utf-8"))["done"]
    assert build_outputs(run).worst == "contaminated"
    # once a step has finished, another configuration is still refused
    assert _audit(bench, ds, run, "--text-field", "body") == 2
    assert "another configuration" in capsys.readouterr().err
