"""contam audit, data side, end to end through the CLI on real text: GPT-4 rephrasings (DCQ) and
verbatim copies injected into real prose; --fail-on gates; the report is rebuilt from the run folder."""

from __future__ import annotations

import json

import pytest

from contam.audit.demo_data import build_dataset, write_benchmark
from contam.cli.main import main


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_benchmark(tmp_path_factory.mktemp("bench") / "dcq-gsm8k-train.jsonl")


def _audit(bench, dataset, out, *extra):
    return main(["audit", "-b", str(bench), "--dataset", str(dataset), "--out", str(out), *extra])


def test_injected_rephrasings_fail_the_gate_and_report_is_complete(tmp_path, bench):
    ds = tmp_path / "synth.jsonl"
    truth = build_dataset(ds, rephrased=4, verbatim=2, n_docs=60, seed=1)
    before = ds.read_bytes()
    run = tmp_path / "run"
    assert _audit(bench, ds, run, "--fail-on", "contaminated") == 1
    assert ds.read_bytes() == before  # inputs are never modified
    v = json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    (data,) = v["verdicts"]
    assert data["side"] == "data" and data["verdict"] == "contaminated"
    assert "verbatim" in data["holds_against"]
    flagged = {
        json.loads(x)["doc_id"]
        for x in (run / "data" / "scan" / "flags.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(x)["contaminated"]
    }
    assert {t["doc_id"] for t in truth if t["kind"] == "verbatim"} <= flagged
    # the decontaminated copy drops every flagged document
    clean = [json.loads(x)["id"] for x in (run / "data" / "decontaminated.jsonl").read_text(encoding="utf-8").splitlines()]
    total = len(ds.read_text(encoding="utf-8").splitlines())
    assert not flagged & set(clean) and len(clean) == total - len(flagged)
    page = (run / "report.html").read_text(encoding="utf-8")
    assert page.index('id="verdict"') < page.index('id="figures"') and page.count("<svg") >= 1 and "<script" not in page
    assert list((run / "figures").glob("scan-*.png"))
    summary = (run / "summary.md").read_text(encoding="utf-8")
    assert "contaminated" in summary and len(summary.splitlines()) < 30
    # same command again: everything is finished, nothing reruns, same verdict
    assert _audit(bench, ds, run, "--fail-on", "suspect") == 1
    # --fail-on is only a gate: without it the run succeeds
    assert _audit(bench, ds, run) == 0
    # the report is rebuilt from the run folder alone
    for f in ("report.html", "summary.md", "verdict.json"):
        (run / f).unlink()
    assert main(["report", str(run)]) == 0
    assert json.loads((run / "verdict.json").read_text(encoding="utf-8"))["verdicts"] == v["verdicts"]
    assert (run / "report.html").exists()


def test_clean_dataset_passes_the_gate(tmp_path, bench):
    ds = tmp_path / "clean.jsonl"
    build_dataset(ds, rephrased=0, verbatim=0, n_docs=60, seed=2)
    run = tmp_path / "run"
    assert _audit(bench, ds, run, "--fail-on", "suspect") == 0
    (data,) = json.loads((run / "verdict.json").read_text(encoding="utf-8"))["verdicts"]
    assert data["verdict"] == "clean", data


def test_bad_input_exits_2(tmp_path, bench, capsys):
    assert _audit(bench, tmp_path / "missing.jsonl", tmp_path / "r") == 2
    assert "missing.jsonl" in capsys.readouterr().err
    cfg = tmp_path / "a.toml"
    cfg.write_text('benchmarks = ["gsm8k"]\ndataset = 3\n', encoding="utf-8")
    assert main(["audit", "--config", str(cfg), "--out", str(tmp_path / "r2")]) == 2
