"""The small protocols every backend implements, and the records they return.

Probes depend on :class:`LanguageModel` and :class:`Embedder` only, never on a backend class;
:func:`contam.models.load` turns a spec string (``smollm2``, ``llamacpp:PATH``, ``hf:PATH``,
``openai:BASE_URL#MODEL``, ``vllm:NAME``) into one.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, cast, runtime_checkable

import numpy as np

from contam.errors import ModelError
from contam.records import Record

#: A chat conversation: ``[{"role": "user", "content": "..."}, ...]``.
Messages = list[dict[str, str]]
#: What ``generate`` accepts: raw text to continue, or a conversation to answer.
Prompt = str | Messages


class ContextWindowWarning(UserWarning):
    """Texts longer than the context window were truncated from the left (every backend warns with this)."""


@dataclass(frozen=True)
class TokenScores(Record):
    """Teacher-forced log-probabilities of a continuation given a prompt.

    ``offsets[i]`` is the character offset of ``tokens[i]`` inside the continuation.
    ``vocab_mean[i]`` / ``vocab_std[i]`` are the mean and standard deviation of
    log p(z) over the vocabulary at that position, under p itself (what Min-K%++ needs);
    ``None`` when not requested or not available from the backend.
    """

    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    offsets: tuple[int, ...] = ()
    token_ids: tuple[int, ...] = ()
    vocab_mean: tuple[float, ...] | None = None
    vocab_std: tuple[float, ...] | None = None
    truncated: int = 0  # prompt tokens dropped from the left to fit the context window

    @property
    def total(self) -> float:
        return float(sum(self.logprobs))

    @property
    def mean(self) -> float:
        return float(np.mean(self.logprobs)) if self.logprobs else float("nan")


@dataclass(frozen=True)
class Completion(Record):
    """One generated continuation; ``logprobs`` per generated token where the backend gives them."""

    text: str
    tokens: tuple[str, ...] = ()
    logprobs: tuple[float, ...] | None = None
    finish_reason: str = ""


@runtime_checkable
class LanguageModel(Protocol):
    """A causal language model, local or remote."""

    # Read-only properties, not bare attributes: a backend may hold them as plain attributes or
    # compute them (a wrapper such as CachedModel forwards its inner model's), and callers only read.

    @property
    def spec(self) -> str:
        """The spec it was loaded from, e.g. ``smollm2``."""
        ...

    @property
    def identity(self) -> str:
        """Stable identity for caching: backend, model name and a hash of the weights file."""
        ...

    @property
    def supports_prefill(self) -> bool:
        """Whether ``generate(prefill=...)`` can continue a partial assistant message."""
        ...

    @property
    def supports_scoring(self) -> bool:
        """Whether ``score`` works (remote APIs often cannot score a given continuation)."""
        ...

    def score(self, pairs: Sequence[tuple[str, str]], *, vocab_stats: bool = False) -> list[TokenScores]:
        """Log-probs of each ``continuation`` given its ``prompt`` (plain strings; use
        :meth:`format_chat` first to score inside a chat turn)."""
        ...

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
        seed: int = 0,
        stop: Sequence[str] | None = None,
        prefill: str | None = None,
        logprobs: bool = False,
    ) -> list[list[Completion]]:
        """``n`` completions per prompt. A :data:`Messages` prompt goes through the model's chat
        template; ``prefill`` starts the assistant's reply with given text (open weights)."""
        ...

    def format_chat(self, messages: Messages, prefill: str | None = None) -> str:
        """The prompt string the model sees for ``messages`` with the generation prompt added,
        followed by ``prefill`` when given."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """A sentence embedder returning L2-normalised float32 rows."""

    spec: str
    identity: str
    dim: int

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """``(len(texts), dim)`` float32 matrix with unit-norm rows."""
        ...


class Backend:
    """The argument rules every language-model backend shares, stated once (as lm-eval's
    ``TemplateLM`` holds what its backends share): what ``score`` and ``generate`` accept, and the
    one :class:`ContextWindowWarning` per call that counts left-truncated texts. Backends
    (``llamacpp``, ``hf``, ``openai``, ``vllm``) subclass it and implement only the model calls.

    >>> Backend.check_generate(n=1, max_new_tokens=8, temperature=-0.5)
    Traceback (most recent call last):
    ...
    contam.errors.ModelError: generate(): temperature must be a finite number >= 0, got -0.5
    """

    #: Context window in tokens (set by the backend once its model is loaded).
    n_ctx: int = 0

    @staticmethod
    def check_pairs(pairs: Sequence[tuple[str, str]]) -> None:
        """``score`` input: (prompt, continuation) string pairs with a non-empty continuation."""
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ModelError(f"score(): pair {i} must be (prompt, continuation), got {type(pair).__name__}")
            prompt, cont = pair
            if not isinstance(prompt, str) or not isinstance(cont, str):
                raise ModelError(
                    f"score(): pair {i} must be two strings (prompt, continuation), got {type(prompt).__name__}, {type(cont).__name__}"
                )
            if not cont:
                raise ModelError(f"score(): pair {i} has an empty continuation; there is nothing to score")

    @staticmethod
    def check_generate(*, n: int, max_new_tokens: int, temperature: float) -> None:
        """``generate`` settings: at least one sample of at least one token, temperature >= 0 (0 = greedy)."""
        if n < 1:
            raise ModelError(f"generate(): n must be >= 1, got {n}")
        if max_new_tokens < 1:
            raise ModelError(f"generate(): max_new_tokens must be >= 1, got {max_new_tokens}")
        if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature >= 0):
            raise ModelError(f"generate(): temperature must be a finite number >= 0, got {temperature}")

    @staticmethod
    def check_prompt_text(text: str) -> None:
        """A prompt (with its prefill) must have text to continue."""
        if not text:
            raise ModelError("generate(): empty prompt")

    def complete_box(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int = 32, seed: int = 0, stop: Sequence[str] | None = None
    ) -> list[Completion]:
        """Greedy continuations of prompts that end inside an open box (a prefilled ``\\boxed{``),
        each ending right after the brace that closes the box (see :func:`boxed_completions`).

        This default is the plain path: ``generate`` runs to a stop string or ``max_new_tokens``
        and the text is cut afterwards; a backend that can stop decoding once the box closes
        (``llamacpp``) overrides it with the same results."""
        return _generate_and_cut(cast("LanguageModel", self), prompts, max_new_tokens, seed, stop)

    def warn_truncated(self, count: int, total: int, what: str = "texts") -> None:
        """One warning per call counting the ``what`` that were cut from the left to fit ``n_ctx``."""
        if count:
            warnings.warn(
                f"{count} of {total} {what} were longer than the context window ({self.n_ctx} tokens) and were truncated from the left",
                ContextWindowWarning,
                stacklevel=3,
            )


def box_close(text: str, depth: int = 1) -> int | None:
    """Index just past the ``}`` that closes a box open ``depth`` levels deep where ``text``
    starts (braces matched as :func:`contam.probe.answers.extract_boxed` matches them), or
    ``None`` while it is still open.

    >>> box_close("18} \\\\]"), box_close("\\\\frac{1}{2}} and more"), box_close("4")
    (3, 12, None)
    """
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def cut_at_box_close(c: Completion) -> Completion:
    """``c`` ending right after the brace that closes the open box (finish reason ``stop``);
    unchanged when the box never closes. Token-level fields are dropped from a cut completion."""
    end = box_close(c.text)
    if end is None:
        return c
    return replace(c, text=c.text[:end], tokens=(), logprobs=None, finish_reason="stop")


def boxed_completions(
    model: LanguageModel, prompts: Sequence[Prompt], *, max_new_tokens: int = 32, seed: int = 0, stop: Sequence[str] | None = None
) -> list[Completion]:
    """The forced answer of each prompt that ends inside an open ``\\boxed{`` (the Zero-CoT Probe's
    prefill): greedy, ending where the box closes, at a stop string, or after ``max_new_tokens``.

    The answer is what the model writes into the box it was forced to open; anything after the
    closing brace (a second box the model opens while reasoning on) is not part of it. The model's
    own :meth:`Backend.complete_box` is used when it has one (a backend that stops decoding at the
    brace), else plain ``generate`` and a cut; both give the same text.
    """
    own: Callable[..., list[Completion]] | None = getattr(model, "complete_box", None)
    if own is not None:
        return list(own(prompts, max_new_tokens=max_new_tokens, seed=seed, stop=stop))
    return _generate_and_cut(model, prompts, max_new_tokens, seed, stop)


def _generate_and_cut(
    model: LanguageModel, prompts: Sequence[Prompt], max_new_tokens: int, seed: int, stop: Sequence[str] | None
) -> list[Completion]:
    """The plain path to a forced answer: greedy ``generate``, then the text cut where the box closes."""
    outs = model.generate(prompts, max_new_tokens=max_new_tokens, temperature=0.0, seed=seed, stop=stop)
    return [cut_at_box_close(o[0]) for o in outs]
