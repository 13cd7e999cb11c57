"""The llama.cpp backend's prefix reuse (issue 34) on the real embedded SmolLM2: a prompt that starts
like the previous one decodes only its new tokens, and every answer, score and probe record is the
same as on the plain path that evaluates each prompt from scratch."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from contam.data import Item
from contam.models import load
from contam.models.base import Backend, boxed_completions
from contam.models.llamacpp import LlamaCppModel

if importlib.util.find_spec("llama_cpp") is None:  # not imported here: llamacpp.py sets OpenMP env first
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)

SYSTEM = {"role": "system", "content": "Please reason step by step, and put your final answer within \\boxed{}."}
QUESTIONS = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did she sell?",
    "Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of babysitting. How much did she earn?",
)


@pytest.fixture(scope="module")
def lm() -> LlamaCppModel:
    model = load("smollm2", cache=False)
    assert isinstance(model, LlamaCppModel)
    return model


@pytest.fixture()
def plain(lm: LlamaCppModel):
    """The same model on the plain path for the duration of a test."""

    class Plain:
        def __enter__(self) -> LlamaCppModel:
            lm.reuse_prefix = False
            return lm

        def __exit__(self, *exc: object) -> None:
            lm.reuse_prefix = True

    return Plain()


def forced(lm: LlamaCppModel, q: str, part: str = "") -> str:
    return lm.format_chat([SYSTEM, {"role": "user", "content": q}], prefill=part + "The final answer is: \\[ \\boxed{")


def fresh_rows(lm: LlamaCppModel, ids: list[int]) -> np.ndarray:
    lm._llm.reset()
    lm.kv.forget()
    lm._llm.eval(ids)
    return np.array(lm._llm.scores[: len(ids)])


def test_prefill_rows_equal_a_fresh_decode(lm: LlamaCppModel) -> None:
    base = lm.tokenize(forced(lm, QUESTIONS[0]))
    longer = lm.tokenize(forced(lm, QUESTIONS[0], "She sold 48 / 2 = 24 clips in May.\n\n"))
    for first, second in ((base, longer), (longer, base), (base, base[:-1])):
        want = fresh_rows(lm, second)
        lm.kv.prefill(first)
        before = lm.kv.reused
        lm.kv.prefill(second)
        assert lm.kv.reused > before  # the shared prefix came from the cache
        np.testing.assert_array_equal(np.array(lm._llm.scores[: len(second)]), want)  # bit-identical


def test_a_one_token_last_chunk_is_decoded_alone_as_a_fresh_decode_does(lm: LlamaCppModel) -> None:
    small = LlamaCppModel(lm.path, n_ctx=256, n_batch=16)
    ids = small.tokenize(forced(small, QUESTIONS[1]))
    ids = ids[: 16 * (len(ids) // 16) + 1]  # k * n_batch + 1 tokens
    want = fresh_rows(small, ids)
    small.kv.prefill(ids[:-5] + [ids[-1]] * 5)
    small.kv.prefill(ids)
    np.testing.assert_array_equal(np.array(small._llm.scores[: len(ids)]), want)
    assert small.kv.clean == len(ids) - 1  # the lone last token's KV is never reused


def test_generation_and_scores_equal_the_plain_path(lm: LlamaCppModel, plain) -> None:
    prompts = [[SYSTEM, {"role": "user", "content": q}] for q in QUESTIONS]
    pairs = [(forced(lm, q), " 72") for q in QUESTIONS] + [(forced(lm, QUESTIONS[0]), " 7")]

    def run(model: LlamaCppModel) -> tuple:
        gen = model.generate(prompts, max_new_tokens=8, logprobs=True)
        again = model.generate(prompts[:1], max_new_tokens=8, logprobs=True)  # its prompt is cached now
        scores = model.score(pairs, vocab_stats=True)
        return [g[0] for g in gen] + [again[0][0]], scores

    new_gen, new_scores = run(lm)
    with plain as old:
        old_gen, old_scores = run(old)
    assert new_gen == old_gen  # texts and per-token log-probs, bit-identical
    assert new_gen[0] == new_gen[-1]
    for a, b in zip(new_scores, old_scores, strict=True):
        assert a.token_ids == b.token_ids
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-4)
        np.testing.assert_allclose(a.vocab_mean or (), b.vocab_mean or (), rtol=0, atol=1e-4)


def test_box_answers_stop_at_the_closing_brace_with_the_plain_paths_text(lm: LlamaCppModel, plain) -> None:
    cot = "She sold 48 clips in April and 24 in May, so 48 + 24 = 72.\n\n"
    prompts = [forced(lm, QUESTIONS[0], part) for part in ("", cot)]
    early = boxed_completions(lm, prompts, max_new_tokens=16, stop=["\\]"])
    with plain as old:
        cut = Backend.complete_box(old, prompts, max_new_tokens=16, stop=["\\]"])
        full = old.generate(prompts, max_new_tokens=16, stop=["\\]"])
    assert early == cut
    for e, f in zip(early, full, strict=True):
        assert f[0].text.startswith(e.text)
        if e.text.endswith("}"):
            assert e.finish_reason == "stop"


@pytest.fixture(scope="module")
def zerocot(lm: LlamaCppModel):
    """Two items, the probe, and its records on the prefix-reusing path with the prompt tokens it decoded and reused."""
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe

    items = [Item(id=f"q{i}", question=q, answer=a) for i, (q, a) in enumerate(zip(QUESTIONS, ("72", "10"), strict=True))]
    probe = ZeroCoTProbe(ZeroCoTConfig(max_cot_tokens=16, max_answer_tokens=6, truncation=(0.0, 0.5, 1.0)))
    evaluated, reused = lm.kv.evaluated, lm.kv.reused
    records = probe.measure_items(lm, items, "prefill")
    return items, probe, records, lm.kv.evaluated - evaluated, lm.kv.reused - reused


def test_zero_cot_records_equal_the_plain_path(lm: LlamaCppModel, plain, zerocot) -> None:
    items, probe, new, evaluated, reused = zerocot
    with plain as old:
        before = old.kv.evaluated
        ref = probe.measure_items(old, items, "prefill")
        assert old.kv.evaluated == before  # the plain path never goes through the prefix store
    assert new == ref
    # Per item the plain path decodes the question's prompt five times (CoT, score, two cuts); here about once.
    assert reused > evaluated and evaluated < 2 * sum(len(lm.tokenize(forced(lm, q))) for q in QUESTIONS)


def test_a_batching_backend_gets_each_stage_for_all_items_in_one_call(lm: LlamaCppModel, zerocot) -> None:
    items, probe, per_item, _, _ = zerocot
    sizes: list[tuple[str, int]] = []

    class Batching:
        """The same model announcing batches, as the API and vLLM backends do."""

        preferred_batch = 4

        def __getattr__(self, name: str) -> object:
            attr = getattr(lm, name)
            if name in ("generate", "score", "complete_box"):

                def counted(prompts, **kw):
                    sizes.append((name, len(prompts)))
                    return attr(prompts, **kw)

                return counted
            return attr

    staged = probe.measure_items(Batching(), items, "prefill")
    assert staged == per_item
    assert sizes == [("generate", 2), ("score", 2), ("complete_box", 4)]  # CoTs, gold answers, 2 items x 2 cuts
