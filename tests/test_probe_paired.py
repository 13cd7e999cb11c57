"""Issue 17, item 3: `contam probe paired`, the difference-in-differences verdict for any model,
end to end with real models: the embedded SmolLM2 GGUF (llama.cpp, Q4_1) and a second real model,
the same checkpoint through Hugging Face transformers in float32 (the only other causal LM that
ships offline with the project's dependencies)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.data import load_benchmark
from contam.errors import ConfigError
from contam.outputs import JsonlCheckpoint
from contam.probe.evalprobes import pair_scores
from contam.probe.paired import PairedConfig, PairedItem, PairedProbe
from contam.probe.variantset import pair_items, variants_by_item


@pytest.fixture(scope="module")
def gguf():  # type: ignore[no-untyped-def]
    from contam.models import load

    return load("smollm2", cache=False)


@pytest.fixture(scope="module")
def hf():  # type: ignore[no-untyped-def]
    from contam.models import load

    return load("hf:smollm2", cache=False)


@pytest.fixture(scope="module")
def data() -> tuple[list, dict]:  # type: ignore[type-arg]
    from contam.perturb import make_variant_set

    # 20 items: since issue 16 the lifter leaves out the items it cannot vary safely (13 of 20 keep a variant)
    items = load_benchmark("gsm8k")[:20]
    return items, variants_by_item(make_variant_set(items, variants=1, seed=0))


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A response cache for this file. The library run below scores all 13 pairs with both real
    models through it; the CLI run's 12 items are the first 12 of those 20 with the same variants
    (seed 0), so the CLI reads their scores back instead of running both models on them again.
    Run alone, the CLI test finds it empty and computes them."""
    return tmp_path_factory.mktemp("scores") / "cache.sqlite"


def test_paired_agrees_with_eval_probes_and_is_resumable(gguf, hf, data, scores: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from contam.models.cache import CachedModel, open_cache

    items, variants = data
    ck_path = tmp_path / "items.jsonl"
    cache = open_cache(str(scores))  # what the CLI wraps its models in (its default), kept for the CLI test
    with JsonlCheckpoint(ck_path, key="key") as ck:
        res = PairedProbe().run(CachedModel(gguf, cache), items, variants=variants, ref_model=CachedModel(hf, cache), checkpoint=ck)
    pairs = pair_items(items, variants)
    assert res.n_pairs == len(pairs) >= 10
    # the per-item d is eval-probes' did_diff on the same pairs (the verdict `contam eval-probes` reports);
    # both go through pair_logprobs, so 4 pairs recomputed one way check the batched probe at a third of the cost
    ref = pair_scores(gguf, hf, pairs[:4])
    for rec, ps in zip(res.items[:4], ref, strict=True):
        # (batched and one-by-one llama.cpp evaluation differ in the 7th digit)
        assert rec.d("did_diff") == pytest.approx(ps.d("did_diff"), abs=1e-4)
        assert rec.d("did") == pytest.approx(ps.d("did"), abs=1e-4)
    # the same checkpoint of the model behind two backends: no contamination to find
    assert not res.flagged and res.test.method == "Wilcoxon signed-rank"
    assert abs(res.test.effect) < 0.25 and "reference model" in res.assumption
    # resume: read back, nothing recomputed, same verdict
    with JsonlCheckpoint(ck_path, key="key") as ck:
        again = PairedProbe().run(gguf, items, variants=variants, ref_model=hf, checkpoint=ck)
    assert again.items == res.items and again.test == res.test
    assert len(ck_path.read_text().splitlines()) == res.n_pairs


def test_a_model_against_itself_gives_d_zero(gguf, data, scores: Path) -> None:  # type: ignore[no-untyped-def]
    from contam.models.cache import CachedModel, open_cache

    items, variants = data
    # d = 0 holds pair by pair: the first 8 items (their pairs) show it at under half the scoring cost.
    # Through the file's response cache (as the CLI runs): after the test above, the model's scores
    # of these pairs are read back, not computed twice; run alone, the test computes them.
    model = CachedModel(gguf, open_cache(str(scores)))
    res = PairedProbe().run(model, items[:8], variants=variants, ref_model=model)
    assert res.n_pairs >= 3
    assert all(r.d("did_diff") == 0.0 for r in res.items if not math.isnan(r.d("did_diff")))
    assert all(r.d("did_diff", "char") == 0.0 == r.d("did", "char") for r in res.items)
    assert all(r.model_orig_c < 0 and r.model_orig_all_c < 0 for r in res.items)
    assert res.test.p_value == 1.0 and not res.flagged and res.contamination_confidence == 0.0


def test_verdict_rules_on_known_differences() -> None:
    def rec(i: int, d: float) -> PairedItem:
        return PairedItem(f"pair/{i}", str(i), f"{i}v", 3, d, 0.0, d, 0.0, 3, 0.0, 0.0, 0.0, 0.0)

    probe = PairedProbe(PairedConfig(min_items=10, unit="token"))
    up = probe.analyze([rec(i, 0.5 + 0.01 * i) for i in range(12)])
    assert up.flagged and up.test.p_value == pytest.approx(2.0**-12) and up.contamination_confidence > 0.95
    few = probe.analyze([rec(i, 0.5) for i in range(4)])
    assert not few.flagged and "no verdict" in few.note and few.contamination_confidence == 0.0
    down = probe.analyze([rec(i, -0.5 - 0.01 * i) for i in range(12)])
    assert not down.flagged and down.calibration.confidence == 0.0


def test_the_char_unit_verdict_on_known_differences() -> None:
    def rec(i: int, d: float) -> PairedItem:
        # per token the model prefers the variant (a tokenizer effect); per character the original
        return PairedItem(f"pair/{i}", str(i), f"{i}v", 3, -1.0, 0.0, -1.0, 0.0, 3, 0.0, 0.0, 0.0, 0.0, d, 0.0, d, 0.0, 0.0, 0.0, 0.0, 0.0)

    recs = [rec(i, 0.5 + 0.01 * i) for i in range(12)]
    assert PairedProbe(PairedConfig(min_items=10)).analyze(recs).flagged
    assert not PairedProbe(PairedConfig(min_items=10, unit="token")).analyze(recs).flagged
    with pytest.raises(ConfigError, match="unit"):
        PairedConfig(unit="byte")


def test_paired_needs_variants_and_a_reference(gguf, data) -> None:  # type: ignore[no-untyped-def]
    items, variants = data
    with pytest.raises(ConfigError, match="--variants"):
        PairedProbe().run(gguf, items, ref_model=gguf)
    with pytest.raises(ConfigError, match="--ref-model"):
        PairedProbe().run(gguf, items, variants=variants)
    with pytest.raises(ConfigError, match="control"):
        PairedProbe().run(gguf, items, variants=variants, ref_model=gguf, control=items)


def test_cli_paired_end_to_end(scores: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CONTAM_CACHE", str(scores))
    ref = tmp_path / "ref"
    assert main(["perturb", "-b", "gsm8k", "--limit", "12", "--per-item", "1", "--seed", "0", "--out", str(ref)]) == 0
    capsys.readouterr()
    out = tmp_path / "paired"
    args = [
        "probe",
        "paired",
        "--model",
        "smollm2",
        "--ref-model",
        "hf:smollm2",
        "-b",
        "gsm8k",
        "--variants",
        str(ref),
        "--limit",
        "12",
        "--out",
        str(out),
        "--json",
    ]
    assert main(args) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["command"] == "paired" and s["method"] == "did_diff" and s["ref_model"] == "hf:smollm2"
    assert s["n_pairs"] == len((out / "items.jsonl").read_text().splitlines()) >= 5  # 12 items, those with an audited variant
    assert s["test"]["method"] == "Wilcoxon signed-rank" and 0.0 <= s["test"]["p_value"] <= 1.0
    assert json.loads((out / "summary.json").read_text())["test"] == s["test"]
    assert main([*args[:-1]]) == 0  # the table, resumed from the checkpoint
    text = capsys.readouterr().out
    assert "Paired verdict" in text and "assumption" in text
