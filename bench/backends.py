"""Speed of the model backends against plain loops over the same libraries, in the same run.

1. score(): tokens/s on GSM8K question+solution texts through ``load("smollm2", cache=False)``
   vs a plain llama-cpp-python loop (tokenize, eval, log-softmax, gather) on the same texts.
   The two are measured in alternating blocks so machine-load changes hit both equally.
   Also: a rerun through the response cache.
2. generate(): greedy tokens/s per backend (llama.cpp through us and through a plain
   ``create_completion`` loop; transformers through ``hf:smollm2`` unless --no-hf).
3. embed(): sentences/s of ``load_embedder("minilm").embed`` vs ``SentenceTransformer.encode``.

Run: ``.venv/bin/python bench/backends.py [--n 500] [--block 50] [--no-hf]``
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from datetime import UTC, datetime

import numpy as np

import contam.models.llamacpp  # noqa: F401  (sets OMP_WAIT_POLICY before llama_cpp loads)
from contam.data import load_benchmark
from contam.models import load, load_embedder
from contam.models.embedded import smollm2_path


def plain_llama_score(llm, texts: list[str]) -> int:
    """What a user would write with llama-cpp-python alone: per text, eval and log-softmax."""
    n_tok = 0
    for text in texts:
        ids = [llm.token_bos(), *llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)]
        llm.reset()
        llm.eval(ids)
        logits = llm.scores[: len(ids) - 1].astype(np.float64)
        logits -= logits.max(1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        _ = logp[np.arange(len(ids) - 1), ids[1:]]
        n_tok += len(ids) - 1
    return n_tok


def bench_score(texts: list[str], block: int, cache_file: str) -> dict[str, float]:
    from llama_cpp import Llama

    # The default path users get: the backend behind the response cache (writes included).
    lm = load("smollm2", cache=cache_file)
    threads = lm._llm.n_threads  # type: ignore[attr-defined]
    plain = Llama(str(smollm2_path()), n_ctx=lm.n_ctx, logits_all=True, verbose=False, n_threads=threads, n_threads_batch=threads)  # type: ignore[attr-defined]
    # Warm both (first decode allocates buffers).
    lm.score([("", "warm-up text")])
    plain_llama_score(plain, texts[:1])
    t_ours = t_plain = 0.0
    tok_ours = tok_plain = 0
    for b, start in enumerate(range(0, len(texts), block)):
        part = texts[start : start + block]
        for side in (0, 1) if b % 2 == 0 else (1, 0):  # alternate who goes first in a block
            t = time.perf_counter()
            if side == 0:
                res = lm.score([("", x) for x in part])
                t_ours += time.perf_counter() - t
                tok_ours += sum(len(r.logprobs) for r in res)
            else:
                tok_plain += plain_llama_score(plain, part)
                t_plain += time.perf_counter() - t
    misses = lm.misses  # type: ignore[attr-defined]
    t = time.perf_counter()
    again = lm.score([("", x) for x in texts])  # every answer is on disk now
    t_cached = time.perf_counter() - t
    if len(again) != len(texts) or lm.misses != misses:  # type: ignore[attr-defined]
        print(f"warning: the rerun computed {lm.misses - misses} texts again")  # type: ignore[attr-defined]
    return {
        "texts": len(texts),
        "tokens": tok_ours,
        "ours_tok_s": tok_ours / t_ours,
        "plain_tok_s": tok_plain / t_plain,
        "ratio": (tok_ours / t_ours) / (tok_plain / t_plain),
        "cached_rerun_s": t_cached,
        "threads": threads,
    }


def bench_generate(prompts: list[str], max_new: int, hf: bool) -> dict[str, float]:
    out: dict[str, float] = {}
    lm = load("smollm2", cache=False)
    chats = [[{"role": "user", "content": p}] for p in prompts]
    lm.generate(chats[:1], max_new_tokens=4)
    t = time.perf_counter()
    res = lm.generate(chats, max_new_tokens=max_new)
    dt = time.perf_counter() - t
    n_tok = sum(len(lm.tokenize(r[0].text, add_bos=False)) for r in res)  # type: ignore[attr-defined]
    out["llamacpp_tok_s"] = n_tok / dt
    llm = lm._llm  # type: ignore[attr-defined]
    t = time.perf_counter()
    n_plain = 0
    for c in chats:
        ids = lm.tokenize(lm.format_chat(c))  # type: ignore[attr-defined]
        r = llm.create_completion(ids, max_tokens=max_new, temperature=0.0)
        n_plain += int(r["usage"]["completion_tokens"])
    out["plain_llamacpp_tok_s"] = n_plain / (time.perf_counter() - t)
    if hf:
        try:
            hlm = load("hf:smollm2", cache=False)
        except Exception as e:  # the hf backend is another module's; report, do not fail the bench
            print(f"hf backend unavailable: {e}")
        else:
            hlm.generate(chats[:1], max_new_tokens=4)
            t = time.perf_counter()
            res = hlm.generate(chats, max_new_tokens=max_new)
            dt = time.perf_counter() - t
            tok = hlm.tokenizer  # type: ignore[attr-defined]
            out["hf_tok_s"] = sum(len(tok(r[0].text, add_special_tokens=False)["input_ids"]) for r in res) / dt
    return out


def bench_server_generate(prompts: list[str], max_new: int) -> float:
    """Greedy tokens/s through the openai backend against llama.cpp's server on 127.0.0.1."""
    import socket
    import subprocess
    import sys

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm2_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--logits_all",
            "true",
            "--verbose",
            "false",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(url + "/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        api = load(f"openai:{url}/v1#smollm2", cache=False, concurrency=1)
        chats = [[{"role": "user", "content": p}] for p in prompts]
        api.generate(chats[:1], max_new_tokens=4)
        t = time.perf_counter()
        res = api.generate(chats, max_new_tokens=max_new)
        dt = time.perf_counter() - t
        local = load("smollm2", cache=False)
        return sum(len(local.tokenize(r[0].text, add_bos=False)) for r in res) / dt  # type: ignore[attr-defined]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def bench_embed(texts: list[str]) -> dict[str, float]:
    emb = load_embedder("minilm")
    model = emb._model  # the same SentenceTransformer object, called plainly
    emb.embed(texts[:64])
    t = time.perf_counter()
    emb.embed(texts, batch_size=64)
    ours = len(texts) / (time.perf_counter() - t)
    t = time.perf_counter()
    for start in range(0, len(texts), 64):
        model.encode(texts[start : start + 64], batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    plain = len(texts) / (time.perf_counter() - t)
    return {"sentences": len(texts), "ours_s_per_s": ours, "plain_s_per_s": plain, "ratio": ours / plain}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500, help="GSM8K texts to score")
    ap.add_argument("--block", type=int, default=50, help="texts per alternating block")
    ap.add_argument("--gen-prompts", type=int, default=8)
    ap.add_argument("--gen-tokens", type=int, default=64)
    ap.add_argument("--embed", type=int, default=1319)
    ap.add_argument("--no-hf", action="store_true")
    ap.add_argument("--server", action="store_true", help="also measure generation through llama.cpp's OpenAI-compatible server")
    ap.add_argument("--only-generate", action="store_true", help="skip score() and embed()")
    ap.add_argument("--only-score", action="store_true", help="skip generate() and embed()")
    args = ap.parse_args()
    items = load_benchmark("gsm8k")
    texts = [f"{it.question}\n{it.solution}" for it in items[: args.n]]
    print(
        f"# backends bench  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {platform.machine()}  cpus={os.cpu_count()}  load={os.getloadavg()[0]:.1f}"
    )
    if not args.only_generate:
        with tempfile.TemporaryDirectory() as d:
            s = bench_score(texts, args.block, os.path.join(d, "responses.sqlite"))
        print(f"score(): {s['texts']} texts, {s['tokens']} tokens, {s['threads']} threads")
        print(
            f"  ours  {s['ours_tok_s']:.0f} tok/s   plain llama-cpp-python loop {s['plain_tok_s']:.0f} tok/s   ratio {s['ratio']:.2f} (target >= 0.8)"
        )
        print(f"  rerun through the response cache: {s['cached_rerun_s']:.2f} s for all {s['texts']} texts")
    if args.only_score:
        print(f"load at end: {os.getloadavg()[0]:.1f}")
        return
    prompts = [it.question for it in items[: args.gen_prompts]]
    g = bench_generate(prompts, args.gen_tokens, not args.no_hf)
    if args.server:
        g["openai_llama_server_tok_s"] = bench_server_generate(prompts, args.gen_tokens)
    print(f"generate(): greedy, {args.gen_prompts} chat prompts x <= {args.gen_tokens} new tokens")
    for k, v in g.items():
        print(f"  {k:26s} {v:.1f}")
    if not args.only_generate:
        e = bench_embed([it.question for it in items[: args.embed]])
        print(
            f"embed(): {e['sentences']} sentences  ours {e['ours_s_per_s']:.0f}/s  plain SentenceTransformer.encode {e['plain_s_per_s']:.0f}/s  ratio {e['ratio']:.2f}"
        )
    print(f"load at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
