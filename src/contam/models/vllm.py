"""vLLM backend: the offline ``LLM`` engine on a CUDA GPU (extra ``contam[vllm]``).

Scoring asks for ``prompt_logprobs`` over the concatenated prompt + continuation token ids
(tokenized exactly like the transformers backend: prompt without special tokens, BOS when the
prompt is empty, continuation on its own); generation batches every (prompt, sample) request in
one engine call, with seed ``seed + k`` for sample ``k``. vLLM does not hand out full-vocabulary
distributions cheaply, so ``vocab_mean``/``vocab_std`` (Min-K%++) stay ``None`` here; use the
``hf`` or ``llamacpp`` backend for Min-K%++.

>>> lm = VLLMModel("/models/Llama-3.1-8B-Instruct")                 # doctest: +SKIP
>>> lm.score([("2+2=", "4")])[0].logprobs                           # doctest: +SKIP
(-0.01,)
"""

from __future__ import annotations

import importlib
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contam.errors import ModelError
from contam.models.base import Backend, Completion, Messages, Prompt, TokenScores
from contam.models.chat import check_messages
from contam.models.embedded import file_identity


def _require_vllm() -> Any:
    try:
        # Imported by name: the GPU-only `vllm` extra is absent on CPU machines, and a static import
        # would make the type check depend on which machine runs it.
        vllm = importlib.import_module("vllm")
    except ImportError:
        raise ModelError("the vllm backend needs vLLM and a CUDA GPU: pip install 'contam[vllm]'") from None
    try:
        import torch

        if not torch.cuda.is_available():
            raise ModelError("the vllm backend needs a CUDA GPU; none is visible (use smollm2, llamacpp: or hf: on CPU)")
    except ImportError:
        raise ModelError("the vllm backend needs torch with CUDA") from None
    return vllm


class VLLMModel(Backend):
    """A model in vLLM's offline engine; implements :class:`contam.models.LanguageModel`."""

    backend = "vllm"
    supports_prefill = True
    supports_scoring = True
    preferred_batch = 256  # the engine batches internally; larger chunks keep the GPU busy

    def __init__(
        self,
        name: str,
        *,
        spec: str | None = None,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.85,
        max_model_len: int | None = None,
        strict: bool = False,
        **engine_kwargs: Any,
    ) -> None:
        vllm = _require_vllm()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            self._llm = vllm.LLM(
                model=name,
                dtype=dtype,
                gpu_memory_utilization=gpu_memory_utilization,
                max_model_len=max_model_len,
                enable_prefix_caching=True,
                **engine_kwargs,
            )
        except Exception as e:  # engine start-up raises many types (OSError, ValueError, RuntimeError)
            raise ModelError(f"vLLM cannot load {name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        self._vllm = vllm
        self.name = name
        self.spec = spec or f"vllm:{name}"
        p = Path(name).expanduser()
        self.identity = f"vllm:{file_identity(p)}:{dtype}" if p.exists() else f"vllm:{name}:{dtype}"
        self.tokenizer = self._llm.get_tokenizer()
        self.n_ctx = int(self._llm.llm_engine.model_config.max_model_len)
        self.strict = strict
        tok = self.tokenizer
        self._start_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        self.calls: Counter[str] = Counter()

    def format_chat(self, messages: Messages, prefill: str | None = None) -> str:
        """The tokenizer's own chat template with the generation prompt, then ``prefill``."""
        check_messages(messages)
        try:
            text = self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
        except Exception as e:
            raise ModelError(f"the chat template of {self.name} rejected the messages: {e}") from None
        return str(text) + (prefill or "")

    def score(self, pairs: Sequence[tuple[str, str]], *, vocab_stats: bool = False) -> list[TokenScores]:
        tok = self.tokenizer
        self.check_pairs(pairs)
        rows = []
        for i, (prompt, cont) in enumerate(pairs):
            enc = tok(cont, add_special_tokens=False, return_offsets_mapping=True)
            c_ids, offs = list(enc["input_ids"]), [int(a) for a, _ in enc["offset_mapping"]]
            p_ids = (list(tok(prompt, add_special_tokens=False)["input_ids"]) if prompt else []) or [self._start_id]
            over = len(p_ids) + len(c_ids) - self.n_ctx
            dropped = 0
            if over > 0:
                if self.strict:
                    raise ModelError(f"score(): pair {i} has {len(p_ids) + len(c_ids)} tokens, more than the context window ({self.n_ctx})")
                cut_p = min(over, len(p_ids) - 1)
                p_ids, over = p_ids[cut_p:], over - cut_p
                c_ids, offs = c_ids[over:], offs[over:]
                dropped = cut_p + over
            rows.append((p_ids, c_ids, offs, dropped))
        self.warn_truncated(sum(1 for r in rows if r[3]), len(rows))
        params = self._vllm.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0)
        outs = self._llm.generate([{"prompt_token_ids": p + c} for p, c, _, _ in rows], params, use_tqdm=False)
        self.calls["score"] += len(rows)
        results = []
        for (p_ids, c_ids, offs, dropped), out in zip(rows, outs, strict=True):
            plp = out.prompt_logprobs
            lps = []
            for j, t in enumerate(c_ids):
                entry = plp[len(p_ids) + j] if plp is not None else None
                if not entry or t not in entry:
                    raise ModelError(f"vLLM returned no prompt log-prob for token {j} of a continuation")
                lps.append(float(entry[t].logprob))
            results.append(
                TokenScores(
                    tokens=tuple(tok.convert_ids_to_tokens(c_ids)),
                    logprobs=tuple(lps),
                    offsets=tuple(offs),
                    token_ids=tuple(int(t) for t in c_ids),
                    truncated=dropped,
                )
            )
        return results

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
        self.check_generate(n=n, max_new_tokens=max_new_tokens, temperature=temperature)
        texts = [p + (prefill or "") if isinstance(p, str) else self.format_chat(p, prefill) for p in prompts]
        for t in texts:
            self.check_prompt_text(t)
        draws = 1 if temperature <= 0 else n
        reqs, params = [], []
        n_trunc = 0
        for t in texts:
            ids = list(self.tokenizer(t, add_special_tokens=False)["input_ids"])
            room = self.n_ctx - min(max_new_tokens, self.n_ctx - 1)
            if len(ids) > room:
                if self.strict:
                    raise ModelError(f"generate(): prompt has {len(ids)} tokens; only {room} fit with max_new_tokens={max_new_tokens}")
                ids = ids[len(ids) - room :]
                n_trunc += 1
            for k in range(draws):
                reqs.append({"prompt_token_ids": ids})
                params.append(
                    self._vllm.SamplingParams(
                        max_tokens=min(max_new_tokens, self.n_ctx - 1),
                        temperature=max(temperature, 0.0),
                        top_p=1.0,
                        top_k=-1,
                        seed=seed + k,
                        stop=list(stop) if stop else None,
                        logprobs=0 if logprobs else None,
                    )
                )
        self.warn_truncated(n_trunc, len(texts), "prompts")
        outs = self._llm.generate(reqs, params, use_tqdm=False)
        self.calls["generate"] += len(reqs)
        comps = []
        for out in outs:
            o = out.outputs[0]
            lps = None
            toks: tuple[str, ...] = ()
            if logprobs and o.logprobs is not None:
                lps = tuple(float(d[t].logprob) for t, d in zip(o.token_ids, o.logprobs, strict=False))
                toks = tuple(self.tokenizer.convert_ids_to_tokens(list(o.token_ids)))[: len(lps)]
            comps.append(Completion(text=o.text, tokens=toks, logprobs=lps, finish_reason=str(o.finish_reason or "")))
        grouped = [comps[i * draws : (i + 1) * draws] for i in range(len(texts))]
        return [g * n if draws == 1 else g for g in grouped]

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "backend": self.backend, "name": self.name, "identity": self.identity, "n_ctx": self.n_ctx}
