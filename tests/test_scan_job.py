"""The scan job (streaming, every core, atomic outputs) and decontamination, on real data."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from contam.data import load_benchmark
from contam.data.webtext import build_corpus, build_demo_corpus, write_jsonl
from contam.errors import ConfigError, InputError, OutputError
from contam.scan.decontaminate import decontaminate, load_scan
from contam.scan.job import run_scan
from contam.scan.ngram import NGramConfig

BENCH = ["gsm8k", "humaneval", "mmlu"]


@pytest.fixture(scope="module")
def items():
    from contam.data import load_benchmarks

    return load_benchmarks(BENCH)


@pytest.fixture()
def demo(tmp_path):
    path = tmp_path / "corpus.jsonl"
    return path, build_demo_corpus(path, seed=2)


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_scan_writes_flags_and_summary(demo, items, tmp_path) -> None:
    corpus, truth = demo
    s = run_scan(corpus, items, tmp_path / "out")
    assert s["documents"] == 200 and s["flagged"] == len(truth)
    rows = [json.loads(x) for x in _lines(tmp_path / "out" / "flags.jsonl")]
    assert [r["line"] for r in rows] == sorted(t.line for t in truth)
    for r, t in zip(rows, sorted(truth, key=lambda t: t.line), strict=True):
        assert t.item_id in {f["item_id"] for f in r["flags"]}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["by_benchmark"]["gsm8k"]["documents"] == 4
    assert set(summary["by_part"]) <= {"question", "answer", "seam", "item"}
    assert summary["bad_input"]["skipped"] == 0
    everything = run_scan(corpus, items, tmp_path / "all", keep_all=True)
    assert len(_lines(tmp_path / "all" / "flags.jsonl")) == 200 == everything["documents"]


def test_parallel_output_is_deterministic(items, tmp_path) -> None:
    docs, truth = build_corpus(1500, seed=8, items=load_benchmark("gsm8k")[:20] + load_benchmark("humaneval")[:20])
    corpus = tmp_path / "c.jsonl"
    write_jsonl(corpus, docs)
    cfg = NGramConfig(batch_bytes=64 << 10)  # many chunks
    one = run_scan(corpus, items, tmp_path / "one", config=cfg, workers=1)
    two = run_scan(corpus, items, tmp_path / "two", config=cfg, workers=2)
    assert two["workers"] == 2 and one["flagged"] == two["flagged"] == len(truth)
    assert (tmp_path / "one" / "flags.jsonl").read_bytes() == (tmp_path / "two" / "flags.jsonl").read_bytes()


def test_bad_input_in_a_worker_process(demo, items, tmp_path) -> None:
    """An error raised in a worker process reaches the caller as the same one-line error, with
    the file and line; under skip_bad the workers' counts add up."""
    corpus, truth = demo
    lines = corpus.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[:170]) + b'{"id": "y"}\n' + b"".join(lines[170:]))
    cfg = NGramConfig(batch_bytes=16 << 10)  # many blocks, spread over both workers
    with pytest.raises(InputError, match=r"bad.jsonl:171: field 'text': text field is missing"):
        run_scan(bad, items, tmp_path / "out", config=cfg, workers=2)
    assert not (tmp_path / "out" / "flags.jsonl").exists()
    s = run_scan(bad, items, tmp_path / "out", config=cfg, workers=2, skip_bad=True)
    assert s["workers"] == 2 and s["bad_input"]["reasons"] == {"missing field 'text'": 1}
    assert s["bad_input"]["examples"] == [f"{bad}:171: field 'text': text field is missing"]
    assert s["documents"] == 200 and s["flagged"] == len(truth)


def test_a_dead_worker_is_a_clear_error(items, tmp_path) -> None:
    import os
    import signal

    from contam.errors import ContamError, WorkerDied
    from contam.pool import OrderedPool
    from contam.scan import job
    from contam.scan.chunks import ByteRange
    from contam.scan.ngram import NGramScanner
    from contam.scan.worker import init_worker, work

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"text": "hello"}) + "\n", encoding="utf-8")
    workers = OrderedPool(2, init_worker, work, (NGramScanner().fit(items), "text", None, False, False, str(corpus)))
    try:
        assert workers.submit(ByteRange(0, corpus.stat().st_size)).get().counts["documents"] == 1
        os.kill(workers.procs[1].pid, signal.SIGKILL)
        workers.procs[1].join()
        with pytest.raises(ContamError, match=r"worker process died.*resume"):
            workers.submit(ByteRange(0, corpus.stat().st_size)).get()
        assert issubclass(WorkerDied, ContamError) and job.WorkerDied is WorkerDied  # still importable from the job
    finally:
        workers.close()


def test_blocks_numbered_by_their_workers_keep_corpus_line_numbers(items, tmp_path) -> None:
    """The reader hands out byte ranges without counting lines; each worker numbers its block
    from 1 and the parent renumbers it: line numbers, and the ids of records without one (their
    line number), are those of the corpus, across blocks, workers, blank and very long lines."""
    docs, truth = build_corpus(900, seed=13, items=load_benchmark("gsm8k")[:15] + load_benchmark("humaneval")[:15])
    long_line = {"text": "filler words without any benchmark text " * 5000}  # 200 kB: longer than a block
    lines = []
    for k, d in enumerate(docs):
        lines.append(json.dumps({"text": d["text"]}))  # no id field: the line number is the id
        if k in (100, 500):
            lines += ["", json.dumps(long_line)]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want = {}
    for t in truth:  # the corpus line of each injected document, after the inserted lines
        want[t.line + 2 * sum(t.line - 1 > k for k in (100, 500))] = t.item_id
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        s = run_scan(corpus, items, out, config=NGramConfig(batch_bytes=64 << 10), workers=workers)
        rows = [json.loads(x) for x in _lines(out / "flags.jsonl")]
        assert s["documents"] == 902 and {r["line"] for r in rows} == set(want)
        for r in rows:
            assert r["doc_id"] == str(r["line"]) and {f["doc_id"] for f in r["flags"]} == {str(r["line"])}
            assert want[r["line"]] in {f["item_id"] for f in r["flags"]}


def test_compressed_and_csv_corpora(demo, items, tmp_path) -> None:
    corpus, truth = demo
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(gzip.compress(corpus.read_bytes()))
    assert run_scan(gz, items, tmp_path / "gz")["flagged"] == len(truth)
    csv_path = tmp_path / "c.csv"
    import csv

    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "body"])
        for line in _lines(corpus):
            d = json.loads(line)
            w.writerow([d["id"], d["text"]])
    assert run_scan(csv_path, items, tmp_path / "csv", text_field="body")["flagged"] == len(truth)


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.zst"])
def test_json_escapes_and_odd_unicode_scan_as_without_prefilter(items, tmp_path, suffix) -> None:
    """Corpus lines written with JSON escapes (``\\u00e9``, ``\\n``, ``\\"``) and leaks in odd
    Unicode (shouted, curly quotes, non-breaking spaces, Kelvin signs): the job (raw blocks,
    prefilter, exact scorer on candidates only) writes exactly what the exact scorer writes
    on every document, and finds every leak."""
    import zstandard

    docs, truth = build_corpus(
        1200, seed=21, items=load_benchmark("gsm8k")[:12] + load_benchmark("humaneval")[:12] + load_benchmark("mmlu")[:12]
    )
    odd = [
        lambda t: t.upper(),
        lambda t: t.replace("'", "\u2019").replace('"', "\u201c"),
        lambda t: t.replace(" ", "\u00a0"),
        lambda t: t.replace("k", "\u212a").replace("é", "É"),
    ]
    injected = {t.line for t in truth}
    for k, line in enumerate(sorted(injected)):
        docs[line - 1]["text"] = odd[k % 4](docs[line - 1]["text"])
    body = "".join(json.dumps(d, ensure_ascii=True) + "\n" for d in docs).encode("ascii")
    assert b"\\u" in body and b'\\"' in body and b"\\n" in body
    corpus = tmp_path / f"c{suffix}"
    corpus.write_bytes(zstandard.ZstdCompressor().compress(body) if suffix.endswith(".zst") else body)
    cfg = NGramConfig(batch_bytes=128 << 10)
    fast = run_scan(corpus, items, tmp_path / "fast", config=cfg)
    slow = run_scan(corpus, items, tmp_path / "slow", config=NGramConfig(batch_bytes=128 << 10, prefilter=False))
    assert (tmp_path / "fast" / "flags.jsonl").read_bytes() == (tmp_path / "slow" / "flags.jsonl").read_bytes()
    rows = [json.loads(x) for x in _lines(tmp_path / "fast" / "flags.jsonl")]
    assert {r["line"] for r in rows} == injected and fast["documents"] == slow["documents"] == 1200


def test_checked_blocks_parse_only_the_lines_the_scorer_needs(items, tmp_path, monkeypatch) -> None:
    """Blocks whose every line the compiled check passes (nested metadata, raw UTF-8, blank
    lines) are not parsed whole: only candidate and odd lines reach the JSON parser, and the
    flags are those of the exact scorer on every document."""
    import contam.data.fastjsonl as fastjsonl

    docs, truth = build_corpus(800, seed=5, items=load_benchmark("gsm8k")[:10] + load_benchmark("mmlu")[:10])
    lines = []
    for k, d in enumerate(docs):
        d["meta"] = {"n": [k, 2.5e-3, None, True], "tags": ["web", "naïve"], "empty": {}}
        lines.append(json.dumps(d, ensure_ascii=False))
        if k % 97 == 0:
            lines.append("  \t ")  # blank lines are skipped, and still counted as lines
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parsed = []
    real_loads = fastjsonl._fast_loads
    monkeypatch.setattr(fastjsonl, "_fast_loads", lambda b: parsed.append(len(b)) or real_loads(b))
    cfg = NGramConfig(batch_bytes=64 << 10)
    fast = run_scan(corpus, items, tmp_path / "fast", config=cfg)
    assert 0 < sum(parsed) < corpus.stat().st_size / 10  # candidate lines only, not whole blocks
    slow = run_scan(corpus, items, tmp_path / "slow", config=NGramConfig(batch_bytes=64 << 10, prefilter=False))
    assert (tmp_path / "fast" / "flags.jsonl").read_bytes() == (tmp_path / "slow" / "flags.jsonl").read_bytes()
    assert fast["documents"] == slow["documents"] == 800 and fast["flagged"] == len(truth)


def test_bad_input_is_atomic_or_counted(demo, items, tmp_path) -> None:
    corpus, truth = demo
    bad = tmp_path / "bad.jsonl"
    lines = corpus.read_bytes().splitlines(keepends=True)
    bad.write_bytes(
        b"".join(lines[:150])
        + b'{"id": "x", "text": "unterminated\n'
        + b'{"id": "y"}\n'
        + b'{"id": "z", "text": "\xff\xfe"}\n'
        + b'{"id": "e", "text": "  "}\n'
        + b"".join(lines[150:])
    )
    out = tmp_path / "out"
    with pytest.raises(InputError, match=r"bad.jsonl:151: not valid JSON"):
        run_scan(bad, items, out)
    assert sorted(p.name for p in out.iterdir()) == []  # nothing half-written
    s = run_scan(bad, items, out, skip_bad=True)
    assert s["bad_input"]["skipped"] == 4 and s["documents"] == 201
    assert s["bad_input"]["reasons"] == {"not valid JSON": 1, "missing field 'text'": 1, "not valid UTF-8": 1, "empty text": 1}
    assert s["flagged"] == len(truth)


def test_lines_that_only_parse_joined_are_bad_input(demo, items, tmp_path) -> None:
    """The job parses a clean block as one JSON array (newlines read as commas). Lines that
    are no JSON value alone but make one together, as many values as lines, are still bad
    input, at the line where they are."""
    corpus, truth = demo
    lines = corpus.read_bytes().splitlines(keepends=True)
    tricky = b'{"id": "a", "text": "alpha beta", "b": [{}\n{}], "c": {}}\n{"id": "b", "text": "beta"}, {"id": "c", "text": "gamma"}\n'
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[:120]) + tricky + b"".join(lines[120:]))
    with pytest.raises(InputError, match=r"bad.jsonl:121: not valid JSON"):
        run_scan(bad, items, tmp_path / "out")
    s = run_scan(bad, items, tmp_path / "out2", skip_bad=True)
    assert s["bad_input"]["reasons"] == {"not valid JSON": 3} and s["documents"] == len(lines)
    assert s["flagged"] == len(truth)


def test_huge_document_and_config_errors(items, tmp_path) -> None:
    big = tmp_path / "big.jsonl"
    item = load_benchmark("gsm8k")[5]
    filler = "lorem ipsum dolor sit amet " * 400_000  # ~10 MB in one document
    big.write_text(json.dumps({"id": "big", "text": filler + item.question + filler}) + "\n", encoding="utf-8")
    s = run_scan(big, items, tmp_path / "big")
    assert s["flagged"] == 1 and s["bytes"] > 10_000_000
    with pytest.raises(ConfigError, match="unknown benchmark"):
        run_scan(big, ["gsm9k"], tmp_path / "x")
    with pytest.raises(ConfigError, match="unknown level"):
        run_scan(big, items, tmp_path / "x", levels=("lexical",))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="cannot create output folder"):
        run_scan(big, items, blocker / "out")
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "a", "question": "one two three"}\n{"id": "a", "question": "four"}\n')
    with pytest.raises(InputError, match="duplicate item id 'a'"):
        run_scan(big, [str(dup)], tmp_path / "x")
    with pytest.raises(ConfigError, match="repeats item id"):
        run_scan(big, ["gsm8k", "gsm8k"], tmp_path / "x")


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_decontaminate_round_trip(demo, items, tmp_path) -> None:
    corpus, truth = demo
    before = _sha(corpus)
    run_scan(corpus, items, tmp_path / "scan")
    flagged = {r.line for r in load_scan(tmp_path / "scan")}
    s = decontaminate(corpus, tmp_path / "clean.jsonl", scan=tmp_path / "scan", mode="drop")
    assert s["dropped"] == len(flagged) == len(truth) and s["documents_out"] == 200 - len(truth)
    kept = [line for i, line in enumerate(corpus.read_bytes().splitlines(keepends=True), 1) if i not in flagged]
    assert (tmp_path / "clean.jsonl").read_bytes() == b"".join(kept)  # byte for byte
    log = [json.loads(x) for x in _lines(tmp_path / "clean.jsonl.log.jsonl")]
    assert {e["line"] for e in log} == flagged and all(e["action"] == "dropped" for e in log)
    assert run_scan(tmp_path / "clean.jsonl", items, tmp_path / "rescan")["flagged"] == 0

    m = decontaminate(corpus, tmp_path / "masked.jsonl.gz", scan=tmp_path / "scan", mode="mask", mask="[X]")
    assert m["masked"] + m["dropped"] == len(truth) and m["documents_out"] + m["dropped"] == 200
    masked = [json.loads(x) for x in gzip.decompress((tmp_path / "masked.jsonl.gz").read_bytes()).splitlines()]
    assert sum("[X]" in d["text"] for d in masked) == m["masked"]
    plain = tmp_path / "masked.jsonl"
    plain.write_bytes(gzip.decompress((tmp_path / "masked.jsonl.gz").read_bytes()))
    rescan = run_scan(plain, items, tmp_path / "rescan2")
    assert rescan["flagged"] == 0, rescan
    assert _sha(corpus) == before  # the input is never modified


def test_decontaminate_refuses_bad_requests(demo, items, tmp_path) -> None:
    corpus, _ = demo
    run_scan(corpus, items, tmp_path / "scan")
    with pytest.raises(ConfigError, match="refusing to overwrite"):
        decontaminate(corpus, corpus, scan=tmp_path / "scan")
    with pytest.raises(ConfigError, match="mode"):
        decontaminate(corpus, tmp_path / "o.jsonl", scan=tmp_path / "scan", mode="shred")
    other = tmp_path / "other.jsonl"
    docs, _ = build_corpus(200, seed=77, items=[])
    write_jsonl(other, docs)
    with pytest.raises(InputError, match="do not match this corpus"):
        decontaminate(other, tmp_path / "o.jsonl", scan=tmp_path / "scan")
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "o.jsonl.log.jsonl").exists()
    with pytest.raises(InputError, match=r"no flags\.jsonl"):
        decontaminate(corpus, tmp_path / "o.jsonl", scan=tmp_path)


_SCAN_SCRIPT = """
import sys
from contam.scan.job import run_scan
from contam.scan.ngram import NGramConfig
run_scan(sys.argv[1], ["gsm8k", "humaneval"], sys.argv[2], config=NGramConfig(batch_bytes=32 << 10), workers=1, checkpoint_s=0)
"""


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_killed_scan_resumes_from_its_checkpoint(items, tmp_path, suffix) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    docs, truth = build_corpus(6000, seed=31, items=load_benchmark("gsm8k")[:30] + load_benchmark("humaneval")[:30])
    corpus = tmp_path / f"c{suffix}"
    write_jsonl(tmp_path / "c.jsonl", docs)
    if suffix.endswith(".gz"):
        corpus.write_bytes(gzip.compress((tmp_path / "c.jsonl").read_bytes()))
    out = tmp_path / "out"
    env = {**os.environ, "CONTAM_PROGRESS": "0"}
    proc = subprocess.Popen([sys.executable, "-c", _SCAN_SCRIPT, str(corpus), str(out)], env=env)
    state = out / ".scan-state.json"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if state.exists() and json.loads(state.read_text())["next_line"] > 1500:
            proc.send_signal(signal.SIGKILL)  # no chance to clean up: the checkpoint must carry the run
            break
        time.sleep(0.05)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the scan finished before it could be interrupted"
    assert not (out / "flags.jsonl").exists() and (out / ".flags.jsonl.partial").exists()
    resumed = run_scan(corpus, ["gsm8k", "humaneval"], out, config=NGramConfig(batch_bytes=32 << 10), workers=1)
    assert resumed["resumed_at_line"] > 1500 and resumed["documents"] == 6000
    fresh = run_scan(corpus, ["gsm8k", "humaneval"], tmp_path / "fresh", config=NGramConfig(batch_bytes=32 << 10), workers=1)
    assert (out / "flags.jsonl").read_bytes() == (tmp_path / "fresh" / "flags.jsonl").read_bytes()
    assert resumed["flagged"] == fresh["flagged"] == len(truth)
    assert sorted(p.name for p in out.iterdir()) == ["answers.json", "flags.jsonl", "summary.json"]
