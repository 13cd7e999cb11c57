"""A small fault-injecting HTTP proxy for the API-path tests.

It forwards requests to a real upstream server, except where its script says otherwise:
``"429"`` / ``"500"`` / ``"503"`` answer that status, ``"drop"`` closes the connection without an
answer, ``"hang"`` waits ``hang_s`` seconds then drops (so the client times out), ``"lost"``
forwards the request but drops the answer, ``"nologprobs"`` forwards and strips log-probs from
the answer. With the script empty, ``default`` applies (``"ok"`` = forward).

>>> with FaultProxy("http://127.0.0.1:8080", script=["429", "drop"]) as proxy:   # doctest: +SKIP
...     httpx.post(proxy.url + "/v1/completions", json={...})
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class FaultProxy:
    """Context manager running the proxy on 127.0.0.1 in a background thread."""

    def __init__(self, upstream: str, script: Iterable[str] = (), *, default: str = "ok", hang_s: float = 5.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.script: deque[str] = deque(script)
        self.default = default
        self.hang_s = hang_s
        #: What happened per request: 'forwarded', '429', 'drop', ...
        self.counts: Counter[str] = Counter()
        #: Authorization headers seen (to check the key is sent, and only there).
        self.auth_headers: list[str] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=120.0)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

    def next_action(self) -> str:
        with self._lock:
            return self.script.popleft() if self.script else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _drop(self) -> None:
                self.close_connection = True
                self.connection.close()

            def _forward(self, body: bytes) -> httpx.Response:
                return proxy._client.request(
                    self.command,
                    proxy.upstream + self.path,
                    content=body or None,
                    headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
                )

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy.auth_headers.append(self.headers.get("Authorization", ""))
                action = proxy.next_action() if self.command == "POST" else "ok"
                proxy.counts[action] += 1
                if action in ("429", "500", "502", "503"):
                    self._reply(
                        int(action),
                        json.dumps({"error": {"message": f"injected {action}"}}).encode(),
                        {"Retry-After": "0"} if action == "429" else None,
                    )
                elif action == "drop":
                    self._drop()
                elif action == "hang":
                    time.sleep(proxy.hang_s)
                    self._drop()
                else:
                    r = self._forward(body)
                    proxy.counts["forwarded"] += 1
                    if action == "lost":
                        self._drop()
                        return
                    content = r.content
                    if action == "nologprobs" and r.status_code == 200:
                        data = r.json()
                        for ch in data.get("choices", []):
                            ch["logprobs"] = None
                        content = json.dumps(data).encode()
                    self._reply(r.status_code, content)

            def do_POST(self) -> None:
                try:
                    self._handle()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): expected
                    self.close_connection = True

            def do_GET(self) -> None:
                self.do_POST()

        return Handler
