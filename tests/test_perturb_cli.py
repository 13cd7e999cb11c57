"""`contam perturb` end to end: JSONL rows, summary, resume without duplicates, errors as one line."""

from __future__ import annotations

import json
from pathlib import Path

from contam.cli.main import main


def test_perturb_writes_reference_set_and_resumes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ref"
    assert main(["perturb", "--benchmark", "gsm8k", "--per-item", "2", "--seed", "0", "--limit", "25", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = [json.loads(line) for line in (out / "variants.jsonl").read_text().splitlines()]
    assert summary["instances"] == len(rows) > 20 and summary["audit_failures"] == {}
    for r in rows:
        for key in ("original_id", "variant_id", "seed", "question", "answer", "solution", "template_id", "audit_hash"):
            assert key in r
        assert r["solution"].endswith("#### " + r["answer"])
    assert json.loads((out / "summary.json").read_text())["covered"] == summary["covered"]
    # Resume: nothing is written twice.
    assert main(["perturb", "--benchmark", "gsm8k", "--per-item", "2", "--seed", "0", "--limit", "25", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert len((out / "variants.jsonl").read_text().splitlines()) == len(rows)


def test_perturb_table_and_errors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["perturb", "--benchmark", "mmlu", "--kind", "mask", "--limit", "3"]) == 0
    assert "audit" in capsys.readouterr().out
    assert main(["perturb", "--benchmark", "gsm8k", "--kind", "nonsense"]) == 2
    assert "--kind" in capsys.readouterr().err
    assert main(["perturb", "--benchmark", str(tmp_path / "missing.jsonl")]) == 2


def test_resume_with_other_settings_is_refused(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ref"
    assert main(["perturb", "-b", "gsm8k", "--limit", "5", "--out", str(out), "--json"]) == 0
    assert main(["perturb", "-b", "gsm8k", "--limit", "5", "--seed", "1", "--out", str(out), "--json"]) == 2
    assert "--fresh" in capsys.readouterr().err
    assert main(["perturb", "-b", "gsm8k", "--limit", "5", "--seed", "1", "--out", str(out), "--fresh", "--json"]) == 0
