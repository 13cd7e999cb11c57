"""The Ray Data executor gives the local engine's results, flag for flag (one local Ray cluster,
``ray.init(num_cpus=2)``, for the whole test session)."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from contam.data import load_benchmark, load_benchmarks
from contam.data.webtext import build_corpus, build_demo_corpus, write_jsonl
from contam.errors import InputError
from contam.scan.ngram import NGramConfig
from contam.scan.shards import resolve_corpus, run_sharded, verify_run

ray = pytest.importorskip("ray")


@pytest.fixture(scope="session")
def ray_cluster():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Compile the prefilter's numba kernels here, once, into their on-disk cache: in a fresh clone
    # the Ray workers (separate processes, not forks) otherwise each compiled them at the same time
    # (55 s for the test below against 10 s with the cache warm, on 2 cores).
    from contam.scan.ngram import NGramScanner

    NGramScanner(NGramConfig()).fit(load_benchmark("gsm8k")[:5]).prefilter.warm_up()
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("ray") / "in"
    d.mkdir()
    sub = load_benchmark("gsm8k")[:20] + load_benchmark("humaneval")[:20]
    docs, _ = build_corpus(1500, seed=3, items=sub)
    for k, doc in enumerate(docs):
        if k % 4 == 0:
            doc.pop("id", None)  # ids from line numbers, which the byte ranges must renumber
    write_jsonl(d / "big.jsonl", docs)
    lines = (d / "big.jsonl").read_bytes().splitlines(keepends=True)
    # Bad lines in the middle of a range: counted, named with their corpus line.
    (d / "bad.jsonl").write_bytes(b"".join(lines[:700]) + b'{"text": broken\n{"body": 1}\n' + b"".join(lines[700:1000]))
    build_demo_corpus(d / "demo.tmp", seed=5)
    (d / "demo.jsonl.gz").write_bytes(gzip.compress((d / "demo.tmp").read_bytes()))
    (d / "demo.tmp").unlink()
    pq.write_table(pa.Table.from_pylist([json.loads(x) for x in lines[:400]]), d / "rows.parquet")
    return d


def test_ray_engine_equals_the_local_engine_flag_for_flag(ray_cluster, corpus, tmp_path) -> None:
    items = load_benchmarks(["gsm8k", "humaneval", "mmlu"])
    cfg = NGramConfig(batch_bytes=96 << 10)  # several byte ranges per plain shard
    local = run_sharded([corpus], items, tmp_path / "local", config=cfg, skip_bad=True)
    on_ray = run_sharded([corpus], items, tmp_path / "ray", config=cfg, skip_bad=True, engine="ray", ray_address="auto")
    assert on_ray["shards"] == local["shards"] == 4 and local["flagged"] > 20
    for k in ("documents", "bytes", "flagged", "flags", "items_flagged", "by_benchmark", "by_part", "bad_input"):
        assert on_ray[k] == local[k], k
    for shard in resolve_corpus([corpus]):
        a = tmp_path / "local" / "shards" / shard.folder
        b = tmp_path / "ray" / "shards" / shard.folder
        assert (a / "flags.jsonl").read_bytes() == (b / "flags.jsonl").read_bytes(), shard.name
        assert json.loads((b / "summary.json").read_text())["engine"] == "ray"
    assert local["bad_input"]["examples"][0].endswith("bad.jsonl:701: not valid JSON (Expecting value at column 10)")
    m_local = json.loads((tmp_path / "local" / "manifest.json").read_text())
    m_ray = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert m_local["inputs"] == m_ray["inputs"] and m_local["settings"] == m_ray["settings"]
    assert verify_run(tmp_path / "ray")["ok"]


def test_ray_engine_bad_shards(ray_cluster, corpus, tmp_path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "bad.jsonl").write_bytes((corpus / "bad.jsonl").read_bytes())
    (src / "ok.jsonl.gz").write_bytes((corpus / "demo.jsonl.gz").read_bytes())
    with pytest.raises(InputError, match=r"bad\.jsonl:701: not valid JSON"):
        run_sharded([src], ["gsm8k"], tmp_path / "run", engine="ray")
    s = run_sharded([src], ["gsm8k"], tmp_path / "run", engine="ray", on_bad_shard="skip")
    assert s["shards"] == 1 and [b["name"] for b in s["bad_shards"]] == ["bad.jsonl"]
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "run" / "shards").iterdir()) == ["ok.jsonl.gz"]


@pytest.mark.slow
def test_ray_actor_pool_semantic_level_equals_local(ray_cluster, tmp_path) -> None:
    (tmp_path / "in").mkdir()
    for k in range(2):
        build_demo_corpus(tmp_path / "in" / f"p{k}.jsonl", seed=k, n_docs=60)
    levels = ("token", "semantic")
    local = run_sharded([tmp_path / "in"], ["gsm8k", "humaneval"], tmp_path / "local", levels=levels)
    on_ray = run_sharded([tmp_path / "in"], ["gsm8k", "humaneval"], tmp_path / "ray", levels=levels, engine="ray")
    assert on_ray["flagged"] == local["flagged"] > 0
    for shard in resolve_corpus([tmp_path / "in"]):
        assert (tmp_path / "local" / "shards" / shard.folder / "flags.jsonl").read_bytes() == (
            tmp_path / "ray" / "shards" / shard.folder / "flags.jsonl"
        ).read_bytes()
