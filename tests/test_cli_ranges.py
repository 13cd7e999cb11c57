"""Numbers outside their range are refused with one line and exit 2, never silently bent
(issue 32.15): negative --limit (perturb wrote nothing, probes ran every item), --budget 0,
--max-rows -1, duplicate keys in `stats mcnemar`, an impossible `stats power` design."""

from __future__ import annotations

import json

import pytest

from contam.cli.main import main


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["perturb", "-b", "gsm8k", "--limit", "-1"], "--limit"),
        (["perturb", "-b", "gsm8k", "--limit", "2", "--budget", "0"], "--budget"),
        (["perturb", "-b", "gsm8k", "--limit", "2", "--variants", "0"], "--variants"),
        (["probe", "zerocot", "-m", "smollm2", "-b", "gsm8k", "--limit", "-1"], "--limit"),
        (["probe", "minkprob", "-m", "smollm2", "-b", "gsm8k", "-n", "-3"], "--limit"),
        (["probe", "cdd", "-m", "smollm2", "-b", "gsm8k", "--limit", "-1"], "--limit"),
        (["report", "x", "--max-rows", "-1"], "--max-rows"),
        (["report", "x", "--max-rows", "0"], "--max-rows"),
    ],
)
def test_out_of_range_numbers_are_usage_errors(argv, option, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err


def test_perturb_limit_and_budget_mean_what_they_say(tmp_path, capsys):
    from contam.data import load_benchmark
    from contam.errors import ConfigError
    from contam.perturb.variantset import build_variant_set

    with pytest.raises(ConfigError, match="budget"):
        build_variant_set(load_benchmark("gsm8k")[:2], 1, budget=0)
    assert main(["perturb", "-b", "gsm8k", "--limit", "3", "--out", str(tmp_path / "p"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == 3


def test_mcnemar_refuses_duplicate_keys(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"key": "t1", "passed": true}\n{"key": "t2", "passed": false}\n{"key": "t1", "passed": false}\n', encoding="utf-8")
    b.write_text('{"key": "t1", "passed": true}\n{"key": "t2", "passed": true}\n', encoding="utf-8")
    assert main(["stats", "mcnemar", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "a.jsonl:3" in err and "duplicate key 't1'" in err and "line 1" in err
    assert main(["stats", "mcnemar", str(b), str(b), "--json"]) == 0


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--baseline", ".98", "--gap", ".05"], "must stay below 1"),
        (["--gap", ".4", "--discordance", ".3"], "exceeds --discordance"),
    ],
)
def test_power_refuses_an_impossible_design(argv, words, capsys):
    assert main(["stats", "power", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
