"""The llama.cpp KV cache as a store of prompt prefixes: a prompt that starts like the one
evaluated before decodes only the rest, with every logits row bit-identical to a fresh evaluation.

llama.cpp decodes a batch of one token through other kernels than a batch of two or more, and
the logits differ (up to ~1 on SmolLM2, measured); batches of two or more agree exactly however
the prompt is split. So a prompt is always evaluated the way a reset model evaluating ``ids`` from the start would
see it -- every token in a batch of at least two, except a last chunk of one token where the
fresh evaluation has one too (a prompt of ``k * n_batch + 1`` tokens) -- and the KV of a token is
reused only when it came from such a batch: the tokens a generation decodes one at a time are
never reused, the next prompt evaluates them again. :class:`PrefixKV` keeps that boundary.

The Zero-CoT Probe asks, per item, for the chain of thought, then for forced answers after 0, 25,
50 and 75 % of it: each prompt is the previous one's prefix plus a little, so the question (and
the system prompt, shared by all items) is evaluated once instead of at every cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from contam.errors import ModelError
from contam.models.base import Completion, box_close


class PrefixKV:
    """Prompt evaluation on one ``llama_cpp.Llama`` (``logits_all=True``) that reuses the longest
    clean prefix of what is in its KV cache.

    ``clean`` is the number of leading tokens of ``llm.input_ids`` whose KV and logits rows came
    from batches of at least two tokens; ``reused`` / ``evaluated`` count prompt tokens taken
    from the cache / decoded (the benchmark reports them).
    """

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.clean = 0
        self.reused = 0
        self.evaluated = 0

    def forget(self) -> None:
        """Nothing in the KV cache may be reused any more (after an error or a foreign decode)."""
        self.clean = 0

    def _common(self, ids: Sequence[int]) -> int:
        """Length of the longest common prefix of ``ids`` and the clean cached tokens."""
        m = min(self.clean, int(self.llm.n_tokens), len(ids))
        if m <= 0:
            return 0
        diff = np.flatnonzero(np.asarray(self.llm.input_ids[:m]) != np.asarray(ids[:m], dtype=np.intc))
        return int(diff[0]) if diff.size else m

    def eval_after_last_score(self, window: Sequence[int]) -> None:
        """The path before prefix reuse (``reuse_prefix=False``): keep what the last ``score`` left
        (``generate`` empties the cache) for the longest shared prefix and decode the rest, at
        least one token (a one-token batch only at the end, whose row predicts past the text)."""
        llm = self.llm
        cached = llm.input_ids[: llm.n_tokens]
        common = 0
        for a, b in zip(cached, window, strict=False):
            if a != b:
                break
            common += 1
        llm.n_tokens = min(common, len(window) - 1)
        self.forget()
        llm.eval(list(window[llm.n_tokens :]))

    def prefill(self, ids: Sequence[int]) -> None:
        """Leave exactly ``ids`` in the KV cache, each logits row equal to what a fresh
        a reset model evaluating ``ids`` computes (chunks of ``n_batch``; a one-token last chunk alone)."""
        llm = self.llm
        n, n_batch = len(ids), int(llm.n_batch)
        tail = 1 if n % n_batch == 1 else 0  # a fresh evaluation decodes this last token on its own
        body = n - tail
        # Decode at least two tokens of the body, so the reused part never ends a batch of one.
        reuse = max(0, min(self._common(ids), body - 2))
        llm.n_tokens = reuse  # llm.eval drops the KV from here on
        self.clean = min(self.clean, reuse)
        try:
            pos = reuse
            while pos < body:
                step = min(n_batch, body - pos)
                if body - pos - step == 1:  # never leave a one-token chunk behind
                    step -= 1
                llm.eval(list(ids[pos : pos + step]))
                pos += step
            self.clean = body
            if tail:
                llm.eval(list(ids[body:]))
        except Exception:
            self.forget()
            llm.reset()
            raise
        self.reused += reuse
        self.evaluated += n - reuse

    def greedy(self, ids: Sequence[int], max_tokens: int, stop: Sequence[str] | None, until_closed: bool) -> tuple[str, str]:
        """Greedy continuation of ``ids``: ``(text, finish_reason)`` exactly as llama-cpp-python's
        ``create_completion`` at temperature 0 returns them (end-of-generation tokens, stop strings,
        held-back partial UTF-8, the token budget), and with ``until_closed`` also ending right
        after the brace that closes the box the prompt left open -- without decoding further."""
        from llama_cpp import llama_cpp as C

        llm = self.llm
        self.prefill(ids)
        n_ctx = int(llm.n_ctx())
        budget = max_tokens if max_tokens + len(ids) < n_ctx else n_ctx - len(ids)
        stops = [s.encode("utf-8") for s in stop or []]
        vocab = llm._model.vocab
        out: list[int] = []
        multibyte_fix = 0
        while True:
            # The greedy sampler takes the first largest logit; so does argmax.
            tok = int(np.argmax(llm.scores[llm.n_tokens - 1]))
            if C.llama_vocab_is_eog(vocab, tok):
                return llm.detokenize(out).decode("utf-8", errors="ignore"), "stop"
            out.append(tok)
            text = llm.detokenize(out)
            # Hold back an incomplete UTF-8 character, as create_completion does (same loop).
            for k, char in enumerate(text[-3:]):
                k = 3 - k
                for num, pattern in ((2, 192), (3, 224), (4, 240)):
                    if num > k and pattern & char == pattern:
                        multibyte_fix = num - k
            if multibyte_fix > 0:
                multibyte_fix -= 1
                llm.eval([tok])
                continue
            hit = [s for s in stops if s in text]
            if hit:
                return text[: text.index(hit[0])].decode("utf-8", errors="ignore"), "stop"
            if until_closed:
                s = text.decode("utf-8", errors="ignore")
                end = box_close(s)
                if end is not None:
                    return s[:end], "stop"
            if len(out) >= budget:
                return text.decode("utf-8", errors="ignore"), "length"
            llm.eval([tok])


def completion_from_response(out: Any) -> Completion:
    """A :class:`Completion` from llama-cpp-python's ``create_completion`` answer."""
    if not isinstance(out, dict):  # a stream comes back only for stream=True, never asked for here
        raise ModelError("llama.cpp returned a stream for a non-streaming completion")
    choice = out["choices"][0]
    lp = choice.get("logprobs") or None
    token_logprobs: tuple[float, ...] | None = None
    if lp:
        # None marks a token without a log-prob (the first prompt token under echo=True, not
        # used here): refuse rather than let a hole shift the per-token alignment.
        if any(x is None for x in lp["token_logprobs"]):
            raise ModelError("llama.cpp returned a generated token without its log-prob")
        token_logprobs = tuple(float(x) for x in lp["token_logprobs"] if x is not None)
    return Completion(
        text=choice["text"],
        tokens=tuple(lp["tokens"]) if lp else (),
        logprobs=token_logprobs,
        finish_reason=str(choice.get("finish_reason") or ""),
    )
