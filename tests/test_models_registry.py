"""Model specs resolve to the right backend, once per process; bad specs are one-line errors."""

from __future__ import annotations

import importlib.util

import pytest

from contam.errors import ConfigError, ModelError
from contam.models import available, load, parse_spec
from contam.models.embedded import file_identity, smollm2_path


def test_parse_spec_routes_every_spelling(tmp_path) -> None:
    assert parse_spec("smollm2") == ("llamacpp", "smollm2")
    assert parse_spec("llamacpp:/m/x.gguf") == ("llamacpp", "/m/x.gguf")
    assert parse_spec("/m/x.gguf") == ("llamacpp", "/m/x.gguf")
    assert parse_spec("hf:/m/folder") == ("hf", "/m/folder")
    assert parse_spec(str(tmp_path)) == ("hf", str(tmp_path))  # a plain folder is a transformers model
    assert parse_spec("openai:http://h:1/v1#gpt-x") == ("openai", "http://h:1/v1#gpt-x")
    assert parse_spec("vllm:meta-llama/Llama-3.1-8B") == ("vllm", "meta-llama/Llama-3.1-8B")
    for bad, msg in [
        ("", "empty model spec"),
        ("gpt4", "unknown model spec"),
        ("llamacpp:", "no model"),
        ("openai:http://h:1/v1", "needs a model name"),
    ]:
        with pytest.raises(ConfigError, match=msg):
            parse_spec(bad)


def test_embedded_model_is_found_and_hashed_by_content(tmp_path) -> None:
    p = smollm2_path()
    assert p.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and p.stat().st_size > 50_000_000
    ident = file_identity(p)
    assert ident.startswith("sha256:") and len(ident) == 7 + 16
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(b"same")
    b.write_bytes(b"same")
    assert file_identity(a) == file_identity(b)  # content, not path
    b.write_bytes(b"different")
    assert file_identity(a) != file_identity(b)
    with pytest.raises(ModelError, match="cannot read model file"):
        file_identity(tmp_path / "missing")


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_one_load_per_process_and_bad_options_are_config_errors() -> None:
    a = load("smollm2", cache=False)
    assert load(" smollm2 ", cache=False) is a
    assert load("smollm2", cache=False, strict=True) is not a  # different options, different model
    with pytest.raises(ConfigError, match="unexpected keyword"):
        load("smollm2", cache=False, bogus_option=1)


def test_available_lists_models_backends_and_cache() -> None:
    info = available()
    specs = {m["spec"]: m for m in info["models"]}
    assert specs["smollm2"]["available"] and specs["minilm"]["kind"] == "embedder"
    assert info["cache"]["path"].endswith(".sqlite")


def test_every_backend_shares_the_argument_rules() -> None:
    """One base (contam.models.base.Backend) states what score/generate accept; every backend
    inherits it, so the rules cannot drift between backends (a negative temperature is refused
    everywhere, not only by hf)."""
    from contam.models.base import Backend
    from contam.models.hf import HFModel
    from contam.models.llamacpp import LlamaCppModel
    from contam.models.openai import OpenAIModel
    from contam.models.vllm import VLLMModel

    for cls in (HFModel, LlamaCppModel, OpenAIModel, VLLMModel):
        assert issubclass(cls, Backend), cls
    with pytest.raises(ModelError, match="temperature"):
        Backend.check_generate(n=1, max_new_tokens=4, temperature=-1.0)
    with pytest.raises(ModelError, match="temperature"):
        Backend.check_generate(n=1, max_new_tokens=4, temperature=float("nan"))
    with pytest.raises(ModelError, match="n must be"):
        Backend.check_generate(n=0, max_new_tokens=4, temperature=0.0)
    with pytest.raises(ModelError, match="max_new_tokens"):
        Backend.check_generate(n=1, max_new_tokens=0, temperature=0.0)
    with pytest.raises(ModelError, match="empty continuation"):
        Backend.check_pairs([("a", "b"), ("prompt", "")])
    with pytest.raises(ModelError, match="two strings"):
        Backend.check_pairs([("a", 3)])  # type: ignore[list-item]
    Backend.check_pairs([("", "x")])  # an empty prompt is fine: the backend scores from BOS
