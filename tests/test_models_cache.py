"""The response cache with the real embedded model: hits avoid model calls, a SIGKILLed run
resumes losing no finished call, and the CLI's ``--no-cache`` bypasses it."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.errors import ConfigError
from contam.models import CachedModel, load
from contam.models.cache import ResponseCache, cache_key, default_cache_path

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)

PROMPTS = [f"Write the number {k} in words:" for k in range(12)]


def test_a_cache_hit_avoids_a_second_model_call(tmp_path: Path) -> None:
    lm = load("smollm2", cache=tmp_path / "c.sqlite")
    assert isinstance(lm, CachedModel)
    inner = lm.inner
    before = inner.calls.copy()
    pairs = [("Q: 2+2?", " A: 4"), ("Q: 2+2?", " A: 5"), ("Q: 2+2?", " A: 4")]  # a duplicate inside the call too
    first = lm.score(pairs, vocab_stats=True)
    assert inner.calls["score"] - before["score"] == 2 and lm.misses == 2 and lm.hits == 1
    again = lm.score(pairs, vocab_stats=True)
    assert again == first and inner.calls["score"] - before["score"] == 2 and lm.hits == 4
    # Scores stored with vocabulary statistics answer a request without them.
    plain = lm.score(pairs[:1])
    assert plain[0].logprobs == first[0].logprobs and inner.calls["score"] - before["score"] == 2
    g1 = lm.generate(["Once upon a time"], max_new_tokens=5)
    g2 = lm.generate(["Once upon a time"], max_new_tokens=5)
    assert g1 == g2 and inner.calls["generate"] - before["generate"] == 1
    # A different parameter is a different call.
    lm.generate(["Once upon a time"], max_new_tokens=6)
    assert inner.calls["generate"] - before["generate"] == 2


def test_keys_cover_identity_method_prompt_and_params() -> None:
    base = cache_key("llamacpp:sha256:x", "generate", {"prompt": "a", "n": 1})
    assert base == cache_key("llamacpp:sha256:x", "generate", {"n": 1, "prompt": "a"})  # dict order irrelevant
    assert base != cache_key("llamacpp:sha256:y", "generate", {"prompt": "a", "n": 1})
    assert base != cache_key("llamacpp:sha256:x", "score", {"prompt": "a", "n": 1})
    assert base != cache_key("llamacpp:sha256:x", "generate", {"prompt": "a", "n": 2})


def test_cache_file_is_wal_and_location_follows_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "env.sqlite"))
    assert default_cache_path() == tmp_path / "env.sqlite"
    c = ResponseCache(tmp_path / "env.sqlite")
    c.put_many([("k", "id", "m", {"v": 1})])
    mode = sqlite3.connect(tmp_path / "env.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal" and c.get_many(["k", "nope"]) == {"k": {"v": 1}}
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(ConfigError, match="cannot open the response cache"):
        ResponseCache(tmp_path / "dir.sqlite")


def test_sigkilled_run_resumes_and_loses_no_finished_call(tmp_path: Path) -> None:
    db = tmp_path / "kill.sqlite"
    script = textwrap.dedent(f"""
        from contam.models import load
        lm = load("smollm2", cache={str(db)!r})
        lm.chunk_size = 1  # commit after every prompt
        lm.generate({PROMPTS!r}, max_new_tokens=16)
        print("finished")
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stored = 0
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
        if db.exists():
            try:
                stored = len(ResponseCache(db))
            except ConfigError:
                continue
            if stored >= 2:
                break
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read()[-1000:] if proc.stderr else ''}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(ResponseCache(db))
    assert 2 <= kept < len(PROMPTS)
    # Resume: the kept answers come from disk, only the rest is computed, and nothing differs
    # from an uninterrupted run (greedy decoding is deterministic).
    lm = load("smollm2", cache=db)
    before = lm.inner.calls["generate"]
    resumed = lm.generate(PROMPTS, max_new_tokens=16)
    assert lm.hits == kept and lm.misses == len(PROMPTS) - kept
    assert lm.inner.calls["generate"] - before == len(PROMPTS) - kept
    fresh = load("smollm2", cache=False).generate(PROMPTS[:kept], max_new_tokens=16)
    assert [r[0].text for r in resumed[:kept]] == [f[0].text for f in fresh]


def test_cli_ask_uses_the_cache_and_no_cache_bypasses_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.sqlite"
    args = ["ask", "What is 12 + 30?", "--prefill", "The answer is", "--max-new-tokens", "6", "--cache", str(db), "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["cached"] is False and first["text"] and first["prefill"] == "The answer is"
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is True
    assert main([*args, "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cached"] is False and out["text"] == first["text"]
    assert len(ResponseCache(db)) == 1


def test_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--model", "nope:x", "hello"]) == 2
    err = capsys.readouterr().err
    assert "unknown model spec" in err and len(err.strip().splitlines()) == 1
    assert main(["ask", "  "]) == 2
    assert "prompt is empty" in capsys.readouterr().err


def test_cli_models_lists_the_embedded_model_and_where_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    sm = next(m for m in info["models"] if m["spec"] == "smollm2")
    assert sm["available"] and sm["location"].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert {b["backend"] for b in info["backends"]} >= {"llamacpp", "hf", "openai", "vllm"}
