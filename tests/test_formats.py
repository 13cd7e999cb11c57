"""Issue 15 item 4: chat / ShareGPT / Alpaca / prompt-response corpora are scanned without hand
conversion, every flag's evidence names the turn and the offsets inside it, and decontaminate
writes the records back in their own format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contam.data import load_benchmark, read_documents
from contam.data.formats import FormatReader, detect, record_text
from contam.data.loaders import sniff_format
from contam.data.webtext import paragraphs
from contam.errors import InputError
from contam.scan.decontaminate import decontaminate
from contam.scan.records import scan_records as run_scan


@pytest.fixture(scope="module")
def items():
    return load_benchmark("gsm8k")


def _chat(q: str, a: str) -> dict:
    return {
        "messages": [
            {"role": "system", "content": "You are a helpful math tutor."},
            {"role": "user", "content": q},
            {"role": "assistant", "content": a},
        ]
    }


def _sharegpt(q: str, a: str) -> dict:
    return {"conversations": [{"from": "human", "value": q}, {"from": "gpt", "value": a}]}


def _alpaca(q: str, a: str) -> dict:
    return {"instruction": "Solve the following problem.", "input": q, "output": a}


def _pair(q: str, a: str) -> dict:
    return {"prompt": q, "response": a}


CONTAM = str(Path(sys.executable).with_name("contam"))


def contam(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAM_PROGRESS": "0", "COLUMNS": "200"}
    return subprocess.run([CONTAM, *map(str, args)], capture_output=True, text=True, env=env, timeout=600)


MAKERS = {"chat": _chat, "sharegpt": _sharegpt, "alpaca": _alpaca, "pair": _pair}
# The turn index and role of the question and of the answer in each format.
WHERE = {
    "chat": ((1, "user"), (2, "assistant")),
    "sharegpt": ((0, "user"), (1, "assistant")),
    "alpaca": ((1, "user"), (2, "assistant")),
    "pair": ((0, "user"), (1, "assistant")),
}


def _corpus(path, fmt: str, items, leaks: dict[int, tuple[int, str]]) -> list[str]:
    """200 records of ``fmt``: clean ones pair web paragraphs; at line L in ``leaks`` the user turn
    (``"q"``) or the assistant turn (``"a"``) holds the real GSM8K test item (question / worked solution)."""
    pool = paragraphs()
    lines = []
    for line in range(1, 201):
        q, a = pool[line % len(pool)], pool[(line * 7) % len(pool)]
        if line in leaks:
            k, where = leaks[line]
            if where == "q":
                q = "Please help with this one. " + items[k].question
            else:
                a = "Here is the worked solution.\n" + items[k].solution
        rec = MAKERS[fmt](q, a)
        rec["id"] = f"r{line}"
        lines.append(json.dumps(rec, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


@pytest.mark.parametrize("fmt", list(MAKERS))
def test_detect_and_read_each_format(fmt, tmp_path) -> None:
    rec = MAKERS[fmt]("What is 2+2?", "It is 4.")
    assert detect(rec) == fmt
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps(rec) + "\n")
    assert sniff_format(p) == fmt
    (doc,) = list(read_documents(p, fmt="auto"))
    assert "What is 2+2?" in doc.text and "It is 4." in doc.text
    (user_only,) = list(read_documents(p, fmt=fmt, roles=("user",)))
    assert "It is 4." not in user_only.text
    for t in doc.metadata["turns"]:
        assert doc.text[t.start : t.end] in ("What is 2+2?", "It is 4.", "Solve the following problem.", "You are a helpful math tutor.")


@pytest.mark.parametrize("fmt", list(MAKERS))
def test_scan_names_turn_and_offsets_inside_it(fmt, items, tmp_path) -> None:
    """Real GSM8K test items leaked into the user turn (question) or the assistant turn (worked
    solution) are flagged; each evidence names the turn index and role, and its offsets inside
    that turn select the evidence text from the record's own field."""
    leaks = {20: (5, "q"), 77: (300, "a"), 150: (1200, "q")}
    corpus = tmp_path / f"{fmt}.jsonl"
    lines = _corpus(corpus, fmt, items, leaks)
    s = run_scan(corpus, items, tmp_path / "out", workers=1)
    assert s["format"] == fmt
    results = {json.loads(r)["line"]: json.loads(r) for r in open(tmp_path / "out" / "flags.jsonl", encoding="utf-8")}
    assert set(results) == set(leaks)
    for line, (k, where) in leaks.items():
        r = results[line]
        assert r["flags"][0]["item_id"] == items[k].id
        rec = json.loads(lines[line - 1])
        rt = record_text(rec, fmt)
        want_turn, want_role = WHERE[fmt][0 if where == "q" else 1]
        for e in r["flags"][0]["evidence"]:
            assert (e["turn"], e["role"]) == (want_turn, want_role)
            t = next(t for t in rt.turns if t.turn == e["turn"])
            a, b = e["turn_span"]
            field_text = rt.text[t.start : t.end]
            assert field_text[a:b] == e["text"][: b - a]


def test_roles_pick_the_turns(items, tmp_path) -> None:
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus, "chat", items, {10: (5, "q"), 30: (40, "a")})
    s_user = run_scan(corpus, items, tmp_path / "u", roles=("user",), workers=1)
    run_scan(corpus, items, tmp_path / "a", roles=("assistant",), workers=1)
    lines_u = [json.loads(r)["line"] for r in open(tmp_path / "u" / "flags.jsonl")]
    lines_a = [json.loads(r)["line"] for r in open(tmp_path / "a" / "flags.jsonl")]
    assert lines_u == [10] and lines_a == [30]
    assert s_user["roles"] == ["user"]


def test_mixed_or_unknown_records_name_file_line_field(tmp_path) -> None:
    p = tmp_path / "mixed.jsonl"
    p.write_text(json.dumps(_chat("a b", "c")) + "\n" + json.dumps({"conversations": [{"from": "human", "value": "x"}]}) + "\n")
    with pytest.raises(InputError) as e:
        list(read_documents(p, fmt="auto"))
    assert e.value.line == 2 and e.value.field == "messages" and str(p) in str(e.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "x"}) + "\n")
    with pytest.raises(InputError, match="cannot tell the record format") as e2:
        sniff_format(bad)
    assert e2.value.line == 1
    msg = tmp_path / "msg.jsonl"
    msg.write_text(json.dumps({"messages": [{"role": "user", "content": 3}]}) + "\n")
    with pytest.raises(InputError, match="expected a string") as e3:
        list(read_documents(msg, fmt="chat"))
    assert e3.value.field == "messages[0].content"
    reader = FormatReader("alpaca", path="x.jsonl")
    with pytest.raises(InputError, match="instruction"):
        reader.read({"output": "y"}, 4)


def test_cli_unknown_format_exits_2(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "x"}) + "\n")
    for extra, needle in (((), "cannot tell the record format"), (("--format", "xml"), "unknown --format 'xml'")):
        p = contam("scan", "-b", "gsm8k", "--corpus", bad, "--out", tmp_path / "o", *extra)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and needle in lines[0] and ("bad.jsonl:1" in lines[0] or not extra == ()), lines


@pytest.mark.parametrize("fmt", list(MAKERS))
def test_decontaminate_writes_records_back_in_their_format(fmt, items, tmp_path) -> None:
    leaks = {20: (5, "q"), 77: (300, "a")}
    corpus = tmp_path / f"{fmt}.jsonl"
    lines = _corpus(corpus, fmt, items, leaks)
    run_scan(corpus, items, tmp_path / "scan", workers=1)
    out = tmp_path / "clean.jsonl"
    s = decontaminate(corpus, out, scan=tmp_path / "scan", mode="mask", mask="[X]")
    assert s["masked"] == 2
    got = out.read_text(encoding="utf-8").splitlines()
    assert len(got) == len(lines)
    for i, (before, after) in enumerate(zip(lines, got, strict=True), start=1):
        if i not in leaks:
            assert before == after  # unchanged records: byte for byte
            continue
        rec, orig = json.loads(after), json.loads(before)
        assert detect(rec) == fmt and set(rec) == set(orig)  # same shape, same fields
        k, where = leaks[i]
        masked = record_text(rec, fmt).text
        assert "[X]" in masked
        assert items[k].question[:60] not in masked and items[k].solution[:60] not in masked
        # the other turns are untouched
        other = WHERE[fmt][1 if where == "q" else 0]
        t_after = next(t for t in record_text(rec, fmt).turns if t.turn == other[0])
        t_before = next(t for t in record_text(orig, fmt).turns if t.turn == other[0])
        assert masked[t_after.start : t_after.end] == record_text(orig, fmt).text[t_before.start : t_before.end]
    log = [json.loads(x) for x in open(str(out) + ".log.jsonl")]
    assert all(e["turns"] for e in log)
    d = decontaminate(corpus, tmp_path / "dropped.jsonl", scan=tmp_path / "scan", mode="drop")
    assert d["dropped"] == 2 and d["documents_out"] == 198


def test_cli_scan_and_decontaminate_chat(items, tmp_path) -> None:
    corpus = tmp_path / "chat.jsonl"
    _corpus(corpus, "chat", items, {12: (9, "q")})
    p = contam(
        "scan", "-b", "gsm8k", "--corpus", corpus, "--out", tmp_path / "o", "--format", "chat", "--roles", "user,assistant", "--json"
    )
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["flagged"] == 1 and s["format"] == "chat" and s["roles"] == ["user", "assistant"]
    p = contam("decontaminate", "--corpus", corpus, "--scan", tmp_path / "o", "--out", tmp_path / "c.jsonl", "--mode", "mask", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["masked"] == 1
    rec = json.loads((tmp_path / "c.jsonl").read_text().splitlines()[11])
    assert (
        "[CONTAMINATED]" in rec["messages"][1]["content"]
        and rec["messages"][2]["content"] == json.loads(corpus.read_text().splitlines()[11])["messages"][2]["content"]
    )


@pytest.mark.slow
def test_levels_all_judge_one_turn_at_a_time(items, tmp_path) -> None:
    """``--levels all`` on a chat corpus: each turn is its own document for the semantic and
    reasoning levels, results are merged back per record, evidence names the turn."""
    corpus = tmp_path / "chat.jsonl"
    lines = _corpus(corpus, "chat", items, {5: (7, "q"), 9: (30, "a")})
    s = run_scan(corpus, items[:300], tmp_path / "o", levels=("all",), roles=("user", "assistant"))
    assert s["format"] == "chat" and s["documents"] == 200 and s["turn_documents"] == 400
    got = {json.loads(r)["line"]: json.loads(r) for r in open(tmp_path / "o" / "flags.jsonl")}
    assert {5, 9} <= set(got)
    for line, (k, where) in {5: (7, "q"), 9: (30, "a")}.items():
        r = got[line]
        assert r["doc_id"] == f"r{line}" and any(f["item_id"] == items[k].id for f in r["flags"])
        want = WHERE["chat"][0 if where == "q" else 1]
        f = next(f for f in r["flags"] if f["item_id"] == items[k].id)
        rt = record_text(json.loads(lines[line - 1]), "chat", roles=("user", "assistant"))
        for e in f["evidence"]:
            assert (e["turn"], e["role"]) == want
            a, b = e["doc_span"]
            t = next(t for t in rt.turns if t.turn == e["turn"])
            assert t.start <= a <= b <= t.end and rt.text[a:b] == rt.text[t.start : t.end][e["turn_span"][0] : e["turn_span"][1]]
