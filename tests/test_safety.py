"""The one safe printer, the one bounded calculator, the one mapping of user-caused failures to
a clean error, and credentials kept out of everything contam stores or prints."""

from __future__ import annotations

import errno
import importlib.util
import io
import json
import sqlite3
import subprocess
import sys
import time

import pytest

from contam.cli.common import SafeConsole, emit_json
from contam.errors import InputError, OutputError, as_contam_error, reading
from contam.outputs import JsonlCheckpoint, dumps_line, write_json
from contam.textsafe import clean, escape, redact_url

HOSTILE = "id\x1b[2J\x1b]0;pwned\x07\u202eevil\u2066\x9b31m\ud800[/][red]"


def test_safe_console_shows_hostile_text_as_text() -> None:
    buf = io.StringIO()
    con = SafeConsole(file=buf, force_terminal=True, color_system="truecolor", width=200, highlight=False)
    con.print(f"[bold]doc[/] {HOSTILE}")  # unescaped on purpose: a caller that forgot
    con.print(f"[bold]doc[/] {escape(HOSTILE)}")
    out = buf.getvalue()
    # Only rich's own style codes (ESC [ ... m) remain; the data's controls are spelled out.
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out and "\u202e" not in out and "\x9b" not in out
    assert "\\u001b[2J" in out and "\\u202e" in out and "\\ud800" in out and "[/][red]" in out


def test_a_long_warning_on_stderr_stays_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # CI's deep temporary paths were folded at 80 columns, cutting "notes.json" in two.
    from contam.cli.common import err_console

    path = "/tmp/" + "d" * 90 + "/notes.json"
    err_console.print(f"warning: skipped {path}: not a contam result", markup=False)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and path in err


def test_json_output_escapes_but_keeps_values(capsys: pytest.CaptureFixture[str]) -> None:
    emit_json({"id": HOSTILE})
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\ud800" not in out
    assert json.loads(out)["id"] == HOSTILE
    assert json.loads(dumps_line({"id": HOSTILE}))["id"] == HOSTILE
    dumps_line({"id": HOSTILE}).encode("utf-8")  # a lone surrogate stays an escape: encodable


def test_outputs_keep_lone_surrogates_as_escapes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_json(tmp_path / "s.json", {"id": "a\ud800"})
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["id"] == "a\ud800"
    with JsonlCheckpoint(tmp_path / "c.jsonl", key="id") as ck:
        ck.write({"id": "b\udfff", "v": 1})
    assert JsonlCheckpoint(tmp_path / "c.jsonl", key="id").done == {"b\udfff"}


def test_clean_and_redact() -> None:
    assert clean("a\tb\nc") == "a\tb\nc"
    assert clean("\x1b[31m") == "\\u001b[31m"
    assert redact_url("openai:https://me:sk-123@api.example.com/v1#gpt") == "openai:https://***@api.example.com/v1#gpt"
    assert redact_url("smollm2") == "smollm2"


def test_user_caused_failures_map_to_one_clean_error() -> None:
    full = as_contam_error(OSError(errno.ENOSPC, "No space left on device", "out/flags.jsonl"))
    assert isinstance(full, OutputError) and "disk full" in str(full) and "out/flags.jsonl" in str(full)
    assert isinstance(as_contam_error(OSError(errno.EFBIG, "File too large", "x")), OutputError)
    assert isinstance(as_contam_error(IsADirectoryError(errno.EISDIR, "Is a directory", "out")), OutputError)
    assert "disk is full" in str(as_contam_error(sqlite3.OperationalError("database or disk is full")))
    assert isinstance(as_contam_error(RecursionError()), InputError)
    assert as_contam_error(KeyError("bug")) is None and as_contam_error(ConnectionResetError()) is None
    with pytest.raises(InputError, match=r"s\.json:4: field 'n': unexpected content \(ValueError"):
        with reading("s.json", line=4, field="n"):
            int("x")


@pytest.mark.parametrize("expr", ["((9**64)**64)", "(((((2**12)**12)**12)**12)**12)", "9**9**9**9", "1e308*1e308*10", "2**-4096*2**-4096"])
def test_calculator_is_bounded(expr: str) -> None:
    from contam.perturb.arith import ArithError
    from contam.regen.calc import evaluate

    t0 = time.process_time()
    with pytest.raises(ArithError):
        evaluate(expr)
    assert time.process_time() - t0 < 0.5


def test_regen_calculate_tool_answers_an_error_not_a_traceback() -> None:
    from contam.regen.replay import call_tool
    from contam.regen.tools_retail import InvalidArgument
    from contam.regen.world import State, load_world

    st = State(load_world("retail"))
    assert call_tool("retail", st, "calculate", {"expression": "(100 - 20) * 0.9"}) == "72.0"
    with pytest.raises(InvalidArgument, match="too large"):
        call_tool("retail", st, "calculate", {"expression": "((9**64)**64)"})


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None,
    reason="llama-cpp-python's server is not installed",
)
def test_credentials_in_a_model_url_are_never_stored_or_printed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`contam ask --json` against a real OpenAI-compatible server (llama.cpp's, serving the
    embedded SmolLM2) with credentials written into the URL: the call works, and neither its
    output nor the response cache holds the secret."""
    from llamaserver import llama_server

    with llama_server(n_ctx=1024) as url:
        cache = tmp_path / "c.sqlite"
        port = url.rsplit(":", 1)[1]
        spec = f"openai:http://alice:sk-SECRET-123@127.0.0.1:{port}/v1#smollm2"
        p = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from contam.cli.main import run; sys.argv[0] = 'contam'; run()",
                "ask",
                "--model",
                spec,
                "What is 2 + 2?",
                "--max-new-tokens",
                "8",
                "--cache",
                str(cache),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)
        assert got["text"].strip()
        assert "SECRET" not in p.stdout + p.stderr and "alice" not in p.stdout
        assert got["identity"] == f"openai:http://127.0.0.1:{port}/v1#smollm2" and "***@" in got["model"]
        assert b"SECRET" not in cache.read_bytes() and all(b"SECRET" not in f.read_bytes() for f in tmp_path.glob("c.sqlite*"))
