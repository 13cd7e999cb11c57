"""``contam scan`` / ``decontaminate`` / ``benchmarks`` end to end through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contam.data.webtext import build_demo_corpus

CONTAM = str(Path(sys.executable).with_name("contam"))


def contam(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAM_PROGRESS": "0", "COLUMNS": "200"}
    return subprocess.run([CONTAM, *map(str, args)], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    truth = build_demo_corpus(d / "corpus.jsonl", seed=0)
    return d, truth


def _one_line_error(p: subprocess.CompletedProcess[str], needle: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], p.stderr


def test_benchmarks_lists_builtins() -> None:
    p = contam("benchmarks", "--json")
    assert p.returncode == 0, p.stderr
    rows = {r["name"]: r for r in json.loads(p.stdout)}
    assert rows["gsm8k"]["records"] == 1319 and rows["humaneval"]["license"] == "MIT"
    table = contam("benchmarks")
    assert table.returncode == 0 and "swebench-verified" in table.stdout


def test_scan_then_decontaminate(demo) -> None:
    d, truth = demo
    p = contam("scan", "-b", "gsm8k", "-b", "humaneval", "-b", "mmlu", "--corpus", d / "corpus.jsonl", "--out", d / "scan", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["documents"] == 200 and s["flagged"] == len(truth)
    rows = [json.loads(x) for x in (d / "scan" / "flags.jsonl").read_text().splitlines()]
    assert {(r["line"], r["flags"][0]["item_id"]) for r in rows} >= {(t.line, t.item_id) for t in truth if t.benchmark != "mmlu"}
    human = contam("scan", "-b", "gsm8k", "--corpus", d / "corpus.jsonl", "--out", d / "scan-gsm8k")
    assert human.returncode == 0 and "flagged" in human.stdout and "gsm8k/test/" in human.stdout
    p = contam("decontaminate", "--corpus", d / "corpus.jsonl", "--scan", d / "scan", "--out", d / "clean.jsonl", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["dropped"] == len(truth) and len((d / "clean.jsonl").read_text().splitlines()) == 200 - len(truth)
    p = contam("decontaminate", "--corpus", d / "corpus.jsonl", "-b", "gsm8k", "--mode", "mask", "--out", d / "masked.jsonl", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["masked"] == sum(t.benchmark == "gsm8k" for t in truth)
    _one_line_error(contam("decontaminate", "--corpus", d / "corpus.jsonl", "--out", d / "x.jsonl"), "exactly one of --scan")


BAD = {
    "malformed JSON": (b'{"text": "fine"}\n{"text": broken\n', "bad.jsonl:2: not valid JSON"),
    "missing text field": (b'{"text": "fine"}\n{"body": "x"}\n', "bad.jsonl:2: field 'text': text field is missing"),
    "non-UTF-8": (b'{"text": "fine"}\n{"text": "caf\xe9"}\n', "bad.jsonl:2: not valid UTF-8"),
    "empty text": (b'{"text": "fine"}\n{"text": "   "}\n', "bad.jsonl:2: field 'text': text is empty"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_corpus_lines(case, tmp_path) -> None:
    content, message = BAD[case]
    corpus = tmp_path / "bad.jsonl"
    corpus.write_bytes(content)
    out = tmp_path / "out"
    _one_line_error(contam("scan", "-b", "mmlu-sociology", "--corpus", corpus, "--out", out), message)
    assert not out.exists() or list(out.iterdir()) == []  # never a half-written output
    p = contam("scan", "-b", "mmlu-sociology", "--corpus", corpus, "--out", out, "--skip-bad", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["bad_input"]["skipped"] == 1 and s["documents"] >= 1


def test_bad_requests(demo, tmp_path) -> None:
    d, _ = demo
    corpus = d / "corpus.jsonl"
    _one_line_error(contam("scan", "-b", "gsm9k", "--corpus", corpus, "--out", tmp_path / "o"), "unknown benchmark 'gsm9k'")
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "q1", "question": "What is two plus two?"}\n{"id": "q1", "question": "Again?"}\n')
    _one_line_error(contam("scan", "-b", dup, "--corpus", corpus, "--out", tmp_path / "o"), "duplicate item id 'q1'")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    _one_line_error(contam("scan", "-b", "gsm8k", "--corpus", corpus, "--out", blocker / "out"), "cannot create output folder")
    _one_line_error(contam("scan", "-b", "gsm8k", "--corpus", tmp_path / "nope.jsonl", "--out", tmp_path / "o"), "no such file")
    _one_line_error(contam("scan", "-b", "gsm8k", "--corpus", corpus, "--out", tmp_path / "o", "--levels", "vibes"), "unknown level")
    _one_line_error(contam("scan", "-b", "gsm8k", "--corpus", corpus, "--out", tmp_path / "o", "--threshold", "2"), "threshold")


def test_ten_megabyte_document(tmp_path) -> None:
    from contam.data import load_benchmark

    item = load_benchmark("humaneval")[10]
    filler = "the quick brown fox jumps over the lazy dog. " * 230_000
    corpus = tmp_path / "big.jsonl"
    corpus.write_text(json.dumps({"id": "big", "text": filler + item.question + item.solution + filler}) + "\n", encoding="utf-8")
    assert corpus.stat().st_size > 20_000_000
    p = contam("scan", "-b", "humaneval", "--corpus", corpus, "--out", tmp_path / "out", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["flagged"] == 1
    row = json.loads((tmp_path / "out" / "flags.jsonl").read_text())
    assert row["flags"][0]["item_id"] == item.id and row["flags"][0]["part"] == "item"


def test_scan_with_calibrated_thresholds_file(demo) -> None:
    d, truth = demo
    thr = d / "thresholds.json"
    # The layout `contam eval-detectors --out` writes: one entry per benchmark.
    thr.write_text(
        json.dumps(
            {
                "gsm8k": {"token": 0.97, "semantic": 0.8, "reasoning": 0.6, "semantic_rule": "sim"},
                "humaneval": {"token": 0.5, "semantic": 0.75, "reasoning": 0.6, "semantic_rule": "sim"},
            }
        )
    )
    base = contam("scan", "-b", "gsm8k", "--corpus", d / "corpus.jsonl", "--out", d / "thr-default", "--json")
    strict = contam("scan", "-b", "gsm8k", "--corpus", d / "corpus.jsonl", "--out", d / "thr-strict", "--thresholds", thr, "--json")
    assert base.returncode == 0 and strict.returncode == 0, strict.stderr
    b, s = json.loads(base.stdout), json.loads(strict.stdout)
    assert s["thresholds"]["token"] == 0.97 and s["config"]["threshold"] == 0.97 and b["thresholds"] is None
    # The seed-0 demo corpus's GSM8K injections are whole copies (coverage 1.0): they stay flagged.
    assert s["flagged"] == b["flagged"] == sum(t.benchmark == "gsm8k" for t in truth)
    # The cascade path takes the file's other levels (reasoning here: no embedder needed).
    lv = contam(
        "scan",
        "-b",
        "gsm8k",
        "--corpus",
        d / "corpus.jsonl",
        "--out",
        d / "thr-l3",
        "--thresholds",
        thr,
        "--levels",
        "token,reasoning",
        "--json",
    )
    assert lv.returncode == 0, lv.stderr
    assert json.loads(lv.stdout)["thresholds"]["reasoning"] == 0.6 and json.loads(lv.stdout)["flagged"] >= b["flagged"]
    # --threshold still wins for level 1.
    over = contam(
        "scan", "-b", "gsm8k", "--corpus", d / "corpus.jsonl", "--out", d / "thr-over", "--thresholds", thr, "--threshold", "0.5", "--json"
    )
    assert json.loads(over.stdout)["config"]["threshold"] == 0.5
    _one_line_error(
        contam("scan", "-b", "gsm8k", "-b", "humaneval", "--corpus", d / "corpus.jsonl", "--out", d / "x", "--thresholds", thr),
        "several benchmarks",
    )
    _one_line_error(
        contam("scan", "-b", "mmlu", "--corpus", d / "corpus.jsonl", "--out", d / "x", "--thresholds", thr), "no entry for benchmark 'mmlu'"
    )


def test_semantic_scan_with_the_static_embedder(tmp_path: Path) -> None:
    """`--embedder static` without thresholds uses the embedder's own calibrated defaults (rule nn:
    cosine 0.99 alone, or from 0.66 with the second stage), not MiniLM's that would flag most
    same-genre text."""
    import random

    from contam.data import load_benchmark
    from contam.scan.paraphrase import rule_paraphrase

    items = load_benchmark("gsm8k")
    train = load_benchmark("gsm8k-train")
    rows = [{"id": f"para{i}", "text": rule_paraphrase(items[i].question, random.Random(i)) + "\n" + items[i].solution} for i in range(3)]
    rows += [{"id": f"train{i}", "text": train[i].text} for i in range(12)]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    p = contam("scan", "-b", "gsm8k", "--corpus", corpus, "--out", tmp_path / "o", "--levels", "semantic", "--embedder", "static", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["embedder"] == "static"
    flags = [json.loads(x) for x in (tmp_path / "o" / "flags.jsonl").read_text().splitlines()]
    assert sorted(f["doc_id"] for f in flags) == ["para0", "para1", "para2"]
    # A flag carries the threshold it passed: the cosine alone (0.99), or the second stage's (0.66).
    assert {fl["threshold"] for f in flags for fl in f["flags"]} <= {0.66, 0.99}
    assert all(fl["score"] >= fl["threshold"] for f in flags for fl in f["flags"])


def test_scan_of_a_benchmark_not_in_english_says_how_it_compared(tmp_path: Path) -> None:
    # MathOctopus's Japanese SVAMP as the benchmark (a file), English originals as the corpus.
    data = Path(__file__).resolve().parent.parent / "bench" / "data" / "independent" / "mathoctopus_msvamp"
    src = [json.loads(x) for x in (data / "sources.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    ja = {
        v["source"]: v["text"]
        for x in (data / "variants.jsonl").read_text(encoding="utf-8").splitlines()
        if x.strip()
        if (v := json.loads(x))["lang"] == "ja"
    }
    bench, corpus = tmp_path / "svamp_ja.jsonl", tmp_path / "corpus.jsonl"
    bench.write_text(
        "".join(json.dumps({"id": r["id"], "question": ja[r["id"]]}, ensure_ascii=False) + "\n" for r in src[:40]), encoding="utf-8"
    )
    docs = [src[5], src[17], src[33], *src[300:303]]  # three seen, three unseen
    corpus.write_text("".join(json.dumps({"id": r["id"], "text": r["text"]}) + "\n" for r in docs), encoding="utf-8")
    p = contam("scan", "-b", bench, "-c", corpus, "--out", tmp_path / "o", "--levels", "semantic")
    assert p.returncode == 0, p.stderr
    assert "mostly not English (ja)" in p.stdout and "languages" in p.stdout
    s = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert s["semantic_languages"]["benchmark_languages"] == {"ja": 40}
    flagged = {
        json.loads(x)["doc_id"]
        for x in (tmp_path / "o" / "flags.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(x)["contaminated"]
    }
    assert flagged <= {src[5]["id"], src[17]["id"], src[33]["id"]} and len(flagged) >= 2
