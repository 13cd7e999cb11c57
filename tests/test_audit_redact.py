"""Credentials in a model URL (``openai:http://user:key@host/v1#m``) never reach a file or the
terminal: ``audit.toml``, ``audit.json``, ``verdict.json``, the report, the logs and every probe's
``run.json`` / ``summary.json`` hold ``http://***@host``; the key stays in memory for the HTTP
client, and a rerun with the same URL resumes the same run (the fingerprint hashes the redacted spec).

The first tests need no server (a closed port: the model call fails, after everything before it
was written); the last one talks to the real llama.cpp server through a proxy that records the
``Authorization`` header each request carried."""

from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path

import pytest

from contam.audit import AuditConfig, build_outputs
from contam.cli.main import main
from contam.errors import ConfigError
from faultproxy import FaultProxy
from llamaserver import free_port, llama_server

SECRET = "sk-SECRET-4711"


def _spec(port: int, user: str = "auditor", key: str = SECRET) -> str:
    return f"openai:http://{user}:{key}@127.0.0.1:{port}/v1#smollm2"


def _leaks(folder: Path, *secrets: str) -> list[str]:
    """Every file under ``folder`` whose bytes hold one of ``secrets``."""
    return sorted(str(p) for p in folder.rglob("*") if p.is_file() and any(s.encode() in p.read_bytes() for s in secrets))


def test_config_toml_and_fingerprint_hold_the_redacted_spec_only() -> None:
    port = free_port()
    cfg = AuditConfig(benchmarks=("gsm8k",), model=_spec(port), ref_model=_spec(port, "base", "sk-REF-9"), out="r")
    shown = f"openai:http://***@127.0.0.1:{port}/v1#smollm2"
    assert cfg.model == shown and cfg.ref_model == shown
    written = cfg.to_toml() + repr(cfg) + str(cfg) + json.dumps(cfg.to_dict()) + cfg.fingerprint()
    assert SECRET not in written and "sk-REF-9" not in written and shown in cfg.to_toml()
    # The specs as typed stay in memory, for loading the models (a copy keeps them too)
    assert cfg.spec_to_load("model") == _spec(port) and cfg.spec_to_load("ref_model") == _spec(port, "base", "sk-REF-9")
    one = AuditConfig(benchmarks=("gsm8k",), model=_spec(port), out="r")
    assert one.merged(title="again", limit=7).spec_to_load("model") == _spec(port)
    assert one.merged(model="smollm2").spec_to_load("model") == "smollm2"
    # The fingerprint is the redacted spec's: the same URL again (or a rotated key) resumes the run
    assert one.fingerprint() == AuditConfig(benchmarks=("gsm8k",), model=_spec(port), out="r").fingerprint()
    assert one.fingerprint() == AuditConfig(benchmarks=("gsm8k",), model=_spec(port, key="sk-rotated"), out="r").fingerprint()
    assert one.fingerprint() != AuditConfig(benchmarks=("gsm8k",), model=_spec(port + 1), out="r").fingerprint()
    # Read back from audit.toml the credentials are gone: loading says what to do; --model wins
    back = AuditConfig.from_toml_text(one.to_toml())
    assert back == one and back.fingerprint() == one.fingerprint()
    with pytest.raises(ConfigError, match="credentials of its URL are not saved"):
        back.spec_to_load("model")
    again = AuditConfig.from_toml_text(one.to_toml(), model=_spec(port))
    assert again.fingerprint() == one.fingerprint() and again.spec_to_load("model") == _spec(port)
    # --api-key-env: a name only (not hashed: a rerun naming another variable resumes), openai: models only
    keyed = AuditConfig(benchmarks=("gsm8k",), model=f"openai:http://127.0.0.1:{port}/v1#smollm2", api_key_env="MY_KEY", out="r")
    assert 'api_key_env = "MY_KEY"' in keyed.to_toml() and AuditConfig.from_toml_text(keyed.to_toml()).api_key_env == "MY_KEY"
    assert keyed.fingerprint() == keyed.merged(api_key_env="OTHER_KEY").fingerprint()
    with pytest.raises(ConfigError, match="only applies to openai"):
        AuditConfig(benchmarks=("gsm8k",), model="smollm2", api_key_env="MY_KEY", out="r")


def test_audit_and_probe_folders_never_hold_the_credentials(tmp_path: Path, capsys, monkeypatch) -> None:
    spec = _spec(free_port())  # nothing listens there: every model call fails with "connection refused"
    run = tmp_path / "run"
    argv = ["audit", "-b", "gsm8k", "--model", spec, "--limit", "2", "--k", "1", "--probes", "cliff", "--out", str(run)]
    assert main(argv) == 2  # the variant set is built, the cliff cannot reach the server
    assert "connection refused" in capsys.readouterr().err
    # A rerun with the same URL is the same run (refused would say "another configuration")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "connection refused" in err and "another configuration" not in err
    build_outputs(run)  # verdict.json, report.html, summary.md from the folder as it is
    shown = "http://***@127.0.0.1"
    for name in ("audit.toml", "verdict.json", "report.html"):
        assert shown in (run / name).read_text(encoding="utf-8"), name
    assert (run / "gsm8k" / "cliff" / "run.json").exists()
    # The probe commands' run folders
    for probe, extra in (("cliff", ["--k", "1"]), ("zerocot", []), ("minkprob", [])):
        assert main(["probe", probe, "-b", "gsm8k", "--model", spec, "-n", "2", *extra, "--out", str(tmp_path / probe)]) == 2
        assert shown in (tmp_path / probe / "run.json").read_text(encoding="utf-8")
    # --api-key-env: a variable that is not set is refused before anything is written
    keyed = tmp_path / "keyed"
    monkeypatch.delenv("CONTAM_UNSET_KEY_VAR", raising=False)
    assert main(["audit", "-b", "gsm8k", "--model", spec, "--api-key-env", "CONTAM_UNSET_KEY_VAR", "--out", str(keyed)]) == 2
    assert "CONTAM_UNSET_KEY_VAR" in capsys.readouterr().err and not keyed.exists()
    terminal = capsys.readouterr()
    assert SECRET not in terminal.out + terminal.err + err
    assert _leaks(tmp_path, SECRET) == []


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_credentials_reach_the_server_only_and_a_rerun_resumes(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("uvicorn")
    monkeypatch.setenv("CONTAM_AUDIT_TEST_KEY", "sk-FROM-ENV-93")
    run, keyed = tmp_path / "run", tmp_path / "keyed"
    common = ["-b", "gsm8k", "--limit", "2", "--k", "1", "--max-cot-tokens", "8"]
    with llama_server(n_ctx=1024) as url, FaultProxy(url) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        argv = ["audit", *common, "--model", _spec(port), "--probes", "cliff", "--out", str(run)]
        assert main(argv) == 0, capsys.readouterr().err[-2000:]
        basic = "Basic " + base64.b64encode(f"auditor:{SECRET}".encode()).decode()
        assert proxy.auth_headers and set(proxy.auth_headers) == {basic}  # sent on every request, as basic auth
        seen = len(proxy.auth_headers)
        assert main(argv) == 0  # resumed: every step finished, no request made
        assert len(proxy.auth_headers) == seen and "cliff ..." not in capsys.readouterr().err
        # --api-key-env: the named variable's key goes out as the bearer token (minkprob asks the server what it can do)
        plain = f"openai:{proxy.url}/v1#smollm2"
        argv = ["audit", *common, "--model", plain, "--api-key-env", "CONTAM_AUDIT_TEST_KEY", "--probes", "minkprob", "--out", str(keyed)]
        assert main(argv) == 0, capsys.readouterr().err[-2000:]
        assert proxy.auth_headers[seen:] and set(proxy.auth_headers[seen:]) == {"Bearer sk-FROM-ENV-93"}
    v = json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    assert v["config"]["model"] == f"openai:http://***@127.0.0.1:{port}/v1#smollm2"
    assert (run / "gsm8k" / "cliff" / "summary.json").exists()
    terminal = capsys.readouterr()
    assert SECRET not in terminal.out + terminal.err
    assert _leaks(tmp_path, SECRET, "sk-FROM-ENV-93") == []
