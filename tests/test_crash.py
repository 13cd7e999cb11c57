"""Crashes lose nothing: ``kill -9`` mid-run (parallel scan, a probe, perturb) leaves no process
behind and the rerun's results equal an uninterrupted run's; a full disk ends in one line with
the checkpoint intact; two runs sharing the response cache at once lose no row and never see
"database is locked".

Real data throughout: the built-in GSM8K test set, the shipped web-text sample (documents,
repeated with fresh ids to make a corpus that takes seconds to scan), and the embedded SmolLM2.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

RUN = [sys.executable, "-c", "import sys; from contam.cli.main import run; sys.argv[0] = 'contam'; run()"]


def contam(args: list[str], env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RUN, *map(str, args)], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=900, **kw)


def start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*RUN, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )


def children(pid: int) -> list[int]:
    """Live descendants of ``pid`` (by /proc; zombies count as gone)."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                kids.setdefault(int(fields[1]), []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill9_when(proc: subprocess.Popen[str], ready: Any, timeout: float = 300) -> list[int]:
    """Wait until ``ready()``, then SIGKILL the command (its main process only, as a crash or the
    OOM killer would); returns the processes it had started."""
    t0 = time.monotonic()
    while not ready():
        assert proc.poll() is None, ("the run ended before it could be killed", proc.communicate())
        assert time.monotonic() - t0 < timeout
        time.sleep(0.05)
    kids = children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.communicate()
    return kids


def assert_all_gone(pids: list[int], within: float = 10.0) -> None:
    t0 = time.monotonic()
    while any(alive(p) for p in pids) and time.monotonic() - t0 < within:
        time.sleep(0.1)
    left = [p for p in pids if alive(p)]
    for p in left:  # do not leave them to the next test either
        os.kill(p, signal.SIGKILL)
    assert not left, f"processes left behind after kill -9: {left}"


# ---------------------------------------------------------------- the worker pool
_POOL = r"""
import sys, time
from contam.pool import OrderedPool

def init():
    return None

def work(_, seconds):
    time.sleep(seconds)  # busy in a task when the parent dies
    return seconds

pool = OrderedPool(2, init, work)
pool.submit(0.0).get()
pool.submit(0.0).get()
pool.submit(600.0)
print(" ".join(str(p.pid) for p in pool.procs), flush=True)
time.sleep(600)
"""


def test_pool_workers_die_with_a_killed_parent() -> None:
    """kill -9 of the parent (no cleanup runs): idle and busy workers alike are gone at once."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _POOL], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    pids = [int(x) for x in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(alive(p) for p in pids)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert_all_gone(pids, within=3.0)
    assert proc.stderr is not None and "Traceback" not in proc.stderr.read()


# ---------------------------------------------------------------- parallel scan
@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~13 MB of real web text (the shipped sample, repeated with fresh ids) with GSM8K leaks."""
    from contam.data.webtext import build_demo_corpus

    d = tmp_path_factory.mktemp("big")
    build_demo_corpus(d / "demo.jsonl", seed=0)
    rows = [json.loads(x) for x in (d / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = [
        json.dumps({"id": f"r{k}-{r['id']}", "text": r["text"]})
        for k in range(int(os.environ.get("CONTAM_CRASH_REPEAT", "60")))
        for r in rows
    ]
    path = d / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _flags(out: Path) -> bytes:
    return (out / "flags.jsonl").read_bytes()


@pytest.mark.slow
def test_kill9_parallel_scan_leaves_no_worker_and_resumes(big_corpus: Path, tmp_path: Path) -> None:
    args = ["scan", "-b", "gsm8k", "--corpus", big_corpus, "--workers", "2", "--all"]
    whole = contam([*args, "--out", tmp_path / "whole", "--json"])
    assert whole.returncode == 0, whole.stderr
    out = tmp_path / "killed"
    proc = start([*args, "--out", out, "--json"])
    kids = kill9_when(proc, lambda: (out / ".scan-state.json").exists())
    assert len(kids) >= 2, "expected the worker processes to be running"
    assert_all_gone(kids)
    again = contam([*args, "--out", out, "--json"])
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["resumed_at_line"] > 1
    assert _flags(out) == _flags(tmp_path / "whole")
    a, b = json.loads(whole.stdout), json.loads(again.stdout)
    for k in ("documents", "flagged", "flags", "items_flagged", "by_benchmark", "by_part", "bytes"):
        assert a[k] == b[k], k


def _fsize_limit(n: int) -> Any:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG

    return limit


@pytest.mark.slow
def test_disk_full_scan_is_one_line_and_keeps_the_checkpoint(big_corpus: Path, tmp_path: Path) -> None:
    args = ["scan", "-b", "gsm8k", "--corpus", big_corpus, "--workers", "2", "--all"]
    whole = contam([*args, "--out", tmp_path / "whole", "--json"])
    assert whole.returncode == 0, whole.stderr
    size = len(_flags(tmp_path / "whole"))
    out = tmp_path / "full"
    p = subprocess.run(
        [*RUN, *map(str, args), "--out", str(out)], capture_output=True, text=True, timeout=900, preexec_fn=_fsize_limit(int(size * 0.8))
    )
    assert p.returncode == 2, (p.returncode, p.stderr[-3000:])
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "disk full" in lines[0], p.stderr[-3000:]
    state = json.loads((out / ".scan-state.json").read_text(encoding="utf-8"))
    assert (out / ".flags.jsonl.partial").stat().st_size >= state["partial_bytes"] > 0
    again = contam([*args, "--out", out, "--json"])
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["resumed_at_line"] > 1
    assert _flags(out) == _flags(tmp_path / "whole")


# ---------------------------------------------------------------- perturb
@pytest.mark.slow
def test_kill9_perturb_resumes_to_the_same_set(tmp_path: Path) -> None:
    args = ["perturb", "--benchmark", "gsm8k", "--per-item", "3", "--seed", "0", "--limit", "300"]
    t0 = time.monotonic()
    whole = contam([*args, "--out", tmp_path / "whole", "--json"])
    took = time.monotonic() - t0
    assert whole.returncode == 0, whole.stderr
    for frac in (0.5, 0.9):  # one kill while generating, one (most likely) while writing
        out = tmp_path / f"killed-{frac}"
        proc = start([*args, "--out", out, "--json"])
        t1 = time.monotonic()
        kids = kill9_when(proc, lambda t1=t1, frac=frac: time.monotonic() - t1 > took * frac)
        assert_all_gone([proc.pid, *kids])
        again = contam([*args, "--out", out, "--json"])
        assert again.returncode == 0, again.stderr
        assert (out / "variants.jsonl").read_bytes() == (tmp_path / "whole" / "variants.jsonl").read_bytes()


# ---------------------------------------------------------------- a probe
def _items_by_id(out: Path) -> dict[str, Any]:
    rows = [json.loads(x) for x in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r.get("id", r.get("item_id", json.dumps(r, sort_keys=True))): r for r in rows}


@pytest.mark.slow
def test_kill9_probe_resumes_to_the_same_result(tmp_path: Path) -> None:
    args = ["probe", "minkprob", "--model", "smollm2", "--benchmark", "gsm8k", "--control", "gsm8k-train", "--n", "20"]
    whole = contam([*args, "--out", tmp_path / "whole", "--json"], env={"CONTAM_CACHE": str(tmp_path / "c1.sqlite")})
    assert whole.returncode == 0, whole.stderr
    out = tmp_path / "killed"
    env = {"CONTAM_CACHE": str(tmp_path / "c2.sqlite")}
    proc = start([*args, "--out", out, "--json"], env)

    def some_done() -> bool:
        f = out / "items.jsonl"
        return f.exists() and f.read_bytes().count(b"\n") >= 5

    kids = kill9_when(proc, some_done)
    assert_all_gone([proc.pid, *kids])
    again = contam([*args, "--out", out, "--json"], env)
    assert again.returncode == 0, again.stderr
    assert _items_by_id(out) == _items_by_id(tmp_path / "whole")
    a, b = json.loads(whole.stdout), json.loads(again.stdout)
    assert [m["auc"] for m in a["methods"]] == [m["auc"] for m in b["methods"]]


# ---------------------------------------------------------------- the response cache
_WRITER = r"""
import sys
from contam.models.cache import ResponseCache
c = ResponseCache(sys.argv[1])
who, n = sys.argv[2], int(sys.argv[3])
for start in range(0, n, 5):
    c.put_many([(f"{who}-{i}", "id", "m", {"v": i, "pad": "x" * 200}) for i in range(start, min(n, start + 5))])
print(len(c))
"""


def test_two_processes_write_one_cache_without_losing_rows(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    n = 600
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(db), who, str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for who in ("a", "b", "c")
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0 and "locked" not in err, err
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3 * n


_FILLER = r"""
import sys
from contam.errors import as_contam_error
from contam.models.cache import ResponseCache
c = ResponseCache(sys.argv[1])
try:
    for start in range(0, 100000, 50):
        c.put_many([(f"k{i}", "id", "m", {"pad": "x" * 2000}) for i in range(start, start + 50)])
except Exception as e:
    err = as_contam_error(e)
    print(type(e).__name__, "|", err if err is not None else repr(e))
    print(len(c))
"""


def _small_tmpfs(path: Path) -> bool:
    """Mount a 1 MiB tmpfs at ``path`` (root in a container can); False where it cannot."""
    path.mkdir()
    try:
        return (
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(path)], capture_output=True, timeout=30).returncode == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


def test_cache_on_a_full_disk_says_so(tmp_path: Path) -> None:
    """A really full disk (a 1 MiB tmpfs where one can be mounted, else a file-size limit): the
    error says so (the ROLLBACK after it does not replace it), and committed chunks are kept."""
    mnt = tmp_path / "mnt"
    mounted = _small_tmpfs(mnt)
    try:
        kw: dict[str, Any] = {} if mounted else {"preexec_fn": _fsize_limit(1_000_000)}
        p = subprocess.run([sys.executable, "-c", _FILLER, str(mnt / "full.sqlite")], capture_output=True, text=True, timeout=300, **kw)
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr
    first, count = p.stdout.strip().splitlines()
    assert first.startswith("OutputError | response cache ") and "full.sqlite" in first, first
    assert ("database or disk is full" if mounted else "disk I/O error") in first, first
    assert "rollback" not in first.lower()
    assert int(count) > 0  # the chunks committed before the failure are kept


@pytest.mark.slow
def test_two_probe_runs_share_the_cache(tmp_path: Path) -> None:
    env = {"CONTAM_CACHE": str(tmp_path / "shared.sqlite")}
    a = ["probe", "minkprob", "--model", "smollm2", "--benchmark", "gsm8k", "--control", "gsm8k-train", "--n", "8", "--json"]
    b = ["probe", "minkprob", "--model", "smollm2", "--benchmark", "mmlu", "--control", "gsm8k-train", "--n", "8", "--json"]
    pa, pb = start(a, env), start(b, env)
    (oa, ea), (_ob, eb) = pa.communicate(timeout=900), pb.communicate(timeout=900)
    assert pa.returncode == 0 and pb.returncode == 0, (ea[-2000:], eb[-2000:])
    assert "locked" not in ea + eb
    # The same two runs one after the other into another cache store exactly as many answers.
    env2 = {"CONTAM_CACHE": str(tmp_path / "sequential.sqlite")}
    assert contam(a, env2).returncode == 0 and contam(b, env2).returncode == 0
    count = {}
    for name in ("shared", "sequential"):
        with sqlite3.connect(tmp_path / f"{name}.sqlite") as con:
            count[name] = con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert count["shared"] == count["sequential"] > 0
    assert json.loads(oa)["methods"] == json.loads(contam(a, env).stdout)["methods"]
