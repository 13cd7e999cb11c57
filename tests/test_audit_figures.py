"""Issue 32.4: a data-side-only audit of a chat (SFT) dataset draws its figures: per level the
score distribution, flagged vs not, with the threshold the flags carry marked (the semantic
level's learned rule: probability, 0.5), and the flags per item; a figure that cannot be drawn
is named with the reason."""

from __future__ import annotations

import html
import json
import re

from contam.audit.demo_data import build_dataset, write_benchmark
from contam.cli.main import main
from contam.scan.flags import passed


def test_data_side_only_audit_of_a_chat_dataset_has_its_figures(tmp_path) -> None:
    bench = write_benchmark(tmp_path / "dcq-gsm8k-train.jsonl")
    plain = tmp_path / "plain.jsonl"
    build_dataset(plain, rephrased=3, verbatim=3, n_docs=40, seed=2)
    ds = tmp_path / "sft.jsonl"
    with open(ds, "w", encoding="utf-8") as fh:
        for line in plain.read_text(encoding="utf-8").splitlines():
            text = json.loads(line)["text"]
            msgs = [{"role": "user", "content": text}, {"role": "assistant", "content": "Thanks, noted."}]
            fh.write(json.dumps({"messages": msgs}) + "\n")
    run = tmp_path / "run"
    assert main(["audit", "-b", str(bench), "--dataset", str(ds), "--out", str(run), "--levels", "token,semantic"]) == 0
    pngs = {p.name for p in (run / "figures").glob("*.png")}
    assert {"scan-token.png", "scan-semantic.png", "scan-items.png"} <= pngs, pngs
    page = (run / "report.html").read_text(encoding="utf-8")
    figs = page[page.index('id="figures"') : page.index('id="claims"')]
    assert figs.count("<svg") == 3, figs[:2000]
    notes = html.unescape(" ".join(re.findall(r'<p class="note">(.*?)</p>', figs, re.S)))
    assert "reasoning level: no score distribution: the level did not run" in notes, notes
    assert "model side: no figures" in notes and "no model was given" in notes, notes
    # the semantic figure plots the score its threshold is applied to
    recs = [json.loads(x) for x in (run / "data" / "scan" / "flags.jsonl").read_text(encoding="utf-8").splitlines()]
    sem = [f for r in recs for f in r["flags"] if f["level"] == "semantic" and passed(f)]
    if sem and any(e.get("kind") == "combiner" for e in sem[0]["evidence"]):  # the learned rule
        assert sem[0]["threshold"] == 0.5 and "semantic level: probability of every record" in figs
    items = {f["item_id"] for r in recs for f in r["flags"] if passed(f)}
    assert items and f"{len(items)} items flagged" in page
