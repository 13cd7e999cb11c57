"""``contam audit --dataset DIR``, a sharded dataset (a folder of JSONL files): the data side reads
every shard's flags, so the verdict, the figures and the report's per-record evidence are those of
the whole dataset, as for one file; each shard gets its decontaminated copy (issue 32.3 and 32.4
for sharded data). GSM8K test questions rephrased by hand, two of them in records without an id
at the same line of each shard (their ``doc_id`` is the line: the same in both shards)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.data import load_benchmark
from contam.data.webtext import build_demo_corpus

GSM8K = load_benchmark("gsm8k")
#: (shard, line, id or None, GSM8K test item, the item's question in other words)
LEAKS = [
    ("part-0.jsonl", 3, None, 0, "Every day Janet's ducks lay 16 eggs. She eats three of them for breakfast each morning and uses "
     "four to bake muffins for her friends. The rest she sells at the farmers' market for $2 per egg. How many dollars does "
     "she make at the market each day?"),
    ("part-1.jsonl", 3, None, 2, "Josh wants to flip a house. He pays $80,000 for it and spends $50,000 on repairs, which "
     "raises the house's value by 150%. What was his profit?"),
    ("part-1.jsonl", 6, "leak-c", 3, "James runs 3 sprints, 3 times every week, and each sprint is 60 meters long. How many "
     "meters does he run in total per week?"),
]  # fmt: skip


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """The data-side audit of a two-shard dataset against the first 30 GSM8K test items."""
    d = tmp_path_factory.mktemp("auditsh")
    bench = d / "gsm8k-test-30.jsonl"
    bench.write_text(
        "".join(
            json.dumps({"id": it.id, "question": it.question, "answer": it.answer, "solution": it.solution}) + "\n" for it in GSM8K[:30]
        ),
        encoding="utf-8",
    )
    ds = d / "dataset"
    ds.mkdir()
    for k, name in enumerate(("part-0.jsonl", "part-1.jsonl")):
        build_demo_corpus(ds / name, seed=k, n_docs=25)
        lines = (ds / name).read_text(encoding="utf-8").splitlines()
        for shard, line, doc_id, _, text in LEAKS:
            if shard == name:
                lines.insert(line - 1, json.dumps({"id": doc_id, "text": text} if doc_id else {"text": text}))
        (ds / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = d / "run"
    rc = main(
        ["audit", "-b", str(bench), "--dataset", str(ds), "--out", str(run), "--levels", "token,semantic", "--fail-on", "contaminated"]
    )
    return run, ds, rc


def test_the_verdict_counts_every_shards_flags(audited: tuple[Path, Path, int]) -> None:
    run, _, rc = audited
    assert rc == 1, "a contaminated sharded dataset fails the gate (not exit 2, not a clean pass)"
    (data,) = json.loads((run / "verdict.json").read_text(encoding="utf-8"))["verdicts"]
    assert data["verdict"] == "contaminated", data
    assert (data["leaked_items"], data["benchmark_items"]) == (len(LEAKS), 30), data
    sem = next(c for c in data["claims"] if c["probe"] == "semantic")
    # two id-less records at line 3 of each shard are two documents, not one
    assert sem["detail"].startswith(f"{len(LEAKS)} document(s) flagged, {len(LEAKS)} item(s) matched"), sem


def test_the_figures_are_drawn_from_every_shard(audited: tuple[Path, Path, int]) -> None:
    run, _, _ = audited
    pngs = {p.name for p in (run / "figures").glob("*.png")}
    assert {"scan-token.png", "scan-semantic.png", "scan-items.png"} <= pngs, pngs
    page = (run / "report.html").read_text(encoding="utf-8")
    assert f"{len(LEAKS)} items flagged" in page
    assert "holds no scored record" not in html.unescape(page)


def test_the_report_shows_each_flagged_records_own_text(audited: tuple[Path, Path, int]) -> None:
    run, _, _ = audited
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "Corpus not readable" not in page and "flags.jsonl not found" not in page
    pairs = re.findall(r'<div class="beside"><figure><figcaption>(.*?)</figcaption><blockquote>(.*?)</blockquote>', page, re.S)
    for shard, line, _, item, text in LEAKS:
        label, record = next(((lab, body) for lab, body in pairs if f"line {line} of {shard}" in lab), ("", ""))
        assert label, f"no excerpt of line {line} of {shard}:\n{pairs}"
        assert html.unescape(record).startswith(text[:40]), record  # the record's own words, not the item's
        assert GSM8K[item].question[:40] not in html.unescape(record)


def test_each_shard_has_its_decontaminated_copy(audited: tuple[Path, Path, int]) -> None:
    run, ds, _ = audited
    leaked = {(shard, text) for shard, _, _, _, text in LEAKS}
    for name in ("part-0.jsonl", "part-1.jsonl"):
        (clean,) = (run / "data" / "scan" / "shards").glob(f"{name}-*/clean.jsonl")
        kept = [json.loads(x)["text"] for x in clean.read_text(encoding="utf-8").splitlines()]
        source = [json.loads(x)["text"] for x in (ds / name).read_text(encoding="utf-8").splitlines()]
        assert not {(name, t) for t in kept} & leaked and len(kept) == len(source) - sum(s == name for s, _ in leaked)
