"""Issue 32.10: ``--variants`` has one meaning, a variant set (a path written by ``contam perturb``).
The count of variants per item is ``--per-item`` (``contam perturb``, ``contam audit``) and
``per_item`` in audit.toml; the old spellings still work, with a one-line note."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from contam.audit.config import AuditConfig
from contam.cli.main import main
from contam.errors import ConfigError, InputError

CONTAM = str(Path(sys.executable).with_name("contam"))
BASE = 'benchmarks = ["gsm8k"]\ndataset = "c.jsonl"\n'


def _perturb(out: Path, *count: str) -> int:
    return main(["perturb", "-b", "gsm8k", "--limit", "6", "--seed", "0", *count, "--out", str(out), "--json"])


def test_perturb_counts_with_per_item_and_still_reads_the_old_spelling(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert _perturb(tmp_path / "new", "--per-item", "2") == 0
    assert "deprecated" not in capfd.readouterr().err
    assert _perturb(tmp_path / "old", "--variants", "2") == 0
    err = capfd.readouterr().err
    assert "note: --variants is deprecated here; use --per-item" in err, err
    new, old = ((tmp_path / d / "variants.jsonl").read_text(encoding="utf-8") for d in ("new", "old"))
    assert new == old and new.strip()
    assert _perturb(tmp_path / "both", "--variants", "2", "--per-item", "3") == 2


def test_help_calls_the_count_per_item() -> None:
    env = {**os.environ, "COLUMNS": "200"}
    for cmd in (["perturb"], ["audit"]):
        out = subprocess.run([CONTAM, *cmd, "--help"], capture_output=True, text=True, timeout=60, env=env).stdout
        assert "--per-item" in out, out
        rows = [r for r in out.splitlines() if re.search(r"--variants\b", r)]
        assert all("INTEGER" not in r for r in rows), rows  # where --variants is listed, it is a path


def test_audit_toml_per_item_and_the_old_count() -> None:
    assert AuditConfig.from_toml_text(BASE + "per_item = 3\n").per_item == 3
    with pytest.warns(FutureWarning, match=r"`variants = 3` is the old name of `per_item = 3`"):
        cfg = AuditConfig.from_toml_text(BASE + "variants = 3\n")
    assert cfg.per_item == 3 and cfg.reference is None
    assert "per_item = 3" in cfg.to_toml() and "variants" not in cfg.to_toml()
    with pytest.raises(InputError, match="old name of `per_item`"):
        AuditConfig.from_toml_text(BASE + "variants = 3\nper_item = 4\n")


def test_audit_toml_variants_is_the_variant_set() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = AuditConfig.from_toml_text(BASE + 'variants = "ref/"\n')
    assert cfg.reference == "ref/" and cfg.per_item == 5


def test_runs_started_before_the_rename_still_resume() -> None:
    # Fingerprints the audit wrote before the rename (computed with the old field name `variants`).
    assert AuditConfig(benchmarks=("gsm8k",), dataset="c.jsonl").fingerprint() == "7c48267f50ab7b63"
    assert AuditConfig(benchmarks=("gsm8k",), model="smollm2", per_item=2).fingerprint() == "3f5900f39a5c90cf"


def test_the_cli_says_the_old_toml_key_in_one_line(tmp_path: Path) -> None:
    toml = tmp_path / "audit.toml"
    toml.write_text(f'benchmarks = ["gsm8k"]\ndataset = "{tmp_path / "missing.jsonl"}"\nout = "{tmp_path / "run"}"\nvariants = 2\n')
    p = subprocess.run([CONTAM, "audit", "--config", str(toml)], capture_output=True, text=True, timeout=120)
    notes = [ln for ln in p.stderr.splitlines() if ln.startswith("note: ")]
    assert len(notes) == 1 and "`variants = 2` is the old name of `per_item = 2`" in notes[0], p.stderr
    assert "FutureWarning" not in p.stderr and "warnings.warn" not in p.stderr, p.stderr


def test_the_python_spelling_variants_still_sets_the_count() -> None:
    # Python callers of the old keyword (contam's own now use per_item) keep working.
    cfg = AuditConfig(benchmarks=("gsm8k",), model="smollm2", variants=1)
    assert cfg.per_item == 1 and cfg.variants == 1
    assert cfg == AuditConfig(benchmarks=("gsm8k",), model="smollm2", per_item=1)
    assert "variants" not in cfg.to_toml() and "variants" not in cfg.to_dict()
    assert cfg.merged(per_item=5).per_item == 5 and cfg.merged(per_item=5).variants == 5
    assert AuditConfig(benchmarks=("gsm8k",), model="smollm2", per_item=3, variants=2).per_item == 3  # the new name wins
    assert replace(cfg, per_item=7).per_item == 7  # a copy's stale `variants` does not undo the change
    with pytest.raises(ConfigError, match=r"^AuditConfig\.variants\b"):
        AuditConfig(benchmarks=("gsm8k",), model="smollm2", variants=-1)
