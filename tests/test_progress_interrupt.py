"""Issue 32.9: a long run off a terminal says how far it is (a plain line with an ETA every
``CONTAM_PROGRESS_INTERVAL`` seconds), and Ctrl-C says what is kept and the command that resumes
(exit 130), through one shared progress display and one shared interrupt handler."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from contam import interrupt
from contam.audit.runner import RunState, Step, run_steps
from contam.outputs import JsonlCheckpoint
from contam.probe.itemloop import run_items
from contam.records import Record

CONTAM = str(Path(sys.executable).with_name("contam"))
LINE = re.compile(r"^counting: (\d+)/6 items, \d+s elapsed, ETA (\S+)$")


@dataclass(frozen=True)
class Rec(Record):
    key: str
    n: int


def _slow(x: str) -> Rec:
    time.sleep(0.15)
    return Rec(x, len(x))


def test_plain_lines_off_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CONTAM_PROGRESS", raising=False)  # stderr under pytest is no terminal
    monkeypatch.setenv("CONTAM_PROGRESS_INTERVAL", "0.1")
    items = [f"i{k}" for k in range(6)]
    with JsonlCheckpoint(tmp_path / "items.jsonl", key="key") as ck:  # two finished by an earlier run
        for it in items[:2]:
            ck.write(Rec(it, 2))
    with JsonlCheckpoint(tmp_path / "items.jsonl", key="key") as ck:
        got = run_items(items, _slow, Rec, key=lambda x: x, checkpoint=ck, description="counting")
    assert [r.key for r in got] == items
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert lines, "no progress line off a terminal"
    for ln in lines:
        m = LINE.match(ln)
        assert m, ln
        assert int(m.group(1)) >= 2  # the resumed records count as done
    assert any(LINE.match(ln).group(2) != "unknown" for ln in lines)  # type: ignore[union-attr]


def test_no_lines_when_progress_is_off(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CONTAM_PROGRESS", "0")
    monkeypatch.setenv("CONTAM_PROGRESS_INTERVAL", "0.05")
    run_items(["a", "b", "c"], _slow, Rec, key=lambda x: x, description="counting")
    assert capfd.readouterr().err == ""


def test_ctrl_c_in_a_resumable_loop_names_what_is_kept(tmp_path: Path) -> None:
    run = tmp_path / "run"
    items = [f"i{k}" for k in range(10)]

    def stop_at_4th(x: str) -> Rec:
        if x == "i3":
            raise KeyboardInterrupt  # what Ctrl-C raises in the middle of the 4th item
        return Rec(x, 1)

    interrupt.reset()
    with JsonlCheckpoint(run / "items.jsonl", key="key") as ck, pytest.raises(KeyboardInterrupt):
        run_items(items, stop_at_4th, Rec, key=lambda x: x, checkpoint=ck, description="counting")
    line = interrupt.interrupted_line(["probe", "x", "--out", str(run), "--fresh"])
    assert (
        line == f"interrupted: 3 of 10 items kept in {run}/ (counting); run it again without --fresh to resume: contam probe x --out {run}"
    )
    computed: list[str] = []
    with JsonlCheckpoint(run / "items.jsonl", key="key") as ck:
        run_items(items, lambda x: computed.append(x) or Rec(x, 1), Rec, key=lambda x: x, checkpoint=ck)
    assert computed == items[3:]  # the rerun resumes


def test_ctrl_c_without_an_out_folder_says_nothing_is_kept() -> None:
    def stop(x: str) -> Rec:
        raise KeyboardInterrupt

    interrupt.reset()
    with pytest.raises(KeyboardInterrupt):
        run_items(["a"], stop, Rec, key=lambda x: x, description="counting")
    assert interrupt.interrupted_line(["probe", "x"]) == (
        "interrupted: nothing kept (counting ran without an --out folder); give --out DIR to make a run resumable"
    )


def test_audit_progress_and_ctrl_c(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CONTAM_PROGRESS", raising=False)
    monkeypatch.setenv("CONTAM_PROGRESS_INTERVAL", "0.1")

    def slow(_on_item: object) -> None:
        time.sleep(0.5)

    def stop(_on_item: object) -> None:
        raise KeyboardInterrupt

    steps = [Step("b/one", "b: first", tmp_path / "one", 1.0, slow), Step("b/two", "b: second", tmp_path / "two", 1.0, stop)]
    interrupt.reset()
    with pytest.raises(KeyboardInterrupt):
        run_steps(steps, tmp_path, RunState("f"), say=lambda s: None)
    err = capfd.readouterr().err
    assert re.search(r"^\[1/2\] b: first: 0% done, \d+s elapsed, ETA unknown$", err, re.M), err
    assert interrupt.interrupted_line(["audit", "--out", str(tmp_path)]).startswith(
        f"interrupted: 1 of 2 audit steps finished in {tmp_path}/; run the same command again to resume: contam audit --out "
    )


def test_the_cli_on_ctrl_c_prints_the_resume_line(tmp_path: Path) -> None:
    """The README's model-side command, off a terminal: progress lines, then Ctrl-C: one line, exit 130."""
    out = tmp_path / "mink"
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_PROGRESS"}
    env |= {"CONTAM_PROGRESS_INTERVAL": "0.5", "CONTAM_CACHE": str(tmp_path / "cache.sqlite"), "COLUMNS": "300"}
    cmd = ["probe", "minkprob", "--model", "smollm2", "-b", "gsm8k", "--control", "gsm8k-train", "--limit", "12", "--out", str(out)]
    p = subprocess.Popen([CONTAM, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert p.stderr is not None
    seen = []
    try:
        for ln in p.stderr:  # wait until the loop runs: its progress line is the sign
            seen.append(ln)
            if ln.startswith("log-prob scores: "):
                break
        assert seen and re.match(r"^log-prob scores: \d+/24 items, \d+s elapsed, ETA \S+", seen[-1]), seen
        p.send_signal(signal.SIGINT)
        rest = p.stderr.read()
        code = p.wait(timeout=180)
    finally:
        if p.poll() is None:
            p.kill()
    assert code == 130, (seen, rest)
    last = [ln for ln in rest.splitlines() if ln.strip()][-1]
    assert re.fullmatch(
        rf"interrupted: \d+ of 24 items kept in {re.escape(str(out))}/ \(log-prob scores\); "
        rf"run the same command again to resume: contam {re.escape(' '.join(cmd))}",
        last,
    ), last


def test_a_late_batch_says_so_instead_of_a_growing_eta() -> None:
    from contam.progress import plain_line

    # 1 unit in the first 2 s, then 268 s without progress: not "ETA 9h56m"
    assert plain_line("x", 1, 100, 270.0, 1, "%", idle=268.0) == "x: 1% done, 4m30s elapsed, ETA unknown (no progress for 4m28s)"
    assert plain_line("x", 8, 50, 80.0, 8, "items", idle=8.0) == "x: 8/50 items, 1m20s elapsed, ETA 6m10s"


def test_the_readme_says_how_long_the_model_side_takes_on_2_cores() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    one_command = readme.split("## One command", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"model side takes on 2 CPU cores.*?--limit 5` ran \d+ min", one_command, re.S), one_command
    tour_step = next(b for b in readme.split("\n# ")[1:] if "contam probe minkprob --model" in b)
    assert re.search(r"\d+ min wall, .*2 shared cores", tour_step), tour_step


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the dropped exception, as in the bug
def test_a_ctrl_c_swallowed_by_a_c_callback_still_stops_the_loop() -> None:
    """Python runs a signal handler at the next bytecode; inside a C library's callback into Python
    (llama.cpp's log hook) the KeyboardInterrupt it raises is printed and dropped. The handler
    ``contam`` installs also remembers it, and the loop's next progress step raises it again."""
    import ctypes
    import ctypes.util

    from contam import interrupt
    from contam.progress import make_progress

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    compare = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))

    def cmp(a: Any, b: Any) -> int:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C lands while C code is calling back into Python
        return a[0] - b[0]

    previous = signal.getsignal(signal.SIGINT)
    interrupt.reset()
    interrupt.install()
    try:
        arr = (ctypes.c_int * 3)(3, 1, 2)
        libc.qsort(arr, 3, ctypes.sizeof(ctypes.c_int), compare(cmp))  # the KeyboardInterrupt is dropped here
        with make_progress() as prog, pytest.raises(KeyboardInterrupt):
            prog.advance(prog.add_task("items", total=3))
    finally:
        signal.signal(signal.SIGINT, previous)
        interrupt.reset()
