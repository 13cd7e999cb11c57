"""contam audit: the config (TOML round trip, located errors) and the run folder's resume rules."""

from __future__ import annotations

import pytest

from contam.audit.config import AuditConfig
from contam.audit.runner import CONFIG, STATE, prepare_run_folder
from contam.errors import ConfigError, InputError


def test_toml_round_trip_and_written_back(tmp_path):
    cfg = AuditConfig(
        benchmarks=("gsm8k", "mmlu"),
        dataset="d.jsonl",
        model="smollm2",
        ref_model="smollm2",
        out=str(tmp_path / "r"),
        limit=7,
        truncation=(0.0, 0.5, 1.0),
        fail_on="suspect",
        title='quote " and \\ backslash',
    )
    assert AuditConfig.from_toml_text(cfg.to_toml()) == cfg
    out, _ = prepare_run_folder(cfg, fresh=False)
    assert AuditConfig.from_file(out / CONFIG) == cfg
    assert (out / STATE).exists()


def test_config_errors_name_file_and_field(tmp_path):
    p = tmp_path / "audit.toml"
    p.write_text('benchmarks = ["gsm8k"]\nmodel = "smollm2"\nlimit = "ten"\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        AuditConfig.from_file(p)
    assert str(p) in str(e.value) and "'limit'" in str(e.value)
    p.write_text('benchmark = "gsm8k"\nmodel = "smollm2"\nlimt = 3\n', encoding="utf-8")
    with pytest.raises(InputError, match="unknown key"):
        AuditConfig.from_file(p)
    p.write_text("benchmarks = [", encoding="utf-8")
    with pytest.raises(InputError, match="not valid TOML"):
        AuditConfig.from_file(p)
    with pytest.raises(ConfigError, match="nothing to audit"):
        AuditConfig(benchmarks=("gsm8k",), out="x")
    with pytest.raises(ConfigError, match="--fail-on"):
        AuditConfig(benchmarks=("gsm8k",), model="smollm2", fail_on="maybe")


def test_changed_config_refused_unless_fresh(tmp_path):
    run = tmp_path / "run"
    a = AuditConfig(benchmarks=("gsm8k",), model="smollm2", out=str(run), limit=5)
    _, state = prepare_run_folder(a, fresh=False)
    state.done["gsm8k/perturb"] = 1.0  # a finished step: work a changed config must not silently discard
    state.save(run / STATE)
    (run / "unrelated.txt").write_text("keep me", encoding="utf-8")
    # the same config (and a different --fail-on, which changes no result) resumes
    prepare_run_folder(AuditConfig(benchmarks=("gsm8k",), model="smollm2", out=str(run), limit=5, fail_on="contaminated"), fresh=False)
    b = AuditConfig(benchmarks=("gsm8k",), model="smollm2", out=str(run), limit=6)
    with pytest.raises(ConfigError, match=r"another configuration \(changed: limit\)"):
        prepare_run_folder(b, fresh=False)
    prepare_run_folder(b, fresh=True)
    assert AuditConfig.from_file(run / CONFIG).limit == 6
    assert (run / "unrelated.txt").read_text(encoding="utf-8") == "keep me"  # --fresh removes only what an audit writes
