"""OpenAI-compatible HTTP backend (OpenAI, vLLM's server, llama.cpp's server, Ollama, ...).

Plain-text prompts go to ``/completions``, chat messages to ``/chat/completions``. Requests run
``concurrency`` at a time and are retried with exponential backoff and jitter on 408/429/5xx,
timeouts and dropped connections (``Retry-After`` is honoured). The key comes from
``$OPENAI_API_KEY`` or the variable named by ``api_key_env`` and is only ever sent as a header.

Scoring a given continuation needs ``/completions`` with ``echo`` and ``logprobs`` (vLLM and
older OpenAI models have it). llama-cpp-python's server returns echoed prompt log-probs shifted
by one token (llama-cpp-python#1983), so scoring is refused there with a clear error; score with
``llamacpp:PATH`` locally instead. Vocabulary statistics (Min-K%++) never come over HTTP.

>>> lm = OpenAIModel("http://127.0.0.1:8080/v1", "smollm2")                  # doctest: +SKIP
>>> lm.generate([[{"role": "user", "content": "Hi"}]], max_new_tokens=5)     # doctest: +SKIP
[[Completion(text='Hello! How can I', ...)]]
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from contam.errors import ConfigError, ModelError
from contam.models.base import Backend, Completion, Messages, Prompt, TokenScores
from contam.models.chat import check_messages
from contam.textsafe import redact_url

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def _normalise_base_url(url: str) -> str:
    url = url.rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"openai base URL {redact_url(url)!r} must look like http://HOST:PORT/v1")
    return url + "/v1" if parts.path in ("", "/") else url


def _split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without ``user:password@`` and the credentials (sent as HTTP basic auth, never
    part of a spec, identity, cache key or message)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), (unquote(user), unquote(password))


def _server_message(body: Any) -> str:
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body))
        if isinstance(err, dict):
            err = err.get("message", err)
        return " ".join(str(err).split())[:300]
    return " ".join(str(body).split())[:300]


class OpenAIModel(Backend):
    """A model behind an OpenAI-compatible server; implements :class:`contam.models.LanguageModel`.

    ``scoring``: ``"auto"`` (use ``echo`` unless the server is known to get it wrong),
    ``"echo"`` (always try) or ``"off"``. ``chat_prefill="vllm"`` continues a prefilled
    assistant message through vLLM's ``continue_final_message``; other servers cannot prefill.
    """

    backend = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        spec: str | None = None,
        api_key_env: str | None = None,
        concurrency: int = 4,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        scoring: str = "auto",
        chat_prefill: str | None = None,
    ) -> None:
        import httpx

        if not model:
            raise ConfigError("openai backend: empty model name (spec openai:BASE_URL#MODEL)")
        if scoring not in ("auto", "echo", "off"):
            raise ConfigError(f"openai backend: scoring must be auto, echo or off, not {scoring!r}")
        # Credentials written into the URL go to the HTTP client only: the identity (the cache
        # key), the spec and every message use the URL without them.
        self.base_url, auth = _split_credentials(_normalise_base_url(base_url))
        self.model = model
        self.spec = redact_url(spec) if spec else f"openai:{self.base_url}#{model}"
        self.identity = f"openai:{self.base_url}#{model}"
        self.concurrency = max(1, int(concurrency))
        self.preferred_batch = 2 * self.concurrency
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._scoring = scoring
        self._chat_prefill = chat_prefill
        self.supports_prefill = chat_prefill == "vllm"
        env_name = api_key_env or "OPENAI_API_KEY"
        if api_key_env and api_key_env not in os.environ:
            raise ConfigError(f"environment variable {api_key_env} (named by --api-key-env) is not set")
        key = os.environ.get(env_name, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(
            headers=headers,
            auth=auth,
            timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
            limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency),
        )
        self._server: dict[str, Any] | None = None
        self._info_lock = threading.Lock()
        #: Requests that returned an answer, and retries, by kind (tests count these).
        self.calls: Counter[str] = Counter()

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIModel({self.base_url!r}, {self.model!r})"

    # ------------------------------------------------------------------ HTTP
    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        url = f"{self.base_url}{path}"
        last = ""
        attempt = 0  # max_retries >= 0, so the loop runs; this only tells the type checker
        for attempt in range(self.max_retries + 1):
            wait = None
            try:
                r = self._client.post(url, json=body)
            except httpx.TimeoutException:
                last = "timed out"
            except httpx.ConnectError:
                last = "connection refused (is the server running?)"
                if attempt >= min(2, self.max_retries):  # a server that is down stays down: give up sooner
                    break
            except httpx.TransportError as e:  # dropped connection, protocol error
                last = f"connection dropped ({type(e).__name__})"
            else:
                if r.status_code == 200:
                    try:
                        data = r.json()
                    except ValueError:
                        last = "answer is not JSON"
                    else:
                        self.calls[path] += 1
                        return data
                elif r.status_code in RETRY_STATUS:
                    last = f"HTTP {r.status_code}"
                    ra = r.headers.get("retry-after", "")
                    wait = float(ra) if ra.replace(".", "", 1).isdigit() else None
                else:
                    try:
                        msg = _server_message(r.json())
                    except ValueError:
                        msg = _server_message(r.text)
                    raise ModelError(f"{url}: HTTP {r.status_code}: {msg}")
            if attempt == self.max_retries:
                break
            self.calls["retry"] += 1
            delay = min(self.max_backoff, self.backoff * 2**attempt) * random.uniform(0.5, 1.5)
            time.sleep(min(self.max_backoff, wait) if wait is not None else delay)
        raise ModelError(f"{url}: {last} after {attempt + 1} attempt(s)")

    def server_info(self) -> dict[str, Any]:
        """``GET /models`` once (also tells llama-cpp-python's server apart: it owns models as 'me')."""
        import httpx

        with self._info_lock:
            if self._server is None:
                try:
                    r = self._client.get(f"{self.base_url}/models")
                    data = r.json() if r.status_code == 200 else {}
                except (httpx.HTTPError, ValueError) as e:
                    raise ModelError(f"{self.base_url}/models: cannot reach the server ({type(e).__name__})") from None
                self._server = data if isinstance(data, dict) else {}
            return self._server

    @property
    def supports_scoring(self) -> bool:
        if self._scoring != "auto":
            return self._scoring == "echo"
        owners = {m.get("owned_by") for m in self.server_info().get("data", []) if isinstance(m, dict)}
        return "me" not in owners  # llama-cpp-python's server: echo log-probs shifted by one

    def scoring_refusal(self) -> str:
        """Why :meth:`score` is refused here, in one line (what the audit prints for a probe it skips)."""
        if self._scoring == "off":
            return f"{self.base_url} cannot score given text: scoring='off' was set for this backend"
        return (
            f"{self.base_url} cannot score given text (supports_scoring=False): llama-cpp-python's server returns "
            "echoed prompt log-probs shifted by one token; score locally with llamacpp:PATH or hf:PATH"
        )

    # ------------------------------------------------------------------ score
    def score(self, pairs: Sequence[tuple[str, str]], *, vocab_stats: bool = False) -> list[TokenScores]:
        """Log-probs of each continuation via ``echo``; ``vocab_mean``/``vocab_std`` stay ``None``."""
        self.check_pairs(pairs)
        if not self.supports_scoring:
            raise ModelError(self.scoring_refusal())
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda pc: self._score_one(*pc), pairs))

    def _score_one(self, prompt: str, cont: str) -> TokenScores:
        text = prompt + cont
        data = self._post(
            "/completions", {"model": self.model, "prompt": text, "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0.0}
        )
        lp = (data.get("choices") or [{}])[0].get("logprobs") or {}
        toks, vals, offs = lp.get("tokens"), lp.get("token_logprobs"), lp.get("text_offset")
        if not toks or vals is None or offs is None:
            raise ModelError(f"{self.base_url} returned no prompt log-probs for echo=True; this server cannot score text")
        start, end = len(prompt), len(text)
        out_t, out_v, out_o = [], [], []
        for tok, val, off in zip(toks, vals, offs, strict=False):
            # Keep tokens overlapping the continuation; drop generated ones and the context-free first token.
            if off >= end or off + len(tok) <= start or val is None:
                continue
            out_t.append(tok)
            out_v.append(float(val))
            out_o.append(max(0, off - start))
        if not out_v:
            raise ModelError(f"{self.base_url} returned no log-probs for the continuation {cont[:40]!r}")
        return TokenScores(tokens=tuple(out_t), logprobs=tuple(out_v), offsets=tuple(out_o))

    # ------------------------------------------------------------------ chat / generate
    def format_chat(self, messages: Messages, prefill: str | None = None) -> str:
        """The server applies its own template; this renders a readable ChatML-like view only."""
        check_messages(messages)
        text = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages) + "<|assistant|>\n"
        return text + (prefill or "")

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
        """``n`` completions per prompt; sample ``k`` is its own request with seed ``seed + k``
        (servers differ in how they honour ``n``); greedy asks once and repeats the answer."""
        self.check_generate(n=n, max_new_tokens=max_new_tokens, temperature=temperature)
        if prefill and not self.supports_prefill:
            raise ModelError(
                f"{self.base_url} cannot prefill an assistant message over the OpenAI API; use a local backend (smollm2, llamacpp:, hf:) or chat_prefill='vllm' for a vLLM server"
            )
        for p in prompts:
            if isinstance(p, str):
                self.check_prompt_text(p)
            else:
                check_messages(p)
        draws = 1 if temperature <= 0 else n
        jobs = [(i, k) for i in range(len(prompts)) for k in range(draws)]

        def run(job: tuple[int, int]) -> Completion:
            i, k = job
            return self._complete(prompts[i], max_new_tokens, temperature, seed + k, stop, prefill, logprobs)

        with ThreadPoolExecutor(self.concurrency) as pool:
            done = list(pool.map(run, jobs))
        out: list[list[Completion]] = [[] for _ in prompts]
        for (i, _), c in zip(jobs, done, strict=True):
            out[i].append(c)
        return [cs * n if draws == 1 else cs for cs in out]

    def _complete(
        self,
        prompt: Prompt,
        max_tokens: int,
        temperature: float,
        seed: int,
        stop: Sequence[str] | None,
        prefill: str | None,
        logprobs: bool,
    ) -> Completion:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": max(temperature, 0.0),
            "seed": seed,
            "top_p": 1.0,
        }
        if stop:
            body["stop"] = list(stop)
        if isinstance(prompt, str):
            body["prompt"] = prompt + (prefill or "")
            if logprobs:
                body["logprobs"] = 1
            choice = (self._post("/completions", body).get("choices") or [None])[0]
            if not isinstance(choice, dict):
                raise ModelError(f"{self.base_url}/completions returned no choices")
            lp = choice.get("logprobs")
            toks = lp.get("tokens") if isinstance(lp, dict) else None
            vals = lp.get("token_logprobs") if isinstance(lp, dict) else None
            text = choice.get("text") or ""
        else:
            msgs = list(prompt)
            if prefill:  # vLLM: continue the final assistant message instead of starting a new one
                msgs = [*msgs, {"role": "assistant", "content": prefill}]
                body.update(add_generation_prompt=False, continue_final_message=True)
            body["messages"] = msgs
            if logprobs:
                body.update(logprobs=True, top_logprobs=1)
            choice = (self._post("/chat/completions", body).get("choices") or [None])[0]
            if not isinstance(choice, dict):
                raise ModelError(f"{self.base_url}/chat/completions returned no choices")
            content = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
            toks = [c.get("token", "") for c in content] if content else None
            vals = [c.get("logprob") for c in content] if content else None
            text = (choice.get("message") or {}).get("content") or ""
        if logprobs and (not toks or vals is None or any(v is None for v in vals)):
            raise ModelError(f"{self.base_url} returned no log-probs for the generated tokens (the server does not support logprobs)")
        return Completion(
            text=text,
            tokens=tuple(toks) if toks and logprobs else (),
            logprobs=tuple(float(v) for v in vals) if logprobs and vals else None,
            finish_reason=str(choice.get("finish_reason") or ""),
        )

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "backend": self.backend, "base_url": self.base_url, "model": self.model, "identity": self.identity}
