"""``contam probe zerocot|minkprob|cliff`` end to end with the embedded model on a few items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.data import load_benchmark


@pytest.fixture(scope="module")
def ref_file(tmp_path_factory) -> Path:
    """A tiny reference set in the `contam perturb` format, built with contam.perturb."""
    from contam.perturb import make_variant_set

    items = load_benchmark("gsm8k")[:6]
    variants = make_variant_set(items, variants=2, seed=0)
    path = tmp_path_factory.mktemp("ref") / "variants.jsonl"
    path.write_text("".join(json.dumps(v.to_dict()) + "\n" for v in variants), encoding="utf-8")
    return path


def test_zerocot_cli_writes_and_resumes(ref_file: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "cache.sqlite"))
    out = tmp_path / "zcp"
    args = [
        "probe",
        "zerocot",
        "--benchmark",
        "gsm8k",
        "--reference",
        str(ref_file.parent),
        "--n",
        "3",
        "--max-cot-tokens",
        "12",
        "--max-answer-tokens",
        "8",
        "--truncation",
        "0,1",
        "--resamples",
        "500",
        "--out",
        str(out),
        "--json",
    ]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_pairs"] >= 2 and {m["metric"] for m in summary["metrics"]} >= {"accuracy", "consistency"}
    assert 0.0 <= summary["contamination_confidence"] <= 1.0
    lines = (out / "items.jsonl").read_text().splitlines()
    assert len(lines) == summary["n_pairs"] and json.loads((out / "summary.json").read_text()) == summary
    table = (out / "table.csv").read_text().splitlines()
    assert len(table) == 1 + summary["n_pairs"] and table[0].startswith("id,reference_id,orig_gold")
    # rerun: everything comes from the checkpoint, same summary, file untouched
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert (out / "items.jsonl").read_text().splitlines() == lines
    assert again["metrics"] == summary["metrics"]
    # other settings into the same folder are refused, not mixed
    assert main([*args[:-3], "--max-cot-tokens", "13", "--out", str(out)]) == 2
    assert "other settings" in capsys.readouterr().err


def test_bad_reference_line_is_one_clear_error(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "variants.jsonl"
    bad.write_text('{"original_id": "gsm8k/test/0", "question": "q", "answer": "1"}\n{"original_id": "gsm8k/test/1", "answer": "2"}\n')
    assert main(["probe", "zerocot", "--reference", str(bad), "--n", "2"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "question" in err and "Traceback" not in err
    bad.write_text("{not json\n")
    assert main(["probe", "cliff", "--reference", str(bad), "--n", "2"]) == 2
    assert ":1: not valid JSON" in capsys.readouterr().err


@pytest.mark.slow
def test_cliff_and_minkprob_cli(ref_file: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "cache.sqlite"))
    assert main(["probe", "cliff", "--reference", str(ref_file), "--n", "2", "--k", "2", "--max-new-tokens", "12", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["k"] == 2 and s["n_items"] >= 1 and isinstance(s["flagged"], bool)
    assert main(["probe", "minkprob", "--control", str(ref_file), "--n", "3", "--field", "question", "--out", str(tmp_path / "mk")]) == 0
    text = capsys.readouterr().out
    assert "mink" in text and "Contamination Confidence" in text
    s = json.loads((tmp_path / "mk" / "summary.json").read_text())
    assert s["n_benchmark"] == 3 and s["n_control"] >= 2
