"""Scenario builder S1–S4 with hard negatives, saving/loading, and the audit CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from contam.cli.audit import load_scenarios, save_scenarios
from contam.cli.main import main
from contam.data import load_benchmark
from contam.errors import ConfigError, InputError
from contam.scan.scenarios import build_scenarios, stdlib_functions


@pytest.fixture(scope="module")
def gsm() -> object:
    return build_scenarios("gsm8k", n=40, seed=1)


def test_labels_sources_and_splits(gsm) -> None:  # type: ignore[no-untyped-def]
    test_ids = {it.id for it in load_benchmark("gsm8k")}
    train_ids = {it.id for it in load_benchmark("gsm8k-train")}
    by_id = {it.id: it for it in load_benchmark("gsm8k")}
    scen = {s.scenario for s in gsm.samples}
    assert scen == {"S1", "S2", "S3", "S4", "neg"}
    for s in gsm.samples:
        if s.label == 1:
            assert s.source_id in test_ids and s.scenario != "neg"
        else:
            assert s.source_id in train_ids and s.generator == "hard-negative:gsm8k-train"
    # A source item is in one split only, so calibration and reporting never share an item.
    splits: dict[str, set[str]] = {}
    for s in gsm.samples:
        splits.setdefault(s.source_id, set()).add(s.split)
    assert all(len(v) == 1 for v in splits.values())
    assert {s.split for s in gsm.samples} == {"calib", "test"}
    s1 = next(s for s in gsm.samples if s.scenario == "S1")
    assert s1.text == by_id[s1.source_id].text and s1.generator == "exact"
    s2 = next(s for s in gsm.samples if s.scenario == "S2")
    assert s2.generator == "rule-paraphrase" and s2.text != by_id[s2.source_id].text


def test_s3_variants_are_recomputed(gsm) -> None:  # type: ignore[no-untyped-def]
    from contam.perturb.arith import evaluate

    by_id = {it.id: it for it in load_benchmark("gsm8k")}
    s3 = [s for s in gsm.samples if s.scenario == "S3"]
    assert len(s3) >= 20
    for s in s3:
        orig = by_id[s.source_id]
        assert s.text != orig.text
        final = s.text.rsplit("####", 1)[-1].strip().replace(",", "")
        assert final != orig.answer or s.text.split("\n")[0] != orig.question
        for expr, val in re.findall(r"<<([^=<>]+)=([^<>]+)>>", s.text):  # every annotation adds up
            assert float(evaluate(expr)) == pytest.approx(float(val.replace(",", "")), rel=1e-6)


def test_s4_keeps_chain_with_new_question(gsm) -> None:  # type: ignore[no-untyped-def]
    by_id = {it.id: it for it in load_benchmark("gsm8k")}
    for s in (s for s in gsm.samples if s.scenario == "S4"):
        assert by_id[s.source_id].question not in s.text
        assert s.text.count("<<") == by_id[s.source_id].solution.count("<<")


def test_deterministic_with_seed(gsm) -> None:  # type: ignore[no-untyped-def]
    again = build_scenarios("gsm8k", n=40, seed=1)
    assert again.to_dict() == gsm.to_dict()
    other = build_scenarios("gsm8k", n=40, seed=2)
    assert {s.source_id for s in other.samples} != {s.source_id for s in gsm.samples}


def test_mmlu_and_humaneval_negatives_are_disjoint_from_benchmark() -> None:
    mm = build_scenarios("mmlu", n=30, seed=0)
    bench = set(mm.benchmark_ids)
    negs = [s for s in mm.samples if s.label == 0]
    assert negs and not ({s.source_id for s in negs} & bench)
    assert {s.source_id.split("/")[1] for s in negs} <= {"abstract_algebra", "sociology", "high_school_us_history"}
    assert not any(s.scenario == "S4" for s in mm.samples)  # MMLU has no reasoning chains
    he = build_scenarios("humaneval", n=80, seed=0)
    assert len(he.benchmark_ids) == 100
    hn = [s for s in he.samples if s.label == 0]
    assert len(hn) == 80 and not ({s.source_id for s in hn} & set(he.benchmark_ids))
    assert any(s.source_id.startswith("stdlib/") for s in hn)


def test_stdlib_negatives_are_parsed_functions() -> None:
    fns = stdlib_functions(10, seed=0)
    assert len(fns) == 10
    assert all(f.question.lstrip().startswith("def ") and f.solution.strip() for f in fns)


def test_unknown_benchmark_or_scenario() -> None:
    with pytest.raises(ConfigError):
        build_scenarios("swebench-lite")
    with pytest.raises(ConfigError):
        build_scenarios("gsm8k", scenarios=("S9",))


def test_save_load_roundtrip_and_bad_input(gsm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    save_scenarios(gsm, tmp_path)
    back = load_scenarios(tmp_path)
    assert back.samples == gsm.samples and back.benchmark_ids == gsm.benchmark_ids
    lines = (tmp_path / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[2])
    del bad["label"]
    lines[2] = json.dumps(bad)
    (tmp_path / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"samples.jsonl:3: field 'label'"):
        load_scenarios(tmp_path)


def test_cli_make_scenarios(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["make-scenarios", "--benchmark", "gsm8k", "--n", "10", "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gsm8k"]["counts"]["S1/calib"] + out["gsm8k"]["counts"]["S1/test"] == 10
    assert (tmp_path / "samples.jsonl").exists() and (tmp_path / "summary.json").exists()
    assert main(["make-scenarios", "--benchmark", "nope", "--out", str(tmp_path)]) == 2


def test_cli_eval_detectors_token_and_reasoning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The evaluation end to end without the embedding level (fast): a Table-1 row per method."""
    assert (
        main(["eval-detectors", "--benchmark", "gsm8k", "--n", "40", "--levels", "token,reasoning", "--out", str(tmp_path), "--json"]) == 0
    )
    rep = json.loads(capsys.readouterr().out)["reports"][0]
    cells = {(r["method"], r["scenario"]): r["metrics"]["f1"] for r in rep["rows"]}
    assert cells[("cascade", "S1")] >= 0.9 and cells[("cascade", "S4")] > cells[("13-gram", "S4")]
    assert (tmp_path / "report.json").exists() and (tmp_path / "rows.jsonl").exists()
    th = json.loads((tmp_path / "thresholds.json").read_text(encoding="utf-8"))["gsm8k"]
    assert set(th) == {"token", "semantic", "reasoning", "semantic_rule", "semantic_shortlist"}
    assert th["semantic_shortlist"] is True  # calibration leaves the shortlist on
