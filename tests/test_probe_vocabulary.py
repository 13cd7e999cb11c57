"""Issue 17, item 2: one contract and one vocabulary for every model-side probe."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer

from contam.cli.main import app, main
from contam.cli.probe_opts import SHARED_OPTIONS


def _probe_commands() -> dict[str, Any]:
    root = typer.main.get_command(app)  # Typer's own click-like group (Typer >= 0.20 vendors click)
    probe = root.commands["probe"]  # type: ignore[attr-defined]
    return dict(probe.commands)


def _visible(cmd: Any) -> dict[str, Any]:
    return {o: p for p in cmd.params if not getattr(p, "hidden", False) for o in p.opts}


def test_every_probe_command_shares_the_options() -> None:
    cmds = _probe_commands()
    assert {
        "zerocot",
        "minkprob",
        "cliff",
        "paired",
        "cdd",
        "reconstruct",
        "ts-guess",
        "guided",
        "swe-filepath",
        "swe-funcrepro",
        "swe-prefix",
    } <= set(cmds)
    for name, cmd in cmds.items():
        vis = _visible(cmd)
        missing = [o for o in SHARED_OPTIONS if o not in vis]
        assert not missing, f"contam probe {name} lacks {missing}"
        assert "--reference" not in vis and "--n" not in vis, name  # old words: hidden aliases only
        hidden = {o for p in cmd.params if getattr(p, "hidden", False) for o in p.opts}
        assert "--n" in hidden, name  # old scripts keep working


def test_one_meaning_per_word() -> None:
    cmds = _probe_commands()
    helps: dict[str, set[str]] = {}
    for name, cmd in cmds.items():
        vis = _visible(cmd)
        for opt in ("--variants", "--ref-model", "--limit", "--seed", "--out", "--json"):
            helps.setdefault(opt, set()).add(str(getattr(vis[opt], "help", "")))
        if not name.startswith("swe-"):  # SWE-bench controls are SWE-bench JSONL: same word, same role
            helps.setdefault("--control", set()).add(str(getattr(vis["--control"], "help", "")))
    for opt, texts in helps.items():
        assert len(texts) == 1, f"{opt} is explained {len(texts)} ways: {texts}"


def test_old_names_still_work_and_unused_options_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # --n is --limit; --reference on a generation probe is --control: both reach the same checks
    assert main(["probe", "cdd", "--n", "1", "--samples", "0"]) == 2
    assert "n_samples" in capsys.readouterr().err
    assert main(["probe", "guided", "--ref-model", "smollm2", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "does not use --ref-model" in err and len(err.strip().splitlines()) == 1
    assert main(["probe", "zerocot", "--control", "gsm8k", "--limit", "1"]) == 2
    assert "does not use --control" in capsys.readouterr().err
    assert main(["probe", "paired", "--limit", "2"]) == 2
    assert "--ref-model" in capsys.readouterr().err


def test_python_contract_every_probe_runs_with_variants_and_control() -> None:
    import contam.probe as cp

    for name in cp.PROBES:
        cls, cfg = cp.probe_class(name)
        assert getattr(cp, cls.__name__) is cls and getattr(cp, cfg.__name__) is cfg
        cfg()  # the papers' defaults construct
        params = inspect.signature(cls.run).parameters
        assert list(params)[1:3] == ["model", "items"], name
        for kw in ("variants", "control", "checkpoint"):
            assert kw in params and params[kw].default is None, (name, kw)


def test_results_hold_test_records_not_dicts() -> None:
    import dataclasses
    import typing

    import contam.probe as cp
    from contam.stats.results import TestResult

    for res in ("CDDResult", "ReconstructResult", "TSGuessResult", "GuidedResult", "CliffResult", "PairedResult"):
        cls = getattr(cp, res)
        hints = typing.get_type_hints(cls)
        tests = [f.name for f in dataclasses.fields(cls) if "test" in f.name]
        assert tests, res
        for f in tests:
            assert TestResult in typing.get_args(hints[f]) or hints[f] is TestResult, (res, f, hints[f])
