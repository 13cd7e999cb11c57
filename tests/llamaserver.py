"""llama.cpp's OpenAI-compatible server serving the embedded SmolLM2 GGUF, for the API-path tests.

One context manager instead of a copy in every test module that talks to a real server:

>>> with llama_server(n_ctx=1024) as url:   # doctest: +SKIP
...     httpx.get(url + "/v1/models")
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from contam.models.embedded import smollm2_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_server(*, n_ctx: int = 2048, logits_all: bool = False, startup_s: float = 90.0) -> Iterator[str]:
    """Start ``llama_cpp.server`` on a free localhost port, wait until it answers, yield its base
    URL (``http://127.0.0.1:PORT``) and stop it afterwards. A server that exits or does not come
    up in ``startup_s`` fails the test with its stderr."""
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()), "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", str(n_ctx), "--verbose", "false", "--model_alias", "smollm2"]  # fmt: skip
    if logits_all:
        cmd += ["--logits_all", "true"]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}  # see llamacpp.py: spinning threads on a shared CPU
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + startup_s
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {proc.stderr.read()[-2000:] if proc.stderr else ''}")
            try:
                if httpx.get(url + "/v1/models", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            pytest.fail(f"llama_cpp.server did not come up within {startup_s:.0f} s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
