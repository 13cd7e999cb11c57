"""Level 2 (semantic) with the real MiniLM embedder on real GSM8K items."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from contam.data import Document, load_benchmark
from contam.errors import ConfigError, ModelError
from contam.models.embed import load_embedder
from contam.scan.paraphrase import rule_paraphrase, swap_names
from contam.scan.semantic import SemanticConfig, SemanticScanner, radius_dbscan


def test_radius_dbscan_matches_sklearn() -> None:
    from sklearn.cluster import DBSCAN

    rng = np.random.default_rng(0)
    centers = rng.normal(size=(6, 16))
    pts = np.vstack([c + rng.normal(scale=0.08, size=(int(rng.integers(2, 12)), 16)) for c in centers] + [rng.normal(size=(30, 16))])
    x = (pts / np.linalg.norm(pts, axis=1, keepdims=True)).astype(np.float32)
    ref = DBSCAN(eps=0.15, min_samples=5, metric="cosine").fit(x).labels_
    ours = radius_dbscan(x, 0.15, 5, batch=7)
    assert ((ref == -1) == (ours == -1)).all()
    # Same partition of the clustered points (ids may differ).
    pairs = {(int(a), int(b)) for a, b in zip(ref, ours, strict=True) if a >= 0}
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})
    assert (ours >= 0).any()


def test_bad_rule_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"SemanticConfig\.rule"):
        SemanticConfig(rule="sim+magic")


@pytest.fixture(scope="module")
def fitted() -> tuple[SemanticScanner, list]:
    items = load_benchmark("gsm8k")[:60]
    sem = SemanticScanner(SemanticConfig(), load_embedder("minilm")).fit(items)
    return sem, items


def _paraphrase(it, seed: int) -> str:  # type: ignore[no-untyped-def]
    r = random.Random(seed)
    return rule_paraphrase(it.question, r) + "\n" + rule_paraphrase(it.solution, r, question=False)


def test_copies_and_paraphrases_find_their_item_negatives_pass(fitted: tuple[SemanticScanner, list]) -> None:
    sem, items = fitted
    copies = [items[i].text for i in range(5)]
    paras = [_paraphrase(items[i], i) for i in range(5, 15)]
    negs = [it.text for it in load_benchmark("gsm8k-train")[:20]]
    s = sem.score(copies + paras + negs)
    assert s.nearest[:15, 0].tolist() == list(range(15))
    assert (s.sim[:5] > 0.99).all() and (s.sim[5:15] > 0.75).all()
    # The similarity + anomaly rule flags every copy and paraphrase and none of the fixed negatives.
    hit = s.flagged(0.75, "sim+anomaly")
    assert hit[:15].all() and not hit[15:].any()
    assert s.anomalous[:15].all()


def test_cluster_membership_needs_density(fitted: tuple[SemanticScanner, list]) -> None:
    """DBSCAN (eps .15, min_samples 5): several leaked versions of one item form a benchmark
    cluster; a single paraphrase of another item stays noise (the paper rule's blind spot)."""
    sem, items = fitted
    group = [items[0].text] + [swap_names(items[0].text, random.Random(k))[0] for k in range(5)]
    lone = [_paraphrase(items[20], 3)]
    s = sem.score(group + lone)
    assert s.member[: len(group)].all()
    assert not s.member[-1] and s.sim[-1] > 0.75
    assert not s.flagged(0.75, "sim+cluster+anomaly")[-1] and s.flagged(0.75, "sim+anomaly")[-1]


def test_scan_records_and_determinism(fitted: tuple[SemanticScanner, list]) -> None:
    sem, items = fitted
    docs = [Document(id=f"d{i}", text=t) for i, t in enumerate([items[3].text] * 5 + [items[3].question])]
    a = list(sem.scan(docs))
    b = list(sem.scan(docs))
    assert [r.to_dict() for r in a] == [r.to_dict() for r in b]
    hit = [r for r in a if r.contaminated]
    assert hit, "five copies plus a question of one item should form a benchmark cluster"
    f = hit[0].flags[0]
    assert f.level == "semantic" and f.item_id == items[3].id and {"cosine", "cluster_member", "anomaly"} <= set(f.scores)
    assert {"embedding", "cluster", "anomaly"} <= {e.kind for e in f.evidence}


def test_explicit_clean_text_fits_anomaly_model(fitted: tuple[SemanticScanner, list]) -> None:
    _, items = fitted
    clean = [it.text for it in load_benchmark("gsm8k-train")[100:160]]
    sem = SemanticScanner(SemanticConfig(rule="sim+anomaly"), load_embedder("minilm")).fit(items, clean=clean)
    s = sem.score([items[7].text, load_benchmark("gsm8k-train")[5].text])
    assert s.anomalous.tolist() == [True, False]


def test_tiny_benchmark_and_empty_input() -> None:
    """One or three items are too few for a covariance: the anomaly part then does not restrict,
    and an empty candidate list gives empty arrays."""
    items = load_benchmark("gsm8k")[:3]
    for n in (1, 3):
        sem = SemanticScanner(SemanticConfig(rule="sim+anomaly"), load_embedder("minilm")).fit(items[:n])
        s = sem.score([items[0].text, "The mitochondria is the powerhouse of the cell."])
        assert s.flagged(0.75, "sim+anomaly").tolist() == [True, False]
    assert sem.score([]).sim.shape == (0,)


def test_bf16_and_fp32_embeddings_agree_and_are_cached_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    from contam.errors import ModelError
    from contam.models.embed import resolve_precision

    texts = [it.question for it in load_benchmark("gsm8k")[:24]]
    fp32 = load_embedder("minilm", precision="fp32")
    bf16 = load_embedder("minilm", precision="bf16")
    a, b = fp32.embed(texts), bf16.embed(texts)
    assert a.dtype == b.dtype == np.float32 and a.shape == b.shape == (24, 384)
    cos = (a * b).sum(axis=1)
    # bf16 autocast changes the last digits, never the neighbourhood structure.
    assert cos.min() > 0.999, cos.min()
    assert np.array_equal((a @ a.T).argsort(axis=1)[:, -2], (b @ b.T).argsort(axis=1)[:, -2])
    assert fp32.identity != bf16.identity  # the embedding cache never mixes precisions
    assert resolve_precision("fp32", "cpu") == "fp32" and resolve_precision(None, "cuda") == "fp32"
    monkeypatch.setenv("CONTAM_EMBED_PRECISION", "int3")
    with pytest.raises(ModelError, match="CONTAM_EMBED_PRECISION"):
        resolve_precision(None, "cpu")


def test_embed_device_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from contam.errors import ModelError
    from contam.models.embed import embed_device

    monkeypatch.delenv("CONTAM_EMBED_DEVICE", raising=False)
    assert embed_device() == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv("CONTAM_EMBED_DEVICE", "CPU")
    assert embed_device() == "cpu"
    monkeypatch.setenv("CONTAM_EMBED_DEVICE", "cuda:1")
    assert embed_device() == "cuda:1"
    monkeypatch.setenv("CONTAM_EMBED_DEVICE", "tpu")
    with pytest.raises(ModelError, match="CONTAM_EMBED_DEVICE='tpu'"):
        embed_device()


def test_static_embedder_finds_paraphrases_at_its_own_threshold() -> None:
    """The static table distilled from MiniLM (made once per machine on first use) keeps copies and
    rule paraphrases at its own calibrated default (``EMBEDDER_DEFAULTS["static"]``, rule nn) and
    passes GSM8K train, the hard negatives whose cosines this embedder puts near 0.8."""
    from contam.scan.semantic import EMBEDDER_DEFAULTS

    emb = load_embedder("static")
    own = EMBEDDER_DEFAULTS["static"]
    assert emb.dim == 256 and emb.semantic_threshold == own.threshold and emb.identity.startswith("static:")
    v = emb.embed(["Natalia sold clips.", "", "\u200b\u00e9\U0001f600"])
    assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    items = load_benchmark("gsm8k")[:60]
    sem = SemanticScanner(embedder=emb).fit(items)
    assert (sem.config.threshold, sem.config.rule) == (own.threshold, "nn")
    copies = [items[i].text for i in range(5)]
    paras = [_paraphrase(items[i], i) for i in range(5, 15)]
    negs = [it.text for it in load_benchmark("gsm8k-train")[:40]]
    s = sem.score(copies + paras + negs)
    assert s.nearest[:15, 0].tolist() == list(range(15))
    hit = s.flagged(sem.config.threshold, "nn")
    assert hit[:15].all() and not hit[15:].any()
    # Same texts, same vectors: nothing random in a static table.
    assert np.array_equal(emb.embed(paras), emb.embed(paras))
    # The cascade takes the embedder's own default when given no config (the CLI does the same).
    from contam.scan.hierarchy import Hierarchy, HierarchyConfig

    assert (Hierarchy(embedder=emb).config.semantic.threshold, Hierarchy(embedder=emb).config.semantic.rule) == (own.threshold, "nn")
    assert HierarchyConfig.for_embedder(emb, semantic=SemanticConfig(rule="paper", threshold=0.75)).semantic.threshold == 0.75
    # MiniLM (the default) takes the learned rule: a probability threshold (contam.scan.combiner).
    assert (Hierarchy().config.semantic.rule, Hierarchy().config.semantic.threshold) == ("learned", 0.5)


def test_parallel_embedding_matches_serial_within_float_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers with one torch thread each form the batches ``encode`` forms. The vectors agree with
    the single-worker path up to float rounding (kernels may sum in another order on another CPU:
    issue 32.18 saw 1e-7 in 4 of 44 rows on a Xeon), and every text keeps its nearest neighbours,
    so the flags are the same on any CPU (real MiniLM, real GSM8K texts of varied length)."""
    from contam.models.embed import embed_workers

    emb = load_embedder("minilm", precision="fp32")
    gsm = load_benchmark("gsm8k")
    texts = [it.question for it in gsm[:24]] + [it.text[:512] for it in gsm[24:44]]
    monkeypatch.setenv("CONTAM_EMBED_WORKERS", "1")
    serial = emb.embed(texts, batch_size=8)
    monkeypatch.setenv("CONTAM_EMBED_WORKERS", "2")
    assert embed_workers() == 2
    parallel = emb.embed(texts, batch_size=8)
    assert_same_embedding(serial, parallel)
    monkeypatch.setenv("CONTAM_EMBED_WORKERS", "two")
    with pytest.raises(ModelError, match="CONTAM_EMBED_WORKERS"):
        embed_workers()


def assert_same_embedding(a: np.ndarray, b: np.ndarray, *, k: int = 1) -> None:
    """Equal up to float rounding, never bit for bit: per-row cosine >= 0.99999, no component off
    by more than 1e-5, and each row's ``k`` nearest other rows (what a flag points at) the
    same in both."""
    assert a.shape == b.shape
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert float(cos.min()) >= 0.99999, f"row cosine {float(cos.min())}"
    assert float(np.abs(a - b).max()) <= 1e-5, f"max abs diff {float(np.abs(a - b).max())}"
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -np.inf)
    np.fill_diagonal(sb, -np.inf)
    assert np.array_equal(np.argsort(-sa, axis=1, kind="stable")[:, :k], np.argsort(-sb, axis=1, kind="stable")[:, :k])


def test_embedding_comparison_tolerates_rounding_and_catches_a_real_change() -> None:
    """The tolerance check passes 1e-7 noise (what two CPUs' kernels differ by) and fails a vector
    that moved, so the parallel test can neither flake on another CPU nor pass a broken path."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(44, 384)).astype(np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    noisy = a + rng.normal(scale=1e-7, size=a.shape).astype(np.float32)
    assert not np.array_equal(a, noisy)
    assert_same_embedding(a, noisy)
    moved = a.copy()
    moved[3] = moved[7]
    with pytest.raises(AssertionError):
        assert_same_embedding(a, moved)


def test_verbatim_copies_reuse_the_benchmark_vector_and_repeats_embed_once(
    fitted: tuple[SemanticScanner, list], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A fresh embedding cache records every text that reached the model (nothing is patched).
    monkeypatch.setenv("CONTAM_EMBED_CACHE", "1")
    monkeypatch.setenv("CONTAM_HOME", str(tmp_path))
    sem, items = fitted
    new = "A baker sells 14 loaves on Monday and twice as many on Tuesday. How many loaves in all?"
    x = sem.embed([items[2].text, items[5].question, new, new])
    with sqlite3.connect(tmp_path / "embeddings.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]
    assert stored == 1  # the two views came from the index; only the new text ran the model
    assert np.array_equal(x[0], sem.item_vecs[2])
    assert np.array_equal(x[2], x[3])
    s = sem.score([items[2].text])
    assert s.nearest[0, 0] == 2 and s.sim[0] > 0.999
