"""contam audit's model side against a real OpenAI-compatible server (llama.cpp's, serving the
embedded SmolLM2 on 127.0.0.1): the probes that only generate run over HTTP (Zero-CoT in
instruction mode, the cliff); Min-K% needs scoring, which this server gets wrong, so it is skipped
with its reason on the verdict, the report and the terminal instead of failing the audit."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from contam.cli.main import main
from llamaserver import llama_server

if importlib.util.find_spec("llama_cpp") is None:  # not imported here: llamacpp.py sets OpenMP env first
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)
pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with llama_server(n_ctx=1024) as url:
        yield url


def _audit(run: Path, model: str, *extra: str) -> int:
    cfg = run.parent / "audit.toml"
    cfg.write_text("truncation = [0.0, 1.0]\n", encoding="utf-8")  # no truncation curve: half the calls
    argv = ["audit", "-b", "gsm8k", "--model", model, "--limit", "3", "--k", "1", "--max-cot-tokens", "8"]
    return main([*argv, "--config", str(cfg), "--out", str(run), *extra])


def test_audit_against_llama_server_runs_what_it_can_and_says_why_minkprob_did_not(server: str, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    rc = _audit(run, f"openai:{server}/v1#smollm2")
    err = capsys.readouterr()
    assert rc == 0, err.err[-2000:]
    v = json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    (m,) = v["verdicts"]
    assert m["side"] == "model" and {c["probe"] for c in m["claims"]} == {"zerocot", "cliff"}
    # 3 items: fewer than min_items, and zerocot alone cannot reach p < 0.05 on 3 pairs
    assert m["verdict"] == "inconclusive" and any(lim["what"] == "too few items" for lim in m["limitations"])
    skipped = {s["probe"]: s["reason"] for s in m["skipped"]}
    assert "shifted by one token" in skipped["minkprob"] and "Min-K% needs the log-probs" in skipped["minkprob"]
    assert "not measured" in skipped["zerocot probability metrics"]
    assert "minkprob not run" in m["summary"]
    # The Zero-CoT Probe ran over HTTP: no prefill there, so the instruction forces the answer
    zc = json.loads((run / "gsm8k" / "zerocot" / "summary.json").read_text(encoding="utf-8"))
    assert zc["mode"] == "instruction" and zc["n_pairs"] >= 2
    assert [x["metric"] for x in zc["metrics"]] == ["accuracy", "consistency"]
    mk = run / "gsm8k" / "minkprob"
    assert (mk / "skipped.json").exists() and not (mk / "summary.json").exists()
    # Said everywhere a reader looks: the step line, the verdict table, summary.md, the report card
    assert "Min-K% family vs control: skipped: Min-K% needs" in err.err
    assert "minkprob not run" in " ".join(err.out.split())
    assert "not run: minkprob" in (run / "summary.md").read_text(encoding="utf-8")
    assert "not run: minkprob" in (run / "report.html").read_text(encoding="utf-8")
    # A rerun resumes: every step finished (the skip included), nothing runs again
    assert _audit(run, f"openai:{server}/v1#smollm2") == 0
    assert "skipped" not in capsys.readouterr().err
