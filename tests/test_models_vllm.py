"""The vLLM backend. Its GPU tests skip cleanly without vLLM and a CUDA device (this CPU
machine has neither); the error path for a missing engine runs everywhere."""

from __future__ import annotations

import importlib.util
import math

import pytest

from contam.errors import ModelError
from contam.models import load


def _has_gpu_vllm() -> bool:
    if importlib.util.find_spec("vllm") is None or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def test_missing_vllm_or_gpu_is_a_clear_error() -> None:
    if _has_gpu_vllm():
        pytest.skip("vLLM and a GPU are present; the error path does not apply")
    with pytest.raises(ModelError, match="vllm backend needs"):
        load("vllm:HuggingFaceTB/SmolLM2-135M-Instruct", cache=False)


@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu_vllm(), reason="needs vLLM and a CUDA GPU")
def test_vllm_scores_and_generates_on_gpu() -> None:  # pragma: no cover - GPU only
    import os

    name = os.environ.get("CONTAM_VLLM_MODEL", "HuggingFaceTB/SmolLM2-135M-Instruct")
    lm = load(f"vllm:{name}", cache=False)
    s = lm.score([("The capital of France is", " Paris.")])[0]
    assert s.tokens and all(math.isfinite(x) and x <= 0 for x in s.logprobs)
    chat = [{"role": "user", "content": "What is 2+2?"}]
    a = lm.generate([chat], max_new_tokens=8)[0][0]
    b = lm.generate([chat], max_new_tokens=8)[0][0]
    assert a.text == b.text
    samples = lm.generate(["Once upon a time"], max_new_tokens=8, temperature=1.0, n=3, seed=1, logprobs=True)[0]
    assert len(samples) == 3 and samples[0].logprobs is not None
    out = lm.generate([chat], max_new_tokens=4, prefill="The answer is")[0][0]
    assert out.text
