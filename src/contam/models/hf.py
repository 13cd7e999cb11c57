"""The transformers backend: local model folders and GGUF files, CPU or CUDA.

>>> lm = HFModel("smollm2")                                   # doctest: +SKIP
>>> s = lm.score([("Question: 2+2=", " 4")], vocab_stats=True)[0]  # doctest: +SKIP
>>> s.tokens, round(s.logprobs[0], 2), s.vocab_mean is not None    # doctest: +SKIP
((' 4',), -1.37, True)
>>> lm.generate(["The capital of France is"], max_new_tokens=3)[0][0].text  # doctest: +SKIP
' Paris.'

Conventions (the llama.cpp backend follows the same ones, so scores agree across backends):

* ``score`` tokenizes the prompt and the continuation *separately* (no special tokens added)
  and concatenates the ids, so a continuation's tokens never depend on its prompt. An empty
  prompt is replaced by the BOS token (the EOS token when the model has no BOS) so the first
  continuation token has a context.
* Batches are right-padded: with a causal mask the logits of real tokens are exactly those of
  an unpadded forward pass, so padding changes nothing; only the continuation positions are
  projected onto the vocabulary (the ``(batch, length, vocab)`` logits tensor is never built).
* Texts longer than the context window lose tokens from the left (prompt first); the count is
  in ``TokenScores.truncated`` and a warning is logged, or :class:`ModelError` under ``strict``.
* A GGUF file is dequantized by transformers (about 25–35 s for the embedded model); the
  dequantized model is saved once to ``$CONTAM_HOME/hf/<sha>`` (default ``~/.cache/contam``)
  and later loads read that folder (under a second).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contam.errors import ModelError
from contam.models.base import Backend, Completion, Messages, Prompt, TokenScores
from contam.models.chat import check_messages
from contam.models.embedded import SMOLLM2, file_identity, smollm2_path


def contam_home() -> Path:
    """User cache root: ``$CONTAM_HOME``, else ``$XDG_CACHE_HOME/contam``, else ``~/.cache/contam``."""
    if os.environ.get("CONTAM_HOME"):
        return Path(os.environ["CONTAM_HOME"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "contam"


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class HFModel(Backend):
    """A causal LM through ``transformers``, implementing :class:`contam.models.LanguageModel`.

    ``path`` is a model folder, a ``.gguf`` file, a folder plus ``gguf_file=NAME``, or
    ``"smollm2"`` for the embedded model. ``device`` defaults to CUDA when available, else CPU;
    ``dtype`` defaults to bfloat16 on CUDA and float32 on CPU (log-softmax is always float32).
    ``n_ctx`` caps the context window (default: the model's training length); ``batch_tokens``
    and ``max_batch`` bound a scoring batch; ``strict`` turns truncation into :class:`ModelError`.

    >>> lm = HFModel("smollm2")                          # doctest: +SKIP
    >>> lm.identity                                      # doctest: +SKIP
    'hf:SmolLM2-135M-Instruct.Q4_1.gguf:3f1c…'
    """

    supports_prefill = True
    supports_scoring = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        spec: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        gguf_file: str | None = None,
        batch_tokens: int = 4096,
        max_batch: int = 16,
        n_ctx: int | None = None,
        strict: bool = False,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch

        src = smollm2_path() if str(path).lower() == SMOLLM2 else Path(path).expanduser()
        if gguf_file is None and src.suffix == ".gguf":
            src, gguf_file = src.parent, src.name
        if not src.exists():
            raise ModelError(f"model path {src} does not exist (no hub downloads at run time: give a local folder or .gguf file)")
        if gguf_file is not None and not (src / gguf_file).is_file():
            raise ModelError(f"GGUF file {src / gguf_file} does not exist")
        if gguf_file is not None:
            with open(src / gguf_file, "rb") as fh:
                if fh.read(4) != b"GGUF":
                    raise ModelError(f"{src / gguf_file} is not a GGUF file (no GGUF magic bytes)")
        if gguf_file is None and not (src / "config.json").is_file():
            raise ModelError(f"{src} is not a transformers model folder (no config.json) and no gguf_file was given")

        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if dtype in (None, "auto"):
            self.dtype = torch.bfloat16 if self.device.type == "cuda" else torch.float32
        else:
            self.dtype = getattr(torch, dtype, None)
            if not isinstance(self.dtype, torch.dtype):
                raise ModelError(f"unknown dtype {dtype!r} (use float32, bfloat16 or float16)")
        self.batch_tokens = batch_tokens
        self.max_batch = max_batch
        self.strict = strict

        # Identity keys the response cache: weights content + compute dtype (bf16 scores differ).
        dtype_name = str(self.dtype).removeprefix("torch.")
        if gguf_file is not None:
            ident = file_identity(src / gguf_file)
            self.path = self._dequantized_folder(src, gguf_file, ident.removeprefix("sha256:"))
            self.source = src / gguf_file
        else:
            ident = file_identity(src)
            self.path = self.source = src
        self.identity = f"hf:{ident}:{dtype_name}"
        self.spec = spec or f"hf:{self.source}"
        self.name = self.source.name
        #: Number of texts actually sent through the model, by method (the cache tests count these).
        self.calls: Counter[str] = Counter()
        self.tokenizer, self.model = self._load(self.path)
        self.model.to(self.device)
        self.model.eval()
        cfg = self.model.config
        train_ctx = int(getattr(cfg, "max_position_embeddings", 0) or 2048)
        self.n_ctx = min(n_ctx, train_ctx) if n_ctx else train_ctx
        tok = self.tokenizer
        self._start_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        self._pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        eos = {tok.eos_token_id, getattr(self.model.generation_config, "eos_token_id", None)}
        flat: set[int] = set()
        for e in eos:
            if isinstance(e, int):
                flat.add(e)
            elif isinstance(e, list):
                flat.update(int(x) for x in e)
        self._eos_ids = sorted(flat)

    # ------------------------------------------------------------------ loading
    def _load(self, folder: Path) -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        try:
            tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True, dtype=self.dtype)
        except Exception as e:  # transformers raises OSError/ValueError/KeyError for bad folders
            raise ModelError(f"cannot load transformers model from {folder}: {_first_line(e)}") from None
        return tok, model

    @staticmethod
    def _dequantized_folder(folder: Path, gguf_file: str, digest: str) -> Path:
        """Dequantize ``folder/gguf_file`` once into the user cache and return that folder."""
        target = contam_home() / "hf" / digest
        if (target / "config.json").is_file() and any(target.glob("*.safetensors")):
            return target
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        warnings.warn(f"dequantizing {gguf_file} once into {target} (about 30 s; later loads read that folder)", stacklevel=3)
        try:
            tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf_file, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=gguf_file, local_files_only=True)
        except Exception as e:
            raise ModelError(f"cannot load GGUF {folder / gguf_file}: {_first_line(e)}") from None
        # save_pretrained refuses (or re-quantizes on reload) while the GGUF quantizer is attached;
        # the weights are already plain float tensors, so dropping it is lossless.
        # (torch's stubs type Module.__setattr__ for tensors and submodules only; a plain
        # attribute is set as on any object.)
        model.hf_quantizer = None  # pyright: ignore[reportArgumentType]
        vars(model.config).pop("quantization_config", None)  # config attributes live in its __dict__
        with contextlib.suppress(AttributeError):
            model.is_quantized = False  # pyright: ignore[reportArgumentType]
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            model.save_pretrained(str(tmp))
            tok.save_pretrained(str(tmp))
            (tmp / "SOURCE.txt").write_text(f"dequantized from {folder / gguf_file} (sha256 {digest})\n")
            try:
                os.rename(tmp, target)
            except OSError:  # another process finished first; its copy is identical
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target

    # ------------------------------------------------------------------ chat
    def format_chat(self, messages: Messages, prefill: str | None = None) -> str:
        """The model's own chat template with the generation prompt, then ``prefill``."""
        check_messages(messages)
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
        else:  # base models without a template: a plain, documented fallback
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
        return str(text) + (prefill or "")

    # ------------------------------------------------------------------ scoring
    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []

    def score(self, pairs: Sequence[tuple[str, str]], *, vocab_stats: bool = False) -> list[TokenScores]:
        """Teacher-forced log-probs of each continuation given its prompt (see module notes)."""
        import torch

        self.check_pairs(pairs)
        tok = self.tokenizer
        rows: list[dict[str, Any]] = []
        for i, (prompt, cont) in enumerate(pairs):
            enc = tok(cont, add_special_tokens=False, return_offsets_mapping=True)
            c_ids = list(enc["input_ids"])
            offsets = [int(a) for a, _ in enc["offset_mapping"]]
            p_ids = self._ids(prompt) or [self._start_id]
            dropped = 0
            limit = self.n_ctx
            if len(p_ids) + len(c_ids) > limit:
                if self.strict:
                    raise ModelError(
                        f"score(): pair {i} has {len(p_ids) + len(c_ids)} tokens, more than the context window ({limit}); run without --strict to truncate from the left"
                    )
                over = len(p_ids) + len(c_ids) - limit
                cut_p = min(over, len(p_ids) - 1)  # keep one prompt token so the first continuation token has a context
                p_ids, over = p_ids[cut_p:], over - cut_p
                c_ids, offsets = c_ids[over:], offsets[over:]
                dropped = cut_p + over
            rows.append({"p": p_ids, "c": c_ids, "off": offsets, "dropped": dropped})
        self.warn_truncated(sum(1 for r in rows if r["dropped"]), len(rows))

        self.calls["score"] += len(rows)
        results: list[TokenScores | None] = [None] * len(rows)
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]["p"]) + len(rows[i]["c"]))
        batch: list[int] = []
        for i in [*order, -1]:
            if i >= 0:
                n = len(rows[i]["p"]) + len(rows[i]["c"])
                if not batch or ((len(batch) + 1) * n <= self.batch_tokens and len(batch) < self.max_batch):
                    batch.append(i)
                    continue
            if batch:
                with torch.inference_mode():
                    for j, res in zip(batch, self._score_batch([rows[j] for j in batch], vocab_stats), strict=True):
                        results[j] = res
            batch = [i]
        done = [r for r in results if r is not None]
        assert len(done) == len(results)  # every row went through one batch
        return done

    def _score_batch(self, rows: list[dict[str, Any]], vocab_stats: bool) -> list[TokenScores]:
        import torch

        seqs = [r["p"] + r["c"] for r in rows]
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for b, s in enumerate(seqs):
            ids[b, : len(s)] = torch.tensor(s)
            mask[b, : len(s)] = 1
        hidden = self._hidden(ids.to(self.device), mask.to(self.device))
        # The token at position t is predicted from the hidden state at t-1.
        pos_b, pos_t, targets = [], [], []
        for b, r in enumerate(rows):
            start = len(r["p"])
            for t in range(start, start + len(r["c"])):
                pos_b.append(b)
                pos_t.append(t - 1)
                targets.append(seqs[b][t])
        lp_all = np.zeros(len(targets), dtype=np.float64)
        mu_all = np.zeros(len(targets), dtype=np.float64)
        sd_all = np.zeros(len(targets), dtype=np.float64)
        if targets:
            h = hidden[torch.tensor(pos_b), torch.tensor(pos_t)]
            tgt = torch.tensor(targets, device=h.device)
            for s in range(0, len(targets), 512):
                logp = self._logsoftmax(h[s : s + 512])
                lp_all[s : s + 512] = logp.gather(1, tgt[s : s + 512, None])[:, 0].double().cpu().numpy()
                if vocab_stats:
                    p = logp.exp()
                    mu = (p * logp).sum(-1)
                    var = (p * (logp - mu[:, None]) ** 2).sum(-1).clamp_min(0)
                    mu_all[s : s + 512] = mu.double().cpu().numpy()
                    sd_all[s : s + 512] = var.sqrt().double().cpu().numpy()
        out: list[TokenScores] = []
        k = 0
        for r in rows:
            n = len(r["c"])
            pieces = tuple(self.tokenizer.batch_decode([[t] for t in r["c"]])) if n else ()
            out.append(
                TokenScores(
                    tokens=pieces,
                    logprobs=tuple(float(x) for x in lp_all[k : k + n]),
                    offsets=tuple(r["off"]),
                    token_ids=tuple(int(t) for t in r["c"]),
                    vocab_mean=tuple(float(x) for x in mu_all[k : k + n]) if vocab_stats else None,
                    vocab_std=tuple(float(x) for x in sd_all[k : k + n]) if vocab_stats else None,
                    truncated=int(r["dropped"]),
                )
            )
            k += n
        return out

    def _hidden(self, ids: Any, mask: Any) -> Any:
        """Last hidden states (after the final norm) without projecting every position to the vocabulary."""
        decoder = self.model.get_decoder() if hasattr(self.model, "get_decoder") else None
        if decoder is not None:
            return decoder(input_ids=ids, attention_mask=mask).last_hidden_state
        return self.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[-1]

    def _logsoftmax(self, h: Any) -> Any:
        import torch

        logits = self.model.get_output_embeddings()(h).float()
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        if cap:  # Gemma-style soft-capping happens in the CausalLM head, which we bypass
            logits = torch.tanh(logits / cap) * cap
        return torch.log_softmax(logits, dim=-1)

    # ------------------------------------------------------------------ generation
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
        """``n`` completions per prompt. Greedy prompts are batched (left-padded); sampled prompts
        run one at a time after ``torch.manual_seed(seed)`` so each is reproducible on its own.
        The returned text excludes the prompt and the prefill."""
        import torch

        self.check_generate(n=n, max_new_tokens=max_new_tokens, temperature=temperature)
        texts = [self.format_chat(p, prefill) if not isinstance(p, str) else p + (prefill or "") for p in prompts]
        for t in texts:
            self.check_prompt_text(t)
        encoded = [self._ids(t) for t in texts]
        limit = self.n_ctx - max_new_tokens
        if limit < 1:
            raise ModelError(f"max_new_tokens={max_new_tokens} leaves no room in the context window of {self.n_ctx}")
        if any(len(e) > limit for e in encoded):
            if self.strict:
                raise ModelError(f"a prompt exceeds the context window of {self.n_ctx} minus max_new_tokens (strict mode)")
            self.warn_truncated(sum(len(e) > limit for e in encoded), len(encoded), "prompts")
            encoded = [e[-limit:] for e in encoded]
        out: list[list[Completion]] = [[] for _ in texts]
        if temperature > 0:
            groups = [[i] for i in range(len(texts))]
        else:
            order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
            size = max(1, min(self.max_batch, self.batch_tokens // max(1, max_new_tokens + max(len(e) for e in encoded))))
            groups = [order[i : i + size] for i in range(0, len(order), size)]
        self.calls["generate"] += len(texts)
        with torch.inference_mode():
            for g in groups:
                if temperature > 0:
                    torch.manual_seed(seed)
                for i, comps in zip(
                    g, self._generate_group([encoded[i] for i in g], max_new_tokens, temperature, n, stop, logprobs), strict=True
                ):
                    out[i] = comps
        return out

    def _generate_group(
        self, encoded: list[list[int]], max_new_tokens: int, temperature: float, n: int, stop: Sequence[str] | None, logprobs: bool
    ) -> list[list[Completion]]:
        import torch
        from transformers import GenerationConfig

        width = max(len(e) for e in encoded)
        ids = torch.full((len(encoded), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for b, e in enumerate(encoded):  # left padding: every row's last token sits at the same column
            ids[b, width - len(e) :] = torch.tensor(e)
            mask[b, width - len(e) :] = 1
        cfg = GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            top_k=0 if temperature > 0 else None,
            top_p=1.0 if temperature > 0 else None,
            num_return_sequences=n,
            eos_token_id=self._eos_ids,
            pad_token_id=self._pad_id,
            return_dict_in_generate=True,
            output_logits=logprobs,
        )
        res = self.model.generate(input_ids=ids.to(self.device), attention_mask=mask.to(self.device), generation_config=cfg)
        gen = res.sequences[:, width:].cpu()
        step_lp = None
        if logprobs:
            # Raw (untempered) model log-probs of the chosen tokens, like an API's `logprobs`.
            logits = torch.stack(res.logits, dim=1).float()  # (rows, steps, vocab)
            step_lp = torch.log_softmax(logits, -1).gather(2, gen[:, : logits.shape[1], None].to(logits.device))[..., 0].cpu()
        groups: list[list[Completion]] = [[] for _ in encoded]
        for row in range(gen.shape[0]):
            toks = gen[row].tolist()
            finish = "length"
            cut = len(toks)
            for k, t in enumerate(toks):
                if t in self._eos_ids:
                    cut, finish = k, "stop"
                    break
            toks = toks[:cut]
            lps = step_lp[row, :cut].tolist() if step_lp is not None else None
            comp = self._finish(toks, lps, finish, stop)
            groups[row // n].append(comp)
        return groups

    def _finish(self, toks: list[int], lps: list[float] | None, finish: str, stop: Sequence[str] | None) -> Completion:
        """Decode, then cut at the earliest stop string (tokens kept up to the one that contains it)."""
        text = self.tokenizer.decode(toks, skip_special_tokens=True)
        pieces = list(self.tokenizer.batch_decode([[t] for t in toks])) if toks else []
        if stop:
            hits = [text.find(s) for s in stop if s and s in text]
            if hits:
                pos = min(hits)
                text, finish = text[:pos], "stop"
                keep, run = 0, 0
                for p in pieces:
                    if run >= pos:
                        break
                    run += len(p)
                    keep += 1
                pieces = pieces[:keep]
                if lps is not None:
                    lps = lps[:keep]
        return Completion(text=text, tokens=tuple(pieces), logprobs=tuple(lps) if lps is not None else None, finish_reason=finish)

    def describe(self) -> dict[str, Any]:
        """What ``contam models`` shows about this model."""
        return {
            "spec": self.spec,
            "backend": "hf",
            "path": str(self.source),
            "loaded_from": str(self.path),
            "name": self.name,
            "identity": self.identity,
            "n_ctx": self.n_ctx,
            "device": self.device.type,
            "dtype": str(self.dtype).removeprefix("torch."),
        }

    def __repr__(self) -> str:
        return f"HFModel({self.spec!r}, device={self.device.type}, dtype={str(self.dtype).removeprefix('torch.')})"
