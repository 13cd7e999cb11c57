"""The cascade on worker processes gives the serial cascade's verdicts, in corpus order, and the
scan job uses it when asked for workers (real GSM8K, the embedded MiniLM)."""

from __future__ import annotations

import json

import pytest

from contam.data import Document, load_benchmark
from contam.models.embed import load_embedder
from contam.scan.cascade_pool import scan_parallel
from contam.scan.hierarchy import Hierarchy, HierarchyConfig
from contam.scan.job import run_scan


@pytest.fixture(scope="module")
def items() -> list:
    return load_benchmark("gsm8k")[:60]


@pytest.fixture(scope="module")
def docs(items: list) -> list[Document]:
    clean = [Document(id=f"train{i}", text=it.text) for i, it in enumerate(load_benchmark("gsm8k-train")[:150])]
    leaked = [Document(id=f"exact{i}", text=it.text) for i, it in enumerate(items[:5])]
    asked = [Document(id=f"q{i}", text=f"Question from a forum: {it.question} Thanks!") for i, it in enumerate(items[5:10])]
    # Interleaved so every batch of 16 holds some of each.
    out = []
    for i, d in enumerate(clean):
        out.append(d)
        if i % 15 == 0 and leaked:
            out.append(leaked.pop())
        if i % 15 == 7 and asked:
            out.append(asked.pop())
    return out


def test_workers_give_the_serial_verdicts_in_order(items: list, docs: list[Document]) -> None:
    h = Hierarchy(HierarchyConfig.for_embedder(None, levels="all"), embedder=load_embedder("minilm")).fit(items)
    sem = h.semantic
    assert sem is not None
    serial = list(h.scan(docs))
    serial_langs = dict(sem.language_counts)
    sem.language_counts.clear()
    parallel = list(scan_parallel(h, docs, 2, batch=16))
    assert [r.doc_id for r in parallel] == [d.id for d in docs]
    for a, b in zip(serial, parallel, strict=True):
        assert (a.doc_id, a.contaminated, a.level) == (b.doc_id, b.contaminated, b.level)
        assert [f.item_id for f in a.flags] == [f.item_id for f in b.flags]
        for k, v in a.scores.items():
            if isinstance(v, float):  # one torch thread per worker: the same vectors to float noise
                assert b.scores[k] == pytest.approx(v, abs=1e-4), (a.doc_id, k)
    flagged = {r.doc_id for r in parallel if r.contaminated}
    assert {f"exact{i}" for i in range(5)} | {f"q{i}" for i in range(5)} <= flagged
    assert dict(sem.language_counts) == serial_langs  # the workers' tallies come back to the parent


def test_the_multilingual_space_is_fitted_once_before_the_fork(items: list, docs: list[Document]) -> None:
    # Each forked worker fitting the benchmark's multilingual vectors itself cost minutes of CPU per
    # worker on a corpus with one non-English document (issue 31's 100k run).
    h = Hierarchy(HierarchyConfig.for_embedder(None, levels="all"), embedder=load_embedder("minilm")).fit(items[:20])
    sem = h.semantic
    assert sem is not None
    assert not sem.prepare_routes([d.text for d in docs[:16]])  # English only: nothing to fit
    german = Document(id="de", text="Janets Enten legen 16 Eier pro Tag. Sie isst jeden Morgen 3 davon zum Frühstück.")
    out = list(scan_parallel(h, [german, *docs[:20]], 2, batch=16))
    assert sem._multi is not None  # fitted in the parent, so the workers inherit it
    assert [r.doc_id for r in out] == ["de", *(d.id for d in docs[:20])]


def test_scan_job_runs_the_cascade_on_workers(items: list, docs: list[Document], tmp_path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in docs), encoding="utf-8")
    one = run_scan(corpus, items, tmp_path / "one", levels=("token", "semantic", "reasoning"), workers=1)
    two = run_scan(corpus, items, tmp_path / "two", levels=("token", "semantic", "reasoning"), workers=2)
    assert (one["workers"], two["workers"]) == (1, 2)
    rows = [[json.loads(line)["doc_id"] for line in (tmp_path / d / "flags.jsonl").read_text().splitlines()] for d in ("one", "two")]
    assert rows[0] == rows[1] and len(rows[0]) >= 10
    assert one["flagged"] == two["flagged"] and two["cpu_seconds"] >= 0


def _stamp(_: None, task: tuple[int, float, bytes]) -> tuple[int, float, float]:
    import time

    k, nap, _payload = task
    t0 = time.monotonic()
    time.sleep(nap)
    return k, t0, time.monotonic()


def test_a_large_task_never_waits_behind_a_busy_worker() -> None:
    from contam.pool import OrderedPool

    # Tasks larger than a pipe's buffer: sent inline, the third would wait for worker 0 (busy on the
    # slow first task) to read it, and worker 1 would sit idle with the fourth not yet sent.
    big = b"x" * (4 << 20)
    naps = [3.0, 0.1, 0.1, 0.1]
    with OrderedPool(2, lambda: None, _stamp, large_tasks=True) as pool:
        replies = [pool.submit((k, nap, big)) for k, nap in enumerate(naps)]
        got = {k: (t0, t1) for k, t0, t1 in (r.get() for r in replies)}
    assert got[3][0] < got[0][1]  # worker 1 started its second task while worker 0 was still on its first
