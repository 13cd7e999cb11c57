"""`contam regen` and `contam stats` end to end through the CLI entry point."""

from __future__ import annotations

import json

from contam.cli.main import main


def test_regen_writes_audited_instances_and_resumes(tmp_path, capsys):
    out = tmp_path / "fresh"
    assert main(["regen", "--domain", "airline", "--seeds", "0:2", "--tasks", "0:4", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 8 and summary["n_invalid"] == 0
    lines = (out / "instances.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    for field in ("task_index", "seed", "world", "user_id", "instruction", "actions", "outputs", "goal_hash", "goal_delta", "valid"):
        assert field in rec
    assert len((out / "audit.jsonl").read_text().splitlines()) == 8
    # a second run resumes: nothing is redone or duplicated
    assert main(["regen", "--domain", "airline", "--seeds", "0:2", "--tasks", "0:4", "--out", str(out), "--json"]) == 0
    assert len((out / "instances.jsonl").read_text().splitlines()) == 8


def test_regen_bad_input_is_one_line(tmp_path, capsys):
    assert main(["regen", "--seeds", "a:b", "--out", str(tmp_path)]) == 2
    assert main(["regen", "--domain", "mars", "--seeds", "0", "--out", str(tmp_path)]) == 2
    assert main(["regen", "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert "--seeds" in err and "Traceback" not in err


def test_regen_replay_report(capsys):
    assert main(["regen", "replay", "--domain", "retail", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)[0]
    assert rep["tasks"] == 115 and rep["clean"] == 96


def test_stats_power_and_mcnemar(tmp_path, capsys):
    assert main(["stats", "power", "--n", "115", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert 0.15 < rep["mde_unpaired_wald"] < 0.19
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps({"key": f"k{i}", "passed": i % 4 != 0}) + "\n" for i in range(60)))
    b.write_text("".join(json.dumps({"key": f"k{i}", "passed": i % 2 == 0}) + "\n" for i in range(60)))
    assert main(["stats", "mcnemar", str(a), str(b), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n_common"] == 60 and res["only_first"] == 30 and res["only_second"] == 15
    b.write_text('{"key": "k1", "passed": "yes"}\n')
    assert main(["stats", "mcnemar", str(a), str(b)]) == 2
    assert "b.jsonl:1" in capsys.readouterr().err


def test_grade_two_systems_and_compare(tmp_path, capsys):
    out = tmp_path / "fresh"
    assert main(["regen", "--domain", "retail", "--seeds", "0:3", "--tasks", "0:6", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    insts = [json.loads(x) for x in (out / "instances.jsonl").read_text().splitlines()]
    from contam.regen.world import load_tasks

    good = tmp_path / "good.jsonl"  # an agent that follows the fresh reference and says the outputs
    good.write_text("".join(json.dumps({"key": r["key"], "actions": r["actions"], "messages": r["outputs"]}) + "\n" for r in insts))
    stale = tmp_path / "stale.jsonl"  # an agent that replays the memorized shipped actions
    stale.write_text(
        "".join(
            json.dumps({"key": r["key"], "actions": load_tasks("retail")[r["task_index"]]["actions"], "messages": r["outputs"]}) + "\n"
            for r in insts
        )
    )
    assert main(["regen", "grade", "-i", str(out / "instances.jsonl"), "-e", str(good), "-o", str(tmp_path / "g1"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pass_rate"] == 1.0
    assert main(["regen", "grade", "-i", str(out / "instances.jsonl"), "-e", str(stale), "-o", str(tmp_path / "g2"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pass_rate"] < 0.5
    assert (
        main(
            [
                "stats",
                "mcnemar",
                str(tmp_path / "g1" / "graded.jsonl"),
                str(tmp_path / "g2" / "graded.jsonl"),
                "--alternative",
                "greater",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["p_value"] < 0.01
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "retail/0/0", "actions": "nope"}\n')
    assert main(["regen", "grade", "-i", str(out / "instances.jsonl"), "-e", str(bad), "-o", str(tmp_path / "g3")]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
