"""``contam models`` (what is available and where it lives) and ``contam ask`` (one prompt through
any backend, to check it in one line)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contam.cli.common import JsonFlag, console, emit_json

if TYPE_CHECKING:  # loaded where the command runs, not at CLI start
    from contam.models.base import Prompt


def models_cmd(json_out: JsonFlag = False) -> None:
    """List the embedded models, embedders and backends, and where each loads from.

    Example: [bold]contam models[/] or [bold]contam models --json[/]
    """
    from contam.models.registry import available

    info = available()
    if json_out:
        emit_json(info)
        return
    from rich.table import Table

    t = Table(title="Embedded models (no network needed)")
    for col in ("spec", "kind", "backend", "available", "location"):
        t.add_column(col, overflow="fold")
    for m in info["models"]:
        t.add_row(m["spec"], m["kind"], m["backend"], "yes" if m["available"] else "no", m["location"] or m.get("note", ""))
    console.print(t)
    b = Table(title="Backends (model specs)")
    for col in ("backend", "spec", "library", "version"):
        b.add_column(col)
    for row in info["backends"]:
        b.add_row(row["backend"], row["spec"], row["library"], row["version"] or "[dim]not installed[/]")
    console.print(b)
    console.print(
        f"response cache: {info['cache']['path']} ({'exists' if info['cache']['exists'] else 'not created yet'}); "
        "override with CONTAM_CACHE, bypass with --no-cache"
    )


def ask_cmd(
    prompt: Annotated[str, typer.Argument(help="The user message (or raw text with --raw).")],
    model: Annotated[
        str, typer.Option("--model", "-m", help="Model spec: smollm2, llamacpp:PATH, hf:PATH, openai:BASE_URL#MODEL, vllm:NAME.")
    ] = "smollm2",
    prefill: Annotated[str | None, typer.Option(help="Start the assistant's reply with this text; the model continues it.")] = None,
    logprobs: Annotated[bool, typer.Option("--logprobs", help="Show the log-probability of each generated token.")] = False,
    raw: Annotated[bool, typer.Option("--raw", help="Send PROMPT as plain text to continue, without the chat template.")] = False,
    system: Annotated[str | None, typer.Option(help="Optional system message.")] = None,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Most tokens to generate.")] = 128,
    temperature: Annotated[float, typer.Option(min=0.0, help="0 = greedy.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    stop: Annotated[list[str] | None, typer.Option(help="Stop string (repeatable).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Call the model even if the answer is cached, and do not store it.")] = False,
    cache_path: Annotated[
        Path | None, typer.Option("--cache", help="Response cache file (default $CONTAM_CACHE or ~/.cache/contam/responses.sqlite).")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="For openai: name of the env var holding the API key (default OPENAI_API_KEY).")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Error instead of truncating a prompt longer than the context window.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Send one prompt through any backend and print the answer.

    Example: [bold]contam ask --model smollm2 "What is 12 + 30?" --prefill "The answer is" --logprobs[/]
    """
    from contam.errors import ConfigError
    from contam.models import load

    if not prompt.strip():
        raise ConfigError("ask: the prompt is empty")
    options: dict[str, object] = {}
    if strict:
        options["strict"] = True
    if api_key_env:
        if not model.startswith("openai:"):
            raise ConfigError("--api-key-env only applies to openai: models")
        options["api_key_env"] = api_key_env
    cache: bool | Path = False if no_cache else (cache_path or True)
    lm = load(model, cache=cache, **options)
    if raw:
        message: Prompt = prompt
    else:
        message = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    out = lm.generate(
        [message],
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        seed=seed,
        stop=stop or None,
        prefill=prefill,
        logprobs=logprobs,
    )[0][0]
    cached = bool(getattr(lm, "hits", 0))
    if json_out:
        emit_json(
            {
                "model": lm.spec,
                "identity": lm.identity,
                "prompt": prompt,
                "prefill": prefill,
                "text": out.text,
                "tokens": list(out.tokens),
                "logprobs": list(out.logprobs) if out.logprobs is not None else None,
                "finish_reason": out.finish_reason,
                "cached": cached,
            }
        )
        return
    from contam.textsafe import escape

    shown = (f"[dim]{escape(prefill)}[/]" if prefill else "") + escape(out.text)
    console.print(shown)
    console.print(f"[dim]{escape(lm.spec)} · finish={out.finish_reason or '?'}{' · from cache' if cached else ''}[/]")
    if logprobs and out.logprobs is not None:
        from rich.table import Table

        t = Table("#", "token", "log p", title="generated tokens")
        for i, (tok, lp) in enumerate(zip(out.tokens, out.logprobs, strict=False)):
            t.add_row(str(i), escape(repr(tok)), f"{lp:.3f}")
        console.print(t)


def register(app: typer.Typer) -> None:
    """Add ``models`` and ``ask`` to ``app``."""
    app.command("models")(models_cmd)
    app.command("ask")(ask_cmd)
