"""Bad input never ends in a traceback: a table of hand-made bad inputs, and hypothesis-made ones,
through every command that reads a user file (scan, decontaminate, perturb, probe minkprob,
report, regen grade).

For each case the command must either exit 2 with one line naming the file (and the line and
field where there is one), or exit 0 with a result checked against the clean input. It must
never raise (in process, any exception other than a clean exit fails the test, so a traceback
cannot hide), leave no file in ``--out`` when it failed, or change an input byte.

The data are real: GSM8K test items (written in GSM8K's own ``question``/``answer`` format) and
documents of the shipped web-text sample; the model of the minkprob case is the embedded SmolLM2.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam.cli.main import main
from contam.data import load_benchmark

N_ITEMS = 12
ESC = "\x1b"


# ---------------------------------------------------------------- fixtures: clean inputs and their results
@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A GSM8K-format benchmark file, a corpus with three leaked items, and the clean scan of it."""
    from contam.data.webtext import build_demo_corpus

    d = tmp_path_factory.mktemp("fuzz")
    items = load_benchmark("gsm8k")[:N_ITEMS]
    bench = d / "bench.jsonl"
    bench.write_text("".join(json.dumps({"question": it.question, "answer": it.solution}) + "\n" for it in items), encoding="utf-8")
    demo = d / "demo.jsonl"
    build_demo_corpus(demo, seed=0)
    docs = [json.loads(x) for x in demo.read_text(encoding="utf-8").splitlines()[:30]]
    docs = [{"id": f"doc{i}", "text": r["text"]} for i, r in enumerate(docs)]
    for j, it in enumerate(items[:3]):  # leaked items at lines 4, 11, 18
        docs.insert(3 + 7 * j, {"id": f"leak{j}", "text": f"Homework help.\n{it.question}\n{it.solution}\nThanks!"})
    corpus = d / "corpus.jsonl"
    write_jsonl(corpus, docs)
    scan_dir = d / "scan"
    code, _out, err = run(["scan", "-b", str(bench), "--corpus", str(corpus), "--out", str(scan_dir), "--json"])
    assert code == 0, err
    flags = flagged(scan_dir)
    assert [r[0] for r in flags] == ["leak0", "leak1", "leak2"]
    return {"dir": d, "items": items, "bench": bench, "corpus": corpus, "docs": docs, "scan": scan_dir, "flags": flags}


_CAP: list[Any] = []


@pytest.fixture(autouse=True)
def _capture(capsys: pytest.CaptureFixture[str]) -> Any:
    _CAP[:] = [capsys]
    yield
    _CAP.clear()


def run(argv: list[str]) -> tuple[int, str, str]:
    """``contam ARGV`` in this process: exit code, stdout, stderr. An exception escaping ``main``
    (a traceback for a user) fails the test where it happens."""
    if not _CAP:  # a module fixture (before any test's capture): only the exit code matters
        return main(argv), "", ""
    cap = _CAP[0]
    cap.readouterr()
    code = main(argv)
    got = cap.readouterr()
    return code, got.out, got.err


def write_jsonl(path: Path, rows: list[Any]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def flagged(scan_dir: Path) -> list[tuple[str, int, tuple[str, ...]]]:
    rows = [json.loads(x) for x in (scan_dir / "flags.jsonl").read_text(encoding="utf-8").splitlines()]
    return [(r["doc_id"], r["line"], tuple(sorted({f["item_id"] for f in r["flags"]}))) for r in rows if r["contaminated"]]


def digest(paths: list[Path]) -> dict[str, str]:
    """Content hashes of every file at or under ``paths`` (inputs must not change)."""
    out: dict[str, str] = {}
    for p in paths:
        files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else []
        for f in files:
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def files_in(out: Path) -> list[str]:
    if not out.exists():
        return []
    return sorted(str(x.relative_to(out)) for x in out.rglob("*") if x.is_file()) if out.is_dir() else [out.name]


def assert_one_line_error(code: int, err: str, path: Path | str, line: int | None = None, field: str | None = None) -> str:
    """Exit 2, one line ``error: ...`` naming the file (and line, field)."""
    assert code == 2, (code, err)
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    msg = lines[0]
    assert ESC not in msg and "\u202e" not in msg
    name = Path(path).name if isinstance(path, Path) else path
    assert name in msg.replace("\\[", "["), (name, msg)
    if line is not None:
        assert f":{line}:" in msg, (line, msg)
    if field is not None:
        assert repr(field) in msg, (field, msg)
    return msg


def check_run(argv: list[str], inputs: list[Path], out: Path | None) -> tuple[int, str, str]:
    """Run a command; whatever it answers, inputs are unchanged, and a failed run left nothing in ``out``."""
    before = digest(inputs)
    had = files_in(out) if out is not None else []
    code, stdout, err = run(argv)
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err and "Traceback" not in stdout
    assert digest(inputs) == before, "an input was modified"
    if code != 0 and out is not None:
        assert files_in(out) == had, f"a failed run left files in {out}: {files_in(out)}"
    return code, stdout, err


# ---------------------------------------------------------------- scan: hand-made corpora
def _lines(docs: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(r, ensure_ascii=False).encode("utf-8") for r in docs]


def _join(lines: list[bytes], eol: bytes = b"\n") -> bytes:
    return b"".join(x + eol for x in lines)


def _replace(k: int, new: bytes) -> Callable[[list[bytes]], bytes]:
    def make(lines: list[bytes]) -> bytes:
        lines = list(lines)
        lines[k - 1] = new
        return _join(lines)

    return make


def _zst(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


DEEP = b'{"meta": ' + b"[" * 200_000 + b"]" * 200_000 + b', "text": "deep"}'

# (name, file name, bytes maker, expected): expected is ("ok", same flags as clean?) or ("error", line, field).
SCAN_CASES: list[tuple[str, str, Callable[[list[bytes]], bytes], tuple[Any, ...]]] = [
    ("bom", "c.jsonl", lambda ls: b"\xef\xbb\xbf" + _join(ls), ("ok", True)),
    ("crlf", "c.jsonl", lambda ls: _join(ls, b"\r\n"), ("ok", True)),
    ("blank lines", "c.jsonl", lambda ls: b"\n  \n" + _join(ls), ("ok", False)),
    ("gzip", "c.jsonl.gz", lambda ls: gzip.compress(_join(ls)), ("ok", True)),
    ("zstd", "c.jsonl.zst", lambda ls: _zst(_join(ls)), ("ok", True)),
    ("truncated gzip", "c.jsonl.gz", lambda ls: gzip.compress(_join(ls))[:-200], ("error", None, None)),
    ("corrupt zstd", "c.jsonl.zst", lambda ls: _zst(_join(ls))[:40] + b"\x00garbage" * 50, ("error", None, None)),
    ("not zstd at all", "c.jsonl.zst", lambda ls: b"plain text, not zstd\n" * 10, ("error", None, None)),
    ("broken json", "c.jsonl", _replace(5, b'{"id": "x", "text": "unclosed'), ("error", 5, None)),
    ("text is a number", "c.jsonl", _replace(5, b'{"id": "x", "text": 42}'), ("error", 5, "text")),
    ("text missing", "c.jsonl", _replace(5, b'{"id": "x", "body": "hello"}'), ("error", 5, "text")),
    ("text is null", "c.jsonl", _replace(5, b'{"id": "x", "text": null}'), ("error", 5, "text")),
    ("text is whitespace", "c.jsonl", _replace(5, b'{"id": "x", "text": " \\n\\t "}'), ("error", 5, "text")),
    ("text is a list", "c.jsonl", _replace(5, b'{"id": "x", "text": ["a", "b"]}'), ("error", 5, "text")),
    ("record is a list", "c.jsonl", _replace(5, b'["id", "text"]'), ("error", 5, None)),
    ("record is a string", "c.jsonl", _replace(5, b'"text"'), ("error", 5, None)),
    ("invalid utf-8", "c.jsonl", _replace(5, b'{"id": "x", "text": "caf\xe9 au lait"}'), ("error", 5, None)),
    ("raw NUL in a string", "c.jsonl", _replace(5, b'{"id": "x", "text": "a\x00b"}'), ("error", 5, None)),
    ("deep nesting in an unused field", "c.jsonl", _replace(5, DEEP), ("error", 5, None)),
    (
        "lone surrogate in an id",
        "c.jsonl",
        lambda ls: _join(
            [ls[0], ls[1], ls[2], b'{"id": "leak\\ud800", "text": ' + json.dumps(json.loads(ls[3])["text"]).encode() + b"}", *ls[4:]]
        ),
        ("ok", "surrogate"),
    ),
    ("lone surrogate in a text", "c.jsonl", _replace(5, b'{"id": "x", "text": "broken \\udfff pair"}'), ("ok", True)),
    (
        "escape sequences and bidi in ids",
        "c.jsonl",
        lambda ls: _join(
            [
                ls[0],
                ls[1],
                ls[2],
                b'{"id": "\\u001b[31mred\\u202e[/]", "text": ' + json.dumps(json.loads(ls[3])["text"]).encode() + b"}",
                *ls[4:],
            ]
        ),
        ("ok", "hostile"),
    ),
    ("NaN and huge numbers", "c.jsonl", _replace(5, b'{"id": "x", "score": NaN, "big": 1e400, "text": "some words here"}'), ("ok", True)),
    ("duplicate text key", "c.jsonl", _replace(5, b'{"text": 1, "text": "the last one wins"}'), ("ok", True)),
    ("empty file", "c.jsonl", lambda ls: b"", ("any",)),
    ("only a BOM", "c.jsonl", lambda ls: b"\xef\xbb\xbf", ("any",)),
    ("random bytes", "c.jsonl", lambda ls: bytes(range(256)) * 4, ("error", 1, None)),
]


@pytest.mark.parametrize("case", SCAN_CASES, ids=[c[0] for c in SCAN_CASES])
def test_scan_bad_corpus_table(clean: dict[str, Any], tmp_path: Path, case: tuple[Any, ...]) -> None:
    _name, fname, make, expected = case
    corpus = tmp_path / fname
    corpus.write_bytes(make(_lines(clean["docs"])))
    out = tmp_path / "out"
    code, stdout, err = check_run(
        ["scan", "-b", str(clean["bench"]), "--corpus", str(corpus), "--out", str(out)], [corpus, clean["bench"]], out
    )
    assert ESC not in stdout and "\u202e" not in stdout
    if expected[0] == "any":
        if code == 2:
            assert_one_line_error(code, err, corpus)
        return
    if expected[0] == "error":
        assert_one_line_error(code, err, corpus, expected[1], expected[2])
        assert not any(out.glob(".*partial*")) and not (out / "flags.jsonl").exists()
        return
    assert code == 0, err
    got = flagged(out)
    if expected[1] is True:
        assert got == clean["flags"]
    elif expected[1] == "surrogate":
        assert got[0][0] == "leak\ud800" and got[1:] == clean["flags"][1:]
        assert "\\ud800" in (out / "flags.jsonl").read_text(encoding="utf-8")
    elif expected[1] == "hostile":
        assert got[0][0] == "\x1b[31mred\u202e[/]" and got[1:] == clean["flags"][1:]
    else:
        assert [g[0] for g in got] == [f[0] for f in clean["flags"]]
    assert not any(out.glob(".*partial*"))


def test_scan_names_with_markup_and_escapes(clean: dict[str, Any], tmp_path: Path) -> None:
    """Rich markup and escape sequences in a path or benchmark name cannot break the error printer."""
    folder = tmp_path / "[red]x[bold]"
    folder.mkdir()
    corpus = folder / "c[red]\x1b[2J.jsonl"
    corpus.write_bytes(b'{"id": 1, "text": 5}\n')
    code, _, err = check_run(
        ["scan", "-b", str(clean["bench"]), "--corpus", str(corpus), "--out", str(tmp_path / "o")], [corpus], tmp_path / "o"
    )
    msg = assert_one_line_error(code, err, "[red]x[bold]", 1, "text")
    assert "\\u001b[2J" in msg
    code, _out, err = check_run(
        ["scan", "-b", "[bold]nope[/]", "--corpus", str(clean["corpus"]), "--out", str(tmp_path / "o")], [clean["corpus"]], tmp_path / "o"
    )
    assert_one_line_error(code, err, "[bold]nope[/]")


# ---------------------------------------------------------------- benchmark files: scan -b FILE and perturb --benchmark FILE
def _bench_rows(items: list[Any]) -> list[dict[str, Any]]:
    return [{"question": it.question, "answer": it.solution} for it in items]


BENCH_CASES: list[tuple[str, str, Callable[[list[dict[str, Any]]], bytes], tuple[Any, ...]]] = [
    ("gsm8k format with BOM", "b.jsonl", lambda rs: b"\xef\xbb\xbf" + _join(_lines(rs)), ("ok",)),
    ("crlf", "b.jsonl", lambda rs: _join(_lines(rs), b"\r\n"), ("ok",)),
    ("json list", "b.json", lambda rs: json.dumps(rs).encode(), ("ok",)),
    ("json list with BOM", "b.json", lambda rs: b"\xef\xbb\xbf" + json.dumps({"data": rs}).encode(), ("ok",)),
    ("csv", "b.csv", lambda rs: _csv(rs), ("ok",)),
    ("csv with BOM", "b.csv", lambda rs: b"\xef\xbb\xbf" + _csv(rs), ("ok",)),
    (
        "csv row with an extra field",
        "b.csv",
        lambda rs: _csv(rs).replace(b"\r\n", b',"extra"\r\n', 3).replace(b',"extra"', b"", 2),
        ("error", "csv:2", None),
    ),
    ("csv row with a missing field", "b.csv", lambda rs: _csv(rs) + b"lonely\r\n", ("error", f"csv:{N_ITEMS + 1}", None)),
    ("question missing", "b.jsonl", lambda rs: _join(_lines([*rs[:2], {"answer": "#### 3"}, *rs[3:]])), ("error", 3, "question")),
    (
        "question is a number",
        "b.jsonl",
        lambda rs: _join(_lines([*rs[:2], {"question": 7, "answer": "#### 3"}, *rs[3:]])),
        ("error", 3, "question"),
    ),
    (
        "choices not a list",
        "b.jsonl",
        lambda rs: _join(_lines([*rs[:2], {"question": "q?", "choices": "abc"}, *rs[3:]])),
        ("error", 3, "choices"),
    ),
    ("duplicate ids", "b.jsonl", lambda rs: _join(_lines([{**r, "id": "same"} for r in rs])), ("error", 2, "id")),
    ("not json", "b.jsonl", lambda rs: b"question,answer\n1,2\n", ("error", 1, None)),
    ("json root is a number", "b.json", lambda rs: b"42", ("error", None, None)),
    ("deep nesting", "b.json", lambda rs: b"[" * 100_000 + b"]" * 100_000, ("error", None, None)),
    ("empty", "b.jsonl", lambda rs: b"", ("error", None, None)),
]


def _csv_start(data: bytes, k: int) -> int:
    """The physical line on which data record ``k`` (1-based, after the header) starts."""
    import csv
    import io

    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
    ends = [reader.line_num for _ in reader]
    return ends[k - 1] + 1


def _csv(rows: list[dict[str, Any]]) -> bytes:
    import csv
    import io

    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=["question", "answer"])
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode("utf-8")


@pytest.mark.parametrize("case", BENCH_CASES, ids=[c[0] for c in BENCH_CASES])
def test_benchmark_file_table(clean: dict[str, Any], tmp_path: Path, case: tuple[Any, ...]) -> None:
    _name, fname, make, expected = case
    bench = tmp_path / fname
    bench.write_bytes(make(_bench_rows(clean["items"])))
    out = tmp_path / "scan"
    code, _, err = check_run(["scan", "-b", str(bench), "--corpus", str(clean["corpus"]), "--out", str(out)], [bench, clean["corpus"]], out)
    if len(expected) > 1 and isinstance(expected[1], str):  # "csv:K": the physical line CSV record K starts on (solutions span lines)
        expected = ("error", _csv_start(_csv(_bench_rows(clean["items"])), int(expected[1][4:])), None)
    if expected[0] == "error":
        assert_one_line_error(code, err, bench, expected[1], expected[2])
    else:
        assert code == 0, err
        # Same items, same leaks found (item ids are the file's own: b/LINE).
        assert [(f[0], f[1]) for f in flagged(out)] == [(f[0], f[1]) for f in clean["flags"]]
    ref = tmp_path / "ref"
    code, stdout, err = check_run(["perturb", "--benchmark", str(bench), "--per-item", "1", "--out", str(ref), "--json"], [bench], ref)
    if expected[0] == "error":
        assert_one_line_error(code, err, bench, expected[1], expected[2])
    else:
        assert code == 0, err
        got, want = _coverage(json.loads(stdout)), _builtin_coverage()
        # The templates (and so every rejection of a template) do not depend on the item ids; the
        # values drawn do, so an item may run out of admissible draws under one id and not another.
        assert (got["items"], got["templated"]) == (want["items"], want["templated"])
        for counts in (got, want):
            counts["rejections"].pop("sampling_exhausted", None)
        assert got["rejections"] == want["rejections"]
        assert abs(got["instances"] - want["instances"]) <= 1 and got["instances"] >= N_ITEMS // 2


_KEYS = ("items", "templated", "covered", "instances", "items_with_variants", "rejections")
_BUILTIN: dict[str, Any] = {}


def _coverage(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: summary[k] for k in _KEYS}


def _builtin_coverage() -> dict[str, Any]:
    """What `contam perturb` makes of the same GSM8K items from the built-in benchmark (the
    values drawn depend on the item ids, the templates and their coverage do not)."""
    if "s" not in _BUILTIN:
        code, stdout, err = run(["perturb", "--benchmark", "gsm8k", "--limit", str(N_ITEMS), "--per-item", "1", "--json"])
        assert code == 0, err
        _BUILTIN["s"] = _coverage(json.loads(stdout))
        assert _BUILTIN["s"]["instances"] >= N_ITEMS // 2  # GSM8K's own format is not "0 variants"
    return _BUILTIN["s"]


# ---------------------------------------------------------------- decontaminate
def test_decontaminate_bad_inputs(clean: dict[str, Any], tmp_path: Path) -> None:
    corpus, scan = clean["corpus"], clean["scan"]
    # --out is an existing folder
    d = tmp_path / "a-folder"
    d.mkdir()
    code, _, err = check_run(["decontaminate", "--corpus", str(corpus), "--scan", str(scan), "--out", str(d)], [corpus, scan], d)
    assert_one_line_error(code, err, d)
    # --out is the corpus itself
    code, _, err = check_run(["decontaminate", "--corpus", str(corpus), "--scan", str(scan), "--out", str(corpus)], [corpus, scan], None)
    assert_one_line_error(code, err, corpus)
    # flags.jsonl with the wrong types
    bad_scan = tmp_path / "bad-scan"
    bad_scan.mkdir()
    (bad_scan / "flags.jsonl").write_text('{"doc_id": "a", "line": 1, "contaminated": true, "flags": [{"item_id": 3}]}\n', encoding="utf-8")
    out = tmp_path / "clean.jsonl"
    code, _, err = check_run(
        ["decontaminate", "--corpus", str(corpus), "--scan", str(bad_scan), "--out", str(out)], [corpus, bad_scan], tmp_path / "nothing"
    )
    assert_one_line_error(code, err, "flags.jsonl", 1)
    assert not out.exists()
    # a corrupt .zst corpus
    zc = tmp_path / "c.jsonl.zst"
    zc.write_bytes(_zst(corpus.read_bytes())[:50] + b"\xff" * 64)
    code, _, err = check_run(["decontaminate", "--corpus", str(zc), "--scan", str(scan), "--out", str(out)], [zc, scan], None)
    assert_one_line_error(code, err, zc)
    assert not out.exists() and not list(tmp_path.glob(".clean.jsonl*"))
    # a BOM and a lone surrogate in a flagged line: accepted, the right documents dropped
    docs = [dict(r) for r in clean["docs"]]
    docs[3]["id"] = "leak0"
    bomc = tmp_path / "bom.jsonl"
    bomc.write_bytes(b"\xef\xbb\xbf" + _join(_lines(docs)))
    # the scan of the corpus without the BOM is not a scan of this file (issue 32.12)
    code, _, err = check_run(["decontaminate", "--corpus", str(bomc), "--scan", str(scan), "--out", str(out)], [bomc, scan], None)
    assert_one_line_error(code, err, bomc)
    bom_scan = tmp_path / "bom-scan"
    code, _, err = run(["scan", "-b", str(clean["bench"]), "--corpus", str(bomc), "--out", str(bom_scan)])
    assert code == 0, err
    code, stdout, err = check_run(
        ["decontaminate", "--corpus", str(bomc), "--scan", str(bom_scan), "--out", str(out), "--json"], [bomc, bom_scan], None
    )
    assert code == 0, err
    assert json.loads(stdout)["dropped"] == 3
    assert len(out.read_text(encoding="utf-8-sig").splitlines()) == len(docs) - 3


# ---------------------------------------------------------------- report
def test_report_bad_inputs(clean: dict[str, Any], tmp_path: Path) -> None:
    scan = clean["scan"]
    # wrong JSON types in a summary that is recognized as a scan
    bad = tmp_path / "bad"
    bad.mkdir()
    s = json.loads((scan / "summary.json").read_text(encoding="utf-8"))
    for key, value in (("documents", "many"), ("by_benchmark", [1, 2]), ("flag_rate", {"a": 1}), ("bad_input", None)):
        (bad / "summary.json").write_text(json.dumps({**s, key: value}), encoding="utf-8")
        for fmt in ("html", "md", "json"):
            out = tmp_path / f"r-{key}.{fmt}"
            code, _, err = check_run(["report", str(bad), "--format", fmt, "--out", str(out)], [bad], None)
            if code == 2:
                assert_one_line_error(code, err, "summary.json")
                assert not out.exists()
    # --out is one of the inputs, or a file read inside an input folder
    for target in (scan / "summary.json", scan / "flags.jsonl"):
        code, _, err = check_run(["report", str(target if target.name == "summary.json" else scan), "--out", str(target)], [scan], None)
        assert_one_line_error(code, err, target.name)
    # --out is a folder
    code, _, err = check_run(["report", str(scan), "--out", str(tmp_path)], [scan], None)
    assert_one_line_error(code, err, tmp_path.name)
    # hostile text reaches stdout escaped
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "summary.json").write_text(json.dumps({**s, "corpus": "c\x1b[2J\u202e\ud800.jsonl"}), encoding="utf-8")
    for fmt in ("html", "md", "json"):
        code, stdout, err = check_run(["report", str(hostile), "--format", fmt], [hostile], None)
        assert code == 0, err
        assert ESC not in stdout and "\u202e" not in stdout
    # a truncated summary.json
    (bad / "summary.json").write_text('{"documents": 3, "flagged"', encoding="utf-8")
    code, _, err = check_run(["report", str(bad)], [bad], None)
    assert_one_line_error(code, err, "summary.json")


# ---------------------------------------------------------------- regen grade
@pytest.fixture(scope="module")
def regen_instances(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("regen") / "fresh"
    code = main(["regen", "--domain", "retail", "--seeds", "0", "--tasks", "0:2", "--out", str(out), "--json"])
    assert code == 0
    return out / "instances.jsonl"


def test_regen_grade_bad_inputs(regen_instances: Path, tmp_path: Path) -> None:
    inst = regen_instances
    key = json.loads(inst.read_text(encoding="utf-8").splitlines()[0])["key"]
    eps = tmp_path / "eps.jsonl"
    out = tmp_path / "graded"
    huge = [
        {"name": "calculate", "kwargs": {"expression": e}}
        for e in ("((9**64)**64)", "9**9**9**9", "(" * 300 + "1" + ")" * 300, "1e999*1e999")
    ]
    write_jsonl(eps, [{"key": key, "actions": huge, "messages": ["hi"]}])
    code, _stdout, err = check_run(["regen", "grade", "-i", str(inst), "-e", str(eps), "--out", str(out), "--json"], [inst, eps], out)
    assert code == 0, err
    row = json.loads((out / "graded.jsonl").read_text(encoding="utf-8"))
    assert row["tool_errors"] == len(huge) and row["passed"] is False
    cases = [
        ([{"key": ["not", "a", "string"], "actions": []}], 1, "key"),
        ([{"key": key, "actions": "calculate(1)"}], 1, "actions"),
        ([{"key": key, "actions": [{"name": "calculate", "kwargs": [1, 2]}], "messages": "hi"}], 1, "messages"),
        ([{"key": key}], 1, "actions"),
        ([{"key": "retail/999/0", "actions": []}], 1, "key"),
    ]
    for rows, line, field in cases:
        write_jsonl(eps, rows)
        out2 = tmp_path / "graded2"
        code, _, err = check_run(["regen", "grade", "-i", str(inst), "-e", str(eps), "--out", str(out2)], [inst, eps], out2)
        assert_one_line_error(code, err, eps, line, field)
    eps.write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"key": key, "actions": [{"name": "calculate", "kwargs": {"expression": "2*3"}}]}).encode() + b"\r\n"
    )
    code, _, err = check_run(["regen", "grade", "-i", str(inst), "-e", str(eps), "--out", str(tmp_path / "g3")], [inst, eps], None)
    assert code == 0, err
    # instances with the wrong types
    bad_inst = tmp_path / "inst.jsonl"
    bad_inst.write_text(
        json.dumps({"key": key, "domain": "retail", "task_index": "zero", "seed": [], "goal_hash": 1}) + "\n", encoding="utf-8"
    )
    code, _, err = check_run(
        ["regen", "grade", "-i", str(bad_inst), "-e", str(eps), "--out", str(tmp_path / "g4")], [bad_inst, eps], tmp_path / "g4"
    )
    assert_one_line_error(code, err, bad_inst, 1)


# ---------------------------------------------------------------- probe minkprob
def test_minkprob_bad_inputs(clean: dict[str, Any], tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    bench.write_bytes(_join(_lines(_bench_rows(clean["items"])[:2])) + b'{"question": 3}\n')
    out = tmp_path / "mink"
    code, _, err = check_run(
        ["probe", "minkprob", "--benchmark", str(bench), "--control", str(clean["bench"]), "--n", "3", "--out", str(out)], [bench], out
    )
    assert_one_line_error(code, err, bench, 3, "question")
    code, _, err = check_run(
        ["probe", "minkprob", "--benchmark", str(clean["bench"]), "--control", str(bench), "--n", "3", "--out", str(out)], [bench], out
    )
    assert_one_line_error(code, err, bench, 3, "question")
    ctrl = tmp_path / "ctrl.jsonl"
    ctrl.write_bytes(
        b"\xef\xbb\xbf"
        + _join(_lines([{"question": it.question, "answer": it.solution} for it in load_benchmark("gsm8k-train")[:3]]), b"\r\n")
    )
    code, stdout, err = check_run(
        ["probe", "minkprob", "--benchmark", str(clean["bench"]), "--control", str(ctrl), "--n", "3", "--json"],
        [ctrl, clean["bench"]],
        None,
    )
    assert code == 0, err
    s = json.loads(stdout)
    assert s["n_benchmark"] == 3 and s["n_control"] == 3


# ---------------------------------------------------------------- usage errors
USAGE = [
    ["scan", "--no-such-option"],
    ["scan", "--corpus"],
    ["scan", "-b", "gsm8k", "--out", "x"],
    ["perturb", "--benchmark", "gsm8k", "--per-item", "many"],
    ["probe", "minkprob", "--n", "1.5"],
    ["report"],
    ["no-such-command"],
    ["regen", "grade", "-i"],
    ["scan", "--corpus", "\udcff.jsonl"],
]


@pytest.mark.parametrize("argv", USAGE, ids=[" ".join(a).encode("ascii", "backslashreplace").decode() for a in USAGE])
def test_usage_errors_are_usage_messages(argv: list[str]) -> None:
    code, _out, err = run(argv)
    assert code == 2, (code, err)
    assert "Traceback" not in err and "Error: " in err


# ---------------------------------------------------------------- hypothesis: generated corpora and summaries
def _oracle(data: bytes) -> tuple[int, int | None]:
    """What the scan must answer for a corpus, decided independently of contam's parser:
    (number of documents, None) when every line is good, else (0, first bad line)."""
    n = 0
    for i, raw in enumerate(data.split(b"\n"), start=1):
        if i == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return 0, i
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str) or not rec["text"].strip():
            return 0, i
        n += 1
    return n, None


_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), _text)
_json = st.recursive(_json_leaf, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text, kids, max_size=3), max_leaves=8)
_good = st.builds(lambda t, i: {"id": i, "text": t}, st.text(min_size=1, max_size=60).filter(lambda s: s.strip()), _text)
_record = st.one_of(_good, st.dictionaries(st.sampled_from(["id", "text", "meta"]), _json, max_size=3), _json)


@st.composite
def _line(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["good", "good", "record", "cut", "bytes", "escapes"]))
    if kind == "good":
        return json.dumps(draw(_good), ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass").replace(b"\n", b"\\n")
    if kind == "record":
        return json.dumps(draw(_record), ensure_ascii=True).encode()
    if kind == "cut":
        full = json.dumps(draw(_good), ensure_ascii=True).encode()
        return full[: draw(st.integers(0, max(0, len(full) - 1)))]
    if kind == "escapes":
        esc = draw(st.sampled_from(["\\ud800", "\\udfff", "\\u001b[31m", "\\u202e", "\\u0000", "\\\\", "[/]", "\\ud83d\\ude00"]))
        return ('{"id": "a' + esc + '", "text": "x' + esc + ' y"}').encode()
    return draw(st.binary(max_size=30)).replace(b"\n", b" ")


_EXAMPLES = int(os.environ.get("CONTAM_FUZZ_EXAMPLES", "10"))
_FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def _check_generated(clean: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], bom: bool, crlf: bool) -> None:
    d = tmp_path_factory.mktemp("gen")
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(x + (b"\r\n" if crlf else b"\n") for x in lines)
    corpus = d / "g.jsonl"
    corpus.write_bytes(data)
    out = d / "out"
    code, stdout, err = check_run(["scan", "-b", str(clean["bench"]), "--corpus", str(corpus), "--out", str(out), "--json"], [corpus], out)
    n, bad = _oracle(data)
    if bad is None and n == 0:
        assert_one_line_error(code, err, corpus)  # no record at all is bad input (issue 32.7), never an all-clear
    elif bad is None:
        assert code == 0, err
        assert json.loads(stdout)["documents"] == n
        rows = [json.loads(x) for x in (out / "flags.jsonl").read_text(encoding="utf-8").splitlines()]
        assert all(isinstance(r["doc_id"], str) for r in rows)
    else:
        assert_one_line_error(code, err, corpus, bad)


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=_FIXTURES)
@given(lines=st.lists(_line(), min_size=1, max_size=6), bom=st.booleans(), crlf=st.booleans())
def test_scan_generated_corpora(
    clean: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], bom: bool, crlf: bool
) -> None:
    _check_generated(clean, tmp_path_factory, lines, bom, crlf)


def test_a_bad_line_before_a_shapeless_record_is_the_error(clean: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    # Found by the generator: the format sniffer skipped the NUL line and blamed line 2's {} instead.
    _check_generated(clean, tmp_path_factory, [b"\x00", b"{}"], False, False)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=_FIXTURES)
@given(lines=st.lists(_line(), min_size=1, max_size=10), bom=st.booleans(), crlf=st.booleans())
def test_scan_generated_corpora_many(
    clean: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], bom: bool, crlf: bool
) -> None:
    _check_generated(clean, tmp_path_factory, lines, bom, crlf)


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=_FIXTURES)
@given(
    key=st.sampled_from(
        ["documents", "flagged", "flag_rate", "by_benchmark", "by_part", "bad_input", "items", "seconds", "corpus", "config"]
    ),
    value=_json,
)
def test_report_generated_summaries(clean: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, key: str, value: Any) -> None:
    d = tmp_path_factory.mktemp("rep")
    s = json.loads((clean["scan"] / "summary.json").read_text(encoding="utf-8"))
    (d / "summary.json").write_text(json.dumps({**s, key: value}), encoding="utf-8")
    code, stdout, err = check_run(["report", str(d), "--format", "md"], [d], None)
    assert ESC not in stdout
    if code == 2:
        assert_one_line_error(code, err, "summary.json")


@settings(max_examples=_EXAMPLES * 4, deadline=None)
@given(expr=st.one_of(st.text(max_size=60), st.from_regex(re.compile(r"[0-9().*+/ -]{1,40}|\(*9\*\*9(\*\*9)*\)*"), fullmatch=True)))
def test_calculator_never_raises_anything_else(expr: str) -> None:
    from contam.perturb.arith import ArithError
    from contam.regen.calc import evaluate

    try:
        value = evaluate(expr)
    except ArithError:
        return
    assert isinstance(value, float)


def test_a_lone_backslash_line_is_not_skipped(clean: dict[str, Any], tmp_path: Path) -> None:
    """Found by the generated corpora: the compiled prefilter read ``\\`` + newline as an escape,
    so the line vanished and the scan exited 0."""
    corpus = tmp_path / "g.jsonl"
    corpus.write_bytes(b'{"id": "a", "text": "hello there"}\n\\\n')
    out = tmp_path / "out"
    code, _, err = check_run(["scan", "-b", str(clean["bench"]), "--corpus", str(corpus), "--out", str(out)], [corpus], out)
    assert_one_line_error(code, err, corpus, 2)
