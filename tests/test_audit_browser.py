"""The audit report in a real browser (Debian's chromium, headless): built from hostile benchmark
and dataset text, no script runs, no request leaves the page, and the page renders (screenshot
of the right size with enough non-blank pixels).

`make test` installs chromium when missing; without it (no package manager) this test skips.
"""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import threading
from typing import ClassVar

import pytest

from contam.cli.main import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (make test installs it with apt-get; no package manager here)"
)


class _Spy(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self):
        _Spy.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.fixture()
def spy():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _Spy)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    _Spy.hits = []
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def _hostile(url: str) -> str:
    return (
        f"<script>document.title='PWNED';fetch('{url}/script')</script> <img src=\"{url}/img\" onerror=\"document.body.dataset.pwned=1\"> "
        f"\x1b[31mred\x1b[0m\x1b]8;;{url}/osc\x07link\x1b]8;;\x07 \u202egnp.exe\u202c <svg onload=\"fetch('{url}/svg')\"></svg> "
        f'<link rel=stylesheet href="{url}/css"><iframe src="{url}/frame"></iframe> <a href="javascript:alert(1)">x</a>'
    )


def _chromium(*args: str, timeout: int = 90) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--virtual-time-budget=3000",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_hostile_report_in_chromium(tmp_path, spy):
    h = _hostile(spy)
    bench = tmp_path / "evil.jsonl"
    items = [
        {
            "id": f"evil-{i}{h[:40]}",
            "question": f"Question {i}: a farmer has {i + 3} cows and buys 4 more each week for five weeks. {h} How many cows?",
            "answer": str(i + 23),
            "solution": f"He buys 4 * 5 = 20 cows, so {i + 3} + 20 = {i + 23}. {h}\n#### {i + 23}",
        }
        for i in range(4)
    ]
    bench.write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    ds = tmp_path / "ds.jsonl"
    docs = [{"id": f"doc-{h[:30]}-{i}", "text": f"Forum post {i}. {items[i]['question']}\n{items[i]['solution']} {h}"} for i in range(3)]
    docs += [
        {"id": f"plain-{i}", "text": f"An unrelated paragraph number {i} about gardening, soil and the weather in spring."}
        for i in range(20)
    ]
    ds.write_text("".join(json.dumps(x) + "\n" for x in docs), encoding="utf-8")
    run = tmp_path / "run"
    assert main(["audit", "-b", str(bench), "--dataset", str(ds), "--out", str(run), "--title", f"audit {h}", "--levels", "token"]) == 0
    page = run / "report.html"
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and "<img" not in text and "<iframe" not in text and "\x1b" not in text
    assert "&lt;script&gt;" in text  # shown, as text
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert "\x1b" not in md and "\u202e" not in md and "<script" not in md

    dom = _chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    out = dom.stdout
    assert "<body" in out and "contaminated" in out
    title = out.split("</title>")[0].split("<title>")[-1]
    assert title.startswith("audit &lt;script&gt;document.title="), title  # a script would have set it to 'PWNED'
    assert "\x1b" not in out and "\u202e" not in out  # terminal escapes and bidi overrides are dropped
    assert "data-pwned" not in out and "<script" not in out.lower() and "<img" not in out.lower() and "<iframe" not in out.lower()

    shot = tmp_path / "shot.png"
    r = _chromium(f"--screenshot={shot}", "--window-size=1280,1600", "--hide-scrollbars", page.as_uri())
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    assert _Spy.hits == [], f"the page made requests: {_Spy.hits}"
    PIL = pytest.importorskip("PIL.Image")
    img = PIL.open(shot).convert("L")
    assert img.size == (1280, 1600)
    hist = img.histogram()
    non_white = sum(hist[:240])
    assert non_white > 0.01 * img.size[0] * img.size[1], "screenshot is (almost) blank"
