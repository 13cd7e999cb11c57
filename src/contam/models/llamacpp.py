"""llama.cpp backend (llama-cpp-python, GGUF files): the default on CPU.

Scoring reads the logits of every position (``logits_all=True``) and computes log-softmax
itself: ``create_completion(echo=True, logprobs=...)`` returns prompt log-probs shifted by one
token (llama-cpp-python#1983), so it is not used for scoring. The Min-K%++ vocabulary statistics
are computed here from the full logits so vocabulary-sized arrays never leave the backend.

>>> lm = LlamaCppModel(smollm2_path(), spec="smollm2")                 # doctest: +SKIP
>>> s = lm.score([("The capital of France is", " Paris.")])[0]        # doctest: +SKIP
>>> s.tokens, len(s.logprobs)                                          # doctest: +SKIP
((' Paris', '.'), 2)
>>> lm.generate(["2+2="], max_new_tokens=3)[0][0].text                 # doctest: +SKIP
'4\\n\\n'
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contam.errors import ModelError
from contam.models.base import Backend, Completion, Messages, Prompt, TokenScores
from contam.models.chat import check_messages
from contam.models.embedded import file_identity
from contam.models.llamakv import PrefixKV, completion_from_response
from contam.models.logits import ROW_CHUNK as ROW_CHUNK
from contam.models.logits import char_offsets, token_logprobs
from contam.models.logits import vocab_moments as vocab_moments
from contam.pool import usable_cores

# ggml's OpenMP threads spin while idle; on a shared or oversubscribed CPU that made a 2-thread
# decode 10x slower than 1 thread here. Passive waiting must be set before llama_cpp (and its
# OpenMP runtime) is first imported, hence at module import; an explicit user setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _close_llm(llm: Any) -> None:
    with contextlib.suppress(Exception):
        llm.close()


def _cpu_threads() -> int:
    env = os.environ.get("CONTAM_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return usable_cores()


class LlamaCppModel(Backend):
    """A GGUF model behind llama-cpp-python; implements :class:`contam.models.LanguageModel`.

    ``n_ctx`` is the context window used (at most the model's training length); texts that do
    not fit are truncated from the left with a :class:`ContextWindowWarning` counting them, or
    raise :class:`ModelError` when ``strict``.

    ``reuse_prefix``: a prompt (to score or to continue) that starts like the one before decodes
    only its new tokens (:mod:`contam.models.llamakv`), with results bit-identical to evaluating
    it afresh; ``False`` is the earlier path (every prompt from scratch), for comparison.
    """

    backend = "llamacpp"
    supports_prefill = True
    supports_scoring = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        spec: str | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 512,
        strict: bool = False,
        reuse_prefix: bool = True,
    ) -> None:
        p = Path(path).expanduser()
        if not p.is_file():
            raise ModelError(f"GGUF file {p} does not exist")
        with open(p, "rb") as f:
            if f.read(4) != b"GGUF":
                raise ModelError(f"{p} is not a GGUF file (no GGUF magic bytes); llamacpp: needs a .gguf model")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ModelError(
                "the llamacpp backend needs llama-cpp-python (run `make`, which builds it once into ~/.cache/contam/wheels)"
            ) from None
        threads = n_threads or _cpu_threads()

        def open_llm(ctx: int) -> Any:
            return Llama(
                str(p), n_ctx=ctx, n_batch=n_batch, n_threads=threads, n_threads_batch=threads, logits_all=True, verbose=False, seed=0
            )

        try:
            self._llm = open_llm(n_ctx)
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelError(f"llama.cpp cannot load {p}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        train_ctx = int(self._llm._model.n_ctx_train())
        if 0 < train_ctx < n_ctx:  # never use a window beyond the training length: reload smaller
            self._llm.close()
            n_ctx = train_ctx
            self._llm = open_llm(n_ctx)
        # Free the native model while the interpreter is still whole: left to llama_cpp's own
        # exit hooks it runs after module teardown and prints a TypeError traceback.
        weakref.finalize(self, _close_llm, self._llm)
        self.path = p
        self.spec = spec or f"llamacpp:{p}"
        # llama.cpp may pad its context up; the Python-side buffers hold only the requested size.
        self.n_ctx = min(int(n_ctx), int(self._llm.n_ctx()))
        self.strict = strict
        # Identity keys the response cache: weights content + the window (truncation changes results).
        self.identity = f"llamacpp:{file_identity(p)}:ctx{self.n_ctx}"
        self.name = str(self._llm.metadata.get("general.name", p.stem))
        self.n_vocab = int(self._llm.n_vocab())
        self._add_bos = bool(self._llm._model.add_bos_token())
        self._bos = int(self._llm.token_bos())
        self._eos = int(self._llm.token_eos())
        self._template = self._llm.metadata.get("tokenizer.chat_template")
        self._formatter: Any = None
        self._piece_cache: dict[int, bytes] = {}
        self._lock = threading.Lock()  # a Llama context is not thread-safe
        self.reuse_prefix = reuse_prefix
        self.kv = PrefixKV(self._llm)
        #: Number of texts actually sent through the model, by method (the cache tests count these).
        self.calls: Counter[str] = Counter()

    # ------------------------------------------------------------------ tokens
    def tokenize(self, text: str, *, add_bos: bool | None = None) -> list[int]:
        """Token ids of ``text``; special-token text such as ``<|im_start|>`` maps to its token
        (chat-formatted prompts need that), as transformers tokenizers do by default."""
        bos = self._add_bos if add_bos is None else add_bos
        if not text:
            return [self._bos] if bos and self._bos >= 0 else []
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=bos, special=True))

    def _piece(self, token: int) -> bytes:
        """Bytes of one token (memoized; llama-cpp-python's own helper pads to 32 bytes)."""
        piece = self._piece_cache.get(token)
        if piece is None:
            import ctypes

            from llama_cpp import llama_cpp as C

            size = 64
            while True:
                buf = ctypes.create_string_buffer(size)
                n = C.llama_token_to_piece(self._llm._model.vocab, token, buf, size, 0, True)
                if n >= 0:
                    break
                size = -n + 1  # negative return = required size
            piece = self._piece_cache[token] = buf.raw[:n]
        return piece

    def _pieces(self, ids: Sequence[int]) -> list[bytes]:
        return [self._piece(int(t)) for t in ids]

    def _start_tokens(self) -> list[int]:
        # An empty prompt still needs one token of context before the first scored token.
        return [self._bos if self._bos >= 0 else self._eos]

    # ------------------------------------------------------------------ score
    def score(self, pairs: Sequence[tuple[str, str]], *, vocab_stats: bool = False) -> list[TokenScores]:
        """Teacher-forced log-probs of each continuation given its prompt.

        The prompt is tokenized with the model's BOS convention, the continuation on its own
        (so token boundaries never straddle the join); an empty prompt becomes the BOS token.
        Pairs are evaluated prompt-sorted so a shared prompt prefix is decoded once (the KV
        cache keeps it); results come back in input order.
        """
        self.check_pairs(pairs)
        prepared = []
        for i, (prompt, cont) in enumerate(pairs):
            p_ids = self.tokenize(prompt) if prompt else []
            if not p_ids:
                p_ids = self._start_tokens()
            c_ids = self.tokenize(cont, add_bos=False)
            prepared.append((i, p_ids, c_ids, cont))
        out: list[TokenScores | None] = [None] * len(prepared)
        n_trunc = 0
        with self._lock:
            for i, p_ids, c_ids, cont in sorted(prepared, key=lambda r: (r[1], r[2])):
                res = self._score_one(p_ids, c_ids, cont, vocab_stats, i)
                n_trunc += res.truncated > 0
                out[i] = res
        self.warn_truncated(n_trunc, len(prepared))
        return [r for r in out if r is not None]

    def _score_one(self, p_ids: list[int], c_ids: list[int], cont: str, vocab_stats: bool, index: int) -> TokenScores:
        llm = self._llm
        ids = p_ids + c_ids
        drop = max(0, len(ids) - self.n_ctx)
        if drop and self.strict:
            raise ModelError(
                f"score(): pair {index} has {len(ids)} tokens, more than the context window ({self.n_ctx}); run without --strict to truncate from the left"
            )
        window = ids[drop:]
        # First scored position in the window: the first continuation token that has context.
        first = max(len(p_ids) - drop, 1)
        try:
            if self.reuse_prefix:  # the longest clean cached prefix (a prompt shared by pairs, a question) is kept
                self.kv.prefill(window)
            else:
                self.kv.eval_after_last_score(window)
        except Exception as e:  # llama.cpp decode failures surface as RuntimeError
            llm.reset()
            self.kv.forget()
            raise ModelError(f"llama.cpp failed to evaluate pair {index}: {e}") from None
        self.calls["score"] += 1
        rows = llm.scores[first - 1 : len(window) - 1]
        targets = np.asarray(window[first:], dtype=np.intp)
        lps, mu, sigma = token_logprobs(rows, targets, vocab_stats)
        mean = tuple(float(x) for x in mu) if mu is not None else None
        std = tuple(float(x) for x in sigma) if sigma is not None else None
        # Character offsets of the scored continuation tokens inside the continuation.
        pieces = self._pieces(c_ids)
        n_skip = len(c_ids) - len(targets)  # continuation tokens dropped by truncation
        offsets = char_offsets(pieces, cont)
        return TokenScores(
            tokens=tuple(b.decode("utf-8", errors="replace") for b in pieces[n_skip:]),
            logprobs=tuple(float(x) for x in lps),
            offsets=tuple(offsets[n_skip:]),
            token_ids=tuple(int(t) for t in targets),
            vocab_mean=mean,
            vocab_std=std,
            truncated=drop,
        )

    # ------------------------------------------------------------------ chat
    def format_chat(self, messages: Messages, prefill: str | None = None) -> str:
        """Render ``messages`` with the GGUF's own ``tokenizer.chat_template`` (Jinja2, as
        llama-cpp-python and transformers do) plus the generation prompt, then ``prefill``."""
        check_messages(messages)
        if not self._template:
            raise ModelError(f"{self.path.name} has no chat template in its GGUF metadata; pass plain-text prompts instead of messages")
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            tok = self._llm._model.token_get_text
            self._formatter = Jinja2ChatFormatter(
                template=self._template,
                eos_token=tok(self._eos) if self._eos >= 0 else "",
                bos_token=tok(self._bos) if self._bos >= 0 else "",
                add_generation_prompt=True,
            )
        try:
            text = self._formatter(messages=list(messages)).prompt
        except Exception as e:  # template errors (raise_exception, undefined variables)
            raise ModelError(f"the chat template of {self.path.name} rejected the messages: {e}") from None
        return text + (prefill or "")

    def _prompt_ids(self, prompt: Prompt, prefill: str | None) -> list[int]:
        if isinstance(prompt, str):
            text = prompt + (prefill or "")
            self.check_prompt_text(text)
        else:
            text = self.format_chat(prompt, prefill)
        bos_text = self._llm._model.token_get_text(self._bos) if self._bos >= 0 else None
        # Templates often write the BOS text themselves; do not add a second one.
        add_bos = self._add_bos and not (bos_text and text.startswith(bos_text))
        return self.tokenize(text, add_bos=add_bos)

    # ------------------------------------------------------------------ generate
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
        """``n`` completions per prompt; sample ``k`` uses seed ``seed + k``. Sampling is plain
        temperature sampling (no top-k/top-p/min-p), greedy at temperature 0."""
        self.check_generate(n=n, max_new_tokens=max_new_tokens, temperature=temperature)
        results: list[list[Completion]] = []
        n_trunc = 0
        for prompt in prompts:
            ids, budget, cut = self._fit(prompt, prefill, max_new_tokens)
            n_trunc += cut
            outs: list[Completion] = []
            with self._lock:
                for k in range(n):
                    if temperature <= 0 and k > 0:
                        outs.append(outs[0])  # greedy: every sample is the same
                        continue
                    outs.append(self._complete(ids, budget, temperature, seed + k, stop, logprobs))
            results.append(outs)
        self.warn_truncated(n_trunc, len(prompts), "prompts")
        return results

    def _fit(self, prompt: Prompt, prefill: str | None, max_new_tokens: int) -> tuple[list[int], int, bool]:
        """Prompt ids cut from the left so ``max_new_tokens`` fit the window, the token budget, whether it was cut."""
        ids = self._prompt_ids(prompt, prefill)
        budget = min(max_new_tokens, self.n_ctx - 1)
        room = self.n_ctx - budget
        if len(ids) <= room:
            return ids, budget, False
        if self.strict:
            raise ModelError(
                f"generate(): prompt has {len(ids)} tokens; with max_new_tokens={budget} only {room} fit the context window ({self.n_ctx})"
            )
        return ids[len(ids) - room :], budget, True

    def complete_box(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int = 32, seed: int = 0, stop: Sequence[str] | None = None
    ) -> list[Completion]:
        """Greedy continuations that stop decoding once the box the prompt opened is closed, each
        prompt evaluated from the longest clean cached prefix; the same texts as the base class's
        ``generate``-then-cut path (which ``reuse_prefix=False`` takes)."""
        if not self.reuse_prefix:
            return super().complete_box(prompts, max_new_tokens=max_new_tokens, seed=seed, stop=stop)
        self.check_generate(n=1, max_new_tokens=max_new_tokens, temperature=0.0)
        out: list[Completion] = []
        n_trunc = 0
        for prompt in prompts:
            ids, budget, cut = self._fit(prompt, None, max_new_tokens)
            n_trunc += cut
            with self._lock:
                try:
                    text, finish = self.kv.greedy(ids, budget, stop, until_closed=True)
                except Exception as e:
                    self._llm.reset()
                    self.kv.forget()
                    raise ModelError(f"llama.cpp generation failed: {e}") from None
            self.calls["generate"] += 1
            out.append(Completion(text=text, finish_reason=finish))
        self.warn_truncated(n_trunc, len(prompts), "prompts")
        return out

    def _complete(
        self, ids: list[int], max_tokens: int, temperature: float, seed: int, stop: Sequence[str] | None, logprobs: bool
    ) -> Completion:
        # llama.cpp's single-token decode (GEMV kernels) gives logits up to ~1.0 away from a
        # batched decode of the same tokens (measured; batches of >= 2 tokens agree exactly), and
        # llama-cpp-python's own prefix reuse re-decodes only the last prompt token. So the prompt
        # is evaluated here as a fresh decode would (from the longest clean cached prefix, see
        # PrefixKV; from scratch without reuse_prefix) and create_completion finds all of it in
        # the cache and samples from its last row: the answer is a function of the input.
        llm = self._llm
        try:
            if self.reuse_prefix:
                self.kv.prefill(ids)
            else:
                llm.reset()
                self.kv.forget()
            out = llm.create_completion(
                list(ids),
                max_tokens=max_tokens,
                temperature=max(temperature, 0.0),
                seed=seed,
                stop=list(stop or []),
                logprobs=1 if logprobs else None,
                top_k=0,
                top_p=1.0,
                min_p=0.0,
                typical_p=1.0,
                repeat_penalty=1.0,
            )
        except Exception as e:
            llm.reset()
            self.kv.forget()
            raise ModelError(f"llama.cpp generation failed: {e}") from None
        finally:
            if not self.reuse_prefix:  # the earlier path: score() must not reuse single-token KV
                llm.n_tokens = 0
        self.calls["generate"] += 1
        return completion_from_response(out)

    def describe(self) -> dict[str, Any]:
        """What ``contam models`` shows about this model."""
        return {
            "spec": self.spec,
            "backend": self.backend,
            "path": str(self.path),
            "name": self.name,
            "identity": self.identity,
            "n_ctx": self.n_ctx,
            "n_vocab": self.n_vocab,
        }
