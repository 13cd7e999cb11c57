"""The data side's measure is what it is (issue 32.2): "N of M items leaked, x % [lo, hi]" on the
terminal, in summary.md, report.html and verdict.json; "confidence" stays the model side's
Contamination Confidence."""

from __future__ import annotations

import json
import re

from contam.audit.demo_data import build_dataset, write_benchmark
from contam.audit.report import md_escape
from contam.cli.common import console
from contam.cli.main import main

LEAK = re.compile(r"(\d+) of (\d+) items leaked, (\d+\.\d) % \[(\d+\.\d), (\d+\.\d)\]")


def test_data_side_says_how_many_items_leaked_not_confidence(tmp_path, capsys):
    bench = write_benchmark(tmp_path / "dcq-gsm8k-train.jsonl")
    ds = tmp_path / "train.jsonl"
    truth = build_dataset(ds, rephrased=0, verbatim=3, n_docs=30, seed=5)
    run = tmp_path / "run"
    capsys.readouterr()
    saved = console._width
    console.width = 240  # the verdict table unwrapped, as on a wide terminal
    try:
        assert main(["audit", "-b", str(bench), "--dataset", str(ds), "--out", str(run), "--levels", "token"]) == 0
    finally:
        console._width = saved
    terminal = capsys.readouterr().out
    (data,) = json.loads((run / "verdict.json").read_text(encoding="utf-8"))["verdicts"]
    n_bench = len(bench.read_text(encoding="utf-8").splitlines())
    k = len({t["item_id"] for t in truth})
    # verdict.json: the counts, the share and its Wilson interval; no Contamination Confidence
    assert data["leaked_items"] == k and data["benchmark_items"] == n_bench
    assert abs(data["leaked_share"] - k / n_bench) < 1e-12 and data["leaked_ci_low"] < data["leaked_share"] < data["leaked_ci_high"]
    assert data["confidence"] is None and data["ci_low"] is None and "confidence" not in data["confidence_kind"].lower()
    m = LEAK.fullmatch(data["measure"])
    assert m is not None, data["measure"]
    assert (int(m[1]), int(m[2])) == (k, n_bench) and m[3] == f"{100 * k / n_bench:.1f}"
    assert m[4] == f"{100 * data['leaked_ci_low']:.1f}" and m[5] == f"{100 * data['leaked_ci_high']:.1f}"
    # the same words on the terminal, in summary.md and on the HTML card, never "confidence"
    assert data["measure"] in terminal and "confidence" not in terminal.lower()
    row = next(x for x in (run / "summary.md").read_text(encoding="utf-8").splitlines() if "| data |" in x)
    assert md_escape(data["measure"]) in row and "confidence" not in row.lower()
    page = (run / "report.html").read_text(encoding="utf-8")
    card = page[page.index('<section id="verdict"') : page.index("</section>", page.index('<section id="verdict"'))]
    assert data["measure"] in card and "confidence" not in card.lower()
