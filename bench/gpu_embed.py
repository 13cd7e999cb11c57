"""Accelerator cost per document of the semantic level's embedding stage (issue 31, target 4).

The semantic level's expensive step is MiniLM over the documents the shortlist lets through; the
rest (shortlist, search, the learned scores) is CPU work measured by ``bench/semantic_scale.py``.
This script times that step on the machine it runs on, with the project's own embedder
(``SentenceTransformerEmbedder``: contam's transformers-free mean-pool encoder for MiniLM) and,
as the same-run baseline, a plain sentence-transformers ``encode``, over the same documents of
unique real text (``bench/scale_corpus.py``'s corpus at 20,000 documents, written to a file where it
was built):

* per setting (device, precision, batch size): wall seconds, documents per second, and seconds
  per 1,000 documents (on a GPU: GPU-seconds, the process holding the card alone);
* agreement with the fp32 CPU vectors of the same texts (``--reference``, made where the corpus
  was built): minimum and mean cosine, so a faster setting is used only where its vectors agree.

    # where the corpus is built (CPU): the texts and the fp32 reference vectors of the first 500
    python bench/gpu_embed.py make --out bench/out/gpu_embed
    # on the accelerator machine
    python bench/gpu_embed.py time --data bench/out/gpu_embed --device cuda --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REFERENCE_N = 500


def reference_rows(n: int) -> np.ndarray:
    """Rows whose fp32 CPU vectors are the reference: spread evenly over every kind of text."""
    return np.unique(np.linspace(0, n - 1, min(n, REFERENCE_N)).astype(np.int64))


def make(out: Path, paragraphs: int, solutions: int) -> None:
    import scale_corpus
    from contam.models import load_embedder

    out.mkdir(parents=True, exist_ok=True)
    corpus = out / "corpus.jsonl"
    c = scale_corpus.build(paragraphs, solutions, 30)
    texts = c.texts
    corpus.write_text("".join(json.dumps({"text": t, "kind": k}, ensure_ascii=False) + "\n" for t, k in zip(texts, c.kinds, strict=True)))
    docs = ", ".join(f"{n} {k}" for k, n in sorted(Counter(c.kinds).items()))
    emb = load_embedder("minilm", precision="fp32", device="cpu")
    idx = reference_rows(len(texts))
    np.savez_compressed(out / "reference.npz", vectors=emb.embed([texts[i] for i in idx]), rows=idx)
    print(f"[make] {len(texts)} documents ({docs}) -> {corpus}; fp32 CPU vectors of {len(idx)} spread over them -> reference.npz")


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def time_settings(data: Path, device: str, model: Path | None, repeat: int, limit: int = 0) -> dict:
    import torch

    from contam.models.embed import SentenceTransformerEmbedder, minilm_path

    texts = [json.loads(line)["text"] for line in (data / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    saved = np.load(data / "reference.npz")
    ref, ref_rows = saved["vectors"], saved["rows"]
    if limit:  # a quick check of the script itself: the first ``limit`` documents, the reference rows among them
        keep = ref_rows < limit
        texts, ref, ref_rows = texts[:limit], ref[keep], ref_rows[keep]
    folder = model or minilm_path()
    chars = sum(len(t) for t in texts)
    rows = []

    def record(name: str, fn) -> None:
        fn(texts[:64])  # warm-up: kernels, allocator, tokenizer state
        _sync(device)
        best, vecs = float("inf"), None
        for _ in range(repeat):
            t = time.perf_counter()
            vecs = fn(texts)
            _sync(device)
            best = min(best, time.perf_counter() - t)
        v = np.asarray(vecs, dtype=np.float32)[ref_rows]
        cos = np.sum(v * ref, axis=1) / np.maximum(np.linalg.norm(v, axis=1) * np.linalg.norm(ref, axis=1), 1e-12)
        rows.append(
            {
                "setting": name,
                "seconds": round(best, 3),
                "docs_per_s": round(len(texts) / best, 1),
                "s_per_1000_docs": round(1000 * best / len(texts), 4),
                "min_cosine_vs_fp32_cpu": round(float(cos.min()), 6),
                "mean_cosine_vs_fp32_cpu": round(float(cos.mean()), 6),
            }
        )
        print(f"  {name:48s} {best:8.2f} s  {len(texts) / best:9.1f} docs/s  min cos {cos.min():.5f}", flush=True)

    for precision in ("bf16", "fp32"):
        emb = SentenceTransformerEmbedder(folder, spec="minilm", device=device, precision=precision)
        for batch in (16, 128):
            record(f"contam embedder, {precision}, batch {batch}", lambda ts, e=emb, b=batch: e.embed(ts, batch_size=b))
        del emb
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(folder), device=device)
    for batch in (32, 128):
        record(
            f"sentence-transformers encode, fp32, batch {batch}",
            lambda ts, b=batch: st.encode(ts, batch_size=b, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False),
        )
    st.half()
    record(
        "sentence-transformers encode, fp16 weights, batch 128",
        lambda ts: st.encode(ts, batch_size=128, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False),
    )
    gpu = torch.cuda.get_device_name(0) if device.startswith("cuda") else None
    return {
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "device": device,
        "gpu": gpu,
        "cpu": platform.processor() or platform.machine(),
        "cpus": len(os.sched_getaffinity(0)),
        "torch": torch.__version__,
        "documents": len(texts),
        "mean_chars": round(chars / len(texts), 1),
        "repeat": repeat,
        "settings": rows,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--out", type=Path, default=ROOT / "out" / "gpu_embed")
    # 20k documents: a GPU embeds the default 3,030 in well under a second, too short to time.
    m.add_argument("--paragraphs", type=int, default=10_000)
    m.add_argument("--solutions", type=int, default=10_000)
    t = sub.add_parser("time")
    t.add_argument("--data", type=Path, default=ROOT / "out" / "gpu_embed")
    t.add_argument("--device", default="cuda")
    t.add_argument("--model", type=Path, default=None, help="MiniLM folder (default: the embedded package's)")
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--json", type=Path, default=None)
    t.add_argument("--limit", type=int, default=0, help="only the first N documents (a check of the script)")
    args = ap.parse_args()
    if args.cmd == "make":
        make(args.out, args.paragraphs, args.solutions)
        return 0
    res = time_settings(args.data, args.device, args.model, args.repeat, args.limit)
    text = json.dumps(res, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
