"""Sharded scans: input shards, one output shard each, resume, bad shards, manifest, verify, merge, the CI gate."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contam.data import load_benchmark, load_benchmarks
from contam.data.webtext import build_corpus, build_demo_corpus, write_jsonl
from contam.errors import ConfigError, InputError
from contam.scan.job import run_scan
from contam.scan.shards import InputShard, merge_runs, resolve_corpus, run_sharded, shard_hash, verify_run

BENCH = ["gsm8k", "humaneval", "mmlu"]
CONTAM = str(Path(sys.executable).with_name("contam"))


@pytest.fixture(scope="module")
def items():
    return load_benchmarks(BENCH)


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Four demo shards of 200 documents each: plain, gzip, zstd-free nested plain, Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("shards")
    (d / "in" / "sub").mkdir(parents=True)
    truth = {}
    truth["a.jsonl"] = build_demo_corpus(d / "in" / "a.jsonl", seed=1)
    truth["b.jsonl.gz"] = build_demo_corpus(d / "b.tmp", seed=2)
    (d / "in" / "b.jsonl.gz").write_bytes(gzip.compress((d / "b.tmp").read_bytes()))
    truth["sub/c.jsonl"] = build_demo_corpus(d / "in" / "sub" / "c.jsonl", seed=3)
    truth["d.parquet"] = build_demo_corpus(d / "d.tmp", seed=4)
    rows = [json.loads(x) for x in (d / "d.tmp").read_text(encoding="utf-8").splitlines()]
    pq.write_table(pa.Table.from_pylist(rows), d / "in" / "d.parquet")
    (d / "in" / "README.txt").write_text("not a shard")
    return d, truth


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_corpus_specs_resolve_to_named_shards(shards) -> None:
    d, _ = shards
    by_dir = resolve_corpus([d / "in"])
    assert [s.name for s in by_dir] == ["a.jsonl", "b.jsonl.gz", "d.parquet", "sub/c.jsonl"]  # the .txt is no shard
    by_glob = resolve_corpus([str(d / "in" / "*.jsonl*")])
    assert [s.name for s in by_glob] == ["a.jsonl", "b.jsonl.gz"]
    deep = resolve_corpus([str(d / "in" / "**" / "*.jsonl")])
    assert [s.name for s in deep] == ["a.jsonl", "sub/c.jsonl"]
    listed = resolve_corpus([d / "in" / "a.jsonl", d / "in" / "sub" / "c.jsonl"])
    assert [s.path for s in listed] == [str(d / "in" / "a.jsonl"), str(d / "in" / "sub" / "c.jsonl")]
    with pytest.raises(InputError, match="no file matches"):
        resolve_corpus([str(d / "in" / "*.csv")])
    (d / "empty").mkdir(exist_ok=True)
    with pytest.raises(InputError, match="no corpus shards here"):
        resolve_corpus([d / "empty"])
    with pytest.raises(ConfigError, match="give each input once"):
        resolve_corpus([d / "in", str(d / "in" / "*.jsonl")])


def test_shard_selection_is_a_stable_partition() -> None:
    names = [f"cc/part-{k:05d}.jsonl.zst" for k in range(500)]
    tasks = [[n for n in names if InputShard(n, n).selected(i, 7)] for i in range(7)]
    assert sorted(n for t in tasks for n in t) == names  # every shard in exactly one task
    assert min(map(len, tasks)) > 40  # and spread evenly (500 / 7 ≈ 71)
    # sha256, not Python's per-process salted hash: the same in every process and on every host.
    code = "from contam.scan.shards import shard_hash; print(shard_hash('cc/part-00042.jsonl.zst'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "123"}, check=True
    )
    assert (
        int(out.stdout)
        == shard_hash("cc/part-00042.jsonl.zst")
        == int.from_bytes(hashlib.sha256(b"cc/part-00042.jsonl.zst").digest()[:8], "big")
    )


def test_sharded_scan_equals_one_scan_per_shard(shards, items, tmp_path) -> None:
    d, truth = shards
    s = run_sharded([d / "in"], items, tmp_path / "run")
    assert s["shards"] == 4 and s["documents"] == 800 and s["flagged"] >= sum(map(len, truth.values())) - 2
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    flagged = 0
    for shard in resolve_corpus([d / "in"]):
        alone = run_scan(shard.path, items, tmp_path / "alone" / shard.folder)
        flagged += alone["flagged"]
        out = tmp_path / "run" / "shards" / shard.folder
        assert (out / "flags.jsonl").read_bytes() == (tmp_path / "alone" / shard.folder / "flags.jsonl").read_bytes()
        assert json.loads((out / "summary.json").read_text())["flagged"] == alone["flagged"] >= len(truth[shard.name]) - 2
        rec = next(r for r in manifest["inputs"] if r["name"] == shard.name)
        assert rec["sha256"] == _sha(Path(shard.path)) and rec["size"] == os.path.getsize(shard.path)
    assert (
        s["flagged"] == flagged and manifest["benchmarks"]["items"] == len(items) and manifest["benchmarks"]["item_ids"][0] == items[0].id
    )
    assert len(manifest["benchmarks"]["index_sha256"]) == 64 and manifest["contam_version"]
    outputs = {o["path"]: o["sha256"] for o in manifest["outputs"]}
    assert all(outputs[p] == _sha(tmp_path / "run" / p) for p in outputs) and "summary.json" in outputs
    assert not [p for p in (tmp_path / "run" / "shards").iterdir() if p.name.startswith(".")]  # no work folder left
    assert verify_run(tmp_path / "run") == {
        "ok": True,
        "checked": len(outputs) + 4,
        "problems": [],
        "manifest": str(tmp_path / "run" / "manifest.json"),
    }
    # A changed output and a changed input are both named.
    flags = tmp_path / "run" / "shards" / resolve_corpus([d / "in"])[0].folder / "flags.jsonl"
    flags.write_bytes(flags.read_bytes() + b"\n")
    r = verify_run(tmp_path / "run")
    assert not r["ok"] and len(r["problems"]) == 1 and "flags.jsonl: sha256" in r["problems"][0]


def test_a_rerun_keeps_finished_shards_and_a_bad_shard_is_named_or_fatal(shards, items, tmp_path) -> None:
    d, truth = shards
    src = tmp_path / "in"
    shutil.copytree(d / "in", src)
    good = (src / "b.jsonl.gz").read_bytes()
    (src / "b.jsonl.gz").write_bytes(good[: len(good) // 2])  # a truncated gzip shard
    with pytest.raises(InputError, match=r"b\.jsonl\.gz.*corrupt or truncated"):
        run_sharded([src], items, tmp_path / "run")
    run_dir = tmp_path / "run" / "shards"
    done = sorted(p.name for p in run_dir.iterdir())
    assert len(done) == 1 and done[0].startswith("a.jsonl-")  # the shard before it is finished, the bad one left nothing
    s = run_sharded([src], items, tmp_path / "run", on_bad_shard="skip")
    assert (
        s["shards"] == 3
        and [b["name"] for b in s["bad_shards"]] == ["b.jsonl.gz"]
        and "corrupt or truncated" in s["bad_shards"][0]["error"]
    )
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith(".")) == []
    first = {p.name: p.stat().st_mtime_ns for p in run_dir.iterdir()}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert {r["name"]: r["status"] for r in manifest["inputs"]}["b.jsonl.gz"] == "bad"
    (src / "b.jsonl.gz").write_bytes(good)  # fixed: the rerun scans only the shard that was missing
    s = run_sharded([src], items, tmp_path / "run", on_bad_shard="skip")
    assert s["shards"] == 4 and not s["bad_shards"] and s["flagged"] >= sum(map(len, truth.values())) - 2
    assert all(p.stat().st_mtime_ns == first[p.name] for p in run_dir.iterdir() if p.name in first)  # not rewritten
    assert verify_run(tmp_path / "run")["ok"]


_KILL_SCRIPT = """
import sys
from contam.scan.ngram import NGramConfig
from contam.scan.shards import run_sharded
run_sharded([sys.argv[1]], ["gsm8k", "humaneval"], sys.argv[2], config=NGramConfig(batch_bytes=32 << 10), workers=2)
"""


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.slow  # ~50 s on the shared 2-core machine
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the worker processes through /proc")
def test_a_killed_worker_is_retried_and_a_killed_run_loses_nothing(items, tmp_path) -> None:
    sub = load_benchmark("gsm8k")[:30] + load_benchmark("humaneval")[:30]
    (tmp_path / "in").mkdir()
    for k in range(3):
        docs, _ = build_corpus(4000, seed=40 + k, items=sub)
        write_jsonl(tmp_path / "in" / f"p{k}.jsonl", docs)
    env = {**os.environ, "CONTAM_PROGRESS": "0"}
    # 1. Kill one worker process of the scan: its shard is run again, the job finishes.
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, tmp_path / "in", tmp_path / "run"], env=env, stderr=subprocess.PIPE, text=True
    )
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and proc.poll() is None and time.monotonic() < deadline:
        kids = _children(proc.pid)
        if len(kids) >= 2:
            time.sleep(0.3)
            os.kill(kids[-1], signal.SIGKILL)
            killed = kids[-1]
        time.sleep(0.05)
    assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    assert killed is not None
    # 2. Kill the whole run in its second shard: the rerun keeps the first shard and finishes.
    proc = subprocess.Popen([sys.executable, "-c", _KILL_SCRIPT, tmp_path / "in", tmp_path / "run2"], env=env)
    shard_dir = tmp_path / "run2" / "shards"
    while proc.poll() is None and not (shard_dir.is_dir() and [p for p in shard_dir.iterdir() if not p.name.startswith(".")]):
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    kept = {p.name: p.stat().st_mtime_ns for p in shard_dir.iterdir() if not p.name.startswith(".")}
    assert subprocess.run([sys.executable, "-c", _KILL_SCRIPT, tmp_path / "in", tmp_path / "run2"], env=env).returncode == 0
    assert all((shard_dir / n).stat().st_mtime_ns == t for n, t in kept.items())
    clean = run_sharded([tmp_path / "in"], ["gsm8k", "humaneval"], tmp_path / "clean", workers=1)
    for shard in resolve_corpus([tmp_path / "in"]):
        want = (tmp_path / "clean" / "shards" / shard.folder / "flags.jsonl").read_bytes()
        assert (tmp_path / "run" / "shards" / shard.folder / "flags.jsonl").read_bytes() == want
        assert (shard_dir / shard.folder / "flags.jsonl").read_bytes() == want
    assert clean["flagged"] > 0


def test_tasks_merge_into_the_whole(shards, items, tmp_path) -> None:
    d, _ = shards
    whole = run_sharded([d / "in"], items, tmp_path / "whole")
    parts = [run_sharded([d / "in"], items, tmp_path / f"task{i}", shard_index=i, num_shards=3) for i in range(3)]
    assert sum(p["shards"] for p in parts) == 4
    merged = merge_runs([tmp_path / f"task{i}" for i in range(3)], tmp_path / "merged")
    for k in ("documents", "bytes", "flagged", "flags", "items_flagged", "by_benchmark", "by_part", "flag_rate", "shards"):
        assert merged[k] == whole[k], k
    assert verify_run(tmp_path / "merged")["ok"]
    other = run_sharded([d / "in" / "a.jsonl", d / "in" / "sub" / "c.jsonl"], ["gsm8k"], tmp_path / "other")
    assert other["shards"] == 2
    with pytest.raises(ConfigError, match="other settings or benchmarks"):
        merge_runs([tmp_path / "task0", tmp_path / "other"], tmp_path / "bad")
    with pytest.raises(ConfigError, match="need 0 <= index < num-shards"):
        run_sharded([d / "in"], items, tmp_path / "x", shard_index=3, num_shards=3)


def test_decontaminated_copy_per_shard(shards, items, tmp_path) -> None:
    d, truth = shards
    s = run_sharded([str(d / "in" / "*.jsonl*")], items, tmp_path / "run", clean="drop", command="decontaminate")
    for shard in resolve_corpus([str(d / "in" / "*.jsonl*")]):
        out = tmp_path / "run" / "shards" / shard.folder
        name = "clean.jsonl.gz" if shard.name.endswith(".gz") else "clean.jsonl"
        raw = (out / name).read_bytes()
        kept = (gzip.decompress(raw) if name.endswith(".gz") else raw).splitlines()
        assert 200 - len(truth[shard.name]) <= len(kept) <= 200 - len(truth[shard.name]) + 2
        assert run_scan(out / name, items, tmp_path / "rescan" / shard.folder)["flagged"] == 0
    assert s["flagged"] >= len(truth["a.jsonl"]) + len(truth["b.jsonl.gz"]) - 2 and verify_run(tmp_path / "run")["ok"]


def _contam(*args: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAM_PROGRESS": "0", "COLUMNS": "200"}
    return subprocess.run([CONTAM, *map(str, args)], capture_output=True, text=True, env=env, timeout=600)


def test_cli_gate_verify_and_merge(shards, tmp_path) -> None:
    d, _ = shards
    one = d / "in" / "a.jsonl"
    rate = run_scan(one, load_benchmarks(BENCH), tmp_path / "ref")["flag_rate"]
    p = _contam(
        "scan", "-b", "gsm8k", "-b", "humaneval", "-b", "mmlu", "--corpus", one, "--out", tmp_path / "s", "--fail-above", rate / 2, "--json"
    )
    assert p.returncode == 1 and "exceeds --fail-above" in p.stderr and json.loads(p.stdout)["flag_rate"] == rate
    assert (tmp_path / "s" / "flags.jsonl").is_file() and (tmp_path / "s" / "manifest.json").is_file()  # outputs written all the same
    p = _contam("scan", "-b", "gsm8k", "-b", "humaneval", "-b", "mmlu", "--corpus", one, "--out", tmp_path / "s", "--fail-above", rate)
    assert p.returncode == 0, p.stderr
    p = _contam("verify", tmp_path / "s")
    assert p.returncode == 0 and "ok:" in p.stdout
    p = _contam("scan", "-b", "gsm8k", "--corpus", one, "--out", tmp_path / "x", "--fail-above", "5")
    assert p.returncode == 2 and "between 0 and 1" in p.stderr
    for i in range(2):
        p = _contam(
            "scan",
            "-b",
            "gsm8k",
            "--corpus",
            d / "in",
            "--num-shards",
            2,
            "--shard-index",
            i,
            "--out",
            tmp_path / f"t{i}",
            "--on-bad-shard",
            "skip",
        )
        assert p.returncode == 0, p.stderr
    p = _contam("merge", tmp_path / "t0", tmp_path / "t1", "--out", tmp_path / "m", "--fail-above", 0, "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["shards"] == 4
    (tmp_path / "t0" / "summary.json").write_text("{}")
    p = _contam("verify", tmp_path / "t0")
    assert p.returncode == 1 and "summary.json: sha256" in p.stderr
    p = _contam("verify", tmp_path / "nothing")
    assert p.returncode == 2 and "no manifest.json" in p.stderr
    p = _contam("decontaminate", "--corpus", d / "in", "-b", "gsm8k", "--out", tmp_path / "clean", "--json")
    assert p.returncode == 0, p.stderr
    assert (
        json.loads(p.stdout)["shards"] == 4 and len(list((tmp_path / "clean" / "shards").glob("*/clean.jsonl*"))) == 3
    )  # Parquet is scanned, not rewritten


def test_fsspec_urls(shards, items, tmp_path) -> None:
    pytest.importorskip("fsspec")
    d, truth = shards
    s = run_sharded([f"file://{d / 'in'}/*.jsonl"], items, tmp_path / "run")
    assert s["shards"] == 1 and s["flagged"] >= len(truth["a.jsonl"]) - 2
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["inputs"][0]["sha256"] == _sha(d / "in" / "a.jsonl")
    assert verify_run(tmp_path / "run")["ok"]
