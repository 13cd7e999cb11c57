"""The transformers backend with the real embedded model (SmolLM2-135M-Instruct, dequantized).

The first run on a machine dequantizes the GGUF once into ``~/.cache/contam/hf`` (about 30 s);
later runs load that folder in under a second.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

from contam.data import load_benchmark
from contam.errors import ModelError
from contam.models.base import LanguageModel
from contam.models.hf import HFModel

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def lm() -> HFModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return HFModel("smollm2")


def _direct_logprobs(lm: HFModel, prompt: str, cont: str) -> tuple[list[float], list[float], list[float]]:
    """One unbatched full forward pass through the CausalLM head: the reference computation."""
    tok = lm.tokenizer
    p = tok(prompt, add_special_tokens=False).input_ids or [tok.bos_token_id]
    c = tok(cont, add_special_tokens=False).input_ids
    with torch.no_grad():
        logp = torch.log_softmax(lm.model(torch.tensor([p + c])).logits[0].double(), -1)
    rows = logp[len(p) - 1 : len(p) + len(c) - 1]
    lps = [rows[k, t].item() for k, t in enumerate(c)]
    prob = rows.exp()
    mu = (prob * rows).sum(-1)
    sd = ((prob * (rows - mu[:, None]) ** 2).sum(-1)).sqrt()
    return lps, mu.tolist(), sd.tolist()


def test_protocol_and_identity(lm: HFModel) -> None:
    assert isinstance(lm, LanguageModel)
    assert lm.identity.startswith("hf:sha256:") and lm.identity.endswith(":float32")
    assert lm.supports_scoring and lm.supports_prefill
    # loaded from the dequantized cache folder, not re-dequantized
    assert (lm.path / "model.safetensors").is_file() and not hasattr(lm.model.config, "quantization_config")


def test_score_equals_direct_forward_and_is_batch_invariant(lm: HFModel) -> None:
    items = load_benchmark("gsm8k")[:5]
    pairs = [(it.question + "\n", it.solution) for it in items] + [("", "The quick brown fox jumps over the lazy dog.")]
    batched = lm.score(pairs, vocab_stats=True)
    single = [lm.score([p], vocab_stats=True)[0] for p in pairs]
    for (prompt, cont), b, s in zip(pairs, batched, single, strict=True):
        ref, mu, sd = _direct_logprobs(lm, prompt, cont)
        assert len(b.logprobs) == len(ref) == len(b.tokens) == len(b.offsets) == len(b.token_ids)
        assert all(math.isfinite(x) and x <= 0 for x in b.logprobs)
        np.testing.assert_allclose(b.logprobs, ref, atol=2e-4)  # padding changes nothing
        np.testing.assert_allclose(b.logprobs, s.logprobs, atol=2e-4)
        np.testing.assert_allclose(b.vocab_mean, mu, atol=2e-4)
        np.testing.assert_allclose(b.vocab_std, sd, atol=2e-4)
        # offsets locate each token inside the continuation; the pieces rebuild it
        assert list(b.offsets) == sorted(b.offsets) and b.offsets[0] == 0
        assert "".join(b.tokens) == cont
        for tok_text, off in zip(b.tokens, b.offsets, strict=True):
            assert cont[off : off + len(tok_text)] == tok_text


def test_score_errors_and_truncation(lm: HFModel) -> None:
    with pytest.raises(ModelError, match="empty continuation"):
        lm.score([("prompt", "")])
    long_prompt = "one two three four five six seven eight nine ten " * 5
    old = lm.n_ctx
    try:
        lm.n_ctx = 16
        with pytest.warns(UserWarning, match="truncated from the left"):
            s = lm.score([(long_prompt, " eleven twelve")])[0]
        assert s.truncated > 0 and len(s.logprobs) == len(s.token_ids)
        lm.strict = True
        with pytest.raises(ModelError, match="context window"):
            lm.score([(long_prompt, " eleven")])
    finally:
        lm.n_ctx, lm.strict = old, False


def test_generate_greedy_deterministic_prefill_stop_and_seeded_sampling(lm: HFModel) -> None:
    msgs = [{"role": "user", "content": "What is 12 + 30?"}]
    prompts = [msgs, "The capital of France is"]
    a = lm.generate(prompts, max_new_tokens=12, logprobs=True)
    b = lm.generate(list(reversed(prompts)), max_new_tokens=12, logprobs=True)  # other batch order
    assert a[0][0].text == b[1][0].text and a[1][0].text == b[0][0].text
    c = a[0][0]
    assert c.logprobs is not None and len(c.logprobs) == len(c.tokens) and all(x <= 0 for x in c.logprobs)
    # the chat template is the model's own, and prefill continues the assistant turn
    text = lm.format_chat(msgs, prefill="The final answer is: \\[ \\boxed{")
    assert text.endswith("<|im_start|>assistant\nThe final answer is: \\[ \\boxed{")
    z = lm.generate([msgs], max_new_tokens=4, prefill="The final answer is: \\[ \\boxed{")[0][0]
    assert z.text[:1].isdigit()  # it answers inside the box instead of starting a new reply
    cut = lm.generate(["Count: 1, 2, 3, 4, 5,"], max_new_tokens=12, stop=["8"])[0][0]
    assert cut.finish_reason == "stop" and "8" not in cut.text and "7" in cut.text
    s1 = lm.generate(["Once upon a time"], max_new_tokens=8, temperature=1.0, n=3, seed=7)[0]
    s2 = lm.generate(["Once upon a time"], max_new_tokens=8, temperature=1.0, n=3, seed=7)[0]
    s3 = lm.generate(["Once upon a time"], max_new_tokens=8, temperature=1.0, n=3, seed=8)[0]
    assert [x.text for x in s1] == [x.text for x in s2]
    assert len({x.text for x in s1}) > 1 and [x.text for x in s1] != [x.text for x in s3]
    with pytest.raises(ModelError):
        lm.generate([[{"role": "user"}]])


def test_bad_paths_are_model_errors(tmp_path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        HFModel(tmp_path / "nope")
    with pytest.raises(ModelError, match=r"no config\.json"):
        HFModel(tmp_path)
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf at all")
    with pytest.raises(ModelError, match="not a GGUF file"):
        HFModel(bad)


def test_cross_backend_agreement_with_llamacpp(lm: HFModel) -> None:
    """llama.cpp runs the Q4_1 weights with 8-bit-quantized activations in its matmuls;
    transformers runs the dequantized float32 weights. Measured on 20 GSM8K question+solution
    texts: per-token |Δ log p| up to 1.03 nats (median per-text max 0.35), per-text mean
    log-prob |Δ| ≤ 0.021. Against llama.cpp on the same weights re-saved as F32 the per-token
    |Δ| is ≤ 0.018 and the per-text mean |Δ| ≤ 0.0006: the gap is quantization, not a bug."""
    llamacpp = pytest.importorskip("contam.models.llamacpp")
    pytest.importorskip("llama_cpp")
    from contam.models.embedded import smollm2_path

    other = llamacpp.LlamaCppModel(smollm2_path(), spec="smollm2", n_ctx=2048)
    items = load_benchmark("gsm8k")[:3]
    pairs = [(it.question + "\n", it.solution) for it in items] + [("", "The quick brown fox jumps over the lazy dog.")]
    a, b = lm.score(pairs, vocab_stats=True), other.score(pairs, vocab_stats=True)
    all_a, all_b = [], []
    for x, y in zip(a, b, strict=True):
        assert x.token_ids == y.token_ids and x.offsets == y.offsets  # same tokens, same conventions
        assert abs(x.mean - y.mean) < 0.05
        assert np.max(np.abs(np.subtract(x.logprobs, y.logprobs))) < 1.5
        assert np.max(np.abs(np.subtract(x.vocab_mean, y.vocab_mean))) < 1.5
        all_a += x.logprobs
        all_b += y.logprobs
    assert np.corrcoef(all_a, all_b)[0, 1] > 0.99
    assert lm.format_chat([{"role": "user", "content": "hi"}], "x") == other.format_chat([{"role": "user", "content": "hi"}], "x")


@pytest.mark.slow
def test_gguf_dequantized_once_then_reloaded(tmp_path) -> None:
    os.environ["CONTAM_HOME"] = str(tmp_path)
    try:
        with pytest.warns(UserWarning, match="dequantizing"):
            first = HFModel("smollm2")
        assert first.path.parent == tmp_path / "hf"
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a second load must not dequantize again
            second = HFModel("smollm2")
        assert second.path == first.path and second.identity == first.identity
        pair = [("2 + 2 =", " 4")]
        assert first.score(pair)[0].logprobs == second.score(pair)[0].logprobs
    finally:
        del os.environ["CONTAM_HOME"]
