"""The openai backend against a real OpenAI-compatible server (llama.cpp's, serving the embedded
model on 127.0.0.1), with our fault-injecting proxy in front for the retry and resume tests."""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Iterator

import pytest

from contam.errors import ConfigError, ModelError
from contam.models import load
from contam.models.cache import CachedModel, ResponseCache
from contam.models.openai import OpenAIModel
from faultproxy import FaultProxy
from llamaserver import free_port, llama_server

if importlib.util.find_spec("llama_cpp") is None:  # not imported here: llamacpp.py sets OpenMP env first
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)
pytest.importorskip("uvicorn")

CHAT = [{"role": "user", "content": "What is 12 + 30? Answer with a number."}]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with llama_server(logits_all=True) as url:
        yield url


def _api(url: str, **kw) -> OpenAIModel:
    return OpenAIModel(url + "/v1", "smollm2", **kw)


def test_chat_round_trip_matches_the_local_model(server: str) -> None:
    api = load(f"openai:{server}/v1#smollm2", cache=False)
    out = api.generate([CHAT], max_new_tokens=6, logprobs=True)[0][0]
    local = load("smollm2", cache=False).generate([CHAT], max_new_tokens=6, logprobs=True)[0][0]
    # Same GGUF, same chat template, greedy: the same text and (nearly) the same log-probs.
    assert out.text == local.text and out.text
    assert out.logprobs is not None and local.logprobs is not None
    assert len(out.logprobs) == len(local.logprobs)
    assert max(abs(a - b) for a, b in zip(out.logprobs, local.logprobs, strict=True)) < 1e-3


def test_completions_round_trip_with_seeded_samples(server: str) -> None:
    api = _api(server)
    # The server re-decodes a repeated prompt's last token alone (different kernels, slightly
    # different logits): warm it so every sampled request below takes that same path.
    api.generate(["Once upon a time"], max_new_tokens=1)
    a = api.generate(["Once upon a time"], max_new_tokens=6, temperature=1.0, n=2, seed=3, logprobs=True)[0]
    b = api.generate(["Once upon a time"], max_new_tokens=6, temperature=1.0, n=2, seed=3)[0]
    assert [c.text for c in a] == [c.text for c in b]
    assert all(c.logprobs and all(math.isfinite(x) for x in c.logprobs) for c in a)
    assert api.calls["/completions"] == 5


def test_llamacpp_server_scoring_is_refused_because_its_echo_is_shifted(server: str) -> None:
    api = _api(server)
    assert api.supports_scoring is False
    with pytest.raises(ModelError, match="shifted by one token"):
        api.score([("The capital of France is", " Paris.")])
    # The reason, measured: forcing echo gives values that differ from the teacher-forced truth.
    forced = _api(server, scoring="echo").score([("The capital of France is", " Paris.")])[0]
    truth = load("smollm2", cache=False).score([("The capital of France is", " Paris.")])[0]
    assert forced.tokens == truth.tokens
    assert abs(forced.logprobs[0] - truth.logprobs[0]) > 1.0


def test_client_retries_through_faults_and_finishes(server: str) -> None:
    with FaultProxy(server, script=["429", "500", "drop", "hang", "lost", "503"], hang_s=7.0) as proxy:
        # The timeout must exceed a real answer on a loaded 2-core machine; the hang outlasts it.
        api = OpenAIModel(proxy.url + "/v1", "smollm2", timeout=6.0, backoff=0.01, max_retries=8, concurrency=1)
        outs = api.generate(["2 + 2 =", "The sky is"], max_new_tokens=3)
    direct = _api(server).generate(["2 + 2 =", "The sky is"], max_new_tokens=3)
    assert [o[0].text for o in outs] == [o[0].text for o in direct]
    assert api.calls["retry"] >= 6  # one per injected fault (more only if a real answer outlasts the timeout)
    assert proxy.counts["429"] == proxy.counts["hang"] == proxy.counts["drop"] == 1


def test_cache_keeps_finished_calls_when_the_server_fails_midway(server: str, tmp_path) -> None:
    prompts = [f"Count to {k}:" for k in range(4)]
    cache = ResponseCache(tmp_path / "r.sqlite")
    with FaultProxy(server, script=["ok", "ok"], default="500") as proxy:
        api = OpenAIModel(proxy.url + "/v1", "smollm2", backoff=0.01, max_retries=1, concurrency=1)
        lm = CachedModel(api, cache, chunk_size=1)
        with pytest.raises(ModelError, match="HTTP 500 after 2 attempt"):
            lm.generate(prompts, max_new_tokens=2)
        assert len(cache) == 2
        proxy.default = "ok"  # the server recovers; the rerun sends only what did not finish
        lm = CachedModel(OpenAIModel(proxy.url + "/v1", "smollm2", concurrency=1), cache, chunk_size=1)
        outs = lm.generate(prompts, max_new_tokens=2)
        assert proxy.counts["forwarded"] == 4  # 2 before the failure + the 2 unfinished prompts
    assert lm.hits == 2 and lm.misses == 2 and len(outs) == 4 and len(cache) == 4


def test_server_without_logprobs_is_a_clear_error(server: str) -> None:
    with FaultProxy(server, default="nologprobs") as proxy:
        api = OpenAIModel(proxy.url + "/v1", "smollm2")
        with pytest.raises(ModelError, match="no log-probs"):
            api.generate([CHAT], max_new_tokens=2, logprobs=True)
        assert api.generate([CHAT], max_new_tokens=2)[0][0].text  # fine without log-probs


def test_server_down_is_a_quick_one_line_error() -> None:
    api = OpenAIModel(f"http://127.0.0.1:{free_port()}/v1", "x", backoff=0.01)
    t = time.time()
    with pytest.raises(ModelError, match="connection refused"):
        api.generate(["hi"], max_new_tokens=2)
    assert time.time() - t < 10


def test_api_key_comes_from_the_named_env_var_and_is_never_shown(server: str, monkeypatch) -> None:
    monkeypatch.setenv("CONTAM_TEST_KEY", "sk-secret-123")
    with FaultProxy(server) as proxy:
        api = load(f"openai:{proxy.url}/v1#smollm2", cache=False, api_key_env="CONTAM_TEST_KEY")
        api.generate(["hi"], max_new_tokens=1)
        assert proxy.auth_headers[-1] == "Bearer sk-secret-123"
        assert "sk-secret" not in repr(api) + api.identity + str(api.describe())
    with pytest.raises(ConfigError, match="NOT_SET_VAR"):
        OpenAIModel(server + "/v1", "smollm2", api_key_env="NOT_SET_VAR")


def test_prefill_and_bad_specs_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="needs a model name"):
        load("openai:http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="must look like"):
        OpenAIModel("localhost:8080", "m")
    api = OpenAIModel("http://127.0.0.1:1", "m")
    assert api.base_url == "http://127.0.0.1:1/v1"
    with pytest.raises(ModelError, match="cannot prefill"):
        api.generate([CHAT], prefill="The answer is")
