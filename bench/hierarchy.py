"""Speed of the level cascade (issue: L1–L3 on 1,000 candidates vs 500 items in ≤ 60 s on 2 cores;
100,000 candidates vs all GSM8K test in ≤ 15 min with < 4 GB).

    python bench/hierarchy.py                 # 1,000 × 500, with same-run baselines
    python bench/hierarchy.py --scale 100000  # the scale run (long: run it in the background)
    python bench/hierarchy.py --scale 100000 --embedder static   # the same with the static embedder

Candidates are GSM8K-genre text: exact copies, rule paraphrases and isomorphic variants of
benchmark items mixed with GSM8K train items (question + worked solution). Baselines measured
in the same run: scikit-learn's DBSCAN on the dense cosine matrix (the approach that does not
scale) against our radius-graph DBSCAN on the same embeddings (labels compared), and level 3
without the sparse shortlist (every candidate × every item, timed on a subset and scaled).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CONTAM_PROGRESS", "0")
# Measure embedding for real: no vectors from the persistent cache.
os.environ.setdefault("CONTAM_EMBED_CACHE", "0")
# OpenMP threads that spin while waiting collapse under any competing load (measured: 11 vs 28
# MiniLM texts per CPU-second with one other busy process); passive waiting costs nothing idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def candidates(n: int, items: list, seed: int = 0) -> list:
    from contam.data import Document, load_benchmark
    from contam.scan.paraphrase import rule_paraphrase, swap_names

    rng = random.Random(seed)
    train = load_benchmark("gsm8k-train")
    docs = []
    for i in range(n):
        r = rng.random()
        it = rng.choice(items)
        if r < 0.1:
            text = it.text
        elif r < 0.2:
            text = rule_paraphrase(it.question, random.Random(i)) + "\n" + it.solution
        elif r < 0.3:
            text = swap_names(it.text, random.Random(i))[0]
        else:
            t = train[i % len(train)]
            # Past the train set, make distinct same-genre text: paraphrase with a new seed.
            text = (
                t.text
                if i < len(train)
                else rule_paraphrase(swap_names(t.question, random.Random(i))[0], random.Random(i)) + "\n" + t.solution
            )
        docs.append(Document(id=f"c{i}", text=text))
    return docs


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidates", type=int, default=1000)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--scale", type=int, default=0, help="candidates for the scale run against all of GSM8K test")
    ap.add_argument("--embedder", default="minilm", help="minilm (default) or static (model2vec table distilled from MiniLM)")
    args = ap.parse_args()
    import numpy as np
    import torch

    from contam.data import load_benchmark
    from contam.models.embed import load_embedder
    from contam.scan.hierarchy import Hierarchy, HierarchyConfig
    from contam.scan.semantic import radius_dbscan

    n_cand = args.scale or args.candidates
    items = load_benchmark("gsm8k") if args.scale else load_benchmark("gsm8k")[: args.items]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}, load avg {os.getloadavg()[0]:.1f}"
    )
    print(f"candidates {n_cand} vs benchmark items {len(items)}")
    docs = candidates(n_cand, items)
    t0 = time.perf_counter()
    emb = load_embedder(args.embedder)
    t_load = time.perf_counter() - t0
    from contam.models.embed import embed_workers

    print(
        f"embedder: {emb.identity}, precision {emb.precision}, batch {HierarchyConfig().semantic.batch_size}, texts cut to {HierarchyConfig().semantic.max_chars} chars, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}, embedding workers {embed_workers(getattr(emb, 'device', 'cpu')) if hasattr(emb, '_model') else 1}"
    )
    # The shipped defaults for this embedder (rule nn, its own calibrated thresholds).
    h = Hierarchy(HierarchyConfig.for_embedder(emb, levels="all"), embedder=emb)
    times: dict[str, float] = {}
    cpu: dict[str, float] = {}
    c = time.process_time()
    t = time.perf_counter()
    h.fit(items)
    times["fit (index L1, embed+index items L2, L3 features)"] = time.perf_counter() - t
    cpu["fit (index L1, embed+index items L2, L3 features)"] = time.process_time() - c
    c = time.process_time()
    print(f"  fit: {times['fit (index L1, embed+index items L2, L3 features)']:.1f} s", flush=True)
    t, c = time.perf_counter(), time.process_time()
    tok, _ = h._token_scores(docs)
    times["L1 token (13-gram)"] = time.perf_counter() - t
    cpu["L1 token (13-gram)"] = time.process_time() - c
    c = time.process_time()
    t, c = time.perf_counter(), time.process_time()
    x = h.semantic.embed([d.text for d in docs])
    times["L2 embed candidates"] = time.perf_counter() - t
    cpu["L2 embed candidates"] = time.process_time() - c
    c = time.process_time()
    print(
        f"  L1: {times['L1 token (13-gram)']:.1f} s, L2 embedding: {times['L2 embed candidates']:.1f} s ({n_cand / times['L2 embed candidates']:.0f} texts/s), RSS {rss_gb():.2f} GB",
        flush=True,
    )
    t, c = time.perf_counter(), time.process_time()
    sem = h.semantic.score([d.text for d in docs], embeddings=x)
    times["L2 search+DBSCAN+anomaly"] = time.perf_counter() - t
    cpu["L2 search+DBSCAN+anomaly"] = time.process_time() - c
    c = time.process_time()
    t, c = time.perf_counter(), time.process_time()
    rea = h.reasoning.match([d.text for d in docs], extra=sem.nearest)
    times["L3 reasoning"] = time.perf_counter() - t
    cpu["L3 reasoning"] = time.process_time() - c
    c = time.process_time()
    total = sum(times.values())
    total_cpu = sum(cpu.values())
    print(f"  {'stage':<52s} {'wall s':>8s} {'CPU s':>8s}")
    for k, v in times.items():
        print(f"  {k:<52s} {v:8.2f} {cpu[k]:8.2f}")
    print(f"  {'total L1-L3 incl. embedding (model load ' + f'{t_load:.1f} s excluded)':<52s} {total:8.2f} {total_cpu:8.2f}")
    print(
        f"  (CPU s = process CPU time: what the run costs on dedicated cores; wall time here includes other jobs' load, avg {os.getloadavg()[0]:.1f})"
    )
    print(f"  peak RSS {rss_gb():.2f} GB")
    sc = h.config.semantic
    flagged = int((tok >= 0.5).sum()), int(sem.flagged(sc.threshold, sc.rule).sum()), int(sum(m.sim.total > 0.6 for m in rea))
    print(
        f"  flags at shipped defaults: L1 {flagged[0]}, L2 {sc.rule} (cosine >= {sc.threshold}, second stage from {sc.rescue_threshold}) {flagged[1]}, L3 >0.6 {flagged[2]}"
    )
    if args.scale:
        print(
            f"  target: <= 900 s and < 4 GB -> wall {'met' if total <= 900 else 'NOT met'}, CPU/2 cores {total_cpu / 2:.0f} s, memory {'met' if rss_gb() < 4 else 'NOT met'}"
        )
        fit_cpu = cpu["fit (index L1, embed+index items L2, L3 features)"]
        est = fit_cpu + (total_cpu - fit_cpu) * 100000 / n_cand  # the fit is paid once; the rest grows with candidates
        print(
            f"  linear extrapolation to 100,000 candidates: CPU {est:.0f} s -> {est / 2 / 60:.1f}-{est / 60:.1f} min on 2 dedicated cores"
        )
        return 0
    print(
        f"  target: <= 60 s -> wall {'met' if total <= 60 else 'NOT met'}; CPU {total_cpu:.0f} s = {total_cpu / 2:.0f} s on 2 dedicated cores; paper (V100): 23 min for L1-L3 -> ratio {23 * 60 / total:.1f}x (wall)"
    )
    # Same-run baselines.
    sem_stages = [k for k in times if not k.startswith("fit")]
    if not args.scale and hasattr(emb, "_model"):
        # Warm run: the benchmark side's vectors come from the persistent cache (one-off per
        # benchmark); the cache is filled here from this run's vectors, then a fresh fit reads it.
        import tempfile

        from contam.scan.embcache import EmbeddingCache
        from contam.scan.semantic import embedder_identity

        sc = h.config.semantic
        qtexts = [items[j].question for j in h.semantic._view_item[len(items) :]]
        with tempfile.TemporaryDirectory() as tmp:
            os.environ.update(CONTAM_EMBED_CACHE="1", CONTAM_HOME=tmp)
            store = EmbeddingCache(os.path.join(tmp, "embeddings.sqlite"))
            ident = embedder_identity(emb)
            store.put(ident, sc.max_chars, [it.text[: sc.max_chars] for it in items], h.semantic.item_vecs)
            store.put(ident, sc.max_chars, [q[: sc.max_chars] for q in qtexts], h.semantic.index.reconstruct_n(len(items), len(qtexts)))
            h2 = Hierarchy(HierarchyConfig.for_embedder(emb, levels="all"), embedder=emb)
            t = time.perf_counter()
            h2.fit(items)
            t_warm = time.perf_counter() - t
            os.environ["CONTAM_EMBED_CACHE"] = "0"
        warm = t_warm + sum(times[k] for k in sem_stages)
        print(
            f"  warm run (benchmark vectors from the embedding cache): fit {t_warm:.2f} s -> total {warm:.2f} s wall; target <= 60 s {'met' if warm <= 60 else 'NOT met'}"
        )
        # The embedding path before this run's changes: torch's own 2-thread matmuls, every
        # candidate through the model (no reuse of benchmark vectors, no dedupe), same chunks.
        os.environ["CONTAM_EMBED_WORKERS"] = "1"
        t, c = time.perf_counter(), time.process_time()
        x_old = np.vstack(
            [emb.embed([d.text[: sc.max_chars] for d in docs[s : s + 256]], batch_size=sc.batch_size) for s in range(0, len(docs), 256)]
        )
        t_old, c_old = time.perf_counter() - t, time.process_time() - c
        del os.environ["CONTAM_EMBED_WORKERS"]
        sem_old = h.semantic.score([d.text for d in docs], embeddings=x_old)
        same = bool((sem_old.flagged(sc.threshold, sc.rule) == sem.flagged(sc.threshold, sc.rule)).all())
        copies = np.array([d.text[: sc.max_chars] in h.semantic._known for d in docs])
        # Other candidates are batched without the copies, so their batches (padding) differ.
        diff = float(np.abs(x_old[~copies] - x[~copies]).max()) if (~copies).any() else 0.0
        print(
            f"baseline L2 embedding (1 process x 2 torch threads, every candidate embedded): {t_old:.2f} s wall, {c_old:.2f} CPU s vs {times['L2 embed candidates']:.2f} s, {cpu['L2 embed candidates']:.2f} CPU s -> {t_old / times['L2 embed candidates']:.2f}x wall; "
            f"{int(copies.sum())} verbatim copies reused a benchmark vector; other vectors differ by at most {diff:.1e}; L2 flags identical: {same}"
        )
    allx = np.vstack([h.semantic.item_vecs, x])
    from sklearn.cluster import DBSCAN

    t = time.perf_counter()
    ref = DBSCAN(eps=0.15, min_samples=5, metric="cosine").fit(allx).labels_
    t_sk = time.perf_counter() - t
    t = time.perf_counter()
    ours = radius_dbscan(allx, 0.15, 5)
    t_ours = time.perf_counter() - t
    same_noise = bool(((ref == -1) == (ours == -1)).all())
    print(
        f"baseline DBSCAN (sklearn, dense cosine): {t_sk:.2f} s; radius-graph DBSCAN: {t_ours:.2f} s; same core/noise split: {same_noise}"
    )
    sub = docs[:50]
    t = time.perf_counter()
    from contam.scan.reasoning import extract_steps

    feats = h.reasoning._features
    for d in sub:
        fa = h.reasoning.scorer.features(extract_steps(d.text))
        for fb in feats:
            h.reasoning.scorer.similarity_features(fa, fb)
    t_brute = (time.perf_counter() - t) * len(docs) / len(sub)
    print(
        f"baseline L3 without shortlist (all pairs, from 50 candidates): {t_brute:.1f} s vs {times['L3 reasoning']:.1f} s -> {t_brute / times['L3 reasoning']:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
