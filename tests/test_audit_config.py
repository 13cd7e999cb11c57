"""contam audit: the config (TOML round trip, located errors) and the run folder's resume rules."""

from __future__ import annotations

import pytest

from contam.audit.config import AuditConfig
from contam.audit.runner import CONFIG, STATE, holds_another_audit, prepare_run_folder
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


def test_the_demo_tells_a_stale_audit_from_its_own(tmp_path):
    # `make demo` restarts its own audit when another version of contam wrote other inputs there,
    # and resumes the same one (holds_another_audit: what prepare_run_folder would refuse).
    run, data = tmp_path / "run", tmp_path / "d.jsonl"
    data.write_text('{"text": "one"}\n', encoding="utf-8")
    a = AuditConfig(benchmarks=("gsm8k",), dataset=str(data), model="smollm2", out=str(run), limit=5)
    assert not holds_another_audit(a)  # nothing there yet
    _, state = prepare_run_folder(a, fresh=False)
    state.done["gsm8k/perturb"] = 1.0
    state.save(run / STATE)
    assert not holds_another_audit(a)
    data.write_text('{"text": "two"}\n', encoding="utf-8")
    assert holds_another_audit(a)
    with pytest.raises(ConfigError, match="changed since"):
        prepare_run_folder(a, fresh=False)
    prepare_run_folder(a, fresh=True)
    assert not holds_another_audit(a)
    assert holds_another_audit(AuditConfig(benchmarks=("gsm8k",), dataset=str(data), model="smollm2", out=str(run), limit=6))
    (run / STATE).write_text("not json", encoding="utf-8")
    assert holds_another_audit(a)
