"""Issue 15 item 6: the optional judge re-checks semantic / reasoning flags with a real model
(the embedded SmolLM2 GGUF, in process and behind a local llama.cpp OpenAI-compatible server),
through the response cache; its answer and raw reply land in the evidence; token flags stay."""

from __future__ import annotations

import importlib.util
import json

import pytest

from contam.data import load_benchmark
from contam.data.webtext import paragraphs
from contam.scan.flags import DocResult, Evidence, Flag
from contam.scan.judge import PROMPT, Judge, JudgeConfig, parse_verdict
from llamaserver import llama_server

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def items():
    return load_benchmark("gsm8k")


def _results(items) -> tuple[list[DocResult], dict[str, str]]:
    """A semantic flag on a real paraphrase-like text, a semantic flag on unrelated web text, a
    reasoning flag, and a token flag (on unrelated text: the judge must leave it alone)."""
    it0, it1, it2 = items[0], items[1], items[2]
    texts = {
        "para": "Janet has ducks laying 16 eggs each day. She eats three for breakfast and bakes muffins with four; "
        "the rest she sells at $2 apiece at the market. How much does she make daily?",
        "web": paragraphs()[3][:600],
        "reason": it2.solution,
        "tok": paragraphs()[5][:400],
    }
    flag = lambda d, it, lv: Flag(d, it.id, lv, 0.9, 0.8, benchmark="gsm8k", evidence=(Evidence(kind="embedding", weight=0.9),))  # noqa: E731
    res = [
        DocResult("para", True, "semantic", (flag("para", it0, "semantic"),)),
        DocResult("web", True, "semantic", (flag("web", it1, "semantic"),)),
        DocResult("reason", True, "reasoning", (flag("reason", it2, "reasoning"),)),
        DocResult("tok", True, "token", (flag("tok", it1, "token"),)),
    ]
    return res, texts


def _check(judged: list[DocResult], spec: str) -> None:
    by_id = {r.doc_id: r for r in judged}
    tok = by_id["tok"]
    assert tok.contaminated and tok.flags[0].level == "token"  # never judged, never removed
    assert "judge" not in tok.flags[0].scores and all(e.kind != "judge" for e in tok.flags[0].evidence)
    for d in ("para", "web", "reason"):
        r = by_id[d]
        if r.flags:  # kept: True, or a reply with neither word
            (f,) = r.flags
            (ev,) = [e for e in f.evidence if e.kind == "judge"]
            assert ev.text.startswith(spec + ":")
            assert f.scores["judge"] in (1.0, -1.0) and ev.weight == f.scores["judge"]
        else:  # rejected: False
            assert not r.contaminated and r.scores["judge_rejected"]


def test_parse_verdict() -> None:
    assert parse_verdict("True") is True and parse_verdict("**False**, they differ") is False
    assert parse_verdict("Yes.") is True and parse_verdict("") is None and parse_verdict("Truest") is None
    assert "Part 1" in PROMPT and "True or False" in PROMPT


def test_judge_with_the_embedded_model_through_the_cache(items, tmp_path) -> None:
    res, texts = _results(items)
    cache = tmp_path / "responses.sqlite"
    judge = Judge(JudgeConfig("smollm2", cache=str(cache)))
    by_item = {it.id: it for it in items[:3]}
    judged = judge.apply(res, lambda r, f: texts[r.doc_id], by_item)
    _check(judged, "smollm2")
    assert judge.asked == 3 and judge.model.misses == 3
    # Same pairs again: answered from the response cache, same verdicts.
    again = Judge(JudgeConfig("smollm2", cache=str(cache)))
    assert [r.to_dict() for r in again.apply(res, lambda r, f: texts[r.doc_id], by_item)] == [r.to_dict() for r in judged]
    assert again.model.hits == 3 and again.model.misses == 0


@pytest.fixture(scope="module")
def server():
    """The embedded SmolLM2 GGUF behind llama_cpp.server."""
    pytest.importorskip("uvicorn")
    with llama_server() as url:
        yield url


def test_judge_against_a_local_llama_cpp_server(items, server, tmp_path) -> None:
    res, texts = _results(items)
    spec = f"openai:{server}/v1#smollm2"
    judge = Judge(JudgeConfig(spec, cache=str(tmp_path / "r.sqlite")))
    judged = judge.apply(res, lambda r, f: texts[r.doc_id], {it.id: it for it in items[:3]})
    _check(judged, spec)
    assert judge.asked == 3


def test_scan_levels_all_with_judge_end_to_end(items, tmp_path) -> None:
    """``run_scan --levels all --judge smollm2`` on a small real corpus: the verbatim leak stays
    flagged at the token level whatever the judge says, and the summary counts what was asked."""
    from contam.scan.records import scan_records as run_scan

    pool = paragraphs()
    corpus = tmp_path / "c.jsonl"
    with open(corpus, "w", encoding="utf-8") as fh:
        for i in range(30):
            text = pool[i] if i != 7 else "From a worksheet: " + items[11].question
            fh.write(json.dumps({"text": text}) + "\n")
    s = run_scan(corpus, items[:200], tmp_path / "o", levels=("all",), judge="smollm2")
    flags = [json.loads(x) for x in open(tmp_path / "o" / "flags.jsonl")]
    tok = [r for r in flags if r["line"] == 8]
    assert tok and tok[0]["level"] == "token" and tok[0]["flags"][0]["item_id"] == items[11].id
    assert s["judge"]["spec"] == "smollm2" and s["judge"]["asked"] >= 0
    assert all("judge" in f["scores"] for r in flags for f in r["flags"] if f["level"] != "token")
