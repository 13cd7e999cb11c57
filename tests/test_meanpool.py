"""The plain mean-pooling path (transformers alone) against sentence-transformers' own encode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from contam.data import load_benchmark
from contam.models.embed import SentenceTransformerEmbedder, minilm_path
from contam.models.meanpool import MeanPoolEncoder, plain_mean_pool_length


def test_minilm_folder_is_the_plain_layout() -> None:
    assert plain_mean_pool_length(minilm_path()) == 256


def test_vectors_agree_with_sentence_transformers() -> None:
    from sentence_transformers import SentenceTransformer

    items = load_benchmark("gsm8k")
    texts = [it.question for it in items[:40]] + [it.solution for it in items[40:48]]
    texts += ["  padded with spaces  ", "word " * 400, "é ü 中文 नमस्ते", ""]
    ours = MeanPoolEncoder(minilm_path(), 256).encode(texts, batch_size=16)
    ref = SentenceTransformer(str(minilm_path()), device="cpu").encode(
        texts, batch_size=16, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
    )
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, atol=2e-6)
    assert float((ours * ref).sum(1).min()) > 0.99999


def test_the_embedder_uses_it_without_importing_sentence_transformers() -> None:
    code = (
        "import sys; from contam.models.embed import load_embedder; "
        "e = load_embedder('minilm'); v = e.embed(['Janet has 3 ducks.']); "
        "print(type(e._model).__name__, 'sentence_transformers' in sys.modules, 'transformers' in sys.modules, v.shape)"
    )
    env = {**os.environ, "CONTAM_EMBED_CACHE": "0"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.split()
    assert out == ["MeanPoolEncoder", "False", "False", "(1,", "384)"]


LAYOUTS = {
    "cls pooling": (
        "1_Pooling/config.json",
        {"word_embedding_dimension": 384, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False},
    ),
    "lower-casing": ("sentence_bert_config.json", {"max_seq_length": 256, "do_lower_case": True}),
    "not BERT": ("config.json", {"model_type": "xlm-roberta", "hidden_size": 384}),
    "no pooling module": ("modules.json", [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_other_layouts_are_not_taken_for_the_plain_one(tmp_path, name) -> None:
    src = minilm_path()
    for rel in ("config.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / rel, tmp_path / rel)
    assert plain_mean_pool_length(tmp_path) == 256
    rel, body = LAYOUTS[name]
    (tmp_path / rel).write_text(json.dumps(body))
    assert plain_mean_pool_length(tmp_path) is None


def test_another_layout_loads_through_sentence_transformers(tmp_path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(minilm_path(), folder)
    rel, body = LAYOUTS["cls pooling"]
    (folder / rel).write_text(json.dumps(body))
    emb = SentenceTransformerEmbedder(folder, spec="st:cls")
    assert type(emb._model).__name__ == "SentenceTransformer"
    assert emb.embed(["Janet has 3 ducks."]).shape == (1, 384)
