"""The llama.cpp backend on the real embedded SmolLM2 GGUF."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from contam.errors import ModelError
from contam.models import LanguageModel, load
from contam.models.base import ContextWindowWarning
from contam.models.llamacpp import LlamaCppModel, vocab_moments

if importlib.util.find_spec("llama_cpp") is None:  # not imported here: llamacpp.py sets OpenMP env first
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)

CHAT = [{"role": "user", "content": "What is 12 + 30? Answer with a number."}]


@pytest.fixture(scope="module")
def lm() -> LlamaCppModel:
    model = load("smollm2", cache=False)
    assert isinstance(model, LlamaCppModel)
    return model


def test_forward_pass_does_not_crash_in_a_fresh_process() -> None:
    # The default native build segfaults in the AMX matmul on the first forward pass
    # (llama.cpp#20824); run one in a child so a crash fails this test instead of killing pytest.
    code = "from contam.models import load; s = load('smollm2', cache=False).score([('a', ' b')])[0]; print(s.logprobs[0])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert math.isfinite(float(proc.stdout.strip().splitlines()[-1]))


def test_protocol_and_identity(lm: LlamaCppModel) -> None:
    assert isinstance(lm, LanguageModel)
    assert lm.identity.startswith("llamacpp:sha256:")
    assert lm.supports_scoring and lm.supports_prefill
    assert load("smollm2", cache=False) is lm  # one load per process


def test_scores_are_finite_with_offsets_and_vocab_stats(lm: LlamaCppModel) -> None:
    cont = " Paris is the capital, café ünï."
    s = lm.score([("The capital of France is", cont)], vocab_stats=True)[0]
    assert len(s.tokens) == len(s.logprobs) == len(s.offsets) == len(s.token_ids) >= 5
    assert all(math.isfinite(x) and x <= 0 for x in s.logprobs)
    assert s.offsets[0] == 0 and list(s.offsets) == sorted(s.offsets) and s.offsets[-1] < len(cont)
    assert cont[s.offsets[1] :].startswith(" is")
    assert s.vocab_mean is not None and s.vocab_std is not None
    assert all(m < 0 and sd >= 0 for m, sd in zip(s.vocab_mean, s.vocab_std, strict=True))
    assert s.truncated == 0


def test_logprobs_match_an_independent_full_softmax(lm: LlamaCppModel) -> None:
    # Recompute from llama-cpp-python's own eval of the concatenated ids: no shift by one.
    prompt, cont = "Janet has 3 apples.", " She eats one and has 2 left."
    s = lm.score([(prompt, cont)], vocab_stats=True)[0]
    llm = lm._llm
    ids = lm.tokenize(prompt) + lm.tokenize(cont, add_bos=False)
    llm.reset()
    llm.eval(ids)
    logits = np.array(llm.scores[: len(ids)], dtype=np.float64)
    logp = logits - logits.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    n = len(s.logprobs)
    expect = [logp[len(ids) - n - 1 + j, ids[len(ids) - n + j]] for j in range(n)]
    np.testing.assert_allclose(s.logprobs, expect, atol=1e-4)
    mu, sd = vocab_moments(logp[len(ids) - n - 1 : len(ids) - 1])
    np.testing.assert_allclose(s.vocab_mean, mu, atol=1e-4)
    np.testing.assert_allclose(s.vocab_std, sd, atol=1e-4)


def test_batch_order_and_prefix_reuse_do_not_change_scores(lm: LlamaCppModel) -> None:
    pairs = [("Q: 1+1?", " A: 2"), ("Other prompt", " text"), ("Q: 1+1?", " A: 3")]
    together = lm.score(pairs)
    alone = [lm.score([p])[0] for p in pairs]
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-4)
        assert a.tokens == b.tokens


def test_empty_prompt_is_scored_after_bos_and_empty_continuation_errors(lm: LlamaCppModel) -> None:
    s = lm.score([("", "Hello world")])[0]
    assert s.tokens == ("Hello", " world") and all(math.isfinite(x) for x in s.logprobs)
    with pytest.raises(ModelError, match="empty continuation"):
        lm.score([("prompt", "")])


def test_long_text_truncates_from_the_left_with_a_warning_or_errors_when_strict() -> None:
    small = LlamaCppModel(load("smollm2", cache=False).path, n_ctx=64)
    long_prompt = "one two three four five six seven eight nine ten " * 10
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = small.score([(long_prompt, " eleven twelve")])[0]
    assert s.truncated > 0 and len(s.logprobs) == 2
    assert any(issubclass(w.category, ContextWindowWarning) and "1 of 1" in str(w.message) for w in caught)
    strict = LlamaCppModel(small.path, n_ctx=64, strict=True)
    with pytest.raises(ModelError, match="context window"):
        strict.score([(long_prompt, " eleven")])


def test_greedy_generation_is_deterministic(lm: LlamaCppModel) -> None:
    a = lm.generate([CHAT], max_new_tokens=12, logprobs=True)[0][0]
    lm.score([("unrelated", " text to disturb the KV cache")])
    b = lm.generate([CHAT], max_new_tokens=12, logprobs=True)[0][0]
    c = lm.generate([CHAT], max_new_tokens=12, logprobs=True)[0][0]  # the prompt is in the KV cache now
    assert a.text == b.text == c.text and a.text.strip()
    assert a.logprobs == b.logprobs == c.logprobs  # bit-identical, not just close


def test_scores_do_not_depend_on_what_was_decoded_before(lm: LlamaCppModel) -> None:
    prompt, cont = "Q: What is 12 + 30?\nA:", " 42, because 12 + 30 = 42."
    lm._llm.reset()
    fresh = lm.score([(prompt, cont)])[0]
    lm.generate([prompt], max_new_tokens=5)  # token-by-token KV for this very prefix
    lm.score([(prompt, " 41")])  # a shared prefix, then the original again
    again = lm.score([(prompt, cont)])[0]
    assert again.logprobs == fresh.logprobs


def test_sampling_follows_the_seed_and_logprobs_come_back(lm: LlamaCppModel) -> None:
    outs = lm.generate(["Once upon a time"], max_new_tokens=8, temperature=1.0, n=3, seed=7, logprobs=True)[0]
    again = lm.generate(["Once upon a time"], max_new_tokens=8, temperature=1.0, n=3, seed=7, logprobs=True)[0]
    assert [o.text for o in outs] == [o.text for o in again]
    assert len({o.text for o in outs}) > 1  # different seeds per sample
    assert outs[0].logprobs is not None and len(outs[0].logprobs) == len(outs[0].tokens) > 0


def test_prefill_continues_the_assistant_turn(lm: LlamaCppModel) -> None:
    prefill = "The final answer is: \\[ \\boxed{"
    text = lm.format_chat(CHAT, prefill=prefill)
    assert text.endswith("<|im_start|>assistant\n" + prefill)
    out = lm.generate([CHAT], max_new_tokens=6, prefill=prefill, stop=["}"])[0][0]
    # The continuation picks up inside the box: the same tokens as generating from the rendered text.
    raw = lm.generate([text], max_new_tokens=6, stop=["}"])[0][0]
    assert out.text == raw.text
    assert not out.text.startswith("<|im_start|>")


def test_bad_gguf_and_missing_file_are_one_line_errors(tmp_path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="not a GGUF file"):
        load(f"llamacpp:{bad}")
    trunc = tmp_path / "trunc.gguf"
    trunc.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelError, match="cannot load"):
        load(f"llamacpp:{trunc}")
    with pytest.raises(ModelError, match="does not exist"):
        load(f"llamacpp:{tmp_path / 'missing.gguf'}")


def test_row_chunked_logprobs_equal_the_one_shot_computation() -> None:
    from contam.models.llamacpp import ROW_CHUNK, token_logprobs

    rng = np.random.default_rng(0)
    rows = (rng.standard_normal((2 * ROW_CHUNK + 37, 500)) * 4).astype(np.float32)
    targets = rng.integers(0, 500, len(rows))
    lps, mu, sd = token_logprobs(rows, targets, vocab_stats=True)
    x = rows.astype(np.float64)
    logp = x - x.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(lps, logp[np.arange(len(rows)), targets], atol=1e-5)
    ref_mu, ref_sd = vocab_moments(logp)
    np.testing.assert_allclose(mu, ref_mu, atol=1e-4)
    np.testing.assert_allclose(sd, ref_sd, atol=1e-4)


def test_empty_generation_prompt_is_an_error(lm: LlamaCppModel) -> None:
    with pytest.raises(ModelError, match="empty prompt"):
        lm.generate([""], max_new_tokens=2)
    with pytest.raises(ModelError, match="chat message 0"):
        lm.generate([[{"role": "user"}]], max_new_tokens=2)
