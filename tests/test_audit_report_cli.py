"""`contam report RUN` on an audit run folder (issue 32.5): it rebuilds the audit's report in any
format asked for (--out FILE, --format html|md|json), from another working folder too, and an
audit folder among other inputs stands for the steps it ran."""

from __future__ import annotations

import json

import pytest

from contam.audit.demo_data import build_dataset, write_benchmark
from contam.cli.main import main
from contam.stats.power import power_report


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("audit")
    bench = write_benchmark(d / "dcq-gsm8k-train.jsonl")
    ds = d / "train.jsonl"
    build_dataset(ds, rephrased=0, verbatim=2, n_docs=20, seed=6)
    r = d / "run"
    assert main(["audit", "-b", str(bench), "--dataset", str(ds), "--out", str(r), "--levels", "token"]) == 0
    return r


def test_report_of_an_audit_folder_in_every_format(run, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the run folder is read from wherever the command runs
    assert main(["report", str(run), "--out", "audit.html"]) == 0
    page = (tmp_path / "audit.html").read_text(encoding="utf-8")
    assert page == (run / "report.html").read_text(encoding="utf-8") and 'id="verdict"' in page
    capsys.readouterr()
    assert main(["report", str(run), "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["worst"] == "contaminated" and v["verdicts"][0]["side"] == "data"
    assert main(["report", str(run), "--format", "md"]) == 0
    assert "**contaminated**" in capsys.readouterr().out
    # the state file is not needed to rebuild: the config and the steps' records are
    (run / "audit.json").rename(tmp_path / "audit.json.bak")
    try:
        for f in ("report.html", "verdict.json"):
            (run / f).unlink()
        assert main(["report", str(run)]) == 0
        assert (run / "report.html").exists() and json.loads((run / "verdict.json").read_text(encoding="utf-8"))["worst"] == "contaminated"
    finally:
        (tmp_path / "audit.json.bak").rename(run / "audit.json")


def test_an_audit_folder_among_other_inputs_stands_for_its_steps(run, tmp_path):
    other = tmp_path / "power.json"
    other.write_text(json.dumps(power_report(n=50).to_dict()), encoding="utf-8")
    out = tmp_path / "both.json"
    assert main(["report", str(run), str(other), "--out", str(out)]) == 0
    kinds = [r["kind"] for r in json.loads(out.read_text(encoding="utf-8"))["results"]]
    assert kinds[:2] == ["scan", "decontaminate"] and "power" in kinds
