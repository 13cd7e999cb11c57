"""The optional judge (issue 16): a real model solves each variant; only agreeing variants are kept.

End to end with the embedded SmolLM2 (whatever its accuracy) and with a local OpenAI-compatible
server (llama.cpp's, serving the same GGUF), both through the response cache.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.data import load_benchmark
from contam.models import load
from contam.perturb import make_variant_set
from contam.perturb.judge import VariantJudge, VariantJudgeConfig
from contam.probe.answers import answers_equal
from llamaserver import llama_server

SHORT = VariantJudgeConfig(max_new_tokens=96, batch=4)


@pytest.fixture(scope="module")
def variants() -> list:
    return make_variant_set(load_benchmark("gsm8k")[:6], variants=1, seed=5)[:3]


def _check(result, variants) -> None:  # type: ignore[no-untyped-def]
    assert result.judged == len(variants)
    by_id = {v.variant_id: v for v in variants}
    for row in result.verdicts:
        # A verdict agrees exactly when the judged answer equals the computed one.
        assert row["agrees"] == answers_equal(row["judged"], by_id[row["variant_id"]].answer)
    assert [v.variant_id for v in result.kept] == [r["variant_id"] for r in result.verdicts if r["agrees"]]
    assert 0.0 <= result.agreement <= 1.0 and result.agreed == len(result.kept)


def test_judge_with_embedded_model_and_cache(variants, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "responses.sqlite"
    first = VariantJudge(load("smollm2", cache=cache), SHORT).run(variants)
    _check(first, variants)
    again = VariantJudge(load("smollm2", cache=cache), SHORT).run(variants)  # answered from the cache
    assert again.verdicts == first.verdicts


def test_cli_judge_writes_verdicts(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "cache.sqlite"))
    out = tmp_path / "ref"
    assert main(["perturb", "-b", "gsm8k", "--limit", "1", "--seed", "3", "--judge", "smollm2", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = [json.loads(x) for x in (out / "judge.jsonl").read_text().splitlines()]
    kept = [json.loads(x) for x in (out / "variants.jsonl").read_text().splitlines()]
    j = summary["judge"]
    assert j["judge"] == "smollm2" and j["judged"] == len(rows) == summary["instances"] >= 1
    assert j["agreed"] == sum(r["agrees"] for r in rows) == len(kept) == summary["written"]
    assert j["agreement_rate"] == round(j["agreed"] / j["judged"], 4)


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    pytest.importorskip("uvicorn")
    with llama_server() as url:
        yield url


def test_judge_through_openai_compatible_server(server: str, variants, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = f"openai:{server}/v1#smollm2"
    result = VariantJudge(load(spec, cache=tmp_path / "c.sqlite"), SHORT).run(variants)
    _check(result, variants)
    again = VariantJudge(load(spec, cache=tmp_path / "c.sqlite"), SHORT).run(variants)  # from the response cache
    assert again.verdicts == result.verdicts
